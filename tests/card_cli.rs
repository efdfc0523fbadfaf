//! `a2a-conform card`: sign then verify round-trips, a broken card fails with its reason (exit 1),
//! lint names a 0.3 card, and a signed card served by the mock verifies by URL.

use std::path::PathBuf;
use std::process::{Command, Output};

use a2a_conform::card::keys;
use a2a_conform::commands::card::{self, CardCommand, CardOptions};
use a2a_conform::server::config::CardSigning;
use a2a_conform::server::{MockConfig, MockServer};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");

fn fixture(p: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(p).display().to_string()
}

/// A fresh directory under the system's temp dir, removed with everything in it when dropped (the
/// tests used to leave one behind per run).
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

fn scratch() -> Scratch {
    let d = std::env::temp_dir().join(format!("a2a-conform-card-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).arg("card").args(args).output().expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn sign_then_verify_round_trips_with_a_pem_key_and_a_jwk_set() {
    let dir = scratch();
    let signed = dir.join("signed.json");
    let signed = signed.to_str().unwrap();
    let o = run(&[
        "sign",
        &fixture("cards/signing/base-card.json"),
        "--key",
        &fixture("keys/es256-a.pem"),
        "--kid",
        "key-a",
        "--jku",
        "https://agent.example.com/jwks.json",
        "-o",
        signed,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let card: Value = serde_json::from_str(&std::fs::read_to_string(signed).unwrap()).unwrap();
    assert_eq!(card["signatures"].as_array().map(Vec::len), Some(1));
    for key in [["--key", "keys/es256-a.pub.pem"], ["--jwks", "keys/jwks.json"], ["--key", "keys/es256-a.pub.jwk.json"]]
    {
        let o = run(&["verify", signed, key[0], &fixture(key[1])]);
        assert_eq!(o.status.code(), Some(0), "{key:?}: {}", text(&o));
        assert!(text(&o).contains("valid"), "{}", text(&o));
    }
    // Another key does not verify it, and says so.
    let o = run(&["verify", signed, "--key", &fixture("keys/es256-b.pub.pem")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("signed with another key"), "{}", text(&o));
}

#[test]
fn a_broken_card_or_key_fails_with_the_reason() {
    let dir = scratch();
    for (vector, want) in [
        ("defaults-filled", "rule 1"),
        ("missing-kid", "no `kid`"),
        ("signatures-in-payload", "rule 3"),
        ("key-of-another-curve", "P-384"),
    ] {
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(fixture(&format!("cards/signing/negative/{vector}.json"))).unwrap(),
        )
        .unwrap();
        let card = dir.join(format!("{vector}.json"));
        std::fs::write(&card, v["card"].to_string()).unwrap();
        let o = run(&[
            "verify",
            card.to_str().unwrap(),
            "--key",
            &fixture(&format!("keys/{}", v["keys"].as_str().unwrap())),
        ]);
        assert_eq!(o.status.code(), Some(1), "{vector}: {}", text(&o));
        assert!(text(&o).contains(want), "{vector}: expected {want:?} in {}", text(&o));
    }
    let o = run(&["verify", &fixture("cards/signing/base-card.json"), "--key", "/nonexistent/key.pem"]);
    assert_eq!(o.status.code(), Some(2), "an unreadable key is a usage error: {}", text(&o));
}

#[test]
fn lint_passes_a_1_0_card_and_names_a_0_3_card() {
    let o = run(&["lint", &fixture("cards/signing/signed-key-a.json")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = run(&["lint", &fixture("cards/v0.3-agent-card.json")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("A2A 0.3 card"), "{}", text(&o));
}

#[tokio::test]
async fn a_card_the_mock_signs_verifies_by_url_and_fails_with_another_key() {
    let mut key = keys::read_private_key(std::path::Path::new(&fixture("keys/es256-a.pem"))).unwrap();
    key.kid = Some("key-a".into());
    let server =
        MockServer::start(MockConfig { signing: Some(CardSigning::new(key)), ..MockConfig::default() }).await.unwrap();
    let opts = CardOptions { headers: Vec::new(), timeout: 10 };
    let verify = |jwks: &str| CardCommand::Verify {
        target: server.url().to_owned(),
        key: None,
        jwks: Some(fixture(jwks).into()),
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = card::run_with_output(verify("keys/jwks.json"), opts.clone(), &mut out, &mut err).await;
    assert_eq!(code, 0, "{}{}", String::from_utf8_lossy(&out), String::from_utf8_lossy(&err));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let only_b = CardCommand::Verify {
        target: server.url().to_owned(),
        key: Some(fixture("keys/es256-b.pub.pem").into()),
        jwks: None,
    };
    let code = card::run_with_output(only_b, opts, &mut out, &mut err).await;
    assert_eq!(code, 1);
    server.shutdown().await;
}

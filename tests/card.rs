//! Agent Card signing (§8.4) against fixtures: the upstream RFC 8785 corpus (57 vectors), known
//! answers (the §8.4.1 example byte for byte, numbers, non-ASCII, key order, the §8.4.2 header),
//! signed cards that must verify and signed cards that must not (each refused with a reason that
//! names its defect), and properties of sign-then-verify over generated cards.

use std::path::{Path, PathBuf};

use a2a_conform::card::jws::{self, Outcome, Reading, SignOptions};
use a2a_conform::card::{PrivateKey, PublicKey, jcs, keys, presence};
use proptest::prelude::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn key_a() -> PrivateKey {
    let mut k = keys::read_private_key(&fixtures().join("keys/es256-a.pem")).unwrap();
    k.kid = Some("key-a".into());
    k
}

fn key_b() -> PrivateKey {
    let mut k = keys::read_private_key(&fixtures().join("keys/es256-b.sec1.pem")).unwrap();
    k.kid = Some("key-b".into());
    k
}

#[test]
fn the_upstream_jcs_corpus_is_intact_and_every_vector_holds() {
    let root = fixtures().join("jcs/a2a-jcs-v01");
    let manifest = read_json(&root.join("MANIFEST.json"));
    let (mut accepted, mut rejected) = (0, 0);
    for entry in manifest["vectors"].as_array().unwrap() {
        let path = root.join(entry["path"].as_str().unwrap());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(hex::encode(Sha256::digest(&bytes)), entry["sha256"].as_str().unwrap(), "{}", path.display());
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        let id = v["id"].as_str().unwrap();
        match v["disposition"].as_str().unwrap() {
            "MUST-ACCEPT" => {
                let input = if id.starts_with("A2-") { presence::prepare(&v["input"]) } else { v["input"].clone() };
                let out = jcs::canonicalize(&input).unwrap();
                assert_eq!(hex::encode(out.as_bytes()), v["expected"]["canonical_utf8_hex"], "{id}: got {out}");
                accepted += 1;
            }
            "MUST-REJECT" => {
                let raw = v["input_raw"].as_str().unwrap();
                let refused = if id.starts_with("A2-") {
                    jcs::check_payload(raw.as_bytes()).err()
                } else {
                    jcs::parse_strict(raw).err()
                };
                assert!(refused.is_some(), "{id}: {raw} was accepted");
                rejected += 1;
            }
            other => panic!("{id}: unknown disposition {other}"),
        }
    }
    assert_eq!((accepted, rejected), (47, 10));
    // The corpus digest is the sha256 of the manifest without it (upstream's README).
    let mut body = manifest.clone();
    let digest = body.as_object_mut().unwrap().remove("corpusDigest").unwrap();
    assert_eq!(hex::encode(Sha256::digest(serde_json::to_string_pretty(&body).unwrap())), digest);
}

#[test]
fn known_answers_canonicalize_byte_for_byte() {
    let ka = read_json(&fixtures().join("cards/signing/known-answers.json"));
    let vectors = ka["vectors"].as_array().unwrap();
    assert!(vectors.len() >= 4);
    for v in vectors {
        let payload = jws::payload(&v["card"], Reading::Rule1).unwrap();
        assert_eq!(String::from_utf8(payload).unwrap(), v["canonical"].as_str().unwrap(), "{}", v["name"]);
    }
    let h = &ka["protectedHeader"];
    let p = &h["params"];
    let opts = SignOptions {
        kid: p["kid"].as_str().map(str::to_owned),
        jku: p["jku"].as_str().map(str::to_owned),
        alg: p["alg"].as_str().unwrap().into(),
        typ: p["typ"].as_bool().unwrap(),
        reading: Reading::Rule1,
    };
    assert_eq!(jws::protected_header(&opts), h["protected"].as_str().unwrap());
}

#[test]
fn every_key_file_loads_and_a_p384_key_is_refused_by_name() {
    let k = fixtures().join("keys");
    let a = keys::read_public_keys(&k.join("es256-a.pub.pem")).unwrap();
    assert_eq!(a[0].key, key_a().public().key);
    assert_eq!(keys::read_public_keys(&k.join("es256-a.pub.jwk.json")).unwrap()[0].key, a[0].key);
    assert_eq!(keys::read_private_key(&k.join("es256-a.jwk.json")).unwrap().public().key, a[0].key);
    assert_eq!(keys::read_public_keys(&k.join("es256-a.pem")).unwrap()[0].key, a[0].key, "a private key's public half");
    let set = keys::read_public_keys(&k.join("jwks.json")).unwrap();
    assert_eq!(set.iter().map(|k| k.kid.clone().unwrap()).collect::<Vec<_>>(), ["key-a", "key-b"]);
    assert_eq!(set[1].key, key_b().public().key);
    for p384 in ["p384.pub.pem", "p384.pub.jwk.json"] {
        let e = keys::read_public_keys(&k.join(p384)).unwrap_err();
        assert!(e.reason.contains("P-384") && e.reason.contains("ES256"), "{p384}: {e}");
    }
}

/// The negative vectors: a card, the key file to verify it with, and what the reason must name.
fn negative_vectors() -> Vec<(&'static str, &'static str, Value, &'static str)> {
    let base = read_json(&fixtures().join("cards/signing/base-card.json"));
    let a = key_a();
    let with = |reading: Reading| jws::sign(&base, &a, &SignOptions { reading, ..SignOptions::new("key-a") }).unwrap();
    let mut tampered = with(Reading::Rule1);
    tampered["version"] = json!("1.2.1");
    let mut served_defaults = base.clone();
    served_defaults["capabilities"]["extensions"] = json!([]);
    served_defaults["supportedInterfaces"][0]["tenant"] = json!("");
    let served_defaults =
        jws::sign(&served_defaults, &a, &SignOptions { reading: Reading::ServedAsIs, ..SignOptions::new("key-a") })
            .unwrap();
    let mut empty_description = base.clone();
    empty_description["description"] = json!("");
    let pruned =
        jws::sign(&empty_description, &a, &SignOptions { reading: Reading::EmptyPruned, ..SignOptions::new("key-a") })
            .unwrap();
    vec![
        ("tampered-field", "es256-a.pub.jwk.json", tampered, "changed after signing"),
        ("defaults-filled", "es256-a.pub.jwk.json", with(Reading::DefaultsFilled), "rule 1"),
        ("defaults-served-and-signed", "es256-a.pub.jwk.json", served_defaults, "default-valued fields included"),
        ("empty-required-pruned", "es256-a.pub.jwk.json", pruned, "REQUIRED fields even at their default"),
        ("oneof-dropped", "es256-a.pub.jwk.json", with(Reading::OneofDropped), "`oneof`"),
        ("signatures-in-payload", "es256-a.pub.jwk.json", with(Reading::SignaturesIncluded), "rule 3"),
        (
            "wrong-alg",
            "es256-a.pub.jwk.json",
            jws::sign(&base, &a, &SignOptions { alg: "ES384".into(), ..SignOptions::new("key-a") }).unwrap(),
            "`alg` is \"ES384\"",
        ),
        (
            "alg-none",
            "es256-a.pub.jwk.json",
            jws::sign(&base, &a, &SignOptions { alg: "none".into(), ..SignOptions::new("key-a") }).unwrap(),
            "alg: none",
        ),
        (
            "missing-kid",
            "es256-a.pub.jwk.json",
            jws::sign(&base, &a, &SignOptions { kid: None, ..SignOptions::new("key-a") }).unwrap(),
            "no `kid`",
        ),
        (
            "signed-by-another-key",
            "es256-a.pub.jwk.json",
            jws::sign(&base, &key_b(), &SignOptions::new("key-a")).unwrap(),
            "signed with another key",
        ),
        ("key-of-another-curve", "p384.pub.jwk.json", with(Reading::Rule1), "P-384"),
        ("unsigned", "es256-a.pub.jwk.json", base.clone(), "no signature"),
    ]
}

/// Verifies a fixture the way `a2a-conform card verify` does: the reason a card cannot be trusted.
fn refusal(card: &Value, key_file: &str) -> Option<String> {
    let keys = match keys::read_public_keys(&fixtures().join("keys").join(key_file)) {
        Ok(k) => k,
        Err(e) => return Some(e.to_string()),
    };
    jws::verify(card, &keys).reason()
}

#[test]
fn signed_fixtures_verify_and_negative_fixtures_fail_naming_their_defect() {
    let dir = fixtures().join("cards/signing");
    let regenerate = std::env::var_os("A2A_CONFORM_REGENERATE").is_some();
    let base = read_json(&dir.join("base-card.json"));
    let signed = jws::sign(&base, &key_a(), &SignOptions::new("key-a")).unwrap();
    let rotated = jws::sign(&signed, &key_b(), &SignOptions::new("key-b")).unwrap();
    let negatives = negative_vectors();
    if regenerate {
        let write = |name: &str, v: &Value| {
            std::fs::write(dir.join(name), serde_json::to_string_pretty(v).unwrap() + "\n").unwrap()
        };
        write("signed-key-a.json", &signed);
        write("signed-key-a-and-b.json", &rotated);
        std::fs::create_dir_all(dir.join("negative")).unwrap();
        for (name, key, card, reason) in &negatives {
            write(&format!("negative/{name}.json"), &json!({"keys": key, "reasonContains": reason, "card": card}));
        }
    }
    // ECDSA here is deterministic (RFC 6979), so the stored vectors are exactly what the code makes.
    assert_eq!(read_json(&dir.join("signed-key-a.json")), signed, "regenerate with A2A_CONFORM_REGENERATE=1");
    assert_eq!(refusal(&signed, "es256-a.pub.pem"), None);
    assert_eq!(refusal(&read_json(&dir.join("signed-key-a-and-b.json")), "jwks.json"), None);
    let by_b_only: Vec<PublicKey> = keys::read_public_keys(&fixtures().join("keys/jwks.json")).unwrap().split_off(1);
    assert!(jws::verify(&rotated, &by_b_only).holds(), "one trusted signature of two is enough");
    let mut files = 0;
    for entry in std::fs::read_dir(dir.join("negative")).unwrap() {
        let v = read_json(&entry.unwrap().path());
        let why = refusal(&v["card"], v["keys"].as_str().unwrap());
        let want = v["reasonContains"].as_str().unwrap();
        assert!(why.as_deref().is_some_and(|w| w.contains(want)), "expected a reason naming {want:?}, got {why:?}");
        files += 1;
    }
    assert_eq!(files, negatives.len(), "every negative vector has its file");
}

#[test]
fn each_signing_defect_is_named_by_its_reading() {
    let base = read_json(&fixtures().join("cards/signing/base-card.json"));
    let keys = vec![key_a().public()];
    for reading in [Reading::DefaultsFilled, Reading::OneofDropped, Reading::SignaturesIncluded] {
        let card = jws::sign(&base, &key_a(), &SignOptions { reading, ..SignOptions::new("key-a") }).unwrap();
        let v = jws::verify(&card, &keys);
        assert!(!v.holds());
        assert_eq!(v.reading(), Some(reading));
        assert!(matches!(v.signatures[0].outcome, Outcome::Invalid { .. }));
    }
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ]{1,12}",
        "\\PC{1,8}", // any printable Unicode, astral planes included
    ]
}

prop_compose! {
    fn card()(
        name in text(), description in prop_oneof![Just(String::new()), text()], version in "[0-9]\\.[0-9]",
        streaming in proptest::option::of(any::<bool>()), push in proptest::option::of(any::<bool>()),
        tenant in prop_oneof![Just(String::new()), text()],
        skills in proptest::collection::vec((text(), text(), proptest::collection::vec(text(), 0..3), proptest::collection::vec(text(), 0..2)), 0..3),
        bearer in any::<bool>(), doc in proptest::option::of(prop_oneof![Just(String::new()), text()]),
        ratio in any::<f64>().prop_filter("finite", |f| f.is_finite()),
    ) -> Value {
        let mut caps = serde_json::Map::new();
        if let Some(s) = streaming { caps.insert("streaming".into(), json!(s)); }
        if let Some(p) = push { caps.insert("pushNotifications".into(), json!(p)); }
        caps.insert("extensions".into(), json!([{"uri": "urn:x", "required": bearer, "params": {"ratio": ratio}}]));
        let mut card = json!({
            "name": name, "description": description, "version": version,
            "supportedInterfaces": [{"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": tenant}],
            "capabilities": caps,
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": skills.into_iter().enumerate().map(|(i, (n, d, tags, ex))| json!({"id": format!("s{i}"), "name": n, "description": d, "tags": tags, "examples": ex})).collect::<Vec<_>>(),
        });
        if bearer {
            card["securitySchemes"] = json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}});
        }
        if let Some(d) = doc { card["documentationUrl"] = json!(d); }
        card
    }
}

/// JSON pointers to every scalar that the §8.4.1 payload of `card` contains.
fn covered_leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => o
            .iter()
            .for_each(|(k, v)| covered_leaves(v, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| covered_leaves(v, format!("{at}/{i}"), out)),
        _ => out.push(at),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn sign_then_verify_holds_and_any_one_field_change_breaks_it(card in card(), pick in any::<prop::sample::Index>()) {
        let key = key_a();
        let signed = jws::sign(&card, &key, &SignOptions::new("key-a")).unwrap();
        let keys = vec![key.public()];
        prop_assert!(jws::verify(&signed, &keys).holds(), "{:?}", jws::verify(&signed, &keys));
        // The served text, parsed again, verifies too (what a client does).
        let reparsed: Value = jcs::parse_strict(&signed.to_string()).unwrap();
        prop_assert!(jws::verify(&reparsed, &keys).holds());
        let mut leaves = Vec::new();
        covered_leaves(&presence::prepare(&signed), String::new(), &mut leaves);
        let at = pick.get(&leaves).clone();
        let mut changed = signed.clone();
        let leaf = changed.pointer_mut(&at).unwrap();
        *leaf = match leaf.take() {
            Value::String(s) => json!(format!("{s}x")),
            Value::Bool(b) => json!(!b),
            Value::Number(n) => json!(n.to_string()),
            other => json!([other]),
        };
        let v = jws::verify(&changed, &keys);
        prop_assert!(!v.holds(), "changing {at} left the signature valid");
        prop_assert!(v.reason().is_some());
    }
}

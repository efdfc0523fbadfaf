//! `a2a-conform mock` as a user runs it: the real binary on a free port, its first stdout line,
//! the card it serves and one SendMessage over JSON-RPC (§8.2, §9.4.1).

#[path = "common/schema.rs"]
mod schema;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");

/// Owns the child process and kills it when dropped, so that a failed assertion never leaves a
/// mock running.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `a2a-conform mock --port 0` and returns it with its first stdout line. The rest of stdout
/// is drained in the background so that the child never writes to a closed pipe.
fn spawn_mock() -> (KillOnDrop, String) {
    let mut child = KillOnDrop(
        Command::new(BIN)
            .args(["mock", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary starts"),
    );
    let stdout = child.0.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = tx.send(lines.next());
        for _ in lines {}
    });
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("a first line within 30 s")
        .expect("stdout is not empty")
        .expect("stdout is readable");
    (child, first)
}

/// The first line is `listening on http://127.0.0.1:<port>`; the card there names the JSON-RPC URL,
/// which answers a SendMessage.
#[tokio::test]
async fn mock_command_serves_the_card_and_answers_a_message() {
    let (_child, line) = spawn_mock();
    let port: u16 = line
        .strip_prefix("listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap_or_else(|e| panic!("no port in {line:?}: {e}"));
    assert_ne!(port, 0);
    let base = format!("http://127.0.0.1:{port}");

    let http = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let card: Value =
        http.get(format!("{base}/.well-known/agent-card.json")).send().await.unwrap().json().await.unwrap();
    schema::assert_valid("AgentCard", &card);
    let rpc = card["supportedInterfaces"][0]["url"].as_str().expect("interface url").to_owned();
    assert!(rpc.starts_with(&base), "{rpc} is served by {base}");
    assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");

    let body = json!({
        "jsonrpc": "2.0",
        "id": "cli-1",
        "method": "SendMessage",
        "params": {"message": {"messageId": "cli-msg-1", "role": "ROLE_USER", "parts": [{"text": "tck-complete-task from the CLI test"}]}},
    });
    let resp = http
        .post(&rpc)
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let reply: Value = resp.json().await.unwrap();
    assert_eq!(reply["id"], "cli-1");
    schema::assert_valid("SendMessageResponse", &reply["result"]);
    assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
}

/// `mock --help` documents the strict version mode, the body limit and loopback webhooks.
#[test]
fn mock_help_lists_the_key_flags() {
    let out = Command::new(BIN).args(["mock", "--help"]).output().expect("the binary runs");
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--lenient-version", "--max-request-bytes", "--allow-loopback-webhooks"] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}

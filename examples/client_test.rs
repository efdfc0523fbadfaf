//! Testing your own A2A client against the mock peer, wiremock-style: start a `MockPeer`, point the
//! client at its URL, assert on its answers and on what the peer received. Expectations are
//! verified when the peer is dropped.
//!
//! ```sh
//! cargo test --example client_test   # the tests below (cargo test runs them too)
//! cargo run --example client_test    # one exchange, and what the peer recorded
//! ```

use a2a_conform::server::MockPeer;
use serde_json::{Value, json};

/// The client under test: discovers the agent from its card (§8.2), picks the first interface
/// (§8.3.2) and sends one message with SendMessage, returning the JSON-RPC answer.
async fn ask(base_url: &str, text: &str) -> Result<Value, reqwest::Error> {
    let http = reqwest::Client::new();
    let card: Value = http.get(format!("{base_url}/.well-known/agent-card.json")).send().await?.json().await?;
    let rpc = card["supportedInterfaces"][0]["url"].as_str().unwrap_or_default().to_owned();
    let request = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {
            "messageId": uuid::Uuid::new_v4().to_string(),
            "role": "ROLE_USER",
            "parts": [{"text": text}]
        }}
    });
    http.post(rpc).header("A2A-Version", "1.0").bearer_auth("my-token").json(&request).send().await?.json().await
}

/// The final state of the task in an answer, if the client can read it.
fn final_state(answer: &Value) -> Option<&str> {
    answer.pointer("/result/task/status/state").and_then(Value::as_str)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let peer = MockPeer::start().await;
    let answer = ask(peer.url(), "tck-complete-task hello").await.expect("the mock answers");
    println!("final state: {:?}", final_state(&answer));
    for r in peer.received() {
        println!("received: {}", r.summary());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client reads the card once, sends exactly one SendMessage with A2A-Version 1.0, and
    /// reads the completed task from the answer.
    #[tokio::test]
    async fn the_client_discovers_the_card_then_sends_one_message() {
        let peer = MockPeer::start().await;
        peer.expect("GET").times(1);
        peer.expect("SendMessage").times(1);
        peer.expect("GetTask").never();

        let answer = ask(peer.url(), "tck-complete-task hello").await.unwrap();
        assert_eq!(final_state(&answer), Some("TASK_STATE_COMPLETED"));

        let sent = &peer.received_for("SendMessage")[0];
        assert_eq!(sent.header("a2a-version"), Some("1.0"));
        assert_eq!(sent.header("authorization"), Some("[REDACTED]"), "credentials never appear in records");
        assert_eq!(sent.params().unwrap()["message"]["role"], "ROLE_USER");
    } // the expectations are verified here, when `peer` is dropped

    /// A scripted behaviour: the agent stops in INPUT_REQUIRED, and the client sees it.
    #[tokio::test]
    async fn the_client_sees_an_interrupted_task() {
        let peer = MockPeer::start().await;
        let answer = ask(peer.url(), "tck-input-required please").await.unwrap();
        assert_eq!(final_state(&answer), Some("TASK_STATE_INPUT_REQUIRED"));
    }

    /// A named fault: the agent spells states the 0.3 way, and this client cannot read them.
    #[tokio::test]
    async fn a_faulty_agent_is_visible_to_the_client() {
        let peer = MockPeer::builder().fault("FAULT-ENUM-LOWERCASE").start().await.unwrap();
        let answer = ask(peer.url(), "tck-complete-task hello").await.unwrap();
        assert_eq!(final_state(&answer), Some("completed"), "not a 1.0 state: {answer}");
    }

    /// An agent mounted under a path prefix is found through its card all the same.
    #[tokio::test]
    async fn the_client_follows_the_card_under_a_path_prefix() {
        let peer = MockPeer::builder().path_prefix("/agents/a").start().await.unwrap();
        let answer = ask(peer.url(), "hello").await.unwrap();
        assert_eq!(final_state(&answer), Some("TASK_STATE_COMPLETED"));
        assert_eq!(peer.received_for("SendMessage")[0].path, "/agents/a/rpc");
    }
}

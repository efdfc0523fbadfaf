//! The smallest exchange with an in-process mock, proving the test helpers work end to end.

#[path = "common/peer.rs"]
mod peer;
#[path = "common/schema.rs"]
mod schema;

use peer::Peer;

#[tokio::test]
async fn card_and_one_message() {
    let p = Peer::default().await;
    let card: serde_json::Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    schema::validate("AgentCard", &card).unwrap();
    let r = p.send_text("tck-complete-task smoke").await;
    assert_eq!(r.result()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}

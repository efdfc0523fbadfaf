//! A 0.3 peer is identified as such, with the evidence, instead of being graded as a broken 1.0 agent
//! (legacy profile, digest §16).

use std::time::Duration;

use a2a_conform::commands::check::{self, CheckOptions, LEGACY_PEER};
use a2a_conform::report::Outcome;
use axum::Router;
use axum::routing::get;

const CARD: &str = include_str!("../fixtures/cards/v0.3-agent-card.json");

#[tokio::test]
async fn a_0_3_card_is_reported_as_a_legacy_peer_with_evidence() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/.well-known/agent-card.json", get(|| async { ([("content-type", "application/json")], CARD) }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let opts = CheckOptions {
        jobs: 2,
        timeout: Duration::from_secs(10),
        patience: Duration::from_secs(10),
        ..CheckOptions::new(format!("http://{addr}"))
    };
    let report = check::run(&opts, &mut ()).await.expect("a legacy card still produces a report");
    let r = &report.results[0].result;
    assert_eq!(r.id, LEGACY_PEER);
    assert_eq!(r.outcome, Outcome::Fail);
    assert_eq!(r.profile, "legacy");
    let f = r.failure.as_ref().unwrap();
    for field in ["protocolVersion", "url", "preferredTransport", "additionalInterfaces"] {
        assert!(f.message.contains(field), "{}", f.message);
    }
    assert!(f.actual.as_deref().unwrap().contains("0.3.0"));
    assert_eq!(r.evidence.len(), 1, "the card exchange is the evidence");
    assert_eq!(report.verdict.exit_code, 1);
}

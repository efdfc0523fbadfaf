//! An agent whose card declares HTTP+JSON alone is graded as fully as a JSON-RPC agent: the checks
//! of JSON-RPC's own wire skip because the card declares no JSON-RPC interface (a true reason, not
//! "not selected"), KIT-IFACE-001 judges the HTTP+JSON interface, HTTP+JSON's own checks and the
//! binding-neutral ones (versioning included) run over it, and behaviour discovery speaks it.

#[path = "common/outcomes.rs"]
mod outcomes;

use std::time::Duration;

use a2a_conform::client::http::ClientConfig;
use a2a_conform::commands::check::{self, CheckOptions};
use a2a_conform::report::json::Report;
use a2a_conform::report::{Outcome, SkipReason, Verdict};
use a2a_conform::server::MockConfig;
use a2a_conform::server::binding::Bindings;
use a2a_conform::server::faults::FaultCatalogue;
use a2a_conform::suite::behaviors::Behaviors;
use outcomes::outcomes;

const ONLY: &[&str] = &[
    "KIT-IFACE-001",
    "KIT-DIAG-001",
    "JSONRPC-*",
    "KIT-ENV-001",
    "REST-*",
    "CARD-DISC-006",
    "KIT-VER-*",
    "VER-NEG-001*",
    "CORE-SEND-001*",
    "KIT-ERR-001*",
    "KIT-ERR-006*",
    "CORE-EXEC-001*",
];

/// One run against a mock serving HTTP+JSON alone, committing `faults`, with no behaviour map.
async fn run(faults: &[&str]) -> Report {
    let catalogue = FaultCatalogue::builtin().expect("the catalogue loads");
    let faults = faults.iter().map(|f| catalogue.get(f).expect("the fault exists")).collect();
    let base = MockConfig { sleep_percent: 100, faults, bindings: Bindings::HttpJson, ..MockConfig::default() };
    let (server, access) = check::start_mock_with(base).await.expect("the mock starts");
    let mut opts = CheckOptions {
        jobs: check::EMBEDDED_JOBS,
        patience: Duration::from_secs(6),
        client: ClientConfig { timeout: Duration::from_secs(10), ..ClientConfig::default() },
        behaviors: Behaviors::None,
        discover_behaviors: true,
        only: ONLY.iter().map(|s| (*s).to_owned()).collect(),
        ..CheckOptions::new(server.url())
    };
    access.apply(&mut opts);
    let report = check::run(&opts, &mut ()).await.expect("the check run starts");
    server.shutdown().await;
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_rest_only_agent_is_conformant_and_graded_over_http_json() {
    let report = run(&[]).await;
    let o = outcomes(&report);
    let bad: Vec<_> =
        o.iter().filter(|(_, (out, _, _))| matches!(out, Outcome::Fail | Outcome::Warn | Outcome::Error)).collect();
    assert!(bad.is_empty(), "the clean REST-only mock: {bad:?}");
    assert_eq!(report.verdict.status, Verdict::Conformant, "{:?}", report.verdict.reasons);
    assert_eq!(o["KIT-IFACE-001"].0, Outcome::Pass);
    // JSON-RPC's own checks do not apply: the card says so.
    for id in ["JSONRPC-ID-001", "KIT-ENV-001", "KIT-VER-006", "KIT-VER-007"] {
        let (outcome, reason, detail) = &o[id];
        assert_eq!((*outcome, *reason), (Outcome::Skip, Some(SkipReason::CapabilityNotDeclared)), "{id}");
        assert!(detail.contains("declares no A2A 1.0 JSONRPC interface"), "{id}: {detail}");
    }
    // HTTP+JSON's own checks, and the neutral ones over HTTP+JSON, are graded.
    for id in [
        "REST-ERR-001",
        "REST-ERR-002",
        "REST-QUERY-001",
        "REST-CT-001",
        "REST-VER-001",
        "CARD-DISC-006",
        "KIT-VER-001[http+json]",
        "VER-NEG-001[http+json]",
        "KIT-VER-003[http+json]",
        "CORE-SEND-001[http+json]",
        "KIT-ERR-001[http+json]",
        "KIT-ERR-006[http+json]",
        "KIT-DIAG-001",
    ] {
        assert_eq!(o[id].0, Outcome::Pass, "{id}: {:?}", o[id]);
    }
    // Discovery spoke HTTP+JSON: the check needing a running task found one.
    assert_eq!(o["CORE-EXEC-001[http+json]"].0, Outcome::Pass, "{:?}", o["CORE-EXEC-001[http+json]"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rest_only_agent_reading_the_version_from_the_query_alone_is_one_finding() {
    let o = outcomes(&run(&["FAULT-REST-ONLY-VERSION-QUERY-ONLY"]).await);
    assert_eq!(o["KIT-VER-001[http+json]"].0, Outcome::Fail, "{:?}", o["KIT-VER-001[http+json]"]);
    assert_eq!(o["REST-VER-001"].0, Outcome::Pass, "the query parameter is read");
    let stray: Vec<_> = o
        .iter()
        .filter(|(id, (out, _, _))| *id != "KIT-VER-001[http+json]" && matches!(out, Outcome::Fail | Outcome::Warn))
        .collect();
    assert!(stray.is_empty(), "one violation, one finding: {stray:?}");
    // The refusal of what the agent reads as 0.3 is an A2A error with its ErrorInfo: §11.6 holds.
    assert_eq!(o["REST-ERR-001"].0, Outcome::Pass, "{:?}", o["REST-ERR-001"]);
}

//! The differential diagnosis of a failing neutral SendMessage (KIT-DIAG-001) and the workaround it
//! finds, against the mock on 127.0.0.1:0: with FAULT-ENUM-LEGACY-SPELLING (the 1.0 enum names
//! refused with HTTP 500 text/plain, the 0.3 spellings served) the finding names the enum spelling,
//! CORE-SEND-001 fails on the 1.0 request and the checks that need a task are graded under the
//! workaround, each saying so; `--no-workaround` puts them back to waiting on CORE-SEND-001; the
//! clean mock runs no diagnosis; an agent that refuses every variant gets no workaround.

use std::sync::Arc;
use std::time::Duration;

use a2a_conform::commands::check::{self, CheckOptions};
use a2a_conform::report::terminal::render;
use a2a_conform::report::{CheckResult, Outcome, Report, SkipReason, Verdict};
use a2a_conform::server::faults::{Fault, FaultCatalogue};
use a2a_conform::server::{MockConfig, MockServer};
use a2a_conform::suite::behaviors::Behaviors;

/// A whole core run against the mock takes seconds; this bounds a hang.
const RUN_BOUND: Duration = Duration::from_secs(120);

fn legacy_enums() -> Arc<Fault> {
    FaultCatalogue::builtin().unwrap().get("FAULT-ENUM-LEGACY-SPELLING").expect("the fault is in the catalogue")
}

/// An agent whose JSON-RPC endpoint answers every request HTTP 500 text/plain, whatever it says.
fn refuses_everything() -> Arc<Fault> {
    let mut c = FaultCatalogue::default();
    c.add(
        "test",
        r#"{"id": "FAULT-TEST-ALL-500", "section": "3.1.1", "description": "Every JSON-RPC request answers HTTP 500",
            "kills": ["CORE-SEND-001"],
            "mutations": [{"op": "http_status", "status": 500, "on": "rpc"},
                          {"op": "html_body", "on": "rpc"},
                          {"op": "content_type", "value": "text/plain; charset=utf-8", "on": "rpc"}]}"#,
    )
    .expect("the test fault parses");
    c.get("FAULT-TEST-ALL-500").unwrap()
}

async fn run(faults: Vec<Arc<Fault>>, workaround: bool) -> Report {
    let server = MockServer::start(MockConfig { faults, ..MockConfig::default() }).await.unwrap();
    let opts = CheckOptions {
        profiles: vec!["core".into()],
        behaviors: Behaviors::Acts,
        jobs: 8,
        timeout: Duration::from_secs(20),
        patience: Duration::from_secs(5),
        workaround,
        ..CheckOptions::new(server.url())
    };
    let report = tokio::time::timeout(RUN_BOUND, check::run(&opts, &mut ()))
        .await
        .expect("the run ends within its bound")
        .expect("the run happens");
    server.shutdown().await;
    report
}

fn result<'a>(r: &'a Report, id: &str) -> &'a CheckResult {
    r.checks().find(|c| c.id == id).unwrap_or_else(|| panic!("{id} not in the report"))
}

fn waits_on_send(c: &CheckResult) -> bool {
    c.skip_reason == Some(SkipReason::DependsOnFailed) && c.depends_on.as_deref() == Some("CORE-SEND-001")
}

/// The diagnosis is bounded: at most eight requests, all within 30 s.
fn bounded(diag: &CheckResult) {
    assert!(!diag.evidence.is_empty() && diag.evidence.len() <= 8, "{} requests", diag.evidence.len());
    assert!(diag.duration_ms < 30_000, "{} ms", diag.duration_ms);
}

#[tokio::test]
async fn the_enum_spelling_is_named_and_the_rest_is_graded_under_the_workaround() {
    let without = run(vec![legacy_enums()], false).await;
    let waiting: Vec<&str> = without.checks().filter(|c| waits_on_send(c)).map(|c| c.id.as_str()).collect();
    assert!(waiting.len() >= 10, "--no-workaround: the checks that need a task wait on CORE-SEND-001: {waiting:?}");
    assert!(without.checks().all(|c| c.workaround.is_empty()), "--no-workaround grades everything as written");
    let diag = result(&without, "KIT-DIAG-001");
    assert!(diag.failure.as_ref().unwrap().message.contains("--no-workaround"), "{:?}", diag.failure);

    let with = run(vec![legacy_enums()], true).await;
    let diag = result(&with, "KIT-DIAG-001");
    assert_eq!(diag.outcome, Outcome::Info);
    bounded(diag);
    let message = &diag.failure.as_ref().expect("the diagnosis is a finding").message;
    assert!(
        message.starts_with(
            "SendMessage answers HTTP 500 (text/plain) to role ROLE_USER and succeeds with role user: the agent \
             expects the 0.3 enum spelling (§5.5 requires ROLE_USER)"
        ),
        "{message}"
    );
    // The 1.0 request and the role variant, as evidence.
    let bodies: Vec<&str> = diag.evidence.iter().filter_map(|e| e.request_body.as_deref()).collect();
    assert!(bodies[0].contains(r#""role":"ROLE_USER""#), "{}", bodies[0]);
    assert!(bodies.iter().any(|b| b.contains(r#""role":"user""#)), "{bodies:?}");

    // The root finding is graded on the 1.0 request.
    let send = result(&with, "CORE-SEND-001");
    assert_eq!(send.outcome, Outcome::Fail);
    assert!(send.workaround.is_empty(), "{:?}", send.workaround);
    assert!(send.evidence.iter().all(|e| e.request_body.as_deref().is_none_or(|b| !b.contains(r#""role":"user""#))));
    assert_eq!(with.verdict.status, Verdict::NonConformant);

    // What waited on it is graded now, each saying how.
    for id in &waiting {
        let c = result(&with, id);
        assert!(!waits_on_send(c), "{id} still waits on CORE-SEND-001: {:?}", c.skip_detail);
        assert!(
            c.workaround.iter().any(|w| w.contains("role sent in its 0.3 spelling")),
            "{id} ({:?}) does not say it was graded under the workaround: {:?}",
            c.outcome,
            c.workaround
        );
    }
    // A check whose subject is the role itself sends its bogus role as written.
    let bogus = result(&with, "KIT-ERR-008");
    assert_eq!(bogus.outcome, Outcome::Pass, "{:?}", bogus.failure);
    assert!(bogus.evidence.iter().any(|e| e.request_body.as_deref().is_some_and(|b| b.contains("ROLE_BOGUS"))));

    // The terminal wraps its lines: compare words.
    let text = render(&with, false).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("Diagnosis (KIT-DIAG-001)"), "{text}");
    assert!(text.contains("the agent expects the 0.3 enum spelling"), "{text}");
}

#[tokio::test]
async fn a_healthy_send_runs_no_diagnosis_and_nothing_is_worked_around() {
    let clean = run(Vec::new(), true).await;
    let diag = result(&clean, "KIT-DIAG-001");
    assert_eq!(diag.outcome, Outcome::Pass, "{:?}", diag.failure);
    assert_eq!(diag.evidence.len(), 1, "only the neutral SendMessage is sent");
    assert!(diag.measurement.as_deref().unwrap().contains("no diagnosis was needed"), "{:?}", diag.measurement);
    assert_eq!(result(&clean, "CORE-SEND-001").outcome, Outcome::Pass);
    assert!(clean.checks().all(|c| c.workaround.is_empty()));
    let json = serde_json::to_string(&clean).unwrap();
    assert!(!json.contains(r#""workaround":"#));
    assert!(!render(&clean, false).contains("workaround"));
}

#[tokio::test]
async fn refused_the_same_way_gives_no_workaround() {
    let broken = run(vec![refuses_everything()], true).await;
    let diag = result(&broken, "KIT-DIAG-001");
    bounded(diag);
    let message = &diag.failure.as_ref().expect("the diagnosis is a finding").message;
    assert!(message.contains("every variant was refused the same way: HTTP 500 (text/plain)"), "{message}");
    assert!(message.contains("nothing is worked around"), "{message}");
    // Every call fails, the first of them already: the root is KIT-VER-001 (1.0 accepted), which
    // CORE-SEND-001 and everything else wait on; the diagnosis still says what SendMessage got.
    assert_eq!(result(&broken, "KIT-VER-001").outcome, Outcome::Fail);
    let send = result(&broken, "CORE-SEND-001");
    assert_eq!((send.outcome, send.depends_on.as_deref()), (Outcome::Skip, Some("KIT-VER-001")));
    assert!(broken.checks().all(|c| c.workaround.is_empty()));
    let waiting = broken.checks().filter(|c| c.depends_on.as_deref() == Some("KIT-VER-001")).count();
    assert!(waiting > 20, "without a workaround the dependents wait on the root ({waiting})");
}

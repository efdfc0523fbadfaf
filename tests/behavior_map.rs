//! Behaviour maps (`check --behaviors FILE`): the user names the message that makes their agent do
//! what a contract behaviour names. The kit confirms each mapped behaviour once: a behaviour that
//! happens drives its checks with the user's texts; one that does not is reported once, as a note,
//! and its checks skip with `precondition_failed` (neither failed nor silently skipped).

use a2a_conform::client::http::ClientConfig;
use a2a_conform::commands::check::{self, CheckOptions};
use a2a_conform::report::{Outcome, Report, SkipReason};
use a2a_conform::server::MockConfig;
use a2a_conform::suite::behaviors::{BehaviorMap, Behaviors};

/// The mock honours the tck-* prefixes, so a map can point at them with texts of its own; the
/// failure entry lies on purpose: "hello" completes, it does not fail.
const MAP: &str = "behaviors:
  tck-input-required: {text: \"tck-input-required from the map\", followup: \"here you are\"}
  tck-multi-turn: {text: \"tck-multi-turn from the map\", followup: \"done\", again: \"tell me more\"}
  tck-task-failure: hello
";

async fn run(map: &str, only: &[&str]) -> Report {
    let (server, access) = check::start_mock_with(MockConfig::default()).await.unwrap();
    let mut opts = CheckOptions {
        behaviors: Behaviors::Map(BehaviorMap::parse("test-map.yaml", map).unwrap()),
        only: only.iter().map(|s| s.to_string()).collect(),
        client: ClientConfig::default(),
        ..CheckOptions::new(server.url())
    };
    access.apply(&mut opts);
    let report = check::run(&opts, &mut ()).await.expect("the run happens");
    server.shutdown().await;
    report
}

#[tokio::test]
async fn mapped_behaviours_are_confirmed_once_and_a_false_one_skips_its_checks() {
    let report = run(MAP, &["CORE-MULTI-001", "CORE-MULTI-005", "CORE-FAIL-001", "CORE-CANCEL-001"]).await;
    let get = |id: &str| report.checks().find(|c| c.id == id).unwrap_or_else(|| panic!("{id} missing")).clone();

    // Confirmed behaviours drive their checks with the map's texts.
    for id in ["CORE-MULTI-001", "CORE-MULTI-005"] {
        let c = get(id);
        assert_eq!(c.outcome, Outcome::Pass, "{id}: {:?}", c.failure);
        let sent: String = c.evidence.iter().filter_map(|e| e.request_body.clone()).collect();
        assert!(sent.contains("from the map"), "{id} sent the map's text: {sent}");
    }
    // The lying entry is reported once, on the target, and its check is not graded.
    let fail = get("CORE-FAIL-001");
    assert_eq!((fail.outcome, fail.skip_reason), (Outcome::Skip, Some(SkipReason::PreconditionFailed)));
    assert!(fail.skip_detail.as_deref().unwrap().contains("tck-task-failure"), "{:?}", fail.skip_detail);
    let notes: Vec<&String> = report.target.notes.iter().filter(|n| n.contains("tck-task-failure")).collect();
    assert_eq!(notes.len(), 1, "{:?}", report.target.notes);
    assert!(notes[0].contains("TASK_STATE_FAILED") || notes[0].contains("FAILED"), "{}", notes[0]);
    // A behaviour the map does not name is not available.
    let cancel = get("CORE-CANCEL-001");
    assert_eq!(cancel.skip_reason, Some(SkipReason::BehaviorNotAvailable));
    assert!(
        cancel.skip_detail.as_deref().unwrap().contains("test-map.yaml does not map it"),
        "{:?}",
        cancel.skip_detail
    );
}

#[tokio::test]
async fn a_task_that_only_looks_running_is_not_long_running() {
    // "tck-complete-task" with returnImmediately: the mock answers before the work has run (the
    // task SUBMITTED or WORKING) and completes it a moment later.
    let quick = "behaviors:\n  tck-long-running: {text: \"tck-complete-task quick\"}\n";
    let report = run(quick, &["CORE-EXEC-001"]).await;
    let exec = report.checks().find(|c| c.id == "CORE-EXEC-001").expect("CORE-EXEC-001 ran").clone();
    assert_eq!((exec.outcome, exec.skip_reason), (Outcome::Skip, Some(SkipReason::PreconditionFailed)), "{exec:?}");
    let note = report.target.notes.iter().find(|n| n.contains("tck-long-running")).expect("a note on the behaviour");
    assert!(note.contains("does not keep running"), "{note}");

    // The contract's own long-running task is seen running and drives the check.
    let long = "behaviors:\n  tck-long-running: {text: \"tck-long-running from the map\"}\n";
    let report = run(long, &["CORE-EXEC-001"]).await;
    let exec = report.checks().find(|c| c.id == "CORE-EXEC-001").expect("CORE-EXEC-001 ran").clone();
    assert_eq!(exec.outcome, Outcome::Pass, "{:?} {:?}", exec.failure, report.target.notes);
}

//! One broken prerequisite is one finding: when SendMessage itself is broken, the check that
//! grades SendMessage fails, and the checks that only use it to set up (their step names it as
//! `prerequisite`) end as `skip: depends_on_failed` naming it, instead of failing forty times with
//! "capture … nothing at task.id". A step without `prerequisite` still fails on its own.

use std::sync::Arc;

use a2a_conform::commands::check::{self, CheckOptions};
use a2a_conform::report::graded::Graded;
use a2a_conform::report::terminal::render;
use a2a_conform::report::{Level, Outcome, Report, SkipReason};
use a2a_conform::server::faults::{Fault, FaultCatalogue};
use a2a_conform::server::{MockConfig, MockServer};

const SUITE: &str = r#"{
  "acts_version": "1.0", "spec_version": "1.0",
  "suites": [{"id": "cascade", "name": "Cascade", "tests": [
    {"id": "ANCHOR-SEND-001", "name": "SendMessage answers", "level": "must", "section": "3.1.1",
     "requirement": "SendMessage returns a Task or a Message.",
     "steps": [{"id": "send", "operation": "send_message",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "expect": {"body": {"task": {"id": {"type": "string"}}}}}]},
    {"id": "DEP-GET-001", "name": "GetTask reads it back", "level": "must", "section": "3.1.3",
     "requirement": "GetTask returns the task.",
     "steps": [{"id": "send", "operation": "send_message", "prerequisite": "ANCHOR-SEND-001",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "capture": {"taskId": "task.id"}},
               {"id": "get", "operation": "get_task", "params": {"id": "{{send.taskId}}"},
                "expect": {"body": {"id": "{{send.taskId}}"}}}]},
    {"id": "DEP-LIST-001", "name": "ListTasks finds it", "level": "must", "section": "3.1.4",
     "requirement": "ListTasks returns the task.",
     "steps": [{"id": "send", "operation": "send_message", "prerequisite": "ANCHOR-SEND-001",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "capture": {"contextId": "task.contextId"}},
               {"id": "list", "operation": "list_tasks", "params": {"contextId": "{{send.contextId}}"},
                "expect": {"body": {"tasks": {"count_gte": 1}}}}]},
    {"id": "OWN-GET-001", "name": "No prerequisite declared", "level": "must", "section": "3.1.3",
     "requirement": "GetTask returns the task.",
     "steps": [{"id": "send", "operation": "send_message",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "capture": {"taskId": "task.id"}}]},
    {"id": "ANCHOR-GET-001", "name": "GetTask answers", "level": "must", "section": "3.1.3",
     "requirement": "GetTask returns the task.",
     "steps": [{"id": "send", "operation": "send_message", "prerequisite": "ANCHOR-SEND-001",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "capture": {"taskId": "task.id"}},
               {"id": "get", "operation": "get_task", "params": {"id": "{{send.taskId}}"},
                "expect": {"body": {"id": "{{send.taskId}}"}}}]},
    {"id": "DEP-HIST-001", "name": "Builds on GetTask as a whole", "level": "must", "section": "3.2.4",
     "requirement": "GetTask honours historyLength.", "depends_on": ["ANCHOR-GET-001"],
     "steps": [{"id": "send", "operation": "send_message", "prerequisite": "ANCHOR-SEND-001",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "capture": {"taskId": "task.id"}},
               {"id": "get", "operation": "get_task", "params": {"id": "{{send.taskId}}", "historyLength": 1},
                "expect": {"body": {"id": "{{send.taskId}}"}}}]},
    {"id": "DEP-PASS-001", "name": "Declares a dependency and passes", "level": "must", "section": "3.1.1",
     "requirement": "SendMessage returns a Task or a Message.", "depends_on": ["ANCHOR-GET-001"],
     "steps": [{"id": "send", "operation": "send_message",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}}}]},
    {"id": "DEP-STEP-001", "name": "A setup step graded by two checks", "level": "must", "section": "3.1.4",
     "requirement": "ListTasks returns the task.",
     "steps": [{"id": "send", "operation": "send_message", "prerequisite": "ANCHOR-SEND-001",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "capture": {"taskId": "task.id"}},
               {"id": "get", "operation": "get_task", "params": {"id": "{{send.taskId}}"},
                "prerequisite": ["ANCHOR-SEND-001", "ANCHOR-GET-001"],
                "expect": {"body": {"id": "{{send.taskId}}"}}}]}
  ]}]
}"#;

fn send_answers_500() -> Arc<Fault> {
    let mut c = FaultCatalogue::default();
    c.add(
        "test",
        r#"{"id": "FAULT-TEST-SEND-500", "section": "3.1.1", "description": "SendMessage answers HTTP 500",
            "kills": ["ANCHOR-SEND-001"],
            "mutations": [{"op": "http_status", "status": 500, "methods": ["SendMessage"]},
                          {"op": "html_body", "methods": ["SendMessage"]}]}"#,
    )
    .expect("the test fault parses");
    c.get("FAULT-TEST-SEND-500").unwrap()
}

fn get_answers_500() -> Arc<Fault> {
    let mut c = FaultCatalogue::default();
    c.add(
        "test",
        r#"{"id": "FAULT-TEST-GET-500", "section": "3.1.3", "description": "GetTask answers HTTP 500",
            "kills": ["ANCHOR-GET-001"],
            "mutations": [{"op": "http_status", "status": 500, "methods": ["GetTask"]},
                          {"op": "html_body", "methods": ["GetTask"]}]}"#,
    )
    .expect("the test fault parses");
    c.get("FAULT-TEST-GET-500").unwrap()
}

async fn run_against(faults: Vec<Arc<Fault>>) -> Report {
    run_suite(SUITE, faults).await
}

async fn run_suite(text: &str, faults: Vec<Arc<Fault>>) -> Report {
    // Tests run at once in one process: each run gets a folder of its own.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("a2a-conform-cascade-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let suite = dir.join("cascade.json");
    std::fs::write(&suite, text).unwrap();
    let server = MockServer::start(MockConfig { faults, ..MockConfig::default() }).await.unwrap();
    let opts = CheckOptions { suites: vec![suite], no_builtin: true, ..CheckOptions::new(server.url()) };
    let report = check::run(&opts, &mut ()).await.expect("the run happens");
    server.shutdown().await;
    std::fs::remove_dir_all(&dir).ok();
    report
}

fn outcome(r: &Report, id: &str) -> (Outcome, Option<SkipReason>, Option<String>) {
    let c = r.checks().find(|c| c.id == id).unwrap_or_else(|| panic!("{id} not in the report"));
    (c.outcome, c.skip_reason, c.depends_on.clone())
}

#[tokio::test]
async fn a_broken_prerequisite_is_one_finding_and_its_dependents_are_undecided() {
    let healthy = run_against(Vec::new()).await;
    for id in [
        "ANCHOR-SEND-001",
        "DEP-GET-001",
        "DEP-LIST-001",
        "OWN-GET-001",
        "ANCHOR-GET-001",
        "DEP-HIST-001",
        "DEP-PASS-001",
        "DEP-STEP-001",
    ] {
        assert_eq!(outcome(&healthy, id).0, Outcome::Pass, "{id} against the faithful mock");
    }

    let broken = run_against(vec![send_answers_500()]).await;
    assert_eq!(outcome(&broken, "ANCHOR-SEND-001").0, Outcome::Fail);
    for id in ["DEP-GET-001", "DEP-LIST-001"] {
        assert_eq!(
            outcome(&broken, id),
            (Outcome::Skip, Some(SkipReason::DependsOnFailed), Some("ANCHOR-SEND-001".into())),
            "{id}"
        );
        let c = broken.checks().find(|c| c.id == id).unwrap();
        assert!(c.skip_detail.as_deref().unwrap().starts_with("ANCHOR-SEND-001 fail: "), "{:?}", c.skip_detail);
        assert!(!c.evidence.is_empty(), "{id} keeps the exchange that failed as evidence");
    }
    // The mock serves both bindings, so each check runs over HTTP+JSON too and waits on its own
    // binding's anchor: the fault breaks SendMessage on both.
    assert_eq!(
        outcome(&broken, "DEP-GET-001[http+json]"),
        (Outcome::Skip, Some(SkipReason::DependsOnFailed), Some("ANCHOR-SEND-001[http+json]".into()))
    );
    // Without a declared prerequisite the failure stays the check's own.
    assert_eq!(outcome(&broken, "OWN-GET-001").0, Outcome::Fail);

    let text = render(&broken, false);
    assert!(
        text.contains("12 check(s) depend on it and were not decided: DEP-GET-001, DEP-GET-001[http+json]"),
        "{text}"
    );
    assert!(text.contains("could not be decided"), "{text}");
}

/// `depends_on`: a check that does not pass waits for the checks it builds on and defers to the first
/// that failed; one that passes keeps its pass. A setup step may name several graders: the first that
/// failed is named.
#[tokio::test]
async fn a_failed_dependency_decides_only_the_checks_that_did_not_pass() {
    let broken = run_against(vec![get_answers_500()]).await;
    assert_eq!(outcome(&broken, "ANCHOR-SEND-001").0, Outcome::Pass);
    assert_eq!(outcome(&broken, "ANCHOR-GET-001").0, Outcome::Fail);
    let waits = (Outcome::Skip, Some(SkipReason::DependsOnFailed), Some("ANCHOR-GET-001".to_owned()));
    assert_eq!(outcome(&broken, "DEP-HIST-001"), waits, "depends_on");
    assert_eq!(outcome(&broken, "DEP-STEP-001"), waits, "a prerequisite list names the one that failed");
    assert_eq!(outcome(&broken, "DEP-PASS-001").0, Outcome::Pass, "a pass is not undone by a failed dependency");
    // The setup step graded by ANCHOR-SEND-001 alone, which passed: the failure stays DEP-GET-001's own.
    assert_eq!(outcome(&broken, "DEP-GET-001").0, Outcome::Fail);
}

/// `own_result` reads the task an answer holds whatever else its shape gets wrong: a member the
/// answer holds and the step judges wrong is the check's own finding; a member missing from it is
/// the prerequisite's story. A guarded poll whose condition never holds hands its last answer to
/// the guard.
const OWN: &str = r#"{
  "acts_version": "1.0", "spec_version": "1.0",
  "suites": [{"id": "own", "name": "Own", "tests": [
    {"id": "ANCHOR-SHAPE-001", "name": "Exactly one of task and message", "level": "must", "section": "3.1.1",
     "requirement": "A SendMessageResponse MUST contain exactly one of the following: task, message",
     "steps": [{"id": "send", "operation": "send_message",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "expect": {"body": {"message": {"absent": true}}}}]},
    {"id": "OWN-HELD-001", "name": "A member the answer holds", "level": "must", "section": "3.2.4",
     "requirement": "No history.",
     "steps": [{"id": "send", "operation": "send_message", "prerequisite": "ANCHOR-SHAPE-001", "own_result": true,
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "only_if": {"match": {"task": {"exists": true}}, "reason": "the answer holds no task"},
                "expect": {"body": {"task": {"history": {"absent": true}}}}}]},
    {"id": "OWN-MISSING-001", "name": "A member the answer lacks", "level": "must", "section": "3.2.4",
     "requirement": "A member.",
     "steps": [{"id": "send", "operation": "send_message", "prerequisite": "ANCHOR-SHAPE-001", "own_result": true,
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "only_if": {"match": {"task": {"exists": true}}, "reason": "the answer holds no task"},
                "expect": {"body": {"task": {"kitNothing": {"exists": true}}}}}]},
    {"id": "POLL-GUARDED-001", "name": "A guarded poll", "level": "must", "section": "3.1.3",
     "requirement": "Input required.",
     "steps": [{"id": "send", "operation": "send_message",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "capture": {"taskId": "task.id"}},
               {"id": "get", "operation": "get_task", "params": {"id": "{{send.taskId}}"},
                "repeat": {"until": "status.state == TASK_STATE_INPUT_REQUIRED", "max_attempts": 2, "delay_ms": 10},
                "only_if": {"match": {"status": {"state": "TASK_STATE_INPUT_REQUIRED"}}, "reason": "the task never asked for input",
                            "behavior": true}}]},
    {"id": "GUARD-FREEDOM-001", "name": "A guard on what the agent may choose", "level": "must", "section": "3.1.1",
     "requirement": "Rejected.",
     "steps": [{"id": "send", "operation": "send_message",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "only_if": {"match": {"task": {"status": {"state": "TASK_STATE_REJECTED"}}},
                            "reason": "the agent did not reject {{prompt}}"}}]},
    {"id": "POLL-BARE-001", "name": "An unguarded poll", "level": "must", "section": "3.1.3",
     "requirement": "Input required.",
     "steps": [{"id": "send", "operation": "send_message",
                "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "{{prompt}}"}]}},
                "capture": {"taskId": "task.id"}},
               {"id": "get", "operation": "get_task", "params": {"id": "{{send.taskId}}"},
                "repeat": {"until": "status.state == TASK_STATE_INPUT_REQUIRED", "max_attempts": 2, "delay_ms": 10}}]}
  ]}]
}"#;

#[tokio::test]
async fn own_result_owns_what_the_answer_holds_and_a_guarded_poll_skips() {
    let mut c = FaultCatalogue::default();
    c.add(
        "test",
        r#"{"id": "FAULT-TEST-BOTH", "section": "3.1.1", "description": "A message beside the task",
            "kills": ["ANCHOR-SHAPE-001"],
            "mutations": [{"op": "set", "pointer": "/message", "value": {"messageId": "m", "role": "ROLE_AGENT",
                           "parts": [{"text": "x"}]}, "methods": ["SendMessage"]}]}"#,
    )
    .expect("the test fault parses");
    let both = run_suite(OWN, vec![c.get("FAULT-TEST-BOTH").unwrap()]).await;
    assert_eq!(outcome(&both, "ANCHOR-SHAPE-001").0, Outcome::Fail);
    assert_eq!(outcome(&both, "OWN-HELD-001").0, Outcome::Fail, "the history it holds is the check's own");
    assert_eq!(
        outcome(&both, "OWN-MISSING-001"),
        (Outcome::Skip, Some(SkipReason::DependsOnFailed), Some("ANCHOR-SHAPE-001".into())),
        "a member missing from a faulted answer"
    );
    let guarded = both.checks().find(|c| c.id == "POLL-GUARDED-001").unwrap();
    assert_eq!((guarded.outcome, guarded.skip_reason), (Outcome::Skip, Some(SkipReason::BehaviorNotAvailable)));
    assert_eq!(guarded.skip_detail.as_deref(), Some("the task never asked for input"));
    assert_eq!(outcome(&both, "POLL-BARE-001").0, Outcome::Fail, "an unguarded poll that never holds fails");
    // A guard on what the agent may choose says the check does not apply; no map would change that.
    let freedom = both.checks().find(|c| c.id == "GUARD-FREEDOM-001").unwrap();
    assert_eq!((freedom.outcome, freedom.skip_reason), (Outcome::Skip, Some(SkipReason::FreedomTaken)));
    assert_eq!(freedom.skip_detail.as_deref(), Some("the agent did not reject hello"));
    let graded = Graded::of(&both.checks().cloned().collect::<Vec<_>>());
    let counted = graded.must.applicable;
    assert!(
        both.checks()
            .filter(|c| c.scored && c.level == Level::Must && c.skip_reason != Some(SkipReason::FreedomTaken))
            .count() as u64
            == counted,
        "a check a freedom left nothing to judge is not applicable: {graded:?}"
    );
}

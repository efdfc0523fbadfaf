//! Grading from what happened (issue 18): a run given no behaviour map tries the neutral prompt
//! and the card's skill examples, and the checks that need a behaviour one of them showed run on
//! it instead of skipping; those still lacking one say what each prompt did. An agent that waits
//! for the work despite `returnImmediately` is found the same way, with no map.

#[path = "common/mock_run.rs"]
mod mock_run;
#[path = "common/outcomes.rs"]
mod outcomes;

use a2a_conform::report::json::Report;
use a2a_conform::report::{Outcome, SkipReason};
use a2a_conform::suite::behaviors::Behaviors;
use mock_run::run_against_mock;
use outcomes::{Outcomes, outcomes};

/// One run against a fresh mock committing `faults`, with no map; discovery on or off. The mock
/// keeps its own pace: at the embedded run's, its long-running task ends about when the kit stops
/// watching it, and is told from a quick one only by chance.
async fn run(faults: &[&str], discover: bool, only: &[&str]) -> Report {
    run_against_mock(faults, 100, |o| {
        o.behaviors = Behaviors::None;
        o.discover_behaviors = discover;
        o.only = only.iter().map(|s| (*s).to_owned()).collect();
    })
    .await
}

fn wanting_a_behaviour(o: &Outcomes) -> usize {
    o.values().filter(|(_, s, _)| *s == Some(SkipReason::BehaviorNotAvailable)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_behaviours_the_card_examples_show_are_graded_without_a_map() {
    let without = outcomes(&run(&[], false, &[]).await);
    let report = run(&[], true, &[]).await;
    let with = outcomes(&report);
    let note = report.target.notes.iter().find(|n| n.starts_with("behaviours found")).expect("a note names them");
    for b in ["tck-long-running", "tck-cancel", "tck-input-required", "tck-message-response", "tck-reject-task"] {
        assert!(note.contains(b), "{b} is found: {note}");
    }
    // Checks that skipped for want of a behaviour now run, and pass on the clean mock.
    for id in ["CORE-EXEC-001", "KIT-CANCEL-003", "CORE-MULTI-005", "STREAM-MSG-001", "KIT-SEND-013"] {
        assert_eq!(with[id].0, Outcome::Pass, "{id}: {:?}", with[id]);
    }
    assert_eq!(without["CORE-EXEC-001"].1, Some(SkipReason::BehaviorNotAvailable));
    assert!(
        wanting_a_behaviour(&with) * 2 < wanting_a_behaviour(&without),
        "with discovery {} checks want a behaviour, without {}",
        wanting_a_behaviour(&with),
        wanting_a_behaviour(&without)
    );
    // Multi-turn needs a follow-up that keeps the task interrupted, which no example gives: the
    // skip says what each prompt did.
    let (outcome, reason, detail) = &with["CORE-MULTI-001"];
    assert_eq!((*outcome, *reason), (Outcome::Skip, Some(SkipReason::BehaviorNotAvailable)));
    assert!(
        detail.contains("no message the kit tried did")
            && detail.contains("\"tck-multi-turn hello\": SUBMITTED, then INPUT_REQUIRED"),
        "{detail}"
    );
    // Nothing the clean mock does is a finding.
    let bad: Vec<&String> =
        with.iter().filter(|(_, (o, _, _))| matches!(o, Outcome::Fail | Outcome::Error)).map(|(id, _)| id).collect();
    assert!(bad.is_empty(), "the clean mock fails or errs {bad:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_waits_for_the_work_despite_return_immediately_fails_without_a_map() {
    let report = run(&["FAULT-SEND-IGNORE-RETURN-IMMEDIATELY"], true, &["KIT-SEND-013", "KIT-SEND-004"]).await;
    let o = outcomes(&report);
    assert_eq!(o["KIT-SEND-013"].0, Outcome::Fail, "{:?}", o["KIT-SEND-013"]);
    let r = report.results.iter().find(|r| r.result.id == "KIT-SEND-013").expect("the check ran");
    let message = &r.result.failure.as_ref().expect("a failure").message;
    assert!(message.contains("the answer waited for the work"), "{message}");
    // The same agent honouring returnImmediately passes.
    let clean = outcomes(&run(&[], true, &["KIT-SEND-013", "KIT-SEND-004"]).await);
    assert_eq!(clean["KIT-SEND-013"].0, Outcome::Pass, "{:?}", clean["KIT-SEND-013"]);
}

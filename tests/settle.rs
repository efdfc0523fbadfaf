//! Settle before judging (issue 18): an agent that answers a blocking SendMessage before its
//! worker has run (FAULT-SEND-EARLY-ANSWER: the task SUBMITTED at once, finished 2 to 40 ms later,
//! drawn afresh for every task) gets the same verdict on every check in five consecutive runs,
//! and the checks of blocking itself (§3.2.2) fail in each: they judge the first answer, the
//! others the task once it settled.

#[path = "common/mock_run.rs"]
mod mock_run;

use std::collections::BTreeMap;
use std::time::Instant;

use a2a_conform::commands::check;
use a2a_conform::report::Outcome;
use a2a_conform::suite::behaviors::Behaviors;
use mock_run::run_against_mock;

const FAULT: &str = "FAULT-SEND-EARLY-ANSWER";
/// The checks that judge a blocking answer as it came.
const BLOCKING: [&str; 2] = ["KIT-SEND-007", "CORE-EXEC-002"];
const RUNS: usize = 5;

/// Check id → outcome and skip reason of one run of every built-in check against a fresh mock
/// committing the fault.
async fn one_run() -> BTreeMap<String, String> {
    let report = run_against_mock(&[FAULT], check::EMBEDDED_SLEEP_PERCENT, |o| o.behaviors = Behaviors::Acts).await;
    report
        .results
        .into_iter()
        .map(|r| {
            let r = r.result;
            let skip = r.skip_reason.map(|s| format!(" ({s:?})")).unwrap_or_default();
            (r.id, format!("{}{skip}", r.outcome.as_str()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_answers_before_its_work_runs_gets_the_same_verdicts_every_run() {
    let started = Instant::now();
    let mut runs = Vec::new();
    for _ in 0..RUNS {
        runs.push(one_run().await);
    }
    for (i, run) in runs.iter().enumerate() {
        for id in BLOCKING {
            assert_eq!(
                run.get(id).map(String::as_str),
                Some(Outcome::Fail.as_str()),
                "run {}: {id} judges the first answer, which is SUBMITTED",
                i + 1
            );
        }
    }
    let first = &runs[0];
    let mut flips = Vec::new();
    for (i, run) in runs.iter().enumerate().skip(1) {
        for (id, outcome) in first {
            let other = run.get(id).map(String::as_str).unwrap_or("absent");
            if other != outcome {
                flips.push(format!("{id}: run 1 {outcome}, run {} {other}", i + 1));
            }
        }
    }
    assert!(flips.is_empty(), "outcomes differ between runs:\n{}", flips.join("\n"));
    let failed: Vec<&String> = first.iter().filter(|(_, o)| *o == "fail" || *o == "warn").map(|(id, _)| id).collect();
    eprintln!("{RUNS} runs of {} checks in {:.1?}; failed or warned: {failed:?}", first.len(), started.elapsed());
}

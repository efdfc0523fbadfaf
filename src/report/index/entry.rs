//! An agent's entry in the index: read from its report, or made for an agent the kit could not
//! run; and the checks that ended differently across identical runs of one agent.

use std::collections::BTreeMap;
use std::path::Path;

use super::model::{AgentEntry, AgentStatus, CauseEntry, FailingCheck, FlakyCheck, empty_counts};
use crate::report::json::Report;
use crate::report::model::Outcome;

/// Root causes an entry carries.
pub const TOP_CAUSES: usize = 3;

/// The entry of agent `name` at `url` whose run wrote `report`; `link` is where its report lies,
/// relative to the index ([`report_link`]).
pub fn entry_from_report(name: &str, url: &str, report: &Report, link: Option<String>) -> AgentEntry {
    let mut counts = empty_counts();
    for r in report.checks().filter(|r| r.scored) {
        counts.entry(r.level.as_str().to_owned()).or_default().add(r.outcome);
    }
    let failing_checks: Vec<FailingCheck> = report
        .checks()
        .filter(|r| r.scored && matches!(r.outcome, Outcome::Fail | Outcome::Warn))
        .map(|r| FailingCheck { id: r.id.clone(), title: r.title.clone(), level: r.level, outcome: r.outcome })
        .collect();
    // The report tells its causes in order; the index keeps those of scored findings, and a stable
    // sort by level puts the most severe first without reordering within a level.
    let scored = |id: &String| report.result(id).is_some_and(|r| r.result.scored);
    let mut causes: Vec<CauseEntry> = report
        .causes
        .iter()
        .filter(|c| c.findings.iter().any(scored))
        .map(|c| CauseEntry {
            id: c.id.clone(),
            headline: c.headline.clone(),
            level: c.level,
            root: c.root.clone(),
            decides: c.decides(),
        })
        .collect();
    causes.sort_by_key(|c| c.level);
    causes.truncate(TOP_CAUSES);
    AgentEntry {
        name: name.to_owned(),
        url: url.to_owned(),
        status: AgentStatus::of(report.verdict.status),
        exit_code: report.verdict.exit_code,
        counts,
        causes,
        failing: failing_checks.iter().map(|c| c.id.clone()).collect(),
        failing_checks,
        duration_ms: report.summary.duration_ms,
        report: link,
        error: None,
        labels: BTreeMap::new(),
        runs: 1,
        flaky: Vec::new(),
    }
}

/// The entry of agent `name` at `url` that the kit could not run at all, and why.
pub fn entry_failed(name: &str, url: &str, error: String, duration_ms: u64) -> AgentEntry {
    AgentEntry {
        name: name.to_owned(),
        url: url.to_owned(),
        status: AgentStatus::Error,
        exit_code: 2,
        counts: empty_counts(),
        causes: Vec::new(),
        failing: Vec::new(),
        failing_checks: Vec::new(),
        duration_ms,
        report: None,
        error: Some(error),
        labels: BTreeMap::new(),
        runs: 0,
        flaky: Vec::new(),
    }
}

/// Where agent `name`'s report lies under the index folder `out`, relative to it:
/// `<name>/report.html` when that file exists, else `<name>/report.json` when that one does.
pub fn report_link(out: &Path, name: &str) -> Option<String> {
    ["report.html", "report.json"].into_iter().find(|f| out.join(name).join(f).is_file()).map(|f| format!("{name}/{f}"))
}

/// Per check id, the outcomes seen across `reports` (identical runs of one agent) and how often,
/// for the checks that did not end the same way every time; in order of first appearance.
pub fn flakiness(reports: &[Report]) -> Vec<FlakyCheck> {
    let mut order: Vec<&str> = Vec::new();
    let mut seen: BTreeMap<&str, BTreeMap<String, u32>> = BTreeMap::new();
    for r in reports.iter().flat_map(|r| r.checks()) {
        let outcomes = seen.entry(r.id.as_str()).or_insert_with(|| {
            order.push(r.id.as_str());
            BTreeMap::new()
        });
        *outcomes.entry(r.outcome.as_str().to_owned()).or_default() += 1;
    }
    order
        .into_iter()
        .filter_map(|id| {
            let outcomes = seen.remove(id)?;
            (outcomes.len() > 1).then(|| FlakyCheck { id: id.to_owned(), outcomes })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::json::build_report;
    use crate::report::model::{CheckMeta, CheckResult, Failure, Level, RunInfo, SkipReason};

    fn check(id: &str, level: Level, outcome: Outcome, message: &str) -> CheckResult {
        CheckResult {
            failure: (!message.is_empty()).then(|| Failure { message: message.into(), ..Failure::default() }),
            ..CheckResult::new(&CheckMeta { level, ..CheckMeta::sample(id) }, outcome)
        }
    }

    fn sample() -> Report {
        let mut waiting = check("GET-001", Level::Must, Outcome::Skip, "");
        waiting.skip_reason = Some(SkipReason::DependsOnFailed);
        waiting.depends_on = Some("SEND-001".into());
        let mut unscored = check("EXT-001", Level::Must, Outcome::Fail, "no event ids");
        unscored.scored = false;
        let results = vec![
            check("CARD-001", Level::Must, Outcome::Pass, ""),
            check("CT-001", Level::Should, Outcome::Warn, "content-type is text/plain"),
            check("SEND-001", Level::Must, Outcome::Fail, "SendMessage answered HTTP 500"),
            waiting,
            check("MAY-001", Level::May, Outcome::Info, ""),
            check("LIST-001", Level::Must, Outcome::Fail, "ListTasks has no tasks member"),
            unscored,
        ];
        build_report(&RunInfo::default(), &results, 321)
    }

    #[test]
    fn an_entry_counts_the_scored_checks_by_level_and_names_the_failing_ones() {
        let report = sample();
        let e = entry_from_report("alpha", "http://alpha", &report, Some("alpha/report.html".into()));
        assert_eq!(e.status, AgentStatus::NonConformant);
        assert_eq!(e.exit_code, 1);
        assert_eq!(e.duration_ms, 321);
        assert_eq!(e.counts.keys().collect::<Vec<_>>(), ["info", "may", "must", "should"]);
        let must = e.counts["must"];
        assert_eq!((must.pass, must.fail, must.skip), (1, 2, 1), "the unscored fail is left out");
        assert_eq!(e.counts["should"].warn, 1);
        assert_eq!(e.counts["may"].info, 1);
        assert_eq!(e.failing, ["CT-001", "SEND-001", "LIST-001"]);
        assert_eq!((e.fails(), e.warns()), (2, 1));
        assert_eq!(e.failing_checks[0].level, Level::Should);
        assert_eq!(e.report.as_deref(), Some("alpha/report.html"));
        assert_eq!((e.runs, e.error.as_ref()), (1, None));
    }

    #[test]
    fn an_entry_keeps_the_three_most_severe_scored_causes() {
        let report = sample();
        let e = entry_from_report("alpha", "http://alpha", &report, None);
        let roots: Vec<&str> = e.causes.iter().map(|c| c.root.as_str()).collect();
        // MUST causes first (the one that decides two checks before the one that decides one),
        // then the SHOULD one; the unscored EXT-001 is not among them.
        assert_eq!(roots, ["SEND-001", "LIST-001", "CT-001"]);
        assert_eq!(e.causes[0].decides, 2);
        assert_eq!(e.causes[0].level, Level::Must);
        assert_eq!(e.causes[2].level, Level::Should);
        assert!(e.causes.iter().all(|c| c.id.starts_with("C-") && !c.headline.is_empty()));
        assert!(report.causes.iter().any(|c| c.root == "EXT-001"));
    }

    #[test]
    fn a_run_that_graded_nothing_is_inconclusive_and_a_failed_agent_is_an_error() {
        let report = build_report(&RunInfo::default(), &[], 0);
        let e = entry_from_report("x", "u", &report, None);
        assert_eq!((e.status, e.exit_code), (AgentStatus::Inconclusive, 2));
        let f = entry_failed("y", "u", "env var TOKEN is not set".into(), 5);
        assert_eq!((f.status, f.exit_code, f.runs), (AgentStatus::Error, 2, 0));
        assert_eq!(f.error.as_deref(), Some("env var TOKEN is not set"));
        assert_eq!(f.counts.len(), 4);
    }

    #[test]
    fn flakiness_names_the_checks_that_changed_across_runs() {
        let a = sample();
        let mut b = sample();
        b.results[1].result.outcome = Outcome::Pass;
        b.results[5].result.outcome = Outcome::Error;
        let flaky = flakiness(&[a.clone(), b, a.clone()]);
        let ids: Vec<&str> = flaky.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["CT-001", "LIST-001"]);
        assert_eq!(flaky[0].outcomes, BTreeMap::from([("pass".into(), 1), ("warn".into(), 2)]));
        assert_eq!(flaky[1].outcomes, BTreeMap::from([("error".into(), 1), ("fail".into(), 2)]));
        assert!(flakiness(&[a.clone(), a]).is_empty());
        assert!(flakiness(&[]).is_empty());
    }

    #[test]
    fn the_link_prefers_the_page() {
        let dir = std::env::temp_dir().join(format!("a2a-index-link-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("a")).unwrap();
        assert_eq!(report_link(&dir, "a"), None);
        std::fs::write(dir.join("a/report.json"), "{}").unwrap();
        assert_eq!(report_link(&dir, "a").as_deref(), Some("a/report.json"));
        std::fs::write(dir.join("a/report.html"), "").unwrap();
        assert_eq!(report_link(&dir, "a").as_deref(), Some("a/report.html"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

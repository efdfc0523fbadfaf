//! Findings grouped by root cause (DESIGN "Verdicts": one broken prerequisite is one story, not forty
//! failures). Computed once from a [`Report`]; the terminal view, the HTML page and the Markdown
//! summary all tell these stories.

use std::collections::{BTreeMap, HashMap};

use super::json::Report;
use super::model::{CheckResult, Outcome, SkipReason};

/// One root cause and everything it explains.
#[derive(Debug, Clone, PartialEq)]
pub struct Story<'a> {
    /// The finding that tells the story (the first, in run order, of its kind).
    pub lead: &'a CheckResult,
    /// Other checks that ended in an error with the lead's exact message (an unresponsive agent, the
    /// run deadline): the same cause, told once.
    pub same: Vec<&'a CheckResult>,
    /// Checks skipped with `depends_on_failed` naming the lead or one of `same`.
    pub dependents: Vec<&'a CheckResult>,
}

impl Story<'_> {
    /// Ids of the lead and of the checks that ended the same way.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.lead.id.as_str()).chain(self.same.iter().map(|r| r.id.as_str()))
    }
}

/// The synthetic check that diagnoses a failing neutral SendMessage: what the agent accepts and
/// refuses, in plain words. It is told before the findings it explains.
pub const DIAGNOSIS: &str = "KIT-DIAG-001";

/// The check whose failing request the diagnosis varies: when a diagnosis found something, its
/// failure is the root finding and is told first, even when the workaround left nothing waiting
/// on it.
pub const DIAGNOSED: &str = "CORE-SEND-001";

/// The diagnosis, when one ran and found something (an info result with a failure).
pub fn diagnosis(report: &Report) -> Option<&CheckResult> {
    report.checks().find(|r| r.id == DIAGNOSIS && r.failure.is_some())
}

/// How a result graded under the run's workaround says so, in one line; `None` for one graded as
/// written.
pub fn workaround_line(r: &CheckResult) -> Option<String> {
    (!r.workaround.is_empty())
        .then(|| format!("graded under the workaround ({DIAGNOSIS}): {}", r.workaround.join("; ")))
}

/// Outcomes that are findings, in the order they are told.
pub const FINDINGS: [Outcome; 3] = [Outcome::Fail, Outcome::Error, Outcome::Warn];

/// Every finding as stories: fails, then errors, then warnings; within each, the story that left
/// the most checks undecided first, then run order. Errors with one message are one story, and the
/// checks a finding left undecided are told with it.
pub fn stories(report: &Report) -> Vec<Story<'_>> {
    let mut dependents: HashMap<&str, Vec<&CheckResult>> = HashMap::new();
    for r in report.checks().filter(|r| r.skip_reason == Some(SkipReason::DependsOnFailed)) {
        if let Some(cause) = r.depends_on.as_deref() {
            dependents.entry(cause).or_default().push(r);
        }
    }
    let mut same_error: BTreeMap<&str, Vec<&CheckResult>> = BTreeMap::new();
    for r in report.checks().filter(|r| r.outcome == Outcome::Error) {
        if let Some(f) = &r.failure {
            same_error.entry(f.message.as_str()).or_default().push(r);
        }
    }
    let mut out = Vec::new();
    for outcome in FINDINGS {
        let first = out.len();
        for r in report.checks().filter(|r| r.outcome == outcome) {
            let mut same = Vec::new();
            if outcome == Outcome::Error
                && let Some(group) = r.failure.as_ref().and_then(|f| same_error.get(f.message.as_str()))
            {
                if group[0].id != r.id {
                    // Told with the first check that ended this way.
                    continue;
                }
                same = group[1..].to_vec();
            }
            let waiting = std::iter::once(r)
                .chain(same.iter().copied())
                .flat_map(|x| dependents.get(x.id.as_str()).into_iter().flatten().copied())
                .collect();
            out.push(Story { lead: r, same, dependents: waiting });
        }
        // A stable sort: equally large stories keep their run order.
        out[first..].sort_by_key(|s: &Story<'_>| std::cmp::Reverse(s.dependents.len()));
        if diagnosis(report).is_some()
            && let Some(i) = out[first..].iter().position(|s| s.lead.id == DIAGNOSED)
        {
            out[first..=first + i].rotate_right(1);
        }
    }
    out
}

/// Number of findings (fail, error and warn results), whether or not a story tells them together.
pub fn finding_count(report: &Report) -> usize {
    report.checks().filter(|r| FINDINGS.contains(&r.outcome)).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::json::build_report;
    use crate::report::model::{CheckMeta, Failure, RunInfo};

    fn meta(id: &str) -> CheckMeta {
        CheckMeta::sample(id)
    }

    fn with(id: &str, outcome: Outcome, message: &str) -> CheckResult {
        CheckResult {
            failure: (!message.is_empty()).then(|| Failure { message: message.into(), ..Failure::default() }),
            ..CheckResult::new(&meta(id), outcome)
        }
    }

    fn dependent(id: &str, cause: &str) -> CheckResult {
        CheckResult {
            depends_on: Some(cause.into()),
            ..CheckResult::skipped(&meta(id), SkipReason::DependsOnFailed, format!("{cause} failed"))
        }
    }

    #[test]
    fn one_cause_is_one_story() {
        let results = vec![
            with("W", Outcome::Warn, "soft"),
            with("E1", Outcome::Error, "the agent stopped answering"),
            with("F0", Outcome::Fail, "first, but nothing waits on it"),
            with("F", Outcome::Fail, "broken"),
            dependent("D1", "F"),
            with("E2", Outcome::Error, "the agent stopped answering"),
            with("E3", Outcome::Error, "something else"),
            dependent("D2", "E2"),
            with("P", Outcome::Pass, ""),
        ];
        let report = build_report(&RunInfo::default(), &results, 0);
        let stories = stories(&report);
        let leads: Vec<&str> = stories.iter().map(|s| s.lead.id.as_str()).collect();
        // The failure that left a check undecided is told first.
        assert_eq!(leads, ["F", "F0", "E1", "E3", "W"]);
        assert_eq!(stories[0].dependents.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["D1"]);
        assert_eq!(stories[2].ids().collect::<Vec<_>>(), ["E1", "E2"]);
        // A check waiting on any check of the story is told with it.
        assert_eq!(stories[2].dependents.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["D2"]);
        assert_eq!(finding_count(&report), 6);
    }

    #[test]
    fn the_diagnosed_failure_is_told_first() {
        let results = vec![
            with("F", Outcome::Fail, "broken"),
            dependent("D1", "F"),
            with(DIAGNOSED, Outcome::Fail, "HTTP 500"),
            with(DIAGNOSIS, Outcome::Info, "SendMessage answers HTTP 500 to role ROLE_USER ..."),
        ];
        let report = build_report(&RunInfo::default(), &results, 0);
        let leads: Vec<String> = stories(&report).iter().map(|s| s.lead.id.clone()).collect();
        assert_eq!(leads, [DIAGNOSED, "F"]);
        // Without a diagnosis that found something, the story with most dependents leads.
        let results = vec![results[0].clone(), results[1].clone(), results[2].clone()];
        let report = build_report(&RunInfo::default(), &results, 0);
        assert_eq!(stories(&report)[0].lead.id, "F");
    }
}

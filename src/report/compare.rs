//! `report diff OLD NEW`: what changed between two reports, check by check, for gating a pull
//! request against the last accepted report.
//!
//! Every check whose outcome differs is listed exactly once, in one of: new failures (now `fail`,
//! before anything else), new errors (now `error`, before neither `fail` nor `error`), fixed (was
//! `fail` or `error`, now `pass` or `info`), and other changed outcomes. Checks only in NEW are
//! added, checks only in OLD removed. A regression is a scored check that newly fails or errors
//! (or an added one that fails or errors), unless NEW's baseline accepts it.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::json::{Report, ReportResult};
use super::model::{BaselineStatus, Outcome, Verdict};

/// One check in a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub id: String,
    pub title: String,
    /// Outcome in OLD (absent for an added check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Outcome>,
    /// Outcome in NEW (absent for a removed check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Outcome>,
    /// How the check ended in NEW (or OLD, when removed): the failure message or the skip reason.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Whether the check counts towards the verdict (as of NEW, else OLD).
    pub scored: bool,
    /// NEW's baseline accepts the failure.
    pub accepted: bool,
}

impl Change {
    /// A scored failure or error that no baseline accepts.
    fn gates(&self) -> bool {
        self.scored && !self.accepted && matches!(self.new, Some(Outcome::Fail | Outcome::Error))
    }
}

/// What changed from OLD to NEW.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportDiff {
    pub old_verdict: Verdict,
    pub new_verdict: Verdict,
    pub new_failures: Vec<Change>,
    pub new_errors: Vec<Change>,
    pub fixed: Vec<Change>,
    /// Every other change of outcome (pass → skip, warn → pass, fail → error, ...).
    pub changed: Vec<Change>,
    pub added: Vec<Change>,
    pub removed: Vec<Change>,
    /// Ids of the changes that fail the gate.
    pub regressions: Vec<String>,
}

impl ReportDiff {
    pub fn has_regression(&self) -> bool {
        !self.regressions.is_empty()
    }

    /// Ids of every check present in both reports whose outcome changed.
    pub fn changed_ids(&self) -> Vec<&str> {
        [&self.new_failures, &self.new_errors, &self.fixed, &self.changed]
            .into_iter()
            .flatten()
            .map(|c| c.id.as_str())
            .collect()
    }

    /// Exit status for a gate: 1 on a regression, else 0.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.has_regression())
    }
}

fn detail(r: &ReportResult) -> String {
    let x = &r.result;
    if let Some(reason) = x.skip_reason {
        return match (&x.depends_on, &x.skip_detail) {
            (Some(cause), _) => format!("{}: {cause}", reason.as_str()),
            (None, Some(d)) => format!("{}: {d}", reason.as_str()),
            (None, None) => reason.as_str().to_owned(),
        };
    }
    x.failure.as_ref().map(|f| f.message.lines().next().unwrap_or("").to_owned()).unwrap_or_default()
}

fn change(old: Option<&ReportResult>, new: Option<&ReportResult>) -> Change {
    let latest = new.or(old).expect("a change has a side");
    Change {
        id: latest.result.id.clone(),
        title: latest.result.title.clone(),
        old: old.map(|r| r.result.outcome),
        new: new.map(|r| r.result.outcome),
        detail: detail(latest),
        scored: latest.result.scored,
        accepted: new.is_some_and(|r| r.baseline_status == Some(BaselineStatus::Accepted)),
    }
}

/// Compares two reports check by check (by id), in NEW's order, then OLD's for removed checks.
pub fn compare(old: &Report, new: &Report) -> ReportDiff {
    let old_by_id: HashMap<&str, &ReportResult> = old.results.iter().map(|r| (r.result.id.as_str(), r)).collect();
    let new_by_id: HashMap<&str, &ReportResult> = new.results.iter().map(|r| (r.result.id.as_str(), r)).collect();
    let mut d = ReportDiff {
        old_verdict: old.verdict.status,
        new_verdict: new.verdict.status,
        new_failures: Vec::new(),
        new_errors: Vec::new(),
        fixed: Vec::new(),
        changed: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
        regressions: Vec::new(),
    };
    for n in &new.results {
        let Some(o) = old_by_id.get(n.result.id.as_str()) else {
            let c = change(None, Some(n));
            if c.gates() {
                d.regressions.push(c.id.clone());
            }
            d.added.push(c);
            continue;
        };
        let (before, after) = (o.result.outcome, n.result.outcome);
        if before == after {
            continue;
        }
        let c = change(Some(o), Some(n));
        if c.gates() {
            d.regressions.push(c.id.clone());
        }
        match (before, after) {
            (_, Outcome::Fail) => d.new_failures.push(c),
            (b, Outcome::Error) if b != Outcome::Fail => d.new_errors.push(c),
            (Outcome::Fail | Outcome::Error, Outcome::Pass | Outcome::Info) => d.fixed.push(c),
            _ => d.changed.push(c),
        }
    }
    for o in &old.results {
        if !new_by_id.contains_key(o.result.id.as_str()) {
            d.removed.push(change(Some(o), None));
        }
    }
    d
}

/// The diff for a person: one section per kind of change, then the gate's decision.
pub fn to_text(d: &ReportDiff, old_name: &str, new_name: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "report diff: {old_name} → {new_name}");
    let _ = writeln!(out, "verdict: {} → {}", d.old_verdict.as_str(), d.new_verdict.as_str());
    for (title, list) in [
        ("New failures", &d.new_failures),
        ("New errors", &d.new_errors),
        ("Fixed", &d.fixed),
        ("Other changed outcomes", &d.changed),
        ("Added checks", &d.added),
        ("Removed checks", &d.removed),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{title} ({}):", list.len());
        // The ids line up within a section, an HTTP+JSON grading's longer id included.
        let width = list.iter().map(|c| c.id.chars().count()).max().unwrap_or(0).max(16);
        for c in list {
            let outcome = |o: Option<Outcome>| o.map_or("—", Outcome::as_str);
            let mut line = format!("  {:<width$} {:>5} → {:<5}", c.id, outcome(c.old), outcome(c.new));
            if !c.detail.is_empty() {
                line.push_str("  ");
                line.push_str(&c.detail);
            }
            if c.accepted {
                line.push_str("  (accepted by the baseline)");
            }
            if !c.scored {
                line.push_str("  (not scored)");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    if d.changed_ids().is_empty() && d.added.is_empty() && d.removed.is_empty() {
        out.push_str("\nno check changed its outcome\n");
    }
    if d.has_regression() {
        let _ = writeln!(
            out,
            "\nregression: {} scored check(s) newly fail or error: {}",
            d.regressions.len(),
            d.regressions.join(", ")
        );
    } else {
        out.push_str("\nno regression\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::json::build_report;
    use crate::report::model::{CheckMeta, CheckResult, RunInfo, SkipReason};

    fn r(id: &str, outcome: Outcome) -> CheckResult {
        let meta = CheckMeta::sample(id);
        if outcome == Outcome::Skip {
            return CheckResult::skipped(&meta, SkipReason::Filtered, "x");
        }
        CheckResult::new(&meta, outcome)
    }

    fn report(results: &[CheckResult]) -> Report {
        build_report(&RunInfo::default(), results, 0)
    }

    #[test]
    fn every_change_is_listed_once() {
        use Outcome::*;
        let old = report(&[r("A", Pass), r("B", Fail), r("C", Pass), r("D", Pass), r("E", Pass), r("OLD", Pass)]);
        let new = report(&[r("A", Pass), r("B", Pass), r("C", Fail), r("D", Skip), r("E", Error), r("NEW", Fail)]);
        let d = compare(&old, &new);
        let ids = |v: &[Change]| v.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&d.new_failures), ["C"]);
        assert_eq!(ids(&d.new_errors), ["E"]);
        assert_eq!(ids(&d.fixed), ["B"]);
        assert_eq!(ids(&d.changed), ["D"]);
        assert_eq!(ids(&d.added), ["NEW"]);
        assert_eq!(ids(&d.removed), ["OLD"]);
        assert_eq!(d.changed_ids(), ["C", "E", "B", "D"]);
        assert_eq!(d.regressions, ["C", "E", "NEW"]);
        assert_eq!(d.exit_code(), 1);
        let text = to_text(&d, "old.json", "new.json");
        assert!(text.contains("New failures (1):\n  C") && text.contains("regression: 3"), "{text}");
    }

    #[test]
    fn the_same_outcomes_are_no_regression() {
        let a = report(&[r("A", Outcome::Fail)]);
        let d = compare(&a, &a);
        assert!(d.changed_ids().is_empty() && !d.has_regression());
        assert!(to_text(&d, "a", "a").contains("no check changed its outcome"));
    }
}

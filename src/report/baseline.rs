//! Baselines (DESIGN "Overlays"): a file of accepted failures, each with a reason and an optional
//! expiry, laid over a run's results.
//!
//! - A listed check that fails (or warns) is `accepted`: it no longer fails the run.
//! - A listed check that passes is `stale`: the entry must be removed, and the run fails until it is.
//! - An entry whose expiry has passed is `expired` and no longer applies.
//! - A listed check that was skipped is tolerated; one that ended in error is not accepted (the kit
//!   could not decide, so there is nothing to accept); an id no check of the run has is reported.
//!
//! [`Overlay`] applies a baseline to a run's events: it emits [`RunEvent::BaselineApplied`] and the
//! run's verdict with the baseline taken into account, so every sink sees the same judgement.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use time::Date;
use time::macros::format_description;

use super::events::{RunEvent, Sink};
use super::model::{BaselineEntryReport, BaselineReport, CheckResult, EntryStatus, Outcome, Verdict, list_ids};

/// One accepted failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Check id, exactly as in reports.
    pub id: String,
    /// Why the failure is accepted (required: a baseline is a list of decisions, each explained).
    pub reason: String,
    /// Last day (UTC) the entry applies.
    pub expires: Option<Date>,
}

/// A baseline file, parsed and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    /// Where it was read from, as given.
    pub source: String,
    /// SHA-256 of its bytes, lower-case hex.
    pub sha256: String,
    pub entries: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    entries: Vec<FileEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEntry {
    id: String,
    reason: String,
    #[serde(default)]
    expires: Option<String>,
}

impl Baseline {
    /// Reads a baseline file (YAML or JSON).
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8", path.display()))?;
        Baseline::parse(&text, &path.display().to_string())
    }

    /// Parses a baseline (YAML, of which JSON is a subset); `source` names it in messages and reports.
    pub fn parse(text: &str, source: &str) -> Result<Baseline, String> {
        let doc: FileDoc = serde_norway::from_str(text).map_err(|e| format!("{source}: {e}"))?;
        let mut seen = HashSet::new();
        let mut entries = Vec::with_capacity(doc.entries.len());
        for (i, e) in doc.entries.into_iter().enumerate() {
            let at = format!("{source}: entries[{i}]");
            let id = e.id.trim().to_owned();
            if id.is_empty() {
                return Err(format!("{at}: id is empty"));
            }
            if e.reason.trim().is_empty() {
                return Err(format!("{at} ({id}): reason is required"));
            }
            if !seen.insert(id.clone()) {
                return Err(format!("{at}: {id} is listed twice"));
            }
            let expires = match e.expires {
                None => None,
                Some(d) => Some(
                    parse_date(d.trim())
                        .map_err(|_| format!("{at} ({id}): expires {d:?} is not a date (YYYY-MM-DD)"))?,
                ),
            };
            entries.push(Entry { id, reason: e.reason.trim().to_owned(), expires });
        }
        Ok(Baseline { source: source.to_owned(), sha256: hex::encode(Sha256::digest(text.as_bytes())), entries })
    }

    /// What each entry makes of `results`, with expiries judged against `today`.
    pub fn judge(&self, results: &[CheckResult], today: Date) -> BaselineReport {
        let entries = self
            .entries
            .iter()
            .map(|e| {
                let status = match results.iter().find(|r| r.id == e.id) {
                    None => EntryStatus::Unknown,
                    Some(_) if e.expires.is_some_and(|d| d < today) => EntryStatus::Expired,
                    Some(r) => match r.outcome {
                        Outcome::Fail | Outcome::Warn => EntryStatus::Accepted,
                        Outcome::Info if r.failure.is_some() => EntryStatus::Accepted,
                        Outcome::Pass | Outcome::Info => EntryStatus::Stale,
                        Outcome::Skip => EntryStatus::Skipped,
                        Outcome::Error => EntryStatus::Undecided,
                    },
                };
                BaselineEntryReport {
                    id: e.id.clone(),
                    reason: e.reason.clone(),
                    expires: e.expires.map(format_date),
                    status,
                }
            })
            .collect();
        BaselineReport {
            source: self.source.clone(),
            sha256: self.sha256.clone(),
            evaluated_on: format_date(today),
            entries,
        }
    }
}

/// The run's verdict with `baseline` applied: accepted failures do not fail the run, a stale entry
/// does. `reasons` say what the baseline did.
pub fn verdict(results: &[CheckResult], baseline: &BaselineReport) -> (Verdict, Vec<String>) {
    let accepted: HashSet<&str> = baseline.ids(EntryStatus::Accepted).into_iter().collect();
    // An accepted failure counts as graded but no longer as failed.
    let effective: Vec<CheckResult> = results
        .iter()
        .map(|r| {
            if r.outcome == Outcome::Fail && accepted.contains(r.id.as_str()) {
                CheckResult { outcome: Outcome::Warn, ..r.clone() }
            } else {
                r.clone()
            }
        })
        .collect();
    let (mut status, decided) = Verdict::decide(&effective);
    let mut reasons = Vec::new();
    let stale = baseline.ids(EntryStatus::Stale);
    if !stale.is_empty() {
        reasons.push(format!(
            "{} baseline entr{} stale: {} now pass{}; remove {} from {}",
            stale.len(),
            if stale.len() == 1 { "y is" } else { "ies are" },
            list_ids(&stale),
            if stale.len() == 1 { "es" } else { "" },
            if stale.len() == 1 { "it" } else { "them" },
            baseline.source
        ));
        // Whatever else was wrong is still said; a stale entry fails the run in any case.
        if status != Verdict::Conformant {
            reasons.extend(decided);
        }
        status = Verdict::NonConformant;
    } else {
        reasons.extend(decided);
    }
    let mut note = |status: EntryStatus, what: &str| {
        let ids = baseline.ids(status);
        if !ids.is_empty() {
            reasons.push(format!("{} {what}: {}", ids.len(), list_ids(&ids)));
        }
    };
    note(EntryStatus::Accepted, "failure(s) accepted by the baseline");
    note(EntryStatus::Expired, "baseline entr(ies) expired and no longer apply");
    note(EntryStatus::Undecided, "baseline entr(ies) not applied: the check ended in error");
    note(EntryStatus::Unknown, "baseline id(s) name no check of this run");
    (status, reasons)
}

/// Lays a baseline over a run's events on their way to `inner`: after the last check it emits
/// [`RunEvent::BaselineApplied`], and the `RunFinished` it passes on carries the verdict with the
/// baseline applied. A run that never got to its checks passes through untouched.
#[derive(Debug)]
pub struct Overlay<S: Sink> {
    inner: S,
    baseline: Baseline,
    today: Date,
    results: Vec<CheckResult>,
}

impl<S: Sink> Overlay<S> {
    /// `today` is the day (UTC) expiries are judged against.
    pub fn new(inner: S, baseline: Baseline, today: Date) -> Self {
        Overlay { inner, baseline, today, results: Vec::new() }
    }
}

impl<S: Sink> Sink for Overlay<S> {
    fn event(&mut self, ev: &RunEvent) {
        match ev {
            RunEvent::CheckFinished(r) => {
                self.results.push((**r).clone());
                self.inner.event(ev);
            }
            RunEvent::RunFinished { duration_ms, finished_at, .. } if !self.results.is_empty() => {
                let applied = self.baseline.judge(&self.results, self.today);
                let (verdict, reasons) = verdict(&self.results, &applied);
                self.inner.event(&RunEvent::BaselineApplied(Box::new(applied)));
                self.inner.event(&RunEvent::RunFinished {
                    verdict,
                    reasons,
                    duration_ms: *duration_ms,
                    finished_at: finished_at.clone(),
                });
            }
            _ => self.inner.event(ev),
        }
    }
}

/// Today in UTC.
pub fn today() -> Date {
    time::OffsetDateTime::now_utc().date()
}

/// `YYYY-MM-DD`.
pub fn parse_date(s: &str) -> Result<Date, time::error::Parse> {
    Date::parse(s, format_description!("[year]-[month]-[day]"))
}

fn format_date(d: Date) -> String {
    d.format(format_description!("[year]-[month]-[day]")).unwrap_or_else(|_| d.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{CheckMeta, Failure, SkipReason};

    fn result(id: &str, outcome: Outcome) -> CheckResult {
        let meta = CheckMeta::sample(id);
        match outcome {
            Outcome::Skip => CheckResult::skipped(&meta, SkipReason::Filtered, "x"),
            Outcome::Fail | Outcome::Warn | Outcome::Error => CheckResult {
                failure: Some(Failure { message: "broken".into(), ..Failure::default() }),
                ..CheckResult::new(&meta, outcome)
            },
            _ => CheckResult::new(&meta, outcome),
        }
    }

    fn day(s: &str) -> Date {
        parse_date(s).unwrap()
    }

    const FILE: &str = "
entries:
  - id: A
    reason: tracked in #12
  - id: B
    reason: fixed upstream, not released
    expires: 2026-06-30
  - id: C
    reason: flaky webhook in CI
  - id: GONE
    reason: renamed check
  - id: S
    reason: optional feature
  - id: E
    reason: known
";

    #[test]
    fn entries_are_judged_by_outcome_and_expiry() {
        let b = Baseline::parse(FILE, "baseline.yaml").unwrap();
        assert_eq!(b.entries[1].expires, Some(day("2026-06-30")));
        let results = [
            result("A", Outcome::Fail),
            result("B", Outcome::Fail),
            result("C", Outcome::Pass),
            result("S", Outcome::Skip),
            result("E", Outcome::Error),
        ];
        let before = b.judge(&results, day("2026-06-30"));
        let status: Vec<(&str, EntryStatus)> = before.entries.iter().map(|e| (e.id.as_str(), e.status)).collect();
        assert_eq!(
            status,
            [
                ("A", EntryStatus::Accepted),
                ("B", EntryStatus::Accepted),
                ("C", EntryStatus::Stale),
                ("GONE", EntryStatus::Unknown),
                ("S", EntryStatus::Skipped),
                ("E", EntryStatus::Undecided),
            ]
        );
        assert_eq!(before.evaluated_on, "2026-06-30");
        let after = b.judge(&results, day("2026-07-01"));
        assert_eq!(after.entry("B").unwrap().status, EntryStatus::Expired);
    }

    #[test]
    fn an_accepted_failure_turns_the_run_green_and_a_stale_entry_red() {
        let b = Baseline::parse("entries: [{id: A, reason: known}]", "b.yaml").unwrap();
        let today = day("2026-01-01");
        let failing = [result("A", Outcome::Fail), result("P", Outcome::Pass)];
        assert_eq!(Verdict::decide(&failing).0, Verdict::NonConformant);
        let (v, reasons) = verdict(&failing, &b.judge(&failing, today));
        assert_eq!(v, Verdict::Conformant, "{reasons:?}");
        assert!(reasons.iter().any(|r| r.contains("accepted by the baseline: A")), "{reasons:?}");

        let fixed = [result("A", Outcome::Pass), result("P", Outcome::Pass)];
        let (v, reasons) = verdict(&fixed, &b.judge(&fixed, today));
        assert_eq!(v, Verdict::NonConformant);
        assert!(reasons[0].contains("stale: A now passes"), "{reasons:?}");

        // Skipped is tolerated; another failure still fails the run.
        let skipped = [result("A", Outcome::Skip), result("P", Outcome::Pass)];
        assert_eq!(verdict(&skipped, &b.judge(&skipped, today)).0, Verdict::Conformant);
        let other = [result("A", Outcome::Fail), result("Q", Outcome::Fail)];
        assert_eq!(verdict(&other, &b.judge(&other, today)).0, Verdict::NonConformant);
        // An error is never accepted.
        let error = [result("A", Outcome::Error), result("P", Outcome::Pass)];
        assert_eq!(verdict(&error, &b.judge(&error, today)).0, Verdict::Inconclusive);
    }

    #[test]
    fn bad_files_are_refused_with_the_place() {
        let e = Baseline::parse("entries: [{id: A}]", "b.yaml").unwrap_err();
        assert!(e.contains("b.yaml") && e.contains("reason"), "{e}");
        let e = Baseline::parse("entries: [{id: A, reason: ' '}]", "b.yaml").unwrap_err();
        assert!(e.contains("entries[0] (A): reason is required"), "{e}");
        let e = Baseline::parse("entries: [{id: A, reason: x}, {id: A, reason: y}]", "b").unwrap_err();
        assert!(e.contains("listed twice"), "{e}");
        let e = Baseline::parse("entries: [{id: A, reason: x, expires: tomorrow}]", "b").unwrap_err();
        assert!(e.contains("not a date"), "{e}");
        let e = Baseline::parse("entries: [{id: A, reason: x, until: 2026-01-01}]", "b").unwrap_err();
        assert!(e.contains("until"), "{e}");
        // JSON is YAML too.
        let b = Baseline::parse(r#"{"entries": [{"id": "A", "reason": "x", "expires": "2026-01-01"}]}"#, "b.json");
        assert_eq!(b.unwrap().entries[0].expires, Some(day("2026-01-01")));
    }

    #[test]
    fn the_overlay_rewrites_the_verdict_every_sink_sees() {
        use crate::report::json::Collector;
        let b = Baseline::parse("entries: [{id: A, reason: known}]", "b.yaml").unwrap();
        let mut collector = Collector::new();
        {
            let mut overlay = Overlay::new(&mut collector, b, day("2026-01-01"));
            overlay.event(&RunEvent::RunStarted { info: Box::default(), planned: vec!["A".into()] });
            overlay.event(&RunEvent::CheckFinished(Box::new(result("A", Outcome::Fail))));
            overlay.event(&RunEvent::RunFinished {
                verdict: Verdict::NonConformant,
                reasons: vec!["1 scored check(s) failed: A".into()],
                duration_ms: 1,
                finished_at: "2026-01-01T00:00:00Z".into(),
            });
        }
        let report = collector.into_report().unwrap();
        assert_eq!(report.verdict.status, Verdict::Conformant);
        assert_eq!(report.verdict.exit_code, 0);
        assert_eq!(report.results[0].baseline_status, Some(crate::report::model::BaselineStatus::Accepted));
        assert_eq!(report.baseline.unwrap().entries[0].status, EntryStatus::Accepted);
    }
}

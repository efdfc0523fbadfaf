//! The JSON report (DESIGN "The JSON report"): a superset of the ACTS §13 document, described by
//! `reports/report.schema.json`, and the collector sink that builds it from the run events.
//!
//! Every other rendering (JUnit, terminal, ACTS subset) is computed from [`Report`], which is itself
//! computed from the check results the runner emits: one source of truth.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::causes::{self, Cause};
use super::events::{RunEvent, Sink};
use super::graded::Graded;
use super::model::{
    BaselineReport, BaselineStatus, CheckResult, EntryStatus, Level, Outcome, RunInfo, SuiteSource, TargetInfo, Verdict,
};

/// Version of the report format; bump minor for additive changes, major for removals or renames.
pub const SCHEMA_VERSION: &str = "1.6.0";

/// ACTS format version the report is a superset of.
pub const ACTS_VERSION: &str = "1.0";

/// The tool that produced the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

/// The specification pinned for the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecInfo {
    /// A2A protocol version, e.g. `1.0`.
    pub version: String,
    /// Commit of the specification repository.
    pub commit: String,
}

/// The run's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSection {
    pub id: String,
    /// `server` or `client`.
    pub mode: String,
    /// RFC 3339 start time.
    pub started_at: String,
    pub duration_ms: u64,
    /// Whether SHOULD violations fail.
    pub strict: bool,
    pub profiles: Vec<String>,
    /// Seed of generated inputs (null when none were generated).
    pub seed: Option<u64>,
}

/// Outcome counts over a set of results. `total` is the sum of the other six.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counts {
    pub total: u64,
    pub passed: u64,
    pub failed: u64,
    pub warned: u64,
    pub skipped: u64,
    pub errors: u64,
    pub info: u64,
}

impl Counts {
    pub fn add(&mut self, outcome: Outcome) {
        self.total += 1;
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::Warn => self.warned += 1,
            Outcome::Skip => self.skipped += 1,
            Outcome::Error => self.errors += 1,
            Outcome::Info => self.info += 1,
        }
    }
}

/// Counts per requirement level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ByLevel {
    pub must: Counts,
    pub should: Counts,
    pub may: Counts,
    /// Checks with no keyword sentence behind them (never scored).
    #[serde(default)]
    pub info: Counts,
}

impl ByLevel {
    pub fn get(&self, level: Level) -> &Counts {
        match level {
            Level::Must => &self.must,
            Level::Should => &self.should,
            Level::May => &self.may,
            Level::Info => &self.info,
        }
    }

    fn get_mut(&mut self, level: Level) -> &mut Counts {
        match level {
            Level::Must => &mut self.must,
            Level::Should => &mut self.should,
            Level::May => &mut self.may,
            Level::Info => &mut self.info,
        }
    }
}

/// Counts per outcome, keyed by the outcome's own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ByOutcome {
    pub pass: u64,
    pub fail: u64,
    pub warn: u64,
    pub skip: u64,
    pub error: u64,
    pub info: u64,
}

/// The run summary (ACTS §13.2, extended with `warned`, `info` and the extra breakdowns).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Results reported, scored or not.
    pub total: u64,
    pub passed: u64,
    pub failed: u64,
    pub warned: u64,
    pub skipped: u64,
    pub errors: u64,
    pub info: u64,
    /// Results that never change the verdict (extension and kit-policy profiles).
    pub not_scored: u64,
    pub duration_ms: u64,
    pub by_level: ByLevel,
    pub by_profile: BTreeMap<String, Counts>,
    pub by_outcome: ByOutcome,
    /// The root causes, the findings and the checks waiting on them, as every rendering states them.
    #[serde(default)]
    pub causes: causes::CauseCounts,
}

/// The run verdict with its exit status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictInfo {
    pub status: Verdict,
    pub exit_code: i32,
    pub reasons: Vec<String>,
    /// What the verdict rests on: per level, the scored checks that applied, how many were graded,
    /// and the rest by what would grade them.
    #[serde(default)]
    pub graded: Graded,
}

/// One check result as reported: the runner's [`CheckResult`] unchanged, plus report-only overlays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportResult {
    #[serde(flatten)]
    pub result: CheckResult,
    /// Baseline overlay (`accepted`, `stale`, `expired`); absent when no baseline entry names the check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_status: Option<BaselineStatus>,
}

/// The JSON report document (`reports/report.schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Version of this report format, [`SCHEMA_VERSION`].
    pub schema_version: String,
    pub acts_version: String,
    pub spec_version: String,
    /// When the report was written, RFC 3339 UTC.
    pub generated_at: String,
    pub tool: ToolInfo,
    pub spec: SpecInfo,
    pub suites: Vec<SuiteSource>,
    pub run: RunSection,
    pub target: TargetInfo,
    pub summary: Summary,
    pub verdict: VerdictInfo,
    /// The findings by root cause, in the order they are told ([`causes::of`]).
    #[serde(default)]
    pub causes: Vec<Cause>,
    /// Every check result, in plan order.
    pub results: Vec<ReportResult>,
    /// How a baseline applied (`--baseline`); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineReport>,
}

impl Report {
    /// The check results without their overlays.
    pub fn checks(&self) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().map(|r| &r.result)
    }

    /// Lays a baseline over the results: the `baseline` section, and each named result's status.
    /// The verdict is not touched: whoever applied the baseline decided it.
    pub fn overlay(&mut self, baseline: &BaselineReport) {
        for r in &mut self.results {
            r.baseline_status = baseline.entry(&r.result.id).and_then(|e| match e.status {
                EntryStatus::Accepted => Some(BaselineStatus::Accepted),
                EntryStatus::Stale => Some(BaselineStatus::Stale),
                EntryStatus::Expired => Some(BaselineStatus::Expired),
                EntryStatus::Skipped | EntryStatus::Undecided | EntryStatus::Unknown => None,
            });
        }
        self.baseline = Some(baseline.clone());
    }

    /// Computes again what the report derives from its results (the root causes and the graded
    /// figures): for a report of a version that did not carry them, or results edited afterwards.
    pub fn derive(&mut self) {
        let results: Vec<CheckResult> = self.checks().cloned().collect();
        self.causes = causes::of(&results);
        self.summary.causes = causes::CauseCounts::of(&self.causes, &results);
        self.verdict.graded = Graded::of(&results);
    }

    /// The result of check `id`, with its overlays.
    pub fn result(&self, id: &str) -> Option<&ReportResult> {
        self.results.iter().find(|r| r.result.id == id)
    }

    /// Profiles in order of first appearance among the results.
    pub fn profiles_in_order(&self) -> Vec<&str> {
        let mut seen: Vec<&str> = Vec::new();
        for r in self.checks() {
            if !seen.contains(&r.profile.as_str()) {
                seen.push(&r.profile);
            }
        }
        seen
    }
}

/// The counts of `results`, and of `causes`, the root causes found in them.
pub fn summarize(results: &[CheckResult], causes: &[Cause], duration_ms: u64) -> Summary {
    let mut all = Counts::default();
    let mut summary = Summary { duration_ms, causes: causes::CauseCounts::of(causes, results), ..Summary::default() };
    for r in results {
        all.add(r.outcome);
        summary.by_level.get_mut(r.level).add(r.outcome);
        summary.by_profile.entry(r.profile.clone()).or_default().add(r.outcome);
        if !r.scored {
            summary.not_scored += 1;
        }
    }
    summary.total = all.total;
    summary.passed = all.passed;
    summary.failed = all.failed;
    summary.warned = all.warned;
    summary.skipped = all.skipped;
    summary.errors = all.errors;
    summary.info = all.info;
    summary.by_outcome = ByOutcome {
        pass: all.passed,
        fail: all.failed,
        warn: all.warned,
        skip: all.skipped,
        error: all.errors,
        info: all.info,
    };
    summary
}

/// The current time as RFC 3339 UTC with whole seconds, e.g. `2026-01-31T12:00:00Z`.
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    // Whole seconds: sub-second precision only adds noise to diffs between reports.
    let now = now.replace_nanosecond(0).unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339).unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// Builds the report of a run from its results; the verdict comes from [`Verdict::decide`].
pub fn build_report(info: &RunInfo, results: &[CheckResult], duration_ms: u64) -> Report {
    let (status, reasons) = Verdict::decide(results);
    let found = causes::of(results);
    Report {
        schema_version: SCHEMA_VERSION.into(),
        acts_version: ACTS_VERSION.into(),
        spec_version: info.spec_version.clone(),
        generated_at: now_rfc3339(),
        tool: ToolInfo { name: info.tool.clone(), version: info.tool_version.clone() },
        spec: SpecInfo { version: info.spec_version.clone(), commit: info.spec_commit.clone() },
        suites: info.suites.clone(),
        run: RunSection {
            id: info.run_id.clone(),
            mode: info.mode.clone(),
            started_at: info.started_at.clone(),
            duration_ms,
            strict: info.strict,
            profiles: info.profiles.clone(),
            seed: info.seed,
        },
        target: info.target.clone(),
        summary: summarize(results, &found, duration_ms),
        verdict: VerdictInfo { status, exit_code: status.exit_code(), reasons, graded: Graded::of(results) },
        causes: found,
        results: results.iter().map(|r| ReportResult { result: r.clone(), baseline_status: None }).collect(),
        baseline: None,
    }
}

/// Why a text is not a report this kit reads.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("is not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("report schema version {found:?} is not supported (this kit reads {major}.x reports)")]
    Version { found: String, major: String },
    #[error("is not an a2a-conform report: {0}")]
    NotAReport(serde_json::Error),
}

/// Reads a `report.json` text. Reports of an older minor version of the format read as well
/// (additive changes only); another major version is refused. A report before 1.4.0 carried no
/// causes and no graded figures: they are computed from its results, as the run would have.
pub fn parse_report(text: &str) -> Result<Report, ParseError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(ParseError::NotJson)?;
    let version = value.get("schema_version").and_then(|v| v.as_str()).unwrap_or("").to_owned();
    let major = |v: &str| v.split('.').next().unwrap_or("").to_owned();
    if version.is_empty() || major(&version) != major(SCHEMA_VERSION) {
        return Err(ParseError::Version { found: version, major: major(SCHEMA_VERSION) });
    }
    let mut report: Report = serde_json::from_value(value).map_err(ParseError::NotAReport)?;
    let minor = |v: &str| v.split('.').nth(1).and_then(|m| m.parse::<u32>().ok()).unwrap_or(0);
    if minor(&version) < 4 {
        report.derive();
    }
    Ok(report)
}

/// The report as pretty-printed JSON with a trailing newline.
pub fn to_json_string(report: &Report) -> String {
    // Serializing plain data with string keys cannot fail.
    let mut s = serde_json::to_string_pretty(report).expect("report serializes");
    s.push('\n');
    s
}

/// A sink that builds the report from the events: the one way a [`Report`] comes to exist in a run.
#[derive(Debug, Clone, Default)]
pub struct Collector {
    info: Option<RunInfo>,
    planned: Vec<String>,
    results: Vec<CheckResult>,
    baseline: Option<BaselineReport>,
    report: Option<Report>,
}

impl Collector {
    pub fn new() -> Self {
        Collector::default()
    }

    /// The report, once `RunFinished` has arrived.
    pub fn report(&self) -> Option<&Report> {
        self.report.as_ref()
    }

    pub fn into_report(self) -> Option<Report> {
        self.report
    }

    /// Results in plan order; anything not planned follows in the order it finished.
    fn ordered(&self) -> Vec<CheckResult> {
        let rank: HashMap<&str, usize> = self.planned.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
        let mut out = self.results.clone();
        // A stable sort keeps unplanned results (usize::MAX) in finish order.
        out.sort_by_key(|r| rank.get(r.id.as_str()).copied().unwrap_or(usize::MAX));
        out
    }
}

impl Sink for Collector {
    fn event(&mut self, ev: &RunEvent) {
        match ev {
            RunEvent::RunStarted { info, planned } => {
                self.info = Some((**info).clone());
                self.planned.clone_from(planned);
            }
            RunEvent::CheckStarted { .. } => {}
            RunEvent::CheckFinished(r) => self.results.push((**r).clone()),
            RunEvent::BaselineApplied(b) => self.baseline = Some((**b).clone()),
            RunEvent::RunFinished { verdict, reasons, duration_ms, finished_at } => {
                let info = self.info.clone().unwrap_or_default();
                let mut report = build_report(&info, &self.ordered(), *duration_ms);
                report.generated_at.clone_from(finished_at);
                if let Some(b) = &self.baseline {
                    report.overlay(b);
                }
                // The engine decided; a run that never got to its checks says why here.
                report.verdict.status = *verdict;
                report.verdict.exit_code = verdict.exit_code();
                report.verdict.reasons.clone_from(reasons);
                self.report = Some(report);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::SpecRef;

    fn result(id: &str, profile: &str, level: Level, outcome: Outcome) -> CheckResult {
        CheckResult {
            id: id.into(),
            title: id.into(),
            suite: "s".into(),
            profile: profile.into(),
            level,
            spec: SpecRef::default(),
            outcome,
            skip_reason: None,
            skip_detail: None,
            depends_on: None,
            scored: true,
            duration_ms: 1,
            failure: None,
            measurement: None,
            workaround: vec![],
            evidence: vec![],
            headline: None,
        }
    }

    #[test]
    fn summary_counts_add_up() {
        let rs = [
            result("a", "core", Level::Must, Outcome::Pass),
            result("b", "core", Level::Should, Outcome::Warn),
            result("c", "streaming", Level::May, Outcome::Info),
        ];
        let s = summarize(&rs, &[], 9);
        assert_eq!((s.total, s.passed, s.warned, s.info), (3, 1, 1, 1));
        assert_eq!(s.by_level.must.passed, 1);
        assert_eq!(s.by_profile["core"].total, 2);
        assert_eq!(s.by_outcome.info, 1);
    }

    #[test]
    fn the_collector_orders_results_by_plan_and_stamps_the_finish_time() {
        let mut c = Collector::new();
        c.event(&RunEvent::RunStarted { info: Box::default(), planned: vec!["a".into(), "b".into()] });
        for id in ["x", "b", "a"] {
            c.event(&RunEvent::CheckFinished(Box::new(result(id, "core", Level::Must, Outcome::Pass))));
        }
        assert!(c.report().is_none());
        c.event(&RunEvent::RunFinished {
            verdict: Verdict::Conformant,
            reasons: vec!["all 3 graded scored checks passed or warned".into()],
            duration_ms: 3,
            finished_at: "2026-01-31T12:00:00Z".into(),
        });
        let r = c.into_report().unwrap();
        assert_eq!(r.checks().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["a", "b", "x"]);
        assert_eq!(r.generated_at, "2026-01-31T12:00:00Z");
        assert_eq!(r.summary.duration_ms, 3);
    }

    #[test]
    fn timestamps_are_utc_whole_seconds() {
        let t = now_rfc3339();
        assert!(t.ends_with('Z') && t.len() == 20, "{t}");
    }
}

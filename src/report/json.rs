//! The JSON report (DESIGN "The JSON report"): a superset of the ACTS §13 document, described by
//! `reports/report.schema.json`, plus the `--json-lines` event stream and a collector sink.
//!
//! Every other rendering (JUnit, terminal, ACTS subset) is computed from [`Report`], which is itself
//! computed from the check results the runner emits: one source of truth.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Sink;
use super::model::{CheckResult, Level, Outcome, RunEvent, Verdict};

/// Version of the report format; bump minor for additive changes, major for removals or renames.
pub const SCHEMA_VERSION: &str = "1.0.0";

/// ACTS format version the report is a superset of.
pub const ACTS_VERSION: &str = "1.0";

/// Everything about the run that does not come from the checks themselves.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunInfo {
    /// Tool name, `a2a-conform`.
    pub tool: String,
    /// Tool version.
    pub tool_version: String,
    /// A2A protocol version tested, `1.0`.
    pub spec_version: String,
    /// Commit of the specification the checks were written against.
    pub spec_commit: String,
    /// Unique id of this run.
    pub run_id: String,
    /// `server` (the kit tests a server) or `client`.
    pub mode: String,
    /// Start of the run, RFC 3339 in UTC (`Z`).
    pub started_at: String,
    /// Whether SHOULD violations fail.
    pub strict: bool,
    /// Profiles selected.
    pub profiles: Vec<String>,
    /// Seed of generated inputs, when any.
    pub seed: Option<u64>,
    /// Suite files the checks came from.
    pub suites: Vec<SuiteSource>,
    /// The peer under test.
    pub target: TargetInfo,
}

/// One suite file and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SuiteSource {
    /// Suite name.
    pub name: String,
    /// `builtin` or the path it was read from.
    pub origin: String,
    /// SHA-256 of the suite file's bytes, lower-case hex.
    pub sha256: String,
}

/// The peer under test.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Base URL (or `embedded mock`).
    pub url: String,
    /// SHA-256 of the agent card bytes as served.
    #[serde(default)]
    pub card_sha256: Option<String>,
    /// The card's `capabilities` object as declared.
    #[serde(default)]
    pub capabilities: Option<Value>,
    /// Free-form observations about the target (e.g. "identified as a 0.3 peer").
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The tool that produced the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolInfo {
    /// Tool name.
    pub name: String,
    /// Tool version.
    pub version: String,
}

/// The specification pinned for the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecInfo {
    /// Protocol version.
    pub version: String,
    /// Commit of the specification repository.
    pub commit: String,
}

/// The run's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSection {
    /// Unique id.
    pub id: String,
    /// `server` or `client`.
    pub mode: String,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Total wall time.
    pub duration_ms: u64,
    /// Whether SHOULD violations fail.
    pub strict: bool,
    /// Profiles selected.
    pub profiles: Vec<String>,
    /// Seed of generated inputs (null when none were generated).
    pub seed: Option<u64>,
}

/// Outcome counts over a set of results. `total` is the sum of the other six.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counts {
    /// Results counted.
    pub total: u64,
    /// `pass` outcomes.
    pub passed: u64,
    /// `fail` outcomes.
    pub failed: u64,
    /// `warn` outcomes.
    pub warned: u64,
    /// `skip` outcomes.
    pub skipped: u64,
    /// `error` outcomes.
    pub errors: u64,
    /// `info` outcomes.
    pub info: u64,
}

impl Counts {
    /// Counts one outcome.
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
    /// MUST requirements.
    pub must: Counts,
    /// SHOULD requirements.
    pub should: Counts,
    /// MAY requirements.
    pub may: Counts,
}

impl ByLevel {
    /// The counts of one level.
    pub fn get(&self, level: Level) -> &Counts {
        match level {
            Level::Must => &self.must,
            Level::Should => &self.should,
            Level::May => &self.may,
        }
    }

    fn get_mut(&mut self, level: Level) -> &mut Counts {
        match level {
            Level::Must => &mut self.must,
            Level::Should => &mut self.should,
            Level::May => &mut self.may,
        }
    }
}

/// Counts per outcome, keyed by the outcome's own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ByOutcome {
    /// `pass`.
    pub pass: u64,
    /// `fail`.
    pub fail: u64,
    /// `warn`.
    pub warn: u64,
    /// `skip`.
    pub skip: u64,
    /// `error`.
    pub error: u64,
    /// `info`.
    pub info: u64,
}

/// The run summary (ACTS §13.2, extended with `warned`, `info` and the extra breakdowns).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Results reported, scored or not.
    pub total: u64,
    /// `pass` outcomes.
    pub passed: u64,
    /// `fail` outcomes.
    pub failed: u64,
    /// `warn` outcomes.
    pub warned: u64,
    /// `skip` outcomes.
    pub skipped: u64,
    /// `error` outcomes (the kit could not decide).
    pub errors: u64,
    /// `info` outcomes (measurements).
    pub info: u64,
    /// Results that never change the verdict (extension and kit-policy profiles).
    pub not_scored: u64,
    /// Total wall time of the run.
    pub duration_ms: u64,
    /// Counts per requirement level.
    pub by_level: ByLevel,
    /// Counts per profile.
    pub by_profile: BTreeMap<String, Counts>,
    /// Counts per outcome.
    pub by_outcome: ByOutcome,
}

/// The run verdict with its exit status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictInfo {
    /// The verdict.
    pub status: Verdict,
    /// Process exit status that goes with it.
    pub exit_code: i32,
    /// Why.
    pub reasons: Vec<String>,
}

/// One check result as reported: the runner's [`CheckResult`] unchanged, plus report-only overlays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportResult {
    /// The result.
    #[serde(flatten)]
    pub result: CheckResult,
    /// Baseline overlay (`accepted`, `stale`, `expired`); reserved, absent until baselines exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_status: Option<String>,
}

/// The JSON report document (`reports/report.schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Version of this report format, [`SCHEMA_VERSION`].
    pub schema_version: String,
    /// ACTS version the document is a superset of.
    pub acts_version: String,
    /// A2A protocol version tested.
    pub spec_version: String,
    /// When the report was written, RFC 3339 UTC.
    pub generated_at: String,
    /// The tool.
    pub tool: ToolInfo,
    /// The pinned specification.
    pub spec: SpecInfo,
    /// Suite sources with their digests.
    pub suites: Vec<SuiteSource>,
    /// Run parameters.
    pub run: RunSection,
    /// The peer under test.
    pub target: TargetInfo,
    /// Counts.
    pub summary: Summary,
    /// Verdict and exit status.
    pub verdict: VerdictInfo,
    /// Every check result, in run order.
    pub results: Vec<ReportResult>,
}

impl Report {
    /// The check results without their overlays, in run order.
    pub fn checks(&self) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().map(|r| &r.result)
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

/// Computes the summary of `results`.
pub fn summarize(results: &[CheckResult], duration_ms: u64) -> Summary {
    let mut all = Counts::default();
    let mut summary = Summary { duration_ms, ..Summary::default() };
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
        summary: summarize(results, duration_ms),
        verdict: VerdictInfo { status, exit_code: status.exit_code(), reasons },
        results: results.iter().map(|r| ReportResult { result: r.clone(), baseline_status: None }).collect(),
    }
}

/// The report as pretty-printed JSON with a trailing newline.
pub fn to_json_string(report: &Report) -> String {
    // Serializing plain data with string keys cannot fail.
    let mut s = serde_json::to_string_pretty(report).expect("report serializes");
    s.push('\n');
    s
}

/// Writes the report as pretty-printed JSON with a trailing newline.
pub fn write_json(report: &Report, path: &Path) -> io::Result<()> {
    std::fs::write(path, to_json_string(report))
}

/// One event as a JSON object, as written by [`JsonLines`].
pub fn event_to_json(ev: &RunEvent) -> Value {
    match ev {
        RunEvent::RunStarted { target, planned } => {
            json!({"event": "run_started", "target": target, "planned": planned})
        }
        RunEvent::CheckStarted { id } => json!({"event": "check_started", "id": id}),
        RunEvent::CheckFinished(result) => json!({"event": "check_finished", "result": result}),
        RunEvent::RunFinished { verdict, duration_ms } => json!({
            "event": "run_finished",
            "verdict": verdict,
            "exit_code": verdict.exit_code(),
            "duration_ms": duration_ms,
        }),
    }
}

/// `--json-lines`: one compact JSON object per event, flushed at once so a consumer can follow the run.
#[derive(Debug)]
pub struct JsonLines<W: Write> {
    out: W,
    // `Sink::event` cannot return errors (sinks must not stop the run); the first one is kept here.
    error: Option<io::Error>,
}

impl<W: Write> JsonLines<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        JsonLines { out, error: None }
    }

    /// The first write error, if any.
    pub fn error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// Returns the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}

impl<W: Write> Sink for JsonLines<W> {
    fn event(&mut self, ev: &RunEvent) {
        if self.error.is_some() {
            return;
        }
        let mut line = event_to_json(ev).to_string();
        line.push('\n');
        if let Err(e) = self.out.write_all(line.as_bytes()).and_then(|()| self.out.flush()) {
            self.error = Some(e);
        }
    }
}

/// A sink that keeps the results so the report can be built once the run ends.
#[derive(Debug, Clone, Default)]
pub struct Collector {
    /// Results in the order they finished.
    pub results: Vec<CheckResult>,
    /// Wall time from `RunFinished`.
    pub duration_ms: u64,
    /// Verdict announced by `RunFinished`.
    pub verdict: Option<Verdict>,
}

impl Collector {
    /// An empty collector.
    pub fn new() -> Self {
        Collector::default()
    }

    /// Builds the report from what was collected.
    pub fn report(&self, info: &RunInfo) -> Report {
        build_report(info, &self.results, self.duration_ms)
    }
}

impl Sink for Collector {
    fn event(&mut self, ev: &RunEvent) {
        match ev {
            RunEvent::CheckFinished(r) => self.results.push((**r).clone()),
            RunEvent::RunFinished { verdict, duration_ms } => {
                self.verdict = Some(*verdict);
                self.duration_ms = *duration_ms;
            }
            RunEvent::RunStarted { .. } | RunEvent::CheckStarted { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{SpecRef, Verdict};

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
            scored: true,
            duration_ms: 1,
            failure: None,
            measurement: None,
            evidence: vec![],
        }
    }

    #[test]
    fn summary_counts_add_up() {
        let rs = [
            result("a", "core", Level::Must, Outcome::Pass),
            result("b", "core", Level::Should, Outcome::Warn),
            result("c", "streaming", Level::May, Outcome::Info),
        ];
        let s = summarize(&rs, 9);
        assert_eq!((s.total, s.passed, s.warned, s.info), (3, 1, 1, 1));
        assert_eq!(s.by_level.must.passed, 1);
        assert_eq!(s.by_profile["core"].total, 2);
        assert_eq!(s.by_outcome.info, 1);
    }

    #[test]
    fn json_lines_writes_one_object_per_event() {
        let mut sink = JsonLines::new(Vec::new());
        sink.event(&RunEvent::RunStarted { target: "t".into(), planned: 1 });
        sink.event(&RunEvent::CheckStarted { id: "a".into() });
        sink.event(&RunEvent::CheckFinished(Box::new(result("a", "core", Level::Must, Outcome::Pass))));
        sink.event(&RunEvent::RunFinished { verdict: Verdict::Conformant, duration_ms: 3 });
        let out = String::from_utf8(sink.finish().unwrap()).unwrap();
        let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[2]["result"]["outcome"], "pass");
        assert_eq!(lines[3]["exit_code"], 0);
    }

    #[test]
    fn timestamps_are_utc_whole_seconds() {
        let t = now_rfc3339();
        assert!(t.ends_with('Z') && t.len() == 20, "{t}");
    }
}

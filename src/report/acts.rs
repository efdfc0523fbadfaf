//! `--format acts`: the strict ACTS §13 report, derived from our [`Report`].
//!
//! ACTS knows four results only, so `warn` and `info` become `pass` (a SHOULD violation or a
//! measurement never makes an implementation non-conformant); the warning text is dropped.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::json::Report;
use super::model::{CheckResult, Level, Outcome};

/// The SDK under test, as ACTS §13.1 `sdk-info` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdkInfo {
    /// SDK name, e.g. `a2a-python`.
    pub name: String,
    pub version: String,
    pub language: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
}

impl Default for SdkInfo {
    fn default() -> Self {
        SdkInfo { name: "unknown".into(), version: "unknown".into(), language: "unknown".into(), repository: None }
    }
}

pub fn acts_result(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass | Outcome::Warn | Outcome::Info => "pass",
        Outcome::Fail => "fail",
        Outcome::Skip => "skip",
        Outcome::Error => "error",
    }
}

#[derive(Default)]
struct LevelSummary {
    total: u64,
    passed: u64,
    failed: u64,
    skipped: u64,
    errors: u64,
}

impl LevelSummary {
    fn add(&mut self, outcome: Outcome) {
        self.total += 1;
        match acts_result(outcome) {
            "pass" => self.passed += 1,
            "fail" => self.failed += 1,
            "skip" => self.skipped += 1,
            _ => self.errors += 1,
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "errors": self.errors,
        })
    }
}

/// The strict ACTS §13 report of `report`; `sdk` defaults to `unknown` everywhere.
pub fn to_acts(report: &Report, sdk: Option<SdkInfo>) -> Value {
    let sdk = sdk.unwrap_or_default();
    let mut all = LevelSummary::default();
    let (mut must, mut should, mut may) = (LevelSummary::default(), LevelSummary::default(), LevelSummary::default());
    for r in report.checks() {
        all.add(r.outcome);
        match r.level {
            Level::Must => must.add(r.outcome),
            Level::Should => should.add(r.outcome),
            // ACTS knows three levels; a check with no keyword sentence is reported as the weakest.
            Level::May | Level::Info => may.add(r.outcome),
        }
    }
    let mut summary = all.to_json();
    summary["duration_ms"] = json!(report.summary.duration_ms);
    summary["by_level"] = json!({"must": must.to_json(), "should": should.to_json(), "may": may.to_json()});

    // Suites in order of first appearance; tests in run order within each.
    let mut suites: Vec<(&str, Vec<Value>)> = Vec::new();
    for r in report.checks() {
        let test = test_result(r);
        match suites.iter_mut().find(|(name, _)| *name == r.suite) {
            Some((_, tests)) => tests.push(test),
            None => suites.push((&r.suite, vec![test])),
        }
    }
    let suites: Vec<Value> =
        suites.into_iter().map(|(name, tests)| json!({"id": name, "name": name, "tests": tests})).collect();

    json!({
        "acts_version": report.acts_version,
        "spec_version": report.spec_version,
        "generated_at": report.generated_at,
        "sdk": sdk,
        "transport": "jsonrpc",
        "environment": {"runner": format!("{} {}", report.tool.name, report.tool.version)},
        "summary": summary,
        "suites": suites,
    })
}

fn test_result(r: &CheckResult) -> Value {
    let result = acts_result(r.outcome);
    let mut t = Map::new();
    t.insert("id".into(), json!(r.id));
    t.insert("name".into(), json!(r.title));
    t.insert("level".into(), json!(r.level.as_str()));
    t.insert("result".into(), json!(result));
    t.insert("duration_ms".into(), json!(r.duration_ms));
    if r.outcome == Outcome::Skip {
        let reason = r.skip_reason.map_or("skipped", |s| s.as_str());
        let text = match &r.skip_detail {
            Some(d) => format!("{reason}: {d}"),
            None => reason.to_owned(),
        };
        t.insert("skip_reason".into(), json!(text));
    }
    // A failure detail on a `pass` would contradict the result, so warnings carry none.
    if matches!(result, "fail" | "error")
        && let Some(f) = &r.failure
    {
        let mut d = Map::new();
        d.insert("message".into(), json!(f.message));
        for (key, value) in [
            ("step_id", &f.step_id),
            ("expected", &f.expected),
            ("actual", &f.actual),
            // ACTS wants a dot-path; a JSON pointer is unambiguous where dots may occur in keys.
            ("assertion_path", &f.pointer),
        ] {
            if let Some(v) = value {
                d.insert(key.into(), json!(v));
            }
        }
        t.insert("failure".into(), Value::Object(d));
    }
    Value::Object(t)
}

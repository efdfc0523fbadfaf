//! JUnit XML rendering of a [`Report`] (via `quick-junit`), for CI systems that show test results.
//!
//! One `<testsuite>` per profile, one `<testcase>` per check, with a `spec_quote` property per quoted
//! sentence. A finding's text gives the quotes with their places, then the kit's reading, then what
//! the agent did. JUnit knows only success, failure, error and skipped, so `warn` and `info` are
//! successes whose note goes to `<system-out>`. With a
//! baseline, an accepted failure is skipped (with the baseline's reason) and a stale entry is a
//! failure, so that the test view agrees with the run's verdict.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::json::{Report, ReportResult};
use super::model::{BaselineStatus, CheckResult, Outcome};
use super::quotes;

pub fn to_junit(report: &Report) -> String {
    let mut junit = quick_junit::Report::new(report.tool.name.as_str());
    junit.set_time(ms(report.summary.duration_ms));
    for profile in report.profiles_in_order() {
        let mut suite = TestSuite::new(profile);
        let mut time = 0;
        for rr in report.results.iter().filter(|r| r.result.profile == profile) {
            time += rr.result.duration_ms;
            suite.add_test_case(report_case(report, rr));
        }
        suite.set_time(ms(time));
        junit.add_test_suite(suite);
    }
    // Serializing owned strings into a Vec cannot fail short of allocation failure.
    junit.to_string().expect("JUnit serializes")
}

/// Every check of `report` as a test case, profile by profile (the cases of [`to_junit`]'s suites,
/// in its order), for a rendering that puts one report in one suite.
pub fn test_cases(report: &Report) -> Vec<TestCase> {
    report
        .profiles_in_order()
        .into_iter()
        .flat_map(|p| report.results.iter().filter(move |r| r.result.profile == p))
        .map(|rr| report_case(report, rr))
        .collect()
}

/// One check's case, with the baseline's overlay: an accepted failure is skipped, a stale entry fails.
fn report_case(report: &Report, rr: &ReportResult) -> TestCase {
    let r = &rr.result;
    let mut case = test_case(r);
    let reason = report.baseline.as_ref().and_then(|b| b.entry(&r.id)).map_or("", |e| e.reason.as_str());
    match rr.baseline_status {
        Some(BaselineStatus::Accepted) if r.outcome == Outcome::Fail => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(format!("accepted by the baseline: {reason}"));
            status.set_description(detail(r));
            case.status = status;
        }
        Some(BaselineStatus::Stale) => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message("stale baseline entry: the check passes; remove it from the baseline");
            status.set_type("baseline");
            status.set_description(format!("baseline reason: {reason}"));
            case.status = status;
        }
        _ => {}
    }
    if let Some(b) = rr.baseline_status {
        case.add_property(Property::new("baseline_status", b.as_str()));
    }
    case
}

fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

fn test_case(r: &CheckResult) -> TestCase {
    let status = match r.outcome {
        Outcome::Fail | Outcome::Error => {
            let kind = if r.outcome == Outcome::Fail { NonSuccessKind::Failure } else { NonSuccessKind::Error };
            let mut status = TestCaseStatus::non_success(kind);
            status.set_message(r.failure.as_ref().map_or("(no detail)", |f| f.message.as_str()));
            status.set_type(r.level.as_str());
            status.set_description(detail(r));
            status
        }
        Outcome::Skip => {
            let mut status = TestCaseStatus::skipped();
            let reason = r.skip_reason.map_or("skipped", |s| s.as_str());
            match &r.skip_detail {
                Some(d) => status.set_message(format!("{reason}: {d}")),
                None => status.set_message(reason),
            };
            status
        }
        Outcome::Pass | Outcome::Warn | Outcome::Info => TestCaseStatus::success(),
    };
    let mut case = TestCase::new(format!("{}: {}", r.id, r.title), status);
    case.set_classname(r.suite.as_str());
    case.set_time(ms(r.duration_ms));
    case.add_property(Property::new("level", r.level.as_str()));
    if !r.spec.section.is_empty() {
        case.add_property(Property::new("spec_section", r.spec.section.as_str()));
    }
    case.add_property(Property::new("scored", if r.scored { "true" } else { "false" }));
    for q in r.spec.shown_quotes() {
        case.add_property(Property::new("spec_quote", quotes::quoted(&q)));
    }
    if let Some(reading) = &r.spec.interpretation {
        case.add_property(Property::new("interpretation", reading.as_str()));
    }
    let out = match r.outcome {
        Outcome::Warn => {
            let message = r.failure.as_ref().map_or("(no detail)", |f| f.message.as_str());
            Some(format!("warning: {message}\n{}", detail(r)))
        }
        // A violated MAY (or a check with no keyword sentence) is a finding too: told like a warning.
        Outcome::Info if r.failure.is_some() => {
            let message = r.failure.as_ref().map_or("", |f| f.message.as_str());
            let measurement = r.measurement.as_ref().map(|m| format!("\nmeasurement: {m}")).unwrap_or_default();
            Some(format!("info: {message}\n{}{measurement}", detail(r)))
        }
        Outcome::Info => r.measurement.as_ref().map(|m| format!("info: {m}")),
        _ => r.measurement.as_ref().map(|m| format!("measurement: {m}")),
    };
    if let Some(out) = out {
        case.set_system_out(out.trim_end());
    }
    case
}

/// The failure detail as text: the quoted sentences with their places and the kit's reading of them,
/// then what the agent did: the reason, location, expected and actual, reproducer.
fn detail(r: &CheckResult) -> String {
    let mut lines = Vec::new();
    if !r.spec.section.is_empty() {
        lines.push(format!("spec: §{} ({})", r.spec.section, r.level.as_str().to_uppercase()));
    }
    lines.extend(quotes::lines(&r.spec));
    if let Some(f) = &r.failure {
        lines.push(format!("message: {}", f.message));
        if let Some(s) = &f.step_id {
            lines.push(format!("step: {s}"));
        }
        if let Some(p) = &f.pointer {
            lines.push(format!("at: {p}"));
        }
        if let Some(e) = &f.expected {
            lines.push(format!("expected: {e}"));
        }
        if let Some(a) = &f.actual {
            lines.push(format!("actual: {a}"));
        }
    }
    if let Some(curl) = r.evidence.iter().find_map(|e| e.curl.as_deref()) {
        lines.push(format!("reproduce: {curl}"));
    }
    lines.join("\n")
}

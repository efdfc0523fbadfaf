//! `junit.xml` of a registry run (via `quick-junit`): one `<testsuite>` per agent, named after it,
//! holding one case per check of its own report. An agent the kit could not run gets one errored
//! case that says why; an agent whose report could not be read gets one errored case that says
//! that.
//!
//! A registry is thousands of agents of some three hundred checks each, so the file is written as
//! it is built, one agent at a time, and its cases are kept short: the name, the outcome and the
//! finding's message. The evidence, the quotes and the kit's reading stay in each agent's own
//! `junit.xml` and report, a link away.

use std::io::{self, Write};
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::model::{AgentStatus, Index};
use crate::report::json::Report;
use crate::report::junit::test_cases;

/// The counts of the root element, summed over the suites written.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    pub tests: usize,
    pub failures: usize,
    pub errors: usize,
    pub skipped: usize,
}

/// Writes the `<testsuite>` of every agent of `index` into `out`, each agent's report taken from
/// `load` (by agent name: none, the report, or why it could not be read) and dropped once its
/// cases are written; the totals for the root element.
pub fn write_suites(
    index: &Index,
    mut load: impl FnMut(&str) -> Option<Result<Report, String>>,
    out: &mut impl Write,
) -> io::Result<Totals> {
    let mut totals = Totals::default();
    for a in &index.agents {
        let mut suite = TestSuite::new(a.name.as_str());
        suite.add_property(Property::new("url", a.url.as_str()));
        suite.add_property(Property::new("status", a.status.as_str()));
        suite.set_time(Duration::from_millis(a.duration_ms));
        let problem = match (a.status, load(&a.name)) {
            (AgentStatus::Error, _) => Some(format!(
                "a2a-conform could not run the agent: {}",
                a.error.as_deref().unwrap_or("(no reason given)")
            )),
            (_, Some(Ok(report))) => {
                suite.add_test_cases(test_cases(&report).into_iter().map(short));
                None
            }
            (_, Some(Err(e))) => Some(format!("the agent's report could not be read: {e}")),
            (_, None) => Some("the agent's report.json is missing".to_owned()),
        };
        if let Some(message) = problem {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message(message);
            status.set_type(a.status.as_str());
            let mut case = TestCase::new(format!("{}: run", a.name), status);
            case.set_classname(a.name.as_str());
            suite.add_test_case(case);
        }
        totals.tests += suite.tests;
        totals.failures += suite.failures;
        totals.errors += suite.errors;
        totals.skipped += suite.skipped;
        out.write_all(suite_xml(suite).as_bytes())?;
    }
    Ok(totals)
}

/// The opening of the file, once the totals are known.
pub fn header(index: &Index, totals: Totals) -> String {
    // quick-junit escapes the attribute values of the root it writes; take its line.
    let mut root = quick_junit::Report::new(format!("{} registry", index.tool));
    root.set_time(Duration::from_millis(index.summary.duration_ms));
    root.tests = totals.tests;
    root.failures = totals.failures;
    root.errors = totals.errors;
    root.skipped = totals.skipped;
    let xml = root.to_string().expect("JUnit serializes");
    let open = xml.lines().take_while(|l| !l.trim_start().starts_with("</testsuites")).collect::<Vec<_>>();
    let mut head = open.join("\n");
    // An empty report is written as a self-closing root: open it.
    if head.ends_with("/>") {
        head.truncate(head.len() - 2);
        head.push('>');
    }
    head.push('\n');
    head
}

/// The closing of the file.
pub const FOOTER: &str = "</testsuites>\n";

/// One case reduced to what a registry view needs: the name, the outcome, the finding's message.
fn short(mut case: TestCase) -> TestCase {
    case.properties.clear();
    case.system_out = None;
    case.system_err = None;
    if let TestCaseStatus::NonSuccess { description, .. } = &mut case.status {
        *description = None;
    }
    case
}

/// The `<testsuite>` element of `suite`, as quick-junit writes it inside a root.
fn suite_xml(suite: TestSuite) -> String {
    let mut one = quick_junit::Report::new("");
    one.add_test_suite(suite);
    let xml = one.to_string().expect("JUnit serializes");
    let start = xml.find("<testsuite ").unwrap_or(0);
    let end = xml.rfind("</testsuites>").unwrap_or(xml.len());
    xml[start..end].to_owned()
}

/// The whole file in memory: for tests and small indexes.
pub fn to_junit(index: &Index, load: impl FnMut(&str) -> Option<Result<Report, String>>) -> String {
    let mut body = Vec::new();
    let totals = write_suites(index, load, &mut body).expect("writing to memory cannot fail");
    format!("{}{}{FOOTER}", header(index, totals), String::from_utf8_lossy(&body))
}

//! `junit.xml` of a registry run (via `quick-junit`): one `<testsuite>` per agent, named after it,
//! holding the test cases of its own report (those of `report::junit`, every profile in one suite).
//! An agent the kit could not run gets one errored case that says why; an agent whose report
//! could not be read gets one errored case that says that.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::model::{AgentStatus, Index};
use crate::report::json::Report;
use crate::report::junit::test_cases;

/// The JUnit XML of `index`, with each agent's report from `load` (by agent name: none, the
/// report, or why it could not be read). Reports are loaded one at a time and dropped once their
/// cases are built: a registry's reports together may be large.
pub fn to_junit(index: &Index, mut load: impl FnMut(&str) -> Option<Result<Report, String>>) -> String {
    let mut junit = quick_junit::Report::new(format!("{} registry", index.tool));
    junit.set_time(Duration::from_millis(index.summary.duration_ms));
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
                suite.add_test_cases(test_cases(&report));
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
        junit.add_test_suite(suite);
    }
    // Serializing owned strings into a Vec cannot fail short of allocation failure.
    junit.to_string().expect("JUnit serializes")
}

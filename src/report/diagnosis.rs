//! The diagnosis of a failing neutral SendMessage as the report tells it: which synthetic check
//! diagnoses which, and how a result graded under the workaround says so.

use super::model::CheckResult;

/// Diagnosis checks and the check whose failure each explains: a diagnosis finding is told with the
/// cause of that check, and its message (already in plain words) is that cause's headline.
pub const DIAGNOSES: [(&str, &str); 1] = [(DIAGNOSIS, DIAGNOSED)];

/// The synthetic check that diagnoses a failing neutral SendMessage: what the agent accepts and
/// refuses, in plain words. It is told before the findings it explains.
pub const DIAGNOSIS: &str = "KIT-DIAG-001";

/// The check whose failing request the diagnosis varies: when a diagnosis found something, its
/// failure is the root finding and is told first, even when the workaround left nothing waiting
/// on it.
pub const DIAGNOSED: &str = "CORE-SEND-001";

/// The diagnosis, when one ran and found something (an info result with a failure).
pub fn diagnosis<'a>(mut checks: impl Iterator<Item = &'a CheckResult>) -> Option<&'a CheckResult> {
    checks.find(|r| r.id == DIAGNOSIS && r.failure.is_some())
}

/// How a result graded under the run's workaround says so, in one line; `None` for one graded as
/// written.
pub fn workaround_line(r: &CheckResult) -> Option<String> {
    (!r.workaround.is_empty())
        .then(|| format!("graded under the workaround ({DIAGNOSIS}): {}", r.workaround.join("; ")))
}

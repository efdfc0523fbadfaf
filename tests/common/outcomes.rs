//! A report read as each check's ending, for tests that compare many checks at once.

use std::collections::BTreeMap;

use a2a_conform::report::json::Report;
use a2a_conform::report::{Outcome, SkipReason};

/// Check id → (outcome, skip reason, skip detail).
pub type Outcomes = BTreeMap<String, (Outcome, Option<SkipReason>, String)>;

pub fn outcomes(report: &Report) -> Outcomes {
    report
        .results
        .iter()
        .map(|r| {
            let r = &r.result;
            (r.id.clone(), (r.outcome, r.skip_reason, r.skip_detail.clone().unwrap_or_default()))
        })
        .collect()
}

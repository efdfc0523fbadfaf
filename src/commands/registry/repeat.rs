//! `--repeat N`: the same agent checked N times in a row. A check whose outcome changed between
//! identical runs is a finding of its own (KIT-REPEAT-001): no one of those runs' verdicts on it
//! can be trusted, which is common for agents backed by a language model.

use crate::report::index::FlakyCheck;
use crate::report::{CheckMeta, CheckResult, Failure, Level, Outcome, Quote, SpecRef};

pub const REPEAT_CHECK: &str = "KIT-REPEAT-001";

/// The sentence the finding stands beside. It binds an agent's bindings to one another, not one
/// binding to itself, so the finding is reported, never scored.
pub const QUOTE: &str = "Consistent Behavior: Return semantically equivalent results for the same requests";

fn meta() -> CheckMeta {
    CheckMeta {
        id: REPEAT_CHECK.into(),
        title: "The same checks give the same outcomes in identical runs".into(),
        suite: "registry".into(),
        profile: "core".into(),
        level: Level::Info,
        spec: SpecRef::quoted(
            "5.1",
            vec![Quote { text: QUOTE.into(), source: "a2a-spec".into(), section: "5.1".into() }],
            Some(
                "The kit ran every check of this agent several times (`--repeat`) against the same agent and compares \
                 the outcomes. No sentence requires one binding to answer alike twice (§5.1 asks it of an agent's \
                 bindings among themselves), so this is reported, not scored; but a check whose outcome changed \
                 cannot be graded from any one of those runs."
                    .into(),
            ),
        ),
        scored: false,
    }
}

/// KIT-REPEAT-001's result over `runs` identical runs with these flaky checks.
pub fn result(runs: u32, flaky: &[FlakyCheck]) -> CheckResult {
    let meta = meta();
    if flaky.is_empty() {
        return CheckResult {
            measurement: Some(format!("every check ended the same way in all {runs} runs")),
            ..CheckResult::new(&meta, Outcome::Pass)
        };
    }
    let shown: Vec<String> = flaky
        .iter()
        .map(|f| {
            let counts: Vec<String> = f.outcomes.iter().map(|(o, n)| format!("{o} {n}")).collect();
            format!("{} ({})", f.id, counts.join(", "))
        })
        .collect();
    CheckResult {
        failure: Some(Failure {
            message: format!(
                "{} check(s) changed outcome between {runs} identical runs against the same agent: {}",
                flaky.len(),
                shown.join("; ")
            ),
            expected: Some(format!("each check's outcome the same in all {runs} runs")),
            actual: Some(shown.join("; ")),
            ..Failure::default()
        }),
        ..CheckResult::new(&meta, Outcome::Info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Source;

    #[test]
    fn the_quote_is_the_specs_own_sentence() {
        assert!(!Source::Spec.text().find(QUOTE).is_empty(), "{QUOTE:?} is not verbatim in the specification");
    }

    #[test]
    fn flaky_checks_are_named_with_their_counts_and_none_is_a_pass() {
        assert_eq!(result(3, &[]).outcome, Outcome::Pass);
        let flaky =
            [FlakyCheck { id: "CORE-SEND-001".into(), outcomes: [("pass".into(), 2), ("fail".into(), 1)].into() }];
        let r = result(3, &flaky);
        assert_eq!(r.outcome, Outcome::Info);
        let m = r.failure.unwrap().message;
        assert!(m.contains("CORE-SEND-001 (fail 1, pass 2)") && m.contains("3 identical runs"), "{m}");
    }
}

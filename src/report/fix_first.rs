//! "Fix first": what to act on, before any finding's detail. The root causes at MUST and SHOULD
//! level in the order the report carries them (MUST before SHOULD, then the cause that decides the
//! most checks), each with its headline (which says how many checks it decides) and the one
//! sentence of the spec whose keyword decides it. Every rendering puts the list at its top; none orders or counts
//! the causes itself.

use super::causes::Cause;
use super::json::Report;
use super::model::{Level, Quote};
pub use super::quotes::deciding;

/// Causes listed before the rest is left to the findings below.
pub const MAX: usize = 10;

/// One cause to fix.
pub struct Item<'a> {
    pub cause: &'a Cause,
    /// The sentence of the root check that carries the cause's keyword, when the report has it.
    pub sentence: Option<Quote>,
}

/// The causes to fix, at most [`MAX`], and how many more there are.
pub fn of(report: &Report) -> (Vec<Item<'_>>, usize) {
    let all: Vec<&Cause> = report.causes.iter().filter(|c| matches!(c.level, Level::Must | Level::Should)).collect();
    let more = all.len().saturating_sub(MAX);
    let items = all
        .into_iter()
        .take(MAX)
        .map(|cause| Item {
            cause,
            sentence: report.result(&cause.root).and_then(|r| deciding(&r.result.spec, cause.level)),
        })
        .collect();
    (items, more)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::SpecRef;

    fn q(text: &str) -> Quote {
        Quote { text: text.into(), source: "a2a-spec".into(), section: "3.1".into() }
    }

    #[test]
    fn the_sentence_is_the_one_with_the_level_keyword() {
        let spec = SpecRef {
            quotes: vec![q("The proto is authoritative."), q("Agents MUST reply."), q("Agents SHOULD log.")],
            ..SpecRef::default()
        };
        assert_eq!(deciding(&spec, Level::Must).unwrap().text, "Agents MUST reply.");
        assert_eq!(deciding(&spec, Level::Should).unwrap().text, "Agents SHOULD log.");
        // No sentence with the keyword: the first one stands.
        assert_eq!(deciding(&spec, Level::May).unwrap().text, "The proto is authoritative.");
        // A word that only holds the keyword is not it.
        let must = SpecRef { quotes: vec![q("MUSTARD is REQUIREDISH."), q("It is REQUIRED.")], ..SpecRef::default() };
        assert_eq!(deciding(&must, Level::Must).unwrap().text, "It is REQUIRED.");
        assert!(deciding(&SpecRef::default(), Level::Must).is_none());
    }
}

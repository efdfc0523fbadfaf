//! The spec's words behind a finding, as the text renderings (terminal, JUnit, SARIF, Markdown) show
//! them: each quote in quotation marks with its place, then the kit's reading under its own label and
//! never in quotation marks, so that what the spec says cannot be mistaken for how the kit reads it.
//! The HTML page marks the same two things up instead (`<blockquote>`, a labelled reading).

use super::model::{Level, Quote, SpecRef};

/// The label of the kit's reading wherever it is shown as text.
pub const READING: &str = "kit's reading";

/// `“words”`: the quote alone, in quotation marks.
pub fn marked(q: &Quote) -> String {
    format!("“{}”", q.text)
}

/// `— A2A 1.0 §3.3.2`: where the quote stands, as it follows the quote.
pub fn attribution(q: &Quote) -> String {
    format!("— {}", q.place())
}

/// `“words” — A2A 1.0 §3.3.2`.
pub fn quoted(q: &Quote) -> String {
    format!("{} {}", marked(q), attribution(q))
}

/// `kit's reading: words`.
pub fn reading(interpretation: &str) -> String {
    format!("{READING}: {interpretation}")
}

/// One line per quote (also for a report older than quotes: its one-line requirement), then the
/// reading, if any.
pub fn lines(spec: &SpecRef) -> Vec<String> {
    let mut lines: Vec<String> = spec.shown_quotes().iter().map(quoted).collect();
    lines.extend(spec.interpretation.as_deref().map(reading));
    lines
}

/// The first quote whose keyword is `level`'s (MUST, REQUIRED, SHALL; SHOULD, RECOMMENDED; MAY,
/// OPTIONAL), else the first quote: the sentence a check's level stands on.
pub fn deciding(spec: &SpecRef, level: Level) -> Option<Quote> {
    let words = keywords(level);
    let quotes = spec.shown_quotes();
    let keyed =
        quotes.iter().position(|q| q.text.split(|c: char| !c.is_ascii_alphabetic()).any(|w| words.contains(&w)));
    keyed.or(if quotes.is_empty() { None } else { Some(0) }).map(|i| quotes[i].clone())
}

/// The RFC 2119 keywords of `level`.
pub fn keywords(level: Level) -> &'static [&'static str] {
    match level {
        Level::Must => &["MUST", "REQUIRED", "SHALL"],
        Level::Should => &["SHOULD", "RECOMMENDED"],
        Level::May => &["MAY", "OPTIONAL"],
        Level::Info => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quote(text: &str, source: &str, section: &str) -> Quote {
        Quote { text: text.into(), source: source.into(), section: section.into() }
    }

    #[test]
    fn quotes_come_first_then_the_reading() {
        let spec = SpecRef::quoted(
            "3.1.1",
            vec![
                quote("Agents MUST do it.", "a2a-spec", "3.1.1"),
                quote("The Server MUST reply", "jsonrpc-2.0", "4.1"),
            ],
            Some("the kit reads it so".into()),
        );
        assert_eq!(
            lines(&spec),
            [
                "“Agents MUST do it.” — A2A 1.0 §3.1.1",
                "“The Server MUST reply” — JSON-RPC 2.0 §4.1",
                "kit's reading: the kit reads it so"
            ]
        );
    }

    #[test]
    fn an_older_report_shows_its_requirement_as_the_quote() {
        let spec =
            SpecRef { section: "3.1.4".into(), requirement: "GetTask MUST return it.".into(), ..SpecRef::default() };
        assert_eq!(lines(&spec), ["“GetTask MUST return it.” — A2A 1.0 §3.1.4"]);
        assert!(lines(&SpecRef::default()).is_empty());
    }
}

//! The texts a quote may come from, and the RFC 2119 keywords a sentence of them carries.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// One of the texts a quote may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub enum Source {
    /// `specification.md` of A2A 1.0.
    #[default]
    #[serde(rename = "a2a-spec")]
    Spec,
    /// `a2a.proto` of A2A 1.0: field annotations and comments.
    #[serde(rename = "a2a-proto")]
    Proto,
    /// The JSON-RPC 2.0 specification.
    #[serde(rename = "jsonrpc-2.0")]
    JsonRpc,
}

impl Source {
    pub const ALL: [Source; 3] = [Source::Spec, Source::Proto, Source::JsonRpc];

    pub fn as_str(self) -> &'static str {
        match self {
            Source::Spec => "a2a-spec",
            Source::Proto => "a2a-proto",
            Source::JsonRpc => "jsonrpc-2.0",
        }
    }

    /// The source a quote names: its serde name, or `jsonrpc` for JSON-RPC 2.0.
    pub fn named(name: &str) -> Option<Source> {
        match name {
            "jsonrpc" => Some(Source::JsonRpc),
            _ => Source::ALL.into_iter().find(|s| s.as_str() == name),
        }
    }

    /// How a person names it in a finding.
    pub fn title(self) -> &'static str {
        match self {
            Source::Spec => "A2A 1.0",
            Source::Proto => "A2A 1.0 a2a.proto",
            Source::JsonRpc => "JSON-RPC 2.0",
        }
    }

    const PROTO: &'static str = include_str!("../../fixtures/spec/a2a.proto");

    /// The text as a reader of the published document sees it: the specification with the
    /// sentences its macros render (see `rendered`), the proto and JSON-RPC 2.0 as they are.
    pub(super) fn raw(self) -> &'static str {
        match self {
            Source::Spec => {
                let spec = include_str!("../../fixtures/spec/specification.md");
                // Parsed once per process (`Source::text`), so the one allocation lives as long as it.
                Box::leak(super::rendered::with_oneof_notes(spec, Source::PROTO).into_boxed_str())
            }
            Source::Proto => Source::PROTO,
            Source::JsonRpc => include_str!("../../fixtures/spec/jsonrpc-2.0.md"),
        }
    }
}

/// RFC 2119 strength of a keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strength {
    /// MUST, MUST NOT, REQUIRED, SHALL, SHALL NOT.
    Must,
    /// SHOULD, SHOULD NOT, RECOMMENDED (NOT RECOMMENDED).
    Should,
    /// MAY, OPTIONAL.
    May,
}

impl Strength {
    pub fn as_str(self) -> &'static str {
        match self {
            Strength::Must => "must",
            Strength::Should => "should",
            Strength::May => "may",
        }
    }
}

/// The RFC 2119 keywords a piece of text carries, strongest first. Only the capitalised forms
/// count (RFC 8174): "must" in lower case is ordinary English.
pub fn keywords(text: &str) -> Vec<Strength> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\b(MUST|REQUIRED|SHALL|SHOULD|RECOMMENDED|MAY|OPTIONAL)\b").expect("keyword regex")
    });
    let mut out: Vec<Strength> = re
        .find_iter(text)
        .map(|m| match m.as_str() {
            "MUST" | "REQUIRED" | "SHALL" => Strength::Must,
            "SHOULD" | "RECOMMENDED" => Strength::Should,
            _ => Strength::May,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_capitalised_words() {
        assert_eq!(keywords("Agents MUST NOT do it and SHOULD log"), vec![Strength::Must, Strength::Should]);
        assert_eq!(keywords("the server must reply"), vec![]);
        assert_eq!(keywords("This is NOT RECOMMENDED."), vec![Strength::Should]);
        assert_eq!(keywords("[(google.api.field_behavior) = REQUIRED]"), vec![Strength::Must]);
        assert_eq!(keywords("MUSTARD MAYBE"), vec![]);
    }
}

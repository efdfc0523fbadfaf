//! The normative texts every check quotes: the A2A 1.0 specification (prose), its proto (the data
//! model, §1.4) and JSON-RPC 2.0 (the envelope, §9.3), compiled in from `fixtures/spec/`. It finds a
//! quote in its text after the normalisation the kit allows (whitespace, markdown emphasis and
//! links, comment markers), names the section a quote stands in, reads the RFC 2119 keyword of a
//! sentence, splits a text into its normative sentences, and says which of them a quote stands on
//! (for `coverage`).
//!
//! No other layer is imported: the checker and the tests both read the spec through here.

mod normalize;
mod quoting;
mod sections;
mod sentences;

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

pub use normalize::normalize;
pub use sentences::Sentence;

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

    /// How a person names it in a finding.
    pub fn title(self) -> &'static str {
        match self {
            Source::Spec => "A2A 1.0",
            Source::Proto => "A2A 1.0 a2a.proto",
            Source::JsonRpc => "JSON-RPC 2.0",
        }
    }

    fn raw(self) -> &'static str {
        match self {
            Source::Spec => include_str!("../../fixtures/spec/specification.md"),
            Source::Proto => include_str!("../../fixtures/spec/a2a.proto"),
            Source::JsonRpc => include_str!("../../fixtures/spec/jsonrpc-2.0.md"),
        }
    }

    /// The text, parsed once.
    pub fn text(self) -> &'static Text {
        static TEXTS: [OnceLock<Text>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let i = self as usize;
        TEXTS[i].get_or_init(|| Text::parse(self, self.raw()))
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

/// Where a quote stands in its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Byte offset in the raw text where the quote begins.
    pub offset: usize,
    /// The numbered section (`3.1.4`, `A.2.1`, JSON-RPC `5.1`), if any heading precedes it.
    pub section: Option<String>,
    /// Proto only: the top-level definition (message, enum or service) whose text holds it,
    /// counting the comment block just above the definition as its own.
    pub definition: Option<String>,
}

/// One normative text, normalised once so that quotes are found in it quickly.
pub struct Text {
    pub source: Source,
    pub raw: &'static str,
    /// The normalised text.
    norm: String,
    /// For each byte of `norm`, the byte offset in `raw` it came from.
    origin: Vec<usize>,
    /// Numbered headings: (raw offset, section number), in order.
    sections: Vec<(usize, String)>,
    /// Proto definitions: (raw start, raw end, name), in order.
    definitions: Vec<(usize, usize, String)>,
}

impl Text {
    fn parse(source: Source, raw: &'static str) -> Text {
        let (norm, origin) = normalize::normalize_mapped(raw, source);
        let sections = sections::headings(raw);
        let definitions = if source == Source::Proto { sections::proto_definitions(raw) } else { Vec::new() };
        Text { source, raw, norm, origin, sections, definitions }
    }

    /// Every place the quote stands, after normalising both sides. Empty when it is not there.
    pub fn find(&self, quote: &str) -> Vec<Location> {
        let q = normalize(quote, self.source);
        if q.is_empty() {
            return Vec::new();
        }
        self.norm.match_indices(q.as_str()).map(|(i, _)| self.locate(self.origin[i])).collect()
    }

    fn locate(&self, offset: usize) -> Location {
        let section = self.sections.iter().take_while(|(at, _)| *at <= offset).last().map(|(_, s)| s.clone());
        let definition = self
            .definitions
            .iter()
            .find(|(start, end, _)| *start <= offset && offset < *end)
            .map(|(_, _, n)| n.clone());
        Location { offset, section, definition }
    }

    /// The section a raw offset falls in.
    pub fn section_at(&self, offset: usize) -> Option<String> {
        self.locate(offset).section
    }

    /// The normative sentences of the text: every sentence with an RFC 2119 keyword, and in the
    /// proto every field annotated REQUIRED.
    pub fn sentences(&self) -> &[Sentence] {
        static ALL: [OnceLock<Vec<Sentence>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        ALL[self.source as usize].get_or_init(|| sentences::normative(self.all_sentences()))
    }

    /// Every sentence of the text (normative or not), for pointing at the nearest one.
    pub fn all_sentences(&self) -> &[Sentence] {
        static ALL: [OnceLock<Vec<Sentence>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        ALL[self.source as usize].get_or_init(|| sentences::split_all(self))
    }
}

/// The spec section that renders a proto definition (`{{ proto_to_table("Task") }}` stands in
/// §4.1.1), for naming the section of a proto quote the way a reader of the spec finds it.
pub fn section_of_definition(name: &str) -> Option<String> {
    let spec = Source::Spec.text();
    for pattern in [format!("proto_to_table(\"{name}\")"), format!("proto_enum_to_table(\"{name}\")")] {
        if let Some(at) = spec.raw.find(&pattern) {
            return spec.section_at(at);
        }
    }
    None
}

/// Whether a quote from `source` stands in `section`. For the proto, `section` is either the name
/// of the definition that holds the quote (`Task`) or the spec section that renders it (`4.1.1`).
pub fn stands_in(loc: &Location, source: Source, section: &str) -> bool {
    match source {
        Source::Proto => loc
            .definition
            .as_deref()
            .is_some_and(|d| d == section || section_of_definition(d).as_deref() == Some(section)),
        _ => loc.section.as_deref() == Some(section),
    }
}

/// The sentence of `source` most like `quote`: the most shared words, rare words counting more
/// (a shared "TaskNotCancelableError" says more than a shared "task"), to say what a wrong quote
/// should have been.
pub fn nearest(quote: &str, source: Source) -> Option<Sentence> {
    use std::collections::{BTreeMap, BTreeSet};
    let words = |s: &str| -> BTreeSet<String> {
        s.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2).map(str::to_lowercase).collect()
    };
    type Index = (Vec<BTreeSet<String>>, BTreeMap<String, usize>);
    static INDEX: [OnceLock<Index>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let all = source.text().all_sentences();
    let (bags, df) = INDEX[source as usize].get_or_init(|| {
        let bags: Vec<BTreeSet<String>> = all.iter().map(|s| words(&s.text)).collect();
        let mut df: BTreeMap<String, usize> = BTreeMap::new();
        for w in bags.iter().flatten() {
            *df.entry(w.clone()).or_default() += 1;
        }
        (bags, df)
    });
    let weight = |w: &str| (all.len() as f64 / (1 + df.get(w).copied().unwrap_or(0)) as f64).ln().max(0.1);
    let q = words(quote);
    if q.is_empty() {
        return None;
    }
    let score = |bag: &BTreeSet<String>| {
        let shared: f64 = q.intersection(bag).map(|w| weight(w)).sum();
        let union: f64 = q.union(bag).map(|w| weight(w)).sum();
        shared / union.max(f64::MIN_POSITIVE)
    };
    let best = bags.iter().enumerate().max_by(|(_, a), (_, b)| score(a).total_cmp(&score(b)))?.0;
    all.get(best).cloned()
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

    #[test]
    fn finds_a_spec_sentence_across_lines_and_emphasis() {
        let spec = Source::Spec.text();
        let at = spec.find("Servers MUST validate all input parameters before processing");
        assert!(!at.is_empty());
        assert!(at.iter().any(|l| l.section.as_deref() == Some("3.3.2")), "{at:?}");
        assert!(spec.find("Servers MUST validate every input parameter").is_empty());
    }

    #[test]
    fn proto_quotes_know_their_definition_and_section() {
        let proto = Source::Proto.text();
        let at = proto.find("string id = 1 [(google.api.field_behavior) = REQUIRED];");
        assert!(at.iter().any(|l| l.definition.as_deref() == Some("Task")), "{at:?}");
        let loc = at.iter().find(|l| l.definition.as_deref() == Some("Task")).unwrap();
        assert!(stands_in(loc, Source::Proto, "Task"));
        assert!(stands_in(loc, Source::Proto, "4.1.1"));
        assert!(!stands_in(loc, Source::Proto, "4.1.2"));
        // A comment spread over several `//` lines reads as one sentence.
        let c = "The server MUST NOT return more messages than the provided value, but MAY apply a lower limit.";
        assert!(proto.find(c).iter().any(|l| l.definition.as_deref() == Some("SendMessageConfiguration")));
    }

    #[test]
    fn jsonrpc_sections_are_numbered() {
        let rpc = Source::JsonRpc.text();
        let at =
            rpc.find("The Server MUST NOT reply to a Notification, including those that are within a batch request.");
        assert_eq!(at.len(), 1);
        assert_eq!(at[0].section.as_deref(), Some("4.1"));
    }

    #[test]
    fn nearest_points_at_the_real_sentence() {
        let s = nearest("Servers MUST validate every input parameter before processing", Source::Spec).unwrap();
        assert!(s.text.contains("Servers MUST validate all input parameters"), "{}", s.text);
    }
}

//! One normative text parsed: normalised once, with its numbered sections and (for the proto) its
//! top-level definitions, so that a quote is found in it and placed.

use std::sync::OnceLock;

use super::normalize::normalize;
use super::source::Source;

impl Source {
    /// The text, parsed once.
    pub fn text(self) -> &'static Text {
        static TEXTS: [OnceLock<Text>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let i = self as usize;
        TEXTS[i].get_or_init(|| Text::parse(self, self.raw()))
    }
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
    pub(super) norm: String,
    /// For each byte of `norm`, the byte offset in `raw` it came from.
    pub(super) origin: Vec<usize>,
    /// Numbered headings: (raw offset, section number), in order.
    sections: Vec<(usize, String)>,
    /// Proto definitions: (raw start, raw end, name), in order.
    definitions: Vec<(usize, usize, String)>,
}

impl Text {
    fn parse(source: Source, raw: &'static str) -> Text {
        let (norm, origin) = super::normalize::normalize_mapped(raw, source);
        let sections = super::sections::headings(raw);
        let definitions = if source == Source::Proto { super::sections::proto_definitions(raw) } else { Vec::new() };
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

    pub(super) fn locate(&self, offset: usize) -> Location {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_rendered_oneof_notes_can_be_quoted() {
        let at = Source::Spec.text().find("A Part MUST contain exactly one of the following: text, raw, url, data");
        assert_eq!(at.len(), 1);
        assert_eq!(at[0].section.as_deref(), Some("4.1.6"));
    }

    #[test]
    fn jsonrpc_sections_are_numbered() {
        let rpc = Source::JsonRpc.text();
        let at =
            rpc.find("The Server MUST NOT reply to a Notification, including those that are within a batch request.");
        assert_eq!(at.len(), 1);
        assert_eq!(at[0].section.as_deref(), Some("4.1"));
    }
}

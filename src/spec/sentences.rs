//! A text cut into sentences: markdown paragraphs, list items and table rows (code blocks and
//! headings left out), proto comment blocks, and proto field lines. A normative sentence carries an
//! RFC 2119 keyword, or is a proto field annotated REQUIRED.

use std::sync::OnceLock;

use regex::Regex;

use super::normalize::normalize;
use super::source::{Source, Strength, keywords};
use super::text::{Text, section_of_definition};

/// One sentence of a normative text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub source: Source,
    /// Numbered section it stands in (for the proto: the spec section that renders its
    /// definition, when there is one).
    pub section: Option<String>,
    /// Proto only: the definition that holds it (`Task`).
    pub definition: Option<String>,
    /// Proto REQUIRED fields: `Task.id`.
    pub field: Option<String>,
    /// Normalised text.
    pub text: String,
    /// Byte offset in the raw text.
    pub offset: usize,
    /// Its keywords, strongest first (a REQUIRED field: `must`).
    pub keywords: Vec<Strength>,
}

impl Sentence {
    /// The strongest keyword, which is the level a check quoting only this sentence has.
    pub fn strength(&self) -> Option<Strength> {
        self.keywords.first().copied()
    }

    /// Where a person finds it: `§3.1.4`, `a2a.proto Task.id`, `JSON-RPC 2.0 §4.1`.
    pub fn place(&self) -> String {
        match self.source {
            Source::Spec => format!("§{}", self.section.as_deref().unwrap_or("?")),
            Source::Proto => {
                let what = self.field.as_deref().or(self.definition.as_deref()).unwrap_or("?");
                match &self.section {
                    Some(s) => format!("a2a.proto {what} (§{s})"),
                    None => format!("a2a.proto {what}"),
                }
            }
            Source::JsonRpc => format!("JSON-RPC 2.0 §{}", self.section.as_deref().unwrap_or("?")),
        }
    }
}

impl Text {
    /// The normative sentences of the text: every sentence with an RFC 2119 keyword, and in the
    /// proto every field annotated REQUIRED.
    pub fn sentences(&self) -> &[Sentence] {
        static ALL: [OnceLock<Vec<Sentence>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        ALL[self.source as usize].get_or_init(|| normative(self.all_sentences()))
    }

    /// Every sentence of the text (normative or not), for pointing at the nearest one.
    pub fn all_sentences(&self) -> &[Sentence] {
        static ALL: [OnceLock<Vec<Sentence>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        ALL[self.source as usize].get_or_init(|| split_all(self))
    }
}

/// The normative ones of a text's sentences.
pub(super) fn normative(all: &[Sentence]) -> Vec<Sentence> {
    all.iter()
        .filter(|s| !s.keywords.is_empty())
        // §2.1 lists the keywords themselves; it binds nobody.
        .filter(|s| !(s.source == Source::Spec && s.section.as_deref() == Some("2.1")))
        .filter(|s| !(s.source == Source::JsonRpc && s.section.as_deref() == Some("2")))
        .cloned()
        .collect()
}

/// Every sentence, normative or not.
pub(super) fn split_all(text: &Text) -> Vec<Sentence> {
    let mut out = Vec::new();
    for (offset, block) in blocks(text) {
        let (norm, origin) = super::normalize::normalize_mapped(block, text.source);
        // A list item's marker is not part of its sentence.
        let skip = list_marker_len(&norm);
        for (from, to) in sentence_spans(&norm[skip..]) {
            let (from, to) = (from + skip, to + skip);
            let s = norm[from..to].trim();
            if s.is_empty() {
                continue;
            }
            let at = offset + origin[from];
            let loc = text.locate(at);
            let section = match text.source {
                Source::Proto => loc.definition.as_deref().and_then(section_of_definition),
                _ => loc.section.clone(),
            };
            out.push(Sentence {
                source: text.source,
                section,
                definition: loc.definition.clone(),
                field: None,
                text: s.to_owned(),
                offset: at,
                keywords: keywords(s),
            });
        }
    }
    if text.source == Source::Proto {
        out.extend(required_fields(text));
    }
    out.sort_by_key(|s| s.offset);
    out
}

/// Proto fields annotated `[(google.api.field_behavior) = REQUIRED]`, one sentence each.
fn required_fields(text: &Text) -> Vec<Sentence> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"(\w+)\s*=\s*\d+\s*\[[^\]]*REQUIRED").expect("field regex"));
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.raw.split_inclusive('\n') {
        let code = line.split("//").next().unwrap_or("");
        if let Some(c) = re.captures(code) {
            let at = offset + line.len() - line.trim_start().len();
            let loc = text.locate(at);
            let field = loc.definition.as_deref().map(|d| format!("{d}.{}", &c[1]));
            out.push(Sentence {
                source: Source::Proto,
                section: loc.definition.as_deref().and_then(section_of_definition),
                definition: loc.definition,
                field,
                text: normalize(line, Source::Proto),
                offset: at,
                keywords: vec![Strength::Must],
            });
        }
        offset += line.len();
    }
    out
}

/// The prose blocks of a text with their byte offsets: paragraphs, list items, table rows; in the
/// proto, runs of comment lines.
fn blocks(text: &Text) -> Vec<(usize, &'static str)> {
    static ITEM: OnceLock<Regex> = OnceLock::new();
    let item = ITEM.get_or_init(|| Regex::new(r"^[ \t]*([-*+]|\d+\.)[ \t]+").expect("list item regex"));
    let raw = text.raw;
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut fenced = false;
    let mut offset = 0;
    let close = |start: &mut Option<usize>, end: usize, out: &mut Vec<(usize, &'static str)>| {
        if let Some(s) = start.take()
            && s < end
        {
            out.push((s, &raw[s..end]));
        }
    };
    for line in raw.split_inclusive('\n') {
        let t = line.trim();
        let here = offset;
        offset += line.len();
        if text.source == Source::Proto {
            if t.starts_with("//") {
                start.get_or_insert(here);
            } else {
                close(&mut start, here, &mut out);
            }
            continue;
        }
        if t.starts_with("```") {
            close(&mut start, here, &mut out);
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if t.is_empty() || t.starts_with('#') || t.starts_with("{{") || t.starts_with("<a id") || t.starts_with("|") {
            close(&mut start, here, &mut out);
            if t.starts_with('|') && !t.trim_matches(|c| c == '|' || c == '-' || c == ':' || c == ' ').is_empty() {
                out.push((here, line));
            }
            continue;
        }
        if item.is_match(line) {
            close(&mut start, here, &mut out);
        }
        start.get_or_insert(here);
    }
    close(&mut start, raw.len(), &mut out);
    out
}

/// Sentence boundaries in normalised text: after `.`, `!` or `?` and a space, before a capital
/// letter, a digit or an opening quote or bracket ("e.g. the" does not end a sentence).
fn sentence_spans(norm: &str) -> Vec<(usize, usize)> {
    let bytes = norm.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    let mut i = 0;
    while i + 2 < bytes.len() {
        if matches!(bytes[i], b'.' | b'!' | b'?')
            && bytes[i + 1] == b' '
            && (bytes[i + 2].is_ascii_uppercase() || bytes[i + 2].is_ascii_digit() || b"\"([".contains(&bytes[i + 2]))
            && !ends_with_abbreviation(&norm[from..=i])
        {
            out.push((from, i + 1));
            from = i + 2;
        }
        i += 1;
    }
    if from < norm.len() {
        out.push((from, norm.len()));
    }
    out
}

fn list_marker_len(norm: &str) -> usize {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"^([-+]|\d+\.) ").expect("marker regex"));
    re.find(norm).map_or(0, |m| m.end())
}

fn ends_with_abbreviation(s: &str) -> bool {
    ["e.g.", "i.e.", "etc.", "vs.", "cf."].iter().any(|a| s.ends_with(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_split_at_sentence_ends_only() {
        let n = "Agents MUST do it, e.g. Now. Then SHOULD log. X";
        let parts: Vec<&str> = sentence_spans(n).into_iter().map(|(a, b)| &n[a..b]).collect();
        assert_eq!(parts, ["Agents MUST do it, e.g. Now.", "Then SHOULD log.", "X"]);
    }

    #[test]
    fn the_spec_has_normative_sentences_in_every_source() {
        let spec = Source::Spec.text().sentences();
        assert!(spec.len() > 200, "{}", spec.len());
        assert!(spec.iter().any(|s| s.text.starts_with("Servers MUST validate all input parameters")));
        assert!(spec.iter().all(|s| s.section.is_some()));
        let proto = Source::Proto.text().sentences();
        let id = proto.iter().find(|s| s.field.as_deref() == Some("Task.id")).expect("Task.id is REQUIRED");
        assert_eq!(id.section.as_deref(), Some("4.1.1"));
        assert_eq!(id.place(), "a2a.proto Task.id (§4.1.1)");
        let rpc = Source::JsonRpc.text().sentences();
        assert!(rpc.iter().any(|s| s.text
            == "The Server MUST NOT reply to a Notification, including those that are within a batch request."));
    }
}

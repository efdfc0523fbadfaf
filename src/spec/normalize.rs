//! What may differ between a quote and the text it quotes: whitespace (line breaks, indentation),
//! markdown emphasis and code marks (`*`, `` ` ``), a link's target (its words stay), HTML anchors
//! and inline tags, backslash escapes, blockquote markers, and in the proto the `//` that starts
//! each comment line. Words and punctuation are never changed.

use std::sync::OnceLock;

use regex::Regex;

use super::source::Source;

/// The normalised form of a piece of text from (or quoting) `source`.
pub fn normalize(text: &str, source: Source) -> String {
    normalize_mapped(text, source).0
}

/// The normalised text and, for each of its bytes, the byte offset in `raw` it came from.
pub(super) fn normalize_mapped(raw: &str, source: Source) -> (String, Vec<usize>) {
    let keep = keep_mask(raw, source);
    let mut out = String::with_capacity(raw.len());
    let mut origin = Vec::with_capacity(raw.len());
    let mut pending_space: Option<usize> = None;
    for (i, c) in raw.char_indices() {
        if !keep[i] {
            continue;
        }
        if c.is_whitespace() {
            if !out.is_empty() && pending_space.is_none() {
                pending_space = Some(i);
            }
            continue;
        }
        if let Some(at) = pending_space.take() {
            out.push(' ');
            origin.push(at);
        }
        let start = out.len();
        out.push(c);
        origin.extend(std::iter::repeat_n(i, out.len() - start));
    }
    (out, origin)
}

/// Which bytes of `raw` survive: false for markup the kit lets a quote leave out.
fn keep_mask(raw: &str, source: Source) -> Vec<bool> {
    static LINK: OnceLock<Regex> = OnceLock::new();
    static TAG: OnceLock<Regex> = OnceLock::new();
    static LINE_MARK: OnceLock<Regex> = OnceLock::new();
    static COMMENT_MARK: OnceLock<Regex> = OnceLock::new();
    let link = LINK.get_or_init(|| Regex::new(r"\[([^\]\n]*)\]\([^)\s]*\)").expect("link regex"));
    let tag = TAG.get_or_init(|| {
        Regex::new(r"</?(a|span|div|br|sup|sub|em|strong|code|b|i|p)(\s[^<>]*)?/?>").expect("tag regex")
    });
    let line_mark = LINE_MARK.get_or_init(|| Regex::new(r"(?m)^[ \t]*(>[ \t]?)+").expect("blockquote regex"));
    let comment_mark = COMMENT_MARK.get_or_init(|| Regex::new(r"(?m)^[ \t]*//").expect("comment regex"));

    let mut keep = vec![true; raw.len()];
    let mut drop = |from: usize, to: usize| keep[from..to].iter_mut().for_each(|k| *k = false);
    for m in link.captures_iter(raw) {
        let whole = m.get(0).expect("match");
        let words = m.get(1).expect("link text");
        drop(whole.start(), words.start());
        drop(words.end(), whole.end());
    }
    for m in tag.find_iter(raw) {
        drop(m.start(), m.end());
    }
    match source {
        Source::Proto => comment_mark.find_iter(raw).for_each(|m| drop(m.start(), m.end())),
        Source::Spec | Source::JsonRpc => line_mark.find_iter(raw).for_each(|m| drop(m.start(), m.end())),
    }
    let bytes = raw.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'*' | b'`' => keep[i] = false,
            b'\\' if bytes.get(i + 1).is_some_and(|n| n.is_ascii_punctuation()) => keep[i] = false,
            _ => {}
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_whitespace_go_words_stay() {
        let raw = "Servers **MUST**\n   validate `all` [input](#params) parameters\\!";
        assert_eq!(normalize(raw, Source::Spec), "Servers MUST validate all input parameters!");
    }

    #[test]
    fn proto_comment_markers_join_lines() {
        let raw = "  // The server MUST NOT\n  // return more.\n  int32 x = 1;";
        assert_eq!(normalize(raw, Source::Proto), "The server MUST NOT return more. int32 x = 1;");
    }

    #[test]
    fn offsets_point_into_the_raw_text() {
        let raw = "a  **b**";
        let (norm, origin) = normalize_mapped(raw, Source::Spec);
        assert_eq!(norm, "a b");
        assert_eq!(&raw[origin[2]..origin[2] + 1], "b");
    }
}

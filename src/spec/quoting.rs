//! Which normative sentences a quote stands on. A quote overlaps a sentence when, normalised, the
//! quote lies within the sentence or the sentence within the quote: a quote may be part of one
//! sentence or span several. Where the quote stands verbatim in the text, that is decided at the
//! places it stands, so that a quote of one of several identical sentences (the proto's
//! `string id = 2 [(google.api.field_behavior) = REQUIRED];` closes many requests) is not taken
//! for a quote of all of them; the section the quote names then picks among its places. A quote
//! that is not verbatim (a paraphrase) can still contain whole sentences, and those count.

use super::normalize::normalize;
use super::sentences::Sentence;
use super::source::Source;
use super::text::Text;

impl Text {
    /// Indices into [`Text::sentences`] of the normative sentences `quote` overlaps. When some of
    /// them stand in `section` (a section number, or for the proto a definition name too), only
    /// those; an empty `section` names none.
    pub fn quoted(&self, quote: &str, section: &str) -> Vec<usize> {
        let q = normalize(quote, self.source);
        if q.is_empty() {
            return Vec::new();
        }
        let places: Vec<(usize, usize)> = self.norm.match_indices(q.as_str()).map(|(i, _)| (i, i + q.len())).collect();
        let hits: Vec<usize> = self
            .sentences()
            .iter()
            .enumerate()
            .filter(|(_, s)| match self.span(s) {
                Some((from, to)) if !places.is_empty() => {
                    places.iter().any(|&(i, j)| (from <= i && j <= to) || (i <= from && to <= j))
                }
                _ => s.text.contains(q.as_str()) || q.contains(s.text.as_str()),
            })
            .map(|(i, _)| i)
            .collect();
        let sentences = self.sentences();
        let placed: Vec<usize> =
            hits.iter().copied().filter(|&i| !section.is_empty() && sentences[i].stands_in(section)).collect();
        if placed.is_empty() { hits } else { placed }
    }

    /// Where a sentence stands in the normalised text: (start, end) byte offsets, or None where
    /// the sentence, normalised on its own, reads differently from the text around it.
    fn span(&self, s: &Sentence) -> Option<(usize, usize)> {
        let at = self.origin.partition_point(|&o| o < s.offset);
        self.norm.get(at..)?.starts_with(s.text.as_str()).then(|| (at, at + s.text.len()))
    }
}

impl Sentence {
    /// Whether it stands in `section`: its section number, or for the proto its definition too
    /// (`GetTaskRequest` as well as `3.1.3`), the way a check names where its quote stands.
    pub fn stands_in(&self, section: &str) -> bool {
        self.section.as_deref() == Some(section)
            || (self.source == Source::Proto && self.definition.as_deref() == Some(section))
    }

    /// Whether it stands in `section` or one of its subsections (`10` holds `10.2` and `10.6`).
    pub fn within(&self, section: &str) -> bool {
        self.stands_in(section)
            || self
                .section
                .as_deref()
                .is_some_and(|s| s.strip_prefix(section).is_some_and(|rest| rest.starts_with('.')))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: Source, found: &[usize]) -> Vec<String> {
        let all = source.text().sentences();
        found.iter().map(|&i| all[i].text.clone()).collect()
    }

    #[test]
    fn every_normative_sentence_has_its_place_in_the_text() {
        for source in Source::ALL {
            let text = source.text();
            for s in text.sentences() {
                assert!(text.span(s).is_some(), "{}: «{}»", s.place(), s.text);
            }
        }
    }

    #[test]
    fn part_of_a_sentence_and_a_span_of_two() {
        let spec = Source::Spec.text();
        let part = spec.quoted("Servers MUST validate all input parameters", "3.3.2");
        assert_eq!(texts(Source::Spec, &part), ["Servers MUST validate all input parameters before processing"]);
        let both = "The operation MUST permanently remove the specified push notification configuration. No further \
                    notifications will be sent to the configured webhook after deletion. This operation MUST be \
                    idempotent - multiple deletions of the same config have the same effect.";
        assert_eq!(spec.quoted(both, "3.1.10").len(), 2);
        // Half of the second sentence is neither within it nor holding it: only the first counts.
        let half = &both[..both.find(" - multiple").unwrap()];
        let first = spec.quoted(half, "3.1.10");
        assert_eq!(
            texts(Source::Spec, &first),
            ["The operation MUST permanently remove the specified push notification configuration."]
        );
    }

    #[test]
    fn a_section_picks_among_identical_sentences() {
        let proto = Source::Proto.text();
        let line = "string id = 2 [(google.api.field_behavior) = REQUIRED];";
        let all = proto.quoted(line, "");
        assert!(all.len() >= 3, "GetTaskRequest, CancelTaskRequest, SubscribeToTaskRequest: {all:?}");
        for section in ["3.1.3", "GetTaskRequest"] {
            let one = proto.quoted(line, section);
            assert_eq!(one.len(), 1, "{section}");
            assert_eq!(proto.sentences()[one[0]].field.as_deref(), Some("GetTaskRequest.id"));
        }
    }

    #[test]
    fn a_paraphrase_covers_only_the_sentences_it_contains() {
        let spec = Source::Spec.text();
        let p = spec
            .quoted("Servers MUST reject requests with invalid or missing authentication credentials, so say 401.", "");
        assert_eq!(
            texts(Source::Spec, &p),
            ["Servers MUST reject requests with invalid or missing authentication credentials"]
        );
        assert!(spec.quoted("Servers MUST validate every input parameter", "3.3.2").is_empty());
    }

    #[test]
    fn within_means_the_section_or_below() {
        let s = Source::Spec.text().sentences().iter().find(|s| s.section.as_deref() == Some("10.2")).unwrap();
        assert!(s.within("10") && s.within("10.2") && !s.within("1") && !s.within("10.2.1"));
    }
}

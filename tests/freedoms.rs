//! Every freedom of the catalogue (`mock-peer/freedoms/`) stands on the spec's own words: each
//! sentence its `allowed_by` quotes is found verbatim in the text it names (`fixtures/spec/`;
//! whitespace and markdown emphasis may differ, words may not), and a sentence of the
//! specification stands in the section the freedom names (or the one the quote names). A freedom whose sentence
//! is misquoted would let the mock show, and the selftest bless, a behaviour no sentence allows.

use a2a_conform::server::freedoms::{Allowed, FreedomCatalogue};
use a2a_conform::spec::{self, Source};

/// What is wrong with one quote of a freedom set in `section`.
fn problem(allowed: &Allowed, section: &str) -> Option<String> {
    let Some(source) = Source::named(allowed.source()) else {
        return Some(format!("unknown source {:?}", allowed.source()));
    };
    let found = source.text().find(allowed.text());
    if found.is_empty() {
        let hint = spec::nearest(allowed.text(), source)
            .map(|s| format!("\n      nearest sentence ({}): «{}»", s.place(), s.text))
            .unwrap_or_default();
        return Some(format!("quote not found in {}: «{}»{hint}", source.as_str(), allowed.text()));
    }
    // The proto's sentences belong to a message, not to a section of the specification.
    if source == Source::Spec && !found.iter().any(|l| spec::stands_in(l, source, section)) {
        let places: Vec<String> = found.iter().map(|l| format!("§{}", l.section.as_deref().unwrap_or("?"))).collect();
        return Some(format!("quote stands in {}, not in §{section}: «{}»", places.join(", "), allowed.text()));
    }
    None
}

#[test]
fn every_freedom_quotes_the_sentence_that_allows_it_verbatim() {
    let catalogue = FreedomCatalogue::builtin().expect("the built-in freedoms load");
    let mut problems = Vec::new();
    let mut quotes = 0;
    for f in catalogue.all() {
        for allowed in &f.allowed_by {
            quotes += 1;
            if let Some(p) = problem(allowed, allowed.section().unwrap_or(&f.section)) {
                problems.push(format!("{}: {p}", f.id));
            }
        }
    }
    assert!(catalogue.len() >= 30, "only {} freedoms", catalogue.len());
    assert!(quotes >= catalogue.len());
    assert!(problems.is_empty(), "{} problem(s):\n  {}", problems.len(), problems.join("\n  "));
}

/// The test can fail: a changed word, a wrong section and an unknown source are each caught.
#[test]
fn a_misquoted_freedom_is_caught() {
    let may = "Agent Card HTTP endpoints MAY include a `Last-Modified` response header";
    assert_eq!(problem(&Allowed::Spec(may.into()), "8.6.1"), None);
    let changed = may.replace("MAY", "SHOULD");
    assert!(problem(&Allowed::Spec(changed), "8.6.1").unwrap().starts_with("quote not found"));
    assert!(problem(&Allowed::Spec(may.into()), "3.1").unwrap().starts_with("quote stands in §8.6"));
    let elsewhere = Allowed::Quoted { quote: may.into(), source: "rfc9110".into(), section: None };
    assert!(problem(&elsewhere, "8.6.1").unwrap().starts_with("unknown source"));
}

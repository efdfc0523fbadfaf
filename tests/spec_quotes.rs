//! Every verdict stands on the spec's own words. For every built-in check (server, kit and client): each quote of its
//! `requirement` stands verbatim in the text it names (`fixtures/spec/`: the A2A 1.0 specification
//! and proto, JSON-RPC 2.0; whitespace and markdown emphasis may differ, words may not), in the
//! section it names, and the check's level is the keyword of what it quotes: a `must` check quotes a
//! MUST, MUST NOT, REQUIRED, SHALL or SHALL NOT (or a proto REQUIRED annotation), a `should` check a
//! SHOULD, SHOULD NOT or RECOMMENDED, a `may` check a MAY or OPTIONAL. A check with no such
//! sentence behind it is `info` and never scored. No allow-list: a failure names the check and the
//! nearest sentence of the spec, so that a wrong quote is mended in seconds.

use std::path::{Path, PathBuf};

use a2a_conform::report::Level;
use a2a_conform::spec::{self, Source, Strength};
use a2a_conform::suite::model::{Document, ResolvedQuote, Test};

const UNSCORED_PROFILES: &[&str] = &["caps", "resume"];

fn builtin_tests() -> Vec<(String, String, Test)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("suites");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("server"))
        .expect("suites/server")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files.push(root.join("kit.json"));
    let mut client: Vec<PathBuf> = std::fs::read_dir(root.join("client"))
        .expect("suites/client")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    client.sort();
    files.extend(client);
    let mut out = Vec::new();
    for p in files {
        let doc: Document = serde_json::from_str(&std::fs::read_to_string(&p).expect("readable"))
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        for s in doc.suites {
            for t in s.tests {
                let profile = t.profile.clone().or_else(|| s.profile.clone()).unwrap_or_else(|| "core".into());
                out.push((file_name(&p), profile, std::sync::Arc::unwrap_or_clone(t)));
            }
        }
    }
    out
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap_or_default().to_string_lossy().into_owned()
}

fn scored(profile: &str, t: &Test) -> bool {
    t.scored.unwrap_or(!UNSCORED_PROFILES.contains(&profile))
}

fn strength(level: Level) -> Option<Strength> {
    match level {
        Level::Must => Some(Strength::Must),
        Level::Should => Some(Strength::Should),
        Level::May => Some(Strength::May),
        Level::Info => None,
    }
}

/// What is wrong with one quote: not in its text, or not in its section.
fn quote_problem(q: &ResolvedQuote) -> Option<String> {
    let text = q.source.text();
    let found = text.find(&q.text);
    if found.is_empty() {
        let hint = spec::nearest(&q.text, q.source)
            .map(|s| format!("\n      nearest sentence ({}): «{}»", s.place(), s.text))
            .unwrap_or_default();
        return Some(format!("quote not found in {}: «{}»{hint}", q.source.as_str(), q.text));
    }
    if q.section.is_empty() {
        return Some(format!("quote names no section: «{}»", q.text));
    }
    if !found.iter().any(|l| spec::stands_in(l, q.source, &q.section)) {
        let places: Vec<String> = found
            .iter()
            .map(|l| match q.source {
                Source::Proto => format!(
                    "{} (§{})",
                    l.definition.as_deref().unwrap_or("?"),
                    l.definition.as_deref().and_then(spec::section_of_definition).unwrap_or_else(|| "-".into())
                ),
                _ => format!("§{}", l.section.as_deref().unwrap_or("?")),
            })
            .collect();
        return Some(format!("quote stands in {}, not in {} as named: «{}»", places.join(", "), q.section, q.text));
    }
    None
}

/// What is wrong with a check's level given its quotes and whether it is scored.
fn level_problem(level: Level, is_scored: bool, quotes: &[ResolvedQuote]) -> Option<String> {
    let carried: Vec<Strength> = quotes.iter().flat_map(|q| spec::keywords(&q.text)).collect();
    match strength(level) {
        None if is_scored => Some("level info is never scored: set scored false or quote a keyword sentence".into()),
        None => None,
        Some(want) if carried.contains(&want) => None,
        Some(want) => {
            let have: Vec<&str> = carried.iter().map(|s| s.as_str()).collect();
            Some(format!(
                "level {} but no quote carries a {} keyword (quotes carry: {})",
                level.as_str(),
                want.as_str().to_uppercase(),
                if have.is_empty() { "none".to_owned() } else { have.join(", ") }
            ))
        }
    }
}

#[test]
fn every_check_quotes_the_spec_verbatim_at_the_level_of_its_keyword() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for (file, profile, t) in builtin_tests() {
        let quotes = t.quotes();
        let is_scored = scored(&profile, &t);
        if quotes.is_empty() {
            problems.push(format!("{} ({file}): no requirement quoted", t.id));
            continue;
        }
        for q in &quotes {
            if let Some(p) = quote_problem(q) {
                problems.push(format!("{} ({file}): {p}", t.id));
            }
        }
        if let Some(p) = level_problem(t.level, is_scored, &quotes) {
            problems.push(format!("{} ({file}): {p}", t.id));
        }
        checked += 1;
    }
    assert!(checked > 200, "only {checked} built-in checks found");
    assert!(problems.is_empty(), "{} problem(s):\n  {}", problems.len(), problems.join("\n  "));
}

/// The test itself can fail: a changed word, a wrong section and a level the quote does not carry
/// are each caught.
#[test]
fn the_quote_test_catches_each_kind_of_mistake() {
    let q = |text: &str, source: Source, section: &str| ResolvedQuote {
        text: text.into(),
        source,
        section: section.into(),
    };
    let good = q("Servers MUST validate all input parameters before processing", Source::Spec, "3.3.2");
    assert_eq!(quote_problem(&good), None);
    let reworded = q("Servers MUST validate every input parameter before processing", Source::Spec, "3.3.2");
    let p = quote_problem(&reworded).expect("a changed word is caught");
    assert!(p.contains("nearest sentence (§3.3.2)") && p.contains("MUST validate all input parameters"), "{p}");
    let misplaced = q("Servers MUST validate all input parameters before processing", Source::Spec, "3.3.1");
    assert!(quote_problem(&misplaced).expect("a wrong section is caught").contains("§3.3.2"));
    let proto = q("string id = 1 [(google.api.field_behavior) = REQUIRED];", Source::Proto, "4.1.1");
    assert_eq!(quote_problem(&proto), None);
    let rpc = q("The Server MUST NOT reply to a Notification", Source::JsonRpc, "4.1");
    assert_eq!(quote_problem(&rpc), None);

    let should = q("Servers SHOULD specify which parameter(s) failed validation and why", Source::Spec, "3.3.2");
    assert!(level_problem(Level::Must, true, std::slice::from_ref(&should)).is_some());
    assert_eq!(level_problem(Level::Should, true, std::slice::from_ref(&should)), None);
    assert_eq!(level_problem(Level::Must, true, &[should.clone(), good.clone()]), None);
    assert!(level_problem(Level::Info, true, std::slice::from_ref(&good)).is_some());
    assert_eq!(level_problem(Level::Info, false, std::slice::from_ref(&good)), None);
}

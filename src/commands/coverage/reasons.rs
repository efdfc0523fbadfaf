//! `suites/coverage.json`: which normative sentences no server check can grade, and why. Reasons
//! are data, reviewed like code: a reason is named once with what it means; rules give it to whole
//! classes (a section and its subsections, a source, a subject such as "Clients MUST …"); entries
//! give one sentence a reason, say it is testable after all where a rule is wrong about it, or say
//! that it restates another sentence (which is then the one counted). An entry finds its sentence by
//! source, section and the start of its normalised text, so that it survives a reflowed paragraph.
//!
//! An entry decides over the rules; among rules the first that matches decides. Everything that
//! could silently go stale is a problem instead: an entry that matches no sentence or several, a
//! sentence two entries speak for, a rule that decides nothing, an entry repeating its rule, an
//! override of no rule, a restatement of a sentence that is itself not counted, an unused reason.

use std::collections::BTreeMap;

use regex::Regex;
use serde::Deserialize;

use crate::spec::{Sentence, Source, normalize};

/// The file compiled into the binary.
pub const BUILTIN: &str = include_str!("../../../suites/coverage.json");

/// Names the file in problems.
pub const FILE: &str = "suites/coverage.json";

/// The reasons file as data.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reasons {
    /// Reason name → what it means.
    pub reasons: BTreeMap<String, String>,
    /// Reasons for whole classes of sentences, in order: the first that matches decides.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// One sentence each.
    #[serde(default)]
    pub sentences: Vec<Entry>,
}

/// A reason for every sentence that matches all of what the rule names.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub reason: String,
    #[serde(default)]
    pub source: Option<Source>,
    /// The section and its subsections (`10` holds `10.2`).
    #[serde(default)]
    pub section: Option<String>,
    /// A regular expression on the sentence's normalised text (who the sentence binds).
    #[serde(default)]
    pub subject: Option<String>,
}

/// One sentence: where it stands and how its normalised text starts, and what is said of it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    #[serde(default)]
    pub source: Source,
    /// Its section; for the proto its definition (`ImplicitOAuthFlow`) will do.
    pub section: String,
    /// The start of its text.
    pub text: String,
    /// Why no server check can grade it.
    #[serde(default)]
    pub reason: Option<String>,
    /// What of the reason applies here, when it is not plain.
    #[serde(default)]
    pub note: Option<String>,
    /// Why it is testable although a rule says otherwise.
    #[serde(default)]
    pub testable: Option<String>,
    /// The sentence it says again, which is the one counted.
    #[serde(default)]
    pub restates: Option<Pointer>,
}

/// Another sentence, found like an entry's; its source is the entry's unless it names one.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pointer {
    #[serde(default)]
    pub source: Option<Source>,
    pub section: String,
    pub text: String,
}

/// A normative sentence: its source and its index in `source.text().sentences()`.
pub type SentenceId = (Source, usize);

/// What the reasons file makes of one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// A server check could grade it. `why` when an entry overrides a rule.
    Testable { why: Option<String> },
    /// No server check can grade it.
    Untestable { reason: String, note: Option<String> },
    /// It says again what `target` says; `target` is counted.
    Restates { target: SentenceId },
}

/// Every normative sentence of the three texts, in order.
pub fn all_sentences() -> Vec<(SentenceId, &'static Sentence)> {
    Source::ALL
        .into_iter()
        .flat_map(|src| src.text().sentences().iter().enumerate().map(move |(i, s)| ((src, i), s)))
        .collect()
}

impl Reasons {
    /// The file compiled into the binary.
    pub fn builtin() -> Result<Reasons, String> {
        Reasons::parse(BUILTIN)
    }

    pub fn parse(text: &str) -> Result<Reasons, String> {
        serde_json::from_str(text).map_err(|e| format!("{FILE}: {e}"))
    }

    /// Each sentence's class, in the order of [`all_sentences`], and what is wrong with the file.
    pub fn classify(&self) -> (Vec<(SentenceId, Class)>, Vec<String>) {
        let sentences = all_sentences();
        let mut problems = Vec::new();
        let mut used: BTreeMap<&str, bool> = self.reasons.keys().map(|k| (k.as_str(), false)).collect();
        let subjects = self.subjects(&mut used, &mut problems);
        let (by_sentence, targets) = self.resolve_entries(&sentences, &mut used, &mut problems);
        let rule_of = |s: &Sentence| {
            self.rules.iter().zip(&subjects).position(|(r, re)| {
                r.source.is_none_or(|src| src == s.source)
                    && r.section.as_deref().is_none_or(|sec| s.within(sec))
                    && (r.subject.is_none() || re.as_ref().is_some_and(|re| re.is_match(&s.text)))
            })
        };

        let mut decided = vec![false; self.rules.len()];
        let mut out = Vec::with_capacity(sentences.len());
        for (id, s) in &sentences {
            let rule = rule_of(s);
            let entries = by_sentence.get(id).map(Vec::as_slice).unwrap_or_default();
            if entries.len() > 1 {
                let names: Vec<String> = entries.iter().map(|&i| entry_name(&self.sentences[i])).collect();
                let differ = entries.iter().any(|&i| self.sentences[i].reason != self.sentences[entries[0]].reason);
                let how = if differ { "with different reasons" } else { "more than once" };
                problems.push(format!("{} «{}» is spoken for {how}: {}", s.place(), s.text, names.join(", ")));
            }
            let class = match entries.first().map(|&i| (i, &self.sentences[i])) {
                Some((_, e)) if e.reason.is_some() => {
                    let reason = e.reason.clone().unwrap_or_default();
                    if let Some(r) = rule.filter(|&r| self.rules[r].reason == reason) {
                        let name = entry_name(e);
                        problems.push(format!("{name} repeats rule {}, which already gives it {reason:?}", r + 1));
                    }
                    Class::Untestable { reason, note: e.note.clone() }
                }
                Some((_, e)) if e.testable.is_some() => {
                    if rule.is_none() {
                        problems.push(format!("{} says testable, but no rule says otherwise", entry_name(e)));
                    }
                    Class::Testable { why: e.testable.clone() }
                }
                Some((i, _)) if targets.contains_key(&i) => Class::Restates { target: targets[&i] },
                // An entry in error is reported already; the rules decide meanwhile.
                _ => match rule {
                    Some(r) => {
                        decided[r] = true;
                        Class::Untestable { reason: self.rules[r].reason.clone(), note: None }
                    }
                    None => Class::Testable { why: None },
                },
            };
            out.push((*id, class));
        }

        check_restatements(&out, &mut problems);
        for (i, d) in decided.iter().enumerate() {
            // A subject that does not compile is reported already.
            let broken = self.rules[i].subject.is_some() && subjects[i].is_none();
            if !d && !broken {
                problems.push(format!("rule {} decides no sentence", i + 1));
            }
        }
        for (name, u) in used {
            if !u {
                problems.push(format!("reason {name:?} is named by no rule and no entry"));
            }
        }
        (out, problems)
    }

    /// Each rule's subject compiled (None: it has none, or it does not compile).
    fn subjects(&self, used: &mut BTreeMap<&str, bool>, problems: &mut Vec<String>) -> Vec<Option<Regex>> {
        let mut out = Vec::with_capacity(self.rules.len());
        for (i, r) in self.rules.iter().enumerate() {
            mark_used(used, &r.reason, &format!("rule {}", i + 1), problems);
            if r.source.is_none() && r.section.is_none() && r.subject.is_none() {
                problems.push(format!("rule {} names no source, section or subject", i + 1));
            }
            out.push(r.subject.as_deref().and_then(|re| {
                Regex::new(re)
                    .map_err(|e| problems.push(format!("rule {}: subject is not a regular expression: {e}", i + 1)))
                    .ok()
            }));
        }
        out
    }

    /// Which entries speak for each sentence, and the sentence each restatement points at.
    fn resolve_entries(
        &self,
        sentences: &[(SentenceId, &Sentence)],
        used: &mut BTreeMap<&str, bool>,
        problems: &mut Vec<String>,
    ) -> (BTreeMap<SentenceId, Vec<usize>>, BTreeMap<usize, SentenceId>) {
        let mut by_sentence: BTreeMap<SentenceId, Vec<usize>> = BTreeMap::new();
        let mut targets = BTreeMap::new();
        for (i, e) in self.sentences.iter().enumerate() {
            let name = entry_name(e);
            let said = [e.reason.is_some(), e.testable.is_some(), e.restates.is_some()].iter().filter(|b| **b).count();
            if said != 1 {
                problems.push(format!("{name} must say exactly one of reason, testable, restates"));
            }
            if e.note.is_some() && e.reason.is_none() {
                problems.push(format!("{name} has a note but no reason"));
            }
            if let Some(r) = &e.reason {
                mark_used(used, r, &name, problems);
            }
            match find(sentences, e.source, &e.section, &e.text) {
                Ok(id) => by_sentence.entry(id).or_default().push(i),
                Err(why) => problems.push(format!("{name} {why}")),
            }
            if let Some(p) = &e.restates {
                match find(sentences, p.source.unwrap_or(e.source), &p.section, &p.text) {
                    Ok(id) => {
                        targets.insert(i, id);
                    }
                    Err(why) => problems.push(format!("{name}: the sentence it restates {why}")),
                }
            }
        }
        (by_sentence, targets)
    }
}

/// A reason named by a rule or an entry is defined, and used.
fn mark_used(used: &mut BTreeMap<&str, bool>, name: &str, what: &str, problems: &mut Vec<String>) {
    match used.get_mut(name) {
        Some(u) => *u = true,
        None => problems.push(format!("{what} names reason {name:?}, which \"reasons\" does not define")),
    }
}

/// A restatement points at another sentence, which is counted (testable): else the requirement
/// would be counted nowhere.
fn check_restatements(classes: &[(SentenceId, Class)], problems: &mut Vec<String>) {
    let place = |id: &SentenceId| id.0.text().sentences()[id.1].place();
    let class_of: BTreeMap<SentenceId, &Class> = classes.iter().map(|(id, c)| (*id, c)).collect();
    for (id, class) in classes {
        let Class::Restates { target } = class else { continue };
        if target == id {
            problems.push(format!("{}: a sentence restates itself", place(id)));
        } else if !matches!(class_of.get(target), Some(Class::Testable { .. })) {
            let (s, t) = (place(id), place(target));
            problems.push(format!(
                "{s} restates {t}, which is not counted either: give it {t}'s reason, or restate a counted sentence"
            ));
        }
    }
}

/// How a problem names an entry.
fn entry_name(e: &Entry) -> String {
    format!("entry {} §{} «{}»", e.source.as_str(), e.section, e.text)
}

/// The one sentence of `source` standing in `section` whose normalised text starts with `text`.
fn find(
    sentences: &[(SentenceId, &Sentence)],
    source: Source,
    section: &str,
    text: &str,
) -> Result<SentenceId, String> {
    let start = normalize(text, source);
    let found: Vec<SentenceId> = sentences
        .iter()
        .filter(|(_, s)| s.source == source && s.stands_in(section) && !start.is_empty() && s.text.starts_with(&start))
        .map(|(id, _)| *id)
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err("matches no normative sentence".into()),
        many => Err(format!("matches {} sentences: give more of its text", many.len())),
    }
}

//! From the checks' quotes and the reasons file to a status for every normative sentence: covered
//! (a check quotes it, or quotes a sentence restating it), a gap (testable by a server check, and
//! no check quotes it), untestable (with its reason), or a restatement of a counted sentence.

use std::collections::{BTreeMap, BTreeSet};

use super::reasons::{Class, Reasons, SentenceId, all_sentences};
use crate::spec::{Sentence, Source};
use crate::suite::model::Test;

/// One normative sentence and what became of it.
#[derive(Debug, Clone)]
pub struct Traced {
    pub id: SentenceId,
    pub sentence: &'static Sentence,
    /// Checks one of whose quotes overlaps it.
    pub quoted_by: Vec<String>,
    pub status: Status,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// A server check could grade it. `checks` quote it or a sentence restating it (empty: a gap);
    /// `why` says why it is testable where a rule says otherwise.
    Testable { checks: Vec<String>, why: Option<String> },
    /// No server check can grade it.
    Untestable { reason: String, note: Option<String> },
    /// It says again what the sentence at this index of [`Coverage::sentences`] says.
    Restates { target: usize },
}

impl Traced {
    /// Testable and quoted.
    pub fn is_covered(&self) -> bool {
        matches!(&self.status, Status::Testable { checks, .. } if !checks.is_empty())
    }

    /// Testable and quoted by no check.
    pub fn is_gap(&self) -> bool {
        matches!(&self.status, Status::Testable { checks, .. } if checks.is_empty())
    }

    pub fn is_testable(&self) -> bool {
        matches!(self.status, Status::Testable { .. })
    }
}

/// Counts for one source or for all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub sentences: usize,
    pub testable: usize,
    pub covered: usize,
}

impl Tally {
    /// Covered share of the testable sentences, in percent (0 when none is testable).
    pub fn percent(&self) -> f64 {
        if self.testable == 0 { 0.0 } else { 100.0 * self.covered as f64 / self.testable as f64 }
    }
}

/// The gaps of one section (for the proto: the spec section that renders the definition).
#[derive(Debug, Clone)]
pub struct GapGroup<'a> {
    pub source: Source,
    /// `§3.1.4`, or the name of a proto definition no section renders.
    pub place: String,
    pub sentences: Vec<&'a Traced>,
}

/// The coverage of the three texts by a set of checks.
#[derive(Debug, Clone)]
pub struct Coverage {
    pub sentences: Vec<Traced>,
    /// What is wrong with the reasons file.
    pub problems: Vec<String>,
    /// Reason name → what it means.
    pub reasons: BTreeMap<String, String>,
    /// How many checks there are, and how many quote a normative sentence.
    pub checks: usize,
    pub quoting: usize,
}

impl Coverage {
    pub fn compute(tests: &[Test], reasons: &Reasons) -> Coverage {
        let (classes, problems) = reasons.classify();
        let mut quoted: BTreeMap<SentenceId, BTreeSet<String>> = BTreeMap::new();
        for t in tests {
            for q in t.quotes() {
                for i in q.source.text().quoted(&q.text, &q.section) {
                    quoted.entry((q.source, i)).or_default().insert(t.id.clone());
                }
            }
        }
        let quoting = quoted.values().flatten().collect::<BTreeSet<_>>().len();
        let index: BTreeMap<SentenceId, usize> = classes.iter().enumerate().map(|(i, (id, _))| (*id, i)).collect();
        let direct = |id: &SentenceId| quoted.get(id).map(|c| c.iter().cloned().collect()).unwrap_or_default();

        // A restatement's checks count for the sentence it restates.
        let mut through: BTreeMap<SentenceId, BTreeSet<String>> = BTreeMap::new();
        for (id, class) in &classes {
            if let Class::Restates { target } = class {
                through.entry(*target).or_default().extend(direct(id));
            }
        }
        let all = all_sentences();
        let sentences = classes
            .iter()
            .zip(all)
            .map(|((id, class), (_, sentence))| {
                let quoted_by: Vec<String> = direct(id);
                let status = match class {
                    Class::Testable { why } => {
                        let mut checks: BTreeSet<String> = quoted_by.iter().cloned().collect();
                        checks.extend(through.get(id).into_iter().flatten().cloned());
                        Status::Testable { checks: checks.into_iter().collect(), why: why.clone() }
                    }
                    Class::Untestable { reason, note } => {
                        Status::Untestable { reason: reason.clone(), note: note.clone() }
                    }
                    Class::Restates { target } => Status::Restates { target: index[target] },
                };
                Traced { id: *id, sentence, quoted_by, status }
            })
            .collect();
        Coverage { sentences, problems, reasons: reasons.reasons.clone(), checks: tests.len(), quoting }
    }

    /// Counts for one source, or for all with `None`.
    pub fn tally(&self, source: Option<Source>) -> Tally {
        let of = self.sentences.iter().filter(|t| source.is_none_or(|s| t.id.0 == s));
        of.fold(Tally::default(), |mut t, s| {
            t.sentences += 1;
            t.testable += usize::from(s.is_testable());
            t.covered += usize::from(s.is_covered());
            t
        })
    }

    /// The line the lead quotes.
    pub fn share_line(&self) -> String {
        let t = self.tally(None);
        format!("testable server sentences covered: {} of {} ({:.1}%)", t.covered, t.testable, t.percent())
    }

    /// The gaps grouped by where they stand, in the order of the texts.
    pub fn gaps(&self) -> Vec<GapGroup<'_>> {
        let mut out: Vec<GapGroup<'_>> = Vec::new();
        for t in self.sentences.iter().filter(|t| t.is_gap()) {
            let s = t.sentence;
            let place = match (&s.section, &s.definition) {
                (Some(sec), _) => format!("§{sec}"),
                // A proto definition no spec section renders (the deprecated OAuth flows).
                (None, Some(def)) => def.clone(),
                (None, None) => "?".into(),
            };
            match out.iter_mut().find(|g| g.source == s.source && g.place == place) {
                Some(g) => g.sentences.push(t),
                None => out.push(GapGroup { source: s.source, place, sentences: vec![t] }),
            }
        }
        out
    }
}

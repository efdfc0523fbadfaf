//! The freedom side of coverage: which of the choices the spec leaves to an agent the freedom
//! catalogue (`mock-peer/freedoms/`) shows, so that `selftest` proves no check fails on them. Two
//! kinds of choice are listed: the MAY sentences a server check could observe (an agent doing what
//! one allows is conforming), and the members an agent sends that the proto does not make REQUIRED
//! (an agent may leave each out, or send it). A choice no freedom shows is one the kit has never
//! been proven to accept.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::trace::{Coverage, Status, Traced};
use crate::server::freedoms::FreedomCatalogue;
use crate::spec::proto::{self, Field};
use crate::spec::{Source, Strength};

/// One choice and the freedoms that show it.
#[derive(Debug, Clone)]
pub struct Shown<T> {
    pub choice: T,
    pub freedoms: Vec<String>,
}

/// The choices the spec leaves to an agent, and which freedoms show them.
#[derive(Debug, Clone)]
pub struct FreedomCoverage<'a> {
    pub freedoms: usize,
    /// Testable MAY sentences (a restatement counts for the sentence it restates).
    pub sentences: Vec<Shown<&'a Traced>>,
    /// Members an agent sends that are not REQUIRED (a `oneof` choice among them).
    pub members: Vec<Shown<&'static Field>>,
    /// Freedoms naming a member the proto does not have, or one it makes REQUIRED.
    pub problems: Vec<String>,
}

impl<'a> FreedomCoverage<'a> {
    pub fn compute(c: &'a Coverage, catalogue: &FreedomCatalogue) -> FreedomCoverage<'a> {
        let index_of = |id: &(Source, usize)| c.sentences.iter().position(|t| t.id == *id);
        // Sentence index in `c.sentences` → freedoms quoting it (or a restatement of it).
        let mut quoted: Vec<BTreeSet<String>> = vec![BTreeSet::new(); c.sentences.len()];
        for f in catalogue.all() {
            for a in &f.allowed_by {
                let Some(source) = Source::named(a.source()) else { continue };
                let section = a.section().unwrap_or(if source == Source::Spec { &f.section } else { "" });
                for i in source.text().quoted(a.text(), section) {
                    let Some(at) = index_of(&(source, i)) else { continue };
                    let at = match c.sentences[at].status {
                        Status::Restates { target } => target,
                        _ => at,
                    };
                    quoted[at].insert(f.id.clone());
                }
            }
        }
        let sentences = c
            .sentences
            .iter()
            .zip(quoted)
            .filter(|(t, _)| t.is_testable() && t.sentence.keywords.contains(&Strength::May))
            .map(|(t, f)| Shown { choice: t, freedoms: f.into_iter().collect() })
            .collect();

        let sent = proto::sent_by_agent();
        let fields = proto::fields();
        let mut problems = Vec::new();
        for f in catalogue.all() {
            for m in &f.members {
                match fields.iter().find(|x| x.path() == *m) {
                    None => problems.push(format!("{}: the proto has no member {m}", f.id)),
                    Some(x) if x.required => problems.push(format!("{}: {m} is REQUIRED, not a choice", f.id)),
                    Some(x) if !sent.contains(&x.message) => {
                        problems.push(format!("{}: an agent never sends {m} ({} is a request)", f.id, x.message))
                    }
                    Some(_) => {}
                }
            }
        }
        let members = fields
            .iter()
            .filter(|x| !x.required && sent.contains(&x.message))
            .map(|x| Shown {
                choice: x,
                freedoms: catalogue.all().filter(|f| f.members.contains(&x.path())).map(|f| f.id.clone()).collect(),
            })
            .collect();
        FreedomCoverage { freedoms: catalogue.len(), sentences, members, problems }
    }

    fn summary(&self) -> String {
        let shown = |n: usize, of: usize| format!("{n} of {of}");
        format!(
            "{} freedoms show {} MAY sentences a server check could observe, and {} optional members an agent sends",
            self.freedoms,
            shown(self.sentences.iter().filter(|s| !s.freedoms.is_empty()).count(), self.sentences.len()),
            shown(self.members.iter().filter(|s| !s.freedoms.is_empty()).count(), self.members.len()),
        )
    }

    /// The summary, then what no freedom shows.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.summary());
        let bare: Vec<&Shown<&Traced>> = self.sentences.iter().filter(|s| s.freedoms.is_empty()).collect();
        let _ = writeln!(out, "\nMAY sentences no freedom quotes ({}):", bare.len());
        for s in bare {
            let _ = writeln!(out, "  {:<24} {}", s.choice.sentence.place(), s.choice.sentence.text);
        }
        let bare: Vec<&Shown<&Field>> = self.members.iter().filter(|s| s.freedoms.is_empty()).collect();
        let _ = writeln!(
            out,
            "\nOptional members no freedom varies ({}): the mock always sends each, or never, so the other way is unproven:",
            bare.len()
        );
        for s in bare {
            let x = s.choice;
            let oneof = x.oneof.as_deref().map(|o| format!(" (one choice of {o})")).unwrap_or_default();
            let place = x.section().map(|s| format!("§{s}")).unwrap_or_default();
            let _ = writeln!(out, "  {:<8} {}.{}{oneof}", place, x.message, x.json_name());
        }
        out
    }

    pub fn to_json(&self) -> Value {
        json!({
            "freedoms": self.freedoms,
            "summary": self.summary(),
            "sentences": self.sentences.iter().map(|s| json!({
                "place": s.choice.sentence.place(),
                "text": s.choice.sentence.text,
                "freedoms": s.freedoms,
            })).collect::<Vec<_>>(),
            "members": self.members.iter().map(|s| json!({
                "member": s.choice.path(),
                "json": format!("{}.{}", s.choice.message, s.choice.json_name()),
                "section": s.choice.section(),
                "oneof": s.choice.oneof,
                "freedoms": s.freedoms,
            })).collect::<Vec<_>>(),
            "problems": self.problems,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_shows_some_choices_and_names_only_real_members() {
        let c = super::super::builtin().expect("coverage");
        let catalogue = FreedomCatalogue::builtin().expect("freedoms");
        let f = FreedomCoverage::compute(&c, &catalogue);
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        let may = |text: &str| f.sentences.iter().find(|s| s.choice.sentence.text.contains(text));
        let last_modified = may("MAY include a Last-Modified response header").expect("§8.6.1's MAY is testable");
        assert!(last_modified.freedoms.contains(&"FREEDOM-CARD-NO-LAST-MODIFIED".to_owned()));
        let member = |p: &str| f.members.iter().find(|m| m.choice.path() == p);
        assert!(member("Task.context_id").is_some_and(|m| m.freedoms.contains(&"FREEDOM-SEND-NO-CONTEXT-ID".into())));
        assert!(member("Task.id").is_none(), "REQUIRED members are no choice");
        assert!(member("SendMessageRequest.message").is_none(), "requests are the client's");
        let text = f.to_text();
        assert!(text.contains("MAY sentences no freedom quotes"), "{text}");
    }
}

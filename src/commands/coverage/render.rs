//! The coverage as text (summary, every sentence, the gaps) and as JSON (the same, as data; the
//! shape is in the README's Traceability section).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::trace::{Coverage, Status, Tally, Traced};
use crate::spec::{Sentence, Source};

/// Everything: the summary, each sentence with its checks or its reason, then the gaps.
pub fn to_text(c: &Coverage) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Normative sentences (an RFC 2119 keyword; a proto field annotated REQUIRED) and the built-in checks that quote them\n"
    );
    let _ = writeln!(out, "{:<20} {:>9} {:>9} {:>8} {:>7}", "", "sentences", "testable", "covered", "share");
    let row = |out: &mut String, name: &str, t: Tally| {
        let _ = writeln!(out, "{name:<20} {:>9} {:>9} {:>8} {:>6.1}%", t.sentences, t.testable, t.covered, t.percent());
    };
    for s in Source::ALL {
        row(&mut out, s.title(), c.tally(Some(s)));
    }
    row(&mut out, "total", c.tally(None));
    let _ = writeln!(out, "{}", c.share_line());
    let _ = writeln!(out, "{} of {} built-in checks quote a normative sentence", c.quoting, c.checks);

    for source in Source::ALL {
        let _ = writeln!(out, "\n{}", source.title());
        for t in c.sentences.iter().filter(|t| t.id.0 == source) {
            let _ = writeln!(out, "  {} {:<6} {}", t.sentence.place(), strength(t.sentence), t.sentence.text);
            let _ = writeln!(out, "      {}", verdict(c, t));
        }
    }

    let quoted_untestable: Vec<&Traced> =
        c.sentences.iter().filter(|t| !t.is_testable() && !t.quoted_by.is_empty()).collect();
    if !quoted_untestable.is_empty() {
        let _ = writeln!(
            out,
            "\nQuoted by a check, yet not counted ({}): the check quotes it for context, or the classification is wrong",
            quoted_untestable.len()
        );
        for t in quoted_untestable {
            let _ = writeln!(out, "  {} {}: {}", t.sentence.place(), t.sentence.text, t.quoted_by.join(", "));
        }
    }
    out.push('\n');
    out.push_str(&gaps_text(c));
    out
}

/// Only the gaps: testable server sentences no check quotes, by section.
pub fn gaps_text(c: &Coverage) -> String {
    let gaps = c.gaps();
    let n: usize = gaps.iter().map(|g| g.sentences.len()).sum();
    let mut out = String::new();
    if n == 0 {
        let _ = writeln!(out, "Gaps: none; a check quotes every testable server sentence");
        return out;
    }
    let _ = writeln!(out, "Gaps: {n} testable server sentences no check quotes");
    for g in gaps {
        let _ = writeln!(out, "{} {}", g.source.title(), g.place);
        for t in g.sentences {
            let field = t.sentence.field.as_deref().map(|f| format!(" [{f}]")).unwrap_or_default();
            let _ = writeln!(out, "  {:<6} {}{field}", strength(t.sentence), t.sentence.text);
        }
    }
    out
}

/// The strongest keyword as the text writes it.
fn strength(s: &Sentence) -> String {
    s.strength().map(|k| k.as_str().to_uppercase()).unwrap_or_default()
}

/// One line under a sentence: its checks, or that it is a gap, or why it is not counted.
fn verdict(c: &Coverage, t: &Traced) -> String {
    match &t.status {
        Status::Testable { checks, why } => {
            let mut line = if checks.is_empty() {
                "GAP: testable by a server check, quoted by none".to_owned()
            } else {
                let through: Vec<&str> =
                    checks.iter().filter(|id| !t.quoted_by.contains(id)).map(String::as_str).collect();
                match (t.quoted_by.is_empty(), through.is_empty()) {
                    (false, true) => format!("quoted by {}", t.quoted_by.join(", ")),
                    (false, false) => {
                        format!("quoted by {}; through a restatement by {}", t.quoted_by.join(", "), through.join(", "))
                    }
                    _ => format!("quoted through a restatement by {}", through.join(", ")),
                }
            };
            if let Some(why) = why {
                let _ = write!(line, " (testable: {why})");
            }
            line
        }
        Status::Untestable { reason, note } => {
            let mut line =
                format!("untestable, {reason}: {}", c.reasons.get(reason).map(String::as_str).unwrap_or("?"));
            if let Some(note) = note {
                let _ = write!(line, " ({note})");
            }
            if !t.quoted_by.is_empty() {
                let _ = write!(line, "; yet quoted by {}", t.quoted_by.join(", "));
            }
            line
        }
        Status::Restates { target } => {
            let s = c.sentences[*target].sentence;
            format!("restates {} «{}», which is counted instead", s.place(), s.text)
        }
    }
}

fn tally_json(t: Tally) -> Value {
    json!({
        "sentences": t.sentences,
        "testable": t.testable,
        "covered": t.covered,
        "percent": (t.percent() * 10.0).round() / 10.0,
    })
}

fn sentence_json(c: &Coverage, t: &Traced) -> Value {
    let s = t.sentence;
    let mut v = json!({
        "source": s.source.as_str(),
        "section": s.section,
        "definition": s.definition,
        "field": s.field,
        "place": s.place(),
        "keywords": s.keywords.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        "text": s.text,
        "quoted_by": t.quoted_by,
    });
    let extra = match &t.status {
        Status::Testable { checks, why } => json!({
            "status": if checks.is_empty() { "gap" } else { "covered" },
            "checks": checks,
            "testable": why,
        }),
        Status::Untestable { reason, note } => json!({ "status": "untestable", "reason": reason, "note": note }),
        Status::Restates { target } => {
            let r = c.sentences[*target].sentence;
            json!({ "status": "restates", "restates": { "place": r.place(), "text": r.text } })
        }
    };
    if let (Some(v), Value::Object(extra)) = (v.as_object_mut(), extra) {
        v.extend(extra);
    }
    v
}

/// The gaps as data: one object per section.
pub fn gaps_json(c: &Coverage) -> Value {
    let groups: Vec<Value> = c
        .gaps()
        .into_iter()
        .map(|g| {
            json!({
                "source": g.source.as_str(),
                "place": g.place,
                "sentences": g.sentences.iter().map(|t| json!({
                    "place": t.sentence.place(),
                    "field": t.sentence.field,
                    "keywords": t.sentence.keywords.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
                    "text": t.sentence.text,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Value::Array(groups)
}

/// Everything as data.
pub fn to_json(c: &Coverage) -> Value {
    let sources: Vec<Value> = Source::ALL
        .into_iter()
        .map(|s| {
            let mut v = tally_json(c.tally(Some(s)));
            if let Some(o) = v.as_object_mut() {
                o.insert("source".into(), s.as_str().into());
                o.insert("title".into(), s.title().into());
            }
            v
        })
        .collect();
    json!({
        "sources": sources,
        "total": tally_json(c.tally(None)),
        "share": c.share_line(),
        "checks": { "builtin": c.checks, "quoting": c.quoting },
        "reasons": c.reasons,
        "sentences": c.sentences.iter().map(|t| sentence_json(c, t)).collect::<Vec<_>>(),
        "gaps": gaps_json(c),
        "problems": c.problems,
    })
}

//! A Markdown summary of a [`Report`], short enough for a pull-request comment: the verdict, what
//! to fix first, a table of profiles, the findings by root cause (at most [`MAX_FINDINGS`], each
//! with the reason in one line, then the sentence that decides it as a `>` quote line with its
//! place, the spec's other words and the kit's reading under its own label folded in a
//! `<details>`) and the baseline. The HTML page and the JSON report have everything else.

use std::fmt::Write as _;

use super::causes;
use super::fix_first;
use super::graded::Peer;
use super::json::Report;
use super::model::{CheckResult, EntryStatus, Quote, Verdict};
use super::quotes;
use super::text::truncate;

/// Root causes listed before the rest is counted.
pub const MAX_FINDINGS: usize = 20;
/// Characters of a finding's message kept.
const MAX_MESSAGE: usize = 160;
/// Ids named in one list before the rest is counted.
const MAX_IDS: usize = 8;

pub fn to_markdown(report: &Report) -> String {
    let mut out = String::new();
    let v = &report.verdict;
    let mark = match v.status {
        Verdict::Conformant => "✅",
        Verdict::NonConformant => "❌",
        _ => "⚠️",
    };
    // The verdict with what it rests on ("over 136 of 206 MUST checks; 70 not graded: ...").
    let over = v.graded.statement(report.run.strict, Peer::of_mode(&report.run.mode));
    let _ = writeln!(
        out,
        "### {mark} A2A conformance: **{}**{}{} (exit {})\n",
        verdict_word(v.status),
        if over.is_empty() { "" } else { " " },
        cell(&over),
        v.exit_code
    );
    let s = &report.summary;
    let _ = writeln!(
        out,
        "{} · A2A {} · {} checks: {} pass, {} fail, {} warn, {} skip, {} error, {} info\n",
        code(&report.target.url),
        cell(&report.spec_version),
        s.total,
        s.passed,
        s.failed,
        s.warned,
        s.skipped,
        s.errors,
        s.info
    );
    // Reasons whole: one may end in the hint that makes the run work.
    for reason in &v.reasons {
        let _ = writeln!(out, "- {}", cell(reason));
    }
    if !v.reasons.is_empty() {
        out.push('\n');
    }
    // What to fix first, before the tables: each cause in a line, with the sentence that decides it.
    let (items, more) = fix_first::of(report);
    if !items.is_empty() {
        out.push_str("**Fix first**\n\n");
        for (i, item) in items.iter().enumerate() {
            let c = item.cause;
            let _ = writeln!(out, "{}. **{}** {}", i + 1, c.level.as_str().to_uppercase(), cell(&c.headline));
            if let Some(e) = &c.evidence {
                let _ = writeln!(out, "   <br>{}", cell(e));
            }
            if let Some(q) = &item.sentence {
                let _ = writeln!(out, "   > {}", cell(&quotes::quoted(q)));
            }
        }
        if more > 0 {
            let _ = writeln!(out, "\n… and {more} more under the findings below.");
        }
        out.push('\n');
    }

    out.push_str(
        "| Profile | Checks | Pass | Fail | Warn | Skip | Error | Info |\n|---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for profile in report.profiles_in_order() {
        let c = report.summary.by_profile.get(profile).copied().unwrap_or_default();
        let unscored = report.checks().filter(|r| r.profile == profile).all(|r| !r.scored);
        let _ = writeln!(
            out,
            "| {}{} | {} | {} | {} | {} | {} | {} | {} |",
            cell(profile),
            if unscored { " (not scored)" } else { "" },
            c.total,
            c.passed,
            c.failed,
            c.warned,
            c.skipped,
            c.errors,
            c.info
        );
    }
    out.push('\n');

    if let Some(d) = causes::diagnosis(report.checks())
        && let Some(f) = &d.failure
    {
        let _ = writeln!(out, "**Diagnosis** (`{}`): {}\n", d.id, cell(&f.message));
    }
    // The causes as `report.json` orders them: each its headline, then its root's finding.
    let causes = &report.causes;
    if !causes.is_empty() {
        let _ = writeln!(out, "**Findings**: {}\n", report.summary.causes.statement());
        for c in causes.iter().take(MAX_FINDINGS) {
            let _ = writeln!(out, "- **{}** {}", c.level.as_str().to_uppercase(), cell(&c.headline));
            if let Some(e) = &c.evidence {
                let _ = writeln!(out, "  <br>{}", cell(e));
            }
            let Some(root) = report.result(&c.root) else {
                continue;
            };
            let r = &root.result;
            let section =
                if r.spec.section.is_empty() { String::new() } else { format!(" §{}", cell(&r.spec.section)) };
            let accepted = root.baseline_status.map(|b| format!(" _(baseline: {})_", b.as_str())).unwrap_or_default();
            let _ = writeln!(
                out,
                "  **{}** `{}`{section} {}{}{accepted}",
                r.outcome.as_str().to_uppercase(),
                r.id,
                r.level.as_str().to_uppercase(),
                if r.scored { "" } else { " (not scored)" },
            );
            // What the agent did first, then the sentence that decides it; the spec's other words
            // and the kit's reading folded under it.
            // The root's own reason, short: the headline above gives the cause whole.
            let message = first_line(r.failure.as_ref().map_or(r.title.as_str(), |f| f.message.as_str()));
            let mut parts = vec![cell(&truncate(message, MAX_MESSAGE))];
            let same: Vec<&str> = c.findings[1..].iter().map(String::as_str).collect();
            if !same.is_empty() {
                parts.push(format!("{} more ended the same way ({})", same.len(), ids_text(&same)));
            }
            let waiting: Vec<&str> = c.waiting.iter().map(String::as_str).collect();
            if !waiting.is_empty() {
                parts.push(format!("{} check(s) depend on it ({})", waiting.len(), ids_text(&waiting)));
            }
            if let Some(text) = causes::workaround_line(r) {
                parts.push(format!("_{}_", cell(&text)));
            }
            let _ = writeln!(out, "  {}\n", parts.join("; "));
            spec_words(&mut out, r);
        }
        if causes.len() > MAX_FINDINGS {
            let _ = writeln!(out, "- … and {} more root cause(s): see the HTML report", causes.len() - MAX_FINDINGS);
        }
        out.push('\n');
    }

    if let Some(b) = &report.baseline {
        let counts: Vec<String> = [
            EntryStatus::Accepted,
            EntryStatus::Stale,
            EntryStatus::Expired,
            EntryStatus::Skipped,
            EntryStatus::Undecided,
            EntryStatus::Unknown,
        ]
        .iter()
        .map(|s| (s, b.ids(*s)))
        .filter(|(_, ids)| !ids.is_empty())
        .map(|(s, ids)| format!("{} {} ({})", ids.len(), s.as_str(), ids_text(&ids)))
        .collect();
        let _ = writeln!(
            out,
            "**Baseline** {}: {}\n",
            code(&b.source),
            if counts.is_empty() { "no entries".to_owned() } else { counts.join(", ") }
        );
    }
    let _ = writeln!(
        out,
        "<sub>{} {} · run {} · {}</sub>",
        cell(&report.tool.name),
        cell(&report.tool.version),
        cell(&report.run.id),
        cell(&report.generated_at)
    );
    out
}

/// The verdict in the words of a sentence.
pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Conformant => "conformant",
        Verdict::NonConformant => "non-conformant",
        Verdict::UsageError => "usage error",
        Verdict::Inconclusive => "inconclusive",
    }
}

/// The spec's words of a finding inside its list item: the sentence whose keyword decides it as a
/// `>` line with its place, then the other quotes and the kit's reading folded in a `<details>`
/// (quotes as `>` lines, the reading as a paragraph of its own). Each ends in a blank line, without
/// which the next paragraph would continue the quote and read as the spec's words.
fn spec_words(out: &mut String, r: &CheckResult) {
    let shown = r.spec.shown_quotes();
    let deciding = fix_first::deciding(&r.spec, r.level);
    if let Some(q) = &deciding {
        let _ = writeln!(out, "  > {}\n", cell(&quotes::quoted(q)));
    }
    let others: Vec<&Quote> = shown.iter().filter(|q| Some(*q) != deciding.as_ref()).collect();
    if others.is_empty() && r.spec.interpretation.is_none() {
        return;
    }
    out.push_str("  <details><summary>The spec's other words and the kit's reading</summary>\n\n");
    for (i, q) in others.iter().enumerate() {
        if i > 0 {
            out.push_str("  >\n");
        }
        let _ = writeln!(out, "  > {}", cell(&quotes::quoted(q)));
    }
    if !others.is_empty() {
        out.push('\n');
    }
    if let Some(reading) = &r.spec.interpretation {
        let _ = writeln!(out, "  *Kit's reading:* {}\n", cell(reading));
    }
    out.push_str("  </details>\n\n");
}

/// Text safe inside a table cell or a list item: no pipes, no line breaks, no HTML.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace('<', "&lt;").replace('>', "&gt;").replace(['\n', '\r'], " ")
}

/// `s` as inline code (backticks in it are doubled around).
fn code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    if s.contains('`') { format!("`` {s} ``") } else { format!("`{s}`") }
}

fn ids_text(ids: &[&str]) -> String {
    let mut s: Vec<String> = ids.iter().take(MAX_IDS).map(|id| format!("`{id}`")).collect();
    if ids.len() > MAX_IDS {
        s.push(format!("{} more", ids.len() - MAX_IDS));
    }
    s.join(", ")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reading_never_continues_the_quote() {
        use crate::report::model::{CheckMeta, Outcome, Quote, SpecRef};
        let q = |text: &str| Quote { text: text.into(), source: "a2a-spec".into(), section: "9.5".into() };
        let mut r = CheckResult::new(&CheckMeta::sample("X"), Outcome::Fail);
        r.spec = SpecRef::quoted("9.5", vec![q("a | b\n> c"), q("d")], Some("e <i>".into()));
        let mut out = String::new();
        spec_words(&mut out, &r);
        assert_eq!(
            out,
            "  > “a \\| b &gt; c” — A2A 1.0 §9.5\n\n  <details><summary>The spec's other words and the kit's reading\
             </summary>\n\n  > “d” — A2A 1.0 §9.5\n\n  *Kit's reading:* e &lt;i&gt;\n\n  </details>\n\n"
        );
        let mut none = String::new();
        spec_words(&mut none, &CheckResult::new(&CheckMeta::sample("X"), Outcome::Fail));
        assert_eq!(none, "");
    }

    #[test]
    fn cells_cannot_break_a_table() {
        assert_eq!(cell("a|b\nc <x>"), "a\\|b c &lt;x&gt;");
        assert_eq!(code("a`b"), "`` a`b ``");
    }
}

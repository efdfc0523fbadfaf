//! The human-readable end-of-run view of a [`Report`]: per-profile counts, every finding (the spec's
//! words, the kit's reading of them, what the agent did and an expected-vs-actual diff), skips by
//! reason, and the verdict. Fits in 100 columns: a finding's words are wrapped, never cut.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::causes::{self, Cause};
use super::events::{RunEvent, Sink};
use super::fix_first;
use super::graded::Peer;
use super::json::{Collector, Counts, Report};
use super::model::{CheckResult, EntryStatus, Level, Outcome, Quote, SkipReason, Verdict};
use super::quotes;
use super::text::{truncate, wrap, wrap_lines};
use super::textdiff;

const WIDTH: usize = 100;
/// Indentation of a finding's detail lines.
const INDENT: &str = "      ";
/// Width of a finding's detail lines.
const BODY: usize = WIDTH - INDENT.len();
/// Diff lines shown per finding before the rest is elided; a finding is a pointer, not a dump.
const MAX_DIFF_LINES: usize = 40;

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const MAGENTA: &str = "\x1b[35m";
const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// Applies ANSI styles only when color is on.
struct Painter {
    color: bool,
}

impl Painter {
    fn paint(&self, style: &str, text: &str) -> String {
        if self.color { format!("{style}{text}{RESET}") } else { text.to_owned() }
    }
}

/// Renders the report for a terminal; ANSI colors only when `color` is true.
pub fn render(report: &Report, color: bool) -> String {
    let p = Painter { color };
    let mut out = String::new();

    let _ = writeln!(
        out,
        "{} {} · A2A {} · {}",
        report.tool.name,
        report.tool.version,
        report.spec_version,
        truncate(&report.target.url, WIDTH / 2)
    );
    let profiles = if report.run.profiles.is_empty() { "(all)".to_owned() } else { report.run.profiles.join(", ") };
    let _ = writeln!(
        out,
        "run {} · profiles {} · strict {} · {} checks in {} ms",
        report.run.id,
        profiles,
        if report.run.strict { "on" } else { "off" },
        report.summary.total,
        report.summary.duration_ms
    );
    // What discovery noticed about the target (a 0.3 card, no usable interface, ...).
    // Wrapped, never cut: a note may end in the one hint that makes the run work.
    for note in &report.target.notes {
        for (i, line) in wrap(note, WIDTH - 6).into_iter().enumerate() {
            let _ = writeln!(out, "{}{line}", if i == 0 { "note: " } else { "      " });
        }
    }
    out.push('\n');
    fix_first(&mut out, report, &p);

    // Profiles: one line each.
    let _ = writeln!(out, "{}", p.paint(BOLD, "Profiles"));
    let order = report.profiles_in_order();
    let name_width = order.iter().map(|n| n.chars().count()).max().unwrap_or(0).clamp(8, 24);
    for profile in &order {
        let counts = report.summary.by_profile.get(*profile).copied().unwrap_or_default();
        let unscored = report.checks().filter(|r| r.profile == *profile).all(|r| !r.scored);
        let mut line = format!("  {:<name_width$}  {}", truncate(profile, name_width), counts_line(&counts, &p));
        if unscored {
            line.push_str(&p.paint(DIM, "  (not scored)"));
        }
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');

    // By level, as ACTS §12.7 suggests.
    let _ = writeln!(out, "{}", p.paint(BOLD, "Levels"));
    for level in [Level::Must, Level::Should, Level::May, Level::Info] {
        let c = report.summary.by_level.get(level);
        if c.total == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "  {:<7} {}/{} passed ({} failed, {} warned, {} skipped, {} errors)",
            format!("{}:", level.as_str().to_uppercase()),
            c.passed + c.info,
            c.total,
            c.failed,
            c.warned,
            c.skipped,
            c.errors
        );
    }
    out.push('\n');

    // The diagnosis of a failing neutral SendMessage explains the findings below: told first.
    if let Some(d) = causes::diagnosis(report.checks())
        && let Some(f) = &d.failure
    {
        let _ = writeln!(out, "{}", p.paint(BOLD, &format!("Diagnosis ({})", d.id)));
        for line in wrap_lines(&f.message, WIDTH - 2) {
            let _ = writeln!(out, "  {line}");
        }
        for line in f.actual.iter().flat_map(|a| a.lines()) {
            for l in wrap_lines(line, WIDTH - 4) {
                let _ = writeln!(out, "    {}", p.paint(DIM, &l));
            }
        }
        out.push('\n');
    }

    // Findings: one story per root cause, in the order `report.json` carries them (MUST first, then
    // the cause that decides the most checks).
    if !report.causes.is_empty() {
        let title = format!("Findings: {}", report.summary.causes.statement());
        let _ = writeln!(out, "{}", p.paint(BOLD, &title));
        for c in &report.causes {
            cause(&mut out, report, c, &p);
        }
        out.push('\n');
    }
    let errors = report.summary.errors;
    let dependent = report.checks().filter(|r| r.skip_reason == Some(SkipReason::DependsOnFailed)).count();
    if errors > 0 || dependent > 0 {
        let _ = writeln!(
            out,
            "{} {} check(s) could not be decided: {errors} ended in error, {dependent} depend on a failed check\n",
            p.paint(BOLD, "Undecided:"),
            errors as usize + dependent
        );
    }

    if let Some(b) = &report.baseline {
        let _ = writeln!(out, "{} {}", p.paint(BOLD, "Baseline"), truncate(&b.source, WIDTH - 10));
        for status in [
            EntryStatus::Accepted,
            EntryStatus::Stale,
            EntryStatus::Expired,
            EntryStatus::Skipped,
            EntryStatus::Undecided,
            EntryStatus::Unknown,
        ] {
            let ids = b.ids(status);
            if ids.is_empty() {
                continue;
            }
            let text = format!("{:<10} {}", status.as_str(), ids.join(", "));
            for (i, line) in wrap(&text, WIDTH - 4).into_iter().enumerate() {
                let line = if i == 0 { line } else { format!("{:<10} {line}", "") };
                let styled = if status == EntryStatus::Stale { p.paint(RED, &line) } else { line };
                let _ = writeln!(out, "  {styled}");
            }
        }
        out.push('\n');
    }

    // Skips, summarised by reason.
    let mut skips: BTreeMap<&str, u64> = BTreeMap::new();
    for r in report.checks().filter(|r| r.outcome == Outcome::Skip) {
        *skips.entry(r.skip_reason.map_or("unspecified", |s| s.as_str())).or_default() += 1;
    }
    if !skips.is_empty() {
        let _ = writeln!(out, "{}", p.paint(BOLD, &format!("Skipped ({})", report.summary.skipped)));
        for (reason, n) in skips {
            let _ = writeln!(out, "  {reason:<26} {n}");
        }
        out.push('\n');
    }

    // Verdict.
    let v = &report.verdict;
    let (style, label) = match v.status {
        Verdict::Conformant => (GREEN, "CONFORMANT"),
        Verdict::NonConformant => (RED, "NON-CONFORMANT"),
        Verdict::UsageError => (MAGENTA, "USAGE ERROR"),
        Verdict::Inconclusive => (YELLOW, "INCONCLUSIVE"),
    };
    // The verdict with what it rests on, wrapped: only the label is styled.
    let over = v.graded.statement(report.run.strict, Peer::of_mode(&report.run.mode));
    let line = format!("Verdict: {label}{}{over} (exit {})", if over.is_empty() { "" } else { " " }, v.exit_code);
    let lines = wrap(&line, WIDTH);
    if let Some((first, rest)) = lines.split_first() {
        let tail = first.strip_prefix(&format!("Verdict: {label}")).unwrap_or_default();
        let _ = writeln!(out, "Verdict: {}{tail}", p.paint(&format!("{BOLD}{style}"), label));
        // The continuation, under the label, wrapped again to fit after its indent.
        for text in wrap(&rest.join(" "), WIDTH - 2) {
            let _ = writeln!(out, "  {text}");
        }
    }
    for reason in &v.reasons {
        for line in wrap(reason, WIDTH - 2) {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// Whether the end-of-run view is coloured: never with `--no-color` or when `NO_COLOR` is set to
/// anything but the empty string (no-color.org), and only on a terminal.
pub fn use_color(no_color_flag: bool, no_color_env: Option<&std::ffi::OsStr>, is_terminal: bool) -> bool {
    !no_color_flag && no_color_env.is_none_or(|v| v.is_empty()) && is_terminal
}

/// Prints the end-of-run view when the run finishes.
#[derive(Debug)]
pub struct TerminalSink<W: std::io::Write> {
    out: W,
    color: bool,
    collector: Collector,
}

impl<W: std::io::Write> TerminalSink<W> {
    pub fn new(out: W, color: bool) -> Self {
        TerminalSink { out, color, collector: Collector::new() }
    }
}

impl<W: std::io::Write> Sink for TerminalSink<W> {
    fn event(&mut self, ev: &RunEvent) {
        self.collector.event(ev);
        if matches!(ev, RunEvent::RunFinished { .. })
            && let Some(report) = self.collector.report()
        {
            // A closed stdout is not worth failing the run over; the report files still carry it all.
            let _ = self.out.write_all(render(report, self.color).as_bytes()).and_then(|()| self.out.flush());
        }
    }
}

fn counts_line(c: &Counts, p: &Painter) -> String {
    let part = |n: u64, word: &str, style: &str| {
        let text = format!("{n} {word}");
        if n > 0 { p.paint(style, &text) } else { text }
    };
    format!(
        "{:>3} checks: {}, {}, {}, {}, {}, {}",
        c.total,
        part(c.passed, "pass", GREEN),
        part(c.failed, "fail", RED),
        part(c.warned, "warn", YELLOW),
        part(c.skipped, "skip", DIM),
        part(c.errors, "error", MAGENTA),
        part(c.info, "info", DIM),
    )
}

/// What to fix first, before anything else: each cause's level and headline, and the sentence
/// that decides it.
fn fix_first(out: &mut String, report: &Report, p: &Painter) {
    let (items, more) = fix_first::of(report);
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", p.paint(BOLD, "Fix first"));
    for (i, item) in items.iter().enumerate() {
        let c = item.cause;
        let head = format!("{:>2}. {:<6} {}", i + 1, c.level.as_str().to_uppercase(), c.headline);
        for (j, line) in wrap(&head, WIDTH - 2).into_iter().enumerate() {
            let _ = writeln!(out, "{}{line}", if j == 0 { "  " } else { "             " });
        }
        if let Some(e) = &c.evidence {
            for line in wrap(e, WIDTH - 13) {
                let _ = writeln!(out, "             {line}");
            }
        }
        if let Some(q) = &item.sentence {
            for line in wrap(&quotes::quoted(q), WIDTH - 13) {
                let _ = writeln!(out, "             {}", p.paint(DIM, &line));
            }
        }
    }
    if more > 0 {
        let _ = writeln!(out, "  … and {more} more under Findings below");
    }
    out.push('\n');
}

/// One root cause: its headline, the root's finding in full, then every other check it decides,
/// by id (wrapped, never cut).
fn cause(out: &mut String, report: &Report, c: &Cause, p: &Painter) {
    out.push('\n');
    let head = format!("{} · {}", c.level.as_str().to_uppercase(), c.headline);
    for line in wrap(&head, WIDTH) {
        let _ = writeln!(out, "{}", p.paint(BOLD, &line));
    }
    if let Some(e) = &c.evidence {
        for line in wrap(e, WIDTH) {
            let _ = writeln!(out, "{line}");
        }
    }
    let Some(root) = report.result(&c.root) else {
        return;
    };
    finding(out, &root.result, p);
    let dim = |out: &mut String, text: &str| {
        for line in wrap_lines(text, BODY) {
            let _ = writeln!(out, "{INDENT}{}", p.paint(DIM, &line));
        }
    };
    if let Some(status) = root.baseline_status {
        let reason = report.baseline.as_ref().and_then(|b| b.entry(&c.root)).map(|e| e.reason.as_str());
        dim(out, &format!("baseline: {}{}", status.as_str(), reason.map(|r| format!(" ({r})")).unwrap_or_default()));
    }
    let same = &c.findings[1..];
    if !same.is_empty() {
        dim(out, &format!("{} more check(s) ended the same way: {}", same.len(), same.join(", ")));
    }
    // One broken prerequisite is one story: the checks it left undecided are named here.
    if !c.waiting.is_empty() {
        dim(out, &format!("{} check(s) depend on it and were not decided: {}", c.waiting.len(), c.waiting.join(", ")));
    }
}

fn finding(out: &mut String, r: &CheckResult, p: &Painter) {
    let (style, tag) = match r.outcome {
        Outcome::Fail => (RED, "FAIL "),
        Outcome::Error => (MAGENTA, "ERROR"),
        Outcome::Info => (DIM, "INFO "),
        _ => (YELLOW, "WARN "),
    };
    let section = if r.spec.section.is_empty() { String::new() } else { format!("§{}  ", r.spec.section) };
    let scored = if r.scored { "" } else { "  (not scored)" };
    let head = format!("{} {}  {}{}{}", tag, r.id, section, r.level.as_str().to_uppercase(), scored);
    let _ = writeln!(out, "{}{}", p.paint(style, tag), &head[tag.len()..]);
    for line in wrap_lines(&r.title, BODY) {
        let _ = writeln!(out, "{INDENT}{line}");
    }
    // What the spec says, then how the kit reads it, then what the agent did.
    for q in r.spec.shown_quotes() {
        quote(out, &q, p);
    }
    if let Some(reading) = &r.spec.interpretation {
        let label = format!("{}:", quotes::READING);
        for (i, line) in wrap_lines(&quotes::reading(reading), BODY - 2).into_iter().enumerate() {
            let line = match line.strip_prefix(&label) {
                Some(rest) if i == 0 => format!("{}{rest}", p.paint(DIM, &label)),
                _ => format!("  {line}"),
            };
            let _ = writeln!(out, "{INDENT}{line}");
        }
    }
    let Some(f) = &r.failure else {
        return;
    };
    for line in wrap_lines(&f.message, BODY) {
        let _ = writeln!(out, "{INDENT}{line}");
    }
    if let Some(text) = causes::workaround_line(r) {
        for line in wrap_lines(&text, BODY) {
            let _ = writeln!(out, "{INDENT}{}", p.paint(YELLOW, &line));
        }
    }
    let mut place = Vec::new();
    if let Some(s) = &f.step_id {
        place.push(format!("step {s}"));
    }
    if let Some(ptr) = &f.pointer {
        place.push(format!("at {}", if ptr.is_empty() { "(root)" } else { ptr }));
    }
    if !place.is_empty() {
        let _ = writeln!(out, "{INDENT}{}", p.paint(DIM, &truncate(&place.join(" · "), WIDTH - INDENT.len())));
    }
    if let (Some(expected), Some(actual)) = (&f.expected, &f.actual) {
        let _ = writeln!(out, "{INDENT}{}", p.paint(DIM, "--- expected / +++ actual"));
        for line in diff_lines(expected, actual) {
            let styled = match line.chars().next() {
                Some('-') => p.paint(RED, &line),
                Some('+') => p.paint(GREEN, &line),
                _ => line,
            };
            let _ = writeln!(out, "{INDENT}{styled}");
        }
    }
}

/// A quote wrapped to the body's width: in quotation marks, its later lines under its first word,
/// and its place after its last word, or on a line of its own where it does not fit there.
fn quote(out: &mut String, q: &Quote, p: &Painter) {
    let lines = wrap_lines(&quotes::marked(q), BODY - 1);
    let place = quotes::attribution(q);
    let last = lines.len().saturating_sub(1);
    let lead = |i: usize| if i == 0 { "" } else { " " };
    let fits =
        lines.get(last).is_some_and(|l| lead(last).len() + l.chars().count() + 1 + place.chars().count() <= BODY);
    for (i, line) in lines.iter().enumerate() {
        let lead = lead(i);
        let tail = if i == last && fits { format!(" {}", p.paint(DIM, &place)) } else { String::new() };
        let _ = writeln!(out, "{INDENT}{lead}{line}{tail}");
    }
    if !fits {
        let _ = writeln!(out, "{INDENT} {}", p.paint(DIM, &place));
    }
}

/// Line diff of expected vs actual: `-` expected only, `+` actual only, two spaces for both; each
/// line cut to the view's width, and the whole cut after [`MAX_DIFF_LINES`].
pub fn diff_lines(expected: &str, actual: &str) -> Vec<String> {
    let mut lines: Vec<String> = textdiff::lines(expected, actual)
        .into_iter()
        .map(|(side, text)| format!("{} {}", side.sign(), truncate(&text, WIDTH - INDENT.len() - 2)))
        .collect();
    if lines.len() > MAX_DIFF_LINES {
        let more = lines.len() - MAX_DIFF_LINES;
        lines.truncate(MAX_DIFF_LINES);
        lines.push(format!("  … {more} more line(s)"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_pretty_printed_before_diffing() {
        let lines = diff_lines(r#"{"state":"completed","id":"t1"}"#, r#"{"state":"working","id":"t1"}"#);
        assert!(lines.contains(&r#"-   "state": "completed","#.to_owned()), "{lines:#?}");
        assert!(lines.contains(&r#"+   "state": "working","#.to_owned()), "{lines:#?}");
        assert!(lines.contains(&r#"    "id": "t1""#.to_owned()), "{lines:#?}");
    }

    #[test]
    fn plain_text_diffs_as_lines() {
        assert_eq!(diff_lines("a", "b"), vec!["- a".to_owned(), "+ b".to_owned()]);
    }

    #[test]
    fn a_finding_wraps_the_spec_words_and_the_reason_and_cuts_none() {
        use crate::report::model::{CheckMeta, Failure, SpecRef};
        let words = |n: usize, w: &str| vec![w; n].join(" ");
        let q =
            |text: String, source: &str, section: &str| Quote { text, source: source.into(), section: section.into() };
        let first = q(format!("Agents MUST {}.", words(40, "answer")), "a2a-spec", "3.1.1");
        let second = q("The Server MUST reply with a Response".into(), "jsonrpc-2.0", "4.1");
        let r = CheckResult {
            spec: SpecRef::quoted("3.1.1", vec![first.clone(), second.clone()], Some(words(30, "reading"))),
            failure: Some(Failure { message: format!("the agent {}", words(30, "said")), ..Failure::default() }),
            ..CheckResult::new(&CheckMeta::sample("X"), Outcome::Fail)
        };
        let mut out = String::new();
        finding(&mut out, &r, &Painter { color: false });
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(out.lines().count() > 8, "wrapped: {out}");
        // Every word is there, in order: quotes with their places, the reading, the reason.
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        let at = |s: &str| flat.find(s).unwrap_or_else(|| panic!("{s:?} not in {flat}"));
        let order = [
            at(&quotes::quoted(&first)),
            at(&quotes::quoted(&second)),
            at(&quotes::reading(r.spec.interpretation.as_deref().unwrap())),
            at(&r.failure.as_ref().unwrap().message),
        ];
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{out}");
        // A quote's place is never split over two lines.
        assert!(out.lines().any(|l| l.ends_with("answer.” — A2A 1.0 §3.1.1")), "{out}");

        // A word longer than a line (a JSON blob) continues on the next line, whole.
        let blob = format!("{{\"data\":\"{}\"}}", "x".repeat(150));
        let r = CheckResult {
            failure: Some(Failure { message: format!("the agent said {blob}"), ..Failure::default() }),
            ..CheckResult::new(&CheckMeta::sample("X"), Outcome::Fail)
        };
        let mut out = String::new();
        finding(&mut out, &r, &Painter { color: false });
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(out.replace(&format!("\n{INDENT}"), "").contains(&blob), "{out}");
    }

    #[test]
    fn a_place_that_does_not_fit_after_the_quote_gets_a_line_of_its_own() {
        let place = |text: &str| {
            let mut out = String::new();
            quote(
                &mut out,
                &Quote { text: text.into(), source: "jsonrpc-2.0".into(), section: "4.1".into() },
                &Painter { color: false },
            );
            out
        };
        // 6 + 2 + 60 + 1 + 19 = 88 columns: the place follows the quote.
        assert_eq!(place(&"x".repeat(60)), format!("{INDENT}“{}” — JSON-RPC 2.0 §4.1\n", "x".repeat(60)));
        // 6 + 2 + 80 + 1 + 19 = 108: it goes under the quote's first word.
        assert_eq!(place(&"x".repeat(80)), format!("{INDENT}“{}”\n{INDENT} — JSON-RPC 2.0 §4.1\n", "x".repeat(80)));
    }

    #[test]
    fn colour_respects_no_color() {
        use std::ffi::OsStr;
        assert!(use_color(false, None, true));
        assert!(use_color(false, Some(OsStr::new("")), true));
        assert!(!use_color(false, Some(OsStr::new("1")), true));
        assert!(!use_color(true, None, true));
        assert!(!use_color(false, None, false));
    }
}

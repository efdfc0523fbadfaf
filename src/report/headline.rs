//! A root cause as a title a person would write: one line of plain words saying what the agent
//! does wrong ("A2A-Version is never checked: a version the agent does not support is served"),
//! the keyword sentence's place ("§3.6.2 MUST") and how many checks it decides; then one line of
//! evidence (what one exchange showed). A result that carries its own `headline`, or a diagnosis
//! that explains the root, says it better than the kit's reading of the fingerprint.

use super::diagnosis::DIAGNOSES;
use super::errors::described;
use super::fingerprint::{Fingerprint, code_words, failing_reply, http_words, member_name};
use super::model::{CheckResult, ReplyKind, WANTED_ERROR, WANTED_RESULT, WANTED_STREAM};
use super::text::truncate;

/// Longest value (an expected or actual JSON, an error message) quoted inside a headline; the
/// finding below it gives the whole.
const MAX_VALUE: usize = 60;

/// A cause as a reader takes it in: a one-line title in plain words (what the agent does wrong,
/// the keyword and section that make it wrong, how many checks it decides) and one line of
/// evidence (what one exchange showed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    pub title: String,
    pub evidence: Option<String>,
}

/// Longest title before the counts: a title that runs longer is cut, its whole said below.
const MAX_TITLE: usize = 110;
/// Longest evidence line.
const MAX_EVIDENCE: usize = 200;

/// The title and evidence of the cause whose findings are `members` (the root first) and that
/// leaves `waiting` undecided; `print` is the root's fingerprint.
pub fn of(members: &[&CheckResult], waiting: &[&CheckResult], print: &Fingerprint) -> Told {
    let is_diagnosis = |r: &CheckResult| DIAGNOSES.iter().any(|(d, _)| *d == r.id);
    let decided: Vec<&CheckResult> = members.iter().copied().filter(|r| !is_diagnosis(r)).collect();
    let decided = if decided.is_empty() { members.to_vec() } else { decided };
    let own = members.iter().find_map(|r| r.headline.clone()).map(|h| (h, None));
    // A diagnosis says in its first clause what the agent does; the rest is how it was found.
    let diagnosed = || {
        let message = members.iter().find(|r| is_diagnosis(r)).and_then(|r| r.failure.as_ref())?;
        let line = first_line(&message.message);
        Some(match line.split_once(": ") {
            Some((what, why)) => (what.to_owned(), Some(why.split(". ").next().unwrap_or(why).to_owned())),
            None => (line, None),
        })
    };
    let (words, evidence) = own.or_else(diagnosed).unwrap_or_else(|| kit_words(&decided, print));
    let evidence = evidence.or_else(|| root_evidence(decided[0])).map(|e| truncate(&e, MAX_EVIDENCE));
    let keyword = keyword_place(decided[0]).filter(|k| !words.contains(k.as_str()));
    let title = format!(
        "{}{}{}",
        truncate(&capitalized(&words), MAX_TITLE),
        keyword.map(|k| format!(" ({k})")).unwrap_or_default(),
        counts(decided.len(), waiting.len())
    );
    let evidence = evidence.filter(|e| !e.is_empty() && !title.contains(e.as_str()));
    Told { title, evidence }
}

/// `§3.6.2 MUST`: the keyword of the sentence that decides the root, and where it stands.
fn keyword_place(root: &CheckResult) -> Option<String> {
    let quote = super::quotes::deciding(&root.spec, root.level)?;
    // The level's own keyword only: a sentence that has none (a check graded below its
    // sentence's keyword) gives no place.
    let word = super::quotes::keywords(root.level).iter().find(|w| quote.text.contains(*w))?;
    let negated = format!("{word} NOT");
    let keyword = if quote.text.contains(&negated) { negated } else { (*word).to_owned() };
    let place = quote.place();
    let place = place.strip_prefix("A2A 1.0 ").unwrap_or(&place);
    Some(format!("{place} {keyword}"))
}

/// What the root's failing exchange showed, in the kit's words: the first line of its failure.
fn root_evidence(root: &CheckResult) -> Option<String> {
    let f = root.failure.as_ref()?;
    let line = first_line(&f.message);
    (!line.is_empty()).then(|| format!("{}: {line}", root.id))
}

/// How many checks the cause decides, after the words: nothing for a finding alone.
fn counts(findings: usize, waiting: usize) -> String {
    let checks = |n: usize| if n == 1 { "1 check".to_owned() } else { format!("{n} checks") };
    match (findings, waiting) {
        (_, 0) if findings <= 1 => String::new(),
        (_, 0) => format!(" ({})", checks(findings)),
        (1, 1) => " (1 check waits on it)".into(),
        (1, w) => format!(" ({w} checks wait on it)"),
        (f, w) => format!(" ({f} checks; {w} more wait on them)"),
    }
}

/// A check's title as a requirement the agent does not meet.
fn not_met(root: &CheckResult) -> String {
    if root.title.is_empty() { format!("{} is not met", root.id) } else { format!("Not met: {}", root.title) }
}

/// `name` quoted for a title, with its value when the value is short enough to read at a glance.
fn member_seen(name: &str, actual: &str) -> String {
    if actual.len() <= 24 && !actual.starts_with(['[', '{']) {
        format!("`{name}` is {actual}")
    } else {
        format!("`{name}` is wrong")
    }
}

/// The kit's words for a fingerprint: the title, and the evidence when the fingerprint holds it.
fn kit_words(members: &[&CheckResult], print: &Fingerprint) -> (String, Option<String>) {
    let root = members[0];
    let one = members.len() == 1;
    let method = method_of(members);
    let expected = root.failure.as_ref().and_then(|f| f.expected.as_deref()).unwrap_or("another value");
    let short_message = |m: &str| truncate(m, 48);
    match print {
        Fingerprint::RpcError { code, message, wanted_error: true, .. } => {
            let error = code_words(*code, message.as_deref().map(short_message).as_deref());
            match (one, method) {
                (false, _) => (
                    format!("Errors carry the wrong code: {} where other errors are due", code_words(*code, None)),
                    Some(match due_codes(members) {
                        Some(due) => format!("{error} where {due}"),
                        None => error,
                    }),
                ),
                (true, Some(m)) => (
                    format!(
                        "{m} answers the wrong error: {} where {} is due",
                        code_words(*code, None),
                        due_name(expected)
                    ),
                    Some(error),
                ),
                (true, None) => (
                    format!("The wrong error: {} where {} is due", code_words(*code, None), due_name(expected)),
                    Some(error),
                ),
            }
        }
        Fingerprint::RpcError { code, message, wanted_error: false, .. } => {
            let error = code_words(*code, message.as_deref().map(short_message).as_deref());
            match method {
                Some(m) => (format!("{m} fails with JSON-RPC error {}", code_words(*code, None)), Some(error)),
                None => (format!("Calls fail with JSON-RPC error {}", code_words(*code, None)), Some(error)),
            }
        }
        Fingerprint::NotJsonrpc { status, content_type, wanted, .. } => {
            let http = http_words(*status, content_type.as_deref());
            let words = match (wanted.as_str(), one, method) {
                (WANTED_ERROR, false, _) => format!("Errors are answered {http}, not as JSON-RPC errors"),
                (WANTED_ERROR, true, Some(m)) => format!("{m} answers {http} where a JSON-RPC error is due"),
                (WANTED_ERROR, true, None) => format!("An error is answered {http}, not as a JSON-RPC error"),
                (WANTED_RESULT, _, Some(m)) => format!("{m} fails: {http}"),
                (WANTED_RESULT, true, None) => format!("A call fails: {http}"),
                (WANTED_RESULT, false, None) => format!("Calls fail: {http}"),
                (WANTED_STREAM, _, Some(m)) => format!("{m} answers {http}, not an SSE stream"),
                (WANTED_STREAM, _, None) => format!("Streams are answered {http}, not as SSE"),
                (other, _, Some(m)) => format!("{m} answers {http} where {} is due", truncate(other, MAX_VALUE)),
                (other, _, None) => format!("Calls are answered {http} where {} is due", truncate(other, MAX_VALUE)),
            };
            (words, None)
        }
        Fingerprint::Bare => (
            format!(
                "{} answers a bare Task or Message, not a SendMessageResponse ({{\"task\": …}} or {{\"message\": …}})",
                method.unwrap_or("SendMessage")
            ),
            None,
        ),
        Fingerprint::ErrorDue { code, .. } | Fingerprint::DueAnywhere { code, .. } => {
            let error = code.map_or_else(|| "an error".to_owned(), described);
            let methods = methods_of(members);
            let (subject, verb) = match methods.as_slice() {
                [] => ("The agent".to_owned(), "does"),
                [m] => ((*m).to_owned(), "does"),
                [a, b] => (format!("{a} and {b}"), "do"),
                [a, b, c] => (format!("{a}, {b} and {c}"), "do"),
                _ => ("Calls".to_owned(), "do"),
            };
            let came = what_came(members);
            // One kind of answer is told by the root's own words; several, by their list.
            let evidence = if came.contains(" or ") { Some(format!("answered {came}")) } else { None };
            (format!("{subject} {verb} not return {error} where it is due"), evidence)
        }
        Fingerprint::Seen { name, actual } => {
            let requirement = if root.title.is_empty() { root.id.as_str() } else { root.title.as_str() };
            (format!("{}: {requirement} does not hold", member_seen(name, actual)), None)
        }
        Fingerprint::Missing { pointer } => {
            let name = member_name(pointer).unwrap_or("(root)");
            let words = match (one, method) {
                (true, Some(m)) => format!("{m}'s answer lacks `{name}`"),
                (false, Some(m)) => format!("{m}'s answers lack `{name}`"),
                (true, None) => format!("The answer lacks `{name}`"),
                (false, None) => format!("Answers lack `{name}`"),
            };
            (words, None)
        }
        Fingerprint::Value { pointer, expected, actual } => {
            let name = member_name(pointer).unwrap_or("(root)");
            let evidence = format!(
                "{} at {} where {} is due",
                truncate(actual, MAX_VALUE),
                place(pointer),
                truncate(expected, MAX_VALUE)
            );
            if one {
                return (not_met(root), None);
            }
            let words = match method {
                Some(m) => format!("{m}'s answers have a wrong `{name}`"),
                None => format!("Answers have a wrong `{name}`"),
            };
            (words, Some(evidence))
        }
        Fingerprint::Undecided { message } => (
            format!("Not decided: {}", if root.title.is_empty() { &root.id } else { &root.title }),
            Some(first_line(message)),
        ),
        Fingerprint::Ignored { what } => {
            let words = match what.as_str() {
                "message.taskId" => {
                    "message.taskId is ignored: a message that names a task is answered with another task"
                }
                "message.contextId" => {
                    "message.contextId is ignored: the answer is in another context than the message names"
                }
                _ => "A2A-Version is never checked: a version the agent does not support is served",
            };
            (words.to_owned(), None)
        }
        Fingerprint::WrongError { code, stem, .. } => {
            let error = code_words(*code, stem.as_deref().map(|m| format!("{}…", short_message(m))).as_deref());
            (
                format!("Errors carry the wrong code: {} where other errors are due", code_words(*code, None)),
                Some(match due_codes(members) {
                    Some(due) => format!("{error} where {due}"),
                    None => error,
                }),
            )
        }
        Fingerprint::EnvelopeAnswered { code } => (
            format!(
                "Malformed requests are answered {} instead of JSON-RPC's envelope errors",
                code_words(*code, None)
            ),
            due_codes(members).map(|due| format!("{} where {due}", code_words(*code, None))),
        ),
        // A link between findings tells nothing itself: the root's own reading does.
        Fingerprint::Origin { .. }
        | Fingerprint::Waited { .. }
        | Fingerprint::Said { .. }
        | Fingerprint::Member { .. }
        | Fingerprint::ErrorDetails { .. } => match super::fingerprint::fingerprint(root) {
            own if own.links() || own == Fingerprint::Alone => kit_words(members, &Fingerprint::Alone),
            own => kit_words(members, &own),
        },
        // A failure of its own: the check's name says what was due, its message (the evidence)
        // what the agent did instead.
        Fingerprint::Alone => (not_met(root), None),
    }
}

/// The error a check's `expected` names, by its spec name when it is one code.
fn due_name(expected: &str) -> String {
    match expected.trim().parse::<i64>() {
        Ok(code) => described(code),
        Err(_) => truncate(expected, MAX_VALUE),
    }
}

/// The errors the members wanted, of those that wanted one code: "VersionNotSupportedError
/// (-32009) is due" or "A (…), B (…) and 2 others are due".
fn due_codes(members: &[&CheckResult]) -> Option<String> {
    let mut codes: Vec<i64> = Vec::new();
    let wanted = members.iter().filter_map(|r| r.failure.as_ref()?.expected.as_deref()?.trim().parse::<i64>().ok());
    for code in wanted {
        if !codes.contains(&code) {
            codes.push(code);
        }
    }
    if codes.is_empty() {
        return None;
    }
    let named: Vec<String> = codes.iter().take(2).map(|&c| described(c)).collect();
    Some(match codes.len() {
        1 => format!("{} is due", named[0]),
        2 => format!("{} and {} are due", named[0], named[1]),
        3 => format!("{}, {} and 1 other are due", named[0], named[1]),
        n => format!("{}, {} and {} others are due", named[0], named[1], n - 2),
    })
}

/// The JSON-RPC methods the members failed on, each once, in their order.
fn methods_of<'a>(members: &[&'a CheckResult]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for m in members.iter().filter_map(|r| failing_reply(r).and_then(|x| x.method.as_deref())) {
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// What the members got where an error was due, each kind once: "a result or -32001 'Task not found'".
fn what_came(members: &[&CheckResult]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for reply in members.iter().filter_map(|r| failing_reply(r)) {
        let what = match reply.kind {
            ReplyKind::Result => "a result".to_owned(),
            ReplyKind::Stream => "a stream of results".to_owned(),
            ReplyKind::Error => code_words(reply.code, reply.message.as_deref().map(|m| truncate(m, 48)).as_deref()),
            ReplyKind::NotJsonrpc => "no JSON-RPC answer".to_owned(),
        };
        if !seen.contains(&what) {
            seen.push(what);
        }
    }
    match seen.len() {
        0 => "something else".to_owned(),
        1 => seen.remove(0),
        _ => {
            let last = seen.pop().unwrap_or_default();
            format!("{} or {last}", seen.join(", "))
        }
    }
}

/// The JSON-RPC method every member failed on, when they all failed on the same one.
fn method_of<'a>(members: &[&'a CheckResult]) -> Option<&'a str> {
    let mut methods = members.iter().map(|r| failing_reply(r).and_then(|x| x.method.as_deref()));
    let first = methods.next()??;
    methods.all(|m| m == Some(first)).then_some(first)
}

fn place(pointer: &str) -> &str {
    if pointer.is_empty() { "the root" } else { pointer }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{CheckMeta, Evidence, Failure, Outcome, Reply};

    fn failed_call(id: &str, method: Option<&str>, wanted: &str) -> CheckResult {
        CheckResult {
            failure: Some(Failure {
                message: "the answer is not JSON-RPC".into(),
                step_id: Some("s".into()),
                expected: Some(wanted.into()),
                actual: Some("HTTP 500 text/plain".into()),
                ..Failure::default()
            }),
            evidence: vec![Evidence {
                step_id: Some("s".into()),
                status: Some(500),
                response_headers: vec!["content-type: text/plain".into()],
                reply: Some(Reply { method: method.map(str::to_owned), ..Reply::default() }),
                ..Evidence::default()
            }],
            ..CheckResult::new(&CheckMeta::sample(id), Outcome::Fail)
        }
    }

    fn told(members: &[CheckResult], waiting: usize) -> Told {
        let refs: Vec<&CheckResult> = members.iter().collect();
        let skip = CheckResult::new(&CheckMeta::sample("D"), Outcome::Skip);
        let waiting: Vec<&CheckResult> = std::iter::repeat_n(&skip, waiting).collect();
        of(&refs, &waiting, &crate::report::fingerprint::fingerprint(&members[0]))
    }

    fn headline(members: &[CheckResult], waiting: usize) -> String {
        told(members, waiting).title
    }

    #[test]
    fn a_broken_call_is_told_by_its_method_and_what_came_back() {
        let send = failed_call("CORE-SEND-001", Some("SendMessage"), WANTED_RESULT);
        assert_eq!(
            headline(std::slice::from_ref(&send), 16),
            "SendMessage fails: HTTP 500 text/plain (16 checks wait on it)"
        );
        assert_eq!(headline(&[send], 0), "SendMessage fails: HTTP 500 text/plain");
        let errors: Vec<CheckResult> = (0..9).map(|i| failed_call(&format!("E{i}"), None, WANTED_ERROR)).collect();
        assert_eq!(headline(&errors, 0), "Errors are answered HTTP 500 text/plain, not as JSON-RPC errors (9 checks)");
        assert_eq!(
            headline(&errors[..2], 3),
            "Errors are answered HTTP 500 text/plain, not as JSON-RPC errors (2 checks; 3 more wait on them)"
        );
        let stream = failed_call("S", Some("SendStreamingMessage"), WANTED_STREAM);
        assert_eq!(
            headline(&[stream], 1),
            "SendStreamingMessage answers HTTP 500 text/plain, not an SSE stream (1 check waits on it)"
        );
    }

    #[test]
    fn a_failure_of_its_own_is_its_requirement_not_met_and_its_words_are_the_evidence() {
        let long = format!(
            "suite data: {}: Additional properties are not allowed ('expect_eror' was unexpected)",
            "/x".repeat(80)
        );
        let r = CheckResult {
            failure: Some(Failure { message: format!("{long}\nsecond line"), ..Failure::default() }),
            title: "Streams end with a final event".into(),
            ..CheckResult::new(&CheckMeta::sample("X"), Outcome::Error)
        };
        let t = told(&[r], 0);
        assert_eq!(t.title, "Not decided: Streams end with a final event");
        // One line of evidence, cut to a line's length.
        let evidence = t.evidence.unwrap();
        assert!(evidence.starts_with("suite data: /x/x") && evidence.chars().count() <= MAX_EVIDENCE, "{evidence}");
        let told_own =
            CheckResult { headline: Some("the agent speaks 0.3".into()), ..failed_call("A", None, WANTED_RESULT) };
        assert_eq!(headline(&[told_own], 2), "The agent speaks 0.3 (2 checks wait on it)");
        // A title never runs past one line, however long what it names.
        let wordy = CheckResult { title: "word ".repeat(60), ..with_failure("W", "it broke") };
        let t = told(&[wordy], 0);
        assert!(t.title.chars().count() <= MAX_TITLE + 1, "{}", t.title);
        assert_eq!(t.evidence.as_deref(), Some("W: it broke"));
    }

    fn with_failure(id: &str, message: &str) -> CheckResult {
        CheckResult {
            failure: Some(Failure { message: message.into(), ..Failure::default() }),
            ..CheckResult::new(&CheckMeta::sample(id), Outcome::Fail)
        }
    }
}

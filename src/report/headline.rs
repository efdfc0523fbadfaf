//! A root cause in one line of plain words: what the agent did, where it matters, and how many
//! checks it decides ("Errors are answered with code -32000 'Server error' (31 checks)", "SendMessage
//! fails: HTTP 500 text/plain (16 checks wait on it)"). A result that carries its own `headline`, or
//! a diagnosis that explains the root, says it better than the kit's reading of the fingerprint.

use super::diagnosis::DIAGNOSES;
use super::errors::described;
use super::fingerprint::{Fingerprint, code_words, failing_reply, http_words};
use super::model::{CheckResult, ReplyKind, WANTED_ERROR, WANTED_RESULT, WANTED_STREAM};
use super::text::truncate;

/// Longest value (an expected or actual JSON, an error message) quoted inside a headline; the
/// finding below it gives the whole.
const MAX_VALUE: usize = 60;
/// Longest error message quoted inside a headline: an agent's message says what it meant, and
/// its end (the state it saw) is often the point.
const MAX_MESSAGE: usize = 160;

/// The headline of the cause whose findings are `members` (the root first) and that leaves
/// `waiting` undecided; `print` is the root's fingerprint.
pub fn of(members: &[&CheckResult], waiting: &[&CheckResult], print: &Fingerprint) -> String {
    let is_diagnosis = |r: &CheckResult| DIAGNOSES.iter().any(|(d, _)| *d == r.id);
    let told = members.iter().find_map(|r| r.headline.clone()).or_else(|| {
        members.iter().find(|r| is_diagnosis(r)).and_then(|r| r.failure.as_ref()).map(|f| first_line(&f.message))
    });
    let decided: Vec<&CheckResult> = members.iter().copied().filter(|r| !is_diagnosis(r)).collect();
    let decided = if decided.is_empty() { members.to_vec() } else { decided };
    let words = told.unwrap_or_else(|| kit_words(&decided, print));
    format!("{}{}", capitalized(&words), counts(decided.len(), waiting.len()))
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

/// The kit's words for a fingerprint.
fn kit_words(members: &[&CheckResult], print: &Fingerprint) -> String {
    let root = members[0];
    let one = members.len() == 1;
    let method = method_of(members);
    let expected = root.failure.as_ref().and_then(|f| f.expected.as_deref()).unwrap_or("another value");
    match print {
        Fingerprint::RpcError { code, message, wanted_error: true } => {
            let error = code_words(*code, message.as_deref().map(|m| truncate(m, MAX_MESSAGE)).as_deref());
            match (one, method) {
                (false, _) => match due_codes(members) {
                    Some(due) => format!("Errors are answered with code {error} where {due}"),
                    None => format!("Errors are answered with code {error}"),
                },
                (true, Some(m)) => format!("{m} answers error {error} where {} is due", truncate(expected, MAX_VALUE)),
                (true, None) => {
                    format!("An error is answered with code {error} where {} is due", truncate(expected, MAX_VALUE))
                }
            }
        }
        Fingerprint::RpcError { code, message, wanted_error: false } => {
            let error = code_words(*code, message.as_deref().map(|m| truncate(m, MAX_MESSAGE)).as_deref());
            match (one, method) {
                (_, Some(m)) => format!("{m} fails: JSON-RPC error {error}"),
                (true, None) => format!("A call fails: JSON-RPC error {error}"),
                (false, None) => format!("Calls fail with JSON-RPC error {error}"),
            }
        }
        Fingerprint::NotJsonrpc { status, content_type, wanted } => {
            let http = http_words(*status, content_type.as_deref());
            match (wanted.as_str(), one, method) {
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
            }
        }
        Fingerprint::Bare => format!(
            "{} answers a bare Task or Message where {{\"task\": …}} or {{\"message\": …}} is due (SendMessageResponse, §10.4.1)",
            method.unwrap_or("SendMessage")
        ),
        Fingerprint::ErrorDue { code, .. } | Fingerprint::DueAnywhere { code } => {
            let error = code.map_or_else(|| "an error".to_owned(), described);
            let methods = methods_of(members);
            let (subject, verb, pronoun) = match methods.as_slice() {
                [] => ("The agent".to_owned(), "does", "it"),
                [m] => ((*m).to_owned(), "does", "it"),
                [a, b] => (format!("{a} and {b}"), "do", "they"),
                [a, b, c] => (format!("{a}, {b} and {c}"), "do", "they"),
                _ => ("Calls".to_owned(), "do", "they"),
            };
            let answers = if pronoun == "it" { "answers" } else { "answer" };
            format!("{subject} {verb} not return {error} where it is due: {pronoun} {answers} {}", what_came(members))
        }
        Fingerprint::Seen { name, actual } => {
            let seen = match serde_json::from_str::<serde_json::Value>(actual) {
                Ok(serde_json::Value::Array(a)) => {
                    format!("holds {} entr{}", a.len(), if a.len() == 1 { "y" } else { "ies" })
                }
                _ => format!("is {}", truncate(actual, MAX_VALUE)),
            };
            let mut titles: Vec<&str> = members.iter().map(|r| r.title.as_str()).filter(|t| !t.is_empty()).collect();
            let more = titles.len() > 3;
            titles.truncate(3);
            let titles = format!("{}{}", titles.join("; "), if more { "; …" } else { "" });
            if titles.is_empty() {
                format!("`{name}` {seen}")
            } else {
                format!("`{name}` {seen}, which these checks do not accept: {titles}")
            }
        }
        Fingerprint::Missing { pointer } => match (one, method) {
            (true, Some(m)) => format!("{m}'s answer lacks {}", place(pointer)),
            (false, Some(m)) => format!("{m}'s answers lack {}", place(pointer)),
            (true, None) => format!("The answer lacks {}", place(pointer)),
            (false, None) => format!("Answers lack {}", place(pointer)),
        },
        // One wrong value is told best by the check's own words, which say what the value means.
        Fingerprint::Value { .. } if one && root.failure.as_ref().is_some_and(|f| !f.message.is_empty()) => {
            let m = root.failure.as_ref().map(|f| first_line(&f.message)).unwrap_or_default();
            if root.title.is_empty() { m } else { format!("{}: {m}", root.title) }
        }
        Fingerprint::Value { pointer, expected, actual } => {
            let (e, a) = (truncate(expected, MAX_VALUE), truncate(actual, MAX_VALUE));
            match (one, method) {
                (true, Some(m)) => format!("{m}'s answer has {a} at {} where {e} is due", place(pointer)),
                (false, Some(m)) => format!("{m}'s answers have {a} at {} where {e} is due", place(pointer)),
                (true, None) => format!("The answer has {a} at {} where {e} is due", place(pointer)),
                (false, None) => format!("Answers have {a} at {} where {e} is due", place(pointer)),
            }
        }
        Fingerprint::Undecided { message } => format!("Could not be decided: {}", first_line(message)),
        Fingerprint::Ignored { what } => match what.as_str() {
            "message.taskId" => "message.taskId is ignored: a message that names a task is answered with another \
                                 task (§3.4.2: it MUST reference an existing task)"
                .to_owned(),
            "message.contextId" => "message.contextId is ignored: the answer is in another context than the one \
                                    the message names (§3.4.3)"
                .to_owned(),
            _ => "A2A-Version is never checked: a version the agent does not support is served (§3.6.2: MUST \
                  return VersionNotSupportedError)"
                .to_owned(),
        },
        Fingerprint::WrongError { code, stem, .. } => {
            let error = code_words(*code, stem.as_deref().map(|m| format!("{}…", truncate(m, MAX_MESSAGE))).as_deref());
            match due_codes(members) {
                Some(due) => format!("Errors are answered with code {error} where {due}"),
                None => format!("Errors are answered with code {error} where another error is due"),
            }
        }
        // A link between findings tells nothing itself: the root's own reading does.
        Fingerprint::Origin { .. }
        | Fingerprint::Said { .. }
        | Fingerprint::Member { .. }
        | Fingerprint::ErrorDetails { .. } => match super::fingerprint::fingerprint(root) {
            own if own.links() || own == Fingerprint::Alone => kit_words(members, &Fingerprint::Alone),
            own => kit_words(members, &own),
        },
        // A failure of its own is told in its own words, whole: they are the reason.
        // The check's name says what was due, its message what the agent did instead.
        Fingerprint::Alone => match root.failure.as_ref().map(|f| first_line(&f.message)) {
            Some(m) if !m.is_empty() && !root.title.is_empty() => format!("{}: {m}", root.title),
            Some(m) if !m.is_empty() => m,
            _ => root.title.clone(),
        },
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
            ReplyKind::Error => {
                code_words(reply.code, reply.message.as_deref().map(|m| truncate(m, MAX_MESSAGE)).as_deref())
            }
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

    fn headline(members: &[CheckResult], waiting: usize) -> String {
        let refs: Vec<&CheckResult> = members.iter().collect();
        let skip = CheckResult::new(&CheckMeta::sample("D"), Outcome::Skip);
        let waiting: Vec<&CheckResult> = std::iter::repeat_n(&skip, waiting).collect();
        of(&refs, &waiting, &crate::report::fingerprint::fingerprint(&members[0]))
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
    fn a_failure_of_its_own_is_told_whole_in_its_words() {
        let long = format!(
            "suite data: {}: Additional properties are not allowed ('expect_eror' was unexpected)",
            "/x".repeat(80)
        );
        let r = CheckResult {
            failure: Some(Failure { message: format!("{long}\nsecond line"), ..Failure::default() }),
            ..CheckResult::new(&CheckMeta::sample("X"), Outcome::Error)
        };
        assert_eq!(headline(&[r], 0), format!("Could not be decided: {long}"));
        let told =
            CheckResult { headline: Some("the agent speaks 0.3".into()), ..failed_call("A", None, WANTED_RESULT) };
        assert_eq!(headline(&[told], 2), "The agent speaks 0.3 (2 checks wait on it)");
    }
}

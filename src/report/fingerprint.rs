//! What a finding shares with others that failed for the same reason: its fingerprint, computed
//! from what the result holds (the failure's pointer, expected and actual, and the structured
//! [`Reply`] of the exchange that failed), never from the wording of its message.

use std::fmt;

use super::errors::described;
use super::model::{CheckResult, Evidence, Outcome, Reply, ReplyKind, WANTED_ERROR, WANTED_RESULT, WANTED_STREAM};

/// Why a finding failed, in terms other findings can share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fingerprint {
    /// The agent answered JSON-RPC error `code` / `message`: where another error was due
    /// (`wanted_error`), or where a result was.
    /// `method` names the call when a result was due: one operation that fails is not another's
    /// failure, while one wrong error where errors are due is one mapping whichever method.
    RpcError { code: Option<i64>, message: Option<String>, wanted_error: bool, method: Option<String> },
    /// A JSON-RPC call got an answer that is not JSON-RPC, where `wanted` was due. `method` names
    /// the call when a result was due: one operation that crashes is not another's crash, while
    /// errors answered as HTTP pages are one error path whichever method took them.
    NotJsonrpc { status: Option<u16>, content_type: Option<String>, wanted: String, method: Option<String> },
    /// A result the proto wraps (`SendMessageResponse`: `{"task": …}` or `{"message": …}`)
    /// answered bare, without either member: every check that reads the wrapper fails on it.
    Bare,
    /// The error `code` (any error, when the check accepts several) was due from `method` and did
    /// not come: a result, a stream or another error came instead. `method` is `None` for errors
    /// decided before any method runs (the version header, the envelope).
    /// `wrong` tells an error with another code from a request served (a result, a stream, the
    /// lookup of the probe's missing task): a wrong mapping and a check not made are two stories.
    ErrorDue { code: Option<i64>, method: Option<String>, wrong: bool },
    /// A field the answers lack.
    Missing { pointer: String },
    /// The same value at the same place where another was expected.
    Value { pointer: String, expected: String, actual: String },
    /// The same value in a member of the same name, wherever the member stands (`history` of a Task
    /// in a GetTask result, in a SendMessageResponse, in a page of ListTasks): checks that each
    /// expect something else of it fail on one thing the agent does.
    Seen { name: String, actual: String },
    /// The kit could not decide, for the same stated reason (an agent that stopped answering).
    Undecided { message: String },
    /// The agent did not do what a member of the request asked (`message.taskId`,
    /// `message.contextId`, the `A2A-Version` service parameter), as the exchange shows: the answer
    /// is about another task or context, or an unsupported version was served.
    Ignored { what: String },
    /// The same error (its code, and its message up to the first colon) answered where another
    /// error is due, whichever method and whatever error: an agent's one wrong mapping.
    WrongError { code: Option<i64>, due: Option<i64>, stem: Option<String> },
    /// A catch-all finding (every payload's schema, every answer's id) whose first instance was
    /// seen in the exchanges of `check`; every finding also has its own check's: the catch-all
    /// then tells nothing the finding does not.
    Origin { check: String },
    /// Error `code` answered where one of JSON-RPC's envelope errors (-32700, -32600, -32601) is
    /// due, whichever: an agent's one way of refusing what it cannot parse.
    EnvelopeAnswered { code: Option<i64> },
    /// A catch-all whose first instance was seen in the exchanges of `check`, which waits on a
    /// finding: seen there because of it. Only catch-alls link this way; a check's own failure
    /// is no instance of the finding it waits on.
    Waited { check: String },

    /// The same words of the kit's for a finding that has no place to point at (the order of a
    /// stream's events, say).
    Said { message: String },
    /// The error `code` due and not returned by any method of one `family` (the message methods,
    /// the task methods, the push-config methods): links findings the precise
    /// [`Fingerprint::ErrorDue`] told apart by method. Another family is another handler: an
    /// unknown task looked up by no push-config method is not a message's task id ignored.
    DueAnywhere { code: Option<i64>, family: &'static str },
    /// Findings about the details of one error answer (its code and message): checks that each
    /// want something else of the same `data` (an array, `@type`, an ErrorInfo) read one thing the
    /// agent does; which error came is another story ([`Fingerprint::RpcError`]).
    ErrorDetails { code: Option<i64>, message: Option<String> },
    /// Findings about members of one name, wherever they stand: the coarsest reading, grouping
    /// only what nothing more precise did.
    Member { name: String },
    /// Nothing another finding could share: the finding is a cause of its own.
    Alone,
}

impl Fingerprint {
    /// The fingerprint as findings are grouped by it, with the values a run makes up (ids, ports,
    /// times) blanked, so that two runs of one agent group alike and give the same ids; `None` for
    /// [`Fingerprint::Alone`].
    pub fn key(&self) -> Option<String> {
        let blank = |s: &String| volatile_blanked(s);
        // Only the agent's free text is blanked: codes and statuses are the story.
        let blanked = match self {
            Fingerprint::RpcError { code, message, wanted_error, method } => Fingerprint::RpcError {
                code: *code,
                message: message.as_ref().map(blank),
                wanted_error: *wanted_error,
                method: method.clone(),
            },
            Fingerprint::NotJsonrpc { .. }
            | Fingerprint::Bare
            | Fingerprint::ErrorDue { .. }
            | Fingerprint::DueAnywhere { .. } => self.clone(),
            // Every number goes: a time, a count or an id in the value is what a run made up, while
            // its form (an offset where `Z` is due, a lowercase enum) is the story.
            Fingerprint::Seen { name, actual } => {
                Fingerprint::Seen { name: name.clone(), actual: digits_blanked(&blank(actual)) }
            }
            Fingerprint::Missing { pointer } => Fingerprint::Missing { pointer: blank(pointer) },
            Fingerprint::Value { pointer, expected, actual } => {
                Fingerprint::Value { pointer: blank(pointer), expected: blank(expected), actual: blank(actual) }
            }
            Fingerprint::Undecided { message } => Fingerprint::Undecided { message: blank(message) },
            Fingerprint::WrongError { code, due, stem } => Fingerprint::WrongError {
                code: *code,
                due: *due,
                stem: stem.as_ref().map(|s| names_blanked(&blank(s))),
            },
            Fingerprint::Said { message } => Fingerprint::Said { message: digits_blanked(&blank(message)) },
            Fingerprint::ErrorDetails { code, message } => {
                Fingerprint::ErrorDetails { code: *code, message: message.as_ref().map(blank) }
            }
            Fingerprint::Ignored { .. }
            | Fingerprint::Origin { .. }
            | Fingerprint::Waited { .. }
            | Fingerprint::EnvelopeAnswered { .. }
            | Fingerprint::Member { .. } => self.clone(),
            Fingerprint::Alone => return None,
        };
        Some(blanked.to_string())
    }
}

/// The form `report.json` carries in a cause's `fingerprint`.
impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fingerprint::RpcError { code, message, wanted_error, method } => {
                write!(f, "JSON-RPC error {}", code_words(*code, message.as_deref()))?;
                f.write_str(if *wanted_error { " where another error is due" } else { " where a result is due" })?;
                match method {
                    Some(m) => write!(f, " from {m}"),
                    None => Ok(()),
                }
            }
            Fingerprint::NotJsonrpc { status, content_type, wanted, method } => {
                write!(f, "{} where {wanted} is due", http_words(*status, content_type.as_deref()))?;
                match method {
                    Some(m) => write!(f, " from {m}"),
                    None => Ok(()),
                }
            }
            Fingerprint::Bare => f.write_str("a bare result where {\"task\": …} or {\"message\": …} is due"),
            Fingerprint::ErrorDue { code, method, wrong } => {
                let error = code.map_or_else(|| "an error".to_owned(), described);
                match method {
                    Some(m) => write!(f, "{error} due from {m}, not returned"),
                    None => write!(f, "{error} due, not returned"),
                }?;
                f.write_str(if *wrong { ": another error came" } else { ": the request was served" })
            }
            Fingerprint::DueAnywhere { code, family } => {
                let error = code.map_or_else(|| "an error".to_owned(), described);
                write!(f, "{error} due from the {family} methods, not returned")
            }
            Fingerprint::Seen { name, actual } => write!(f, "{name} is {actual}"),
            Fingerprint::Missing { pointer } => write!(f, "{} is missing", place(pointer)),
            Fingerprint::Value { pointer, expected, actual } => {
                write!(f, "{} is {actual} where {expected} is due", place(pointer))
            }
            Fingerprint::Undecided { message } => write!(f, "undecided: {message}"),
            Fingerprint::Ignored { what } => write!(f, "{what} ignored"),
            Fingerprint::WrongError { code, due, stem } => {
                write!(f, "JSON-RPC error {}", code_words(*code, stem.as_deref()))?;
                match due {
                    Some(d) => write!(f, " where {} is due", described(*d)),
                    None => f.write_str(" where another error is due"),
                }
            }
            Fingerprint::Origin { check } => write!(f, "seen first in {check}"),
            Fingerprint::EnvelopeAnswered { code } => {
                write!(f, "JSON-RPC error {} where an envelope error is due", code_words(*code, None))
            }
            Fingerprint::Waited { check } => write!(f, "seen first in {check}, which waits on it"),
            Fingerprint::Said { message } => f.write_str(message),
            Fingerprint::ErrorDetails { code, message } => {
                write!(f, "the details of JSON-RPC error {}", code_words(*code, message.as_deref()))
            }
            Fingerprint::Member { name } => write!(f, "`{name}`"),
            Fingerprint::Alone => f.write_str("its own"),
        }
    }
}

impl Fingerprint {
    /// How precise a reading it is: findings are grouped by the precise readings first (0), then
    /// by what links them (1: where a catch-all first saw its instance, the same words), and last
    /// by the members they are about (2).
    pub fn tier(&self) -> u8 {
        match self {
            Fingerprint::Origin { .. }
            | Fingerprint::Waited { .. }
            | Fingerprint::Said { .. }
            | Fingerprint::DueAnywhere { .. }
            | Fingerprint::ErrorDetails { .. } => 1,
            Fingerprint::Member { .. } => 2,
            _ => 0,
        }
    }

    /// Whether it only links findings, so that their cause is told by its root's own reading.
    pub fn links(&self) -> bool {
        self.tier() > 0
    }
}

/// `-32603 'Internal error'`.
pub fn code_words(code: Option<i64>, message: Option<&str>) -> String {
    let code = code.map_or_else(|| "without a code".to_owned(), |c| c.to_string());
    match message {
        Some(m) => format!("{code} '{m}'"),
        None => code,
    }
}

/// `HTTP 500 text/plain`.
pub fn http_words(status: Option<u16>, content_type: Option<&str>) -> String {
    let status = status.map_or_else(|| "no HTTP status".to_owned(), |s| format!("HTTP {s}"));
    format!("{status} {}", content_type.unwrap_or("without a content type"))
}

fn place(pointer: &str) -> &str {
    if pointer.is_empty() { "(root)" } else { pointer }
}

/// Whether two findings of one check over two bindings fail for one reason: their fingerprints
/// are of one kind about one thing (the same error code, the same member, the same HTTP status),
/// whatever words each binding's answer has, or they share a precise reading.
pub fn same_story(a: &CheckResult, b: &CheckResult) -> bool {
    fn class(p: &Fingerprint) -> String {
        match p {
            Fingerprint::RpcError { code, wanted_error, .. } => format!("rpc {code:?} {wanted_error}"),
            Fingerprint::WrongError { code, .. } => format!("rpc {code:?} true"),
            Fingerprint::ErrorDue { code, .. } | Fingerprint::DueAnywhere { code, .. } => format!("due {code:?}"),
            Fingerprint::NotJsonrpc { status, .. } => format!("http {status:?}"),
            Fingerprint::Value { pointer, .. } | Fingerprint::Missing { pointer } => {
                format!("at {}", member_name(pointer).unwrap_or(pointer))
            }
            Fingerprint::Seen { name, .. } | Fingerprint::Member { name } => format!("at {name}"),
            Fingerprint::Alone => "alone".to_owned(),
            other => other.key().unwrap_or_default(),
        }
    }
    let (pa, pb) = (fingerprint(a), fingerprint(b));
    if pa != Fingerprint::Alone && class(&pa) == class(&pb) {
        return true;
    }
    let precise = |r: &CheckResult| -> Vec<String> {
        candidates(r).into_iter().filter(|p| p.tier() == 0).filter_map(|p| p.key()).collect()
    };
    let kb = precise(b);
    // Two failures of their own are one story when the kit said the same of both.
    let said = |r: &CheckResult| r.failure.as_ref().map(|f| digits_blanked(f.message.lines().next().unwrap_or("")));
    precise(a).iter().any(|k| kb.contains(k))
        || (pa == Fingerprint::Alone && pb == Fingerprint::Alone && said(a) == said(b))
}

/// Whether a result is a finding: it failed, warned or could not be decided, or a MAY (or a check
/// with no keyword sentence) found a violation.
pub fn is_finding(r: &CheckResult) -> bool {
    matches!(r.outcome, Outcome::Fail | Outcome::Warn | Outcome::Error)
        || (r.outcome == Outcome::Info && r.failure.is_some())
}

/// The exchange a finding failed on: the last one of its failing step, or the only one it kept.
pub fn failing_exchange(r: &CheckResult) -> Option<&Evidence> {
    let step = r.failure.as_ref()?.step_id.as_deref();
    match step {
        // A step that only asserts on an earlier answer exchanged nothing itself: with one
        // exchange in the check, that is the answer it judged.
        Some(s) => r
            .evidence
            .iter()
            .rev()
            .find(|e| e.step_id.as_deref() == Some(s))
            .or_else(|| (r.evidence.len() == 1).then(|| &r.evidence[0])),
        None if r.evidence.len() == 1 => r.evidence.first(),
        None => None,
    }
}

/// The JSON-RPC call a finding failed on, when it was one.
pub fn failing_reply(r: &CheckResult) -> Option<&Reply> {
    failing_exchange(r).and_then(|e| e.reply.as_ref())
}

/// A failure at the result's root or at its `task` / `message` member, of an answer whose result
/// has neither member but a Task's or a Message's own (`id`, `status`; `messageId`, `parts`).
fn is_bare(pointer: Option<&str>, exchange: Option<&Evidence>) -> bool {
    if !matches!(pointer, Some("" | "/task" | "/message")) {
        return false;
    }
    let Some(body) = exchange.and_then(|e| e.response_body.as_deref()) else { return false };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else { return false };
    let Some(result) = v.get("result").and_then(serde_json::Value::as_object) else { return false };
    let own = |k: &str| result.contains_key(k);
    !own("task") && !own("message") && ((own("id") && own("status")) || (own("messageId") && own("parts")))
}

/// The fingerprint of a finding (of any result: one that is no finding is [`Fingerprint::Alone`]).
pub fn fingerprint(r: &CheckResult) -> Fingerprint {
    let Some(f) = r.failure.as_ref().filter(|_| is_finding(r)) else {
        return Fingerprint::Alone;
    };
    let exchange = failing_exchange(r);
    if let Some(reply) = exchange.and_then(|e| e.reply.as_ref()) {
        let pointer = f.pointer.as_deref();
        // The failure is about which error came when it points at the error or its code, or says
        // nothing more precise; one about the error's message or details is about those members
        // (an error without an ErrorInfo is not a wrong error).
        let about_error = matches!(pointer, Some("/error" | "/error/code"))
            || (pointer.is_none() && f.expected.is_none() && f.actual.is_none());
        // TaskNotFoundError to a probe about a task that does not exist is the answer of a
        // request that was served: the story is the refusal that did not come, not the error.
        let served = reply.code == Some(TASK_NOT_FOUND) && pointer == Some("/error/code");
        if reply.kind == ReplyKind::Error && about_error && !served {
            let wanted_error = pointer == Some("/error/code");
            return Fingerprint::RpcError {
                code: reply.code,
                message: reply.message.clone(),
                wanted_error,
                method: reply.method.clone().filter(|_| !wanted_error),
            };
        }
        // Not JSON-RPC is the story when the failure is about the kind of answer (no place in
        // it, or a kind of answer due), not about a value read from it.
        let about_kind = pointer.is_none()
            || f.expected.as_deref().is_some_and(|e| [WANTED_ERROR, WANTED_RESULT, WANTED_STREAM].contains(&e));
        if reply.kind == ReplyKind::NotJsonrpc && about_kind {
            let wanted = f.expected.clone().unwrap_or_else(|| "a JSON-RPC answer".to_owned());
            let method = reply.method.clone().filter(|_| wanted != WANTED_ERROR);
            return Fingerprint::NotJsonrpc {
                status: exchange.and_then(|e| e.status),
                content_type: exchange.and_then(content_type),
                wanted,
                method,
            };
        }
    }
    if exchange.and_then(|e| e.reply.as_ref()).is_some_and(|x| {
        x.kind == ReplyKind::Result && matches!(x.method.as_deref(), Some("SendMessage" | "SendStreamingMessage"))
    }) && is_bare(f.pointer.as_deref(), exchange)
    {
        return Fingerprint::Bare;
    }
    if let Some(due) = error_due(r) {
        return due;
    }
    match (&f.pointer, &f.expected, &f.actual) {
        // A member missing at the root of what a check read (a header, a whole answer) names no
        // field another finding could share.
        (Some(p), _, Some(a)) if a == "<absent>" && !p.is_empty() => Fingerprint::Missing { pointer: p.clone() },
        (Some(p), _, Some(a)) if a == "<absent>" => Fingerprint::Alone,
        (Some(p), Some(e), Some(a)) => {
            Fingerprint::Value { pointer: p.clone(), expected: e.clone(), actual: a.clone() }
        }
        _ if r.outcome == Outcome::Error => Fingerprint::Undecided { message: f.message.clone() },
        _ => Fingerprint::Alone,
    }
}

/// Every fingerprint a finding can be grouped by, the one that tells it best first: the error an
/// agent answered where another was due is also the error that did not come, and a wrong value is
/// also the value seen in that member. Causes take, of these, the one most findings share.
pub fn candidates(r: &CheckResult) -> Vec<Fingerprint> {
    let first = fingerprint(r);
    if !is_finding(r) {
        return vec![first];
    }
    let mut all = Vec::new();
    all.extend(ignored(r));
    all.push(first.clone());
    match &first {
        Fingerprint::RpcError { wanted_error: true, .. } => {
            all.extend(wrong_error(r));
            all.extend(error_due(r));
        }
        Fingerprint::ErrorDue { code, method, .. } => {
            all.extend(wrong_error(r));
            // A result where one error is due, whichever method of one handler answered it: one
            // story across those methods, linked after the precise readings.
            if let (Some(_), Some(m)) = (code, method) {
                all.push(Fingerprint::DueAnywhere { code: *code, family: family(m) });
            }
        }
        Fingerprint::Value { pointer, actual, .. } => {
            // A catch-all lists its instances: the value of the first is what it saw.
            let actual = instance_value(actual).unwrap_or_else(|| actual.clone());
            // Without a member's name (an event at `/0`), the place itself names what was seen.
            if let Some(name) = member_name(pointer).or((!pointer.is_empty()).then_some(pointer.as_str())) {
                all.push(Fingerprint::Seen { name: name.to_owned(), actual });
            }
        }
        Fingerprint::Alone => {
            if let Some(m) = r.failure.as_ref().map(|f| f.message.lines().next().unwrap_or("").to_owned())
                && !m.is_empty()
            {
                all.push(Fingerprint::Said { message: m });
            }
        }
        _ => {}
    }
    all.extend(error_details(r));
    // The check's own id, binding and all: a check failing over HTTP+JSON for another reason than
    // over JSON-RPC is another story ([`same_story`] links the twins that are one).
    let own = r.id.clone();
    let seen = first_seen_in(r).filter(|_| !OWN_STORY.contains(&plain_id(&r.id)));
    if let Some(check) = &seen {
        all.push(Fingerprint::Waited { check: check.clone() });
    }
    all.push(Fingerprint::Origin { check: seen.unwrap_or(own) });
    // The envelope's members (a result where an error is due, an error's code) are where every
    // answer of the wrong kind is: they name no member of the data model two findings could share.
    if let Some(pointer) = r.failure.as_ref().and_then(|f| f.pointer.as_deref())
        && !matches!(pointer, "/result" | "/error" | "/error/code")
        && let Some(name) = member_name(pointer)
    {
        // An id names its own object: ids are one story only at one place.
        let name = if name == "id" { digits_blanked(pointer) } else { name.to_owned() };
        all.push(Fingerprint::Member { name });
    }
    all
}

/// Catch-alls that judge what no other check judges on the exchanges they read (an HTTP+JSON
/// error's status: REST-ERR-002's probe aside, which it defers to; the form of every JSON-RPC
/// error's `data`), so that the check whose exchange showed the first instance failed, if it did,
/// for another reason: which error came is not what its details look like.
const OWN_STORY: &[&str] = &["KIT-ERR-022", "KIT-ERR-020"];

/// [`Fingerprint::ErrorDetails`] of a finding about an error's `data` (a pointer into it, or a
/// failure that names `error.data`).
fn error_details(r: &CheckResult) -> Option<Fingerprint> {
    let f = r.failure.as_ref()?;
    let about_data = match f.pointer.as_deref() {
        Some(p) => p.starts_with("/error/data"),
        None => f.message.contains("error.data"),
    };
    let reply = failing_reply(r).filter(|x| about_data && x.kind == ReplyKind::Error)?;
    Some(Fingerprint::ErrorDetails { code: reply.code, message: reply.message.clone() })
}

/// The check id of `id` whatever binding graded it.
fn plain_id(id: &str) -> &str {
    id.strip_suffix(']').and_then(|b| b.rsplit_once('[')).map_or(id, |(plain, _)| plain)
}

/// For a catch-all finding (its failure names no step, its `actual` lists instances as
/// `CHECK / step: …`), the check whose exchange showed the first instance.
fn first_seen_in(r: &CheckResult) -> Option<String> {
    let f = r.failure.as_ref()?;
    if f.step_id.is_some() {
        return None;
    }
    let first = f.actual.as_deref()?.lines().next()?;
    let (check, _) = first.split_once(" / ")?;
    let check = check.trim();
    (!check.is_empty() && !check.contains(' ')).then(|| check.to_owned())
}

/// [`Fingerprint::WrongError`]s of a finding that got an error where another was due: the code
/// answered for the one code due (when the check wanted one), and the code with the stem of its
/// message (whatever was due).
fn wrong_error(r: &CheckResult) -> Vec<Fingerprint> {
    let Some(reply) = failing_reply(r).filter(|x| x.kind == ReplyKind::Error) else { return Vec::new() };
    let due = r.failure.as_ref().and_then(|f| f.expected.as_deref()).and_then(single_code);
    let stem = reply.message.as_deref().map(|m| m.split([':', ';']).next().unwrap_or(m).trim().to_owned());
    let mut out = Vec::new();
    if due.is_some() && due != reply.code {
        out.push(Fingerprint::WrongError { code: reply.code, due, stem: None });
    }
    if due.is_some_and(|d| ENVELOPE.contains(&d)) && due != reply.code {
        out.push(Fingerprint::EnvelopeAnswered { code: reply.code });
    }
    // One wrong mapping, whatever was due, is not what a served lookup of a missing task says.
    if reply.code != Some(TASK_NOT_FOUND) {
        out.push(Fingerprint::WrongError { code: reply.code, due: None, stem });
    }
    out
}

/// JSON-RPC's errors about the request itself: parse error, invalid request, method not found.
const ENVELOPE: [i64; 3] = [-32700, -32600, -32601];

/// TaskNotFoundError: what a probe about a task that does not exist gets when it is served.
const TASK_NOT_FOUND: i64 = -32001;

/// `text` with every SCREAMING_SNAKE_CASE word (an enum value the agent names: a task's state)
/// replaced by `#`: the same mapping said of tasks in different states is one story.
fn names_blanked(text: &str) -> String {
    text.split(' ')
        .map(|w| {
            let core = w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
            let screaming =
                core.len() > 3 && core.contains('_') && core.chars().all(|c| c.is_ascii_uppercase() || c == '_');
            if screaming { w.replace(core, "#") } else { w.to_owned() }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// [`Fingerprint::Ignored`] when the failing exchange shows the agent acting as if a member of the
/// request were not there: a message naming a task answered about another task, one naming a
/// context answered in another, an A2A-Version the agent does not support served.
fn ignored(r: &CheckResult) -> Option<Fingerprint> {
    let e = failing_exchange(r)?;
    let ignored = |what: &str| Some(Fingerprint::Ignored { what: what.to_owned() });
    let version = e.request_headers.iter().find_map(|h| {
        let (n, v) = h.split_once(':')?;
        n.trim().eq_ignore_ascii_case("a2a-version").then(|| v.trim().to_owned())
    });
    // Served as if no version were asked: a result, or the error the method itself gives
    // (-32001..-32008); an error about the request (-32600, say) is a wrong code, not this.
    let served = e.reply.as_ref().is_some_and(|x| match x.kind {
        ReplyKind::Result | ReplyKind::Stream => true,
        ReplyKind::Error => x.code.is_some_and(|c| (-32008..=-32001).contains(&c)),
        ReplyKind::NotJsonrpc => false,
    });
    if let Some(v) = version
        && !(v == "1.0" || v.starts_with("1.0."))
        && served
        && r.failure.as_ref().and_then(|f| f.expected.as_deref()).is_some_and(|x| x.contains("-32009"))
    {
        return ignored("the A2A-Version service parameter");
    }
    let request: serde_json::Value = serde_json::from_str(e.request_body.as_deref()?).ok()?;
    let message = request.pointer("/params/message").or_else(|| request.get("message"))?;
    let answer = answered(e.response_body.as_deref()?)?;
    let about = answer.get("task").or_else(|| answer.get("message")).or_else(|| answer.get("statusUpdate"));
    let about = about.or_else(|| answer.get("status").map(|_| &answer))?;
    fn id_of(v: &serde_json::Value) -> Option<&str> {
        v.get("taskId").or_else(|| v.get("id")).and_then(serde_json::Value::as_str)
    }
    if let Some(t) = message.get("taskId").and_then(serde_json::Value::as_str)
        && let Some(got) = id_of(about)
        && answer.get("message").is_none()
        && got != t
    {
        return ignored("message.taskId");
    }
    if let Some(c) = message.get("contextId").and_then(serde_json::Value::as_str)
        && let Some(got) = about.get("contextId").and_then(serde_json::Value::as_str)
        && got != c
    {
        return ignored("message.contextId");
    }
    None
}

/// The result an answer body holds: a JSON-RPC response's `result`, a bare HTTP+JSON body, or the
/// first event of an SSE stream.
fn answered(body: &str) -> Option<serde_json::Value> {
    let v = match serde_json::from_str::<serde_json::Value>(body) {
        Ok(v) => v,
        Err(_) => {
            let data = body.lines().find_map(|l| l.strip_prefix("data:"))?;
            serde_json::from_str(data.trim()).ok()?
        }
    };
    if v.get("jsonrpc").is_some() { v.get("result").cloned() } else { Some(v) }
}

/// The methods that share a handler in an agent, by what they act on.
fn family(method: &str) -> &'static str {
    match method {
        "SendMessage" | "SendStreamingMessage" => "message",
        m if m.contains("PushNotificationConfig") => "push-config",
        "GetExtendedAgentCard" => "card",
        _ => "task",
    }
}

/// The value a catch-all's first instance names (`CHECK / step: Schema at /role: "agent" is not
/// valid …` → `"agent"`), when it is a JSON scalar.
fn instance_value(actual: &str) -> Option<String> {
    let first = actual.lines().next()?;
    let (_, rest) = first.split_once(" / ")?;
    let (_, value) = rest.split_once(": ")?.1.split_once(": ")?;
    let end = [" is not ", " does not ", " is a disallowed", " is less", " is greater", " is longer", " is shorter"]
        .iter()
        .filter_map(|m| value.find(m))
        .min()?;
    let value = &value[..end];
    let scalar = serde_json::from_str::<serde_json::Value>(value).ok().filter(|v| !v.is_array() && !v.is_object())?;
    Some(scalar.to_string())
}

/// The last named member of a pointer (`/tasks/0/history` → `history`).
pub fn member_name(pointer: &str) -> Option<&str> {
    pointer.rsplit('/').find(|s| !s.is_empty() && !s.bytes().all(|b| b.is_ascii_digit()))
}

/// [`Fingerprint::ErrorDue`] for a finding whose check wanted an error and got something else: a
/// result, a stream, or an error with another code.
fn error_due(r: &CheckResult) -> Option<Fingerprint> {
    let f = r.failure.as_ref()?;
    let reply = failing_reply(r)?;
    let expected = f.expected.as_deref()?;
    let pointer = f.pointer.as_deref();
    let wanted_error = match reply.kind {
        ReplyKind::Result | ReplyKind::Stream => {
            matches!(pointer, None | Some("/result" | "/error")) && expected.contains("rror")
        }
        ReplyKind::Error => pointer == Some("/error/code"),
        ReplyKind::NotJsonrpc => false,
    };
    if !wanted_error {
        return None;
    }
    let code = single_code(expected);
    // These errors are decided before the method is (the version header, the envelope): whichever
    // method carried the request, the same missing refusal is one story.
    let before_method = code.is_some_and(|c| matches!(c, -32009 | -32700 | -32600 | -32601));
    let method = reply.method.as_deref().filter(|_| !before_method).map(|m| match m {
        // The streaming form of SendMessage takes the same request and owes the same errors.
        "SendStreamingMessage" => "SendMessage".to_owned(),
        other => other.to_owned(),
    });
    let wrong = reply.kind == ReplyKind::Error && reply.code != Some(TASK_NOT_FOUND);
    Some(Fingerprint::ErrorDue { code, method, wrong })
}

/// The one JSON-RPC error code (`-32xxx`) a description names, when it names exactly one.
fn single_code(text: &str) -> Option<i64> {
    let mut codes: Vec<i64> = Vec::new();
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices("-32") {
        let digits = &bytes[i + 1..];
        let len = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        if len == 5
            && let Ok(c) = text[i..i + 6].parse::<i64>()
            && !codes.contains(&c)
        {
            codes.push(c);
        }
    }
    (codes.len() == 1).then(|| codes[0])
}

/// The media type of an exchange's answer, without parameters (`text/plain; charset=utf-8` is
/// `text/plain`).
fn content_type(e: &Evidence) -> Option<String> {
    e.response_headers.iter().find_map(|h| {
        let (name, value) = h.split_once(':')?;
        name.trim().eq_ignore_ascii_case("content-type").then(|| {
            let media = value.split(';').next().unwrap_or("").trim();
            media.to_ascii_lowercase()
        })
    })
}

/// `text` with every run of digits replaced by `#`.
fn digits_blanked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('#') {
            out.push('#');
        }
    }
    out
}

/// `text` with every word that looks made up by a run replaced by `#`: a word (letters and digits,
/// joined by inner hyphens)
/// with four digits or more (a port, a time, a count), or of eight characters or more with a digit
/// (an id). Short numbers and words keep their text.
fn volatile_blanked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let digits = word.chars().filter(char::is_ascii_digit).count();
        if digits >= 4 || (word.len() >= 8 && digits > 0) {
            out.push('#');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        // A hyphen inside a word joins it (a UUID is one id, not five short words).
        let joins = c == '-' && !word.is_empty() && chars.peek().is_some_and(char::is_ascii_alphanumeric);
        if c.is_ascii_alphanumeric() || joins {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{CheckMeta, Failure};

    fn exchange(step: &str, status: u16, content_type: &str, reply: Reply) -> Evidence {
        Evidence {
            step_id: Some(step.into()),
            method: "POST".into(),
            status: Some(status),
            response_headers: vec![format!("Content-Type: {content_type}")],
            reply: Some(reply),
            ..Evidence::default()
        }
    }

    fn finding(failure: Failure, evidence: Vec<Evidence>) -> CheckResult {
        CheckResult { failure: Some(failure), evidence, ..CheckResult::new(&CheckMeta::sample("X"), Outcome::Fail) }
    }

    fn error_reply(code: i64, message: &str) -> Reply {
        Reply {
            method: Some("GetTask".into()),
            kind: ReplyKind::Error,
            code: Some(code),
            message: Some(message.into()),
        }
    }

    #[test]
    fn a_wrong_code_is_the_error_the_agent_answered() {
        let wrong = |expected: &str| Failure {
            message: "error code: expected …".into(),
            step_id: Some("get".into()),
            pointer: Some("/error/code".into()),
            expected: Some(expected.into()),
            actual: Some("-32000".into()),
        };
        let reply = || vec![exchange("get", 200, "application/json", error_reply(-32000, "Server error"))];
        let a = fingerprint(&finding(wrong("-32001"), reply()));
        let b = fingerprint(&finding(wrong("-32602"), reply()));
        // Whatever code was due, the agent said the same thing.
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "JSON-RPC error -32000 'Server error' where another error is due");
        // An error where a result was due is another story.
        let instead = Failure { pointer: Some("/error".into()), expected: Some("a result".into()), ..wrong("") };
        let c = fingerprint(&finding(instead, reply()));
        assert_eq!(c.to_string(), "JSON-RPC error -32000 'Server error' where a result is due from GetTask");
    }

    #[test]
    fn an_answer_that_is_not_json_rpc_is_its_status_and_content_type() {
        let failure = Failure {
            message: "the answer is not JSON-RPC: …".into(),
            step_id: Some("send".into()),
            expected: Some(WANTED_ERROR.into()),
            actual: Some("HTTP 500 text/plain; charset=utf-8".into()),
            ..Failure::default()
        };
        let reply = Reply { method: Some("SendMessage".into()), ..Reply::default() };
        let other = exchange("other", 200, "application/json", error_reply(-1, "x"));
        let r = finding(failure, vec![exchange("send", 500, "text/plain; charset=utf-8", reply), other]);
        assert_eq!(
            fingerprint(&r),
            Fingerprint::NotJsonrpc {
                status: Some(500),
                content_type: Some("text/plain".into()),
                wanted: WANTED_ERROR.into(),
                method: None,
            }
        );
        assert_eq!(failing_reply(&r).and_then(|x| x.method.as_deref()), Some("SendMessage"));
    }

    #[test]
    fn values_and_missing_fields_are_their_place() {
        let at = |actual: &str| Failure {
            message: "m".into(),
            pointer: Some("/task/status/state".into()),
            expected: Some("\"TASK_STATE_COMPLETED\"".into()),
            actual: Some(actual.into()),
            ..Failure::default()
        };
        assert_eq!(
            fingerprint(&finding(at("<absent>"), vec![])),
            Fingerprint::Missing { pointer: "/task/status/state".into() }
        );
        assert!(matches!(fingerprint(&finding(at("\"TASK_STATE_WORKING\""), vec![])), Fingerprint::Value { .. }));
        let bare = Failure { message: "m".into(), ..Failure::default() };
        assert_eq!(fingerprint(&finding(bare.clone(), vec![])), Fingerprint::Alone);
        let undecided = CheckResult { outcome: Outcome::Error, ..finding(bare, vec![]) };
        assert_eq!(fingerprint(&undecided), Fingerprint::Undecided { message: "m".into() });
        assert_eq!(fingerprint(&CheckResult::new(&CheckMeta::sample("P"), Outcome::Pass)), Fingerprint::Alone);
    }

    #[test]
    fn a_bare_send_result_is_one_story_whichever_check_reads_it() {
        let reply = Reply { method: Some("SendMessage".into()), kind: ReplyKind::Result, code: None, message: None };
        let bare = |pointer: &str, body: &str| {
            let mut e = exchange("s", 200, "application/json", reply.clone());
            e.response_body = Some(body.into());
            let f = Failure { step_id: Some("s".into()), pointer: Some(pointer.into()), ..Failure::default() };
            fingerprint(&finding(f, vec![e]))
        };
        let task = r#"{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}}}"#;
        assert_eq!(bare("", task), Fingerprint::Bare);
        assert_eq!(bare("/task", task), Fingerprint::Bare);
        let wrapped = r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}"#;
        assert_ne!(bare("/task", wrapped), Fingerprint::Bare);
        assert_ne!(bare("/task/status", task), Fingerprint::Bare);
    }

    #[test]
    fn keys_blank_what_a_run_makes_up() {
        let a = Fingerprint::Undecided { message: "cannot connect to 127.0.0.1:41241 for task 5f3ca2b1e9".into() };
        let b = Fingerprint::Undecided { message: "cannot connect to 127.0.0.1:50123 for task 77aa01bc3f".into() };
        assert_eq!(a.key(), b.key());
        assert_eq!(a.key().unwrap(), "undecided: cannot connect to 127.0.0.1:# for task #");
        let uuid = |id: &str| Fingerprint::RpcError {
            code: Some(-32004),
            message: Some(format!("task {id} is in terminal state")),
            wanted_error: true,
            method: None,
        };
        let (u, v) = (uuid("431b7e06-3db1-4e0d-a42f-d3c27372d421"), uuid("f8a19c2c-48d2-4302-b3df-85fc565d87cf"));
        assert_eq!(u.key(), v.key());
        assert!(u.key().unwrap().contains("'task # is in terminal state'"), "{:?}", u.key());
        let code = Fingerprint::RpcError {
            code: Some(-32001),
            message: Some("Task not found".into()),
            wanted_error: true,
            method: None,
        };
        assert!(code.key().unwrap().contains("-32001 'Task not found'"));
        assert_eq!(Fingerprint::Alone.key(), None);
    }
}

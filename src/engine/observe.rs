//! Grades a client on what the mock recorded of it (`client-check`): each recorded request is raw
//! JSON (the shape is in `suites/suite.schema.json`, `$defs/observe`), read with the ACTS assertion
//! DSL like an agent's answers, never through the mock's types. Observers written in Rust say what
//! data cannot: whether the client came back after a dropped stream, whether it stormed.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::report::{CheckMeta, CheckResult, Evidence, Failure, Outcome, SkipReason};
use crate::suite::assert;
use crate::suite::model::{Observe, Test};

/// How many times one non-idempotent request may arrive before it is a storm: a client that
/// retries a failed send once or twice is careful, the third retry of the same body is not.
pub const STORM: usize = 3;

/// What the run saw of the client, besides the requests.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// The recorded requests, in arrival order, each a JSON object (`seq`, `at_ms`, `kind`, ...).
    pub requests: Vec<Value>,
    /// The scenarios the run chose.
    pub scenarios: Vec<String>,
    /// What the mock did to provoke the client, as JSON objects (`{"kind": "stream_cut", "task":
    /// ..., "after_event_id": ..., "at_ms": ...}`), in order.
    pub incidents: Vec<Value>,
    /// How the client's command ended, when the run started one.
    pub command: Option<CommandEnd>,
}

/// How the command under test ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandEnd {
    /// Its exit status; `None` when a signal ended it or the run stopped it.
    pub status: Option<i32>,
    /// The run stopped it at `--timeout`.
    pub timed_out: bool,
    /// The last lines of its stderr (then stdout), for the finding.
    pub output_tail: String,
}

/// Grades one client check.
pub fn grade(test: &Test, meta: &CheckMeta, obs: &Observation, strict: bool) -> CheckResult {
    let missing: Vec<&str> =
        test.requires_scenarios.iter().filter(|s| !obs.scenarios.contains(s)).map(String::as_str).collect();
    if !missing.is_empty() {
        let flags: Vec<String> = missing.iter().map(|s| format!("--scenario {s}")).collect();
        return CheckResult::skipped(
            meta,
            SkipReason::BehaviorNotAvailable,
            format!("needs the {} scenario: run with {}", missing.join(", "), flags.join(" ")),
        );
    }
    let Some(observe) = &test.observe else {
        return error(meta, "the client check has no `observe`");
    };
    let select = observe.select.clone().unwrap_or_else(|| json!({"kind": "rpc"}));
    let selected: Vec<&Value> =
        obs.requests.iter().filter(|r| assert::check(Some(r), &select, "").is_empty()).collect();
    match judge(observe, &selected, obs) {
        Judged::Pass(note) => CheckResult { measurement: note, ..CheckResult::new(meta, Outcome::Pass) },
        Judged::Violation(failure, evidence) => CheckResult {
            evidence: evidence.iter().map(|r| to_evidence(r)).collect(),
            ..CheckResult::violated(meta, strict, failure)
        },
        Judged::Skip(why) => CheckResult::skipped(meta, SkipReason::BehaviorNotAvailable, why),
        Judged::Error(why) => error(meta, &why),
    }
}

enum Judged<'a> {
    Pass(Option<String>),
    Violation(Failure, Vec<&'a Value>),
    Skip(String),
    Error(String),
}

fn error(meta: &CheckMeta, why: &str) -> CheckResult {
    CheckResult {
        failure: Some(Failure { message: why.to_owned(), ..Failure::default() }),
        ..CheckResult::new(meta, Outcome::Error)
    }
}

fn judge<'a>(o: &Observe, selected: &[&'a Value], obs: &'a Observation) -> Judged<'a> {
    if let Some(name) = &o.observer {
        let params = o.params.clone().unwrap_or(Value::Null);
        return match name.as_str() {
            "command_succeeded" => command_succeeded(obs),
            "resubscribes_after_drop" => resubscribes_after_drop(selected, obs),
            "no_retry_storm" => no_retry_storm(selected, &params),
            "parts_one_content" => parts_one_content(selected),
            "continues_input_required" => continues_input_required(selected, obs),
            "follows_interrupted_task" => follows_interrupted_task(selected, obs, &params),
            other => Judged::Error(format!("unknown observer {other:?}")),
        };
    }
    if selected.is_empty() {
        return Judged::Skip(
            o.select_reason.clone().unwrap_or_else(|| "the client sent no request this check grades".into()),
        );
    }
    if let Some(each) = &o.each {
        for r in selected {
            if let Some(m) = assert::check(Some(r), each, "").into_iter().next() {
                return Judged::Violation(
                    Failure {
                        message: format!("{}: {}", describe(r), o.explain.as_deref().unwrap_or(&m.message)),
                        step_id: Some(seq_of(r)),
                        pointer: Some(m.pointer),
                        expected: Some(m.expected),
                        actual: Some(m.actual),
                    },
                    vec![r],
                );
            }
        }
        return Judged::Pass(Some(format!("{} request(s) graded", selected.len())));
    }
    if let Some(some) = &o.some {
        if let Some(r) = selected.iter().find(|r| assert::check(Some(r), some, "").is_empty()) {
            return Judged::Pass(Some(format!("{} does", describe(r))));
        }
        let r = selected[0];
        let m = assert::check(Some(r), some, "").into_iter().next();
        return Judged::Violation(
            Failure {
                message: format!(
                    "none of the {} request(s) does; the first, {}: {}",
                    selected.len(),
                    describe(r),
                    m.as_ref().map(|m| m.message.as_str()).unwrap_or("no match")
                ),
                step_id: Some(seq_of(r)),
                pointer: m.as_ref().map(|m| m.pointer.clone()),
                expected: m.as_ref().map(|m| m.expected.clone()),
                actual: m.map(|m| m.actual),
            },
            vec![r],
        );
    }
    if let Some(pointer) = &o.unique {
        return unique(selected, pointer, o.unique_unless_same.as_deref());
    }
    Judged::Error("the observe block has no each, some, unique or observer".into())
}

/// `#3 SendMessage` (or `#0 GET /.well-known/agent-card.json`).
fn describe(r: &Value) -> String {
    let seq = r.get("seq").and_then(Value::as_u64).unwrap_or_default();
    match r.get("method").and_then(Value::as_str) {
        Some(m) => format!("request #{seq} ({m})"),
        None => format!(
            "request #{seq} ({} {})",
            r.get("http_method").and_then(Value::as_str).unwrap_or("?"),
            r.get("path").and_then(Value::as_str).unwrap_or("?")
        ),
    }
}

fn seq_of(r: &Value) -> String {
    format!("request-{}", r.get("seq").and_then(Value::as_u64).unwrap_or_default())
}

fn unique<'a>(selected: &[&'a Value], pointer: &str, same: Option<&str>) -> Judged<'a> {
    let mut seen: BTreeMap<String, &Value> = BTreeMap::new();
    let mut graded = 0;
    for r in selected {
        let Some(v) = r.pointer(pointer) else { continue };
        graded += 1;
        let key = v.to_string();
        match seen.get(&key) {
            None => {
                seen.insert(key, r);
            }
            Some(first) => {
                let resent = same.is_some_and(|p| first.pointer(p) == r.pointer(p));
                if !resent {
                    return Judged::Violation(
                        Failure {
                            message: format!(
                                "{} reuses {pointer} {} of {} for a different message",
                                describe(r),
                                assert::render(v),
                                describe(first)
                            ),
                            step_id: Some(seq_of(r)),
                            pointer: Some(pointer.to_owned()),
                            expected: Some("a value no other message used".into()),
                            actual: Some(assert::render(v)),
                        },
                        vec![first, r],
                    );
                }
            }
        }
    }
    if graded == 0 {
        return Judged::Skip(format!("no request carried {pointer}"));
    }
    Judged::Pass(Some(format!("{graded} value(s), none reused")))
}

/// The client's command ended well under the run's scenarios: what the kit can see of a client
/// that ignored what it was not meant to understand.
fn command_succeeded(obs: &Observation) -> Judged<'_> {
    let Some(end) = &obs.command else {
        return Judged::Skip("no command was run (the client connected on its own), so its outcome is unknown".into());
    };
    if end.timed_out {
        return Judged::Skip("the command was stopped at --timeout, so its outcome is unknown".into());
    }
    match end.status {
        Some(0) => Judged::Pass(Some("the command exited 0".into())),
        status => Judged::Violation(
            Failure {
                message: format!(
                    "the client's command ended {} under scenario(s) {}",
                    status.map_or("by a signal".to_owned(), |s| format!("with exit status {s}")),
                    obs.scenarios.join(", ")
                ),
                step_id: None,
                pointer: None,
                expected: Some("exit status 0".into()),
                actual: Some(end.output_tail.clone()),
            },
            Vec::new(),
        ),
    }
}

/// After the mock cut a stream, the client came back with SubscribeToTask on that task rather
/// than sending its message again (§3.1.6 names reconnecting after a network interruption as what
/// SubscribeToTask is for).
fn resubscribes_after_drop<'a>(selected: &[&'a Value], obs: &'a Observation) -> Judged<'a> {
    let cuts: Vec<&Value> = obs.incidents.iter().filter(|i| i["kind"] == "stream_cut").collect();
    if cuts.is_empty() {
        return Judged::Skip("the mock cut no stream: the client opened none the scenario could drop".into());
    }
    let mut notes = Vec::new();
    for cut in cuts {
        let task = cut["task"].as_str().unwrap_or_default();
        let at = cut["at_ms"].as_u64().unwrap_or_default();
        let after: Vec<&Value> = selected
            .iter()
            .copied()
            .filter(|r| r["at_ms"].as_u64().unwrap_or_default() >= at && r["seq"].as_u64() > cut["seq"].as_u64())
            .collect();
        let subscribed = after.iter().find(|r| {
            r["method"] == "SubscribeToTask" && r.pointer("/params/id").and_then(Value::as_str) == Some(task)
        });
        if let Some(r) = subscribed {
            let resumed = r.pointer("/headers/last-event-id").and_then(Value::as_str);
            notes.push(match (resumed, cut["after_event_id"].as_str()) {
                (Some(got), Some(want)) if got == want => {
                    format!("{} resubscribed with Last-Event-ID {got}", describe(r))
                }
                (Some(got), want) => format!(
                    "{} resubscribed with Last-Event-ID {got} (the last event it was sent had id {})",
                    describe(r),
                    want.unwrap_or("none")
                ),
                (None, _) => format!("{} resubscribed, without Last-Event-ID", describe(r)),
            });
            continue;
        }
        let resent = after.iter().find(|r| {
            matches!(r["method"].as_str(), Some("SendMessage" | "SendStreamingMessage"))
                && r.pointer("/params/message/taskId").is_none()
                && r.pointer("/params/message/parts") == cut.pointer("/message/parts")
        });
        let failure = |message: String, actual: &str| Failure {
            message,
            step_id: None,
            pointer: None,
            expected: Some(format!("SubscribeToTask on task {task}")),
            actual: Some(actual.to_owned()),
        };
        return match resent {
            Some(r) => Judged::Violation(
                failure(
                    format!(
                        "after the mock cut the stream of task {task}, {} sent the same message again as a new task",
                        describe(r)
                    ),
                    "the message sent again",
                ),
                vec![r],
            ),
            None => Judged::Violation(
                failure(
                    format!("after the mock cut the stream of task {task}, the client never subscribed to it again"),
                    "no SubscribeToTask on the task",
                ),
                Vec::new(),
            ),
        };
    }
    Judged::Pass(Some(notes.join("; ")))
}

/// No non-idempotent request (a send, a cancel, a push config write) arrives more than [`STORM`]
/// times with the same body: retries of a call that may have taken effect are bounded.
fn no_retry_storm<'a>(selected: &[&'a Value], params: &Value) -> Judged<'a> {
    let limit = params.get("max").and_then(Value::as_u64).map_or(STORM, |n| n as usize);
    let mut counts: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for r in selected {
        let Some(method) = r["method"].as_str() else { continue };
        // The JSON-RPC id may change between retries; the call is the method and its params.
        let key = format!("{method} {}", r.get("params").unwrap_or(&Value::Null));
        counts.entry(key).or_default().push(r);
    }
    if let Some(rs) = counts.values().filter(|rs| rs.len() > limit).max_by_key(|rs| rs.len()) {
        let first = rs[0];
        let span = rs[rs.len() - 1]["at_ms"].as_u64().unwrap_or_default() - first["at_ms"].as_u64().unwrap_or_default();
        return Judged::Violation(
            Failure {
                message: format!(
                    "{} was sent {} times with the same params within {span} ms",
                    describe(first),
                    rs.len()
                ),
                step_id: Some(seq_of(first)),
                pointer: None,
                expected: Some(format!("at most {limit} sends of one call")),
                actual: Some(format!("{} sends", rs.len())),
            },
            vec![first, rs[rs.len() - 1]],
        );
    }
    if selected.is_empty() {
        return Judged::Skip("the client sent no call that is not idempotent".into());
    }
    Judged::Pass(Some(format!("{} call(s), none sent more than {limit} times", selected.len())))
}

/// The content members a Part may have, of which it has exactly one (§4.1.6).
const PART_CONTENT: [&str; 4] = ["text", "raw", "url", "data"];

/// Every part of every message sent has exactly one content member.
fn parts_one_content<'a>(selected: &[&'a Value]) -> Judged<'a> {
    if selected.is_empty() {
        return Judged::Skip("the client sent no message".into());
    }
    let mut parts = 0;
    for r in selected {
        let Some(list) = r.pointer("/params/message/parts").and_then(Value::as_array) else { continue };
        for (i, part) in list.iter().enumerate() {
            parts += 1;
            let present: Vec<&str> = PART_CONTENT.iter().copied().filter(|k| part.get(*k).is_some()).collect();
            if present.len() != 1 {
                let what = if present.is_empty() { "none".to_owned() } else { present.join(", ") };
                return Judged::Violation(
                    Failure {
                        message: format!("{}: part {i} has {what} of text, raw, url, data", describe(r)),
                        step_id: Some(seq_of(r)),
                        pointer: Some(format!("/params/message/parts/{i}")),
                        expected: Some("exactly one of text, raw, url, data".into()),
                        actual: Some(assert::render(part)),
                    },
                    vec![r],
                );
            }
        }
    }
    if parts == 0 {
        return Judged::Skip("the messages sent had no parts (CLIENT-MSG-001's finding)".into());
    }
    Judged::Pass(Some(format!("{parts} part(s), each with one content member")))
}

/// The tasks that entered `state`, as the mock noted them: each task once, with the incident.
fn tasks_entering<'a>(obs: &'a Observation, state: &str) -> Vec<(&'a str, &'a Value)> {
    let mut seen = std::collections::BTreeSet::new();
    obs.incidents
        .iter()
        .filter(|i| i["kind"] == "task_state" && i["state"] == state)
        .filter_map(|i| i["task"].as_str().map(|t| (t, i)))
        .filter(|(t, _)| seen.insert(*t))
        .collect()
}

fn is_send(r: &Value) -> bool {
    matches!(r["method"].as_str(), Some("SendMessage" | "SendStreamingMessage"))
}

fn task_of_message(r: &Value) -> Option<&str> {
    r.pointer("/params/message/taskId").and_then(Value::as_str).filter(|t| !t.is_empty())
}

/// A task that asked for input is continued: a later message carries its `taskId`. Only the
/// tasks the mock saw enter TASK_STATE_INPUT_REQUIRED count (a message whose `tck-*` prefix chose
/// another behaviour started a task that never waited); a client that sends nothing afterwards
/// has nothing to show.
fn continues_input_required<'a>(selected: &[&'a Value], obs: &'a Observation) -> Judged<'a> {
    let waiting = tasks_entering(obs, "TASK_STATE_INPUT_REQUIRED");
    if waiting.is_empty() {
        return Judged::Skip(
            "no task the client started waited for input (its messages chose other behaviours)".into(),
        );
    }
    let sends: Vec<&Value> = selected.iter().copied().filter(|r| is_send(r)).collect();
    if let Some(r) = sends.iter().find(|r| task_of_message(r).is_some_and(|t| waiting.iter().any(|(w, _)| *w == t))) {
        return Judged::Pass(Some(format!(
            "{} continues task {}",
            describe(r),
            task_of_message(r).unwrap_or_default()
        )));
    }
    let (task, at) = waiting[0];
    let next = sends.iter().find(|r| r["seq"].as_u64() > at["seq"].as_u64());
    let Some(r) = next else {
        return Judged::Skip(format!("task {task} waited for input, and the client sent no message afterwards"));
    };
    Judged::Violation(
        Failure {
            message: format!(
                "task {task} waited for input; no message continued it, and the next one, {}, carries no taskId: it starts a new task",
                describe(r)
            ),
            step_id: Some(seq_of(r)),
            pointer: Some("/params/message/taskId".into()),
            expected: Some(format!("a message with taskId {task}")),
            actual: Some("<absent>".into()),
        },
        vec![r],
    )
}

/// Every task the mock saw enter `params.state` is followed afterwards: a later call names it
/// (SubscribeToTask, GetTask, a push config, or a message on it), or a SubscribeToTask on it was
/// opened before (the mock keeps those open through an interrupted state), so the client does not
/// miss what the task does once the interruption is resolved out of band.
fn follows_interrupted_task<'a>(selected: &[&'a Value], obs: &'a Observation, params: &Value) -> Judged<'a> {
    let Some(state) = params.get("state").and_then(Value::as_str) else {
        return Judged::Error("follows_interrupted_task needs params.state".into());
    };
    let stopped = tasks_entering(obs, state);
    if stopped.is_empty() {
        return Judged::Skip(format!(
            "no task the client started entered {state} (its messages chose other behaviours)"
        ));
    }
    let names = |r: &Value, task: &str| {
        ["/params/id", "/params/taskId", "/params/message/taskId"]
            .iter()
            .any(|p| r.pointer(p).and_then(Value::as_str) == Some(task))
    };
    for (task, at) in &stopped {
        let followed = selected
            .iter()
            .any(|r| names(r, task) && (r["seq"].as_u64() > at["seq"].as_u64() || r["method"] == "SubscribeToTask"));
        if !followed {
            return Judged::Violation(
                Failure {
                    message: format!(
                        "task {task} stopped in {state}, and no later call named it: no SubscribeToTask, GetTask, \
                         push config or message on it, so the client cannot learn what it does next"
                    ),
                    step_id: None,
                    pointer: None,
                    expected: Some("SubscribeToTask, CreateTaskPushNotificationConfig or GetTask on the task".into()),
                    actual: Some("no call on the task".into()),
                },
                Vec::new(),
            );
        }
    }
    Judged::Pass(Some(format!("{} task(s) in {state}, each followed", stopped.len())))
}

/// A recorded request as a finding's evidence.
fn to_evidence(r: &Value) -> Evidence {
    let text = |v: &Value| match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    };
    let query = r["query"].as_object().filter(|q| !q.is_empty()).map(|q| {
        let pairs: Vec<String> = q.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default())).collect();
        format!("?{}", pairs.join("&"))
    });
    Evidence {
        step_id: Some(seq_of(r)),
        method: r["http_method"].as_str().unwrap_or("?").to_owned(),
        url: format!(
            "{}{}{}",
            r["origin"].as_str().unwrap_or_default(),
            r["path"].as_str().unwrap_or_default(),
            query.unwrap_or_default()
        ),
        request_headers: r["headers"]
            .as_object()
            .map(|h| h.iter().map(|(k, v)| format!("{k}: {}", v.as_str().unwrap_or_default())).collect())
            .unwrap_or_default(),
        request_body: text(&r["body"]).map(|b| cut(&b)),
        status: r.pointer("/answer/status").and_then(Value::as_u64).map(|s| s as u16),
        response_headers: r
            .pointer("/answer/content_type")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(|c| vec![format!("content-type: {c}")])
            .unwrap_or_default(),
        response_body: r.pointer("/answer/body").and_then(text).map(|b| cut(&b)),
        curl: None,
        elapsed_ms: 0,
        reply: None,
    }
}

fn cut(s: &str) -> String {
    let max = super::evidence::EVIDENCE_BODY_BYTES;
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

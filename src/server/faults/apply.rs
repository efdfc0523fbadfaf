//! The mutations as pure functions on JSON values and SSE frames, so each is testable alone.

use serde_json::{Map, Value};

use super::{ActiveFaults, Mutation, Target};
use crate::sse::SseEvent;

/// True if a mutation limited to `methods` applies to a request for `method`.
pub fn applies(methods: &[String], method: Option<&str>) -> bool {
    methods.is_empty() || method.is_some_and(|m| methods.iter().any(|x| x == m))
}

fn rename_key(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.remove(from) {
                m.insert(to.to_owned(), x);
            }
            m.values_mut().for_each(|x| rename_key(x, from, to));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rename_key(x, from, to)),
        _ => {}
    }
}

/// What a `drop_key` removes: a member named `key` of an object whose members include `members`,
/// whose value equals `equals`.
struct DropWhere<'a> {
    equals: Option<&'a Value>,
    members: Option<&'a Map<String, Value>>,
}

impl DropWhere<'_> {
    fn value(&self, v: &Value) -> bool {
        self.equals.is_none_or(|e| e == v)
    }

    fn object(&self, o: &Map<String, Value>) -> bool {
        self.members.is_none_or(|w| w.iter().all(|(k, v)| o.get(k) == Some(v)))
    }
}

fn drop_key(v: &mut Value, key: &str, only: &DropWhere<'_>) {
    match v {
        Value::Object(m) => {
            if only.object(m) && m.get(key).is_some_and(|x| only.value(x)) {
                m.remove(key);
            }
            m.values_mut().for_each(|x| drop_key(x, key, only));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| drop_key(x, key, only)),
        _ => {}
    }
}

fn rewrite_string(v: &mut Value, re: &regex::Regex, to: &str, key: Option<&str>, in_key: bool) {
    match v {
        Value::String(s) if (key.is_none() || in_key) && re.is_match(s) => {
            *s = re.replace_all(s, to).into_owned();
        }
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                rewrite_string(x, re, to, key, key == Some(k.as_str()));
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rewrite_string(x, re, to, key, in_key)),
        _ => {}
    }
}

fn add_everywhere(v: &mut Value, key: &str, value: &Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k != "metadata" && k != "data" {
                    add_everywhere(x, key, value);
                }
            }
            m.entry(key.to_owned()).or_insert_with(|| value.clone());
        }
        Value::Array(a) => a.iter_mut().for_each(|x| add_everywhere(x, key, value)),
        _ => {}
    }
}

fn replace_string(v: &mut Value, from: &str, to: &Value) {
    match v {
        Value::String(s) if s == from => *v = to.clone(),
        Value::Object(m) => m.values_mut().for_each(|x| replace_string(x, from, to)),
        Value::Array(a) => a.iter_mut().for_each(|x| replace_string(x, from, to)),
        _ => {}
    }
}

/// Splits a JSON pointer into its parent pointer and last token (unescaped).
fn split_pointer(pointer: &str) -> Option<(&str, String)> {
    let i = pointer.rfind('/')?;
    Some((&pointer[..i], pointer[i + 1..].replace("~1", "/").replace("~0", "~")))
}

pub fn drop_pointer(v: &mut Value, pointer: &str) {
    let Some((parent, last)) = split_pointer(pointer) else { return };
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.remove(&last);
        }
        Some(Value::Array(a)) => {
            if let Ok(i) = last.parse::<usize>()
                && i < a.len()
            {
                a.remove(i);
            }
        }
        _ => {}
    }
}

/// Sets the value at a pointer, creating the last member of an existing object.
pub fn set_pointer(v: &mut Value, pointer: &str, value: Value) {
    if pointer.is_empty() {
        *v = value;
        return;
    }
    let Some((parent, last)) = split_pointer(pointer) else { return };
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(last, value);
        }
        Some(Value::Array(a)) => {
            if let Ok(i) = last.parse::<usize>()
                && i < a.len()
            {
                a[i] = value;
            }
        }
        _ => {}
    }
}

/// Applies a value-level mutation (rename, drop, set, replace) to a target root.
fn value_mutation(m: &Mutation, root: &mut Value) {
    match m {
        Mutation::RenameKey { from, to, .. } => rename_key(root, from, to),
        Mutation::DropKey { key, pointer, when_equals, when_present, where_members, .. } => {
            if when_present.as_deref().is_some_and(|p| root.pointer(p).is_none()) {
                return;
            }
            let only = DropWhere { equals: when_equals.as_ref(), members: where_members.as_ref() };
            if let Some(p) = pointer {
                if root.pointer(p).is_some_and(|x| only.value(x)) {
                    drop_pointer(root, p);
                }
            } else if let Some(k) = key {
                drop_key(root, k, &only);
            }
        }
        Mutation::Set { pointer, value, when_equals, when_present, .. }
            if when_equals.as_ref().is_none_or(|e| root.pointer(pointer) == Some(e))
                && when_present.as_deref().is_none_or(|p| root.pointer(p).is_some()) =>
        {
            set_pointer(root, pointer, value.clone())
        }
        Mutation::Copy { from, to, .. } => {
            if let Some(v) = root.pointer(from).cloned() {
                set_pointer(root, to, v);
            }
        }
        Mutation::ReplaceString { from, to, .. } => replace_string(root, from, to),
        Mutation::AddEverywhere { key, value, .. } => add_everywhere(root, key, value),
        Mutation::RewriteString { pattern, to, key, .. } => {
            if let Ok(re) = regex::Regex::new(pattern) {
                rewrite_string(root, &re, to, key.as_deref(), false);
            }
        }
        _ => {}
    }
}

fn value_target(m: &Mutation) -> Option<(Target, &[String])> {
    match m {
        Mutation::RenameKey { target, methods, .. }
        | Mutation::DropKey { target, methods, .. }
        | Mutation::Set { target, methods, .. }
        | Mutation::Copy { target, methods, .. }
        | Mutation::ReplaceString { target, methods, .. }
        | Mutation::AddEverywhere { target, methods, .. }
        | Mutation::RewriteString { target, methods, .. } => Some((*target, methods)),
        _ => None,
    }
}

/// Moves an RFC 3339 timestamp by `ms` milliseconds, written back in UTC with milliseconds and `Z`;
/// a string that is no timestamp stays as it is.
fn shift_time(s: &mut String, ms: i64) {
    use time::format_description::well_known::Rfc3339;
    let Ok(t) = time::OffsetDateTime::parse(s, &Rfc3339) else { return };
    let t = (t + time::Duration::milliseconds(ms)).to_offset(time::UtcOffset::UTC);
    let fmt = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    if let Ok(out) = t.format(&fmt) {
        *s = out;
    }
}

/// Applies every request-side mutation to a JSON-RPC request envelope.
pub fn mutate_request(faults: &ActiveFaults, envelope: &mut Value) {
    let method = envelope.get("method").and_then(Value::as_str).map(str::to_owned);
    for m in faults.mutations() {
        match m {
            Mutation::RequestDrop { pointer, matching, methods } if applies(methods, method.as_deref()) => {
                let hit = match matching {
                    None => true,
                    Some(re) => envelope
                        .pointer(pointer)
                        .is_some_and(|v| regex::Regex::new(re).is_ok_and(|re| re.is_match(&v.to_string()))),
                };
                if hit {
                    drop_pointer(envelope, pointer)
                }
            }
            Mutation::RequestShiftTime { pointer, ms, methods } if applies(methods, method.as_deref()) => {
                if let Some(Value::String(s)) = envelope.pointer_mut(pointer) {
                    shift_time(s, *ms);
                }
            }
            Mutation::RequestSet { pointer, value, if_absent, when_present, when_absent, methods }
                if applies(methods, method.as_deref())
                    && (!*if_absent || envelope.pointer(pointer).is_none())
                    && when_present.as_deref().is_none_or(|p| envelope.pointer(p).is_some())
                    && when_absent.as_deref().is_none_or(|p| envelope.pointer(p).is_none()) =>
            {
                set_pointer(envelope, pointer, value.clone())
            }
            _ => {}
        }
    }
}

/// Each 1.0 enum name a request may carry with its 0.3 spelling (0.3 spelled Role and TaskState
/// in lower case, with hyphens; its `unknown` state is 1.0's UNSPECIFIED).
const LEGACY_ENUMS: &[(&str, &str)] = &[
    ("ROLE_USER", "user"),
    ("ROLE_AGENT", "agent"),
    ("TASK_STATE_SUBMITTED", "submitted"),
    ("TASK_STATE_WORKING", "working"),
    ("TASK_STATE_INPUT_REQUIRED", "input-required"),
    ("TASK_STATE_COMPLETED", "completed"),
    ("TASK_STATE_CANCELED", "canceled"),
    ("TASK_STATE_FAILED", "failed"),
    ("TASK_STATE_REJECTED", "rejected"),
    ("TASK_STATE_AUTH_REQUIRED", "auth-required"),
    ("TASK_STATE_UNSPECIFIED", "unknown"),
];

/// The request members that hold those enums: Message.role, TaskStatus.state and
/// ListTasksRequest.status.
const ENUM_MEMBERS: &[&str] = &["role", "state", "status"];

/// [`Mutation::LegacyEnums`] on one request envelope: true when the request carries a 1.0 enum name
/// (the mock then refuses it); otherwise every 0.3 spelling in it is turned into the 1.0 name.
pub fn refuses_proto_enums(faults: &ActiveFaults, envelope: &mut Value) -> bool {
    let method = envelope.get("method").and_then(Value::as_str).map(str::to_owned);
    let on = faults
        .mutations()
        .any(|m| matches!(m, Mutation::LegacyEnums { methods } if applies(methods, method.as_deref())));
    let Some(params) = envelope.get_mut("params").filter(|_| on) else { return false };
    if holds_proto_enum(params) {
        return true;
    }
    read_legacy_enums(params);
    false
}

fn holds_proto_enum(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| {
            (ENUM_MEMBERS.contains(&k.as_str())
                && x.as_str().is_some_and(|s| LEGACY_ENUMS.iter().any(|(n, _)| *n == s)))
                || holds_proto_enum(x)
        }),
        Value::Array(a) => a.iter().any(holds_proto_enum),
        _ => false,
    }
}

fn read_legacy_enums(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                let name = x
                    .as_str()
                    .filter(|_| ENUM_MEMBERS.contains(&k.as_str()))
                    .and_then(|s| LEGACY_ENUMS.iter().find(|(_, old)| *old == s))
                    .map(|(name, _)| *name);
                match name {
                    Some(name) => *x = Value::from(name),
                    None => read_legacy_enums(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(read_legacy_enums),
        _ => {}
    }
}

/// Applies every response-side mutation to one JSON-RPC response envelope (an answer, or one
/// stream event's payload) for `method`.
pub fn mutate_response(faults: &ActiveFaults, method: Option<&str>, envelope: &mut Value) {
    for f in &faults.0 {
        let before = (f.answer_only() && !faults.was_shown(&f.id)).then(|| envelope.clone());
        mutate_by(&f.mutations, method, envelope);
        if before.is_some_and(|b| b != *envelope) {
            faults.shown(&f.id);
        }
    }
}

/// [`mutate_response`] for one fault's mutations.
fn mutate_by(mutations: &[Mutation], method: Option<&str>, envelope: &mut Value) {
    for m in mutations {
        match m {
            Mutation::UnwrapResult { member, methods } if applies(methods, method) => {
                if let Some(inner) = envelope.pointer(&format!("/result/{member}")).cloned() {
                    envelope["result"] = inner;
                }
            }
            Mutation::ErrorCode { from, to, message_contains, methods } if applies(methods, method) => {
                let said = |text: &str| {
                    envelope.pointer("/error/message").and_then(Value::as_str).is_some_and(|m| m.contains(text))
                };
                if message_contains.as_deref().is_some_and(|t| !said(t)) {
                    continue;
                }
                if let Some(code) = envelope.pointer_mut("/error/code")
                    && from.is_none_or(|f| code.as_i64() == Some(f))
                {
                    *code = Value::from(*to);
                }
            }
            Mutation::ErrorToResult { code, value, methods } if applies(methods, method) => {
                let hit = envelope.get("error").is_some_and(|e| code.is_none_or(|c| e["code"].as_i64() == Some(c)));
                if hit && let Value::Object(o) = envelope {
                    o.remove("error");
                    o.insert("result".into(), value.clone());
                }
            }
            other => {
                let Some((target, methods)) = value_target(other) else { continue };
                if !applies(methods, method) {
                    continue;
                }
                let root = match target {
                    Target::Result => envelope.get_mut("result"),
                    Target::Error => envelope.get_mut("error"),
                    Target::Envelope => Some(&mut *envelope),
                    Target::Card | Target::ExtendedCard | Target::SignedCard | Target::Push => None,
                };
                if let Some(root) = root {
                    value_mutation(other, root);
                }
            }
        }
    }
}

/// Applies `set_from_header` mutations to one JSON-RPC answer; `header` looks up a request header.
pub fn mutate_from_headers(
    faults: &ActiveFaults,
    method: Option<&str>,
    envelope: &mut Value,
    header: &dyn Fn(&str) -> Option<String>,
) {
    for m in faults.mutations() {
        let Mutation::SetFromHeader { name, pointer, append, target, methods } = m else { continue };
        if !applies(methods, method) {
            continue;
        }
        let Some(value) = header(name) else { continue };
        let root = match target {
            Target::Result => envelope.get_mut("result"),
            Target::Error => envelope.get_mut("error"),
            Target::Envelope => Some(&mut *envelope),
            Target::Card | Target::ExtendedCard | Target::SignedCard | Target::Push => None,
        };
        let Some(root) = root else { continue };
        let new = match root.pointer(pointer) {
            Some(Value::String(old)) if *append => format!("{old} {value}"),
            _ => value,
        };
        set_pointer(root, pointer, Value::String(new));
    }
}

/// Applies the value mutations aimed at one of the card targets (`card`, `extended_card`,
/// `signed_card`) to that card.
pub fn mutate_card(faults: &ActiveFaults, which: Target, card: &mut Value) {
    for m in faults.mutations() {
        if value_target(m).is_some_and(|(t, _)| t == which) {
            value_mutation(m, card);
        }
    }
}

/// True when some value mutation aims at `which`.
pub fn targets(faults: &ActiveFaults, which: Target) -> bool {
    faults.mutations().any(|m| value_target(m).is_some_and(|(t, _)| t == which))
}

/// Applies push-targeted value mutations to a push body.
pub fn mutate_push(faults: &ActiveFaults, body: &mut Value) {
    for m in faults.mutations() {
        if let Some((Target::Push, _)) = value_target(m) {
            value_mutation(m, body);
        }
    }
    if faults.mutations().any(|m| matches!(m, Mutation::PushWrapJsonrpc)) {
        let inner = std::mem::take(body);
        let mut env = Map::new();
        env.insert("jsonrpc".into(), "2.0".into());
        env.insert("id".into(), "push".into());
        env.insert("result".into(), inner);
        *body = Value::Object(env);
    }
}

/// Stream-level state: positions seen so far and frames held back for a swap.
#[derive(Debug, Default)]
pub struct StreamState {
    seen: usize,
    per_kind: std::collections::HashMap<String, usize>,
    held: Vec<(usize, SseEvent)>,
    /// A SubscribeToTask stream opened while another of the same task was open.
    concurrent: bool,
}

impl StreamState {
    pub fn new(concurrent: bool) -> Self {
        StreamState { concurrent, ..StreamState::default() }
    }
}

fn kind_of(data: &Value) -> Option<String> {
    data.get("result").and_then(Value::as_object).and_then(|o| o.keys().next().cloned())
}

/// Applies stream mutations to the next frames; returns what to send now. Call with `finished`
/// at the end to release anything held back. `bare`: the frames are HTTP+JSON events, a bare
/// StreamResponse each, mutated as the `result` of a JSON-RPC event would be (an error event,
/// `{"error": Status}`, only by the operations on positions and ids).
pub fn mutate_frames(
    faults: &ActiveFaults,
    method: Option<&str>,
    st: &mut StreamState,
    frames: Vec<SseEvent>,
    finished: bool,
    bare: bool,
) -> Vec<SseEvent> {
    let mut out: Vec<(usize, SseEvent)> = Vec::new();
    for mut f in frames {
        let pos = st.seen;
        st.seen += 1;
        let mut v: Value = match serde_json::from_str::<Value>(&f.data) {
            // A bare event is looked at as the JSON-RPC event it stands for.
            Ok(v) if bare => {
                let error = v.get("error").is_some();
                let mut env = Map::new();
                env.insert(if error { "bareError" } else { "result" }.into(), v);
                Value::Object(env)
            }
            Ok(v) => v,
            Err(_) => {
                out.push((pos, f));
                continue;
            }
        };
        let kind = kind_of(&v).unwrap_or_default();
        let nth = {
            let c = st.per_kind.entry(kind.clone()).or_default();
            *c += 1;
            *c - 1
        };
        let mut drop = false;
        let mut copies = 1;
        for m in faults.mutations() {
            match m {
                Mutation::SseDrop { kind: k, nth: n, methods }
                    if applies(methods, method) && *k == kind && n.is_none_or(|n| n == nth) =>
                {
                    drop = true;
                }
                Mutation::SseDuplicate { index, methods } if applies(methods, method) && *index == pos => copies = 2,
                Mutation::SseIds { same, from, methods } if applies(methods, method) && pos >= *from => {
                    f.id = same.clone()
                }
                Mutation::SseConcurrentSet { pointer, value } if st.concurrent && pos > 0 => {
                    if let Some(result) = v.get_mut("result") {
                        set_pointer(result, pointer, value.clone());
                    }
                }
                _ => {}
            }
        }
        if drop {
            continue;
        }
        if !(bare && v.get("bareError").is_some()) {
            mutate_response(faults, method, &mut v);
        }
        if bare {
            let wrap = faults.mutations().find_map(|m| match m {
                Mutation::SseWrapJsonrpc { id, methods } if applies(methods, method) => Some(id.clone()),
                _ => None,
            });
            v = match (v.get("result"), v.get("bareError"), wrap) {
                (Some(r), _, Some(id)) => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": r}),
                (Some(r), _, None) => r.clone(),
                (None, Some(e), _) => e.clone(),
                (None, None, _) => v,
            };
        } else if faults
            .mutations()
            .any(|m| matches!(m, Mutation::SseBareEvents { methods } if applies(methods, method)))
        {
            v = v.get("result").cloned().unwrap_or(v);
        }
        f.data = v.to_string();
        for _ in 0..copies {
            out.push((pos, f.clone()));
        }
    }
    // Swaps: hold frames until both positions have been seen.
    let swaps: Vec<(usize, usize)> = faults
        .mutations()
        .filter_map(|m| match m {
            Mutation::SseSwap { a, b, methods } if applies(methods, method) => Some((*a.min(b), *a.max(b))),
            _ => None,
        })
        .collect();
    if swaps.is_empty() {
        return out.into_iter().map(|(_, f)| f).collect();
    }
    st.held.extend(out);
    let horizon = swaps.iter().map(|(_, b)| *b).max().unwrap_or(0);
    if !finished && st.seen <= horizon {
        return Vec::new();
    }
    let mut held = std::mem::take(&mut st.held);
    for (a, b) in swaps {
        let ia = held.iter().position(|(p, _)| *p == a);
        let ib = held.iter().position(|(p, _)| *p == b);
        if let (Some(ia), Some(ib)) = (ia, ib) {
            held.swap(ia, ib);
        }
    }
    held.into_iter().map(|(_, f)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::faults::Fault;
    use serde_json::json;
    use std::sync::Arc;

    fn active(mutations: Value) -> ActiveFaults {
        let f: Fault = serde_json::from_value(
            json!({"id": "F", "section": "1", "description": "d", "mutations": mutations, "kills": ["X"]}),
        )
        .unwrap();
        ActiveFaults::new(vec![Arc::new(f)])
    }

    #[test]
    fn value_mutations_change_only_their_target() {
        let f = active(json!([
            {"op": "replace_string", "from": "TASK_STATE_COMPLETED", "to": "completed"},
            {"op": "drop_key", "key": "contextId", "methods": ["GetTask"]}
        ]));
        let mut env = json!({"jsonrpc": "2.0", "id": 1, "result": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}});
        mutate_response(&f, Some("SendMessage"), &mut env);
        assert_eq!(env["result"]["status"]["state"], "completed");
        assert_eq!(env["result"]["contextId"], "c", "drop_key is limited to GetTask");
        mutate_response(&f, Some("GetTask"), &mut env);
        assert!(env["result"].get("contextId").is_none());
    }

    #[test]
    fn a_fault_is_shown_once_it_changed_an_answer() {
        let f = active(json!([{"op": "drop_key", "pointer": "/task/artifacts", "methods": ["SendMessage"]}]));
        assert!(f.0[0].answer_only());
        let mut early = json!({"result": {"task": {"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}}}});
        mutate_response(&f, Some("SendMessage"), &mut early);
        assert!(!f.was_shown("F"), "no artifacts yet: nothing to drop, nothing shown");
        let scoped = f.scoped(None);
        let mut done = json!({"result": {"task": {"id": "t", "artifacts": [{"artifactId": "a"}]}}});
        mutate_response(&scoped, Some("SendMessage"), &mut done);
        assert!(f.was_shown("F"), "every scope of one mock shares what was shown");
        let on_requests = active(json!([{"op": "request_set", "pointer": "/params/x", "value": 1}]));
        assert!(!on_requests.0[0].answer_only(), "what a request change shows is not read from answers");
    }

    #[test]
    fn unwrap_and_error_mutations() {
        let f = active(
            json!([{"op": "unwrap_result", "member": "task"}, {"op": "error_code", "from": -32001, "to": -32603}]),
        );
        let mut ok = json!({"result": {"task": {"id": "t"}}});
        mutate_response(&f, None, &mut ok);
        assert_eq!(ok["result"], json!({"id": "t"}));
        let mut err = json!({"error": {"code": -32001, "message": "m"}});
        mutate_response(&f, None, &mut err);
        assert_eq!(err["error"]["code"], -32603);
    }

    #[test]
    fn stream_drop_swap_and_duplicate() {
        let frames = |n: usize| -> Vec<SseEvent> {
            (0..n)
                .map(|i| {
                    let kind = if i == 0 { "task" } else { "statusUpdate" };
                    SseEvent {
                        id: Some(i.to_string()),
                        event: None,
                        data: json!({"result": {kind: {"n": i}}}).to_string(),
                        comments: 0,
                    }
                })
                .collect()
        };
        let ids = |fs: &[SseEvent]| fs.iter().map(|f| f.id.clone().unwrap_or_default()).collect::<Vec<_>>();
        let f = active(json!([{"op": "sse_drop", "kind": "task"}]));
        assert_eq!(ids(&mutate_frames(&f, None, &mut StreamState::default(), frames(3), true, false)), ["1", "2"]);
        let f = active(json!([{"op": "sse_swap", "a": 1, "b": 2}]));
        let mut st = StreamState::default();
        let first = mutate_frames(&f, None, &mut st, frames(2), false, false);
        assert!(first.is_empty(), "held until position 2 arrives");
        let all = frames(3);
        let rest = mutate_frames(&f, None, &mut st, all[2..].to_vec(), true, false);
        assert_eq!(ids(&rest), ["0", "2", "1"]);
        let f = active(json!([{"op": "sse_duplicate", "index": 1}]));
        assert_eq!(
            ids(&mutate_frames(&f, None, &mut StreamState::default(), frames(3), true, false)),
            ["0", "1", "1", "2"]
        );
    }

    #[test]
    fn bare_frames_are_mutated_as_results_and_wrapped_on_request() {
        let frame = |data: Value| SseEvent { id: Some("0".into()), event: None, data: data.to_string(), comments: 0 };
        let f = active(json!([
            {"op": "drop_key", "key": "contextId"},
            {"op": "sse_drop", "kind": "statusUpdate"},
            {"op": "sse_bare_events"}
        ]));
        let frames = vec![
            frame(json!({"task": {"id": "t", "contextId": "c"}})),
            frame(json!({"statusUpdate": {"taskId": "t"}})),
            frame(json!({"error": {"code": 500, "status": "INTERNAL", "message": "m", "contextId": "kept"}})),
        ];
        let out = mutate_frames(&f, None, &mut StreamState::default(), frames, true, true);
        let data: Vec<Value> = out.iter().map(|e| serde_json::from_str(&e.data).unwrap()).collect();
        assert_eq!(
            data,
            [
                json!({"task": {"id": "t"}}),
                json!({"error": {"code": 500, "status": "INTERNAL", "message": "m", "contextId": "kept"}})
            ]
        );
        let wrap = active(json!([{"op": "sse_wrap_jsonrpc"}]));
        let one = vec![frame(json!({"task": {"id": "t"}}))];
        let out = mutate_frames(&wrap, None, &mut StreamState::default(), one.clone(), true, true);
        assert_eq!(
            serde_json::from_str::<Value>(&out[0].data).unwrap(),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t"}}})
        );
        let rpc = vec![frame(json!({"jsonrpc": "2.0", "id": 7, "result": {"task": {"id": "t"}}}))];
        let out = mutate_frames(&wrap, None, &mut StreamState::default(), rpc.clone(), true, false);
        assert_eq!(out[0].data, rpc[0].data, "a JSON-RPC event is wrapped already");
    }

    #[test]
    fn rewrite_string_by_key_and_set_from_header() {
        let f = active(json!([
            {"op": "rewrite_string", "key": "timestamp", "pattern": "Z$", "to": "+00:00"},
            {"op": "set_from_header", "name": "X-Canary", "pointer": "/message", "append": true, "target": "error"}
        ]));
        let mut env = json!({"result": {"status": {"timestamp": "2026-01-01T00:00:00.000Z"}, "text": "Z"}});
        mutate_response(&f, None, &mut env);
        assert_eq!(env["result"]["status"]["timestamp"], "2026-01-01T00:00:00.000+00:00");
        assert_eq!(env["result"]["text"], "Z", "only values of `timestamp` members");
        let mut err = json!({"error": {"code": -32001, "message": "Task not found"}});
        mutate_from_headers(&f, None, &mut err, &|n: &str| (n == "X-Canary").then(|| "c4n4ry".to_owned()));
        assert_eq!(err["error"]["message"], "Task not found c4n4ry");
        let mut ok = json!({"result": {}});
        mutate_from_headers(&f, None, &mut ok, &|_: &str| Some("x".to_owned()));
        assert_eq!(ok, json!({"result": {}}), "an error target leaves answers alone");
    }

    #[test]
    fn conditional_value_mutations() {
        let f = active(json!([
            {"op": "drop_key", "pointer": "/nextPageToken", "when_equals": ""},
            {"op": "drop_key", "pointer": "/configs/0", "when_present": "/configs/1"},
            {"op": "set", "pointer": "/tasks", "when_equals": [], "value": ["phantom"]},
            {"op": "drop_key", "key": "messageId", "where_members": {"role": "ROLE_AGENT"}}
        ]));
        let mut last = json!({"result": {"nextPageToken": "", "configs": [1], "tasks": []}});
        mutate_response(&f, None, &mut last);
        assert_eq!(last["result"], json!({"configs": [1], "tasks": ["phantom"]}));
        let mut more = json!({"result": {"nextPageToken": "p2", "configs": [1, 2], "tasks": ["t"]}});
        mutate_response(&f, None, &mut more);
        assert_eq!(more["result"], json!({"nextPageToken": "p2", "configs": [2], "tasks": ["t"]}));
        let mut task = json!({"result": {"history": [
            {"role": "ROLE_USER", "messageId": "u"}, {"role": "ROLE_AGENT", "messageId": "a"}
        ]}});
        mutate_response(&f, None, &mut task);
        assert_eq!(task["result"]["history"], json!([{"role": "ROLE_USER", "messageId": "u"}, {"role": "ROLE_AGENT"}]));
    }

    #[test]
    fn copy_and_error_code_by_message() {
        let f = active(json!([
            {"op": "set", "pointer": "/message", "value": {"messageId": "x"}},
            {"op": "copy", "from": "/statusUpdate/contextId", "to": "/message/contextId"},
            {"op": "copy", "from": "/task/contextId", "to": "/message/contextId"},
            {"op": "error_code", "from": -32001, "to": -32000, "message_contains": "Task not found"}
        ]));
        let mut ev = json!({"result": {"statusUpdate": {"contextId": "c"}}});
        mutate_response(&f, None, &mut ev);
        assert_eq!(ev["result"]["message"], json!({"messageId": "x", "contextId": "c"}));
        let mut task = json!({"error": {"code": -32001, "message": "Task not found"}});
        mutate_response(&f, None, &mut task);
        assert_eq!(task["error"]["code"], -32000);
        let mut config = json!({"error": {"code": -32001, "message": "push notification config c does not exist"}});
        mutate_response(&f, None, &mut config);
        assert_eq!(config["error"]["code"], -32001, "another message: left alone");
    }

    #[test]
    fn request_drop_matching_and_shift_time() {
        let f = active(json!([
            {"op": "request_drop", "pointer": "/params/historyLength", "matching": "^[0-9]+$"},
            {"op": "request_shift_time", "pointer": "/params/statusTimestampAfter", "ms": 1}
        ]));
        let mut ok = json!({"params": {"historyLength": 3, "statusTimestampAfter": "2026-01-01T00:00:00.999Z"}});
        mutate_request(&f, &mut ok);
        assert_eq!(ok, json!({"params": {"statusTimestampAfter": "2026-01-01T00:00:01.000Z"}}));
        for kept in [json!("ten"), json!(-1)] {
            let mut bad = json!({"params": {"historyLength": kept.clone(), "statusTimestampAfter": "not a time"}});
            mutate_request(&f, &mut bad);
            assert_eq!(bad, json!({"params": {"historyLength": kept, "statusTimestampAfter": "not a time"}}));
        }
        let mut offset = json!({"params": {"statusTimestampAfter": "2026-01-01T01:00:00+01:00"}});
        mutate_request(&f, &mut offset);
        assert_eq!(offset["params"]["statusTimestampAfter"], "2026-01-01T00:00:00.001Z");
    }

    #[test]
    fn legacy_enums_refuse_the_proto_names_and_read_the_old_ones() {
        let f = active(json!([{"op": "legacy_enums"}]));
        let mut v1 =
            json!({"method": "SendMessage", "params": {"message": {"role": "ROLE_USER", "parts": [{"text": "user"}]}}});
        assert!(refuses_proto_enums(&f, &mut v1));
        let mut list = json!({"method": "ListTasks", "params": {"status": "TASK_STATE_WORKING"}});
        assert!(refuses_proto_enums(&f, &mut list));
        let mut old =
            json!({"method": "SendMessage", "params": {"message": {"role": "user", "parts": [{"text": "agent"}]}}});
        assert!(!refuses_proto_enums(&f, &mut old));
        assert_eq!(old["params"]["message"]["role"], "ROLE_USER");
        assert_eq!(old["params"]["message"]["parts"][0]["text"], "agent", "only enum members are read");
        let mut old_state = json!({"method": "ListTasks", "params": {"status": "input-required"}});
        assert!(!refuses_proto_enums(&f, &mut old_state));
        assert_eq!(old_state["params"]["status"], "TASK_STATE_INPUT_REQUIRED");
        let mut bogus = json!({"method": "SendMessage", "params": {"message": {"role": "ROLE_BOGUS"}}});
        assert!(!refuses_proto_enums(&f, &mut bogus), "no enum name: the mock validates it");
        assert_eq!(bogus["params"]["message"]["role"], "ROLE_BOGUS");
        let only_list = active(json!([{"op": "legacy_enums", "methods": ["ListTasks"]}]));
        let mut send = json!({"method": "SendMessage", "params": {"message": {"role": "ROLE_USER"}}});
        assert!(!refuses_proto_enums(&only_list, &mut send));
    }

    #[test]
    fn request_mutations() {
        let f = active(json!([{"op": "request_drop", "pointer": "/params/historyLength"}]));
        let mut req = json!({"method": "GetTask", "params": {"id": "t", "historyLength": 1}});
        mutate_request(&f, &mut req);
        assert_eq!(req, json!({"method": "GetTask", "params": {"id": "t"}}));

        let f =
            active(json!([{"op": "request_set", "pointer": "/params/id", "value": 7, "when_present": "/params/odd"}]));
        let mut plain = json!({"params": {"id": "t"}});
        mutate_request(&f, &mut plain);
        assert_eq!(plain, json!({"params": {"id": "t"}}), "nothing at when_present: untouched");
        let mut odd = json!({"params": {"id": "t", "odd": 1}});
        mutate_request(&f, &mut odd);
        assert_eq!(odd["params"]["id"], 7);
    }
}

//! What the kit changes in its requests once a diagnosis (`diagnose.rs`) found the 0.3 spelling an
//! agent accepts where it refuses the 1.0 one: every later request is spelled that way, so that the
//! checks grade what they are about instead of waiting on the one refusal. A change is one
//! dimension of the diagnosis, applied to its variant and to every later request by the same code.
//! A request whose own subject is that dimension (a bogus role, a `kind` of its own, its own
//! `A2A-Version`) is sent as written.

use serde_json::{Map, Value};

use crate::client::http::HttpRequest;

/// The 1.0 Role names and their 0.3 spellings. The mock's legacy-spelling fault keeps a table of its
/// own on purpose: the checker never reads the spec through the mock (`tests/layers.rs`), so a
/// misreading in one is not shared by the other.
const ROLES: &[(&str, &str)] = &[("ROLE_USER", "user"), ("ROLE_AGENT", "agent")];

/// The 1.0 TaskState names and their 0.3 spellings (lower case with hyphens; 0.3's `unknown` is
/// 1.0's UNSPECIFIED).
const STATES: &[(&str, &str)] = &[
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

/// The 1.0 name of a task state spelled the 0.3 way (`completed`), or the 1.0 name itself: a check
/// that only needs to know whether a task had ended reads through the spelling, which is the
/// enum checks' finding.
pub fn state_name(spelled: &str) -> Option<&'static str> {
    STATES.iter().find(|(name, old)| *name == spelled || *old == spelled).map(|(name, _)| *name)
}

/// What each change is called where a result says it was graded under it.
pub const ROLES_NOTE: &str = "role sent in its 0.3 spelling (ROLE_USER as user, ROLE_AGENT as agent)";
pub const STATES_NOTE: &str = "task states sent in their 0.3 spelling (TASK_STATE_COMPLETED as completed, ...)";
pub const KINDS_NOTE: &str = "the 0.3 kind discriminators added (kind message, kind text)";
pub const METHOD_NOTE: &str = "SendMessage sent as the 0.3 method message/send";
pub const NO_VERSION_NOTE: &str = "A2A-Version header left out";
pub const LEGACY_VERSION_NOTE: &str = "A2A-Version 0.3 sent instead of 1.0";
pub const BARE_NOTE: &str = "a bare Task or Message SendMessage result read as {\"task\": …} or {\"message\": …}";
/// The note of a check that read a GetTask or CancelTask answer inside the `task` wrapper the agent
/// put it in (the wrapper is KIT-TASK-001's and KIT-CANCEL-006's finding).
pub const WRAPPED_TASK_NOTE: &str = "a Task answered inside {\"task\": …} read as the Task itself";
/// The note of a check that read a ListTaskPushNotificationConfigs answer given as a bare array
/// (KIT-PUSH-011's finding) as the response whose `configs` it is.
pub const BARE_CONFIGS_NOTE: &str = "a bare array of push configs read as {\"configs\": […]}";
/// The note of a check that read task states and roles the agent spelled the 0.3 way as their 1.0
/// names (the spelling is DM-FMT-002's finding and the enum checks').
pub const LEGACY_ANSWERS_NOTE: &str = "0.3 enum spellings in answers (completed, agent, ...) read as their 1.0 names";
/// The note of a check that read data-model members the agent named by their proto names as their
/// JSON names (the naming is DM-FMT-001's finding).
pub const SNAKE_ANSWERS_NOTE: &str =
    "proto field names in answers (context_id, ...) read as their JSON names (contextId, ...)";

/// The data-model members whose proto name differs from their JSON name, as the proto spells them
/// (snake_case): an answer that uses one of these names used the proto's, not §5.5's.
const SNAKE_MEMBERS: &[&str] = &[
    "accepted_output_modes",
    "artifact_id",
    "artifact_update",
    "context_id",
    "history_length",
    "last_chunk",
    "media_type",
    "message_id",
    "next_page_token",
    "page_size",
    "reference_task_ids",
    "status_update",
    "task_id",
    "total_size",
];

/// The members whose value is the agent's own data, not the data model's: their keys are never
/// renamed.
const OPAQUE_MEMBERS: &[&str] = &["metadata", "data", "params"];

/// How a request names its protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// `A2A-Version: 1.0`, as the kit sends it.
    Current,
    /// No `A2A-Version` header (§3.6.2: read as 0.3).
    Omitted,
    /// `A2A-Version: 0.3`.
    Legacy,
}

/// Which dimensions of a request are spelled the 0.3 way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelling {
    /// `role` values: `user` / `agent`.
    pub roles: bool,
    /// TaskState values in requests (ListTasks `status`): only when the agent's own answers showed
    /// the 0.3 states, since no SendMessage variant can.
    pub states: bool,
    /// `kind: "message"` on the message, `kind: "text"` on its text parts.
    pub kinds: bool,
    /// `message/send` for `SendMessage`.
    pub method: bool,
    pub version: Version,
}

impl Spelling {
    /// The 1.0 request, unchanged.
    pub const NONE: Spelling =
        Spelling { roles: false, states: false, kinds: false, method: false, version: Version::Current };

    /// True when nothing is changed.
    pub fn is_none(&self) -> bool {
        *self == Spelling::NONE
    }

    /// Spells a JSON-RPC request envelope this way; returns what changed.
    pub fn body(&self, envelope: &mut Value) -> Vec<&'static str> {
        let mut notes = Vec::new();
        if self.method && envelope.get("method").and_then(Value::as_str) == Some("SendMessage") {
            envelope["method"] = Value::from("message/send");
            notes.push(METHOD_NOTE);
        }
        let Some(params) = envelope.get_mut("params") else { return notes };
        if self.roles && rename(params, &["role"], ROLES) {
            notes.push(ROLES_NOTE);
        }
        if self.states && rename(params, &["status", "state"], STATES) {
            notes.push(STATES_NOTE);
        }
        if self.kinds && add_kinds(params) {
            notes.push(KINDS_NOTE);
        }
        notes
    }

    /// Sets the request's `A2A-Version` header this way; returns what changed.
    pub fn headers(&self, req: &mut HttpRequest) -> Option<&'static str> {
        let drop = |req: &mut HttpRequest| {
            req.headers.retain(|(k, _)| !k.eq_ignore_ascii_case("A2A-Version"));
            // A version the user gave with -H goes too: the request is to carry none or 0.3.
            req.omit_user_headers.push("A2A-Version".into());
        };
        match self.version {
            Version::Current => None,
            Version::Omitted => {
                drop(req);
                Some(NO_VERSION_NOTE)
            }
            Version::Legacy => {
                drop(req);
                req.headers.push(("A2A-Version".into(), "0.3".into()));
                Some(LEGACY_VERSION_NOTE)
            }
        }
    }
}

/// Renames the enum values of the members named `keys`, when every such value in the request is a
/// 1.0 name: a request carrying anything else there (ROLE_BOGUS, a 0.3 spelling of its own) is
/// about that value and goes as written.
fn rename(params: &mut Value, keys: &[&str], names: &[(&str, &str)]) -> bool {
    let mut found = Vec::new();
    collect(params, keys, &mut found);
    if found.is_empty() || !found.iter().all(|v| v.as_str().is_some_and(|s| names.iter().any(|(n, _)| *n == s))) {
        return false;
    }
    replace(params, keys, names);
    true
}

fn collect(v: &Value, keys: &[&str], out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if keys.contains(&k.as_str()) && !x.is_object() {
                    out.push(x.clone());
                } else {
                    collect(x, keys, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect(x, keys, out)),
        _ => {}
    }
}

fn replace(v: &mut Value, keys: &[&str], names: &[(&str, &str)]) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                let old = x.as_str().filter(|_| keys.contains(&k.as_str()));
                match old.and_then(|s| names.iter().find(|(n, _)| *n == s)) {
                    Some((_, legacy)) => *x = Value::from(*legacy),
                    None => replace(x, keys, names),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| replace(x, keys, names)),
        _ => {}
    }
}

/// Adds the 0.3 discriminators to the request's message and its text parts, unless the request
/// has a `kind` anywhere: then kinds are what it is about.
fn add_kinds(params: &mut Value) -> bool {
    fn has_kind(v: &Value) -> bool {
        match v {
            Value::Object(m) => m.contains_key("kind") || m.values().any(has_kind),
            Value::Array(a) => a.iter().any(has_kind),
            _ => false,
        }
    }
    if has_kind(params) {
        return false;
    }
    let Some(Value::Object(message)) = params.get_mut("message") else { return false };
    message.insert("kind".into(), Value::from("message"));
    for part in message.get_mut("parts").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Value::Object(p) = part
            && p.contains_key("text")
        {
            p.insert("kind".into(), Value::from("text"));
        }
    }
    true
}

/// A SendMessage result that is a Task or a Message itself instead of a SendMessageResponse
/// holding one: `"task"` or `"message"`. A Task's own `id` and `status` outweigh a stray `message`
/// member beside them (no SendMessageResponse has either), as a `task` member outweighs a
/// `message` one: whenever an answer shows a task, the task is what the other checks read.
pub fn bare_kind(result: &Value) -> Option<&'static str> {
    let o = result.as_object()?;
    if o.contains_key("task") {
        return None;
    }
    if o.contains_key("id") && o.contains_key("status") {
        Some("task")
    } else if o.contains_key("message") {
        None
    } else if o.contains_key("messageId") && o.contains_key("parts") {
        Some("message")
    } else {
        None
    }
}

/// The Task a GetTask or CancelTask answer holds inside a `{"task": …}` wrapper (a Task with an
/// `id` and a `status`, the wrapper's only member); `None` for any other answer.
pub fn wrapped_task(result: &Value) -> Option<&Value> {
    let inner = result.as_object().filter(|m| m.len() == 1)?.get("task")?;
    inner.get("id")?;
    inner.get("status")?;
    Some(inner)
}

/// A GetTask answer's Task, read through a `task` wrapper when it came in one: what a task's state
/// is decides when the kit stops waiting, whatever the answer's shape (KIT-TASK-001's finding).
pub fn task_of(result: &Value) -> &Value {
    wrapped_task(result).unwrap_or(result)
}

/// What the run changes in the other checks' requests, and how it reads their SendMessage results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workaround {
    pub spelling: Spelling,
    /// The agent answered the working variant with a bare Task or Message: captures of a
    /// SendMessage result read that shape as the SendMessageResponse holding it.
    pub bare: bool,
    /// The agent's answers spell task states or roles the 0.3 way: the checks not about the
    /// spelling read them as their 1.0 names ([`read_legacy_enums`]).
    pub legacy_answers: bool,
    /// The agent's answers name data-model members by their proto names (`context_id`): the checks
    /// not about the naming read them by their JSON names ([`read_snake_members`]).
    pub snake_answers: bool,
}

impl Workaround {
    /// Rewrites one request to the interface: its JSON body when the kit serialized it (a body
    /// that does not read back byte for byte was written by hand and is the check's subject), and
    /// its version header unless the step sets one itself (`own_version`). Returns what changed.
    pub fn rewrite(&self, req: &mut HttpRequest, rpc_url: &str, own_version: bool) -> Vec<&'static str> {
        if !req.method.eq_ignore_ascii_case("POST") || req.url != rpc_url {
            return Vec::new();
        }
        let mut notes = Vec::new();
        if let Some(body) = &req.body
            && let Ok(mut envelope) = serde_json::from_slice::<Value>(body)
            && envelope.is_object()
            && serde_json::to_vec(&envelope).is_ok_and(|b| &b == body)
        {
            notes = self.spelling.body(&mut envelope);
            if !notes.is_empty() {
                req.body = Some(serde_json::to_vec(&envelope).unwrap_or_default().into());
            }
        }
        if !own_version && let Some(note) = self.spelling.headers(req) {
            notes.push(note);
        }
        notes
    }

    /// [`Workaround::rewrite`] for a request to the HTTP+JSON interface at `rest_url`: its body is
    /// the params themselves (the operation is named by the path, so there is no method to spell),
    /// and the version header goes as for JSON-RPC.
    pub fn rewrite_rest(&self, req: &mut HttpRequest, rest_url: &str, own_version: bool) -> Vec<&'static str> {
        if rest_url.is_empty() || !req.url.starts_with(rest_url.trim_end_matches('/')) {
            return Vec::new();
        }
        let mut notes = Vec::new();
        if let Some(body) = &req.body
            && let Ok(params) = serde_json::from_slice::<Value>(body)
            && params.is_object()
            && serde_json::to_vec(&params).is_ok_and(|b| &b == body)
        {
            let mut envelope = serde_json::json!({ "params": params });
            notes = self.spelling.body(&mut envelope);
            if !notes.is_empty() {
                req.body = Some(serde_json::to_vec(&envelope["params"]).unwrap_or_default().into());
            }
        }
        if !own_version && let Some(note) = self.spelling.headers(req) {
            notes.push(note);
        }
        notes
    }

    /// The SendMessage result as a SendMessageResponse: a bare Task or Message wrapped, when the
    /// diagnosis saw that shape; `None` when there is nothing to read differently.
    pub fn wrap_result(&self, result: &Value) -> Option<Value> {
        if !self.bare {
            return None;
        }
        let kind = bare_kind(result)?;
        let mut m = Map::new();
        m.insert(kind.into(), result.clone());
        Some(Value::Object(m))
    }

    /// Every change, in words.
    pub fn notes(&self) -> Vec<&'static str> {
        let s = &self.spelling;
        let mut out = Vec::new();
        for (on, note) in
            [(s.roles, ROLES_NOTE), (s.states, STATES_NOTE), (s.kinds, KINDS_NOTE), (s.method, METHOD_NOTE)]
        {
            if on {
                out.push(note);
            }
        }
        match s.version {
            Version::Current => {}
            Version::Omitted => out.push(NO_VERSION_NOTE),
            Version::Legacy => out.push(LEGACY_VERSION_NOTE),
        }
        if self.bare {
            out.push(BARE_NOTE);
        }
        if self.legacy_answers {
            out.push(LEGACY_ANSWERS_NOTE);
        }
        if self.snake_answers {
            out.push(SNAKE_ANSWERS_NOTE);
        }
        out
    }
}

/// True when a result shows task states in their 0.3 spelling (`status.state: "completed"`).
pub fn shows_legacy_states(result: &Value) -> bool {
    let mut found = Vec::new();
    collect(result, &["state"], &mut found);
    found.iter().any(|v| v.as_str().is_some_and(|s| STATES.iter().any(|(_, legacy)| *legacy == s)))
}

/// The note of a check that read a JSON-RPC stream's bare StreamResponse events as the results
/// they would have held.
pub const BARE_EVENTS_NOTE: &str = "bare StreamResponse events of a JSON-RPC stream read as their results";

/// True when an SSE event's JSON is a StreamResponse itself (one of its four members, no JSON-RPC
/// envelope) rather than a JSON-RPC response holding one.
pub fn is_bare_stream_response(event: &Value) -> bool {
    let Some(o) = event.as_object() else { return false };
    let members = ["task", "message", "statusUpdate", "artifactUpdate"];
    !["jsonrpc", "result", "error"].iter().any(|k| o.contains_key(*k)) && members.iter().any(|k| o.contains_key(*k))
}

/// True when a result shows task states or roles in their 0.3 spelling.
pub fn shows_legacy_enums(result: &Value) -> bool {
    let mut roles = Vec::new();
    collect(result, &["role"], &mut roles);
    shows_legacy_states(result)
        || roles.iter().any(|v| v.as_str().is_some_and(|s| ROLES.iter().any(|(_, legacy)| *legacy == s)))
}

/// True when an answer names a data-model member by its proto name (`context_id`).
pub fn shows_snake_members(result: &Value) -> bool {
    match result {
        Value::Object(m) => m.iter().any(|(k, x)| {
            SNAKE_MEMBERS.contains(&k.as_str()) || (!OPAQUE_MEMBERS.contains(&k.as_str()) && shows_snake_members(x))
        }),
        Value::Array(a) => a.iter().any(shows_snake_members),
        _ => false,
    }
}

/// Renames, in an answer, the data-model members named by their proto names to their JSON names
/// (`context_id` to `contextId`), unless the JSON name is there too; returns whether anything
/// changed. The agent's own data (metadata, a data part) keeps its keys.
pub fn read_snake_members(v: &mut Value) -> bool {
    let mut changed = false;
    match v {
        Value::Object(m) => {
            let renames: Vec<String> = m
                .keys()
                .filter(|k| SNAKE_MEMBERS.contains(&k.as_str()) && !m.contains_key(&camel(k)))
                .cloned()
                .collect();
            for k in renames {
                if let Some(x) = m.remove(&k) {
                    m.insert(camel(&k), x);
                    changed = true;
                }
            }
            for (k, x) in m.iter_mut() {
                if !OPAQUE_MEMBERS.contains(&k.as_str()) {
                    changed |= read_snake_members(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| changed |= read_snake_members(x)),
        _ => {}
    }
    changed
}

fn camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

/// Renames, in an answer, the task states (`state` of a `status`) and the roles spelled the 0.3
/// way to their 1.0 names; returns whether anything changed. Only those two members are read: a
/// `state` elsewhere (in a data part, in metadata) is the agent's own data.
pub fn read_legacy_enums(v: &mut Value) -> bool {
    fn walk(v: &mut Value, in_status: bool) -> bool {
        let mut changed = false;
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    let table = match k.as_str() {
                        "state" if in_status => Some(STATES),
                        "role" => Some(ROLES),
                        _ => None,
                    };
                    let renamed = table.and_then(|t| {
                        let s = x.as_str()?;
                        t.iter().find(|(_, legacy)| *legacy == s).map(|(name, _)| *name)
                    });
                    match renamed {
                        Some(name) => {
                            *x = Value::from(name);
                            changed = true;
                        }
                        None => changed |= walk(x, k == "status"),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| changed |= walk(x, false)),
            _ => {}
        }
        changed
    }
    walk(v, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::rpc::rpc_request;
    use serde_json::json;

    fn send(params: Value) -> HttpRequest {
        rpc_request("http://a/rpc", &json!(1), "SendMessage", Some(params))
    }

    fn body(req: &HttpRequest) -> Value {
        serde_json::from_slice(req.body.as_deref().unwrap()).unwrap()
    }

    #[test]
    fn roles_are_renamed_unless_the_request_is_about_them() {
        let w = Workaround {
            spelling: Spelling { roles: true, ..Spelling::NONE },
            bare: false,
            legacy_answers: false,
            snake_answers: false,
        };
        let mut req = send(json!({"message": {"role": "ROLE_USER", "parts": [{"text": "ROLE_USER"}]}}));
        assert_eq!(w.rewrite(&mut req, "http://a/rpc", false), [ROLES_NOTE]);
        assert_eq!(body(&req)["params"]["message"], json!({"role": "user", "parts": [{"text": "ROLE_USER"}]}));
        let mut bogus = send(json!({"message": {"role": "ROLE_BOGUS", "parts": [{"text": "x"}]}}));
        assert!(w.rewrite(&mut bogus, "http://a/rpc", false).is_empty());
        assert_eq!(body(&bogus)["params"]["message"]["role"], "ROLE_BOGUS");
        let mut elsewhere = send(json!({"message": {"role": "ROLE_USER"}}));
        assert!(w.rewrite(&mut elsewhere, "http://b/rpc", false).is_empty(), "only the interface");
    }

    #[test]
    fn hand_written_bodies_go_as_written() {
        let w = Workaround {
            spelling: Spelling { roles: true, ..Spelling::NONE },
            bare: false,
            legacy_answers: false,
            snake_answers: false,
        };
        let raw = br#"{"jsonrpc":"2.0", "id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER"}}}"#;
        let mut req = HttpRequest { body: Some(raw.to_vec().into()), ..send(json!({})) };
        assert!(w.rewrite(&mut req, "http://a/rpc", false).is_empty());
        assert_eq!(req.body.as_deref(), Some(&raw[..]));
    }

    #[test]
    fn kinds_method_and_version() {
        let all = Spelling { roles: true, kinds: true, method: true, version: Version::Legacy, states: false };
        let w = Workaround { spelling: all, bare: false, legacy_answers: false, snake_answers: false };
        let mut req = send(json!({"message": {"role": "ROLE_USER", "parts": [{"text": "x"}, {"data": 1}]}}));
        let notes = w.rewrite(&mut req, "http://a/rpc", false);
        assert_eq!(notes, [METHOD_NOTE, ROLES_NOTE, KINDS_NOTE, LEGACY_VERSION_NOTE]);
        let b = body(&req);
        assert_eq!(b["method"], "message/send");
        assert_eq!(b["params"]["message"]["kind"], "message");
        assert_eq!(b["params"]["message"]["parts"], json!([{"text": "x", "kind": "text"}, {"data": 1}]));
        assert_eq!(req.header_value("a2a-version"), Some("0.3"));
        let mut own = send(json!({"message": {"kind": "message", "parts": [{"text": "x"}]}}));
        let notes = w.rewrite(&mut own, "http://a/rpc", true);
        assert_eq!(notes, [METHOD_NOTE], "its own kind and its own version stay");
        assert_eq!(own.header_value("a2a-version"), Some("1.0"));
        let omit = Workaround {
            spelling: Spelling { version: Version::Omitted, ..Spelling::NONE },
            bare: false,
            legacy_answers: false,
            snake_answers: false,
        };
        let mut req = send(json!({}));
        assert_eq!(omit.rewrite(&mut req, "http://a/rpc", false), [NO_VERSION_NOTE]);
        assert_eq!(req.header_value("a2a-version"), None);
        assert!(req.omit_user_headers.iter().any(|h| h == "A2A-Version"));
    }

    #[test]
    fn bare_results_are_read_wrapped() {
        let w = Workaround { spelling: Spelling::NONE, bare: true, legacy_answers: false, snake_answers: false };
        let task = json!({"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}});
        assert_eq!(w.wrap_result(&task), Some(json!({"task": task})));
        let msg = json!({"messageId": "m", "role": "ROLE_AGENT", "parts": []});
        assert_eq!(w.wrap_result(&msg), Some(json!({"message": msg})));
        assert_eq!(w.wrap_result(&json!({"task": task})), None);
        let task_and_message = json!({"id": "t", "status": {}, "message": msg});
        assert_eq!(w.wrap_result(&task_and_message), Some(json!({"task": task_and_message})), "a stray message");
        assert_eq!(w.wrap_result(&json!({"message": msg})), None);
        assert_eq!(Workaround { bare: false, ..w }.wrap_result(&task), None);
        assert!(shows_legacy_states(&json!({"status": {"state": "completed"}})));
        assert!(!shows_legacy_states(&task));
    }

    #[test]
    fn proto_names_in_answers_are_read_as_json_names() {
        let mut v = json!({"task": {"id": "t", "context_id": "c", "status": {"state": "TASK_STATE_WORKING"},
            "artifacts": [{"artifact_id": "a", "parts": [{"data": {"task_id": "mine"}}]}],
            "metadata": {"message_id": "theirs"}}});
        assert!(shows_snake_members(&v));
        assert!(read_snake_members(&mut v));
        assert_eq!(v["task"]["contextId"], "c");
        assert!(v["task"].get("context_id").is_none());
        assert_eq!(v["task"]["artifacts"][0]["artifactId"], "a");
        assert_eq!(v["task"]["artifacts"][0]["parts"][0]["data"], json!({"task_id": "mine"}), "the agent's own data");
        assert_eq!(v["task"]["metadata"], json!({"message_id": "theirs"}));
        let mut both = json!({"contextId": "c", "context_id": "d"});
        assert!(!read_snake_members(&mut both), "the JSON name wins where both are given");
        assert!(!shows_snake_members(&json!({"metadata": {"context_id": "x"}, "contextId": "c"})));
    }

    #[test]
    fn legacy_enums_in_answers_are_read_as_1_0_names() {
        let mut v = json!({"task": {"status": {"state": "completed", "message": {"role": "agent"}},
            "history": [{"role": "user", "parts": [{"data": {"state": "working"}}]}],
            "metadata": {"state": "canceled"}}});
        assert!(shows_legacy_enums(&v));
        assert!(read_legacy_enums(&mut v));
        assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(v["task"]["status"]["message"]["role"], "ROLE_AGENT");
        assert_eq!(v["task"]["history"][0]["role"], "ROLE_USER");
        assert_eq!(v["task"]["history"][0]["parts"][0]["data"]["state"], "working", "the agent's own data");
        assert_eq!(v["task"]["metadata"]["state"], "canceled");
        let mut good = json!({"statusUpdate": {"status": {"state": "TASK_STATE_WORKING"}}});
        assert!(!shows_legacy_enums(&good));
        assert!(!read_legacy_enums(&mut good));
        assert!(shows_legacy_enums(&json!({"message": {"role": "agent"}})));
    }
}

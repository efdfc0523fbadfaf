//! The protocol bindings a check is graded over. A check written as abstract operations
//! (`send_message`, `get_task`, ...) that asserts only on what every binding carries (a result,
//! an A2A error, a stream of events) is binding-neutral: it is graded once per binding the agent
//! declares, and its result over HTTP+JSON is `ID[http+json]`, so that the JSON-RPC ids of
//! existing baselines stay as they are. A check about one binding's own rules (the JSON-RPC
//! envelope, a raw request, a probe written in Rust) names its binding or is JSON-RPC's.

use std::sync::Arc;

use serde_json::Value;

use super::model::{Step, Test};

/// A binding the kit speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Binding {
    JsonRpc,
    HttpJson,
}

impl Binding {
    pub const ALL: [Binding; 2] = [Binding::JsonRpc, Binding::HttpJson];

    /// As the command line and reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Binding::JsonRpc => "jsonrpc",
            Binding::HttpJson => "http+json",
        }
    }

    /// `protocolBinding` of an `AgentInterface` (§4.4.6).
    pub fn protocol_binding(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::HttpJson => "HTTP+JSON",
        }
    }

    /// A check id as graded over this binding: JSON-RPC keeps the id, others get a suffix.
    pub fn check_id(self, id: &str) -> String {
        match self {
            Binding::JsonRpc => id.to_owned(),
            other => format!("{id}[{}]", other.as_str()),
        }
    }

    /// The id a check has whatever binding grades it: `CORE-GET-001` for `CORE-GET-001[http+json]`.
    pub fn plain_id(id: &str) -> &str {
        match id.strip_suffix(']').and_then(|b| b.rsplit_once('[')) {
            Some((plain, _)) => plain,
            None => id,
        }
    }

    /// `jsonrpc`, `http+json`; also the ACTS spelling `rest` and `protocolBinding` names.
    pub fn parse(s: &str) -> Option<Binding> {
        match s.to_ascii_lowercase().as_str() {
            "jsonrpc" | "json-rpc" => Some(Binding::JsonRpc),
            "http+json" | "rest" | "http-json" | "httpjson" => Some(Binding::HttpJson),
            _ => None,
        }
    }
}

/// The bindings `test` is graded over: those its `transport` names, else both when it is
/// binding-neutral, else JSON-RPC alone.
///
/// The bindings its steps name for themselves (a check comparing the bindings) must be graded
/// too: [`step_bindings`].
pub fn bindings_of(test: &Test) -> Vec<Binding> {
    if !test.transport.is_empty() {
        let mut named: Vec<Binding> = test.transport.iter().filter_map(|t| Binding::parse(t)).collect();
        named.sort();
        named.dedup();
        return named;
    }
    if is_neutral(test) { Binding::ALL.to_vec() } else { vec![Binding::JsonRpc] }
}

/// The bindings `test`'s steps name for themselves.
pub fn step_bindings(test: &Test) -> Vec<Binding> {
    let mut out: Vec<Binding> =
        test.steps.iter().filter_map(|s| s.binding.as_deref().and_then(Binding::parse)).collect();
    out.sort();
    out.dedup();
    out
}

/// Abstract operations only (no raw request, no probe), at least one to the agent's interface,
/// and nothing asserted of the JSON-RPC envelope or of HTTP itself (a request id echoed in
/// events, an HTTP status or header, which the bindings set apart; an operation's `body` is its
/// result, whatever the binding).
fn is_neutral(test: &Test) -> bool {
    if test.probe.is_some() || test.synthetic || test.steps.is_empty() {
        return false;
    }
    let mut talks_to_agent = false;
    for s in &test.steps {
        if s.raw.is_some() {
            return false;
        }
        match s.operation.as_deref() {
            Some("get_agent_card") => {}
            Some(op) => {
                talks_to_agent = true;
                if !path_params_given(op, s.params.as_ref()) {
                    return false;
                }
            }
            None => {}
        }
        if let Some(e) = &s.expect
            && (e.status.is_some() || !e.headers.is_empty())
        {
            return false;
        }
        if s.expect_error.as_ref().is_some_and(|e| e.status.is_some()) || s.expect_refused.is_some() {
            return false;
        }
        let stream = serde_json::to_value(&s.expect_stream).unwrap_or(Value::Null);
        if stream.get("echo_request_id").is_some_and(|v| v == &Value::Bool(true)) {
            return false;
        }
        // A2A's service parameters (`A2A-Version`, `A2A-Extensions`, §3.2.6) travel as headers on
        // every binding (§9.2, §11.2): a step that sets one asks the same of every binding.
        if s.headers.keys().any(|h| !is_service_parameter(h)) || s.binding.is_some() {
            return false;
        }
    }
    talks_to_agent
}

/// A header that carries an A2A service parameter: all of them, and only they, start with `A2A-`
/// (§3.2.6).
fn is_service_parameter(name: &str) -> bool {
    name.len() > 4 && name[..4].eq_ignore_ascii_case("a2a-")
}

/// The check that the agent accepts the version the kit names (`A2A-Version: 1.0`).
pub const VERSION: &str = "KIT-VER-001";

/// The check that the agent reads §11.5's query parameters: every check whose HTTP+JSON requests
/// carry a query builds on it.
pub const REST_QUERY: &str = "REST-QUERY-001";

/// The check that HTTP+JSON errors name their A2A error (`ErrorInfo`).
pub const REST_ERR: &str = "REST-ERR-001";

/// Whether `step` expects the agent to name an A2A error: an `error_type`, or a `code` other than
/// a bare negation (`{"not": -32009}`: any answer but that error, which an error body without an
/// ErrorInfo satisfies as well as one with it).
fn expects_a2a_error(step: &Step) -> bool {
    let names_a_code = |c: &Value| !c.as_object().is_some_and(|o| o.len() == 1 && o.contains_key("not"));
    step.operation.is_some()
        && step
            .expect_error
            .as_ref()
            .is_some_and(|e| e.code.as_ref().is_some_and(names_a_code) || e.error_type.is_some())
}

/// Whether an operation of `test` travels with a query over HTTP+JSON: a GET with more params
/// than its path holds.
fn sends_query(test: &Test) -> bool {
    test.steps.iter().any(|s| {
        let path: &[&str] = match s.operation.as_deref() {
            Some("list_tasks") | Some("list_push_configs") | Some("list_push_notification_configs") => &[],
            Some("get_task") => &["id"],
            _ => return false,
        };
        let params = s.params.as_ref().and_then(Value::as_object);
        params.is_some_and(|p| p.keys().any(|k| k != "tenant" && !path.contains(&k.as_str())))
    })
}

/// Whether the params hold, as strings, what HTTP+JSON puts in the operation's path: a check that
/// sends no task id, or a number for one, is about JSON-RPC's params, which a path cannot carry.
fn path_params_given(op: &str, params: Option<&Value>) -> bool {
    let needs: &[&str] = match op {
        "get_task" | "cancel_task" | "subscribe_to_task" => &["id"],
        "create_push_config"
        | "set_push_notification_config"
        | "list_push_configs"
        | "list_push_notification_configs" => &["taskId"],
        "get_push_config"
        | "get_push_notification_config"
        | "delete_push_config"
        | "delete_push_notification_config" => &["taskId"],
        _ => &[],
    };
    needs.iter().all(|k| params.and_then(|p| p.get(*k)).is_some_and(Value::is_string))
}

/// `test` as graded over `binding`: its id, and the ids it builds on that are graded over that
/// binding too (`neutral`: the ids graded over more than one binding), carry the binding; the
/// JSON-RPC binding's own checks (`jsonrpc_own`: the envelope of its events, say) are nothing a
/// check graded over another binding builds on.
pub fn for_binding(
    test: &Arc<Test>,
    binding: Binding,
    neutral: &dyn Fn(&str) -> bool,
    jsonrpc_own: &dyn Fn(&str) -> bool,
) -> Arc<Test> {
    if binding == Binding::JsonRpc {
        return test.clone();
    }
    let mut t = (**test).clone();
    // A check graded over one binding only keeps its id: no other result could share it.
    if neutral(&t.id) {
        t.id = binding.check_id(&t.id);
    }
    let rename = |b: Binding, id: &String| if neutral(id) { b.check_id(id) } else { id.clone() };
    // A check whose steps name their bindings names the checks it builds on as it means them
    // (the JSON-RPC grading of a neutral check: its plain id).
    if step_bindings(&t).is_empty() {
        t.depends_on = t.depends_on.iter().filter(|id| !jsonrpc_own(id)).map(|id| rename(binding, id)).collect();
    }
    // An agent that refuses the version the kit names over this binding refuses every request:
    // that is KIT-VER-001's finding over the binding, which every other check there waits on.
    let version = binding.check_id(VERSION);
    if binding == Binding::HttpJson && neutral(VERSION) && t.id != version && !t.depends_on.contains(&version) {
        t.depends_on.push(version);
    }
    // What the agent does with a query it cannot read is REST-QUERY-001's finding, not every
    // reader's of a query.
    if binding == Binding::HttpJson && t.id != REST_QUERY && sends_query(&t) {
        t.depends_on.push(REST_QUERY.to_owned());
    }
    for s in &mut t.steps {
        // A step over a binding of its own builds on that binding's checks.
        let own = s.binding.as_deref().and_then(Binding::parse).unwrap_or(binding);
        s.prerequisite.0 = s.prerequisite.0.iter().map(|id| rename(own, id)).collect();
        // Which A2A error an HTTP+JSON error is, the kit reads from its ErrorInfo, else from the
        // error's name or status: an error that names none is REST-ERR-001's finding, not that of
        // every step expecting one (the runner defers to it only for such an error).
        if own == Binding::HttpJson && t.id != REST_ERR && expects_a2a_error(s) {
            s.prerequisite.0.push(REST_ERR.to_owned());
        }
    }
    Arc::new(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(json: serde_json::Value) -> Test {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn operations_asserting_results_are_neutral_and_envelope_or_raw_checks_are_jsonrpcs() {
        let neutral = test(serde_json::json!({"id": "A", "name": "a", "level": "must",
            "steps": [{"id": "s", "operation": "get_task", "params": {"id": "x"}, "expect_error": {"code": -32001}}]}));
        assert_eq!(bindings_of(&neutral), Binding::ALL.to_vec());
        let envelope = test(serde_json::json!({"id": "B", "name": "b", "level": "must",
            "steps": [{"id": "s", "operation": "get_task", "params": {"id": "x"}, "expect": {"status": 200}}]}));
        assert_eq!(bindings_of(&envelope), [Binding::JsonRpc]);
        let version = test(serde_json::json!({"id": "V", "name": "v", "level": "must",
            "steps": [{"id": "s", "operation": "get_task", "params": {"id": "x"}, "headers": {"A2A-Version": "0.3"},
                "expect_error": {"code": -32009}}]}));
        assert_eq!(bindings_of(&version), Binding::ALL.to_vec(), "a service parameter is every binding's");
        let other = test(serde_json::json!({"id": "H", "name": "h", "level": "must",
            "steps": [{"id": "s", "operation": "get_task", "params": {"id": "x"}, "headers": {"Accept": "text/plain"}}]}));
        assert_eq!(bindings_of(&other), [Binding::JsonRpc]);
        let raw = test(serde_json::json!({"id": "C", "name": "c", "level": "must",
            "steps": [{"id": "s", "raw": {"method": "POST", "path": "/"}}]}));
        assert_eq!(bindings_of(&raw), [Binding::JsonRpc]);
        let card = test(serde_json::json!({"id": "D", "name": "d", "level": "must",
            "steps": [{"id": "s", "operation": "get_agent_card"}]}));
        assert_eq!(bindings_of(&card), [Binding::JsonRpc], "the card is one for every binding");
        let rest = test(serde_json::json!({"id": "E", "name": "e", "level": "must", "transport": ["rest"],
            "steps": [{"id": "s", "raw": {"method": "GET", "path": "/tasks/x"}}]}));
        assert_eq!(bindings_of(&rest), [Binding::HttpJson]);
    }

    #[test]
    fn a_clone_for_http_json_carries_the_binding_in_its_id_and_its_neutral_prerequisites() {
        let t = Arc::new(test(serde_json::json!({"id": "A", "name": "a", "level": "must", "depends_on": ["N", "J"],
            "steps": [{"id": "s", "operation": "get_task", "prerequisite": "N"}]})));
        let neutral = |id: &str| id == "N" || id == "A";
        let none = |_: &str| false;
        let c = for_binding(&t, Binding::HttpJson, &neutral, &none);
        assert_eq!(c.id, "A[http+json]");
        assert_eq!(c.depends_on, ["N[http+json]", "J"]);
        let versioned = |id: &str| id == "N" || id == "A" || id == VERSION;
        let c = for_binding(&t, Binding::HttpJson, &versioned, &none);
        assert_eq!(c.depends_on, ["N[http+json]", "J", "KIT-VER-001[http+json]"], "every check waits on the version");
        assert_eq!(c.steps[0].prerequisite.0, ["N[http+json]"]);
        let c = for_binding(&t, Binding::HttpJson, &neutral, &|id: &str| id == "J");
        assert_eq!(c.depends_on, ["N[http+json]"], "the JSON-RPC binding's own checks are not built on");
        assert!(Arc::ptr_eq(&for_binding(&t, Binding::JsonRpc, &neutral, &none), &t));
        let only_rest = |id: &str| id == "N";
        let c = for_binding(&t, Binding::HttpJson, &only_rest, &none);
        assert_eq!(c.id, "A", "graded over one binding: its own id");
        assert_eq!(c.steps[0].prerequisite.0, ["N[http+json]"], "it still builds on the HTTP+JSON grading of N");
    }
}

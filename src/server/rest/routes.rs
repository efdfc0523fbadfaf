//! The HTTP+JSON routes (§11.3; the proto's `google.api.http` options): which operation a verb and
//! a path name, and the params the path, the query (§11.5) and the body give it, the very params a
//! JSON-RPC call of the operation carries. Pure functions: the adapter and the fault layer read a
//! request the same way.

use axum::http::Method as Verb;
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};

use crate::protocol::version::VERSION_HEADER;
use crate::protocol::{ErrorCode, Method, RpcError};

/// An operation found at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub method: Method,
    /// From a `/{tenant}/…` path; `None` for a path at the root.
    pub tenant: Option<String>,
    /// The task of a `/tasks/{id}…` path (`{taskId}` of a push config path).
    pub task: Option<String>,
    /// The config of a `/tasks/{taskId}/pushNotificationConfigs/{id}` path.
    pub config: Option<String>,
}

/// Why no operation answers a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoRoute {
    /// No operation has this path.
    NotFound,
    /// Operations have this path, under other verbs (the `Allow` header's value).
    WrongVerb(String),
}

/// Params a fault rewrote before the adapter read the request (see `faults::layer`): the adapter
/// takes these instead of reading the path, query and body again.
#[derive(Debug, Clone)]
pub struct RestParams(pub Value);

/// What a path names: the operations under each verb, and the task and config ids in it.
struct AtPath {
    verbs: Vec<(Verb, Method)>,
    task: Option<String>,
    config: Option<String>,
}

/// What a path relative to the REST base (its segments, decoded) names.
fn operations(segs: &[String]) -> Option<AtPath> {
    let strs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let ops = match strs.as_slice() {
        ["message:send"] => (vec![(Verb::POST, Method::SendMessage)], None, None),
        ["message:stream"] => (vec![(Verb::POST, Method::SendStreamingMessage)], None, None),
        ["tasks"] => (vec![(Verb::GET, Method::ListTasks)], None, None),
        ["extendedAgentCard"] => (vec![(Verb::GET, Method::GetExtendedAgentCard)], None, None),
        ["tasks", id] => match id.rsplit_once(':') {
            Some((id, "cancel")) => (vec![(Verb::POST, Method::CancelTask)], Some(id), None),
            // The proto says GET, the prose POST (digest §14 item 1): both are served.
            Some((id, "subscribe")) => {
                (vec![(Verb::GET, Method::SubscribeToTask), (Verb::POST, Method::SubscribeToTask)], Some(id), None)
            }
            _ => (vec![(Verb::GET, Method::GetTask)], Some(*id), None),
        },
        ["tasks", task, "pushNotificationConfigs"] => (
            vec![
                (Verb::POST, Method::CreateTaskPushNotificationConfig),
                (Verb::GET, Method::ListTaskPushNotificationConfigs),
            ],
            Some(*task),
            None,
        ),
        ["tasks", task, "pushNotificationConfigs", config] => (
            vec![
                (Verb::GET, Method::GetTaskPushNotificationConfig),
                (Verb::DELETE, Method::DeleteTaskPushNotificationConfig),
            ],
            Some(*task),
            Some(*config),
        ),
        _ => return None,
    };
    let (verbs, task, config) = ops;
    Some(AtPath { verbs, task: task.map(str::to_owned), config: config.map(str::to_owned) })
}

/// The operation `verb` names at `path` (relative to the REST base; a doubled leading slash, from a
/// client joining a base URL that ends in `/`, is read as one). A path without a tenant is tried
/// first, then one whose first segment is the tenant.
pub fn route(verb: &Verb, path: &str) -> Result<Route, NoRoute> {
    let path = path.trim_start_matches('/');
    let segs: Vec<String> = path
        .split('/')
        .map(|s| percent_decode_str(s).decode_utf8().map(|c| c.into_owned()))
        .collect::<Result<_, _>>()
        .map_err(|_| NoRoute::NotFound)?;
    let found = operations(&segs).map(|ops| (None, ops)).or_else(|| {
        let (tenant, rest) = segs.split_first()?;
        (!tenant.is_empty()).then_some(())?;
        operations(rest).map(|ops| (Some(tenant.clone()), ops))
    });
    let Some((tenant, AtPath { verbs, task, config })) = found else {
        return Err(NoRoute::NotFound);
    };
    // HEAD is GET without a body (RFC 9110 §9.3.2); hyper leaves the body out.
    let asked = if verb == Verb::HEAD { &Verb::GET } else { verb };
    match verbs.iter().find(|(v, _)| v == asked) {
        Some((_, method)) => Ok(Route { method: *method, tenant, task, config }),
        None => {
            let mut allow: Vec<&str> = verbs.iter().map(|(v, _)| v.as_str()).collect();
            allow.dedup();
            Err(NoRoute::WrongVerb(allow.join(", ")))
        }
    }
}

/// Query parameters whose value is a number (ProtoJSON int32; §11.5: "Numbers: Represented as
/// decimal strings"), camelCase and the proto's own spelling, which ProtoJSON parsers also accept.
const NUMBERS: &[&str] = &["historyLength", "history_length", "pageSize", "page_size"];
/// Query parameters whose value is a boolean (§11.5: "lowercase strings (`true`, `false`)").
const BOOLEANS: &[&str] = &["includeArtifacts", "include_artifacts"];

/// The query's parameters as params members (RFC 3986: `+` is itself, `%2B` a plus too). A number
/// or boolean that reads as one becomes one; anything else stays a string, which the method then
/// refuses exactly as it refuses that string in a JSON-RPC call (`pageSize=ten` is -32602 naming
/// `pageSize`). `A2A-Version` is a service parameter, not a member; a parameter given twice is
/// -32602 (no query parameter of the binding is repeated).
pub fn query_members(query: &str) -> Result<Map<String, Value>, RpcError> {
    let mut out = Map::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| percent_decode_str(s).decode_utf8().map(|c| c.into_owned());
        let (Ok(k), Ok(v)) = (decode(k), decode(v)) else {
            return Err(RpcError::invalid_params("query", format!("{pair:?} is not percent-encoded UTF-8")));
        };
        if k.eq_ignore_ascii_case(VERSION_HEADER) {
            continue;
        }
        let value = if NUMBERS.contains(&k.as_str())
            && let Ok(n) = v.parse::<i64>()
        {
            Value::from(n)
        } else if BOOLEANS.contains(&k.as_str()) && (v == "true" || v == "false") {
            Value::Bool(v == "true")
        } else {
            Value::String(v)
        };
        if out.insert(k.clone(), value).is_some() {
            return Err(RpcError::invalid_params(k, "is given more than once"));
        }
    }
    Ok(out)
}

/// True for the operations whose request the body carries (`body: "*"` in the proto); the others
/// read the query.
fn has_body(route: &Route, verb: &Verb) -> bool {
    match route.method {
        Method::SendMessage
        | Method::SendStreamingMessage
        | Method::CancelTask
        | Method::CreateTaskPushNotificationConfig => true,
        Method::SubscribeToTask => verb == Verb::POST,
        _ => false,
    }
}

/// The params of `route`'s operation: the body's members (a body-carrying operation) or the
/// query's, then the path's ids and tenant over them (the path names the resource).
pub fn params(route: &Route, verb: &Verb, query: Option<&str>, body: &[u8]) -> Result<Value, RpcError> {
    let mut members = if has_body(route, verb) {
        if body.iter().all(u8::is_ascii_whitespace) {
            Map::new()
        } else {
            match serde_json::from_slice::<Value>(body) {
                Ok(Value::Object(m)) => m,
                Ok(_) => return Err(RpcError::invalid_params("body", "must be a JSON object")),
                Err(e) => return Err(RpcError::new(ErrorCode::ParseError, format!("Invalid JSON payload: {e}"))),
            }
        }
    } else {
        query_members(query.unwrap_or(""))?
    };
    let (task_field, config_field) = match route.method {
        Method::GetTask | Method::CancelTask | Method::SubscribeToTask => ("id", None),
        Method::CreateTaskPushNotificationConfig | Method::ListTaskPushNotificationConfigs => ("taskId", None),
        Method::GetTaskPushNotificationConfig | Method::DeleteTaskPushNotificationConfig => ("taskId", Some("id")),
        _ => ("", None),
    };
    if let Some(t) = &route.task {
        members.insert(task_field.to_owned(), Value::String(t.clone()));
    }
    if let (Some(field), Some(c)) = (config_field, &route.config) {
        members.insert(field.to_owned(), Value::String(c.clone()));
    }
    if let Some(t) = &route.tenant {
        members.insert("tenant".to_owned(), Value::String(t.clone()));
    }
    Ok(Value::Object(members))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(verb: Verb, path: &str) -> Route {
        route(&verb, path).unwrap_or_else(|e| panic!("{verb} {path}: {e:?}"))
    }

    #[test]
    fn every_operation_at_its_path_and_verb_with_and_without_a_tenant() {
        let cases = [
            (Verb::POST, "/message:send", Method::SendMessage),
            (Verb::POST, "/message:stream", Method::SendStreamingMessage),
            (Verb::GET, "/tasks/t1", Method::GetTask),
            (Verb::GET, "/tasks", Method::ListTasks),
            (Verb::POST, "/tasks/t1:cancel", Method::CancelTask),
            (Verb::GET, "/tasks/t1:subscribe", Method::SubscribeToTask),
            (Verb::POST, "/tasks/t1:subscribe", Method::SubscribeToTask),
            (Verb::POST, "/tasks/t1/pushNotificationConfigs", Method::CreateTaskPushNotificationConfig),
            (Verb::GET, "/tasks/t1/pushNotificationConfigs", Method::ListTaskPushNotificationConfigs),
            (Verb::GET, "/tasks/t1/pushNotificationConfigs/c1", Method::GetTaskPushNotificationConfig),
            (Verb::DELETE, "/tasks/t1/pushNotificationConfigs/c1", Method::DeleteTaskPushNotificationConfig),
            (Verb::GET, "/extendedAgentCard", Method::GetExtendedAgentCard),
        ];
        for (verb, path, method) in cases {
            let r = ok(verb.clone(), path);
            assert_eq!((r.method, r.tenant.as_deref()), (method, None), "{verb} {path}");
            let r = ok(verb.clone(), &format!("/acme{path}"));
            assert_eq!((r.method, r.tenant.as_deref()), (method, Some("acme")), "{verb} /acme{path}");
        }
        let r = ok(Verb::DELETE, "/tasks/t%2F1/pushNotificationConfigs/c1");
        assert_eq!((r.task.as_deref(), r.config.as_deref()), (Some("t/1"), Some("c1")));
        assert_eq!(ok(Verb::POST, "//message:send").method, Method::SendMessage, "a base URL's slash, doubled");
        assert_eq!(ok(Verb::POST, "/tasks/a:b:cancel").task.as_deref(), Some("a:b"));
    }

    #[test]
    fn unknown_paths_and_verbs() {
        assert_eq!(route(&Verb::GET, "/nothing/here/at/all/x"), Err(NoRoute::NotFound));
        assert_eq!(route(&Verb::GET, "/message:send"), Err(NoRoute::WrongVerb("POST".into())));
        assert_eq!(route(&Verb::PUT, "/tasks/t/pushNotificationConfigs"), Err(NoRoute::WrongVerb("POST, GET".into())));
        assert_eq!(route(&Verb::DELETE, "/tasks/t:subscribe"), Err(NoRoute::WrongVerb("GET, POST".into())));
    }

    #[test]
    fn query_values_are_typed_where_they_read_and_strings_elsewhere() {
        let m = query_members("contextId=c%201&pageSize=10&includeArtifacts=true&statusTimestampAfter=2026-01-01T00:00:00+01:00&A2A-Version=1.0")
            .unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"contextId": "c 1", "pageSize": 10, "includeArtifacts": true,
                   "statusTimestampAfter": "2026-01-01T00:00:00+01:00"})
        );
        let m = query_members("pageSize=ten&includeArtifacts=yes&status=BOGUS").unwrap();
        assert_eq!(Value::Object(m), json!({"pageSize": "ten", "includeArtifacts": "yes", "status": "BOGUS"}));
        let twice = query_members("pageSize=1&pageSize=2").unwrap_err();
        assert_eq!(twice.violations[0].field, "pageSize");
    }

    #[test]
    fn params_take_the_path_over_the_body_and_the_query() {
        let r = ok(Verb::POST, "/acme/tasks/t1:cancel");
        let p = params(&r, &Verb::POST, None, br#"{"id": "other", "metadata": {"k": 1}}"#).unwrap();
        assert_eq!(p, json!({"id": "t1", "metadata": {"k": 1}, "tenant": "acme"}));
        assert_eq!(params(&r, &Verb::POST, None, b"").unwrap(), json!({"id": "t1", "tenant": "acme"}));
        let r = ok(Verb::GET, "/tasks/t1/pushNotificationConfigs/c1");
        assert_eq!(params(&r, &Verb::GET, Some("x=1"), b"").unwrap(), json!({"x": "1", "taskId": "t1", "id": "c1"}));
        let r = ok(Verb::GET, "/tasks/t1");
        assert_eq!(
            params(&r, &Verb::GET, Some("historyLength=2"), b"").unwrap(),
            json!({"historyLength": 2, "id": "t1"})
        );
        let r = ok(Verb::POST, "/message:send");
        assert_eq!(params(&r, &Verb::POST, None, b"{").unwrap_err().code, ErrorCode::ParseError);
        assert_eq!(params(&r, &Verb::POST, None, b"[]").unwrap_err().code, ErrorCode::InvalidParams);
    }
}

//! Building JSON-RPC 2.0 requests for the A2A binding (§9) and reading their answers as raw JSON.

use serde_json::{Map, Value, json};

use super::http::HttpRequest;

/// The `A2A-Version` this client speaks (§3.6).
pub const A2A_VERSION: &str = "1.0";

/// A `POST` of a JSON-RPC request to `url` with `Content-Type: application/json` and
/// `A2A-Version: 1.0`. `params` is omitted when `None`.
pub fn rpc_request(url: &str, id: &Value, method: &str, params: Option<Value>) -> HttpRequest {
    let mut envelope = Map::new();
    envelope.insert("jsonrpc".into(), Value::from("2.0"));
    envelope.insert("id".into(), id.clone());
    envelope.insert("method".into(), Value::from(method));
    if let Some(p) = params {
        envelope.insert("params".into(), p);
    }
    HttpRequest {
        method: "POST".into(),
        url: url.to_owned(),
        headers: vec![("Content-Type".into(), "application/json".into()), ("A2A-Version".into(), A2A_VERSION.into())],
        body: Some(serde_json::to_vec(&Value::Object(envelope)).unwrap_or_default().into()),
        ..HttpRequest::default()
    }
}

/// [`rpc_request`] for the streaming methods: also `Accept: text/event-stream, application/json`.
pub fn rpc_stream_request(url: &str, id: &Value, method: &str, params: Option<Value>) -> HttpRequest {
    rpc_request(url, id, method, params).header("Accept", "text/event-stream, application/json")
}

/// Sets `tenant` in `params` when `tenant` is non-empty (§8.3.2: echo the selected interface's
/// tenant). `null` params become an object; params that are not an object are returned as they
/// are.
pub fn with_tenant(params: Value, tenant: &str) -> Value {
    if tenant.is_empty() {
        return params;
    }
    match params {
        Value::Object(mut map) => {
            map.insert("tenant".into(), Value::from(tenant));
            Value::Object(map)
        }
        Value::Null => json!({ "tenant": tenant }),
        other => other,
    }
}

/// A fresh request id (a UUID string).
pub fn new_id() -> Value {
    Value::from(uuid::Uuid::new_v4().to_string())
}

/// A user message with one text part (1.0 shapes: `ROLE_USER`, `parts[].text`).
pub fn text_message(text: &str, task_id: Option<&str>, context_id: Option<&str>) -> Value {
    let mut m = json!({
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER",
        "parts": [{ "text": text }],
    });
    if let Some(t) = task_id {
        m["taskId"] = Value::from(t);
    }
    if let Some(c) = context_id {
        m["contextId"] = Value::from(c);
    }
    m
}

/// What a JSON-RPC response body says, read without typing it.
#[derive(Debug, Clone, PartialEq)]
pub enum RpcOutcome {
    /// A `result` member (and no `error`).
    Result(Value),
    /// An `error` object (and no `result`).
    Error {
        /// `error.code`, when an integer.
        code: Option<i64>,
        /// `error.message`, when a string.
        message: Option<String>,
        /// `error.data`, as sent.
        data: Option<Value>,
    },
    /// Neither shape: why.
    Malformed(String),
}

impl RpcOutcome {
    pub fn is_result(&self) -> bool {
        matches!(self, RpcOutcome::Result(_))
    }

    pub fn error_code(&self) -> Option<i64> {
        match self {
            RpcOutcome::Error { code, .. } => *code,
            _ => None,
        }
    }
}

pub fn rpc_outcome(body: &Value) -> RpcOutcome {
    let Some(obj) = body.as_object() else {
        return RpcOutcome::Malformed(format!("response is a JSON {}, not an object", kind(body)));
    };
    match (obj.get("result"), obj.get("error")) {
        (Some(_), Some(_)) => RpcOutcome::Malformed("response has both `result` and `error`".into()),
        (Some(r), None) => RpcOutcome::Result(r.clone()),
        (None, Some(Value::Object(e))) => RpcOutcome::Error {
            code: e.get("code").and_then(Value::as_i64),
            message: e.get("message").and_then(Value::as_str).map(str::to_owned),
            data: e.get("data").cloned(),
        },
        (None, Some(other)) => RpcOutcome::Malformed(format!("`error` is a JSON {}, not an object", kind(other))),
        (None, None) => RpcOutcome::Malformed("response has neither `result` nor `error`".into()),
    }
}

/// The JSON kind of a value, for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_has_envelope_and_headers() {
        let r = rpc_request("http://a.test/rpc", &json!(7), "GetTask", Some(json!({"id": "t"})));
        assert_eq!(r.method, "POST");
        assert_eq!(r.header_value("content-type"), Some("application/json"));
        assert_eq!(r.header_value("a2a-version"), Some("1.0"));
        let body: Value = serde_json::from_slice(r.body.as_ref().unwrap()).unwrap();
        assert_eq!(body, json!({"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "t"}}));
        let r = rpc_request("http://a.test/rpc", &json!("x"), "GetExtendedAgentCard", None);
        let body: Value = serde_json::from_slice(r.body.as_ref().unwrap()).unwrap();
        assert!(body.get("params").is_none());
        let s = rpc_stream_request("http://a.test/rpc", &json!(1), "SubscribeToTask", None);
        assert_eq!(s.header_value("accept"), Some("text/event-stream, application/json"));
    }

    #[test]
    fn tenant_only_when_present() {
        assert_eq!(with_tenant(json!({"id": "t"}), ""), json!({"id": "t"}));
        assert_eq!(with_tenant(json!({"id": "t"}), "acme"), json!({"id": "t", "tenant": "acme"}));
        assert_eq!(with_tenant(Value::Null, "acme"), json!({"tenant": "acme"}));
        assert_eq!(with_tenant(json!([1]), "acme"), json!([1]));
    }

    #[test]
    fn outcomes() {
        assert_eq!(
            rpc_outcome(&json!({"jsonrpc": "2.0", "id": 1, "result": {"a": 1}})),
            RpcOutcome::Result(json!({"a": 1}))
        );
        assert_eq!(
            rpc_outcome(&json!({"id": 1, "error": {"code": -32001, "message": "nope", "data": []}})),
            RpcOutcome::Error { code: Some(-32001), message: Some("nope".into()), data: Some(json!([])) }
        );
        assert_eq!(
            rpc_outcome(&json!({"error": {"code": "x"}})),
            RpcOutcome::Error { code: None, message: None, data: None }
        );
        assert!(matches!(rpc_outcome(&json!([])), RpcOutcome::Malformed(m) if m.contains("array")));
        assert!(matches!(rpc_outcome(&json!({"result": 1, "error": {}})), RpcOutcome::Malformed(_)));
        assert!(matches!(rpc_outcome(&json!({"error": "bad"})), RpcOutcome::Malformed(_)));
        assert!(matches!(rpc_outcome(&json!({"id": 1})), RpcOutcome::Malformed(_)));
        assert_eq!(rpc_outcome(&json!({"result": null})), RpcOutcome::Result(Value::Null));
    }

    #[test]
    fn text_message_shape() {
        let m = text_message("hi", Some("t1"), None);
        assert_eq!(m["role"], "ROLE_USER");
        assert_eq!(m["parts"][0]["text"], "hi");
        assert_eq!(m["taskId"], "t1");
        assert!(m.get("contextId").is_none());
    }
}

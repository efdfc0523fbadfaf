//! HTTP+JSON errors (§11.6): the HTTP status §5.4 gives the error, and a `google.rpc.Status` body
//! `{"error": {"code", "status", "message", "details"}}` whose `details` are the JSON-RPC error's
//! `data` (ErrorInfo for A2A errors, BadRequest for invalid params).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::protocol::{ErrorCode, RpcError};

/// The media type of HTTP+JSON bodies (§11.1: "application/a2a+json SHOULD be used for requests
/// and responses"; 1.0.0 used application/json).
pub const A2A_JSON: &str = "application/a2a+json";

/// An error answer's JSON-RPC form (`{code, message, data}`), kept on the response for the fault
/// layer: a fault changes an error in that form, whichever binding answers, and the answer is
/// rendered again from it ([`status_body`]).
#[derive(Debug, Clone)]
pub struct RpcForm(pub Value);

/// The HTTP status and the Status body of an error given in its JSON-RPC form: `code` gives the
/// HTTP status and the `status` name (§5.4; a code no table knows is 500 `UNKNOWN`), `message` is
/// kept, and `data` becomes `details`.
pub fn status_body(rpc: &Value) -> (StatusCode, Value) {
    let code = rpc.get("code").and_then(Value::as_i64).and_then(ErrorCode::from_code);
    let (http, name) = match code {
        Some(c) => (c.http_status(), c.rpc_status()),
        None => (500, "UNKNOWN"),
    };
    let mut status = Map::new();
    status.insert("code".into(), Value::from(http));
    status.insert("status".into(), Value::from(name));
    if let Some(m) = rpc.get("message") {
        status.insert("message".into(), m.clone());
    }
    if let Some(d) = rpc.get("data") {
        status.insert("details".into(), d.clone());
    }
    let mut body = Map::new();
    body.insert("error".into(), Value::Object(status));
    (StatusCode::from_u16(http).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), Value::Object(body))
}

/// The Status body of `err` (ErrorInfo on every code when `info_everywhere`).
pub fn error_body(err: &RpcError, info_everywhere: bool) -> Value {
    status_body(&err.to_json_with(info_everywhere)).1
}

/// A JSON answer in the binding's media type.
pub fn json_response(status: StatusCode, body: String) -> Response {
    let mut r = (status, body).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(A2A_JSON));
    r
}

/// The HTTP error answer for `err`, its JSON-RPC form attached ([`RpcForm`]); 401 says how to
/// authenticate, as the JSON-RPC side's does.
pub fn error_response(err: &RpcError, info_everywhere: bool) -> Response {
    render(err.to_json_with(info_everywhere))
}

/// The HTTP error answer for an error in its JSON-RPC form.
pub fn render(rpc: Value) -> Response {
    let (status, body) = status_body(&rpc);
    let mut r = json_response(status, body.to_string());
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"a2a-conform\""));
    }
    r.extensions_mut().insert(RpcForm(rpc));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::errors::{BAD_REQUEST_TYPE, ERROR_DOMAIN, ERROR_INFO_TYPE};

    #[test]
    fn task_not_found_is_404_with_error_info() {
        let body = error_body(&RpcError::task_not_found("t-1"), false);
        let e = &body["error"];
        assert_eq!(e["code"], 404);
        assert_eq!(e["status"], "NOT_FOUND");
        assert_eq!(e["message"], "Task not found");
        assert_eq!(e["details"][0]["@type"], ERROR_INFO_TYPE);
        assert_eq!(e["details"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(e["details"][0]["domain"], ERROR_DOMAIN);
        assert_eq!(e["details"][0]["metadata"]["taskId"], "t-1");
        let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["code", "status", "message", "details"]);
    }

    #[test]
    fn invalid_params_is_400_invalid_argument_with_bad_request() {
        let body = error_body(&RpcError::invalid_params("pageSize", "expected an int32"), false);
        assert_eq!(body["error"]["code"], 400);
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(body["error"]["details"][0]["@type"], BAD_REQUEST_TYPE);
        assert_eq!(body["error"]["details"][0]["fieldViolations"][0]["field"], "pageSize");
    }

    #[test]
    fn an_unknown_code_is_500_unknown_and_401_says_how_to_authenticate() {
        let (status, body) = status_body(&serde_json::json!({"code": -32099, "message": "m"}));
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error"]["status"], "UNKNOWN");
        assert!(body["error"].get("details").is_none());
        let r = error_response(&RpcError::standard(ErrorCode::Unauthenticated), false);
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert!(r.headers().contains_key(header::WWW_AUTHENTICATE));
        assert_eq!(r.headers()[header::CONTENT_TYPE], A2A_JSON);
        assert!(r.extensions().get::<RpcForm>().is_some());
    }
}

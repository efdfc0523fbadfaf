//! The JSON-RPC endpoint over HTTP (§9): content type, body bounds, envelope, `A2A-Version`,
//! required extensions, then dispatch. Every failure is a JSON-RPC error with HTTP 200 (digest §14
//! item 4), except authentication, which also says 401.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use serde_json::value::RawValue;

use super::app::App;
use super::binding::Binding;
use super::methods::{self, CallContext, Outcome};
use super::service::{
    authenticate, check_extensions, check_version, header_str, is_json_content_type, over_response_limit,
    read_request_body, requested_version,
};
use super::validate::Params;
use crate::protocol::jsonrpc::{Method, RequestId, failure_with};
use crate::protocol::limits::json_depth_exceeds;
use crate::protocol::version::EXTENSIONS_HEADER;
use crate::protocol::{ErrorCode, RpcError};

fn json_response(status: StatusCode, body: &Value, extensions: Option<&str>) -> Response {
    json_text_response(status, body.to_string(), extensions)
}

fn json_text_response(status: StatusCode, body: String, extensions: Option<&str>) -> Response {
    let mut r = (status, body).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(ext) = extensions.and_then(|e| HeaderValue::from_str(e).ok()) {
        r.headers_mut().insert(EXTENSIONS_HEADER, ext);
    }
    r
}

/// A success envelope around a result already serialized, unless it is over the response limit.
fn result_response(app: &App, request_id: &RequestId, result: &str, extensions: Option<&str>) -> Response {
    let id = request_id.to_json().to_string();
    let mut body = String::with_capacity(result.len() + id.len() + 36);
    body.push_str(r#"{"jsonrpc":"2.0","id":"#);
    body.push_str(&id);
    body.push_str(r#","result":"#);
    body.push_str(result);
    body.push('}');
    if let Some(e) = over_response_limit(app, body.len()) {
        return error_response(app, Some(request_id), &e);
    }
    json_text_response(StatusCode::OK, body, extensions)
}

fn error_response(app: &App, id: Option<&RequestId>, err: &RpcError) -> Response {
    let status = if err.code == ErrorCode::Unauthenticated { StatusCode::UNAUTHORIZED } else { StatusCode::OK };
    let mut r = json_response(status, &failure_with(id, err, app.config.error_info_everywhere), None);
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"a2a-conform\""));
    }
    r
}

/// A well-formed envelope: a call to answer, or a notification, which gets no reply.
enum Envelope<'a> {
    Call(RequestId, String, Params<'a>),
    Notification,
}

/// A `null` member is there, and absent is `None`: an id of `null` is not a notification.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue as serde::Deserialize>::deserialize(d).map(Some)
}

/// The envelope's members as text, without reading `params` into a `Value`.
#[derive(serde::Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
}

/// Reads a well-formed call without building a `Value` of its params, which the method then
/// reads straight into its request type; `None` for anything else, which [`parse_envelope`]
/// reads and judges in full.
fn quick_envelope(body: &[u8]) -> Option<Envelope<'_>> {
    let raw: RawEnvelope<'_> = serde_json::from_slice(body).ok()?;
    if raw.jsonrpc?.get() != "\"2.0\"" {
        return None;
    }
    let method: String = serde_json::from_str(raw.method?.get()).ok()?;
    let id = match serde_json::from_str::<Value>(raw.id?.get()).ok()? {
        Value::String(s) => RequestId::String(s),
        Value::Number(n) => RequestId::Number(n),
        _ => return None,
    };
    let params = match raw.params {
        None => Params::Value(Value::Null),
        Some(p) if p.get().starts_with('{') || p.get() == "null" => Params::Raw(p),
        Some(_) => return None,
    };
    Some(Envelope::Call(id, method, params))
}

/// Reads the envelope; errors carry the id when it could be read.
fn parse_envelope(body: &[u8]) -> Result<Envelope<'_>, (Option<RequestId>, RpcError)> {
    if let Some(e) = quick_envelope(body) {
        return Ok(e);
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err((None, RpcError::new(ErrorCode::ParseError, "Invalid JSON payload: the body is empty")));
    }
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| (None, RpcError::new(ErrorCode::ParseError, format!("Invalid JSON payload: {e}"))))?;
    let invalid = |id: Option<RequestId>, why: &str| {
        (id, RpcError::new(ErrorCode::InvalidRequest, format!("Request payload validation error: {why}")))
    };
    let mut obj = match v {
        Value::Object(o) => o,
        Value::Array(_) => return Err(invalid(None, "batch requests are not part of the A2A JSON-RPC binding")),
        _ => return Err(invalid(None, "the request must be a JSON object")),
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) => Some(RequestId::String(s.clone())),
        Some(Value::Number(n)) => Some(RequestId::Number(n.clone())),
        // A null id is a call (one JSON-RPC discourages), not a notification: it is served.
        Some(Value::Null) => Some(RequestId::Null),
        None => None,
        Some(_) => return Err(invalid(None, "`id` must be a string or a number")),
    };
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(invalid(id, "`jsonrpc` must be \"2.0\""));
    }
    let method = match obj.get("method") {
        Some(Value::String(m)) => m.clone(),
        _ => return Err(invalid(id, "`method` must be a string")),
    };
    // JSON-RPC 2.0 §4.1: "The Server MUST NOT reply to a Notification". A2A defines none, so
    // the mock does nothing with it either.
    let Some(id) = id else {
        return Ok(Envelope::Notification);
    };
    let params = obj.remove("params").unwrap_or(Value::Null);
    if !matches!(params, Value::Object(_) | Value::Null) {
        return Err((Some(id), RpcError::invalid_params("params", "must be an object (by-name parameters)")));
    }
    Ok(Envelope::Call(id, method, Params::Value(params)))
}

pub async fn endpoint(State(app): State<Arc<App>>, headers: HeaderMap, uri: Uri, body: Body) -> Response {
    let limits = &app.config.limits;
    match header_str(&headers, header::CONTENT_TYPE.as_str()) {
        Some(ct) if is_json_content_type(ct) => {}
        other => {
            let why = match other {
                Some(ct) => format!("Content-Type {ct:?} is not application/json"),
                None => "Content-Type application/json is required".to_owned(),
            };
            return error_response(
                &app,
                None,
                &RpcError::new(ErrorCode::InvalidRequest, format!("Request payload validation error: {why}")),
            );
        }
    }
    let bytes = match read_request_body(body, limits.max_request_bytes).await {
        Ok(b) => b,
        Err(e) => return error_response(&app, None, &e),
    };
    if json_depth_exceeds(&bytes, limits.max_json_depth) {
        let e = RpcError::new(
            ErrorCode::InvalidRequest,
            format!("Request payload validation error: JSON nested deeper than {} levels", limits.max_json_depth),
        );
        return error_response(&app, None, &e);
    }
    let (id, method_name, params) = match parse_envelope(&bytes) {
        Ok(Envelope::Call(id, method, params)) => (id, method, params),
        Ok(Envelope::Notification) => return StatusCode::NO_CONTENT.into_response(),
        Err((id, e)) => return error_response(&app, id.as_ref(), &e),
    };
    if let RequestId::String(s) = &id
        && s.len() > limits.max_id_len
    {
        let e = RpcError::new(
            ErrorCode::InvalidRequest,
            format!("Request payload validation error: `id` longer than {} bytes", limits.max_id_len),
        );
        return error_response(&app, None, &e);
    }
    let owner = match authenticate(&app, &app.faults, &headers, &method_name) {
        Ok(o) => o,
        Err(e) => return error_response(&app, Some(&id), &e),
    };
    if let Err(e) = check_version(&app, requested_version(&headers, &uri)) {
        return error_response(&app, Some(&id), &e);
    }
    let legacy = || app.config.legacy_method_names.then(|| Method::from_legacy_name(&method_name)).flatten();
    let Some(method) = Method::from_name(&method_name).or_else(legacy) else {
        let e = RpcError::new(ErrorCode::MethodNotFound, format!("Method not found: {method_name:?}"))
            .with_meta("method", method_name);
        return error_response(&app, Some(&id), &e);
    };
    let activated = match check_extensions(&app, &headers) {
        Ok(a) => a,
        Err(e) => return error_response(&app, Some(&id), &e),
    };
    if params.is_null() && method != Method::GetExtendedAgentCard {
        return error_response(&app, Some(&id), &RpcError::invalid_params("params", "is required"));
    }
    let ctx = CallContext {
        binding: Binding::JsonRpc,
        id: id.clone(),
        method,
        authorization: header_str(&headers, header::AUTHORIZATION.as_str()).map(str::to_owned),
        last_event_id: header_str(&headers, "last-event-id").map(str::to_owned),
        owner,
        foreign: AtomicBool::new(false),
    };
    let outcome = methods::call(&app, &ctx, params).await;
    match outcome {
        Ok(Outcome::Result(v)) => result_response(&app, &id, &v.to_string(), activated.as_deref()),
        Ok(Outcome::Json(raw)) => result_response(&app, &id, &raw, activated.as_deref()),
        Ok(Outcome::Stream(mut r)) => {
            if let Some(ext) = activated.and_then(|e| HeaderValue::from_str(&e).ok()) {
                r.headers_mut().insert(EXTENSIONS_HEADER, ext);
            }
            r
        }
        Err(e) => error_response(&app, Some(&id), &e),
    }
}

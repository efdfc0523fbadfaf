//! The HTTP+JSON/REST binding (§11): every operation at the proto's paths and verbs, and at each
//! `/{tenant}/…` variant, read into the params a JSON-RPC call carries and answered by the same
//! methods (one store, one behaviour). Results are the body as they are, `application/a2a+json`
//! (§11.1); errors the HTTP status of §5.4 and a `google.rpc.Status` body (§11.6); streams bare
//! StreamResponses (§11.7).

pub mod errors;
pub mod routes;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method as Verb, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::Value;

use super::app::App;
use super::binding::Binding;
use super::methods::{self, CallContext, Outcome};
use super::service::{
    authenticate, check_extensions, check_version, header_str, is_json_content_type, over_response_limit,
    read_request_body, requested_version,
};
use super::validate::Params;
use crate::protocol::limits::json_depth_exceeds;
use crate::protocol::version::EXTENSIONS_HEADER;
use crate::protocol::{ErrorCode, RequestId, RpcError};
use errors::{error_response, json_response};
use routes::{NoRoute, RestParams};

/// The error answer of this mock (ErrorInfo on every code under `--error-info-everywhere`).
fn error(app: &App, err: &RpcError) -> Response {
    error_response(err, app.config.error_info_everywhere)
}

fn with_extensions(mut r: Response, activated: Option<&str>) -> Response {
    if let Some(v) = activated.and_then(|e| HeaderValue::from_str(e).ok()) {
        r.headers_mut().insert(EXTENSIONS_HEADER, v);
    }
    r
}

/// A result as the body, unless it is over the response limit.
fn result_response(app: &App, body: String) -> Response {
    if let Some(e) = over_response_limit(app, body.len()) {
        return error(app, &e);
    }
    json_response(StatusCode::OK, body)
}

/// No operation at this path (404), or not under this verb (405 with `Allow`).
fn no_route(app: &App, verb: &Verb, path: &str, why: NoRoute) -> Response {
    match why {
        NoRoute::NotFound => {
            let e =
                RpcError::new(ErrorCode::MethodNotFound, format!("no A2A operation at {path}")).with_meta("path", path);
            error(app, &e)
        }
        NoRoute::WrongVerb(allow) => {
            let e = RpcError::new(ErrorCode::MethodNotFound, format!("{verb} is not served at {path}; {allow} is"));
            let mut r = http_error(app, StatusCode::METHOD_NOT_ALLOWED, "UNIMPLEMENTED", &e);
            if let Ok(v) = HeaderValue::from_str(&allow) {
                r.headers_mut().insert(header::ALLOW, v);
            }
            r
        }
    }
}

/// An error HTTP itself names, not one of §5.4's: `err`'s body under another status.
fn http_error(app: &App, status: StatusCode, name: &str, err: &RpcError) -> Response {
    let (_, mut body) = errors::status_body(&err.to_json_with(app.config.error_info_everywhere));
    body["error"]["code"] = Value::from(status.as_u16());
    body["error"]["status"] = Value::from(name);
    json_response(status, body.to_string())
}

/// Every HTTP+JSON request under the REST base (the path prefix; nothing else there is served).
pub async fn endpoint(
    State(app): State<Arc<App>>,
    verb: Verb,
    headers: HeaderMap,
    uri: Uri,
    rewritten: Option<axum::Extension<RestParams>>,
    body: Body,
) -> Response {
    let path = uri.path();
    let route = match routes::route(&verb, path) {
        Ok(r) => r,
        Err(why) => return no_route(&app, &verb, path, why),
    };
    let faults = app.faults_for(Binding::HttpJson);
    let owner = match authenticate(&app, faults, &headers, route.method.name()) {
        Ok(o) => o,
        Err(e) => return error(&app, &e),
    };
    if let Err(e) = check_version(&app, requested_version(&headers, &uri)) {
        return error(&app, &e);
    }
    let limits = &app.config.limits;
    let bytes = match read_request_body(body, limits.max_request_bytes).await {
        Ok(b) => b,
        Err(e) => return error(&app, &e),
    };
    // §11.1: application/a2a+json SHOULD be used; application/json (1.0.0's) and any other +json
    // type are read too. A request without a body needs none. Another media type is HTTP's own
    // 415 Unsupported Media Type (RFC 9110 §15.5.16): the body is not one the binding reads. It is
    // not ContentTypeNotSupportedError, which is about a message's parts (§3.3.2).
    if !bytes.iter().all(u8::is_ascii_whitespace) {
        match header_str(&headers, header::CONTENT_TYPE.as_str()) {
            Some(ct) if is_json_content_type(ct) => {}
            other => {
                let why = match other {
                    Some(ct) => format!("Content-Type {ct:?} is not application/a2a+json or application/json"),
                    None => "Content-Type application/a2a+json is required with a body".to_owned(),
                };
                let e = RpcError::new(ErrorCode::InvalidRequest, format!("Request payload validation error: {why}"));
                return http_error(&app, StatusCode::UNSUPPORTED_MEDIA_TYPE, "INVALID_ARGUMENT", &e);
            }
        }
        if json_depth_exceeds(&bytes, limits.max_json_depth) {
            let e = RpcError::new(
                ErrorCode::InvalidRequest,
                format!("Request payload validation error: JSON nested deeper than {} levels", limits.max_json_depth),
            );
            return error(&app, &e);
        }
    }
    let activated = match check_extensions(&app, &headers) {
        Ok(a) => a,
        Err(e) => return error(&app, &e),
    };
    let params = match rewritten {
        Some(axum::Extension(RestParams(p))) => p,
        None => match routes::params(&route, &verb, uri.query(), &bytes) {
            Ok(p) => p,
            Err(e) => return error(&app, &e),
        },
    };
    let ctx = CallContext {
        binding: Binding::HttpJson,
        id: RequestId::String(String::new()),
        method: route.method,
        authorization: header_str(&headers, header::AUTHORIZATION.as_str()).map(str::to_owned),
        last_event_id: header_str(&headers, "last-event-id").map(str::to_owned),
        owner,
        foreign: AtomicBool::new(false),
    };
    // The extensions activated are echoed on answers, as the JSON-RPC side does.
    let ext = activated.as_deref();
    match methods::call(&app, &ctx, Params::Value(params)).await {
        Ok(Outcome::Result(v)) => with_extensions(result_response(&app, v.to_string()), ext),
        Ok(Outcome::Json(raw)) => with_extensions(result_response(&app, raw), ext),
        Ok(Outcome::Stream(r)) => with_extensions(r, ext),
        Err(e) => error(&app, &e),
    }
}

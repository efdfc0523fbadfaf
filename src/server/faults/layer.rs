//! The middleware that makes the mock commit its active faults: it rewrites requests before the
//! mock sees them and responses (JSON answers, SSE streams, the card) after it produced them.
//!
//! Each request belongs to a binding or to none (the card): a JSON-RPC call gets the faults
//! committed on JSON-RPC, an HTTP+JSON one those committed on HTTP+JSON (a fault's `bindings`),
//! the card those without a filter. An HTTP+JSON exchange is mutated as the JSON-RPC call it
//! stands for: the request as `{"method", "params"}` (the params its path, query and body give),
//! a result as the envelope's `result` (the REST body is the bare result), an error in its
//! JSON-RPC form `{code, message, data}` and rendered again as the binding's error (the code giving
//! the HTTP status, `data` the `details`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use serde_json::Value;

use super::apply::{self, StreamState, applies};
use super::{ActiveFaults, Mutation, SseDefect, Target};
use crate::server::binding::{Binding, Bindings};
use crate::server::card::{RPC_PATH, WELL_KNOWN_PATH};
use crate::server::rest::errors::{RpcForm, status_body};
use crate::server::rest::routes::{self, RestParams};
use crate::sse::{SseEvent, SseParser, encode_events};

/// Largest body the fault layer rewrites; larger ones pass through untouched.
const MAX_REWRITE: usize = 64 * 1024 * 1024;

const HTML: &str = "<!doctype html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>";

fn on_matches(on: &Option<String>, is_card: bool) -> bool {
    match on.as_deref() {
        Some("card") => is_card,
        Some("rpc") => !is_card,
        _ => true,
    }
}

/// What the middleware holds: the faults committed on each binding and on the card, where the
/// bindings are served, and which tasks have SubscribeToTask streams open, which tells a
/// concurrent subscriber from a lone one.
#[derive(Debug)]
pub struct FaultLayer {
    rpc: Arc<ActiveFaults>,
    rest: Arc<ActiveFaults>,
    card: Arc<ActiveFaults>,
    /// The path prefix the routes are nested under ("" for none).
    prefix: String,
    bindings: Bindings,
    subscribers: Arc<Subscribers>,
}

impl FaultLayer {
    /// The layer committing `faults` on a mock serving `bindings` under `prefix`.
    pub fn new(faults: ActiveFaults, prefix: &str, bindings: Bindings) -> Self {
        FaultLayer {
            rpc: Arc::new(faults.scoped(Some(Binding::JsonRpc))),
            rest: Arc::new(faults.scoped(Some(Binding::HttpJson))),
            card: Arc::new(faults.scoped(None)),
            prefix: prefix.to_owned(),
            bindings,
            subscribers: Arc::default(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rpc.is_empty() && self.rest.is_empty() && self.card.is_empty()
    }

    /// What a request is to: the card, a JSON-RPC call, or an HTTP+JSON one (its path relative
    /// to the prefix). A path the mock serves nothing at counts as JSON-RPC when REST is not
    /// served, as it always did.
    fn kind(&self, path: &str) -> Kind {
        let rel = match path.strip_prefix(self.prefix.as_str()) {
            Some(r) if !self.prefix.is_empty() && !r.is_empty() && !r.starts_with('/') => path,
            Some(r) => r,
            None => path,
        };
        if rel == WELL_KNOWN_PATH {
            return Kind::Card;
        }
        let rpc_path = rel == RPC_PATH || rel.strip_prefix(RPC_PATH) == Some("/");
        if self.bindings.serves(Binding::HttpJson) && !(rpc_path && self.bindings.serves(Binding::JsonRpc)) {
            return Kind::Rest(rel.to_owned());
        }
        Kind::Rpc
    }
}

/// What a request is to.
enum Kind {
    Card,
    Rpc,
    /// With the path relative to the REST base.
    Rest(String),
}

/// Open SubscribeToTask streams per task id.
#[derive(Debug, Default)]
struct Subscribers(Mutex<HashMap<String, usize>>);

/// One open SubscribeToTask stream, counted until it is dropped (the stream ended or the client
/// hung up).
struct Subscribed {
    subscribers: Arc<Subscribers>,
    task: String,
    /// Another stream of the task was open when this one opened.
    concurrent: bool,
}

impl Subscribers {
    fn open(self: &Arc<Self>, task: String) -> Subscribed {
        let mut open = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(task.clone()).or_default();
        let concurrent = *n > 0;
        *n += 1;
        Subscribed { subscribers: self.clone(), task, concurrent }
    }
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        let mut open = self.subscribers.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.task) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.task);
            }
        }
    }
}

/// The request-header and query mutations, on any request.
fn rewrite_request_head(faults: &ActiveFaults, parts: &mut axum::http::request::Parts) {
    for m in faults.mutations() {
        match m {
            Mutation::RequestDropHeader { name } => {
                parts.headers.remove(name.as_str());
            }
            Mutation::RequestSetHeader { name, value, if_absent, when_matches } => {
                if let (Ok(n), Ok(v)) = (HeaderName::try_from(name.as_str()), HeaderValue::from_str(value))
                    && !(*if_absent && parts.headers.contains_key(&n))
                    && when_matches.as_deref().is_none_or(|re| {
                        let sent = parts.headers.get(&n).and_then(|h| h.to_str().ok());
                        sent.is_some_and(|sent| regex::Regex::new(re).is_ok_and(|re| re.is_match(sent)))
                    })
                {
                    parts.headers.insert(n, v);
                }
            }
            Mutation::RequestDropQuery { names } => {
                let kept: Vec<&str> = parts
                    .uri
                    .query()
                    .unwrap_or("")
                    .split('&')
                    .filter(|pair| {
                        let name = pair.split('=').next().unwrap_or("");
                        !pair.is_empty() && !names.is_empty() && !names.iter().any(|n| n.eq_ignore_ascii_case(name))
                    })
                    .collect();
                let pq = match kept.is_empty() {
                    true => parts.uri.path().to_owned(),
                    false => format!("{}?{}", parts.uri.path(), kept.join("&")),
                };
                if let Ok(uri) = axum::http::Uri::builder().path_and_query(pq).build() {
                    parts.uri = uri;
                }
            }
            _ => {}
        }
    }
}

/// [`Mutation::QuerySnakeCaseOnly`]: the query without its camelCase names (service parameters,
/// `A2A-…`, kept).
fn snake_case_query(query: &str) -> String {
    query
        .split('&')
        .filter(|pair| {
            let name = pair.split('=').next().unwrap_or("");
            name.to_ascii_lowercase().starts_with("a2a-") || !name.bytes().any(|b| b.is_ascii_uppercase())
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Axum middleware committing the layer's faults.
pub async fn commit(State(layer): State<Arc<FaultLayer>>, req: Request, next: Next) -> Response {
    let kind = layer.kind(req.uri().path());
    let faults = match &kind {
        Kind::Card => &layer.card,
        Kind::Rpc => &layer.rpc,
        Kind::Rest(_) => &layer.rest,
    };
    let (mut parts, body) = req.into_parts();
    rewrite_request_head(faults, &mut parts);
    let mut method: Option<String> = None;
    let mut task: Option<String> = None;
    let body = match &kind {
        Kind::Card => body,
        Kind::Rpc => match to_bytes(body, MAX_REWRITE).await {
            Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut env) if env.is_object() => {
                    method = env.get("method").and_then(Value::as_str).map(str::to_owned);
                    task = env.pointer("/params/id").and_then(Value::as_str).map(str::to_owned);
                    if apply::refuses_proto_enums(faults, &mut env) {
                        return crash();
                    }
                    apply::mutate_request(faults, &mut env);
                    parts.headers.remove(header::CONTENT_LENGTH);
                    Body::from(env.to_string())
                }
                _ => Body::from(bytes),
            },
            Err(_) => return too_large(),
        },
        Kind::Rest(rel) => {
            let Ok(bytes) = to_bytes(body, MAX_REWRITE).await else { return too_large() };
            let route = routes::route(&parts.method, rel).ok();
            if let Some(r) = &route
                && let Some(allow) = refused_verb(faults, &parts.method, rel, r)
            {
                return method_not_allowed(&allow);
            }
            if let Some(r) = &route
                && let Some(q) = parts.uri.query()
                && faults.mutations().any(
                    |m| matches!(m, Mutation::QuerySnakeCaseOnly { methods } if applies(methods, Some(r.method.name()))),
                )
            {
                let q = snake_case_query(q);
                let pq = if q.is_empty() { parts.uri.path().to_owned() } else { format!("{}?{q}", parts.uri.path()) };
                if let Ok(uri) = axum::http::Uri::builder().path_and_query(pq).build() {
                    parts.uri = uri;
                }
            }
            // The call as JSON-RPC would carry it: the request mutations name `/params/...`.
            if let Some(r) = route
                && let Ok(params) = routes::params(&r, &parts.method, parts.uri.query(), &bytes)
            {
                let mut env = serde_json::json!({"method": r.method.name(), "params": params});
                method = Some(r.method.name().to_owned());
                task = env.pointer("/params/id").and_then(Value::as_str).map(str::to_owned);
                if apply::refuses_proto_enums(faults, &mut env) {
                    return crash();
                }
                apply::mutate_request(faults, &mut env);
                parts.extensions.insert(RestParams(env.get("params").cloned().unwrap_or(Value::Null)));
            }
            Body::from(bytes)
        }
    };
    for m in faults.mutations() {
        if let Mutation::Stall { ms, methods } = m
            && applies(methods, method.as_deref())
        {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
        }
    }
    let req_headers = parts.headers.clone();
    let resp = next.run(Request::from_parts(parts, body)).await;
    let subscribed =
        (method.as_deref() == Some("SubscribeToTask")).then_some(task).flatten().map(|t| layer.subscribers.open(t));
    let binding = match kind {
        Kind::Rest(_) => Some(Binding::HttpJson),
        Kind::Rpc => Some(Binding::JsonRpc),
        Kind::Card => None,
    };
    rewrite_response(faults, method, binding, &req_headers, resp, subscribed).await
}

/// The verbs to offer instead when a fault refuses `verb` for the operation `route` found at `rel`
/// ([`Mutation::RefuseVerb`]): the other verbs the binding serves it on.
fn refused_verb(faults: &ActiveFaults, verb: &axum::http::Method, rel: &str, route: &routes::Route) -> Option<String> {
    let name = route.method.name();
    faults.mutations().find_map(|m| match m {
        Mutation::RefuseVerb { verb: refused, methods }
            if refused.eq_ignore_ascii_case(verb.as_str()) && applies(methods, Some(name)) =>
        {
            let others: Vec<&str> = [axum::http::Method::GET, axum::http::Method::POST, axum::http::Method::DELETE]
                .iter()
                .filter(|v| *v != verb && routes::route(v, rel).is_ok_and(|r| r.method == route.method))
                .map(|v| v.as_str())
                .collect();
            (!others.is_empty()).then(|| others.join(", "))
        }
        _ => None,
    })
}

fn method_not_allowed(allow: &str) -> Response {
    Response::builder()
        .status(StatusCode::METHOD_NOT_ALLOWED)
        .header(header::ALLOW, allow)
        .body(Body::empty())
        .unwrap_or_default()
}

fn too_large() -> Response {
    Response::builder().status(StatusCode::PAYLOAD_TOO_LARGE).body(Body::empty()).unwrap_or_default()
}

/// What a web framework answers when the handler fails on a request it could not read: no
/// JSON-RPC at all (orxhestra's answer to `"role": "ROLE_USER"`).
fn crash() -> Response {
    Response::builder()
        .status(StatusCode::INTERNAL_SERVER_ERROR)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Body::from("Internal Server Error"))
        .unwrap_or_default()
}

async fn rewrite_response(
    faults: &Arc<ActiveFaults>,
    method: Option<String>,
    binding: Option<Binding>,
    req_headers: &axum::http::HeaderMap,
    resp: Response,
    subscribed: Option<Subscribed>,
) -> Response {
    let is_card = binding.is_none();
    let rest = binding == Some(Binding::HttpJson);
    let (mut parts, body) = resp.into_parts();
    let ct = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let m = method.as_deref();
    // The card was built (card faults included) and signed at start-up; only an edit after
    // signing is made here.
    let rewrite_card = is_card && apply::targets(faults, Target::SignedCard);
    let json = ct.starts_with("application/json") || (rest && ct.starts_with("application/a2a+json"));
    // A REST answer is mutated as the JSON-RPC answer it stands for: an error in its JSON-RPC
    // form (kept on the response by the adapter), a success as the envelope's `result`.
    let rest_error = parts.extensions.remove::<RpcForm>().filter(|_| rest);
    let mut as_text: Option<(StatusCode, String)> = None;
    // The code of the error answered (after the mutations), for `http_status` with `codes`.
    let mut error_code: Option<i64> = None;
    let mut body = if ct.starts_with("text/event-stream") {
        rewrite_stream(faults.clone(), method.clone(), body, subscribed, rest)
    } else if json && (rewrite_card || !is_card) && (!rest || rest_error.is_some() || parts.status.is_success()) {
        match to_bytes(body, MAX_REWRITE).await {
            Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut v) => {
                    if rest {
                        v = match rest_error {
                            Some(RpcForm(e)) => serde_json::json!({"error": e}),
                            None => serde_json::json!({"result": v}),
                        };
                    }
                    if is_card {
                        apply::mutate_card(faults, Target::SignedCard, &mut v);
                    } else {
                        apply::mutate_response(faults, m, &mut v);
                        let lookup = |name: &str| -> Option<String> {
                            req_headers.get(name).and_then(|h| h.to_str().ok()).map(str::to_owned)
                        };
                        apply::mutate_from_headers(faults, m, &mut v, &lookup);
                        as_text = error_as_text(faults, m, &v);
                        error_code = v.pointer("/error/code").and_then(Value::as_i64);
                    }
                    if rest {
                        v = match (v.get_mut("error").map(std::mem::take), v.get_mut("result").map(std::mem::take)) {
                            (Some(e), _) => {
                                let (status, body) = status_body(&e);
                                parts.status = status;
                                body
                            }
                            (None, Some(r)) => {
                                parts.status = StatusCode::OK;
                                r
                            }
                            (None, None) => v,
                        };
                    }
                    parts.headers.remove(header::CONTENT_LENGTH);
                    Body::from(if is_card {
                        serde_json::to_vec_pretty(&v).unwrap_or_default()
                    } else {
                        v.to_string().into_bytes()
                    })
                }
                Err(_) => Body::from(bytes),
            },
            Err(_) => Body::empty(),
        }
    } else {
        body
    };
    if rest && parts.status.is_success() {
        let empty = faults.mutations().find_map(|mu| match mu {
            Mutation::EmptyBody { status, methods } if applies(methods, m) => StatusCode::from_u16(*status).ok(),
            _ => None,
        });
        if let Some(status) = empty {
            parts.status = status;
            parts.headers.remove(header::CONTENT_TYPE);
            parts.headers.remove(header::CONTENT_LENGTH);
            body = Body::empty();
        }
    }
    if let Some((status, text)) = as_text {
        parts.status = status;
        parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
        parts.headers.remove(header::CONTENT_LENGTH);
        body = Body::from(text);
    }
    for mu in faults.mutations() {
        match mu {
            Mutation::HttpStatus { status, on, codes, methods }
                if on_matches(on, is_card)
                    && applies(methods, m)
                    && (codes.is_empty() || error_code.is_some_and(|c| codes.contains(&c))) =>
            {
                if let Ok(s) = StatusCode::from_u16(*status) {
                    parts.status = s;
                }
            }
            Mutation::ContentType { value, from, on, methods } if on_matches(on, is_card) && applies(methods, m) => {
                let sent = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
                let base = sent.split(';').next().unwrap_or("").trim();
                if from.as_deref().is_some_and(|f| !base.eq_ignore_ascii_case(f)) {
                    continue;
                }
                if let Ok(v) = HeaderValue::from_str(value) {
                    parts.headers.insert(header::CONTENT_TYPE, v);
                }
            }
            Mutation::HtmlBody { on, methods } if on_matches(on, is_card) && applies(methods, m) => {
                parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
                parts.headers.remove(header::CONTENT_LENGTH);
                body = Body::from(HTML);
            }
            Mutation::DropResponseHeader { name, on } if on_matches(on, is_card) => {
                parts.headers.remove(name.as_str());
            }
            _ => {}
        }
    }
    Response::from_parts(parts, body)
}

/// [`Mutation::SseFraming`]: events written with what the SSE format allows besides `data:`;
/// [`Mutation::SseMalformed`]: written as a broken writer does.
#[derive(Default)]
struct Framed {
    comments: bool,
    event: Option<String>,
    multiline: bool,
    crlf: bool,
    defect: Option<SseDefect>,
}

impl Framed {
    fn encode(&self, events: Vec<SseEvent>) -> String {
        let mut out = String::new();
        for mut e in events {
            if self.comments {
                out.push_str(": keep-alive\n");
            }
            if self.event.is_some() {
                e.event.clone_from(&self.event);
            }
            if self.multiline
                && let Ok(v) = serde_json::from_str::<Value>(&e.data)
                && let Ok(pretty) = serde_json::to_string_pretty(&v)
            {
                e.data = pretty;
            }
            if self.defect == Some(SseDefect::PythonRepr)
                && let Ok(v) = serde_json::from_str::<Value>(&e.data)
            {
                e.data = python_repr(&v);
            }
            out.push_str(&encode_events(std::slice::from_ref(&e)));
        }
        self.finish(out)
    }

    /// A keep-alive comment, as this writer writes one.
    fn comment(&self, chunk: Bytes) -> Bytes {
        match (self.defect, std::str::from_utf8(&chunk)) {
            (Some(SseDefect::NoBlankLine), Ok(text)) => Bytes::from(self.finish(text.to_owned())),
            _ => chunk,
        }
    }

    fn finish(&self, mut out: String) -> String {
        if self.defect == Some(SseDefect::NoBlankLine) {
            // Every field line keeps its own line end; the blank lines between events go.
            while out.contains("\n\n") {
                out = out.replace("\n\n", "\n");
            }
        }
        if self.crlf { out.replace('\n', "\r\n") } else { out }
    }
}

/// `v` as Python's `repr` of the dict `json.loads` makes of it: what a writer that formats the
/// object with `str()` instead of `json.dumps()` sends.
fn python_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'").replace('\n', "\\n")),
        Value::Array(a) => format!("[{}]", a.iter().map(python_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", python_repr(&Value::String(k.clone())), python_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The HTTP status and text that replace a JSON-RPC error answer, when a fault says so.
fn error_as_text(faults: &ActiveFaults, method: Option<&str>, answer: &Value) -> Option<(StatusCode, String)> {
    let code = answer.pointer("/error/code")?.as_i64()?;
    faults.mutations().find_map(|m| match m {
        Mutation::ErrorAsText { codes, status, body, methods }
            if applies(methods, method) && (codes.is_empty() || codes.contains(&code)) =>
        {
            Some((StatusCode::from_u16(*status).ok()?, body.clone()))
        }
        _ => None,
    })
}

fn rewrite_stream(
    faults: Arc<ActiveFaults>,
    method: Option<String>,
    body: Body,
    subscribed: Option<Subscribed>,
    bare: bool,
) -> Body {
    let keep_open = faults
        .mutations()
        .filter_map(|m| match m {
            Mutation::SseKeepOpen { ms, methods } if applies(methods, method.as_deref()) => Some(*ms),
            _ => None,
        })
        .max();
    let hold_back = faults
        .mutations()
        .any(|m| matches!(m, Mutation::SseHoldBack { methods } if applies(methods, method.as_deref())));
    let mut framing = faults.mutations().find_map(|m| match m {
        Mutation::SseFraming { comments, event, multiline, crlf, methods } if applies(methods, method.as_deref()) => {
            Some(Framed { comments: *comments, event: event.clone(), multiline: *multiline, crlf: *crlf, defect: None })
        }
        _ => None,
    });
    if let Some(defect) = faults.mutations().find_map(|m| match m {
        Mutation::SseMalformed { defect, methods } if applies(methods, method.as_deref()) => Some(*defect),
        _ => None,
    }) {
        framing.get_or_insert_with(Framed::default).defect = Some(defect);
    }
    let framing = Arc::new(framing);
    struct S {
        inner: axum::body::BodyDataStream,
        parser: SseParser,
        state: StreamState,
        done: bool,
        /// Events held back until the stream ends (`SseHoldBack`).
        held: Vec<SseEvent>,
        /// Keeps the stream counted among its task's open subscriptions while it lives.
        _subscribed: Option<Subscribed>,
    }
    let state = StreamState::new(subscribed.as_ref().is_some_and(|s| s.concurrent));
    let start = S {
        inner: body.into_data_stream(),
        parser: SseParser::default(),
        state,
        done: false,
        held: Vec::new(),
        _subscribed: subscribed,
    };
    let stream = futures::stream::unfold(start, move |mut s| {
        let faults = faults.clone();
        let method = method.clone();
        let framing = framing.clone();
        let writer = framing.clone();
        let encode = move |events: Vec<SseEvent>| -> Bytes {
            match writer.as_ref() {
                Some(f) => Bytes::from(f.encode(events)),
                None => Bytes::from(encode_events(&events)),
            }
        };
        async move {
            loop {
                if s.done {
                    if let Some(ms) = keep_open {
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                    }
                    return None;
                }
                match s.inner.next().await {
                    Some(Ok(chunk)) => {
                        // Keep-alive comments belong to no event: only a writer that ends no
                        // line group with a blank line changes them.
                        if chunk.starts_with(b":") {
                            let chunk = match framing.as_ref() {
                                Some(f) => f.comment(chunk),
                                None => chunk,
                            };
                            return Some((Ok::<Bytes, std::io::Error>(chunk), s));
                        }
                        let Ok(events) = s.parser.feed(&chunk) else {
                            return Some((Ok(chunk), s));
                        };
                        let out = apply::mutate_frames(&faults, method.as_deref(), &mut s.state, events, false, bare);
                        if hold_back {
                            s.held.extend(out);
                            continue;
                        }
                        if out.is_empty() {
                            continue;
                        }
                        return Some((Ok(encode(out)), s));
                    }
                    Some(Err(e)) => return Some((Err(std::io::Error::other(e.to_string())), s)),
                    None => {
                        s.done = true;
                        let mut out = std::mem::take(&mut s.held);
                        out.extend(apply::mutate_frames(
                            &faults,
                            method.as_deref(),
                            &mut s.state,
                            Vec::new(),
                            true,
                            bare,
                        ));
                        if !out.is_empty() {
                            return Some((Ok(encode(out)), s));
                        }
                    }
                }
            }
        }
    });
    Body::from_stream(stream)
}

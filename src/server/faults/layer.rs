//! The middleware that makes the mock commit its active faults: it rewrites requests before the
//! mock sees them and responses (JSON answers, SSE streams, the card) after it produced them.

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
use super::{ActiveFaults, Mutation, Target};
use crate::server::card::WELL_KNOWN_PATH;
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

/// What the middleware holds: the faults, and which tasks have SubscribeToTask streams open, which
/// tells a concurrent subscriber from a lone one.
#[derive(Debug)]
pub struct FaultLayer {
    faults: Arc<ActiveFaults>,
    subscribers: Arc<Subscribers>,
}

impl FaultLayer {
    pub fn new(faults: ActiveFaults) -> Self {
        FaultLayer { faults: Arc::new(faults), subscribers: Arc::default() }
    }

    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }
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

/// Axum middleware committing the layer's faults.
pub async fn commit(State(layer): State<Arc<FaultLayer>>, req: Request, next: Next) -> Response {
    let faults = &layer.faults;
    let is_card = req.uri().path() == WELL_KNOWN_PATH;
    let (mut parts, body) = req.into_parts();
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
            Mutation::RequestDropQuery => {
                if let Ok(uri) = axum::http::Uri::builder().path_and_query(parts.uri.path()).build() {
                    parts.uri = uri;
                }
            }
            _ => {}
        }
    }
    let mut method: Option<String> = None;
    let mut task: Option<String> = None;
    let body = if is_card {
        body
    } else {
        match to_bytes(body, MAX_REWRITE).await {
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
            Err(_) => {
                return Response::builder()
                    .status(StatusCode::PAYLOAD_TOO_LARGE)
                    .body(Body::empty())
                    .unwrap_or_default();
            }
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
    rewrite_response(faults, method, is_card, &req_headers, resp, subscribed).await
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
    is_card: bool,
    req_headers: &axum::http::HeaderMap,
    resp: Response,
    subscribed: Option<Subscribed>,
) -> Response {
    let (mut parts, body) = resp.into_parts();
    let ct = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let m = method.as_deref();
    // The card was built (card faults included) and signed at start-up; only an edit after
    // signing is made here.
    let rewrite_card = is_card && apply::targets(faults, Target::SignedCard);
    let mut as_text: Option<(StatusCode, String)> = None;
    let mut body = if ct.starts_with("text/event-stream") {
        rewrite_stream(faults.clone(), method.clone(), body, subscribed)
    } else if ct.starts_with("application/json") && (rewrite_card || !is_card) {
        match to_bytes(body, MAX_REWRITE).await {
            Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut v) => {
                    if is_card {
                        apply::mutate_card(faults, Target::SignedCard, &mut v);
                    } else {
                        apply::mutate_response(faults, m, &mut v);
                        let lookup = |name: &str| -> Option<String> {
                            req_headers.get(name).and_then(|h| h.to_str().ok()).map(str::to_owned)
                        };
                        apply::mutate_from_headers(faults, m, &mut v, &lookup);
                        as_text = error_as_text(faults, m, &v);
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
    if let Some((status, text)) = as_text {
        parts.status = status;
        parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
        parts.headers.remove(header::CONTENT_LENGTH);
        body = Body::from(text);
    }
    for mu in faults.mutations() {
        match mu {
            Mutation::HttpStatus { status, on, methods } if on_matches(on, is_card) && applies(methods, m) => {
                if let Ok(s) = StatusCode::from_u16(*status) {
                    parts.status = s;
                }
            }
            Mutation::ContentType { value, on, methods } if on_matches(on, is_card) && applies(methods, m) => {
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
    let encode = |events: Vec<SseEvent>| -> Bytes { Bytes::from(encode_events(&events)) };
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
                        // Keep-alive comments pass untouched: they belong to no event.
                        if chunk.starts_with(b":") {
                            return Some((Ok::<Bytes, std::io::Error>(chunk), s));
                        }
                        let Ok(events) = s.parser.feed(&chunk) else {
                            return Some((Ok(chunk), s));
                        };
                        let out = apply::mutate_frames(&faults, method.as_deref(), &mut s.state, events, false);
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
                        out.extend(apply::mutate_frames(&faults, method.as_deref(), &mut s.state, Vec::new(), true));
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

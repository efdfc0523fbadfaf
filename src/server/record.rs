//! The requests a mock received, as a test asserts on them and `client-check` grades them: method,
//! path and query, headers with secrets redacted, body, when it came, and what the mock answered.
//! Bounded: at most [`MAX_RECORDS`] requests, bodies cut at [`MAX_BODY_CHARS`].

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// Most requests a recorder keeps; later ones are counted but not kept.
pub const MAX_RECORDS: usize = 10_000;
/// Longest body kept as text when it is not JSON.
pub const MAX_BODY_CHARS: usize = 64 * 1024;
/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// One request as the mock received it.
///
/// ```
/// use a2a_conform::server::RecordedRequest;
/// let r = RecordedRequest {
///     method: "SendMessage".into(),
///     path: "/rpc".into(),
///     headers: vec![("authorization".into(), "[REDACTED]".into())],
///     body: serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}),
///     ..RecordedRequest::default()
/// };
/// assert_eq!(r.header("Authorization"), Some("[REDACTED]"));
/// assert_eq!(r.params(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordedRequest {
    /// The JSON-RPC method (`SendMessage`), `GET` for a card request, or `?` when the body named
    /// none.
    pub method: String,
    /// The request path, e.g. `/rpc`.
    pub path: String,
    /// Headers, lower-case names, in arrival order; credentials and tokens are [`REDACTED`].
    pub headers: Vec<(String, String)>,
    /// The body as JSON (push config secrets [`REDACTED`]), or as a JSON string when it was not JSON,
    /// or null when empty.
    pub body: Value,
    /// The HTTP method (`POST`; `GET` for a card fetch).
    pub http_method: String,
    /// The query string, without `?`, when there was one.
    pub query: Option<String>,
    /// Milliseconds from the recorder's start to the request's arrival.
    pub at_ms: u64,
    /// What the mock answered, when the request went through the recording layer.
    pub answer: Option<RecordedAnswer>,
}

/// What the mock answered one request: the status, the content type and, for a JSON answer, the
/// body (secrets redacted; null for an event stream, whose events are not kept).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordedAnswer {
    pub status: u16,
    pub content_type: String,
    pub body: Value,
}

impl RecordedRequest {
    /// The first value of a header (name compared without case).
    ///
    /// ```
    /// # let r = a2a_conform::server::RecordedRequest { method: "GET".into(), path: "/".into(),
    /// #     headers: vec![("a2a-version".into(), "1.0".into())], body: serde_json::Value::Null,
    /// #     ..Default::default() };
    /// assert_eq!(r.header("A2A-Version"), Some("1.0"));
    /// assert_eq!(r.header("X-Missing"), None);
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC `params`, if any.
    ///
    /// ```
    /// # let r = a2a_conform::server::RecordedRequest { method: "GetTask".into(), path: "/rpc".into(),
    /// #     headers: vec![], body: serde_json::json!({"method": "GetTask", "params": {"id": "t-1"}}),
    /// #     ..Default::default() };
    /// assert_eq!(r.params().unwrap()["id"], "t-1");
    /// ```
    pub fn params(&self) -> Option<&Value> {
        self.body.get("params")
    }

    /// One line for a failure report: method, path and the body cut at 200 characters.
    ///
    /// ```
    /// # let r = a2a_conform::server::RecordedRequest { method: "GetTask".into(), path: "/rpc".into(),
    /// #     headers: vec![], body: serde_json::json!({"id": 1}), ..Default::default() };
    /// assert_eq!(r.summary(), r#"GetTask /rpc {"id":1}"#);
    /// ```
    pub fn summary(&self) -> String {
        if self.body.is_null() {
            return format!("{} {}", self.method, self.path);
        }
        let body = self.body.to_string();
        let cut: String = body.chars().take(200).collect();
        let more = if cut.len() < body.len() { "…" } else { "" };
        format!("{} {} {cut}{more}", self.method, self.path)
    }
}

/// True for a header whose value is a credential.
fn is_secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(n.as_str(), "authorization" | "proxy-authorization" | "cookie" | "set-cookie")
        || ["token", "secret", "key", "password", "credential"].iter().any(|w| n.contains(w))
}

/// Replaces the values of `token` and `credentials` members anywhere in `v`.
fn redact_body(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if matches!(k.as_str(), "token" | "credentials") && val.is_string() {
                    *val = Value::String(REDACTED.into());
                } else {
                    redact_body(val);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_body),
        _ => {}
    }
}

/// The requests received, in order. A mock fills it when `MockConfig::record_requests` is set
/// (`MockPeer` does); `MockPeer::received` reads it.
///
/// ```
/// use a2a_conform::server::record::Recorder;
/// let rec = Recorder::default();
/// rec.record("/rpc", &axum::http::HeaderMap::new(), br#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}"#);
/// assert_eq!(rec.requests()[0].method, "ListTasks");
/// ```
#[derive(Debug)]
pub struct Recorder {
    inner: Mutex<Records>,
    started: Instant,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder { inner: Mutex::default(), started: Instant::now() }
    }
}

#[derive(Debug, Default)]
struct Records {
    kept: Vec<RecordedRequest>,
    dropped: usize,
    incidents: Vec<Value>,
}

impl Recorder {
    /// Records one request. `body` is what was read of it; an empty body (a card fetch) is recorded
    /// as method `GET`, a body that names no method as `?`.
    ///
    /// ```
    /// # use a2a_conform::server::record::Recorder;
    /// let rec = Recorder::default();
    /// rec.record("/.well-known/agent-card.json", &axum::http::HeaderMap::new(), b"");
    /// rec.record("/rpc", &axum::http::HeaderMap::new(), b"{bad");
    /// let methods: Vec<_> = rec.requests().into_iter().map(|r| r.method).collect();
    /// assert_eq!(methods, ["GET", "?"]);
    /// ```
    pub fn record(&self, path: &str, headers: &HeaderMap, body: &[u8]) {
        let http_method = if body.is_empty() { "GET" } else { "POST" };
        self.keep(self.request(http_method, path, None, headers, body));
    }

    /// The record of one request, not yet kept.
    fn request(
        &self,
        http_method: &str,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
        body: &[u8],
    ) -> RecordedRequest {
        let mut parsed = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).chars().take(MAX_BODY_CHARS).collect()))
        };
        redact_body(&mut parsed);
        let method = match parsed.get("method").and_then(Value::as_str) {
            Some(m) => m.to_owned(),
            None if body.is_empty() => "GET".to_owned(),
            None => "?".to_owned(),
        };
        let headers = headers
            .iter()
            .map(|(n, v)| {
                let value = if is_secret_header(n.as_str()) {
                    REDACTED.to_owned()
                } else {
                    String::from_utf8_lossy(v.as_bytes()).into_owned()
                };
                (n.as_str().to_owned(), value)
            })
            .collect();
        RecordedRequest {
            method,
            path: path.to_owned(),
            headers,
            body: parsed,
            http_method: http_method.to_owned(),
            query: query.map(str::to_owned),
            at_ms: self.started.elapsed().as_millis() as u64,
            answer: None,
        }
    }

    /// Keeps `r`; its index, to attach the answer to, unless the recorder is full.
    fn keep(&self, r: RecordedRequest) -> Option<usize> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.kept.len() < MAX_RECORDS {
            g.kept.push(r);
            Some(g.kept.len() - 1)
        } else {
            g.dropped += 1;
            None
        }
    }

    /// Notes something the mock did to provoke the client (a stream it cut), with `at_ms` and the
    /// `seq` of the last request recorded before it. Bounded like the requests.
    pub fn incident(&self, mut what: Value) {
        let at_ms = self.started.elapsed().as_millis() as u64;
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.incidents.len() >= MAX_RECORDS {
            return;
        }
        if let Some(map) = what.as_object_mut() {
            map.insert("at_ms".into(), at_ms.into());
            map.insert("seq".into(), (g.kept.len() as u64).saturating_sub(1).into());
        }
        g.incidents.push(what);
    }

    /// Every incident noted so far, in order.
    pub fn incidents(&self) -> Vec<Value> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).incidents.clone()
    }

    fn answered(&self, index: usize, answer: RecordedAnswer) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = g.kept.get_mut(index) {
            r.answer = Some(answer);
        }
    }

    /// Every request kept so far.
    ///
    /// ```
    /// # use a2a_conform::server::record::Recorder;
    /// assert!(Recorder::default().requests().is_empty());
    /// ```
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).kept.clone()
    }

    /// Requests received but not kept because [`MAX_RECORDS`] were already held.
    ///
    /// ```
    /// # use a2a_conform::server::record::Recorder;
    /// assert_eq!(Recorder::default().dropped(), 0);
    /// ```
    pub fn dropped(&self) -> usize {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).dropped
    }
}

/// Longest JSON answer kept whole; a longer one is kept as its status and content type.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// What the recording layer needs: where to record, and the mock's bound on a request body.
#[derive(Debug, Clone)]
pub struct Recording {
    pub recorder: Arc<Recorder>,
    pub max_request_bytes: usize,
}

/// The recording layer: every request that reaches the mock, whatever its path or method, with
/// what the mock answered. Bodies are read up to the mock's own request bound; a longer one is
/// refused here as the JSON-RPC endpoint would refuse it.
pub async fn capture(State(rec): State<Recording>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let limit = rec.max_request_bytes;
    let recorder = &rec.recorder;
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => {
            let path = parts.uri.path();
            let note = format!("<a body longer than the mock's {limit}-byte bound>");
            let i = recorder.keep(recorder.request(
                parts.method.as_str(),
                path,
                parts.uri.query(),
                &parts.headers,
                note.as_bytes(),
            ));
            let r = (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response();
            if let Some(i) = i {
                recorder
                    .answered(i, RecordedAnswer { status: 413, content_type: "text/plain".into(), body: Value::Null });
            }
            return r;
        }
    };
    let index = recorder.keep(recorder.request(
        parts.method.as_str(),
        parts.uri.path(),
        parts.uri.query(),
        &parts.headers,
        &bytes,
    ));
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    let Some(index) = index else { return response };
    let status = response.status().as_u16();
    let content_type =
        response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    if !content_type.starts_with("application/json") {
        recorder.answered(index, RecordedAnswer { status, content_type, body: Value::Null });
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ANSWER_BYTES).await else {
        recorder.answered(index, RecordedAnswer { status, content_type, body: Value::Null });
        return (StatusCode::INTERNAL_SERVER_ERROR, "the mock's answer exceeded the recorder's bound").into_response();
    };
    let mut parsed = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    redact_body(&mut parsed);
    recorder.answered(index, RecordedAnswer { status, content_type, body: parsed });
    Response::from_parts(parts, Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn secrets_are_redacted_in_headers_and_bodies() {
        let rec = Recorder::default();
        let mut h = HeaderMap::new();
        h.insert("authorization", HeaderValue::from_static("Bearer s3cret"));
        h.insert("x-a2a-notification-token", HeaderValue::from_static("tok"));
        h.insert("a2a-version", HeaderValue::from_static("1.0"));
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t","url":"https://h/x","token":"tok","authentication":{"scheme":"Bearer","credentials":"s3cret"}}}"#;
        rec.record("/rpc", &h, body);
        let r = &rec.requests()[0];
        assert_eq!(r.method, "CreateTaskPushNotificationConfig");
        assert_eq!(r.header("Authorization"), Some(REDACTED));
        assert_eq!(r.header("X-A2A-Notification-Token"), Some(REDACTED));
        assert_eq!(r.header("A2A-Version"), Some("1.0"));
        assert!(!format!("{r:?}").contains("s3cret"), "{r:?}");
        assert_eq!(r.params().unwrap()["authentication"]["scheme"], "Bearer");
    }

    #[test]
    fn non_json_bodies_are_kept_as_text_and_the_count_is_bounded() {
        let rec = Recorder::default();
        rec.record("/rpc", &HeaderMap::new(), b"{bad");
        assert_eq!(rec.requests()[0].method, "?");
        assert_eq!(rec.requests()[0].body, Value::String("{bad".into()));
        for _ in 0..MAX_RECORDS {
            rec.record("/rpc", &HeaderMap::new(), b"{}");
        }
        assert_eq!(rec.requests().len(), MAX_RECORDS);
        assert_eq!(rec.dropped(), 1);
    }
}

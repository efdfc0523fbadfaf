// Include with `#[path = "common/peer.rs"] mod peer;` next to `#[path = "common/schema.rs"] mod schema;`.
//! A test's view of a mock peer: start one in-process on 127.0.0.1:0 and talk to it over real HTTP,
//! so tests read like the JSON-RPC / SSE exchange they check. Every JSON the mock sends back is
//! validated against the spec schema on the way in; a test never has to remember to.
#![allow(dead_code)]

use std::time::Duration;

use a2a_conform::server::{MockConfig, MockServer};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::schema;

/// Upper bound on any single exchange in tests: a hang fails the test instead of the suite.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(20);

/// A running mock and an HTTP client pointed at it.
pub struct Peer {
    pub server: MockServer,
    pub http: reqwest::Client,
}

/// A decoded HTTP answer to a JSON-RPC request.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    /// The `result`, failing the test if the answer is an error.
    pub fn result(&self) -> &Value {
        assert!(self.body.get("error").is_none(), "expected a result, got {}", self.body);
        &self.body["result"]
    }

    /// The error code, failing the test if the answer is a result.
    pub fn error_code(&self) -> i64 {
        self.body["error"]["code"].as_i64().unwrap_or_else(|| panic!("expected an error, got {}", self.body))
    }
}

/// One SSE event as received.
#[derive(Debug, Clone)]
pub struct Event {
    pub id: Option<String>,
    pub data: Value,
}

impl Event {
    /// The StreamResponse member name of a result event (`task`, `statusUpdate`, ...).
    pub fn kind(&self) -> &str {
        self.data["result"].as_object().and_then(|o| o.keys().next()).map(String::as_str).unwrap_or("<error>")
    }

    /// The state carried by a task or statusUpdate event.
    pub fn state(&self) -> Option<&str> {
        let r = &self.data["result"];
        r["task"]["status"]["state"].as_str().or_else(|| r["statusUpdate"]["status"]["state"].as_str())
    }
}

/// The schema definition a method's `result` must satisfy.
pub fn result_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "SendMessage" => "SendMessageResponse",
        "GetTask" | "CancelTask" => "Task",
        "ListTasks" => "ListTasksResponse",
        "CreateTaskPushNotificationConfig" | "GetTaskPushNotificationConfig" => "TaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs" => "ListTaskPushNotificationConfigsResponse",
        "GetExtendedAgentCard" => "AgentCard",
        _ => return None,
    })
}

/// Checks a JSON-RPC envelope: `jsonrpc`, and either a schema-valid result or a well-formed error
/// (`code` integer, `message` string, `data` an array of objects with `@type`, §9.5).
pub fn check_envelope(method: &str, body: &Value) {
    assert_eq!(body["jsonrpc"], "2.0", "envelope: {body}");
    if let Some(err) = body.get("error") {
        assert!(err["code"].is_i64(), "error code must be an integer: {body}");
        assert!(err["message"].is_string(), "error message must be a string: {body}");
        if let Some(data) = err.get("data") {
            let arr = data.as_array().unwrap_or_else(|| panic!("error data must be an array: {body}"));
            for d in arr {
                assert!(d["@type"].is_string(), "every error detail needs @type: {body}");
            }
        }
        return;
    }
    let result = body.get("result").unwrap_or_else(|| panic!("neither result nor error: {body}"));
    if method == "DeleteTaskPushNotificationConfig" {
        assert_eq!(result, &json!({}), "Delete returns google.protobuf.Empty");
    } else if let Some(def) = result_def(method) {
        schema::validate(def, result).unwrap_or_else(|e| panic!("{method} result violates {def}: {e}\n{result}"));
    }
}

impl Peer {
    /// Starts a mock with this configuration.
    pub async fn start(config: MockConfig) -> Peer {
        let server = MockServer::start(config).await.expect("mock starts");
        let http = reqwest::Client::builder().timeout(EXCHANGE_TIMEOUT).build().unwrap();
        Peer { server, http }
    }

    /// Starts a mock with the default configuration.
    pub async fn default() -> Peer {
        Self::start(MockConfig::default()).await
    }

    /// POSTs a raw body to the JSON-RPC URL with the given headers (no defaults added).
    pub async fn post_raw(&self, body: impl Into<reqwest::Body>, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut req = self.http.post(self.server.rpc_url()).body(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send().await.expect("mock answers")
    }

    /// POSTs a JSON-RPC request with `Content-Type: application/json` and `A2A-Version: 1.0` plus
    /// `extra` headers.
    pub async fn post_rpc(&self, id: &Value, method: &str, params: Value, extra: &[(&str, &str)]) -> reqwest::Response {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut headers = vec![("content-type", "application/json"), ("a2a-version", "1.0")];
        headers.extend_from_slice(extra);
        self.post_raw(body.to_string(), &headers).await
    }

    /// Sends a request (see `post_rpc`) and returns the decoded, envelope-checked answer.
    pub async fn call_with(&self, method: &str, params: Value, extra: &[(&str, &str)]) -> Reply {
        let resp = self.post_rpc(&json!(1), method, params, extra).await;
        let status = resp.status().as_u16();
        let hdrs = resp.headers().clone();
        let ct = hdrs.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        assert!(ct.starts_with("application/json"), "{method}: content type {ct:?}");
        let body: Value = resp.json().await.expect("JSON body");
        check_envelope(method, &body);
        assert_eq!(body["id"], 1, "the id is echoed");
        Reply { status, headers: hdrs, body }
    }

    /// `call_with` without extra headers.
    pub async fn call(&self, method: &str, params: Value) -> Reply {
        self.call_with(method, params, &[]).await
    }

    /// Sends a streaming request and reads events until the server closes the stream. Each event
    /// is checked: a JSON-RPC response with the request's id whose result validates as a
    /// StreamResponse. A non-SSE answer (an error before the stream started) is returned as `Err`.
    pub async fn stream_with(&self, method: &str, params: Value, extra: &[(&str, &str)]) -> Result<Vec<Event>, Reply> {
        let mut live = self.open_stream_with(json!("s-1"), method, params, extra).await?;
        Ok(live.rest().await)
    }

    /// `stream_with` without extra headers.
    pub async fn stream(&self, method: &str, params: Value) -> Result<Vec<Event>, Reply> {
        self.stream_with(method, params, &[]).await
    }

    /// SendMessage with one text part; returns the reply.
    pub async fn send_text(&self, text: &str) -> Reply {
        self.call("SendMessage", json!({"message": user_message(text)})).await
    }
}

/// A ROLE_USER message with one text part and a fresh messageId.
pub fn user_message(text: &str) -> Value {
    json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// Parses a complete SSE body (LF or CRLF), validating each data payload.
pub fn parse_sse(text: &str) -> Vec<Event> {
    let mut events = Vec::new();
    let (mut id, mut data): (Option<String>, Vec<String>) = (None, Vec::new());
    for line in text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)) {
        if line.is_empty() {
            if !data.is_empty() {
                let payload: Value = serde_json::from_str(&data.join("\n")).expect("SSE data is JSON");
                if let Some(result) = payload.get("result") {
                    schema::validate("StreamResponse", result)
                        .unwrap_or_else(|e| panic!("stream event violates StreamResponse: {e}\n{payload}"));
                }
                assert_eq!(payload["jsonrpc"], "2.0");
                events.push(Event { id: id.take(), data: payload });
                data.clear();
            }
            id = None;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) =
            line.split_once(':').map(|(f, v)| (f, v.strip_prefix(' ').unwrap_or(v))).unwrap_or((line, ""));
        match field {
            "data" => data.push(value.to_owned()),
            "id" => id = Some(value.to_owned()),
            _ => {}
        }
    }
    events
}

/// An SSE answer read incrementally, event by event, as the server sends it. Events are parsed and
/// checked by [`parse_sse`] exactly like [`Peer::stream_with`]'s. Dropping it closes the connection.
pub struct LiveStream {
    pub status: u16,
    pub headers: HeaderMap,
    body: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    /// Bytes received but not yet ending with a blank line.
    partial: Vec<u8>,
    ready: std::collections::VecDeque<Event>,
    closed: bool,
}

impl LiveStream {
    /// The next event, or `None` once the server has closed the stream. Panics when nothing
    /// arrives within `limit`, so a hung stream fails the test.
    pub async fn next_within(&mut self, limit: Duration) -> Option<Event> {
        use futures::StreamExt as _;
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(ev) = self.ready.pop_front() {
                return Some(ev);
            }
            if self.closed {
                return None;
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.next())
                .await
                .unwrap_or_else(|_| panic!("no SSE event within {limit:?}"));
            match chunk {
                Some(bytes) => {
                    self.partial.extend_from_slice(&bytes.expect("SSE body readable"));
                    self.take_complete_events();
                }
                None => {
                    self.closed = true;
                    // A receiver drops an event not ended by a blank line (WHATWG SSE), so a
                    // server must not end a stream inside one.
                    assert!(
                        String::from_utf8_lossy(&self.partial).trim().is_empty(),
                        "stream closed inside an event: {:?}",
                        String::from_utf8_lossy(&self.partial)
                    );
                }
            }
        }
    }

    /// The next event within [`EXCHANGE_TIMEOUT`], or `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<Event> {
        self.next_within(EXCHANGE_TIMEOUT).await
    }

    /// Reads every remaining event until the server closes the stream.
    pub async fn rest(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(ev) = self.next().await {
            out.push(ev);
        }
        out
    }

    /// True once the server has closed the stream and every event was taken.
    pub fn is_closed(&self) -> bool {
        self.closed && self.ready.is_empty()
    }

    /// Moves every event terminated by a blank line from `partial` to `ready`.
    fn take_complete_events(&mut self) {
        let end = [&b"\n\n"[..], &b"\n\r\n"[..]]
            .iter()
            .filter_map(|sep| self.partial.windows(sep.len()).rposition(|w| w == *sep).map(|i| i + sep.len()))
            .max();
        if let Some(end) = end {
            let complete: Vec<u8> = self.partial.drain(..end).collect();
            let text = std::str::from_utf8(&complete).expect("SSE is UTF-8");
            self.ready.extend(parse_sse(text));
        }
    }
}

impl Peer {
    /// Sends a streaming request with JSON-RPC id `id` and returns the open SSE stream without
    /// reading it, to be read with [`LiveStream::next`]. A non-SSE answer (an error before the
    /// stream started) is returned, envelope-checked, as `Err`.
    pub async fn open_stream_with(
        &self,
        id: Value,
        method: &str,
        params: Value,
        extra: &[(&str, &str)],
    ) -> Result<LiveStream, Reply> {
        let resp = self.post_rpc(&id, method, params, extra).await;
        let status = resp.status().as_u16();
        let hdrs = resp.headers().clone();
        let ct = hdrs.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        if !ct.starts_with("text/event-stream") {
            assert!(ct.starts_with("application/json"), "{method}: content type {ct:?}");
            let body: Value = resp.json().await.expect("JSON error body");
            check_envelope(method, &body);
            assert_eq!(body["id"], id, "the id is echoed");
            return Err(Reply { status, headers: hdrs, body });
        }
        assert_eq!(status, 200);
        Ok(LiveStream {
            status,
            headers: hdrs,
            body: Box::pin(resp.bytes_stream()),
            partial: Vec::new(),
            ready: std::collections::VecDeque::new(),
            closed: false,
        })
    }

    /// `open_stream_with` with id `"s-1"` and no extra headers.
    pub async fn open_stream(&self, method: &str, params: Value) -> Result<LiveStream, Reply> {
        self.open_stream_with(json!("s-1"), method, params, &[]).await
    }
}

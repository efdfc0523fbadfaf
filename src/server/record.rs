//! The requests a mock received, as a test asserts on them: method, headers with secrets redacted,
//! body. Bounded: at most [`MAX_RECORDS`] requests, bodies cut at [`MAX_BODY_CHARS`].

use std::sync::Mutex;

use axum::http::HeaderMap;
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
/// };
/// assert_eq!(r.header("Authorization"), Some("[REDACTED]"));
/// assert_eq!(r.params(), None);
/// ```
#[derive(Debug, Clone, PartialEq)]
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
}

impl RecordedRequest {
    /// The first value of a header (name compared without case).
    ///
    /// ```
    /// # let r = a2a_conform::server::RecordedRequest { method: "GET".into(), path: "/".into(),
    /// #     headers: vec![("a2a-version".into(), "1.0".into())], body: serde_json::Value::Null };
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
    /// #     headers: vec![], body: serde_json::json!({"method": "GetTask", "params": {"id": "t-1"}}) };
    /// assert_eq!(r.params().unwrap()["id"], "t-1");
    /// ```
    pub fn params(&self) -> Option<&Value> {
        self.body.get("params")
    }

    /// One line for a failure report: method, path and the body cut at 200 characters.
    ///
    /// ```
    /// # let r = a2a_conform::server::RecordedRequest { method: "GetTask".into(), path: "/rpc".into(),
    /// #     headers: vec![], body: serde_json::json!({"id": 1}) };
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
#[derive(Debug, Default)]
pub struct Recorder {
    inner: Mutex<Records>,
}

#[derive(Debug, Default)]
struct Records {
    kept: Vec<RecordedRequest>,
    dropped: usize,
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
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.kept.len() < MAX_RECORDS {
            g.kept.push(RecordedRequest { method, path: path.to_owned(), headers, body: parsed });
        } else {
            g.dropped += 1;
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

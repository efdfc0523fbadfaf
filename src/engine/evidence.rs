//! What a finding shows of an exchange: the request and the answer, redacted and cut to a size a
//! person can read, and a curl command that reproduces the request without the user's secrets.

use std::fmt::Write as _;
use std::time::Duration;

use crate::client::http::{HttpExchange, HttpRequest, StreamExchange};
use crate::client::redact::{REDACTED, Redactor};
use serde_json::Value;

use crate::report::{Evidence, Reply, ReplyKind};
use crate::sse::{self, StreamEnd};

/// Bodies in evidence are cut at this many bytes.
pub const EVIDENCE_BODY_BYTES: usize = 4 * 1024;

pub trait ToEvidence {
    fn to_evidence(&self, step_id: Option<&str>, redactor: &Redactor) -> Evidence;
}

impl ToEvidence for HttpExchange {
    fn to_evidence(&self, step_id: Option<&str>, redactor: &Redactor) -> Evidence {
        let mut ev = head(&self.request, self.status, &self.headers, self.elapsed, step_id, redactor);
        ev.response_body = Some(body_text(&self.body, self.truncated, redactor));
        // A body cut by the client may be any JSON-RPC answer: nothing can be said of it.
        if !self.truncated {
            ev.reply = reply(&self.request, || read_body(&self.body), redactor);
        }
        ev
    }
}

impl ToEvidence for StreamExchange {
    /// The body is the events as SSE text plus a comment line saying how the stream ended.
    fn to_evidence(&self, step_id: Option<&str>, redactor: &Redactor) -> Evidence {
        let mut ev = head(&self.request, self.status, &self.headers, self.elapsed, step_id, redactor);
        let body = if self.is_sse() || !self.events.is_empty() {
            let mut text = sse::encode_events(&self.events);
            // The event still being sent when the read ended, as its lines came: no blank line.
            if let Some(p) = &self.pending {
                for line in p.data.iter().flat_map(|d| d.split('\n')) {
                    let _ = writeln!(text, "data: {line}");
                }
                if let Some(line) = &p.partial_line {
                    let _ = writeln!(text, "{line}");
                }
                if p.data.is_some() || p.partial_line.is_some() {
                    text.push_str(": [the lines above were never dispatched: no blank line ended them]\n");
                }
            }
            let end = match &self.end {
                Ok(StreamEnd::Closed { incomplete: None }) => ": [stream closed by peer]\n".to_owned(),
                Ok(StreamEnd::Closed { incomplete: Some(_) }) => {
                    ": [stream closed by peer with an undispatched partial event]\n".to_owned()
                }
                Ok(StreamEnd::StoppedByCaller) => ": [stream closed by the client]\n".to_owned(),
                Err(e) => format!(": [stream error: {e}]\n"),
            };
            // How the stream ended is told after the events shown, also when the events are too
            // many to show: a stream cut at the kit's caps says so in its evidence.
            let mut shown = body_text(text.as_bytes(), false, redactor);
            if !shown.ends_with('\n') {
                shown.push('\n');
            }
            shown.push_str(&redactor.redact(&end));
            shown
        } else {
            body_text(&self.body, self.truncated, redactor)
        };
        ev.response_body = Some(body);
        if !self.truncated {
            let kind = || {
                if !self.is_sse() {
                    return read_body(&self.body);
                }
                // A stream that carries an error is told by its first error.
                let events = self.events.iter().filter_map(|e| serde_json::from_str::<Value>(&e.data).ok());
                events
                    .filter_map(|v| v.get("error").cloned())
                    .next()
                    .map_or((ReplyKind::Stream, None), |e| (ReplyKind::Error, Some(e)))
            };
            ev.reply = reply(&self.request, kind, redactor);
        }
        ev
    }
}

/// How a POST's answer reads as JSON-RPC (`None` for any other request: a card, a raw GET).
/// `kind` gives the kind of answer and, for an error, the error object.
fn reply(req: &HttpRequest, kind: impl FnOnce() -> (ReplyKind, Option<Value>), redactor: &Redactor) -> Option<Reply> {
    if !req.method.eq_ignore_ascii_case("POST") {
        return None;
    }
    let method = req
        .body
        .as_deref()
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .and_then(|v| v.get("method").and_then(Value::as_str).map(|m| redactor.redact(m)));
    let (kind, error) = kind();
    let error = error.as_ref();
    Some(Reply {
        method,
        kind,
        code: error.and_then(|e| e.get("code")).and_then(Value::as_i64),
        message: error.and_then(|e| e.get("message")).and_then(Value::as_str).map(|m| redactor.redact(m)),
    })
}

/// How an answer read in the JSON-RPC shape reads, as the reply to `method`.
pub(crate) fn read_reply(method: &str, shaped: &[u8], redactor: &Redactor) -> Reply {
    let (kind, error) = read_body(shaped);
    let error = error.as_ref();
    Reply {
        method: Some(method.to_owned()),
        kind,
        code: error.and_then(|e| e.get("code")).and_then(Value::as_i64),
        message: error.and_then(|e| e.get("message")).and_then(Value::as_str).map(|m| redactor.redact(m)),
    }
}

/// The kind of a single JSON-RPC answer, and its error object when it is one.
fn read_body(body: &[u8]) -> (ReplyKind, Option<Value>) {
    match serde_json::from_slice::<Value>(body) {
        // As the checks read it: any `error` member makes the answer an error.
        Ok(v) if v.get("error").is_some() => (ReplyKind::Error, v.get("error").cloned()),
        Ok(v) if v.get("result").is_some() => (ReplyKind::Result, None),
        _ => (ReplyKind::NotJsonrpc, None),
    }
}

fn head(
    req: &HttpRequest,
    status: u16,
    headers: &[(String, String)],
    elapsed: Duration,
    step_id: Option<&str>,
    redactor: &Redactor,
) -> Evidence {
    Evidence {
        step_id: step_id.map(str::to_owned),
        method: redactor.redact(&req.method),
        url: redactor.redact(&req.url),
        request_headers: req.headers.iter().map(|(n, v)| redactor.header_line(n, v)).collect(),
        request_body: req.body.as_ref().map(|b| body_text(b, false, redactor)),
        status: Some(status),
        response_headers: headers.iter().map(|(n, v)| redactor.header_line(n, v)).collect(),
        response_body: None,
        curl: Some(curl_command(req, redactor)),
        elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        reply: None,
    }
}

/// Body text for evidence: redacted, then cut at [`EVIDENCE_BODY_BYTES`] with a note.
fn body_text(bytes: &[u8], cut_by_client: bool, redactor: &Redactor) -> String {
    // Only the head that can be shown is decoded and redacted, so that a megabyte body costs what
    // a 4 KiB one does: a secret starting in the head ends within the longest secret's length
    // past it (and a character within 4 bytes).
    let reach = EVIDENCE_BODY_BYTES + redactor.longest_secret() + 4;
    let cut_here = bytes.len() > reach;
    let text = String::from_utf8_lossy(if cut_here { &bytes[..reach] } else { bytes });
    let redacted = if cut_by_client && !cut_here { redactor.redact_cut(&text) } else { redactor.redact(&text) };
    let mut out = if cut_here || redacted.len() > EVIDENCE_BODY_BYTES {
        let cut = redacted.floor_char_boundary(EVIDENCE_BODY_BYTES);
        // A secret cut in half at the boundary is no longer matched whole, hence redact_cut.
        let mut s = redactor.redact_cut(&redacted[..cut]);
        let total = if cut_here { bytes.len() } else { redacted.len() };
        let _ = write!(s, "\n[truncated: showing {cut} of {total} bytes]");
        s
    } else {
        redacted
    };
    if cut_by_client {
        out.push_str("\n[the client stopped reading at max_body_bytes]");
    }
    out
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// An HTTP token (RFC 9110 §5.6.2): safe to print unquoted in a header name.
fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A curl command reproducing `req`; secret header values become `$A2A_SECRET_<n>` variables.
pub fn curl_command(req: &HttpRequest, redactor: &Redactor) -> String {
    let mut parts = vec!["curl -sS".to_owned()];
    if req.method != "GET" || req.body.is_some() {
        parts.push(format!("-X {}", shell_quote(&redactor.redact(&req.method))));
    }
    parts.push(shell_quote(&redactor.redact(&req.url)));
    let mut n = 0;
    for (name, value) in &req.headers {
        if redactor.is_secret_header(name) {
            if is_token(name) && !name.contains('$') && !name.contains('`') {
                n += 1;
                parts.push(format!("-H \"{name}: $A2A_SECRET_{n}\""));
            } else {
                parts.push(format!("-H {}", shell_quote(&format!("{}: {REDACTED}", redactor.redact(name)))));
            }
        } else {
            parts.push(format!("-H {}", shell_quote(&redactor.header_line(name, value))));
        }
    }
    if let Some(body) = &req.body {
        // Far past the limit, redacting would only measure what is not shown.
        let text = if body.len() > 2 * EVIDENCE_BODY_BYTES {
            String::new()
        } else {
            redactor.redact(&String::from_utf8_lossy(body))
        };
        if text.len() > EVIDENCE_BODY_BYTES || body.len() > 2 * EVIDENCE_BODY_BYTES {
            let len = if text.is_empty() { body.len() } else { text.len() };
            parts.push(format!("--data-binary @request-body  # body of {len} bytes not shown"));
        } else {
            parts.push(format!("--data-binary {}", shell_quote(&text)));
        }
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::{SseError, SseEvent};

    fn exchange(body: &[u8], ct: &str) -> HttpExchange {
        HttpExchange {
            request: HttpRequest::get("http://x.test/a").header("Authorization", "Bearer tok-123"),
            status: 200,
            headers: vec![("Content-Type".into(), ct.into())],
            body: body.to_vec(),
            truncated: false,
            elapsed: Duration::from_millis(3),
        }
    }

    #[test]
    fn evidence_redacts_and_truncates() {
        let mut r = Redactor::new();
        r.add("tok-123");
        let mut body = b"echo tok-123 ".to_vec();
        body.extend(std::iter::repeat_n(b'z', 10_000));
        let ev = exchange(&body, "text/plain").to_evidence(Some("s1"), &r);
        assert_eq!(ev.step_id.as_deref(), Some("s1"));
        assert_eq!(ev.request_headers, vec!["Authorization: [REDACTED]".to_owned()]);
        let rb = ev.response_body.unwrap();
        assert!(rb.starts_with("echo [REDACTED] zzz"));
        assert!(rb.contains("[truncated: showing 4096 of"), "{rb}");
        assert!(rb.len() < 4200);
        let curl = ev.curl.unwrap();
        assert!(curl.contains("$A2A_SECRET_1") && !curl.contains("tok-123"), "{curl}");
    }

    #[test]
    fn a_long_body_is_redacted_as_far_as_it_is_shown_and_no_further() {
        let mut r = Redactor::new();
        r.add("secret-value-42");
        for at in [EVIDENCE_BODY_BYTES - 5, EVIDENCE_BODY_BYTES - 20, 100] {
            let mut body = vec![b'a'; at];
            body.extend_from_slice(b"secret-value-42");
            body.extend(std::iter::repeat_n(b'b', 1 << 20));
            let text = body_text(&body, false, &r);
            assert!(!text.contains("secret-value"), "a secret at {at} shows: {}", &text[text.len() - 80..]);
            assert!(!text.contains("secret-v"), "not even cut in half at {at}");
            assert!(text.ends_with(&format!("[truncated: showing {EVIDENCE_BODY_BYTES} of {} bytes]", body.len())));
        }
        let short = body_text(b"x secret-value-42 y", false, &r);
        assert_eq!(short, "x [REDACTED] y");
        let req =
            HttpRequest { method: "POST".into(), body: Some(vec![b'z'; 1 << 20].into()), ..HttpRequest::default() };
        assert!(curl_command(&req, &r).ends_with(&format!("# body of {} bytes not shown", 1 << 20)));
    }

    #[test]
    fn curl_quotes_and_includes_body() {
        let req = HttpRequest {
            method: "POST".into(),
            url: "http://x.test/rpc".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: Some(b"{\"it's\":1}".to_vec().into()),
            ..HttpRequest::default()
        };
        let c = curl_command(&req, &Redactor::new());
        assert_eq!(
            c,
            r#"curl -sS -X 'POST' 'http://x.test/rpc' -H 'Content-Type: application/json' --data-binary '{"it'\''s":1}'"#
        );
    }

    #[test]
    fn stream_evidence_renders_events() {
        let x = StreamExchange {
            request: HttpRequest::get("http://x.test/rpc"),
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            events: vec![SseEvent { id: Some("1".into()), event: None, data: "{\"a\":1}".into(), comments: 0 }],
            end: Err(SseError::IdleTimeout { limit: Duration::from_millis(5) }),
            trailing: crate::sse::Trailing::default(),
            body: Vec::new(),
            truncated: false,
            elapsed: Duration::ZERO,
            head_at: Duration::ZERO,
            arrivals: vec![Duration::ZERO],
            pending: None,
            framed_unlabelled: false,
        };
        let body = x.to_evidence(None, &Redactor::new()).response_body.unwrap();
        assert!(
            body.starts_with("id: 1\ndata: {\"a\":1}\n\n: [stream error: no complete event within idle_timeout"),
            "{body}"
        );
    }
}

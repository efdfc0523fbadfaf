//! Server-Sent Events (WHATWG HTML §9.2), the framing of A2A streams (§9.4.2), with no A2A types:
//! the mock encodes with it, the reference client and the fault engine decode with it, and the
//! evidence renderer re-encodes what was received, so every side frames events one way.

mod decode;
mod encode;

pub use decode::{
    Incomplete, SseError, SseEvent, SseLimits, SseParser, StreamEnd, StreamRead, Trailing, read_stream,
    read_stream_until,
};
pub use encode::{encode_comment, encode_event, encode_events};

pub const CONTENT_TYPE: &str = "text/event-stream";

/// True when a `Content-Type` value names an event stream (parameters and case ignored).
pub fn is_event_stream(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| ct.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case(CONTENT_TYPE))
}

/// True when the first bytes of a body are a line of SSE framing (a field such as `data:`,
/// `event:` or `id:`, or a `:` comment), not a JSON document: an event stream labelled with another
/// content type.
pub fn looks_framed(first: &[u8]) -> bool {
    let start = first.iter().position(|b| !b.is_ascii_whitespace()).map_or(&[][..], |i| &first[i..]);
    let start = start.strip_prefix("\u{feff}".as_bytes()).unwrap_or(start);
    [&b"data:"[..], b"event:", b"id:", b"retry:", b":"].iter().any(|f| start.starts_with(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_is_told_from_json() {
        assert!(looks_framed(b"data: {\"jsonrpc\":\"2.0\"}\n\n"));
        assert!(looks_framed(b"\r\nevent: message\ndata: x\n\n"));
        assert!(looks_framed(b": keep-alive\n\n"));
        assert!(!looks_framed(b"{\"jsonrpc\":\"2.0\",\"result\":{}}"));
        assert!(!looks_framed(b"  [1]"));
        assert!(!looks_framed(b""));
    }

    #[test]
    fn content_type_test_ignores_parameters_and_case() {
        assert!(is_event_stream(Some("text/event-stream")));
        assert!(is_event_stream(Some("Text/Event-Stream; charset=utf-8")));
        assert!(!is_event_stream(Some("application/json")));
        assert!(!is_event_stream(None));
    }
}

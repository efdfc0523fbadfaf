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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_type_test_ignores_parameters_and_case() {
        assert!(is_event_stream(Some("text/event-stream")));
        assert!(is_event_stream(Some("Text/Event-Stream; charset=utf-8")));
        assert!(!is_event_stream(Some("application/json")));
        assert!(!is_event_stream(None));
    }
}

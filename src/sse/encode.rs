//! Writing events.

use super::decode::SseEvent;

/// Encodes one SSE event. `data` is split on every line terminator the framing knows (CRLF, CR,
/// LF) so that each line gets its own `data:` field; a receiver rejoins them with LF, so CR and CRLF
/// in `data` arrive as LF (SSE cannot carry them). `id` must not contain a line break or NUL, or
/// the field is dropped (a receiver would ignore it anyway).
pub fn encode_event(id: Option<&str>, event: Option<&str>, data: &str) -> String {
    let mut out = String::with_capacity(data.len() + 32);
    if let Some(id) = id.filter(|i| !i.contains(['\n', '\r', '\0'])) {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    if let Some(ev) = event.filter(|e| !e.contains(['\n', '\r'])) {
        out.push_str("event: ");
        out.push_str(ev);
        out.push('\n');
    }
    for line in data.split("\r\n").flat_map(|l| l.split(['\r', '\n'])) {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

pub fn encode_events(events: &[SseEvent]) -> String {
    events.iter().map(|e| encode_event(e.id.as_deref(), e.event.as_deref(), &e.data)).collect()
}

/// Encodes a comment line, used as a keep-alive.
pub fn encode_comment(text: &str) -> String {
    format!(": {}\n\n", text.replace(['\n', '\r'], " "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_line_event_with_id() {
        assert_eq!(encode_event(Some("7"), None, "{\"a\":1}"), "id: 7\ndata: {\"a\":1}\n\n");
    }

    #[test]
    fn multi_line_data_gets_one_field_per_line() {
        assert_eq!(encode_event(None, Some("x"), "a\nb"), "event: x\ndata: a\ndata: b\n\n");
    }

    #[test]
    fn carriage_returns_become_line_breaks() {
        assert_eq!(encode_event(None, None, "a\rb\r\nc"), "data: a\ndata: b\ndata: c\n\n");
    }

    #[test]
    fn id_with_newline_is_dropped() {
        assert_eq!(encode_event(Some("a\nb"), None, "x"), "data: x\n\n");
    }
}

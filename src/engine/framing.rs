//! How the kit read a stream: what an agent's stream left undispatched (§9.1: "Streaming:
//! Server-Sent Events"), judged by the checks of each stream and remembered across the run by the
//! stream breaker, and whether the kit cut the read short.

use crate::client::http::StreamExchange;
use crate::report::text::truncate;
use crate::sse::{SseError, StreamEnd};

/// What a stream left undispatched, when that is a violation of its framing: an event is
/// dispatched at a blank line (SSE), so data lines a closed stream never ended with one are
/// dropped by every reader, and data lines that can no longer become JSON, whatever follows,
/// are an event no reader can use (the lines of several events piled up without the blank lines
/// between them, say). Data still on its way is nobody's finding.
pub fn undispatched(x: &StreamExchange) -> Option<String> {
    let p = x.pending.as_ref()?;
    let partial = p.partial_line.as_deref().filter(|l| l.starts_with("data"));
    let lines = p.data.as_deref().map_or(0, |d| d.split('\n').count()) + usize::from(partial.is_some());
    if lines == 0 {
        return None;
    }
    let shown = || {
        let mut all = p.data.clone().unwrap_or_default();
        if let Some(l) = partial {
            if !all.is_empty() {
                all.push('\n');
            }
            all.push_str(l.strip_prefix("data").map_or(l, |v| v.strip_prefix(':').unwrap_or(v).trim_start()));
        }
        truncate(&all, 160)
    };
    if matches!(x.end, Ok(StreamEnd::Closed { .. })) {
        return Some(format!(
            "the stream ended inside an event: {lines} data line(s) that no blank line dispatched, which an SSE \
             reader drops (an event is dispatched at a blank line), after {} event(s): {}",
            x.events.len(),
            shown()
        ));
    }
    let data = p.data.as_deref()?;
    match serde_json::from_str::<serde::de::IgnoredAny>(data) {
        Err(e) if !e.is_eof() => Some(format!(
            "the stream is sending an event whose data can no longer be JSON, whatever follows ({e}): {} data \
             line(s) and no blank line to dispatch them (an event is dispatched at a blank line; without one, \
             the data lines of several events pile up into one), after {} event(s): {}",
            lines,
            x.events.len(),
            shown()
        )),
        _ => None,
    }
}

/// Why the kit stopped reading the stream before it ended, when it did (the stream breaker): what
/// did not come is nobody's finding.
pub fn cut_short(x: &StreamExchange) -> Option<&str> {
    match &x.end {
        Err(SseError::Stopped { reason }) => Some(reason),
        _ => None,
    }
}

/// The undecided outcome of a stream the kit cut short, saying how far it read.
pub fn cut_message(x: &StreamExchange, why: &str) -> String {
    format!("the kit stopped reading the stream after {} event(s), before it ended ({why})", x.events.len())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::client::http::HttpRequest;
    use crate::sse::{Incomplete, Trailing};

    fn stream(end: Result<StreamEnd, SseError>, data: Option<&str>, partial_line: Option<&str>) -> StreamExchange {
        StreamExchange {
            request: HttpRequest::get("http://a.test/rpc"),
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            events: Vec::new(),
            end,
            trailing: Trailing::default(),
            body: Vec::new(),
            truncated: false,
            elapsed: Duration::from_secs(1),
            head_at: Duration::ZERO,
            arrivals: Vec::new(),
            pending: Some(Box::new(Incomplete {
                id: None,
                event: None,
                data: data.map(str::to_owned),
                partial_line: partial_line.map(str::to_owned),
            })),
            framed_unlabelled: false,
        }
    }

    const LINE: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}"#;

    #[test]
    fn a_stream_that_closes_inside_an_event_broke_its_framing() {
        let closed = || Ok(StreamEnd::Closed { incomplete: None });
        let why = undispatched(&stream(closed(), Some(LINE), None)).unwrap();
        assert!(why.starts_with("the stream ended inside an event: 1 data line(s)"), "{why}");
        // A last line without its line end is one more.
        let why = undispatched(&stream(closed(), Some(LINE), Some("data: {\"jsonrpc\""))).unwrap();
        assert!(why.contains("2 data line(s)"), "{why}");
        // Fields without data dispatch nothing anyway.
        assert_eq!(undispatched(&stream(closed(), None, Some("id: 7"))), None);
    }

    #[test]
    fn open_data_lines_break_the_framing_only_once_they_can_no_longer_be_json() {
        let open = || Err(SseError::TotalTimeout { limit: Duration::from_secs(1) });
        // Two events' data lines, piled up without the blank line between them.
        let piled = format!("{LINE}\n{LINE}");
        let why = undispatched(&stream(open(), Some(&piled), None)).unwrap();
        assert!(why.contains("can no longer be JSON") && why.contains("2 data line(s)"), "{why}");
        let cut = stream(Err(SseError::Stopped { reason: "breaker".into() }), Some(&piled), None);
        assert!(undispatched(&cut).is_some());
        // One event's data, its blank line still to come; the first lines of a pretty-printed
        // event (as §9.1's SSE allows); data that is not JSON from its first line.
        assert_eq!(undispatched(&stream(open(), Some(LINE), None)), None);
        assert_eq!(undispatched(&stream(open(), Some("{\n  \"jsonrpc\": \"2.0\","), None)), None);
        assert!(undispatched(&stream(open(), Some("{'jsonrpc': '2.0'}"), None)).is_some());
    }

    #[test]
    fn a_cut_read_says_so() {
        let cut = stream(Err(SseError::Stopped { reason: "streams never close".into() }), None, None);
        assert_eq!(cut_short(&cut), Some("streams never close"));
        assert_eq!(cut_message(&cut, "x"), "the kit stopped reading the stream after 0 event(s), before it ended (x)");
        let timed_out = stream(Err(SseError::IdleTimeout { limit: Duration::from_secs(1) }), None, None);
        assert_eq!(cut_short(&timed_out), None);
    }
}

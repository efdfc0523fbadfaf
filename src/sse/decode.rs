//! A strict, bounded Server-Sent Events reader (WHATWG HTML "Server-sent events", event stream
//! interpretation) for reading A2A streams from agents the kit does not trust.
//!
//! Unlike a browser, invalid UTF-8 is an error rather than replaced, because a conformance kit
//! must report it, and every buffer is bounded by [`SseLimits`] whatever the peer sends.

use std::ops::ControlFlow;
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};

/// Bounds on what a peer's event stream can make the reader hold or wait for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseLimits {
    /// Most bytes buffered for one event, including a line still waiting for its terminator.
    pub max_event_bytes: usize,
    /// Most events dispatched from one stream.
    pub max_events: usize,
    /// Most bytes read from one stream.
    pub max_total_bytes: usize,
    /// Longest wait for the next complete event. Comments (keep-alives) and the bytes of an event
    /// still being built do not count: a stream that only says it is alive makes no progress.
    pub idle_timeout: Duration,
    /// Longest time the whole stream may take.
    pub total_timeout: Duration,
}

impl Default for SseLimits {
    fn default() -> Self {
        SseLimits {
            max_event_bytes: 1024 * 1024,
            // Enough for an answer streamed a few words per event; each event is kept parsed
            // while its check judges it, so this bounds the memory of every stream read at once.
            max_events: 2_000,
            max_total_bytes: 16 * 1024 * 1024,
            idle_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(300),
        }
    }
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The last event id in effect when the event was dispatched (it persists across events).
    pub id: Option<String>,
    /// The event type, if an `event:` field set a non-empty one.
    pub event: Option<String>,
    /// The `data:` lines joined with "\n".
    pub data: String,
    /// Comment lines seen since the previous dispatched event.
    pub comments: usize,
}

/// What was buffered when the stream ended without the blank line that would have dispatched it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incomplete {
    /// The last event id in effect.
    pub id: Option<String>,
    pub event: Option<String>,
    /// The `data:` lines received so far, joined with "\n", if there were any.
    pub data: Option<String>,
    /// A final line that had no line terminator.
    pub partial_line: Option<String>,
}

/// What a stream sent after its last complete event: keep-alive comments, or the bytes of an
/// event it never finished. Tells a stream that is silent from one that only pretends to progress.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trailing {
    pub bytes: u64,
    pub comments: usize,
}

/// A stream read by [`read_stream`]: how it ended, and what came after its last event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamRead {
    pub end: Result<StreamEnd, SseError>,
    pub trailing: Trailing,
    /// The event still being built when the read ended, however it ended (for a closed stream,
    /// the same as its `incomplete`): data lines that no blank line dispatched.
    pub pending: Option<Incomplete>,
}

/// How a stream read by [`read_stream`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// The peer closed the stream; `incomplete` is what it left undispatched.
    Closed { incomplete: Option<Incomplete> },
    /// The callback asked to stop.
    StoppedByCaller,
}

/// Why an event stream was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// The stream is not valid UTF-8; `offset` is the byte offset of the first bad byte.
    #[error("event stream is not valid UTF-8 at byte {offset}")]
    InvalidUtf8 { offset: u64 },
    /// One event (or one unterminated line) exceeded `max_event_bytes`.
    #[error("event exceeds max_event_bytes ({limit})")]
    EventTooLarge { limit: usize },
    /// The stream dispatched more than `max_events` events.
    #[error("stream exceeds max_events ({limit})")]
    TooManyEvents { limit: usize },
    /// The stream sent more than `max_total_bytes` bytes.
    #[error("stream exceeds max_total_bytes ({limit})")]
    StreamTooLarge { limit: usize },
    /// No complete event arrived within `idle_timeout`.
    #[error("no complete event within idle_timeout ({limit:?})")]
    IdleTimeout { limit: Duration },
    /// The stream did not end within `total_timeout`.
    #[error("stream did not end within total_timeout ({limit:?})")]
    TotalTimeout { limit: Duration },
    /// The underlying byte stream failed.
    #[error("transport error: {0}")]
    Transport(String),
    /// The reader was told to stop before the stream ended (a bound of the caller's, not of the
    /// stream's own), for this reason.
    #[error("the reader stopped before the stream ended: {reason}")]
    Stopped { reason: String },
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A push-style event stream parser: feed it chunks split anywhere, get events back.
#[derive(Debug)]
pub struct SseParser {
    limits: SseLimits,
    /// Raw bytes of the current line; kept undecoded so a chunk may end inside a UTF-8 sequence.
    line: Vec<u8>,
    /// Set when a chunk ended with CR, so an LF opening the next chunk belongs to that CRLF.
    pending_cr: bool,
    /// The BOM is only special before the first line ends.
    first_line: bool,
    consumed: u64,
    /// `consumed` when the last event was dispatched (or a blank line ended nothing).
    consumed_at_event: u64,
    line_start: u64,
    data: String,
    event_type: String,
    last_event_id: String,
    retry: Option<u64>,
    comments: usize,
    dispatched: usize,
    /// Once a limit or decoding error fires, the stream's framing can no longer be trusted.
    failed: Option<SseError>,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::new(SseLimits::default())
    }
}

impl SseParser {
    /// Creates a parser enforcing the byte and event-count parts of `limits`.
    pub fn new(limits: SseLimits) -> Self {
        SseParser {
            limits,
            line: Vec::new(),
            pending_cr: false,
            first_line: true,
            consumed: 0,
            consumed_at_event: 0,
            line_start: 0,
            data: String::new(),
            event_type: String::new(),
            last_event_id: String::new(),
            retry: None,
            comments: 0,
            dispatched: 0,
            failed: None,
        }
    }

    /// The reconnection time the peer last asked for with a valid `retry:` field.
    pub fn retry(&self) -> Option<Duration> {
        self.retry.map(Duration::from_millis)
    }

    /// What arrived after the last dispatched event (or from the start, when none was).
    pub fn trailing(&self) -> Trailing {
        Trailing { bytes: self.consumed - self.consumed_at_event, comments: self.comments }
    }

    /// Feeds one chunk and returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        // The collector never breaks, so every event in the chunk is parsed.
        let _ = self.feed_each(chunk, |ev| {
            out.push(ev);
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }

    /// Feeds one chunk, handing each event to `on_event` as soon as it is dispatched, so events
    /// before an error in the same chunk are not lost; stops at the first `Break`, leaving the
    /// rest of the chunk unread.
    pub fn feed_each(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(SseEvent) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.feed_inner(chunk, &mut on_event);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    fn feed_inner(
        &mut self,
        chunk: &[u8],
        on_event: &mut impl FnMut(SseEvent) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, SseError> {
        // Parse what fits under the total limit first, so events sent before the overflow count.
        let allowed = (self.limits.max_total_bytes as u64).saturating_sub(self.consumed);
        let over = chunk.len() as u64 > allowed;
        let mut rest = if over { &chunk[..allowed as usize] } else { chunk };

        if self.pending_cr && !rest.is_empty() {
            self.pending_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
                self.consumed += 1;
                self.line_start = self.consumed;
            }
        }
        while !rest.is_empty() {
            let Some(i) = rest.iter().position(|&b| b == b'\n' || b == b'\r') else {
                self.extend_line(rest)?;
                break;
            };
            self.extend_line(&rest[..i])?;
            let terminator = rest[i];
            self.consumed += 1;
            rest = &rest[i + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    None => self.pending_cr = true,
                    Some(b'\n') => {
                        rest = &rest[1..];
                        self.consumed += 1;
                    }
                    Some(_) => {}
                }
            }
            let flow = self.end_line(on_event)?;
            self.line_start = self.consumed;
            if flow.is_break() {
                return Ok(flow);
            }
        }
        if over {
            return Err(SseError::StreamTooLarge { limit: self.limits.max_total_bytes });
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Bytes held for the event being built; the last event id is excluded because it came from
    /// one line, which this bound already covered, and it is replaced rather than grown.
    fn buffered(&self) -> usize {
        self.line.len() + self.data.len() + self.event_type.len()
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        // Checked before copying so an endless line never grows the buffer past the limit.
        if self.buffered() + bytes.len() > self.limits.max_event_bytes {
            return Err(SseError::EventTooLarge { limit: self.limits.max_event_bytes });
        }
        self.line.extend_from_slice(bytes);
        self.consumed += bytes.len() as u64;
        Ok(())
    }

    /// Decodes the buffered line, dropping a leading BOM if this is the stream's first line.
    fn take_line(&mut self) -> Result<String, SseError> {
        let mut skip = 0;
        if self.first_line && self.line.starts_with(BOM) {
            skip = BOM.len();
        }
        let bytes = std::mem::take(&mut self.line);
        match std::str::from_utf8(&bytes[skip..]) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(SseError::InvalidUtf8 { offset: self.line_start + (skip + e.valid_up_to()) as u64 }),
        }
    }

    fn end_line(
        &mut self,
        on_event: &mut impl FnMut(SseEvent) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, SseError> {
        let line = self.take_line()?;
        self.first_line = false;
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line.starts_with(':') {
            self.comments += 1;
            return Ok(ControlFlow::Continue(()));
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event_type),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => value.clone_into(&mut self.last_event_id),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Overlong digit strings are still "digits only"; saturate rather than ignore.
                self.retry = Some(value.parse().unwrap_or(u64::MAX));
            }
            _ => {}
        }
        Ok(ControlFlow::Continue(()))
    }

    fn dispatch(
        &mut self,
        on_event: &mut impl FnMut(SseEvent) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, SseError> {
        if self.data.is_empty() {
            self.event_type.clear();
            return Ok(ControlFlow::Continue(()));
        }
        if self.dispatched >= self.limits.max_events {
            return Err(SseError::TooManyEvents { limit: self.limits.max_events });
        }
        self.dispatched += 1;
        self.consumed_at_event = self.consumed;
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        let event = SseEvent {
            id: non_empty(&self.last_event_id),
            event: non_empty(&std::mem::take(&mut self.event_type)),
            data,
            comments: std::mem::take(&mut self.comments),
        };
        Ok(on_event(event))
    }

    /// Ends the stream, reporting any event that was still being built.
    pub fn finish(mut self) -> Result<Option<Incomplete>, SseError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let pending = self.pending();
        if !self.line.is_empty() {
            // A last line that is not UTF-8 is the stream's error, as any other line would be.
            self.take_line()?;
        }
        Ok(pending)
    }

    /// The event being built, as it stands: its data lines so far, and a last line still
    /// waiting for its terminator (decoded lossily: it may end inside a character).
    pub fn pending(&self) -> Option<Incomplete> {
        let partial_line = (!self.line.is_empty()).then(|| {
            let skip = if self.first_line && self.line.starts_with(BOM) { BOM.len() } else { 0 };
            String::from_utf8_lossy(&self.line[skip..]).into_owned()
        });
        if partial_line.is_none() && self.data.is_empty() && self.event_type.is_empty() {
            return None;
        }
        let data = (!self.data.is_empty()).then(|| self.data[..self.data.len() - 1].to_owned());
        Some(Incomplete { id: non_empty(&self.last_event_id), event: non_empty(&self.event_type), data, partial_line })
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// Reads an event stream to its end, handing each event to `on_event`, under all of `limits`.
/// Only a complete event resets the idle bound: comments and a trickle of bytes do not.
pub async fn read_stream<S, E>(
    stream: S,
    limits: &SseLimits,
    on_event: impl FnMut(SseEvent) -> ControlFlow<()>,
) -> StreamRead
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    read_stream_until(stream, limits, std::future::pending(), on_event).await
}

/// [`read_stream`] that also stops, with [`SseError::Stopped`], when `stop` resolves (to the
/// reason): what was read until then is kept.
pub async fn read_stream_until<S, E>(
    mut stream: S,
    limits: &SseLimits,
    stop: impl Future<Output = String>,
    mut on_event: impl FnMut(SseEvent) -> ControlFlow<()>,
) -> StreamRead
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let mut parser = SseParser::new(limits.clone());
    let end = tokio::select! {
        end = read_into(&mut stream, limits, &mut parser, &mut on_event) => end,
        reason = stop => Err(SseError::Stopped { reason }),
    };
    let trailing = parser.trailing();
    let pending = parser.pending();
    let end = match end {
        Ok(None) => parser.finish().map(|incomplete| StreamEnd::Closed { incomplete }),
        Ok(Some(end)) => Ok(end),
        Err(e) => Err(e),
    };
    StreamRead { end, trailing, pending }
}

/// Feeds `parser` until the stream ends (`None`), the caller stops, or a bound is hit.
async fn read_into<S, E>(
    stream: &mut S,
    limits: &SseLimits,
    parser: &mut SseParser,
    on_event: &mut impl FnMut(SseEvent) -> ControlFlow<()>,
) -> Result<Option<StreamEnd>, SseError>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let deadline = tokio::time::Instant::now() + limits.total_timeout;
    let mut idle_from = tokio::time::Instant::now();
    loop {
        let idle_end = idle_from + limits.idle_timeout;
        let next = match tokio::time::timeout_at(idle_end.min(deadline), stream.next()).await {
            Ok(next) => next,
            Err(_) if deadline <= idle_end => return Err(SseError::TotalTimeout { limit: limits.total_timeout }),
            Err(_) => return Err(SseError::IdleTimeout { limit: limits.idle_timeout }),
        };
        match next {
            None => return Ok(None),
            Some(Err(e)) => return Err(SseError::Transport(e.to_string())),
            Some(Ok(chunk)) => {
                let mut progressed = false;
                let flow = parser.feed_each(&chunk, |ev| {
                    progressed = true;
                    on_event(ev)
                })?;
                if flow.is_break() {
                    return Ok(Some(StreamEnd::StoppedByCaller));
                }
                if progressed {
                    idle_from = tokio::time::Instant::now();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::encode_event;
    use proptest::prelude::*;

    fn parse(input: &[u8]) -> Vec<SseEvent> {
        SseParser::default().feed(input).unwrap()
    }

    fn data_of(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    fn small(max_event_bytes: usize, max_events: usize, max_total_bytes: usize) -> SseLimits {
        SseLimits { max_event_bytes, max_events, max_total_bytes, ..SseLimits::default() }
    }

    #[test]
    fn all_line_endings_frame_alike() {
        for input in ["data: a\n\ndata: b\n\n", "data: a\r\n\r\ndata: b\r\n\r\n", "data: a\r\rdata: b\r\r"] {
            assert_eq!(data_of(&parse(input.as_bytes())), ["a", "b"], "{input:?}");
        }
        assert_eq!(data_of(&parse(b"data: a\r\n\rdata: b\n\r\n")), ["a", "b"]);
    }

    #[test]
    fn blank_line_dispatches_and_data_lines_join() {
        let mut p = SseParser::default();
        assert!(p.feed(b"data: a\ndata: b\n").unwrap().is_empty());
        assert_eq!(data_of(&p.feed(b"\n").unwrap()), ["a\nb"]);
    }

    #[test]
    fn id_persists_resets_and_ignores_nul() {
        let evs = parse(b"id: 1\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n");
        let ids: Vec<_> = evs.iter().map(|e| e.id.as_deref()).collect();
        assert_eq!(ids, [Some("1"), Some("1"), Some("1"), None]);
    }

    #[test]
    fn event_sets_type_for_one_event_only() {
        let evs = parse(b"event: status\ndata: a\n\ndata: b\n\n");
        assert_eq!(evs[0].event.as_deref(), Some("status"));
        assert_eq!(evs[1].event, None);
    }

    #[test]
    fn retry_accepts_digits_only() {
        let mut p = SseParser::default();
        p.feed(b"retry: 1500\n").unwrap();
        assert_eq!(p.retry(), Some(Duration::from_millis(1500)));
        p.feed(b"retry: 20ms\nretry: -1\nretry:\nretry: 1 0\n").unwrap();
        assert_eq!(p.retry(), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn comments_are_counted_not_dispatched() {
        let evs = parse(b": keep-alive\n\n:x\ndata: a\n\ndata: b\n\n");
        assert_eq!(data_of(&evs), ["a", "b"]);
        assert_eq!(evs[0].comments, 2);
        assert_eq!(evs[1].comments, 0);
    }

    #[test]
    fn field_without_colon_has_empty_value() {
        let evs = parse(b"data\ndata\n\nevent\ndata: x\n\n");
        assert_eq!(evs[0].data, "\n");
        assert_eq!(evs[1].event, None);
    }

    #[test]
    fn only_one_leading_space_is_stripped() {
        assert_eq!(data_of(&parse(b"data:x\n\ndata:  y\n\ndata: \n\n")), ["x", " y", ""]);
    }

    #[test]
    fn bom_skipped_only_at_stream_start() {
        assert_eq!(data_of(&parse(b"\xEF\xBB\xBFdata: a\n\n")), ["a"]);
        let mut p = SseParser::default();
        assert!(p.feed(b"\xEF").unwrap().is_empty());
        assert!(p.feed(b"\xBB").unwrap().is_empty());
        assert_eq!(data_of(&p.feed(b"\xBFdata: a\n\n").unwrap()), ["a"]);
        // A second BOM makes the field name "\u{FEFF}data", which is unknown and ignored.
        assert!(parse(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n").is_empty());
        assert!(parse(b"data: a\n\n\xEF\xBB\xBFdata: b\n\n").len() == 1);
    }

    #[test]
    fn event_without_data_is_not_dispatched() {
        let evs = parse(b"event: x\nid: 3\n\ndata: a\n\n");
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].event, None, "the type buffer is reset by the undispatched event");
        assert_eq!(evs[0].id.as_deref(), Some("3"));
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_break() {
        let mut p = SseParser::default();
        assert!(p.feed(b"data: a\r").unwrap().is_empty());
        assert!(p.feed(b"").unwrap().is_empty());
        assert!(p.feed(b"\ndata: b\r").unwrap().is_empty());
        assert_eq!(data_of(&p.feed(b"\n\r\n").unwrap()), ["a\nb"]);
        assert_eq!(p.finish().unwrap(), None);
    }

    #[test]
    fn multibyte_char_split_across_chunks() {
        let bytes = "data: é😀\n\n".as_bytes();
        for split in 0..=bytes.len() {
            let mut p = SseParser::default();
            let mut evs = p.feed(&bytes[..split]).unwrap();
            evs.extend(p.feed(&bytes[split..]).unwrap());
            assert_eq!(data_of(&evs), ["é😀"], "split at {split}");
        }
    }

    #[test]
    fn invalid_utf8_reports_offset() {
        let err = SseParser::default().feed(b"data: a\n\ndata: b\xFFc\n\n").unwrap_err();
        assert_eq!(err, SseError::InvalidUtf8 { offset: 16 });
        let mut p = SseParser::default();
        p.feed(b"data: \xC3").unwrap();
        assert_eq!(p.finish().unwrap_err(), SseError::InvalidUtf8 { offset: 6 });
    }

    #[test]
    fn endless_line_hits_event_limit_without_growing() {
        let mut p = SseParser::new(small(64, 10, 1 << 20));
        let mut err = None;
        for _ in 0..100 {
            if let Err(e) = p.feed(&[b'x'; 16]) {
                err = Some(e);
                break;
            }
        }
        assert_eq!(err, Some(SseError::EventTooLarge { limit: 64 }));
        assert!(p.line.capacity() <= 64 * 2);
        assert_eq!(p.feed(b"\n\n").unwrap_err(), SseError::EventTooLarge { limit: 64 }, "errors are sticky");
    }

    #[test]
    fn many_data_lines_hit_event_limit() {
        let mut p = SseParser::new(small(64, 10, 1 << 20));
        assert_eq!(p.feed(&b"data: 0123456789\n".repeat(10)).unwrap_err(), SseError::EventTooLarge { limit: 64 });
    }

    #[test]
    fn event_count_limit() {
        let mut p = SseParser::new(small(64, 2, 1 << 20));
        let mut seen = 0;
        let err = p
            .feed_each(b"data: a\n\ndata: b\n\ndata: c\n\n", |_| {
                seen += 1;
                ControlFlow::Continue(())
            })
            .unwrap_err();
        assert_eq!(err, SseError::TooManyEvents { limit: 2 });
        assert_eq!(seen, 2);
    }

    #[test]
    fn total_bytes_limit() {
        let mut p = SseParser::new(small(64, 100, 20));
        assert_eq!(p.feed(b"data: a\n\n").unwrap().len(), 1);
        let mut seen = Vec::new();
        let err = p
            .feed_each(b"data: b\n\ndata: c\n\n", |e| {
                seen.push(e.data);
                ControlFlow::Continue(())
            })
            .unwrap_err();
        assert_eq!(err, SseError::StreamTooLarge { limit: 20 });
        assert_eq!(seen, ["b"], "the event that fit under the limit is still delivered");
    }

    #[test]
    fn trailing_incomplete_event_is_reported() {
        let mut p = SseParser::default();
        assert!(p.feed(b"id: 9\nevent: e\ndata: a\ndata: b\ndata: c").unwrap().is_empty());
        let inc = p.finish().unwrap().unwrap();
        assert_eq!(
            inc,
            Incomplete {
                id: Some("9".into()),
                event: Some("e".into()),
                data: Some("a\nb".into()),
                partial_line: Some("data: c".into()),
            }
        );
        let mut p = SseParser::default();
        p.feed(b"data: a\n\n: bye\n").unwrap();
        assert_eq!(p.finish().unwrap(), None);
    }

    #[test]
    fn round_trip_with_encoder() {
        let wire = [
            encode_event(Some("1"), Some("status-update"), "{\"a\":\n1}"),
            encode_event(None, None, "line1\n\nline3\n"),
            encode_event(Some("bad\nid"), None, "x"),
            encode_event(Some("2"), None, "crlf\r\nline"),
        ]
        .concat();
        let evs = parse(wire.as_bytes());
        let got: Vec<_> = evs.iter().map(|e| (e.id.as_deref(), e.event.as_deref(), e.data.as_str())).collect();
        assert_eq!(
            got,
            [
                (Some("1"), Some("status-update"), "{\"a\":\n1}"),
                (Some("1"), None, "line1\n\nline3\n"),
                (Some("1"), None, "x"),
                (Some("2"), None, "crlf\nline"),
            ]
        );
    }

    fn text() -> impl Strategy<Value = String> {
        "[a-c: \\n\\r\\x00é😀]{0,10}"
    }

    proptest! {
        #[test]
        fn chunking_never_changes_the_events(
            events in prop::collection::vec((prop::option::of(text()), prop::option::of(text()), text()), 0..8),
            splits in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let wire: String = events.iter().map(|(i, e, d)| encode_event(i.as_deref(), e.as_deref(), d)).collect();
            let bytes = wire.as_bytes();
            let whole = parse(bytes);

            let mut cuts: Vec<usize> = splits.iter().map(|i| i.index(bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut p = SseParser::default();
            let mut chunked = Vec::new();
            let mut at = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                chunked.extend(p.feed(&bytes[at..cut]).unwrap());
                at = cut;
            }
            prop_assert_eq!(p.finish().unwrap(), None);
            prop_assert_eq!(&chunked, &whole);

            // SSE cannot carry CR in data: the encoder turns CRLF and CR into LF, and nothing else
            // may change.
            let sent: Vec<String> = events.iter().map(|(_, _, d)| d.replace("\r\n", "\n").replace('\r', "\n")).collect();
            prop_assert_eq!(data_of(&whole), sent);
        }
    }

    #[tokio::test]
    async fn read_stream_delivers_events_and_reports_close() {
        let chunks = ["data: a\r", "\n\r\ndata: é", "\n\nid: 1\ndata: tail"]
            .map(|s: &str| Ok::<_, std::io::Error>(Bytes::copy_from_slice(s.as_bytes())));
        let mut seen = Vec::new();
        let end = read_stream(futures::stream::iter(chunks), &SseLimits::default(), |e| {
            seen.push(e.data);
            ControlFlow::Continue(())
        })
        .await
        .end
        .unwrap();
        assert_eq!(seen, ["a", "é"]);
        let StreamEnd::Closed { incomplete: Some(inc) } = end else { panic!("{end:?}") };
        assert_eq!(inc.partial_line.as_deref(), Some("data: tail"));
    }

    #[tokio::test]
    async fn read_stream_stops_when_asked_and_surfaces_transport_errors() {
        let ok = |s: &'static str| Ok::<_, String>(Bytes::from_static(s.as_bytes()));
        let stream = futures::stream::iter([ok("data: a\n\ndata: b\n\n"), Err("reset".to_owned())]);
        let end = read_stream(stream, &SseLimits::default(), |_| ControlFlow::Break(())).await.end;
        assert_eq!(end, Ok(StreamEnd::StoppedByCaller));

        let stream = futures::stream::iter([ok("data: a\n\n"), Err("reset".to_owned())]);
        let end = read_stream(stream, &SseLimits::default(), |_| ControlFlow::Continue(())).await.end;
        assert_eq!(end, Err(SseError::Transport("reset".into())));
    }

    /// What a stream was still sending when its read ended is kept, whatever ended it: the
    /// caller's stop, a time bound, the close.
    #[tokio::test]
    async fn the_event_being_built_is_kept_however_the_read_ends() {
        let chunks = || {
            let sent =
                futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(b"data: a\n\ndata: b\ndata: c"))]);
            Box::pin(sent.chain(futures::stream::pending()))
        };
        let mut seen = Vec::new();
        let stop = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            "enough".to_owned()
        };
        let read = read_stream_until(chunks(), &SseLimits::default(), stop, |e| {
            seen.push(e.data);
            ControlFlow::Continue(())
        })
        .await;
        assert_eq!(seen, ["a"], "the events before the stop are delivered");
        assert_eq!(read.end, Err(SseError::Stopped { reason: "enough".into() }));
        let p = read.pending.unwrap();
        assert_eq!((p.data.as_deref(), p.partial_line.as_deref()), (Some("b"), Some("data: c")));

        let limits = SseLimits { idle_timeout: Duration::from_millis(20), ..SseLimits::default() };
        let read = read_stream(chunks(), &limits, |_| ControlFlow::Continue(())).await;
        assert_eq!(read.end, Err(SseError::IdleTimeout { limit: Duration::from_millis(20) }));
        assert_eq!(read.pending.unwrap().data.as_deref(), Some("b"));
    }

    // tokio's `test-util` feature (needed for `time::pause`) is not enabled in this crate, so the
    // timeouts here are real but short.
    #[tokio::test]
    async fn read_stream_times_out_when_idle() {
        let limits = SseLimits { idle_timeout: Duration::from_millis(20), ..SseLimits::default() };
        let stream = futures::stream::pending::<Result<Bytes, std::io::Error>>();
        let end = read_stream(stream, &limits, |_| ControlFlow::Continue(())).await.end;
        assert_eq!(end, Err(SseError::IdleTimeout { limit: Duration::from_millis(20) }));
    }

    #[tokio::test]
    async fn read_stream_enforces_total_timeout() {
        let limits = SseLimits {
            idle_timeout: Duration::from_millis(50),
            total_timeout: Duration::from_millis(30),
            ..SseLimits::default()
        };
        let keepalive = futures::stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            Some((Ok::<_, std::io::Error>(Bytes::from_static(b": ping\n\n")), ()))
        });
        let end = read_stream(Box::pin(keepalive), &limits, |_| ControlFlow::Continue(())).await.end;
        assert_eq!(end, Err(SseError::TotalTimeout { limit: Duration::from_millis(30) }));
    }

    /// Keep-alives and an event sent a byte at a time keep the connection busy without progress:
    /// the idle bound runs from the last complete event, and what came after it is told apart.
    #[tokio::test]
    async fn comments_and_a_trickle_of_bytes_are_no_progress() {
        let limits = SseLimits { idle_timeout: Duration::from_millis(60), ..SseLimits::default() };
        let keepalive = Box::pin(futures::stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            Some((Ok::<_, std::io::Error>(Bytes::from_static(b": ping\n")), ()))
        }));
        let read = read_stream(keepalive, &limits, |_| ControlFlow::Continue(())).await;
        assert_eq!(read.end, Err(SseError::IdleTimeout { limit: Duration::from_millis(60) }));
        assert!(read.trailing.comments >= 5 && read.trailing.bytes >= 35, "{:?}", read.trailing);

        let mut first = Some(&b"data: {}\n\n"[..]);
        let dribble = Box::pin(futures::stream::unfold((), move |()| {
            let chunk = first.take().unwrap_or(b"d");
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                Some((Ok::<_, std::io::Error>(Bytes::from_static(chunk)), ()))
            }
        }));
        let mut events = 0;
        let read = read_stream(dribble, &limits, |_| {
            events += 1;
            ControlFlow::Continue(())
        })
        .await;
        assert_eq!(events, 1);
        assert_eq!(read.end, Err(SseError::IdleTimeout { limit: Duration::from_millis(60) }));
        assert_eq!(read.trailing.comments, 0);
        assert!(read.trailing.bytes >= 5, "{:?}", read.trailing);
    }
}

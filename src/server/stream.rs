//! SSE responses (§9.4.2, §11.7): a Task snapshot (or a lone Message), then the task's logged
//! events in generation order, each as a JSON-RPC response (or, over HTTP+JSON, a bare
//! StreamResponse) with the event's sequence number as `id:`; the
//! stream ends after the event that makes the task terminal or interrupted (§11.7); SubscribeToTask
//! streams, unless `--subscribe-closes-at-interrupted`, only after a terminal one (§3.1.6).

use std::time::Duration;

use tokio::time::Instant;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use futures::stream::{self, Stream, StreamExt};

use super::config::MockConfig;
use super::rest::errors::error_body;
use super::tasks::{Lagged, StreamSlot, Subscription};
use crate::protocol::StreamResponse;
use crate::protocol::errors::{ErrorCode, RpcError};
use crate::protocol::jsonrpc::{RequestId, failure_with, success};
use crate::sse::{encode_comment, encode_event};

/// How often an idle stream sends a comment so that proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// What each event's `data:` holds.
#[derive(Debug, Clone)]
pub enum Framing {
    /// A JSON-RPC response with the request's id, the StreamResponse as its `result` (§9.4.2); an
    /// error is a JSON-RPC error response.
    JsonRpc(RequestId),
    /// The bare StreamResponse (§11.7); an error is the body an HTTP+JSON error answer has, a
    /// `google.rpc.Status` under `error` (§11.6), the HTTP status being already 200.
    Bare,
}

impl Framing {
    fn event(&self, ev: &StreamResponse) -> String {
        let v = serde_json::to_value(ev).expect("StreamResponse serializes");
        match self {
            Framing::JsonRpc(id) => success(id, v).to_string(),
            Framing::Bare => v.to_string(),
        }
    }

    fn error(&self, err: &RpcError, info_everywhere: bool) -> String {
        match self {
            Framing::JsonRpc(id) => failure_with(Some(id), err, info_everywhere).to_string(),
            Framing::Bare => error_body(err, info_everywhere).to_string(),
        }
    }
}

/// Which events end a task stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseAt {
    /// A terminal or an interrupted state (§11.7: "until the task reaches a terminal or interrupted
    /// state, at which point the stream closes").
    TerminalOrInterrupted,
    /// A terminal state only (§3.1.6, §7.6.1: the stream stays open through an interruption).
    Terminal,
}

/// How a stream ends and what bounds it.
#[derive(Debug, Clone, Copy)]
pub struct StreamOptions {
    pub close: CloseAt,
    /// Largest event sent; a bigger one becomes an error event that ends the stream.
    pub max_event_bytes: usize,
    /// Longest life of the stream; then it closes (the client may resume).
    pub max_life: Duration,
    /// Error events carry a `google.rpc.ErrorInfo` whatever their code.
    pub error_info_everywhere: bool,
    /// A stream that closes at its task's end sends the task once more first.
    pub final_snapshot: bool,
}

impl StreamOptions {
    pub fn new(config: &MockConfig, close: CloseAt) -> Self {
        StreamOptions {
            close,
            max_event_bytes: config.limits.max_event_bytes,
            max_life: Duration::from_millis(config.limits.max_stream_ms),
            error_info_everywhere: config.error_info_everywhere,
            final_snapshot: config.final_task_snapshot,
        }
    }

    fn error_event(&self, id: &Framing, err: &RpcError) -> Bytes {
        Bytes::from(encode_event(None, None, &id.error(err, self.error_info_everywhere)))
    }

    /// The event framed, or (`Err`) the error event that replaces one over `max_event_bytes`.
    fn frame(&self, id: &Framing, seq: u64, ev: &StreamResponse) -> Result<Bytes, Bytes> {
        let data = id.event(ev);
        if data.len() > self.max_event_bytes {
            let err = RpcError::new(
                ErrorCode::Internal,
                format!(
                    "event {seq} is {} bytes, over this agent's limit of {} (--max-event-bytes); read the task with GetTask",
                    data.len(),
                    self.max_event_bytes
                ),
            );
            return Err(self.error_event(id, &err));
        }
        Ok(Bytes::from(encode_event(Some(&seq.to_string()), None, &data)))
    }
}

/// A stream holding exactly one Message (§3.1.2 message-only shape).
pub fn single(id: Framing, ev: StreamResponse, opts: StreamOptions) -> Response {
    fixed(id, vec![(0, ev)], opts)
}

/// A stream of exactly these events (labelled with their sequence numbers), then closed: a
/// snapshot of a task that is already interrupted, or the replay of one.
pub fn fixed(id: Framing, events: Vec<(u64, StreamResponse)>, opts: StreamOptions) -> Response {
    let mut body = Vec::new();
    for (seq, ev) in &events {
        match opts.frame(&id, *seq, ev) {
            Ok(b) => body.extend_from_slice(&b),
            Err(e) => {
                body.extend_from_slice(&e);
                break;
            }
        }
    }
    sse_response(Body::from(body))
}

/// Ends a stream after `after` events as if its connection dropped, and says so once (the
/// `drop-stream` client scenario): `note` gets the sequence number of the last event sent.
pub struct Cut {
    pub after: usize,
    pub note: Box<dyn FnOnce(u64) + Send>,
}

/// A stream starting with `first` (a snapshot labelled with the sequence number it reflects, or
/// `None` when resuming) followed by the subscription's events until one that `opts.close` names.
/// `slot` is held for the life of the stream, so the task's stream count drops when it ends.
pub fn follow(
    id: Framing,
    first: Option<(u64, StreamResponse)>,
    sub: Subscription,
    slot: StreamSlot,
    opts: StreamOptions,
    cut: Option<Cut>,
) -> Response {
    let deadline = Instant::now() + opts.max_life;
    let mut cut = cut.map(|c| Cutting { left: c.after, note: Some(c.note) });
    let (head, state) = match first.map(|(seq, ev)| (seq, opts.frame(&id, seq, &ev))) {
        None => (None, State::Open(id, sub, slot, cut)),
        Some((seq, Ok(b))) => match cut.as_mut().map(|c| c.sent(seq)) {
            Some(true) => (Some(b), State::Done),
            _ => (Some(b), State::Open(id, sub, slot, cut)),
        },
        Some((_, Err(e))) => (Some(e), State::Done),
    };
    let tail = events(state, opts, deadline);
    let body = stream::iter(head.map(Ok::<_, std::convert::Infallible>)).chain(tail.map(Ok));
    sse_response(Body::from_stream(body))
}

enum State {
    Open(Framing, Subscription, StreamSlot, Option<Cutting>),
    Done,
}

struct Cutting {
    left: usize,
    note: Option<Box<dyn FnOnce(u64) + Send>>,
}

impl Cutting {
    /// Counts one event sent; true when the stream is to be cut after it.
    fn sent(&mut self, seq: u64) -> bool {
        self.left = self.left.saturating_sub(1);
        if self.left > 0 {
            return false;
        }
        if let Some(note) = self.note.take() {
            note(seq);
        }
        true
    }
}

fn events(state: State, opts: StreamOptions, deadline: Instant) -> impl Stream<Item = Bytes> {
    stream::unfold(state, move |state| async move {
        let State::Open(id, mut sub, slot, mut cut) = state else { return None };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        match tokio::time::timeout(KEEP_ALIVE.min(left), sub.next_batch()).await {
            Err(_) if left <= KEEP_ALIVE => None,
            Err(_) => Some((Bytes::from(encode_comment("keep-alive")), State::Open(id, sub, slot, cut))),
            Ok(Err(Lagged { oldest_retained })) => {
                let err = RpcError::new(
                    ErrorCode::Internal,
                    format!(
                        "this stream fell behind the task's event log (oldest retained event {oldest_retained}); resubscribe"
                    ),
                );
                Some((opts.error_event(&id, &err), State::Done))
            }
            Ok(Ok(batch)) => {
                let mut out = Vec::new();
                let mut closes = false;
                for ev in batch {
                    match opts.frame(&id, ev.seq, &ev.event) {
                        Ok(b) => out.extend_from_slice(&b),
                        Err(e) => {
                            out.extend_from_slice(&e);
                            closes = true;
                            break;
                        }
                    }
                    let ends = match opts.close {
                        CloseAt::TerminalOrInterrupted => ev.closes_stream,
                        CloseAt::Terminal => ev.is_terminal(),
                    };
                    if ends && opts.final_snapshot {
                        let task = StreamResponse::Task(sub.task_now());
                        out.extend_from_slice(encode_event(None, None, &id.event(&task)).as_bytes());
                    }
                    // A stream that ends here anyway is not cut: the client saw it end.
                    if ends || cut.as_mut().is_some_and(|c| c.sent(ev.seq)) {
                        closes = true;
                        break;
                    }
                }
                let next = if closes { State::Done } else { State::Open(id, sub, slot, cut) };
                Some((Bytes::from(out), next))
            }
        }
    })
}

fn sse_response(body: Body) -> Response {
    let mut r = Response::new(body);
    *r.status_mut() = StatusCode::OK;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

//! SSE responses (§9.4.2): a Task snapshot (or a lone Message), then the task's logged events in
//! generation order, each as a JSON-RPC response with the event's sequence number as `id:`; the
//! stream ends after the event that makes the task terminal or interrupted.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use futures::stream::{self, Stream, StreamExt};

use super::tasks::{Lagged, StreamSlot, Subscription};
use crate::protocol::StreamResponse;
use crate::protocol::errors::{ErrorCode, RpcError};
use crate::protocol::jsonrpc::{RequestId, failure, success};
use crate::sse::{encode_comment, encode_event};

/// How often an idle stream sends a comment so that proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

fn frame(id: &RequestId, seq: u64, ev: &StreamResponse) -> Bytes {
    let data = success(id, serde_json::to_value(ev).expect("StreamResponse serializes"));
    Bytes::from(encode_event(Some(&seq.to_string()), None, &data.to_string()))
}

/// A stream holding exactly one Message (§3.1.2 message-only shape).
pub fn single(id: RequestId, ev: StreamResponse) -> Response {
    let body = frame(&id, 0, &ev);
    sse_response(Body::from(body))
}

/// A stream starting with `first` (a snapshot labelled with the sequence number it reflects, or
/// `None` when resuming) followed by the subscription's events.
/// `slot` is held for the life of the stream, so the task's stream count drops when it ends.
pub fn follow(id: RequestId, first: Option<(u64, StreamResponse)>, sub: Subscription, slot: StreamSlot) -> Response {
    let head = first.map(|(seq, ev)| frame(&id, seq, &ev));
    let tail = events(id, sub, slot);
    let body = stream::iter(head.map(Ok::<_, std::convert::Infallible>)).chain(tail.map(Ok));
    sse_response(Body::from_stream(body))
}

enum State {
    Open(RequestId, Subscription, StreamSlot),
    Done,
}

fn events(id: RequestId, sub: Subscription, slot: StreamSlot) -> impl Stream<Item = Bytes> {
    stream::unfold(State::Open(id, sub, slot), |state| async move {
        let State::Open(id, mut sub, slot) = state else { return None };
        match tokio::time::timeout(KEEP_ALIVE, sub.next_batch()).await {
            Err(_) => Some((Bytes::from(encode_comment("keep-alive")), State::Open(id, sub, slot))),
            Ok(Err(Lagged { oldest_retained })) => {
                let err = RpcError::new(
                    ErrorCode::Internal,
                    format!(
                        "this stream fell behind the task's event log (oldest retained event {oldest_retained}); resubscribe"
                    ),
                );
                let data = failure(Some(&id), &err).to_string();
                Some((Bytes::from(encode_event(None, None, &data)), State::Done))
            }
            Ok(Ok(batch)) => {
                let mut out = Vec::new();
                let mut closes = false;
                for ev in batch {
                    out.extend_from_slice(&frame(&id, ev.seq, &ev.event));
                    if ev.closes_stream {
                        closes = true;
                        break;
                    }
                }
                let next = if closes { State::Done } else { State::Open(id, sub, slot) };
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

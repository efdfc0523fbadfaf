//! What keeps a run against an untrusted agent bounded and honest, across all checks at once:
//! a circuit breaker (after a few consecutive requests to one endpoint that time out or lose their
//! connection, the agent is unresponsive and every remaining check ends at once), a second one for
//! streams (after a few in a row that hit the kit's time or size bounds, streams are read only
//! briefly), the run deadline, and the canary credentials the kit sends and looks for in every
//! answer.
//!
//! The stream breaker bounds time and nothing else: a stream request is still sent once it has
//! tripped (its answer may be plain JSON, graded as ever), and a stream it cuts short keeps the
//! events that came, so that whatever they decide is still the verdict.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use super::framing;
use crate::client::http::{ClientError, HttpExchange, StreamExchange};
use crate::sse::{SseError, StreamEnd};

/// Consecutive failed exchanges (time-outs, refused or reset connections) after which the agent
/// is taken for unresponsive.
pub const STRIKES: usize = 3;

/// Streams in a row from one endpoint that ran into a bound (still sending at the time bound,
/// no event within it, over a size cap) after which that agent's streams are taken for hostile.
/// Each such stream already cost a check its whole patience; a conforming agent closes its
/// streams, so one that closes resets the count.
pub const STREAM_STRIKES: usize = 3;

/// How long a stream is read once the stream breaker has tripped: time for an agent that answers
/// at once to send its first events, far less than the patience each hostile stream cost.
pub const AFTER_TRIP: Duration = Duration::from_secs(2);

/// Header that carries a canary in every request: an agent that echoes request headers, or
/// stores and reflects them, shows it here.
pub const CANARY_HEADER: &str = "X-A2A-Conform-Canary";

/// Most leaks kept for the report.
const MAX_LEAKS: usize = 50;

/// Most endpoints counted apart; any further ones share one count.
const MAX_ENDPOINTS: usize = 64;

/// One canary found in an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    /// The check and step that received it.
    pub origin: String,
    /// Where in the answer: a header name or `body`.
    pub place: String,
    /// Which canary (its header), never its value.
    pub canary: String,
}

#[derive(Debug)]
pub struct Guard {
    /// Exchanges: tripped, every remaining check stops (unresponsive agent, and also the run
    /// deadline and signals, which trip it directly).
    run: Breaker,
    /// Streams: tripped, streams are read only briefly.
    streams: Breaker,
    /// The first stream, per endpoint, whose SSE framing broke (data lines no blank line
    /// dispatched): (endpoint, where it was read, what broke). A stream the breaker cut short
    /// may have had no time to show what the streams that tripped it showed.
    framing: Mutex<Vec<(String, String, String)>>,
    /// (where it was sent, value).
    canaries: Vec<(String, String)>,
    leaks: Mutex<Vec<Leak>>,
}

impl Guard {
    pub fn new(canaries: Vec<(String, String)>) -> Self {
        Guard {
            run: Breaker::default(),
            streams: Breaker::default(),
            framing: Mutex::new(Vec::new()),
            canaries,
            leaks: Mutex::new(Vec::new()),
        }
    }

    /// Why the run stopped, once it has.
    pub fn stopped(&self) -> Option<String> {
        self.run.tripped()
    }

    /// Resolves when the run stops (immediately if it already has), with the reason.
    pub async fn wait_stop(&self) -> String {
        self.run.wait().await
    }

    /// Why streams are read only briefly, once the agent's streams have been found hostile.
    pub fn streams_tripped(&self) -> Option<String> {
        self.streams.tripped()
    }

    /// Resolves when the agent's streams are found hostile, with the reason.
    pub async fn wait_streams_tripped(&self) -> String {
        self.streams.wait().await
    }

    /// Stops every remaining check with `reason` (the first reason wins).
    pub fn stop(&self, reason: String) {
        self.run.trip(reason);
    }

    /// Counts an exchange with `url`: a complete answer (whatever its status) resets that
    /// endpoint's count; a failure of the connection or a time-out is a strike, and the third in a
    /// row on one endpoint stops the run.
    pub fn record<T>(&self, url: &str, outcome: &Result<T, ClientError>) {
        match outcome {
            Ok(_) => self.run.reset(url),
            Err(e @ (ClientError::Timeout { .. } | ClientError::Connect(_) | ClientError::Transport(_))) => {
                let n = self.run.strike(url);
                if n >= STRIKES {
                    self.stop(format!("agent unresponsive: {n} requests in a row got no answer (last: {e})"));
                }
            }
            Err(_) => {}
        }
    }

    /// Counts a stream read from `url` for the stream breaker: one that hit a bound is a strike,
    /// one the agent closed resets the count; one the kit hung up on itself says nothing.
    pub fn record_stream(&self, url: &str, x: &StreamExchange) {
        match Trouble::of(x) {
            Verdict::Closed => self.streams.reset(url),
            Verdict::Neutral => {}
            Verdict::Trouble(t) => {
                let n = self.streams.strike(url);
                if n >= STREAM_STRIKES {
                    self.streams.trip(t.describe(n));
                }
            }
        }
    }

    /// Remembers the first broken framing of a stream read from `x`'s endpoint.
    pub fn note_framing(&self, origin: &str, x: &StreamExchange) {
        let Some(what) = framing::undispatched(x) else { return };
        let endpoint = endpoint(&x.request.url).to_owned();
        let mut seen = self.framing.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() < MAX_ENDPOINTS && !seen.iter().any(|(e, _, _)| *e == endpoint) {
            seen.push((endpoint, origin.to_owned(), what));
        }
    }

    /// The first broken framing seen on `url`'s endpoint: where it was read, and what broke.
    pub fn framing_fault(&self, url: &str) -> Option<(String, String)> {
        let seen = self.framing.lock().unwrap_or_else(|p| p.into_inner());
        seen.iter().find(|(e, _, _)| e == endpoint(url)).map(|(_, origin, what)| (origin.clone(), what.clone()))
    }

    fn scan(&self, origin: &str, headers: &[(String, String)], bodies: &[&[u8]]) {
        for (label, canary) in &self.canaries {
            let mut places: Vec<String> = headers
                .iter()
                .filter(|(_, v)| v.contains(canary.as_str()))
                .map(|(n, _)| format!("header {n}"))
                .collect();
            if bodies.iter().any(|b| memmem(b, canary.as_bytes())) {
                places.push("body".into());
            }
            let mut leaks = self.leaks.lock().unwrap_or_else(|p| p.into_inner());
            for place in places {
                if leaks.len() < MAX_LEAKS {
                    leaks.push(Leak { origin: origin.to_owned(), place, canary: label.clone() });
                }
            }
        }
    }

    /// Looks for every canary in an answer.
    pub fn scan_exchange(&self, origin: &str, x: &HttpExchange) {
        self.scan(origin, &x.headers, &[&x.body]);
    }

    pub fn scan_stream(&self, origin: &str, x: &StreamExchange) {
        let data: Vec<&[u8]> = x.events.iter().map(|e| e.data.as_bytes()).chain([x.body.as_slice()]).collect();
        self.scan(origin, &x.headers, &data);
    }

    pub fn leaks(&self) -> Vec<Leak> {
        self.leaks.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Where canaries were sent, for the report.
    pub fn canary_places(&self) -> Vec<String> {
        self.canaries.iter().map(|(l, _)| l.clone()).collect()
    }
}

/// Consecutive strikes per endpoint (URL without its query), and why it tripped once it has: a
/// card that still answers says nothing about an interface that has gone silent, so its answers
/// must not reset that count.
#[derive(Debug)]
struct Breaker {
    strikes: Mutex<HashMap<String, usize>>,
    /// Set once; the first reason wins.
    tripped: watch::Sender<Option<String>>,
}

impl Default for Breaker {
    fn default() -> Self {
        Breaker { strikes: Mutex::new(HashMap::new()), tripped: watch::channel(None).0 }
    }
}

impl Breaker {
    fn reset(&self, url: &str) {
        self.with_count(url, |n| *n = 0);
    }

    /// Counts a strike on `url`'s endpoint; returns how many in a row.
    fn strike(&self, url: &str) -> usize {
        self.with_count(url, |n| {
            *n += 1;
            *n
        })
    }

    fn with_count<R>(&self, url: &str, f: impl FnOnce(&mut usize) -> R) -> R {
        let endpoint = endpoint(url);
        let mut strikes = self.strikes.lock().unwrap_or_else(|p| p.into_inner());
        let key = if strikes.contains_key(endpoint) || strikes.len() < MAX_ENDPOINTS { endpoint } else { "" };
        f(strikes.entry(key.to_owned()).or_insert(0))
    }

    fn trip(&self, why: String) {
        self.tripped.send_if_modified(|r| {
            if r.is_some() {
                return false;
            }
            *r = Some(why);
            true
        });
    }

    fn tripped(&self) -> Option<String> {
        self.tripped.borrow().clone()
    }

    async fn wait(&self) -> String {
        let mut rx = self.tripped.subscribe();
        let reason = rx.wait_for(Option::is_some).await.ok().map(|r| r.clone().unwrap_or_default());
        match reason {
            Some(r) => r,
            // The sender lives as long as the breaker; this is only reached if it were dropped.
            None => std::future::pending().await,
        }
    }
}

/// How a stream ran into the kit's bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Trouble {
    /// Events were still coming when the time bound came.
    NeverCloses { bound: Duration, events: usize },
    /// Not one event within the time bound: only comments, the bytes of an event never finished,
    /// or nothing at all.
    NoEvent { bound: Duration, comments: usize, bytes: u64 },
    /// Over a size cap.
    OverCap(SseError),
    /// Silent and open after an event that leaves nothing more to send.
    StaysOpen { bound: Duration, after: String },
}

/// What in a stream's last event left nothing more the kit could read, if anything did: it is
/// neither a JSON-RPC response nor (over HTTP+JSON) a bare StreamResponse, or it is an error. A
/// stream left open after a Message or a terminal state is not counted: checks grade that sentence
/// of the spec, and must see it for themselves.
fn done_with(events: &[crate::sse::SseEvent]) -> Option<String> {
    let last: Value = serde_json::from_str(&events.last()?.data).unwrap_or(Value::Null);
    if last.get("error").is_some() {
        return Some("an error".into());
    }
    let result = last.get("result").is_some()
        || ["task", "message", "statusUpdate", "artifactUpdate"].iter().any(|k| last.get(*k).is_some());
    (!result).then(|| "an event that is neither a JSON-RPC response nor a StreamResponse".into())
}

enum Verdict {
    Closed,
    Neutral,
    Trouble(Trouble),
}

impl Trouble {
    fn of(x: &StreamExchange) -> Verdict {
        let bound = match &x.end {
            Ok(StreamEnd::Closed { .. }) => return Verdict::Closed,
            Ok(StreamEnd::StoppedByCaller) => return Verdict::Neutral,
            Err(
                e @ (SseError::TooManyEvents { .. } | SseError::StreamTooLarge { .. } | SseError::EventTooLarge { .. }),
            ) => {
                return Verdict::Trouble(Trouble::OverCap(e.clone()));
            }
            Err(SseError::TotalTimeout { limit } | SseError::IdleTimeout { limit }) => *limit,
            Err(SseError::InvalidUtf8 { .. } | SseError::Transport(_) | SseError::Stopped { .. }) => {
                return Verdict::Neutral;
            }
        };
        let Some(last) = x.arrivals.last() else {
            let t = x.trailing;
            return Verdict::Trouble(Trouble::NoEvent { bound, comments: t.comments, bytes: t.bytes });
        };
        let gap = x.arrivals.windows(2).map(|w| w[1].saturating_sub(w[0])).max().unwrap_or_default();
        let quiet_at_end = x.elapsed.saturating_sub(*last);
        if x.arrivals.len() >= 2 && quiet_at_end <= gap.max(Duration::from_millis(100)) {
            return Verdict::Trouble(Trouble::NeverCloses { bound, events: x.events.len() });
        }
        // Events, then an open and silent stream: what several agents do while a task works or
        // waits for input (digest §14), so not a strike; after an event the kit cannot read at
        // all, it is. Open after a terminal state is a violation its own checks must each see.
        match done_with(&x.events) {
            Some(after) => Verdict::Trouble(Trouble::StaysOpen { bound, after }),
            None => Verdict::Neutral,
        }
    }

    fn describe(&self, n: usize) -> String {
        match self {
            Trouble::NeverCloses { bound, events } => format!(
                "streams never close: {n} streams in a row were still sending events at the kit's {} bound (the last sent {events})",
                secs(*bound)
            ),
            Trouble::NoEvent { bound, comments, bytes } => {
                let what = match (comments, bytes) {
                    (c, _) if *c > 0 => format!("only SSE comments ({c} in the last)"),
                    (_, b) if *b > 0 => format!("bytes that never made up an event ({b} in the last)"),
                    _ => "nothing after their headers".to_owned(),
                };
                format!(
                    "streams send no event: {n} streams in a row sent {what} within the kit's {} bound",
                    secs(*bound)
                )
            }
            Trouble::OverCap(e) => format!("streams exceed the kit's caps: {n} streams in a row were cut ({e})"),
            Trouble::StaysOpen { bound, after } => format!(
                "streams stay open when done: {n} streams in a row stayed open and silent after {after}, until the kit's {} bound",
                secs(*bound)
            ),
        }
    }
}

/// A URL without its query: one endpoint of the agent.
fn endpoint(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 { format!("{s:.0} s") } else { format!("{s:.1} s") }
}

fn memmem(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_failures_in_a_row_stop_the_run_and_an_answer_resets_the_count() {
        let g = Guard::new(Vec::new());
        let rpc = "http://a.test/rpc";
        let timeout: Result<(), ClientError> = Err(ClientError::Timeout { limit: Duration::from_secs(1) });
        g.record(rpc, &timeout);
        g.record(rpc, &timeout);
        g.record(rpc, &Ok::<(), ClientError>(()));
        g.record(rpc, &timeout);
        assert_eq!(g.stopped(), None);
        g.record(&format!("{rpc}?v=1"), &Err::<(), _>(ClientError::Connect("refused".into())));
        g.record(rpc, &timeout);
        assert!(g.stopped().unwrap().starts_with("agent unresponsive: 3 requests"), "{:?}", g.stopped());
        g.stop("later".into());
        assert!(g.stopped().unwrap().starts_with("agent unresponsive"), "the first reason wins");
    }

    /// The interface goes silent while the card still answers: the card's answers, interleaved
    /// with the interface's time-outs, must not keep the run going.
    #[test]
    fn another_endpoint_answering_does_not_reset_a_silent_one() {
        let g = Guard::new(Vec::new());
        let timeout: Result<(), ClientError> = Err(ClientError::Timeout { limit: Duration::from_secs(1) });
        for _ in 0..2 {
            g.record("http://a.test/rpc", &timeout);
            g.record("http://a.test/.well-known/agent-card.json", &Ok::<(), ClientError>(()));
        }
        assert_eq!(g.stopped(), None);
        g.record("http://a.test/rpc", &timeout);
        assert!(g.stopped().is_some());
    }

    fn stream(end: Result<StreamEnd, SseError>, arrivals_ms: &[u64], elapsed_ms: u64) -> StreamExchange {
        let working = r#"{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"status":{"state":"TASK_STATE_WORKING"}}}}"#;
        let ev = crate::sse::SseEvent { id: None, event: None, data: working.into(), comments: 0 };
        StreamExchange {
            request: crate::client::http::HttpRequest::get("http://a.test/rpc"),
            status: 200,
            headers: Vec::new(),
            events: arrivals_ms.iter().map(|_| ev.clone()).collect(),
            end,
            trailing: crate::sse::Trailing { bytes: 40, comments: 4 },
            body: Vec::new(),
            truncated: false,
            elapsed: Duration::from_millis(elapsed_ms),
            head_at: Duration::ZERO,
            arrivals: arrivals_ms.iter().map(|&ms| Duration::from_millis(ms)).collect(),
            pending: None,
            framed_unlabelled: false,
        }
    }

    #[test]
    fn three_streams_in_a_row_at_a_bound_stop_the_streams_and_say_how() {
        let limit = Duration::from_secs(10);
        let endless = stream(Err(SseError::TotalTimeout { limit }), &[5, 10, 9_995], 10_000);
        let closed = stream(Ok(StreamEnd::Closed { incomplete: None }), &[5], 20);
        let g = Guard::new(Vec::new());
        let rpc = "http://a.test/rpc";
        g.record_stream(rpc, &endless);
        g.record_stream(rpc, &endless);
        g.record_stream(rpc, &closed);
        g.record_stream(rpc, &endless);
        g.record_stream(rpc, &endless);
        assert_eq!(g.streams_tripped(), None, "a stream the agent closed resets the count");
        g.record_stream(rpc, &endless);
        let why = g.streams_tripped().unwrap();
        assert_eq!(
            why,
            "streams never close: 3 streams in a row were still sending events at the kit's 10 s bound (the last sent 3)"
        );
        assert_eq!(g.stopped(), None, "the other checks go on");

        let g = Guard::new(Vec::new());
        for _ in 0..3 {
            g.record_stream(rpc, &stream(Err(SseError::IdleTimeout { limit }), &[], 10_000));
        }
        assert!(g.streams_tripped().unwrap().contains("sent only SSE comments (4 in the last)"));
    }

    /// Events, then an open stream with nothing more: what agents do on a task in progress or
    /// interrupted. And a stream the kit hung up on itself. Neither says anything about the agent;
    /// a stream left open after an event the kit cannot read does.
    #[test]
    fn a_stream_left_open_while_the_task_goes_on_is_no_strike() {
        let limit = Duration::from_secs(10);
        let g = Guard::new(Vec::new());
        for _ in 0..5 {
            g.record_stream("http://a.test/rpc", &stream(Err(SseError::TotalTimeout { limit }), &[5, 30], 10_000));
            g.record_stream("http://a.test/rpc", &stream(Ok(StreamEnd::StoppedByCaller), &[5], 5));
        }
        assert_eq!(g.streams_tripped(), None);
        // Open after a terminal state is for the checks of that sentence to find, each its own.
        let mut done = stream(Err(SseError::TotalTimeout { limit }), &[5, 30], 10_000);
        done.events[1].data =
            r#"{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"status":{"state":"TASK_STATE_COMPLETED"}}}}"#.into();
        for _ in 0..3 {
            g.record_stream("http://a.test/rpc", &done);
        }
        assert_eq!(g.streams_tripped(), None);
        // So is a bare StreamResponse, as HTTP+JSON streams carry them.
        done.events[1].data = r#"{"statusUpdate":{"status":{"state":"TASK_STATE_COMPLETED"}}}"#.into();
        for _ in 0..3 {
            g.record_stream("http://a.test/tasks/t:subscribe", &done);
        }
        assert_eq!(g.streams_tripped(), None);
        // Open and silent after an event that is neither is a strike.
        done.events[1].data = "<html>".into();
        for _ in 0..3 {
            g.record_stream("http://a.test/rpc", &done);
        }
        assert_eq!(
            g.streams_tripped().as_deref(),
            Some(
                "streams stay open when done: 3 streams in a row stayed open and silent after an event that is neither \
                 a JSON-RPC response nor a StreamResponse, until the kit's 10 s bound"
            )
        );
        // The kit cutting a read short says nothing about the agent.
        let g = Guard::new(Vec::new());
        let cut = stream(Err(SseError::Stopped { reason: "breaker".into() }), &[5], 10_000);
        for _ in 0..3 {
            g.record_stream("http://a.test/rpc", &cut);
        }
        assert_eq!(g.streams_tripped(), None);
    }

    /// A stream cut short may not have shown what the streams that tripped the breaker showed:
    /// the first broken framing of each endpoint is remembered for the check that owns it.
    #[test]
    fn the_first_broken_framing_of_each_endpoint_is_remembered() {
        let g = Guard::new(Vec::new());
        let limit = Duration::from_secs(10);
        let mut piled = stream(Err(SseError::TotalTimeout { limit }), &[], 10_000);
        piled.pending = Some(Box::new(crate::sse::Incomplete {
            id: None,
            event: None,
            data: Some("{\"a\":1}\n{\"a\":2}".into()),
            partial_line: None,
        }));
        g.note_framing("C-1 / s", &stream(Err(SseError::TotalTimeout { limit }), &[5], 10_000));
        assert_eq!(g.framing_fault("http://a.test/rpc"), None, "a stream that is only slow broke nothing");
        g.note_framing("C-2 / s", &piled);
        g.note_framing("C-3 / s", &piled);
        let (origin, what) = g.framing_fault("http://a.test/rpc?x=1").unwrap();
        assert_eq!(origin, "C-2 / s");
        assert!(what.contains("can no longer be JSON"), "{what}");
        assert_eq!(g.framing_fault("http://a.test/v1/tasks"), None, "another endpoint's streams are its own");
    }

    #[test]
    fn canaries_are_found_in_headers_and_bodies_and_reported_by_name() {
        let g = Guard::new(vec![("header X-A2A-Conform-Canary".into(), "kit-canary-123".into())]);
        g.scan("C-1 / s", &[("x-echo".into(), "kit-canary-123".into())], &[b"nothing"]);
        g.scan("C-2 / s", &[], &[b"{\"text\":\"you sent kit-canary-123\"}"]);
        g.scan("C-3 / s", &[], &[b"clean"]);
        let leaks = g.leaks();
        assert_eq!(leaks.len(), 2);
        assert_eq!(leaks[0].place, "header x-echo");
        assert_eq!(leaks[1].origin, "C-2 / s");
        assert!(leaks.iter().all(|l| !l.canary.contains("kit-canary-123")));
    }
}

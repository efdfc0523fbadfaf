//! The bench's load generator: N keep-alive HTTP/1.1 connections on loopback, each sending one
//! fixed request after another, bounded by a request count and a time limit. It is built on
//! hyper's connection API rather than the kit's reqwest client so that the client's own cost (a
//! pool, URL parsing, redirect policy) stays small next to what it measures.

use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request, header};
use bytes::Bytes;
use futures::StreamExt as _;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::Barrier;

use crate::sse::{SseLimits, SseParser};

/// Largest response body read; the bench's own requests get small answers.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How long a connection may take to open, and a lone request to be answered. Under load, a
/// request has no timer of its own (registering one per request cost the client a twentieth of
/// its time): the bound on the whole run ends a stalled one.
const STALL: Duration = Duration::from_secs(10);

/// One request, sent again and again.
#[derive(Debug, Clone)]
pub struct Template {
    pub method: Method,
    pub path: String,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Bytes,
    /// How the answer is read and judged.
    pub read: Read,
}

/// How an answer is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// The whole body; a 2xx with no JSON-RPC `error` member at the top is a success.
    Whole,
    /// An SSE stream, to its end: every event is counted; one carrying an `error` is a failure.
    Events,
}

impl Template {
    pub fn get(path: &str) -> Self {
        Template { method: Method::GET, path: path.into(), headers: Vec::new(), body: Bytes::new(), read: Read::Whole }
    }

    /// A JSON-RPC call as an A2A 1.0 client makes it.
    pub fn rpc(path: &str, body: String, read: Read) -> Self {
        Template {
            method: Method::POST,
            path: path.into(),
            headers: vec![
                (header::CONTENT_TYPE, HeaderValue::from_static("application/json")),
                (HeaderName::from_static("a2a-version"), HeaderValue::from_static("1.0")),
            ],
            body: Bytes::from(body),
            read,
        }
    }

    fn request(&self, host: &HeaderValue) -> Request<Body> {
        let mut b = Request::builder().method(self.method.clone()).uri(self.path.as_str());
        if let Some(h) = b.headers_mut() {
            h.insert(header::HOST, host.clone());
            for (k, v) in &self.headers {
                h.insert(k.clone(), v.clone());
            }
        }
        b.body(Body::from(self.body.clone())).expect("a request built from parts that parsed")
    }
}

/// How much load, for how long.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub conns: usize,
    /// Requests answered in the measured phase, at most.
    pub max_requests: u64,
    /// Length of the measured phase, at most.
    pub max_time: Duration,
    /// Time spent sending before measuring, so that connections, caches and the allocator settle.
    pub warmup: Duration,
    /// Requests sent before measuring, at most.
    pub warmup_requests: u64,
}

/// What one measured phase saw.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// Requests answered successfully.
    pub ok: u64,
    /// Requests that failed (transport error, non-2xx, JSON-RPC error, stream error).
    pub errors: u64,
    /// SSE events received (streams only).
    pub events: u64,
    /// From the start of the measured phase to the last answer.
    pub elapsed: Duration,
    /// Per successful request: time to the whole answer (a stream's last event), in µs.
    pub latency_us: Vec<u32>,
    /// Per successful stream: time to its first event, in µs.
    pub first_event_us: Vec<u32>,
    /// What went wrong first, for the report.
    pub first_error: Option<String>,
}

impl Sample {
    pub fn per_second(&self, n: u64) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 { n as f64 / s } else { 0.0 }
    }

    fn absorb(&mut self, other: Sample) {
        self.ok += other.ok;
        self.errors += other.errors;
        self.events += other.events;
        self.latency_us.extend(other.latency_us);
        self.first_event_us.extend(other.first_event_us);
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }
}

/// The `q`-quantile (0..=1) of `values` by nearest rank, in the values' unit; `None` when empty.
pub fn quantile(values: &[u32], q: f64) -> Option<u32> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let rank = ((q.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

/// Requests left in a phase and when it ends; the clock starts with the first request taken.
struct Budget {
    left: AtomicU64,
    max_time: Duration,
    started: OnceLock<Instant>,
}

impl Budget {
    fn new(max_requests: u64, max_time: Duration) -> Self {
        Budget { left: AtomicU64::new(max_requests), max_time, started: OnceLock::new() }
    }

    fn take(&self) -> bool {
        let started = *self.started.get_or_init(Instant::now);
        started.elapsed() < self.max_time
            && self.left.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok()
    }
}

/// Runs `template` over `shape.conns` connections to `addr`: a warm-up, then the measured phase.
pub async fn run(addr: SocketAddr, template: &Template, shape: Shape) -> Sample {
    let template = Arc::new(template.clone());
    let conns = shape.conns.max(1);
    let phases =
        Arc::new([Budget::new(shape.warmup_requests, shape.warmup), Budget::new(shape.max_requests, shape.max_time)]);
    let barrier = Arc::new(Barrier::new(conns));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..conns {
        let (template, phases, barrier) = (template.clone(), phases.clone(), barrier.clone());
        tasks.spawn(async move { connection(addr, &template, &phases, &barrier).await });
    }
    let mut total = Sample::default();
    let mut last_answer: Option<Instant> = None;
    // Every connection task ends within its phases' limits plus one stalled request at most.
    let bound = shape.warmup + shape.max_time + 3 * STALL;
    let joined = tokio::time::timeout(bound, async {
        while let Some(r) = tasks.join_next().await {
            if let Ok((sample, done)) = r {
                total.absorb(sample);
                last_answer = last_answer.max(done);
            }
        }
    })
    .await;
    if joined.is_err() {
        tasks.abort_all();
        total.errors += 1;
        total.first_error.get_or_insert_with(|| format!("the load did not finish within {} s", bound.as_secs()));
    }
    if let (Some(start), Some(end)) = (phases[1].started.get(), last_answer) {
        total.elapsed = end.saturating_duration_since(*start);
    }
    total
}

/// One exchange on a new connection: how long it took, and the whole body.
pub async fn once(addr: SocketAddr, template: &Template) -> Result<(Duration, Bytes), String> {
    let host = HeaderValue::from_str(&addr.to_string()).expect("a socket address is a valid Host");
    let started = Instant::now();
    let exchange = async {
        let mut s = connect(addr).await?;
        s.ready().await.map_err(|e| format!("connection closed: {e}"))?;
        let resp = s.send_request(template.request(&host)).await.map_err(|e| format!("request failed: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("HTTP {}", resp.status()));
        }
        axum::body::to_bytes(Body::new(resp.into_body()), MAX_BODY).await.map_err(|e| format!("reading the body: {e}"))
    };
    let body = tokio::time::timeout(STALL, exchange).await.map_err(|_| format!("no answer within {STALL:?}"))??;
    Ok((started.elapsed(), body))
}

async fn connect(addr: SocketAddr) -> Result<SendRequest<Body>, String> {
    let open = async {
        let tcp = TcpStream::connect(addr).await.map_err(|e| format!("connect {addr}: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| format!("TCP_NODELAY: {e}"))?;
        let (sender, conn) =
            http1::handshake::<_, Body>(TokioIo::new(tcp)).await.map_err(|e| format!("HTTP/1.1 handshake: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    };
    tokio::time::timeout(STALL, open).await.map_err(|_| format!("connect {addr}: no answer within {STALL:?}"))?
}

/// One connection through every phase; returns the measured phase's sample and when its last
/// answer came. A connection that fails still meets its peers at each phase's start.
async fn connection(
    addr: SocketAddr,
    template: &Template,
    phases: &[Budget; 2],
    barrier: &Barrier,
) -> (Sample, Option<Instant>) {
    let host = HeaderValue::from_str(&addr.to_string()).expect("a socket address is a valid Host");
    let mut sample = Sample::default();
    let mut sender = match connect(addr).await {
        Ok(s) => Some(s),
        Err(e) => {
            sample.errors += 1;
            sample.first_error = Some(e);
            None
        }
    };
    let mut last = None;
    for (i, budget) in phases.iter().enumerate() {
        barrier.wait().await;
        let measured = i == 1;
        while let Some(s) = sender.as_mut() {
            if !budget.take() {
                break;
            }
            let started = Instant::now();
            let outcome = exchange(s, template, &host, started).await;
            let done = Instant::now();
            if !measured {
                if outcome.is_err() {
                    sender = None;
                }
                continue;
            }
            last = Some(done);
            match outcome {
                Ok(x) => {
                    sample.ok += 1;
                    sample.events += x.events;
                    sample.latency_us.push(micros(done - started));
                    if let Some(first) = x.first_event {
                        sample.first_event_us.push(micros(first));
                    }
                }
                Err(e) => {
                    sample.errors += 1;
                    sample.first_error.get_or_insert(e);
                    // The connection's state is unknown after a failure: it takes no more part.
                    sender = None;
                }
            }
        }
    }
    (sample, last)
}

fn micros(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

/// What one exchange produced.
struct Answered {
    events: u64,
    /// Time from sending to the first SSE event.
    first_event: Option<Duration>,
}

async fn exchange(
    s: &mut SendRequest<Body>,
    template: &Template,
    host: &HeaderValue,
    started: Instant,
) -> Result<Answered, String> {
    s.ready().await.map_err(|e| format!("connection closed: {e}"))?;
    let resp = s.send_request(template.request(host)).await.map_err(|e| format!("request failed: {e}"))?;
    let status = resp.status();
    if !status.is_success() {
        return Err(format!("HTTP {status}"));
    }
    let body = Body::new(resp.into_body());
    match template.read {
        Read::Whole => {
            let bytes = axum::body::to_bytes(body, MAX_BODY).await.map_err(|e| format!("reading the body: {e}"))?;
            if is_rpc_error(&bytes) {
                return Err(format!("JSON-RPC error: {}", head(&bytes)));
            }
            Ok(Answered { events: 0, first_event: None })
        }
        Read::Events => read_events(body, started).await,
    }
}

/// True when a JSON-RPC answer carries `error`; the envelope's members come first, so the head of
/// the body is enough and the bench does not parse every result.
fn is_rpc_error(body: &[u8]) -> bool {
    let head = &body[..body.len().min(64)];
    head.windows(8).any(|w| w == b"\"error\":")
}

/// The start of a body, for a message.
fn head(body: &[u8]) -> String {
    String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned()
}

async fn read_events(body: Body, started: Instant) -> Result<Answered, String> {
    let mut parser = SseParser::new(SseLimits { max_events: 100_000, ..SseLimits::default() });
    let mut stream = body.into_data_stream();
    let mut events = 0u64;
    let mut first_event = None;
    let mut failed = None;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("reading the stream: {e}"))?;
        let flow = parser
            .feed_each(&chunk, |ev| {
                events += 1;
                first_event.get_or_insert_with(|| started.elapsed());
                if is_rpc_error(ev.data.as_bytes()) {
                    failed = Some(format!("error event: {}", head(ev.data.as_bytes())));
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            })
            .map_err(|e| format!("event stream: {e}"))?;
        if flow.is_break() {
            return Err(failed.unwrap_or_default());
        }
    }
    if events == 0 {
        return Err("the stream ended without an event".into());
    }
    Ok(Answered { events, first_event })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<u32> = (1..=100).rev().collect();
        assert_eq!(quantile(&v, 0.5), Some(50));
        assert_eq!(quantile(&v, 0.99), Some(99));
        assert_eq!(quantile(&v, 1.0), Some(100));
        assert_eq!(quantile(&v, 0.0), Some(1));
        assert_eq!(quantile(&[7], 0.99), Some(7));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn an_rpc_error_is_told_from_a_result_that_mentions_one() {
        assert!(is_rpc_error(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001}}"#));
        let long_result = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{}\"error\":"}}}}"#, "x".repeat(64));
        assert!(!is_rpc_error(long_result.as_bytes()));
    }

    #[test]
    fn a_budget_stops_at_its_count_or_its_time() {
        let b = Budget::new(2, Duration::from_secs(60));
        assert!(b.take() && b.take());
        assert!(!b.take());
        let t = Budget::new(u64::MAX, Duration::ZERO);
        assert!(!t.take());
    }

    #[tokio::test]
    async fn loads_a_local_server_within_its_bounds() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/", axum::routing::get(|| async { r#"{"ok":true}"# }));
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let shape = Shape {
            conns: 3,
            max_requests: 50,
            max_time: Duration::from_secs(30),
            warmup: Duration::from_secs(30),
            warmup_requests: 7,
        };
        let s = run(addr, &Template::get("/"), shape).await;
        server.abort();
        assert_eq!((s.ok, s.errors), (50, 0), "{:?}", s.first_error);
        assert_eq!(s.latency_us.len(), 50);
        assert!(s.elapsed > Duration::ZERO);
    }
}

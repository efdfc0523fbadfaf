//! A run against a hostile or broken server always ends, bounded in time and memory, with a report,
//! and never sends a request where the user did not point the kit. Each server here is one way an
//! agent goes wrong on the wire; every run uses `--timeout 10` and must end within 30 s.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use a2a_conform::commands::bench::procs;
use a2a_conform::commands::check::{self, CheckError, CheckOptions};
use a2a_conform::report::{Collector, Outcome, Report, Sink, SkipReason};
use axum::Router;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use futures::stream;

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");

/// One test of this file at a time: each runs many checks at once, and the bound is on how long a
/// run takes, which two cores shared three ways would decide.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The bound the issue sets for a hostile run with `--timeout 10`.
const BOUND: Duration = Duration::from_secs(30);

async fn serve(router: Router) -> (String, SocketAddr) {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (format!("http://{addr}"), addr)
}

/// A card whose JSON-RPC interface is `rpc_url`.
fn card(rpc_url: &str) -> String {
    serde_json::json!({
        "name": "hostile", "description": "a hostile agent", "version": "1.0.0",
        "supportedInterfaces": [{"url": rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true, "pushNotifications": false},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}]
    })
    .to_string()
}

/// A server that serves `card(rpc)` at the well-known path and answers `/rpc` with `rpc`.
async fn agent(rpc: axum::routing::MethodRouter, interface: impl Fn(&str) -> String) -> String {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card_body = card(&interface(&base));
    let router = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || {
                let b = card_body.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], b) }
            }),
        )
        .route("/rpc", rpc);
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    base
}

/// Counts every connection made to it: the host the kit must never talk to.
async fn bystander() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    tokio::spawn(async move {
        while let Ok((_sock, _)) = listener.accept().await {
            h.fetch_add(1, Ordering::SeqCst);
        }
    });
    (addr, hits)
}

struct Run {
    elapsed: Duration,
    report: Option<Report>,
    error: Option<CheckError>,
}

async fn check_with_timeout_10(url: &str) -> Run {
    let opts =
        CheckOptions { timeout: Duration::from_secs(10), patience: Duration::from_secs(10), ..CheckOptions::new(url) };
    let started = Instant::now();
    // The collector stands for the report files: every sink sees the same events.
    let mut collector = Collector::new();
    let result = tokio::time::timeout(BOUND + Duration::from_secs(30), async {
        let mut sink: Vec<&mut (dyn Sink + Send)> = vec![&mut collector];
        check::run(&opts, &mut sink).await
    })
    .await
    .expect("the run ended at all");
    Run { elapsed: started.elapsed(), report: collector.into_report(), error: result.err() }
}

fn assert_bounded(what: &str, run: &Run) {
    println!("{what}: {:.1} s", run.elapsed.as_secs_f64());
    assert!(run.elapsed <= BOUND, "{what}: the run took {:?}", run.elapsed);
    assert!(run.report.is_some(), "{what}: no report was produced");
}

fn outcome_of(report: &Report, id: &str) -> Outcome {
    report.checks().find(|c| c.id == id).map(|c| c.outcome).unwrap_or_else(|| panic!("{id} not reported"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_hostile_server_ends_in_30_s_with_a_report_and_no_request_elsewhere() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (elsewhere, hits) = bystander().await;

    // 1. The card is fine; the interface accepts connections and never answers.
    let silent = agent(any(std::future::pending::<&'static str>), |b| format!("{b}/rpc")).await;
    // 2. The interface answers 200 with a chunked body that never ends.
    let endless_body = agent(
        any(|| async {
            let s = stream::unfold((), |()| async {
                tokio::time::sleep(Duration::from_millis(200)).await;
                Some((Ok::<_, std::io::Error>(bytes::Bytes::from_static(b" ")), ()))
            });
            ([(header::CONTENT_TYPE, "application/json")], Body::from_stream(s))
        }),
        |b| format!("{b}/rpc"),
    )
    .await;
    // 3. The interface answers everything with an event stream that never ends.
    let endless_sse = agent(
        any(|| async {
            let s = stream::unfold(0u64, |n| async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let ev = format!("id: {n}\ndata: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}\n\n");
                Some((Ok::<_, std::io::Error>(bytes::Bytes::from(ev)), n + 1))
            });
            ([(header::CONTENT_TYPE, "text/event-stream")], Body::from_stream(s))
        }),
        |b| format!("{b}/rpc"),
    )
    .await;
    // 4. The card's interface names another host (the bystander, reached as "localhost").
    let other_host = agent(any(|| async { "{}" }), move |_| format!("http://localhost:{}/rpc", elsewhere.port())).await;
    // 5. The card advertises https on a port that speaks plain HTTP.
    let plain_tls = agent(any(|| async { "{}" }), |b| format!("{}/rpc", b.replace("http://", "https://"))).await;
    // 6. The card URL redirects to another host.
    let redirect_target = format!("http://localhost:{}/.well-known/agent-card.json", elsewhere.port());
    let (redirect, _) = serve(Router::new().route(
        "/.well-known/agent-card.json",
        get(move || {
            let to = redirect_target.clone();
            async move {
                Response::builder().status(StatusCode::FOUND).header(header::LOCATION, to).body(Body::empty()).unwrap()
            }
        }),
    ))
    .await;
    // 8. The interface answers a few requests, then goes silent for good.
    let answered = Arc::new(AtomicUsize::new(0));
    let goes_silent = agent(
        any(move || {
            let n = answered.fetch_add(1, Ordering::SeqCst);
            async move {
                if n >= 3 {
                    std::future::pending::<()>().await;
                }
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"no"}}"#,
                )
            }
        }),
        |b| format!("{b}/rpc"),
    )
    .await;
    // 7. The interface answers with a 1 GiB body.
    let huge = agent(
        any(|| async {
            let chunk = bytes::Bytes::from(vec![b'x'; 1 << 20]);
            let s = stream::iter((0..1024).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
            ([(header::CONTENT_TYPE, "application/json")], Body::from_stream(s)).into_response()
        }),
        |b| format!("{b}/rpc"),
    )
    .await;

    let (r1, r2, r3, r4, r5, r6, r7, r8) = tokio::join!(
        check_with_timeout_10(&silent),
        check_with_timeout_10(&endless_body),
        check_with_timeout_10(&endless_sse),
        check_with_timeout_10(&other_host),
        check_with_timeout_10(&plain_tls),
        check_with_timeout_10(&redirect),
        check_with_timeout_10(&huge),
        check_with_timeout_10(&goes_silent),
    );

    // An interface that never completes an answer is found out by the first call: one finding,
    // and every check that needs it is left undecided on that account.
    for (what, run) in [("silent interface", &r1), ("endless body", &r2)] {
        assert_bounded(what, run);
        let report = run.report.as_ref().unwrap();
        assert_eq!(report.verdict.exit_code, 3, "{what}: {:?}", report.verdict);
        assert_eq!(outcome_of(report, "KIT-IFACE-001"), Outcome::Error, "{what}");
        let blocked = report.checks().filter(|c| c.depends_on.as_deref() == Some("KIT-IFACE-001")).count();
        assert!(blocked > 50, "{what}: {blocked} checks wait on the one finding");
    }
    // An event stream answering every call is an answer, its first event read: not JSON-RPC.
    assert_bounded("endless SSE", &r3);
    let report = r3.report.as_ref().unwrap();
    let not_json = report
        .checks()
        .filter(|c| c.outcome == Outcome::Fail)
        .filter(|c| c.failure.as_ref().is_some_and(|f| f.message.contains("text/event-stream")))
        .count();
    assert!(not_json > 0, "the event streams where JSON was due are named");

    // One that stops answering mid-run trips the circuit breaker: the rest end at once.
    assert_bounded("goes silent", &r8);
    let report = r8.report.as_ref().unwrap();
    // Its first answers were wrong (every call got -32001), so a check may have failed on them.
    assert!(matches!(report.verdict.exit_code, 1 | 3), "{:?}", report.verdict);
    let unresponsive = report
        .checks()
        .filter(|c| c.failure.as_ref().is_some_and(|f| f.message.starts_with("agent unresponsive")))
        .count();
    // The rest wait on a check that found the silence, or were ended by the breaker.
    let waiting = report.checks().filter(|c| c.skip_reason == Some(SkipReason::DependsOnFailed)).count();
    assert!(unresponsive >= 20, "the breaker ended the rest at once ({unresponsive} checks)");
    assert!(unresponsive + waiting > 100, "{unresponsive} ended by the breaker, {waiting} waiting");

    assert_bounded("interface on another host", &r4);
    let report = r4.report.as_ref().unwrap();
    assert_eq!(outcome_of(report, "KIT-IFACE-001"), Outcome::Error);
    let why = &report.checks().find(|c| c.id == "KIT-IFACE-001").unwrap().failure.as_ref().unwrap().message;
    assert!(why.contains("--allow-host localhost"), "{why}");
    assert_eq!(report.verdict.exit_code, 3);
    let errors = report.checks().filter(|c| c.outcome == Outcome::Error).count();
    assert_eq!(errors, 1, "one finding, not one error per check");

    assert_bounded("https on a plain port", &r5);
    let report = r5.report.as_ref().unwrap();
    let why = &report.checks().find(|c| c.id == "KIT-IFACE-001").unwrap().failure.as_ref().unwrap().message;
    assert!(why.contains("--rpc-url"), "{why}");
    assert_eq!(report.verdict.exit_code, 3);

    assert_bounded("redirect to another host", &r6);
    assert_eq!(r6.report.as_ref().unwrap().verdict.exit_code, 3);
    assert!(matches!(r6.error, Some(CheckError::Unreachable(_))), "{:?}", r6.error.as_ref().map(|e| e.to_string()));

    assert_bounded("1 GiB body", &r7);
    let report = r7.report.as_ref().unwrap();
    let cut =
        report.checks().filter(|c| c.failure.as_ref().is_some_and(|f| f.message.contains("max_body_bytes"))).count();
    assert!(cut > 0, "a body cut at the kit's cap is named as such");
    assert_eq!(report.checks().filter(|c| c.outcome == Outcome::Fail && c.id == "JSONRPC-ENV-001").count(), 0);

    assert_eq!(hits.load(Ordering::SeqCst), 0, "a request reached a host the kit was not pointed at");

    // Bounded memory: the 1 GiB answers and endless streams were read under the kit's caps.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(kb) = status.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)) {
        let peak_mib = kb.parse::<u64>().unwrap_or(0) / 1024;
        assert!(peak_mib < 1024, "peak RSS {peak_mib} MiB");
    }
}

const TASK: &str = r#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a-1","parts":[{"text":"done"}]}]}"#;

/// Each stream costs a check its whole patience; after three in a row the agent's streams are
/// taken for what they are, and the remaining streaming checks end at once, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn streams_that_never_end_trickle_or_only_keep_alive_end_the_run_in_30_s() {
    let _one = ONE_AT_A_TIME.lock().await;
    let working =
        serde_json::json!({"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}});
    let update = serde_json::json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}});
    let task: serde_json::Value = serde_json::from_str(TASK).unwrap();
    let kinds = [
        (
            "a valid-looking event every 5 ms, forever",
            raw_stream_agent(move |id| {
                let every = Piece::Every(sse_event(id, update.clone()).into_bytes(), Duration::from_millis(5));
                vec![sse_head(), bytes(sse_event(id, working.clone())), every]
            })
            .await,
            "streams never close: 3 streams in a row were still sending events at the kit's",
        ),
        (
            "a valid short stream, one byte per second",
            raw_stream_agent(move |id| {
                vec![
                    sse_head(),
                    Piece::Trickle(
                        sse_event(id, serde_json::json!({"task": task})).into_bytes(),
                        Duration::from_secs(1),
                    ),
                ]
            })
            .await,
            "streams send no event: 3 streams in a row sent bytes that never made up an event",
        ),
        (
            "keep-alive comments and never an event",
            raw_stream_agent(|_| {
                vec![sse_head(), Piece::Every(b": keep-alive\n\n".to_vec(), Duration::from_millis(100))]
            })
            .await,
            "streams send no event: 3 streams in a row sent only SSE comments",
        ),
    ];
    let (r1, r2, r3) = tokio::join!(
        check_with_timeout_10(&kinds[0].1),
        check_with_timeout_10(&kinds[1].1),
        check_with_timeout_10(&kinds[2].1)
    );
    for ((what, _, named), run) in kinds.iter().zip([r1, r2, r3]) {
        assert_bounded(what, &run);
        let report = run.report.as_ref().unwrap();
        // The streaming checks still running end at once naming it, or wait on one that did (which
        // of the two depends on which ended first): either way, one finding.
        let names = |c: &&a2a_conform::report::CheckResult| {
            c.failure.as_ref().is_some_and(|f| f.message.contains(named))
                || c.skip_detail.as_deref().is_some_and(|d| d.contains(named))
        };
        let named_by = report.checks().filter(names).count();
        println!("{what}: {named_by} checks name it");
        // How many is down to timing: the streams read before the third strike end on their own.
        assert!(named_by >= 1, "{what}: the streams are named as what went wrong");
        // Its title or its line of evidence.
        let cause = report
            .causes
            .iter()
            .find(|c| c.headline.contains(named) || c.evidence.as_deref().is_some_and(|e| e.contains(named)));
        assert!(
            cause.is_some(),
            "{what}: a root cause names it: {:?}",
            report.causes.iter().map(|c| (&c.headline, &c.evidence)).collect::<Vec<_>>()
        );
    }
}

/// A broken SSE writer that never writes the blank line ending an event, on streams that stay
/// open: the stream breaker trips on them, and bounds time only. The framing check fails on the
/// data lines in hand, whichever of its stream or the ones that tripped the breaker shows them;
/// the streaming checks whose answers are plain JSON are sent and graded as ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn events_never_dispatched_fail_the_framing_check_and_the_breaker_takes_no_verdict() {
    let _one = ONE_AT_A_TIME.lock().await;
    let task =
        serde_json::json!({"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}});
    let update = serde_json::json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}});
    let line = |id: &serde_json::Value, r: &serde_json::Value| {
        format!("data: {}\n", serde_json::json!({"jsonrpc": "2.0", "id": id, "result": r})).into_bytes()
    };
    let url = raw_stream_agent(move |id| {
        vec![sse_head(), Piece::Bytes(line(id, &task)), Piece::Every(line(id, &update), Duration::from_millis(200))]
    })
    .await;
    let run = check_with_timeout_10(&url).await;
    assert_bounded("events never dispatched", &run);
    let report = run.report.as_ref().unwrap();
    let framing = report.checks().find(|c| c.id == "JSONRPC-SSE-001").expect("JSONRPC-SSE-001 ran");
    assert_eq!(framing.outcome, Outcome::Fail, "{:?}", framing.failure);
    let message = &framing.failure.as_ref().unwrap().message;
    assert!(message.contains("no blank line"), "{message}");
    // The stream checks that build on it wait on it. Only those due an error stay undecided: an
    // error could have been in a stream no reader can split into events.
    let due_an_error = ["KIT-STREAM-007", "KIT-STREAM-008", "KIT-STREAM-009", "STREAM-SUB-003"];
    let errors: Vec<_> = report
        .checks()
        .filter(|c| c.outcome == Outcome::Error && c.id.contains("STREAM") && !due_an_error.contains(&c.id.as_str()))
        .map(|c| (c.id.clone(), c.failure.as_ref().map(|f| f.message.clone())))
        .collect();
    assert!(errors.is_empty(), "stream checks ended in error: {errors:?}");
}

/// One step of a hand-written HTTP answer.
#[derive(Clone)]
enum Piece {
    Bytes(Vec<u8>),
    /// The same bytes `n` times, as fast as the socket takes them.
    Repeat(Vec<u8>, usize),
    /// Each byte alone, `gap` apart.
    Trickle(Vec<u8>, Duration),
    /// The same bytes every `gap`, until the kit hangs up.
    Every(Vec<u8>, Duration),
    /// Say nothing more, and keep the connection open.
    Hold,
    /// Abort the connection (a TCP reset).
    Reset,
}

fn bytes(s: impl AsRef<[u8]>) -> Piece {
    Piece::Bytes(s.as_ref().to_vec())
}

/// A complete HTTP/1.1 answer that closes its connection.
fn answer(status: &str, content_type: &str, body: impl AsRef<[u8]>) -> Vec<Piece> {
    let body = body.as_ref();
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    vec![bytes(head), bytes(body)]
}

fn sse_head() -> Piece {
    bytes("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
}

/// A JSON-RPC answer to the request `id` with a plain agent's result: a completed task for
/// SendMessage and GetTask, TaskNotFound otherwise.
fn plain_answer(method: &str, id: &serde_json::Value) -> Vec<Piece> {
    let task: serde_json::Value = serde_json::from_str(TASK).unwrap();
    let body = match method {
        "SendMessage" => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}}),
        "GetTask" => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": task}),
        _ => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "task not found"}}),
    };
    answer("200 OK", "application/json", body.to_string())
}

fn is_stream_method(method: &str) -> bool {
    matches!(method, "SendStreamingMessage" | "SubscribeToTask")
}

type Script = Arc<dyn Fn(&str, &serde_json::Value) -> Vec<Piece> + Send + Sync>;

/// An agent that speaks HTTP by hand: the card at the well-known path, and whatever `script` says
/// for each JSON-RPC call (given its method and id), byte by byte if need be.
async fn raw_agent(script: impl Fn(&str, &serde_json::Value) -> Vec<Piece> + Send + Sync + 'static) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let script: Script = Arc::new(script);
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card_body = card(&format!("{base}/rpc"));
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let script = script.clone();
            let card_body = card_body.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let head_end = loop {
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                    if buf.len() > 64 * 1024 {
                        return;
                    }
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0)
                    .min(1 << 20);
                while buf.len() < head_end + length {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let pieces = if head.starts_with("get /.well-known/agent-card.json") {
                    answer("200 OK", "application/json", &card_body)
                } else {
                    let req: serde_json::Value = serde_json::from_slice(&buf[head_end..]).unwrap_or_default();
                    let method = req.get("method").and_then(|m| m.as_str()).unwrap_or("");
                    script(method, req.get("id").unwrap_or(&serde_json::Value::Null))
                };
                for piece in pieces {
                    let sent = match piece {
                        Piece::Bytes(b) => sock.write_all(&b).await,
                        Piece::Repeat(b, n) => {
                            let mut r = Ok(());
                            for _ in 0..n {
                                r = sock.write_all(&b).await;
                                if r.is_err() {
                                    break;
                                }
                            }
                            r
                        }
                        Piece::Trickle(b, gap) => {
                            let mut r = Ok(());
                            for byte in b {
                                tokio::time::sleep(gap).await;
                                r = sock.write_all(&[byte]).await;
                                if r.is_err() {
                                    break;
                                }
                            }
                            r
                        }
                        Piece::Every(b, gap) => loop {
                            tokio::time::sleep(gap).await;
                            if let Err(e) = sock.write_all(&b).await {
                                break Err(e);
                            }
                        },
                        Piece::Hold => {
                            // Until the kit hangs up.
                            let _ = sock.read(&mut chunk).await;
                            return;
                        }
                        Piece::Reset => {
                            // A zero linger does not block on drop: it sends the reset at once.
                            #[allow(deprecated)]
                            let _ = sock.set_linger(Some(Duration::ZERO));
                            return;
                        }
                    };
                    if sent.is_err() {
                        return;
                    }
                }
                let _ = sock.shutdown().await;
            });
        }
    });
    base
}

/// An agent answering like `plain_answer` except on streaming calls, which get `stream`.
async fn raw_stream_agent(stream: impl Fn(&serde_json::Value) -> Vec<Piece> + Send + Sync + 'static) -> String {
    raw_agent(move |method, id| if is_stream_method(method) { stream(id) } else { plain_answer(method, id) }).await
}

fn sse_event(id: &serde_json::Value, result: serde_json::Value) -> String {
    format!("data: {}\n\n", serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn deep_json(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// The rest of the corpus: each broken agent ends in 30 s with a report whose findings say what was
/// wrong, and all of them together keep the kit's memory bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_broken_answer_is_named_within_30_s_and_memory_stays_bounded() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut corpus: Vec<(&str, String, &str)> = Vec::new();
    // Headers a byte every second: no answer within the timeout.
    corpus.push((
        "slow headers",
        raw_agent(|_, _| {
            vec![
                bytes("HTTP/1.1 200 OK\r\n"),
                Piece::Trickle(b"Content-Type: application/json\r\n\r\n".to_vec(), Duration::from_secs(1)),
            ]
        })
        .await,
        "no answer within",
    ));
    corpus.push((
        "headers that never end",
        raw_agent(|_, _| {
            vec![bytes("HTTP/1.1 200 OK\r\n"), Piece::Repeat(b"X-Padding: aaaaaaaaaaaaaaaa\r\n".to_vec(), 1_000_000)]
        })
        .await,
        "cannot be reached",
    ));
    corpus.push((
        "an answer that stops half way and stays silent",
        raw_agent(|_, _| {
            vec![
                bytes("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"jsonrpc\":\"2.0\","),
                Piece::Hold,
            ]
        })
        .await,
        "no answer within",
    ));
    corpus.push((
        "an HTTP/0.9-style answer (a body with no status line)",
        raw_agent(|_, id| vec![bytes(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string())]).await,
        "cannot be reached",
    ));
    corpus.push(("a connection closed at once", raw_agent(|_, _| Vec::new()).await, "cannot be reached"));
    corpus.push((
        "a reset in the middle of an event",
        raw_stream_agent(|id| {
            let event = sse_event(id, serde_json::json!({"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}));
            vec![sse_head(), bytes(&event[..event.len() / 2]), Piece::Reset]
        })
        .await,
        "transport error",
    ));
    corpus.push((
        "one SSE data: line that never ends",
        raw_stream_agent(|_| vec![sse_head(), bytes("data: "), Piece::Repeat(vec![b'a'; 64 * 1024], 1 << 14)]).await,
        "max_event_bytes",
    ));
    corpus.push((
        "more events than the kit reads, as fast as it reads",
        raw_stream_agent(|id| {
            let event = sse_event(id, serde_json::json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}));
            vec![sse_head(), Piece::Repeat(event.into_bytes(), 1_000_000)]
        })
        .await,
        "max_events",
    ));
    corpus.push((
        "invalid UTF-8 in a JSON answer",
        raw_agent(|_, id| {
            let mut body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"id":""#).into_bytes();
            body.extend_from_slice(b"\xff\xfe\xfd\"}}");
            answer("200 OK", "application/json", body)
        })
        .await,
        "not JSON",
    ));
    corpus.push((
        "100 000-deep JSON",
        raw_agent(|_, _| answer("200 OK", "application/json", deep_json(100_000))).await,
        "recursion limit",
    ));
    corpus.push((
        "duplicate keys (the last says JSON-RPC 1.0)",
        raw_agent(|method, id| {
            let [_, Piece::Bytes(good)] = &plain_answer(method, id)[..] else { unreachable!() };
            let body = String::from_utf8_lossy(good).replacen(
                "{\"jsonrpc\":\"2.0\",",
                "{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"1.0\",",
                1,
            );
            answer("200 OK", "application/json", body)
        })
        .await,
        "jsonrpc",
    ));
    corpus.push((
        "numbers beyond i64 and f64",
        raw_agent(|_, id| {
            answer(
                "200 OK",
                "application/json",
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":123456789012345678901234567890,"message":"x","data":1e400}}}}"#),
            )
        })
        .await,
        "not JSON",
    ));
    corpus.push((
        "JSON-RPC answers labelled text/html",
        raw_agent(|method, id| {
            let [_, Piece::Bytes(good)] = &plain_answer(method, id)[..] else { unreachable!() };
            answer("200 OK", "text/html", good)
        })
        .await,
        "text/html",
    ));
    corpus.push((
        "a JSON array where an object belongs",
        raw_agent(|_, id| {
            answer(
                "200 OK",
                "application/json",
                serde_json::json!([{"jsonrpc": "2.0", "id": id, "result": {}}]).to_string(),
            )
        })
        .await,
        "array",
    ));
    corpus.push((
        "binary garbage labelled JSON",
        raw_agent(|_, _| {
            answer(
                "200 OK",
                "application/json",
                (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect::<Vec<u8>>(),
            )
        })
        .await,
        "not JSON",
    ));
    corpus.push((
        "a gzip bomb (Content-Encoding the kit never asked for)",
        raw_agent(|_, _| {
            // The head of a gzip member and a long run of deflate data: what a bomb looks like on
            // the wire. The kit asks for no encoding and must read it as the bytes they are.
            let mut head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n".to_vec();
            head.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
            vec![Piece::Bytes(head), Piece::Repeat([0xed, 0xc1, 0x01, 0x0d, 0x00, 0x00, 0x00, 0xc2].repeat(8192), 128)]
        })
        .await,
        "max_body_bytes",
    ));
    corpus.push((
        "HTTP 500 with an HTML page for every call",
        raw_agent(|_, _| {
            answer("500 Internal Server Error", "text/html", "<!DOCTYPE html><html><body>Oops</body></html>")
        })
        .await,
        "HTML",
    ));
    corpus.push((
        "a redirect loop on the interface",
        raw_agent(|_, _| {
            vec![bytes(
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: /rpc\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            )]
        })
        .await,
        "redirect",
    ));
    corpus.push((
        "stream events that are not JSON",
        raw_stream_agent(|_| vec![sse_head(), bytes("data: <html>not json</html>\n\n"), Piece::Hold]).await,
        "is not JSON",
    ));
    // The card itself: endless, and a chain of redirects to itself.
    let (endless_card, _) = serve(Router::new().route(
        "/.well-known/agent-card.json",
        get(|| async {
            let chunk = bytes::Bytes::from(vec![b' '; 1 << 16]);
            let s = stream::iter(std::iter::repeat_n(chunk, 1 << 14).map(Ok::<_, std::io::Error>));
            ([(header::CONTENT_TYPE, "application/json")], Body::from_stream(s))
        }),
    ))
    .await;
    corpus.push(("a card that never ends", endless_card, "max_body_bytes"));
    let (card_redirects, _) = serve(Router::new().route(
        "/.well-known/agent-card.json",
        get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/.well-known/agent-card.json?again")]) }),
    ))
    .await;
    corpus.push(("a redirect chain on the card", card_redirects, "redirect"));

    assert!(corpus.len() >= 19, "with the eight and the three stream kinds, at least 30 behaviours");
    // Each run is the real binary in a process of its own, so that its peak memory is the kit's
    // alone (these servers live in this process); all at once, so the corpus takes one bound.
    let started = Instant::now();
    let runs = futures::future::join_all(corpus.iter().map(|(_, url, _)| async move {
        let out = std::env::temp_dir().join(format!("a2a-conform-hostile-{}", uuid::Uuid::new_v4().simple()));
        let args = [url.as_str(), "--timeout", "10", "--out", out.to_str().unwrap(), "--quiet"];
        let run = procs::run_check(Path::new(BIN), &args, BOUND + Duration::from_secs(30)).await;
        let report = std::fs::read_to_string(out.join("report.json")).ok();
        let _ = std::fs::remove_dir_all(&out);
        (run, report)
    }))
    .await;
    println!("corpus of {}: {:.1} s", corpus.len(), started.elapsed().as_secs_f64());
    let mut problems = Vec::new();
    for ((what, _, named), (run, report)) in corpus.iter().zip(&runs) {
        let run = match run {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{what}: {e}"));
                continue;
            }
        };
        let peak = run.peak_rss.unwrap_or(0) / (1024 * 1024);
        println!("{what}: {:.1} s, exit {:?}, peak RSS {peak} MiB", run.wall.as_secs_f64(), run.exit);
        if run.wall > BOUND {
            problems.push(format!("{what}: the run took {:?}", run.wall));
        }
        // 2 says the URL serves no usable card; 101 would be a panic, none a signal.
        if !matches!(run.exit, Some(0..=3)) {
            problems.push(format!("{what}: exit {:?}", run.exit));
        }
        if peak >= 128 {
            problems.push(format!("{what}: peak RSS {peak} MiB"));
        }
        let Some(report) = report else {
            problems.push(format!("{what}: no report.json"));
            continue;
        };
        // A card the kit cannot use leaves no checks to run; the report's run notes say why.
        if !report.contains(named) {
            problems.push(format!("{what}: the report does not say {named:?}: {}", &report[..report.len().min(1500)]));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

//! A run against a hostile or broken server always ends, bounded in time and memory, with a report,
//! and never sends a request where the user did not point the kit. Each server here is one way an
//! agent goes wrong on the wire; every run uses `--timeout 10` and must end within 30 s.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use a2a_conform::commands::check::{self, CheckError, CheckOptions};
use a2a_conform::report::{Collector, Outcome, Report, Sink, SkipReason};
use axum::Router;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use futures::stream;

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
    for (what, run) in [("silent interface", &r1), ("endless body", &r2), ("endless SSE", &r3)] {
        assert_bounded(what, run);
        let report = run.report.as_ref().unwrap();
        assert_eq!(report.verdict.exit_code, 3, "{what}: {:?}", report.verdict);
        assert_eq!(outcome_of(report, "KIT-IFACE-001"), Outcome::Error, "{what}");
        let blocked = report.checks().filter(|c| c.depends_on.as_deref() == Some("KIT-IFACE-001")).count();
        assert!(blocked > 50, "{what}: {blocked} checks wait on the one finding");
    }
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

/// How a hostile agent's streams misbehave; its other methods answer like a plain agent.
#[derive(Clone, Copy, Debug)]
enum Streams {
    /// A valid-looking event every 5 ms, forever.
    Endless,
    /// A valid short stream, one byte per second.
    Dribble,
    /// Keep-alive comments and never an event.
    CommentsOnly,
}

const TASK: &str = r#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a-1","parts":[{"text":"done"}]}]}"#;

/// An agent that answers SendMessage and GetTask with one completed task, other calls with
/// TaskNotFound, and every streaming call with `streams`.
async fn stream_agent(streams: Streams) -> String {
    let rpc = axum::routing::post(move |body: bytes::Bytes| async move {
        let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let id = req.get("id").cloned().unwrap_or(serde_json::Value::Null);
        let method = req.get("method").and_then(|m| m.as_str()).unwrap_or("").to_owned();
        let json = |v: serde_json::Value| ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response();
        let task: serde_json::Value = serde_json::from_str(TASK).unwrap();
        match method.as_str() {
            "SendMessage" => json(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}})),
            "GetTask" => json(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": task})),
            "SendStreamingMessage" | "SubscribeToTask" => {
                let event = |result: serde_json::Value| {
                    format!("data: {}\n\n", serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}))
                };
                let body = match streams {
                    Streams::Endless => {
                        let first = event(
                            serde_json::json!({"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}),
                        );
                        let next = event(
                            serde_json::json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}),
                        );
                        let s = stream::unfold(Some(first), move |sent| {
                            let next = next.clone();
                            async move {
                                tokio::time::sleep(Duration::from_millis(5)).await;
                                Some((Ok::<_, std::io::Error>(bytes::Bytes::from(sent.unwrap_or(next))), None))
                            }
                        });
                        Body::from_stream(s)
                    }
                    Streams::Dribble => {
                        let whole = event(serde_json::json!({"task": task})).into_bytes();
                        let s = stream::unfold(0usize, move |i| {
                            let byte = whole.get(i).copied();
                            async move {
                                tokio::time::sleep(Duration::from_secs(1)).await;
                                byte.map(|b| (Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b])), i + 1))
                            }
                        });
                        Body::from_stream(s)
                    }
                    Streams::CommentsOnly => {
                        let s = stream::unfold((), |()| async {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            Some((Ok::<_, std::io::Error>(bytes::Bytes::from_static(b": keep-alive\n\n")), ()))
                        });
                        Body::from_stream(s)
                    }
                };
                ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
            }
            _ => json(
                serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "task not found"}}),
            ),
        }
    });
    agent(rpc, |b| format!("{b}/rpc")).await
}

/// Each stream costs a check its whole patience; after three in a row the agent's streams are
/// taken for what they are, and the remaining streaming checks end at once, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn streams_that_never_end_trickle_or_only_keep_alive_end_the_run_in_30_s() {
    let kinds = [
        (Streams::Endless, "streams never close: 3 streams in a row were still sending events at the kit's"),
        (Streams::Dribble, "streams send no event: 3 streams in a row sent bytes that never made up an event"),
        (Streams::CommentsOnly, "streams send no event: 3 streams in a row sent only SSE comments"),
    ];
    let mut urls = Vec::new();
    for (kind, _) in kinds {
        urls.push(stream_agent(kind).await);
    }
    let (r1, r2, r3) =
        tokio::join!(check_with_timeout_10(&urls[0]), check_with_timeout_10(&urls[1]), check_with_timeout_10(&urls[2]));
    for ((kind, named), run) in kinds.iter().zip([r1, r2, r3]) {
        let what = format!("{kind:?}");
        assert_bounded(&what, &run);
        let report = run.report.as_ref().unwrap();
        // The streaming checks still running end at once naming it, or wait on one that did (which
        // of the two depends on which ended first): either way, one finding.
        let names = |c: &&a2a_conform::report::CheckResult| {
            c.failure.as_ref().is_some_and(|f| f.message.contains(named))
                || c.skip_detail.as_deref().is_some_and(|d| d.contains(named))
        };
        let named_by = report.checks().filter(names).count();
        println!("{what}: {named_by} checks name it");
        assert!(named_by >= 5, "{what}: the streams are named as what went wrong");
        let cause = report.causes.iter().find(|c| c.headline.contains(named));
        assert!(
            cause.is_some(),
            "{what}: a root cause names it: {:?}",
            report.causes.iter().map(|c| &c.headline).collect::<Vec<_>>()
        );
    }
}

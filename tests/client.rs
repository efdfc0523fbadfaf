//! The reference client against the in-process mock and small hostile servers: discovery,
//! interface selection, redirects, body and time bounds, redaction and SSE reading.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_conform::client::discovery::{DiscoveryError, discover};
use a2a_conform::client::http::{ClientConfig, ClientError, HttpClient, HttpRequest};
use a2a_conform::client::rpc::{RpcOutcome, rpc_outcome, rpc_request, rpc_stream_request, text_message, with_tenant};
use a2a_conform::commands::client::{ClientCommand, ClientOptions, run_with_output};
use a2a_conform::engine::evidence::ToEvidence as _;
use a2a_conform::server::{MockConfig, MockServer};
use a2a_conform::sse::{SseError, SseLimits, StreamEnd};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use serde_json::{Value, json};

const SECRET: &str = "Bearer sup3r-s3cret-token";

/// Serves `router` on 127.0.0.1 with an OS-chosen port; returns the base URL.
async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}")
}

fn client(config: ClientConfig) -> HttpClient {
    HttpClient::new(config).unwrap()
}

/// One recorded request.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: HeaderMap,
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// A server serving `card` (with `{base}` replaced by its URL) at the well-known path, answering
/// every other request with a JSON-RPC result echoing the params and the Authorization header,
/// and recording everything.
async fn card_server(card: Value) -> (String, Log) {
    let log: Log = Arc::default();
    let base = Arc::new(Mutex::new(String::new()));
    let (l, b) = (log.clone(), base.clone());
    let router = Router::new().fallback(any(move |uri: Uri, headers: HeaderMap, body: Bytes| {
        let (log, base, card) = (l.clone(), b.clone(), card.clone());
        async move {
            log.lock().unwrap().push(Seen { path: uri.path().to_owned(), headers: headers.clone() });
            if uri.path() == "/.well-known/agent-card.json" {
                let text = card.to_string().replace("{base}", &base.lock().unwrap());
                return ([(header::CONTENT_TYPE, "application/json")], text).into_response();
            }
            let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("");
            axum::Json(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"params": req["params"], "auth": auth}}))
                .into_response()
        }
    }));
    let url = serve(router).await;
    *base.lock().unwrap() = url.clone();
    (url, log)
}

fn two_interface_card() -> Value {
    json!({
        "name": "t", "description": "d", "version": "1", "capabilities": {},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
        "supportedInterfaces": [
            {"url": "127.0.0.1:1", "protocolBinding": "GRPC", "protocolVersion": "1.0", "tenant": "grpc-tenant"},
            {"url": "{base}/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "acme"},
            {"url": "{base}/second", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]
    })
}

async fn run_cli(cmd: ClientCommand, opts: ClientOptions) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_with_output(cmd, opts, &mut out, &mut err).await.unwrap();
    (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

// ---------------------------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn discovers_the_mock_from_base_url_and_card_url() {
    let mock = MockServer::start(MockConfig::default()).await.unwrap();
    let c = client(ClientConfig::default());
    for target in [mock.url().to_owned(), format!("{}/", mock.url()), mock.card_url()] {
        let d = discover(&c, &target).await.unwrap();
        assert_eq!(d.card_url, mock.card_url(), "{target}");
        assert_eq!(d.exchange.status, 200);
        assert!(d.card["name"].is_string());
        let i = d.interface.expect("interface");
        assert_eq!(i.url, mock.rpc_url());
        assert_eq!((i.binding.as_str(), i.version.as_str(), i.tenant), ("JSONRPC", "1.0", None));
        assert!(d.notes.is_empty(), "{:?}", d.notes);
    }
}

#[tokio::test]
async fn mock_tenant_is_selected() {
    let mock = MockServer::start(MockConfig { tenant: "t-42".into(), ..MockConfig::default() }).await.unwrap();
    let d = discover(&client(ClientConfig::default()), mock.url()).await.unwrap();
    assert_eq!(d.interface.unwrap().tenant.as_deref(), Some("t-42"));
}

/// §8.3.2: the first supported entry wins (a GRPC entry first is skipped), and its tenant is
/// echoed in the request params.
#[tokio::test]
async fn selects_first_jsonrpc_interface_and_echoes_its_tenant() {
    let (base, log) = card_server(two_interface_card()).await;
    let c = client(ClientConfig::default());
    let d = discover(&c, &base).await.unwrap();
    let i = d.interface.clone().unwrap();
    assert_eq!(i.url, format!("{base}/a2a/jsonrpc"));
    assert_eq!(i.tenant.as_deref(), Some("acme"));
    assert!(d.notes.iter().any(|n| n.contains("GRPC")), "{:?}", d.notes);

    let params = with_tenant(json!({"id": "t1"}), i.tenant.as_deref().unwrap_or(""));
    let x = c.send(rpc_request(&i.url, &json!(1), "GetTask", Some(params))).await.unwrap();
    assert!(matches!(rpc_outcome(&x.json().unwrap()), RpcOutcome::Result(r) if r["params"]["tenant"] == "acme"));

    // The command line does the same.
    let (code, out, err) = run_cli(
        ClientCommand::Get { url: base.clone(), id: "t9".into(), history_length: Some(2) },
        ClientOptions::default(),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("tenant acme"), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"]["params"], json!({"id": "t9", "historyLength": 2, "tenant": "acme"}));

    let seen = log.lock().unwrap().clone();
    let rpc: Vec<_> = seen.iter().filter(|s| s.path != "/.well-known/agent-card.json").collect();
    assert_eq!(rpc.len(), 2);
    for s in rpc {
        assert_eq!(s.path, "/a2a/jsonrpc");
        assert_eq!(s.headers.get("a2a-version").unwrap(), "1.0");
        assert_eq!(s.headers.get("content-type").unwrap(), "application/json");
    }
}

#[tokio::test]
async fn detects_a_03_card() {
    let card = json!({
        "name": "old", "url": "{base}/", "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": "{base}/", "transport": "JSONRPC"}], "capabilities": {}
    });
    let (base, _) = card_server(card).await;
    let d = discover(&client(ClientConfig::default()), &base).await.unwrap();
    assert!(d.interface.is_none());
    let note = d.notes.iter().find(|n| n.contains("0.3")).expect("0.3 note");
    for f in ["`url`", "`protocolVersion`", "`preferredTransport`", "`additionalInterfaces`"] {
        assert!(note.contains(f), "{note}");
    }
    // The command line refuses to call it.
    let (code, _, err) = run_cli(
        ClientCommand::Send {
            url: base,
            text: "hi".into(),
            task_id: None,
            context_id: None,
            return_immediately: false,
            history_length: None,
        },
        ClientOptions::default(),
    )
    .await;
    assert_eq!(code, 2);
    assert!(err.contains("A2A 0.3") && err.contains("no usable JSON-RPC 1.x interface"), "{err}");
}

#[tokio::test]
async fn html_and_non_objects_and_bad_status_are_clear_errors() {
    let router = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/html")], "<!DOCTYPE html><html><body>Sign in</body></html>")
            }),
        )
        .route("/array.json", get(|| async { axum::Json(json!([1, 2])) }))
        .route("/missing.json", get(|| async { StatusCode::NOT_FOUND }));
    let base = serve(router).await;
    let c = client(ClientConfig::default());
    let e = discover(&c, &base).await.unwrap_err();
    assert!(matches!(&e, DiscoveryError::NotJson { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("HTML page") && msg.contains("text/html") && msg.contains("Sign in"), "{msg}");
    assert_eq!(e.exchange().unwrap().status, 200);

    let e = discover(&c, &format!("{base}/array.json")).await.unwrap_err();
    assert!(matches!(e, DiscoveryError::NotObject { kind: "array", .. }), "{e:?}");
    let e = discover(&c, &format!("{base}/missing.json")).await.unwrap_err();
    assert!(matches!(e, DiscoveryError::Status { status: 404, .. }), "{e:?}");
    let e = discover(&c, "not a url").await.unwrap_err();
    assert!(matches!(e, DiscoveryError::InvalidTarget { .. }), "{e:?}");
}

// ---------------------------------------------------------------------------------------------
// Redirects
// ---------------------------------------------------------------------------------------------

/// A server counting its requests.
async fn counting_server() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let router = Router::new().fallback(any(move || {
        let h = h.clone();
        async move {
            h.fetch_add(1, Ordering::SeqCst);
            axum::Json(json!({"landed": true}))
        }
    }));
    (serve(router).await, hits)
}

fn redirect_to(location: String) -> Router {
    Router::new()
        .route(
            "/go",
            any(move || {
                let l = location.clone();
                async move { (StatusCode::FOUND, [(header::LOCATION, l)]).into_response() }
            }),
        )
        .route("/here", any(|| async { axum::Json(json!({"here": true})) }))
        .route(
            "/loop",
            any(|| async { (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, "/loop")]).into_response() }),
        )
}

#[tokio::test]
async fn cross_origin_redirect_is_refused_and_not_followed() {
    let (other, hits) = counting_server().await;
    let base = serve(redirect_to(format!("{other}/landing?token=sup3r-s3cret-token"))).await;
    for same_origin_redirects in [false, true] {
        let c = client(ClientConfig {
            same_origin_redirects,
            headers: vec![("Authorization".into(), SECRET.into())],
            ..ClientConfig::default()
        });
        let e = c.send(HttpRequest::get(format!("{base}/go"))).await.unwrap_err();
        let ClientError::RedirectRefused { location } = &e else { panic!("{e:?}") };
        assert!(location.starts_with(&other), "{location}");
        // The secret echoed into the Location is not repeated.
        assert!(!e.to_string().contains("s3cret"), "{e}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the other origin must not be contacted");
}

#[tokio::test]
async fn same_origin_redirect_is_followed_only_when_enabled() {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}");
    let router = redirect_to(format!("{base}/here"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });

    let off = client(ClientConfig::default());
    let e = off.send(HttpRequest::get(format!("{base}/go"))).await.unwrap_err();
    assert!(matches!(&e, ClientError::RedirectRefused { location } if location == &format!("{base}/here")), "{e:?}");

    let on = client(ClientConfig { same_origin_redirects: true, ..ClientConfig::default() });
    let x = on.send(HttpRequest::get(format!("{base}/go"))).await.unwrap();
    assert_eq!(x.status, 200);
    assert_eq!(x.json().unwrap()["here"], true);
    assert_eq!(x.request.url, format!("{base}/here"));

    // A redirect loop stops after 3 hops.
    let e = on.send(HttpRequest::get(format!("{base}/loop"))).await.unwrap_err();
    assert!(matches!(e, ClientError::RedirectRefused { .. }), "{e:?}");
}

// ---------------------------------------------------------------------------------------------
// Bounds
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn huge_body_is_cut_at_max_body_bytes() {
    let router = Router::new().route(
        "/big",
        get(|| async {
            let chunks = (0..160).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![b'a'; 64 * 1024])));
            Body::from_stream(futures::stream::iter(chunks))
        }),
    );
    let base = serve(router).await;
    let max = 100_000;
    let c = client(ClientConfig { max_body_bytes: max, ..ClientConfig::default() });
    let x = c.send(HttpRequest::get(format!("{base}/big"))).await.unwrap();
    assert!(x.truncated);
    assert_eq!(x.body.len(), max);
    assert!(x.body.capacity() < 4 * max, "buffer grew to {}", x.body.capacity());
    let ev = x.to_evidence(None, c.redactor());
    let body = ev.response_body.unwrap();
    assert!(body.len() < 4300 && body.contains("max_body_bytes"), "{}", body.len());

    // A small body is not truncated.
    let c = client(ClientConfig::default());
    let x = c.send(HttpRequest::get(format!("{base}/nothing"))).await.unwrap();
    assert_eq!((x.status, x.truncated), (404, false));
}

#[tokio::test]
async fn silent_server_times_out() {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock); // never answer, never close
        }
    });
    let limit = Duration::from_millis(300);
    let c = client(ClientConfig { timeout: limit, ..ClientConfig::default() });
    let start = Instant::now();
    let e = c.send(HttpRequest::get(format!("http://{addr}/"))).await.unwrap_err();
    let took = start.elapsed();
    assert_eq!(e, ClientError::Timeout { limit });
    assert!(took >= limit && took < Duration::from_secs(2), "{took:?}");

    let start = Instant::now();
    let e = c.send_streaming(rpc_stream_request(&format!("http://{addr}/"), &json!(1), "X", None)).await.unwrap_err();
    assert!(matches!(e, ClientError::Timeout { .. }), "{e:?}");
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn slow_body_times_out() {
    let router = Router::new().route(
        "/slow",
        get(|| async {
            let s = futures::StreamExt::chain(
                futures::stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"{\"a\":")) }),
                futures::stream::pending(),
            );
            Body::from_stream(s)
        }),
    );
    let base = serve(router).await;
    let c = client(ClientConfig { timeout: Duration::from_millis(300), ..ClientConfig::default() });
    let e = c.send(HttpRequest::get(format!("{base}/slow"))).await.unwrap_err();
    assert!(matches!(e, ClientError::Timeout { .. }), "{e:?}");
}

#[tokio::test]
async fn refused_connection_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let c = client(ClientConfig { headers: vec![("X-Api-Key".into(), "k3y-value".into())], ..ClientConfig::default() });
    let e = c.send(HttpRequest::get(format!("http://{addr}/"))).await.unwrap_err();
    assert!(matches!(e, ClientError::Connect(_)), "{e:?}");
    assert!(!e.to_string().contains("k3y-value"));
    let e = c.send(HttpRequest::get("file:///etc/passwd")).await.unwrap_err();
    assert!(matches!(e, ClientError::InvalidUrl(_)), "{e:?}");
}

// ---------------------------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn user_headers_go_on_every_request_and_never_come_out() {
    let (base, log) = card_server(two_interface_card()).await;
    let c = client(ClientConfig {
        headers: vec![("Authorization".into(), SECRET.into()), ("X-Tenant-Key".into(), "tk-0000-1111".into())],
        ..ClientConfig::default()
    });
    let d = discover(&c, &base).await.unwrap();
    let url = d.interface.unwrap().url;
    let x = c.send(rpc_request(&url, &json!(1), "GetTask", Some(json!({"id": "t"})))).await.unwrap();
    // The server echoed the secret back in its body.
    assert_eq!(x.json().unwrap()["result"]["auth"], SECRET);

    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    for s in &seen {
        assert_eq!(s.headers.get("authorization").unwrap(), SECRET, "{}", s.path);
        assert_eq!(s.headers.get("x-tenant-key").unwrap(), "tk-0000-1111");
    }

    // A request setting the header itself wins over the user header.
    let own = rpc_request(&url, &json!(2), "GetTask", None).header("authorization", "Bearer other-value");
    let x2 = c.send(own).await.unwrap();
    assert_eq!(x2.json().unwrap()["result"]["auth"], "Bearer other-value");
    assert_eq!(log.lock().unwrap().last().unwrap().headers.get_all("authorization").iter().count(), 1);

    for ev in [d.exchange.to_evidence(Some("card"), c.redactor()), x.to_evidence(Some("get"), c.redactor())] {
        let text = serde_json::to_string(&ev).unwrap();
        assert!(!text.contains("s3cret") && !text.contains("tk-0000-1111"), "{text}");
        assert!(ev.request_headers.contains(&"Authorization: [REDACTED]".to_owned()), "{:?}", ev.request_headers);
        assert!(ev.request_headers.contains(&"X-Tenant-Key: [REDACTED]".to_owned()));
        let curl = ev.curl.unwrap();
        assert!(curl.contains("\"Authorization: $A2A_SECRET_1\""), "{curl}");
        assert!(curl.contains("\"X-Tenant-Key: $A2A_SECRET_2\""), "{curl}");
    }
    let ev = x.to_evidence(None, c.redactor());
    assert!(ev.response_body.unwrap().contains("[REDACTED]"));

    // The command line redacts what the agent echoes and what errors say.
    let opts = ClientOptions { headers: vec![format!("Authorization: {SECRET}")], ..ClientOptions::default() };
    let (code, out, err) = run_cli(ClientCommand::Cancel { url: base.clone(), id: "t".into() }, opts.clone()).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[REDACTED]") && !out.contains("s3cret") && !err.contains("s3cret"), "{out}\n{err}");
    let (code, out, err) = run_cli(ClientCommand::Card { url: "http://127.0.0.1:1/".into() }, opts).await;
    assert_eq!(code, 2);
    assert!(out.is_empty() && err.starts_with("error:") && !err.contains("s3cret"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn streams_from_the_mock() {
    let mock = MockServer::start(MockConfig::default()).await.unwrap();
    let c = client(ClientConfig::default());
    let params = json!({"message": text_message("tck-stream-chunked x", None, None)});
    let x = c
        .send_streaming(rpc_stream_request(&mock.rpc_url(), &json!("s1"), "SendStreamingMessage", Some(params)))
        .await
        .unwrap();
    assert_eq!(x.status, 200);
    assert!(x.is_sse());
    assert!(matches!(x.end, Ok(StreamEnd::Closed { incomplete: None })), "{:?}", x.end);
    assert!(x.events.len() >= 2, "{:?}", x.events);
    let first: Value = serde_json::from_str(&x.events[0].data).unwrap();
    assert_eq!(first["id"], "s1");
    assert!(first["result"]["task"].is_object(), "{first}");
    for ev in &x.events {
        let v: Value = serde_json::from_str(&ev.data).unwrap();
        assert!(rpc_outcome(&v).is_result(), "{v}");
    }
    let evidence = x.to_evidence(Some("stream"), c.redactor());
    let body = evidence.response_body.unwrap();
    assert!(body.starts_with("id: ") || body.starts_with("data: "), "{body}");
    assert!(body.contains(": [stream closed by peer]"), "{body}");

    // A non-streaming answer to a streaming request is read as a body.
    let x = c
        .send_streaming(rpc_stream_request(&mock.rpc_url(), &json!(2), "SubscribeToTask", Some(json!({"id": "nope"}))))
        .await
        .unwrap();
    assert!(!x.is_sse());
    assert!(x.events.is_empty());
    assert_eq!(rpc_outcome(&serde_json::from_slice(&x.body).unwrap()).error_code(), Some(-32001));

    // The command line prints one line per event.
    let (code, out, err) = run_cli(
        ClientCommand::Stream {
            url: mock.url().to_owned(),
            text: "tck-stream-chunked y".into(),
            task_id: None,
            context_id: None,
            history_length: None,
        },
        ClientOptions::default(),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.len() >= 2);
    assert!(lines[0]["result"]["task"].is_object());

    // And exits 1 on a JSON-RPC error.
    let (code, out, _) = run_cli(
        ClientCommand::Get { url: mock.url().to_owned(), id: "missing".into(), history_length: None },
        ClientOptions::default(),
    )
    .await;
    assert_eq!(code, 1);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["error"]["code"], -32001);
}

#[tokio::test]
async fn endless_stream_hits_the_idle_timeout() {
    let router = Router::new().route(
        "/rpc",
        any(|| async {
            let s = futures::StreamExt::chain(
                futures::stream::once(async {
                    Ok::<_, std::io::Error>(Bytes::from_static(
                        b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
                    ))
                }),
                futures::stream::pending(),
            );
            Response::builder().header(header::CONTENT_TYPE, "text/event-stream").body(Body::from_stream(s)).unwrap()
        }),
    );
    let base = serve(router).await;
    let limits = SseLimits {
        idle_timeout: Duration::from_millis(200),
        total_timeout: Duration::from_secs(5),
        ..SseLimits::default()
    };
    let c = client(ClientConfig { sse: limits, ..ClientConfig::default() });
    let start = Instant::now();
    let x = c.send_streaming(rpc_stream_request(&format!("{base}/rpc"), &json!(1), "X", None)).await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(x.events.len(), 1, "events before the error are kept");
    assert!(matches!(x.end, Err(SseError::IdleTimeout { .. })), "{:?}", x.end);
    let body = x.to_evidence(None, c.redactor()).response_body.unwrap();
    assert!(body.contains("stream error: no complete event within idle_timeout"), "{body}");
}

/// A server that answers the first request on each connection with HTTP 500 and keeps the
/// connection alive, then reads the next request on it and hangs up without a word: the behaviour
/// that made pooled connections fail a third of the checks against one real agent.
async fn drops_reused_connections() -> (String, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                // Requests here are small and arrive in one read.
                if sock.read(&mut buf).await.unwrap_or(0) == 0 {
                    return;
                }
                let body = "{\"error\":\"boom\"}";
                let head = format!(
                    "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(format!("{head}{body}").as_bytes()).await;
                let _ = sock.read(&mut buf).await;
                // Dropped: closed without answering the second request.
            });
        }
    });
    (format!("http://{addr}"), connections)
}

#[tokio::test]
async fn a_pooled_connection_the_server_dropped_is_retried_once_on_a_fresh_one() {
    let (url, connections) = drops_reused_connections().await;
    let c = client(ClientConfig::default());
    for i in 0..5 {
        let x = c.send(HttpRequest::get(format!("{url}/x"))).await;
        let x = x.unwrap_or_else(|e| panic!("request {i} failed instead of being retried: {e}"));
        assert_eq!(x.status, 500, "request {i}");
    }
    // Each retry opened a connection of its own; the first request needed one too.
    assert!(connections.load(Ordering::SeqCst) >= 5, "{} connections", connections.load(Ordering::SeqCst));
}

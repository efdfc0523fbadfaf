//! `check` tried as a new user would, against an agent that is not the mock: a reverse proxy in front
//! of an in-process mock that rewrites the mock's answers with one named protocol violation at a
//! time. Each violation must show up as a fail of the check(s) that target it, with a spec section,
//! a one-line message and (where the finding compares values) expected/actual; and nothing else may
//! fail compared with the same proxy forwarding unchanged answers.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;
use serde_json::{Map, Value, json};

use a2a_conform::client::http::ClientConfig;
use a2a_conform::commands::check::{self, CheckOptions};
use a2a_conform::report::{Outcome, Report};
use a2a_conform::server::{ExtendedCard, MockConfig, MockServer, WebhookPolicy};
use a2a_conform::suite::behaviors::Behaviors;

/// Longest a whole check run may take before the test gives up.
const RUN_DEADLINE: Duration = Duration::from_secs(120);

/// One deliberate protocol violation of the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mutation {
    /// Forward everything unchanged (except the card's interface URL).
    Clean,
    /// `TASK_STATE_COMPLETED` spelled `completed` in every answer.
    LowercaseCompleted,
    /// SendMessage answers a bare Task instead of `{"task": {...}}`.
    BareTask,
    /// ListTasks answers without `nextPageToken`.
    NoNextPageToken,
    /// SendStreamingMessage streams lose their initial `task` event (first event is a status update).
    StreamWithoutTask,
    /// JSON-RPC error `data` is an object `{"taskId": ...}` instead of an array.
    ErrorDataObject,
}

struct ProxyState {
    /// The mock's origin, e.g. `http://127.0.0.1:40000`.
    upstream: String,
    /// The proxy's origin.
    public: String,
    mutation: Mutation,
    http: reqwest::Client,
}

/// A running mock with a mutating proxy in front of it. Dropping it stops the proxy; the mock is
/// shut down by [`WrongServer::stop`].
struct WrongServer {
    url: String,
    mock: MockServer,
    proxy: tokio::task::JoinHandle<()>,
    token: String,
}

impl WrongServer {
    async fn start(mutation: Mutation) -> WrongServer {
        let token = format!("wrong-{}", uuid::Uuid::new_v4().simple());
        let config = MockConfig {
            webhooks: WebhookPolicy::AllowLoopback,
            extended_card: ExtendedCard::Bearer(token.clone()),
            ..Default::default()
        };
        let mock = MockServer::start(config).await.expect("the mock starts");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let state = Arc::new(ProxyState {
            upstream: mock.url().trim_end_matches('/').to_owned(),
            public: url.clone(),
            mutation,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(Duration::from_secs(5))
                .build()
                .expect("reqwest client"),
        });
        let app = Router::new().fallback(forward).with_state(state);
        let proxy = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        WrongServer { url, mock, proxy, token }
    }

    async fn stop(self) {
        self.proxy.abort();
        self.mock.shutdown().await;
    }
}

/// Headers that belong to one connection, never forwarded.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "host" | "content-length" | "connection" | "transfer-encoding" | "keep-alive" | "upgrade" | "te" | "trailer"
    )
}

async fn forward(State(st): State<Arc<ProxyState>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let Ok(body) = axum::body::to_bytes(body, 64 << 20).await else {
        return (StatusCode::BAD_GATEWAY, "proxy: request body unreadable").into_response();
    };
    let rpc: Option<Value> = serde_json::from_slice(&body).ok();
    let rpc_method = rpc.as_ref().and_then(|v| v.get("method")).and_then(Value::as_str).map(str::to_owned);
    let params = rpc.as_ref().and_then(|v| v.get("params")).cloned().unwrap_or(Value::Null);
    let path = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let mut out = st.http.request(parts.method.clone(), format!("{}{}", st.upstream, path)).body(body);
    for (name, value) in &parts.headers {
        if !hop_by_hop(name) {
            out = out.header(name, value);
        }
    }
    let resp = match out.send().await {
        Ok(r) => r,
        Err(e) => return (StatusCode::BAD_GATEWAY, format!("proxy: {e}")).into_response(),
    };
    let status = resp.status();
    let mut headers = HeaderMap::new();
    for (name, value) in resp.headers() {
        if !hop_by_hop(name) {
            headers.append(name, value.clone());
        }
    }
    let is_sse = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let ctx = Arc::new(Rewrite { st: Arc::clone(&st), rpc_method, params });
    let body = if is_sse {
        let mut upstream = resp.bytes_stream();
        let ctx = Arc::clone(&ctx);
        let stream = async_stream(move |tx| async move {
            let mut buf = BytesMut::new();
            let mut first = true;
            while let Some(chunk) = upstream.next().await {
                let Ok(chunk) = chunk else { break };
                buf.extend_from_slice(&chunk);
                while let Some(end) = find(&buf, b"\n\n") {
                    let block = buf.split_to(end + 2).freeze();
                    if let Some(b) = ctx.sse_block(&block, &mut first)
                        && tx.send(b).await.is_err()
                    {
                        return;
                    }
                }
            }
            if !buf.is_empty() {
                let _ = tx.send(buf.freeze()).await;
            }
        });
        Body::from_stream(stream)
    } else {
        match resp.bytes().await {
            Ok(b) => Body::from(ctx.json_body(&b)),
            Err(e) => return (StatusCode::BAD_GATEWAY, format!("proxy: {e}")).into_response(),
        }
    };
    let mut r = Response::new(body);
    *r.status_mut() = status;
    *r.headers_mut() = headers;
    r
}

/// A stream fed by a spawned task through a small channel.
fn async_stream<F, Fut>(f: F) -> impl futures::Stream<Item = Result<Bytes, std::convert::Infallible>>
where
    F: FnOnce(tokio::sync::mpsc::Sender<Bytes>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
    tokio::spawn(f(tx));
    futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (Ok(b), rx)) })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn replace(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut rest = hay;
    while let Some(i) = find(rest, from) {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(to);
        rest = &rest[i + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// What one response is rewritten with.
struct Rewrite {
    st: Arc<ProxyState>,
    rpc_method: Option<String>,
    params: Value,
}

impl Rewrite {
    /// Points the mock's own URLs (the card's `supportedInterfaces[].url`) at the proxy. Only the
    /// origin followed by `/` or `"` is replaced, so other ports are never touched.
    fn urls(&self, body: &[u8]) -> Vec<u8> {
        let up = self.st.upstream.as_bytes();
        let pb = self.st.public.as_bytes();
        let slash = replace(body, &[up, b"/"].concat(), &[pb, b"/"].concat());
        replace(&slash, &[up, b"\""].concat(), &[pb, b"\""].concat())
    }

    /// A whole (non-stream) body: bytes unchanged unless the mutation changes the JSON.
    fn json_body(&self, body: &[u8]) -> Bytes {
        let body = self.urls(body);
        let Ok(mut v) = serde_json::from_slice::<Value>(&body) else { return Bytes::from(body) };
        if self.mutate(&mut v) { Bytes::from(serde_json::to_vec(&v).expect("serializes")) } else { Bytes::from(body) }
    }

    /// One SSE event block (ending in a blank line): its `data:` lines rewritten, or `None` to drop it.
    fn sse_block(&self, block: &[u8], first: &mut bool) -> Option<Bytes> {
        let Ok(text) = std::str::from_utf8(block) else { return Some(Bytes::copy_from_slice(block)) };
        let mut out = String::with_capacity(text.len());
        let mut has_data = false;
        let mut drop = false;
        for line in text.split_inclusive('\n') {
            let Some(data) = line.strip_prefix("data:") else {
                out.push_str(line);
                continue;
            };
            has_data = true;
            let payload = data.strip_prefix(' ').unwrap_or(data).trim_end_matches('\n');
            let rewritten = String::from_utf8(self.urls(payload.as_bytes())).unwrap_or_else(|_| payload.to_owned());
            let Ok(mut v) = serde_json::from_str::<Value>(&rewritten) else {
                out.push_str(&line.replace(payload, &rewritten));
                continue;
            };
            if self.st.mutation == Mutation::StreamWithoutTask
                && *first
                && self.rpc_method.as_deref() == Some("SendStreamingMessage")
                && v.pointer("/result/task").is_some()
            {
                drop = true;
            }
            if self.mutate(&mut v) {
                out.push_str("data: ");
                out.push_str(&v.to_string());
                out.push('\n');
            } else {
                out.push_str(&line.replace(payload, &rewritten));
            }
        }
        if has_data {
            *first = false;
        }
        (!drop).then(|| Bytes::from(out))
    }

    /// Applies the mutation to one JSON-RPC response; true when something changed.
    fn mutate(&self, v: &mut Value) -> bool {
        let method = self.rpc_method.as_deref();
        match self.st.mutation {
            Mutation::Clean | Mutation::StreamWithoutTask => false,
            Mutation::LowercaseCompleted => lowercase_completed(v),
            Mutation::BareTask => {
                if method != Some("SendMessage") {
                    return false;
                }
                let Some(result) = v.get_mut("result").and_then(Value::as_object_mut) else { return false };
                let Some(Value::Object(task)) = result.remove("task") else { return false };
                // Whatever else the wrapper held stays next to the task's own fields.
                let mut bare: Map<String, Value> = task;
                bare.extend(std::mem::take(result));
                *result = bare;
                true
            }
            Mutation::NoNextPageToken => {
                method == Some("ListTasks")
                    && v.get_mut("result")
                        .and_then(Value::as_object_mut)
                        .is_some_and(|r| r.remove("nextPageToken").is_some())
            }
            Mutation::ErrorDataObject => {
                let Some(err) = v.get_mut("error").and_then(Value::as_object_mut) else { return false };
                if !err.get("data").is_some_and(Value::is_array) {
                    return false;
                }
                let p = &self.params;
                let task_id = [p.get("id"), p.get("taskId"), p.pointer("/message/taskId")]
                    .into_iter()
                    .flatten()
                    .find_map(Value::as_str)
                    .unwrap_or("unknown");
                err.insert("data".into(), json!({"taskId": task_id}));
                true
            }
        }
    }
}

fn lowercase_completed(v: &mut Value) -> bool {
    match v {
        Value::String(s) if s == "TASK_STATE_COMPLETED" => {
            *s = "completed".into();
            true
        }
        Value::Array(a) => a.iter_mut().fold(false, |acc, x| lowercase_completed(x) | acc),
        Value::Object(o) => o.values_mut().fold(false, |acc, x| lowercase_completed(x) | acc),
        _ => false,
    }
}

/// Runs the full built-in suites against a wrong server with `mutation` and returns the report.
async fn check_against(mutation: Mutation) -> Report {
    let server = WrongServer::start(mutation).await;
    let opts = CheckOptions {
        behaviors: Behaviors::Acts,
        timeout: Duration::from_secs(20),
        client: ClientConfig {
            headers: vec![("Authorization".into(), format!("Bearer {}", server.token))],
            ..ClientConfig::default()
        },
        ..CheckOptions::new(server.url.clone())
    };
    let outcome = tokio::time::timeout(RUN_DEADLINE, check::run(&opts, &mut ()))
        .await
        .unwrap_or_else(|_| panic!("{mutation:?}: the check run did not finish within {RUN_DEADLINE:?}"))
        .unwrap_or_else(|e| panic!("{mutation:?}: the check run could not happen: {e}"));
    server.stop().await;
    outcome
}

/// Ids of checks that failed or ended in error (both are findings a user would have to act on).
fn failing(report: &Report) -> BTreeSet<String> {
    report.checks().filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Error)).map(|r| r.id.clone()).collect()
}

fn describe(report: &Report, ids: &BTreeSet<String>) -> String {
    report
        .checks()
        .filter(|r| ids.contains(&r.id))
        .map(|r| {
            let f = r.failure.clone().unwrap_or_default();
            format!("  {} [{}] {}: {}", r.id, r.outcome.as_str(), r.spec.section, f.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The quality of every finding: spec section, a one-line message, and expected/actual together.
fn assert_findings_readable(mutation: Mutation, report: &Report, ids: &BTreeSet<String>) {
    for r in report.checks().filter(|r| ids.contains(&r.id)) {
        assert!(!r.spec.section.trim().is_empty(), "{mutation:?}: {} has no spec section", r.id);
        let f = r.failure.as_ref().unwrap_or_else(|| panic!("{mutation:?}: {} failed without a finding", r.id));
        assert!(!f.message.trim().is_empty(), "{mutation:?}: {} has an empty message", r.id);
        assert!(!f.message.contains('\n'), "{mutation:?}: {} message is not one line: {:?}", r.id, f.message);
        assert_eq!(
            f.expected.is_some(),
            f.actual.is_some(),
            "{mutation:?}: {} has only one of expected/actual: {f:?}",
            r.id
        );
        if f.pointer.is_some() {
            assert!(
                f.expected.is_some(),
                "{mutation:?}: {} points at a value but shows no expected/actual: {f:?}",
                r.id
            );
        }
    }
    // The check written for this very violation shows where it is and a readable diff.
    let (id, pointer) = headline(mutation);
    let r = report.checks().find(|r| r.id == id).unwrap_or_else(|| panic!("{mutation:?}: no result for {id}"));
    let f = r.failure.as_ref().unwrap_or_else(|| panic!("{mutation:?}: {id} did not fail: {:?}", r.outcome));
    assert_eq!(f.pointer.as_deref(), Some(pointer), "{mutation:?}: {id} points elsewhere: {f:?}");
    assert!(f.expected.is_some() && f.actual.is_some(), "{mutation:?}: {id} has no expected/actual: {f:?}");
}

/// The check that targets each violation most directly, and the JSON pointer its finding names.
fn headline(mutation: Mutation) -> (&'static str, &'static str) {
    match mutation {
        Mutation::Clean => unreachable!("the clean proxy has no violation"),
        Mutation::LowercaseCompleted => ("DM-FMT-002", "/task/status/state"),
        // Neither alternative of the oneof is there: the finding names both where they are missing.
        Mutation::BareTask => ("CORE-SEND-001", ""),
        Mutation::NoNextPageToken => ("CORE-LIST-003", "/nextPageToken"),
        Mutation::StreamWithoutTask => ("KIT-STREAM-001", "/0/task"),
        Mutation::ErrorDataObject => ("CORE-ERR-007", "/error/data"),
    }
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

/// Checks whose failure against the clean proxy is known and tolerated (being fixed elsewhere).
/// Empty today; the clean run asserts it stays within this list.
const KNOWN_BASELINE: &[&str] = &[];

/// The check ids each mutation must trip, and no others.
fn expected(mutation: Mutation) -> BTreeSet<String> {
    match mutation {
        Mutation::Clean => set(&[]),
        // The enum checks (and the schema checks of each method's result). Checks that poll for
        // or compare a state judge what the agent did (a terminal state spelt in lower case is
        // still a terminal state to them), and a follow-up's state (CORE-MULTI-001,
        // KIT-MULTI-002/005, KIT-STREAM-010) is a MAY: those end `info`, which `failing` leaves out.
        // The spelling is rewritten in every answer, HTTP+JSON ones too: their gradings fail alike.
        Mutation::LowercaseCompleted => set(&[
            "DM-FMT-002",
            "KIT-LIST-020",
            "KIT-TASK-004",
            "WIRE-SCHEMA",
            "DM-FMT-002[http+json]",
            "KIT-LIST-020[http+json]",
            "KIT-TASK-004[http+json]",
        ]),
        // One story: the two checks of SendMessage's shape fail; every check that only uses
        // SendMessage to set itself up defers to CORE-SEND-001 (depends_on_failed).
        Mutation::BareTask => set(&["CORE-SEND-001", "KIT-SEND-001"]),
        Mutation::NoNextPageToken => set(&["CORE-LIST-003", "KIT-LIST-003", "KIT-LIST-004", "KIT-LIST-015"]),
        // The follow-up stream of an INPUT_REQUIRED task breaks the same sentence (KIT-STREAM-020);
        // that the follow-up continues the task (KIT-STREAM-010, a MAY) still holds.
        Mutation::StreamWithoutTask => set(&["KIT-STREAM-001", "KIT-STREAM-020"]),
        Mutation::ErrorDataObject => set(&["CORE-ERR-007"]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn each_wrong_behaviour_fails_the_checks_that_target_it_and_nothing_else() {
    let (clean, a, b, c, d, e) = tokio::join!(
        check_against(Mutation::Clean),
        check_against(Mutation::LowercaseCompleted),
        check_against(Mutation::BareTask),
        check_against(Mutation::NoNextPageToken),
        check_against(Mutation::StreamWithoutTask),
        check_against(Mutation::ErrorDataObject),
    );
    let baseline = failing(&clean);
    if !baseline.is_empty() {
        // Failures against the clean proxy are the suite's or the mock's, not the mutations': they
        // are printed, must be among KNOWN_BASELINE, and are left out of every comparison below.
        eprintln!("clean proxy failures (excluded from the comparison):\n{}", describe(&clean, &baseline));
    }
    let unknown: BTreeSet<_> = baseline.difference(&set(KNOWN_BASELINE)).cloned().collect();
    let mut problems = Vec::new();
    if !unknown.is_empty() {
        problems.push(format!("clean proxy fails unexpectedly:\n{}", describe(&clean, &unknown)));
    }
    for (mutation, report) in [
        (Mutation::LowercaseCompleted, &a),
        (Mutation::BareTask, &b),
        (Mutation::NoNextPageToken, &c),
        (Mutation::StreamWithoutTask, &d),
        (Mutation::ErrorDataObject, &e),
    ] {
        let all = failing(report);
        if std::env::var_os("A2A_WRONG_SERVER_DUMP").is_some() {
            for r in report.checks().filter(|r| all.contains(&r.id)) {
                eprintln!("{mutation:?} {} {:?}", r.id, r.failure);
            }
        }
        assert_findings_readable(mutation, report, &all);
        let got: BTreeSet<String> = all.difference(&baseline).cloned().collect();
        let want = expected(mutation);
        if got.is_empty() {
            problems.push(format!("{mutation:?}: no check failed"));
        }
        if got != want {
            let extra: BTreeSet<_> = got.difference(&want).cloned().collect();
            let missing: BTreeSet<_> = want.difference(&got).cloned().collect();
            problems.push(format!(
                "{mutation:?}: failing set differs\n unexpected:\n{}\n missing: {missing:?}\n all failing: {got:?}",
                describe(report, &extra)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

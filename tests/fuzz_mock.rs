//! Fuzzing the mock over real HTTP (issue 19): generated JSON-RPC requests, valid, nearly valid
//! (one mutation of a valid call or of its headers) and garbage, POSTed to an in-process mock. Every
//! one must be answered within 5 s, never with a 5xx, with a JSON-RPC response object (or a stream of
//! them, or 204 for a notification); afterwards the mock must still serve its card and a plain
//! SendMessage.
//!
//! `A2A_FUZZ_CASES` sets the number of cases, `A2A_FUZZ_SEED` replays a run (tests/common/fuzz.rs).

#[path = "common/fuzz.rs"]
mod fuzz;
#[path = "common/strategies.rs"]
mod strategies;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use a2a_conform::server::{MockConfig, MockServer};
use a2a_conform::sse::{SseLimits, SseParser};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

/// Longer than any answer the mock owes: its blocking wait is cut to 1 s below.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);
/// A stream is read this long, or this far, then dropped: what matters is that it starts well.
const STREAM_READ: Duration = Duration::from_secs(2);
const STREAM_BYTES: usize = 256 * 1024;

/// The A2A 1.0 methods and the scenarios a generated SendMessage may ask for by its text.
const SCENARIOS: &[&str] = &[
    "tck-complete-task",
    "tck-input-required",
    "tck-auth-required",
    "tck-reject-task",
    "tck-message-response",
    "tck-artifact-file",
    "tck-long-running",
    "tck-multi-turn",
    "tck-cancel",
    "tck-stream-chunked",
    "tck-task-failure",
];

#[derive(Debug, Clone)]
struct Call {
    method: &'static str,
    id: Value,
    params: Value,
    /// Use the id of a task created earlier in the run instead of the generated one.
    known_task: Option<Index>,
    /// Drive a scripted scenario instead of sending the generated message text.
    scenario: Option<&'static str>,
}

#[derive(Debug, Clone)]
enum Mutation {
    JsonrpcVersion(Value),
    Id(Value),
    Remove(&'static str),
    Unknown(String, Value),
    Params(Value),
    ParamMember(Index, Value),
    /// A string this long as a params member (past `--max-request-bytes` at the top end).
    Huge(usize),
    /// `metadata` nested this deep (either side of `--max-json-depth`).
    Deep(usize),
    Batch(usize),
    MethodName(String),
}

#[derive(Debug, Clone)]
enum Body {
    Call(Call, Option<Mutation>),
    Truncated(Call, Index),
    /// A call with these bytes spliced into its text: invalid UTF-8 inside a JSON string.
    BadUtf8(Call, Vec<u8>),
    Json(Value),
    Bytes(Vec<u8>),
}

#[derive(Debug, Clone)]
enum Version {
    Header(String),
    Query(String),
    Missing,
}

#[derive(Debug, Clone)]
struct Probe {
    http_method: &'static str,
    content_type: Option<String>,
    version: Version,
    body: Body,
}

fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        "[a-z0-9-]{1,12}".prop_map(Value::String),
        strategies::text().prop_map(Value::String),
    ]
}

fn to_json<T: serde::Serialize>(v: T) -> Value {
    serde_json::to_value(v).expect("the wire model serializes")
}

fn params(method: &'static str) -> BoxedStrategy<Value> {
    use strategies as s;
    match method {
        "SendMessage" | "SendStreamingMessage" => s::send_request().prop_map(to_json).boxed(),
        "GetTask" => s::get_task_request().prop_map(to_json).boxed(),
        "ListTasks" => s::list_tasks_request().prop_map(to_json).boxed(),
        "CancelTask" => s::cancel_request().prop_map(to_json).boxed(),
        "SubscribeToTask" => s::subscribe_request().prop_map(to_json).boxed(),
        "CreateTaskPushNotificationConfig" => s::push_config().prop_map(to_json).boxed(),
        "GetTaskPushNotificationConfig" | "DeleteTaskPushNotificationConfig" => {
            s::config_ref().prop_map(to_json).boxed()
        }
        "ListTaskPushNotificationConfigs" => s::list_configs_request().prop_map(to_json).boxed(),
        _ => s::extended_card_request().prop_map(to_json).boxed(),
    }
}

const METHODS: &[&str] = &[
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
];

fn call() -> impl Strategy<Value = Call> {
    select(METHODS).prop_flat_map(|method| {
        (id(), params(method), proptest::option::of(any::<Index>()), proptest::option::weighted(0.5, select(SCENARIOS)))
            .prop_map(move |(id, params, known_task, scenario)| Call { method, id, params, known_task, scenario })
    })
}

fn odd_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Just(json!(u64::MAX)),
        Just(json!(-1)),
        Just(json!([])),
        Just(json!({})),
        Just(json!([1, "two", null])),
        Just(json!({"id": {"nested": true}})),
        "x{300}".prop_map(Value::String),
        strategies::json_value(),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        prop_oneof![Just(json!("1.0")), Just(json!("2")), Just(json!(2.0)), Just(Value::Null), Just(json!(" 2.0"))]
            .prop_map(Mutation::JsonrpcVersion),
        odd_value().prop_map(Mutation::Id),
        select(vec!["jsonrpc", "id", "method", "params"]).prop_map(Mutation::Remove),
        (strategies::key(), odd_value()).prop_map(|(k, v)| Mutation::Unknown(k, v)),
        odd_value().prop_map(Mutation::Params),
        (any::<Index>(), odd_value()).prop_map(|(i, v)| Mutation::ParamMember(i, v)),
        prop_oneof![1usize..5_000, 200_000usize..300_000, Just(1_048_576usize), Just(1_100_000usize)]
            .prop_map(Mutation::Huge),
        (20usize..40).prop_map(Mutation::Deep),
        (0usize..4).prop_map(Mutation::Batch),
        prop_oneof![
            Just("sendMessage".to_owned()),
            Just("SENDMESSAGE".to_owned()),
            Just("message/send".to_owned()),
            Just("tasks/get".to_owned()),
            Just(String::new()),
            Just("SendMessage ".to_owned()),
            strategies::text(),
        ]
        .prop_map(Mutation::MethodName),
    ]
}

fn content_type() -> impl Strategy<Value = Option<String>> {
    proptest::option::weighted(
        0.85,
        prop_oneof![
            Just("application/json".to_owned()),
            Just("application/json; charset=utf-8".to_owned()),
            Just("application/a2a+json".to_owned()),
            Just("APPLICATION/JSON".to_owned()),
            Just("text/plain".to_owned()),
            Just("application/x-www-form-urlencoded".to_owned()),
            Just("multipart/form-data; boundary=x".to_owned()),
            Just("application/".to_owned()),
            Just(";;;".to_owned()),
        ],
    )
}

fn version() -> impl Strategy<Value = Version> {
    prop_oneof![
        select(vec!["1.0", "0.3", "1.1", "2.0", "1", "abc", "", " 1.0 ", "1.0, 0.3"])
            .prop_map(|v| Version::Header(v.to_owned())),
        select(vec!["1.0", "0.3", "x"]).prop_map(|v| Version::Query(v.to_owned())),
        Just(Version::Missing),
    ]
}

fn valid_headers(body: Body) -> Probe {
    Probe {
        http_method: "POST",
        content_type: Some("application/json".into()),
        version: Version::Header("1.0".into()),
        body,
    }
}

fn garbage() -> impl Strategy<Value = Body> {
    prop_oneof![
        vec(any::<u8>(), 0..512).prop_map(Body::Bytes),
        "\\PC{0,64}".prop_map(|s| Body::Bytes(s.into_bytes())),
        select(vec![&b"{"[..], b"}", b"[", b"null", b"\"\"", b"{\"jsonrpc\":", b"\xEF\xBB\xBF{}", b"{}{}", b"[]"])
            .prop_map(|b| Body::Bytes(b.to_vec())),
        strategies::json_value().prop_map(Body::Json),
        (call(), any::<Index>()).prop_map(|(c, i)| Body::Truncated(c, i)),
        (call(), vec(0x80u8..=0xFF, 1..4)).prop_map(|(c, b)| Body::BadUtf8(c, b)),
    ]
}

fn probe() -> impl Strategy<Value = Probe> {
    let near = prop_oneof![
        3 => (call(), mutation()).prop_map(|(c, m)| valid_headers(Body::Call(c, Some(m)))),
        2 => (call(), content_type(), version()).prop_map(|(c, content_type, version)| Probe {
            http_method: "POST",
            content_type,
            version,
            body: Body::Call(c, None),
        }),
        1 => (select(vec!["GET", "PUT", "DELETE", "PATCH", "OPTIONS"]), call()).prop_map(|(m, c)| Probe {
            http_method: m,
            ..valid_headers(Body::Call(c, None))
        }),
    ];
    prop_oneof![
        4 => call().prop_map(|c| valid_headers(Body::Call(c, None))),
        4 => near,
        2 => garbage().prop_map(valid_headers),
    ]
}

/// The JSON of a call, the known task and scenario applied.
fn call_json(c: &Call, known: &[String]) -> Value {
    let mut params = c.params.clone();
    if let (Some(i), false) = (&c.known_task, known.is_empty()) {
        let task = known[i.index(known.len())].clone();
        if let Some(p) = params.as_object_mut() {
            let member = if p.contains_key("taskId") { "taskId" } else { "id" };
            p.insert(member.into(), json!(task));
            p.remove("tenant");
        }
    }
    if let (Some(s), true) = (c.scenario, c.method.contains("Message")) {
        params["message"] = json!({
            "messageId": uuid::Uuid::new_v4().to_string(),
            "role": "ROLE_USER",
            "parts": [{"text": format!("{s} fuzz")}],
        });
        if let Some(p) = params.as_object_mut() {
            p.remove("tenant");
        }
    }
    json!({"jsonrpc": "2.0", "id": c.id, "method": c.method, "params": params})
}

fn nest(depth: usize) -> Value {
    (0..depth).fold(json!("leaf"), |inner, _| json!({"a": inner}))
}

fn mutate(mut v: Value, m: &Mutation) -> Value {
    let obj = v.as_object_mut().expect("a call is an object");
    match m {
        Mutation::JsonrpcVersion(x) => {
            obj.insert("jsonrpc".into(), x.clone());
        }
        Mutation::Id(x) => {
            obj.insert("id".into(), x.clone());
        }
        Mutation::Remove(k) => {
            obj.remove(*k);
        }
        Mutation::Unknown(k, x) => {
            obj.insert(k.clone(), x.clone());
        }
        Mutation::Params(x) => {
            obj.insert("params".into(), x.clone());
        }
        Mutation::ParamMember(i, x) => {
            if let Some(p) = obj.get_mut("params").and_then(Value::as_object_mut)
                && !p.is_empty()
            {
                let key = p.keys().nth(i.index(p.len())).cloned().expect("in range");
                p.insert(key, x.clone());
            }
        }
        Mutation::Huge(n) => {
            obj.insert(
                "params".into(),
                json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x".repeat(*n)}]}}),
            );
        }
        Mutation::Deep(d) => {
            if let Some(p) = obj.get_mut("params").and_then(Value::as_object_mut) {
                p.insert("metadata".into(), nest(*d));
            }
        }
        Mutation::Batch(n) => return Value::Array(vec![v; *n]),
        Mutation::MethodName(name) => {
            obj.insert("method".into(), json!(name));
        }
    }
    v
}

fn body_bytes(body: &Body, known: &[String]) -> Vec<u8> {
    match body {
        Body::Call(c, None) => call_json(c, known).to_string().into_bytes(),
        Body::Call(c, Some(m)) => mutate(call_json(c, known), m).to_string().into_bytes(),
        Body::Truncated(c, i) => {
            let mut b = call_json(c, known).to_string().into_bytes();
            b.truncate(i.index(b.len()));
            b
        }
        Body::BadUtf8(c, bad) => {
            let text = call_json(c, known).to_string();
            // Inside the method name's string, so the JSON is well formed but for the bytes.
            let at = text.find("\"method\":\"").map_or(0, |i| i + 10);
            let mut b = text.as_bytes()[..at].to_vec();
            b.extend_from_slice(bad);
            b.extend_from_slice(&text.as_bytes()[at..]);
            b
        }
        Body::Json(v) => v.to_string().into_bytes(),
        Body::Bytes(b) => b.clone(),
    }
}

/// Checks one JSON-RPC response object; `sent` is the request body as parsed, if it parsed.
fn check_response(r: &Value, sent: Option<&Value>) -> Result<(), TestCaseError> {
    prop_assert_eq!(&r["jsonrpc"], "2.0", "not a JSON-RPC 2.0 response: {}", r);
    let obj = r.as_object().ok_or_else(|| TestCaseError::fail(format!("not an object: {r}")))?;
    prop_assert!(obj.contains_key("id"), "no id member: {}", r);
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            prop_assert!(e["code"].is_i64(), "error code is not an integer: {}", r);
            prop_assert!(e["message"].is_string(), "error message is not a string: {}", r);
        }
        _ => prop_assert!(false, "not exactly one of result and error: {}", r),
    }
    // JSON-RPC 2.0 §5: the request's id, or null when it could not be read.
    let sent_id = sent.and_then(|s| s.get("id"));
    prop_assert!(
        r["id"].is_null() || Some(&r["id"]) == sent_id,
        "id {} answers a request with id {:?}",
        r["id"],
        sent_id
    );
    match sent {
        None => prop_assert_eq!(&r["error"]["code"], -32700, "a body that is not JSON: {}", r),
        Some(s) if !s.is_object() => prop_assert_eq!(&r["error"]["code"], -32600, "a JSON non-object: {}", r),
        Some(_) => {}
    }
    Ok(())
}

struct Fuzzer {
    rt: tokio::runtime::Runtime,
    server: MockServer,
    http: reqwest::Client,
    known: Mutex<Vec<String>>,
    /// What the answers were, printed at the end so a run shows what it reached.
    seen: Mutex<BTreeMap<String, usize>>,
}

impl Fuzzer {
    fn start() -> Fuzzer {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let mut config = MockConfig { sleep_percent: 10, ..MockConfig::default() };
        // A blocking SendMessage on a task that waits for a cancel answers after this, inside
        // ANSWER_TIMEOUT: the mock's own bound, not a hang.
        config.limits.max_blocking_ms = 1000;
        let server = rt.block_on(MockServer::start(config)).expect("the mock starts");
        let http = reqwest::Client::builder().timeout(ANSWER_TIMEOUT).build().unwrap();
        Fuzzer { rt, server, http, known: Mutex::new(Vec::new()), seen: Mutex::new(BTreeMap::new()) }
    }

    fn probe(&self, p: Probe) -> Result<(), TestCaseError> {
        let known = self.known.lock().unwrap().clone();
        let body = body_bytes(&p.body, &known);
        let sent: Option<Value> = serde_json::from_slice(&body).ok();
        let mut url = self.server.rpc_url();
        let mut req = self.http.request(p.http_method.parse().unwrap(), &url);
        if let Some(ct) = &p.content_type {
            req = req.header("content-type", ct);
        }
        match &p.version {
            Version::Header(v) => req = req.header("a2a-version", v),
            Version::Query(v) => {
                url = format!("{url}?A2A-Version={v}");
                req = self.http.request(p.http_method.parse().unwrap(), &url);
                if let Some(ct) = &p.content_type {
                    req = req.header("content-type", ct);
                }
            }
            Version::Missing => {}
        }
        let req = req.body(body.clone());
        let started = Instant::now();
        let outcome = self.rt.block_on(async {
            let resp = req.send().await.map_err(|e| format!("no answer: {e:?}"))?;
            let status = resp.status().as_u16();
            let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
            if ct.starts_with("text/event-stream") {
                return Ok((status, ct, read_bounded(resp).await?));
            }
            let bytes = resp.bytes().await.map_err(|e| format!("body cut short: {e:?}"))?;
            Ok::<_, String>((status, ct, bytes.to_vec()))
        });
        let (status, ct, answer) = outcome.map_err(|e| {
            TestCaseError::fail(format!("{e} after {:.2?} ({} request bytes)", started.elapsed(), body.len()))
        })?;
        prop_assert!(status < 500, "HTTP {} to {}: {}", status, excerpt(&body), String::from_utf8_lossy(&answer));
        if p.http_method != "POST" {
            self.tally(format!("{} {status}", p.http_method));
            return Ok(());
        }
        if status == 204 {
            prop_assert!(answer.is_empty(), "204 with a body");
            let notification = sent.as_ref().and_then(Value::as_object).is_some_and(|o| !o.contains_key("id"));
            prop_assert!(notification, "204 to a request with an id: {}", excerpt(&body));
            self.tally("204".into());
            return Ok(());
        }
        if ct.starts_with("text/event-stream") {
            prop_assert_eq!(status, 200);
            let mut parser = SseParser::new(SseLimits { max_event_bytes: 2 * 1024 * 1024, ..SseLimits::default() });
            let events = parser.feed(&answer).map_err(|e| TestCaseError::fail(format!("the mock's SSE: {e}")))?;
            self.tally("stream".into());
            for ev in &events {
                let v: Value = serde_json::from_str(&ev.data)
                    .map_err(|e| TestCaseError::fail(format!("SSE data is not JSON ({e}): {}", ev.data)))?;
                check_response(&v, sent.as_ref())?;
                self.remember(&v);
            }
            return Ok(());
        }
        prop_assert!(ct.starts_with("application/json"), "content type {:?} for {}", ct, excerpt(&body));
        let v: Value = serde_json::from_slice(&answer)
            .map_err(|e| TestCaseError::fail(format!("the answer is not JSON ({e}): {}", excerpt(&answer))))?;
        check_response(&v, sent.as_ref())?;
        self.remember(&v);
        Ok(())
    }

    fn tally(&self, what: String) {
        *self.seen.lock().unwrap().entry(what).or_default() += 1;
    }

    /// Keeps the ids of tasks the mock made, so later calls can name a task that exists.
    fn remember(&self, answer: &Value) {
        match answer["error"]["code"].as_i64() {
            Some(code) => self.tally(format!("error {code}")),
            None => self.tally("result".into()),
        }
        let r = &answer["result"];
        let id = r["task"]["id"].as_str().or_else(|| r["status"].is_object().then(|| r["id"].as_str()).flatten());
        if let Some(id) = id {
            let mut known = self.known.lock().unwrap();
            if known.len() < 64 && !known.iter().any(|k| k == id) {
                known.push(id.to_owned());
            }
        }
    }

    fn assert_healthy(&self) {
        self.rt.block_on(async {
            let card = self.http.get(self.server.card_url()).send().await.expect("the card is served");
            assert_eq!(card.status(), 200);
            let card: Value = card.json().await.expect("the card is JSON");
            assert!(card["name"].is_string(), "{card}");
            let body = json!({"jsonrpc": "2.0", "id": "health", "method": "SendMessage", "params": {"message": {
                "messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": "hello"}]}}});
            let r: Value = self
                .http
                .post(self.server.rpc_url())
                .header("content-type", "application/json")
                .header("a2a-version", "1.0")
                .body(body.to_string())
                .send()
                .await
                .expect("SendMessage is answered")
                .json()
                .await
                .expect("as JSON");
            assert_eq!(r["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
            assert_eq!(r["result"]["task"]["artifacts"][0]["parts"][0]["text"], "hello", "{r}");
        });
    }
}

/// Reads an event stream until it ends, STREAM_READ passes or STREAM_BYTES arrived, then drops it.
async fn read_bounded(mut resp: reqwest::Response) -> Result<Vec<u8>, String> {
    let deadline = tokio::time::Instant::now() + STREAM_READ;
    let mut out = Vec::new();
    while out.len() < STREAM_BYTES {
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Err(_) | Ok(Ok(None)) => break,
            Ok(Ok(Some(c))) => out.extend_from_slice(&c),
            Ok(Err(e)) => return Err(format!("stream failed: {e:?}")),
        }
    }
    // Only whole events are judged: the read may stop inside one.
    let end = out.windows(2).rposition(|w| w == b"\n\n").map_or(0, |i| i + 2);
    out.truncate(end);
    Ok(out)
}

fn excerpt(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 300 { format!("{}… ({} bytes)", &s[..s.floor_char_boundary(300)], b.len()) } else { s.into_owned() }
}

#[test]
fn the_mock_survives_generated_requests() {
    let f = Fuzzer::start();
    let cases = fuzz::cases(256, 100);
    let (ran, took) = fuzz::run("fuzz_mock", "the_mock_survives_generated_requests", cases, probe, |p| f.probe(p));
    assert_eq!(ran, cases);
    eprintln!("{ran} requests in {took:.2?}; {} tasks made along the way", f.known.lock().unwrap().len());
    eprintln!("answers (stream events counted one by one): {:?}", f.seen.lock().unwrap());
    f.assert_healthy();
}

//! The mock peer's HTTP+JSON/REST surface (A2A 1.0 §11), exchange by exchange: every operation at
//! its verb and path (and a `/{tenant}/…` variant), one task seen over both bindings, the HTTP
//! status and ErrorInfo of each A2A error (§5.4, §11.6), query parameters (§11.5), bare streams on
//! both SubscribeToTask verbs (§11.7), the card's two interfaces, `--binding`, and each REST fault
//! committing exactly its violation. Each test starts its own mock on 127.0.0.1:0; every REST
//! result and stream event is validated against the spec schema.

#[path = "common/peer.rs"]
mod peer;
#[path = "common/schema.rs"]
mod schema;

use std::time::Duration;

use a2a_conform::server::faults::FaultCatalogue;
use a2a_conform::server::{Binding, Bindings, ExtendedCard, MockConfig, WebhookPolicy};
use peer::{EXCHANGE_TIMEOUT, Peer, user_message};
use reqwest::Method as Verb;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

const ERROR_INFO: &str = "type.googleapis.com/google.rpc.ErrorInfo";
const BAD_REQUEST: &str = "type.googleapis.com/google.rpc.BadRequest";
const A2A_JSON: &str = "application/a2a+json";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn config(f: impl FnOnce(&mut MockConfig)) -> MockConfig {
    let mut c = MockConfig::default();
    f(&mut c);
    c
}

/// A mock committing the catalogued fault `id`.
fn with_fault(id: &str) -> MockConfig {
    let fault = FaultCatalogue::builtin().unwrap().get(id).unwrap_or_else(|| panic!("{id} is catalogued"));
    config(|c| c.faults = vec![fault])
}

/// A decoded REST answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    fn content_type(&self) -> &str {
        self.headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    /// The body of a 200 answer.
    fn ok(&self) -> &Value {
        assert_eq!(self.status, 200, "expected a result, got {} {}", self.status, self.body);
        &self.body
    }

    /// The ErrorInfo `reason` of an error answer.
    fn reason(&self) -> &str {
        let details = self.body["error"]["details"].as_array().unwrap_or_else(|| panic!("no details: {}", self.body));
        details
            .iter()
            .find(|d| d["@type"] == ERROR_INFO)
            .and_then(|d| d["reason"].as_str())
            .unwrap_or_else(|| panic!("no ErrorInfo in {}", self.body))
    }
}

/// The URL of `path` (as §11.3 writes it, from `/`) on the card's HTTP+JSON interface.
fn url(p: &Peer, path: &str) -> String {
    format!("{}{path}", p.server.rest_url().trim_end_matches('/'))
}

/// Sends `verb path` with `A2A-Version: 1.0` (unless `extra` names one) and, with a body,
/// `Content-Type: application/a2a+json`.
async fn send(p: &Peer, verb: Verb, path: &str, body: Option<Value>, extra: &[(&str, &str)]) -> reqwest::Response {
    let mut req = p.http.request(verb, url(p, path));
    if !extra.iter().any(|(k, _)| k.eq_ignore_ascii_case("a2a-version")) {
        req = req.header("a2a-version", "1.0");
    }
    if let Some(b) = body {
        req = req.header("content-type", A2A_JSON).body(b.to_string());
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    req.send().await.expect("mock answers")
}

/// A REST exchange, its answer checked: an error is a google.rpc.Status whose `code` is the HTTP
/// status and whose details each carry `@type` (§11.6); a result of `def` validates against it.
async fn rest_with(p: &Peer, verb: Verb, path: &str, body: Option<Value>, extra: &[(&str, &str)]) -> Answer {
    let resp = send(p, verb, path, body, extra).await;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("a body");
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {text}"));
    let a = Answer { status, headers, body };
    if status >= 400 {
        let e = &a.body["error"];
        assert_eq!(e["code"], status, "error.code is the HTTP status: {}", a.body);
        assert!(e["status"].is_string() && e["message"].is_string(), "{}", a.body);
        for d in e["details"].as_array().into_iter().flatten() {
            assert!(d["@type"].is_string(), "every detail has @type: {}", a.body);
        }
    }
    a
}

async fn rest(p: &Peer, verb: Verb, path: &str, body: Option<Value>) -> Answer {
    rest_with(p, verb, path, body, &[]).await
}

/// `rest`, expecting a result valid as the schema definition `def` in application/a2a+json.
async fn rest_ok(p: &Peer, verb: Verb, path: &str, body: Option<Value>, def: Option<&str>) -> Value {
    let a = rest(p, verb.clone(), path, body).await;
    assert_eq!(a.content_type(), A2A_JSON, "{verb} {path}");
    let v = a.ok().clone();
    if let Some(def) = def {
        schema::validate(def, &v).unwrap_or_else(|e| panic!("{verb} {path}: {e}\n{v}"));
    }
    v
}

/// POST /message:send with one text part (and `extra` in the request).
async fn send_text(p: &Peer, prefix: &str, text: &str, extra: Value) -> Value {
    let mut body = json!({"message": user_message(text)});
    if let (Value::Object(b), Value::Object(x)) = (&mut body, extra) {
        b.extend(x);
    }
    rest_ok(p, Verb::POST, &format!("{prefix}/message:send"), Some(body), Some("SendMessageResponse")).await
}

/// One SSE event as received.
#[derive(Debug, Clone)]
struct Event {
    id: Option<String>,
    data: Value,
}

impl Event {
    fn kind(&self) -> &str {
        self.data.as_object().and_then(|o| o.keys().next()).map(String::as_str).unwrap_or("")
    }

    fn state(&self) -> Option<&str> {
        let d = &self.data;
        d["task"]["status"]["state"].as_str().or_else(|| d["statusUpdate"]["status"]["state"].as_str())
    }
}

/// An SSE answer read event by event. `bare`: every data is a StreamResponse (validated).
struct Sse {
    resp: reqwest::Response,
    buf: String,
    closed: bool,
    bare: bool,
}

impl Sse {
    /// The next event, or `None` once the server closed the stream; a hang fails the test.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut data) = (None, Vec::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let data: Value = serde_json::from_str(&data.join("\n")).expect("SSE data is JSON");
                if self.bare {
                    assert!(data.get("jsonrpc").is_none(), "a REST event carries no JSON-RPC envelope: {data}");
                    schema::validate("StreamResponse", &data).unwrap_or_else(|e| panic!("{e}: {data}"));
                }
                return Some(Event { id, data });
            }
            if self.closed {
                assert!(self.buf.trim().is_empty(), "stream closed inside an event: {:?}", self.buf);
                return None;
            }
            match tokio::time::timeout(EXCHANGE_TIMEOUT, self.resp.chunk()).await.expect("an SSE event in time") {
                Ok(Some(c)) => self.buf.push_str(&String::from_utf8_lossy(&c).replace("\r\n", "\n")),
                Ok(None) => self.closed = true,
                Err(e) => panic!("SSE body: {e}"),
            }
        }
    }

    async fn rest(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(e) = self.next().await {
            out.push(e);
        }
        out
    }
}

/// Opens a REST stream; an answer that is not `text/event-stream` (an error before the stream
/// started) is returned as `Err`.
async fn open_stream(p: &Peer, verb: Verb, path: &str, body: Option<Value>) -> Result<Sse, Answer> {
    let resp = send(p, verb, path, body, &[]).await;
    let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    if !ct.starts_with("text/event-stream") {
        let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
        let body = resp.json().await.expect("a JSON error");
        return Err(Answer { status, headers, body });
    }
    assert_eq!(resp.status(), 200);
    Ok(Sse { resp, buf: String::new(), closed: false, bare: true })
}

/// Checks a whole task stream: a Task first, ids strictly increasing, closed after a terminal state.
fn assert_task_stream(events: &[Event], terminal: &str) {
    assert_eq!(events.first().map(Event::kind), Some("task"), "{events:?}");
    let ids: Vec<u64> =
        events.iter().map(|e| e.id.as_deref().expect("every event has an id:").parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase: {ids:?}");
    assert_eq!(events.last().and_then(Event::state), Some(terminal), "{events:?}");
}

fn unused_webhook() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("http://127.0.0.1:{port}/webhook")
}

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

/// §11.3: every operation at the proto's verb and path, with the result its method gives.
#[tokio::test]
async fn every_operation_at_its_verb_and_path() {
    let p = Peer::start(config(|c| {
        c.webhooks = WebhookPolicy::AllowLoopback;
        c.push_retries = 0;
        c.push_timeout_ms = 300;
        c.extended_card = ExtendedCard::Bearer("s3cret".into());
    }))
    .await;
    // POST /message:send
    let sent = send_text(&p, "", "tck-complete-task hello", json!({})).await;
    let task = &sent["task"];
    let (id, ctx) = (task["id"].as_str().unwrap().to_owned(), task["contextId"].as_str().unwrap().to_owned());
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    // GET /tasks/{id}?historyLength=1
    let got = rest_ok(&p, Verb::GET, &format!("/tasks/{id}?historyLength=1"), None, Some("Task")).await;
    assert_eq!(got["id"], id.as_str());
    assert_eq!(got["history"].as_array().map(Vec::len), Some(1), "historyLength is read: {got}");
    // GET /tasks?contextId=...
    let listed = rest_ok(&p, Verb::GET, &format!("/tasks?contextId={ctx}"), None, Some("ListTasksResponse")).await;
    assert_eq!(listed["tasks"][0]["id"], id.as_str());
    assert_eq!(listed["totalSize"], 1);
    // POST /tasks/{id}:cancel (a task that works until canceled)
    let working = send_text(&p, "", "tck-cancel now", json!({"configuration": {"returnImmediately": true}})).await;
    let wid = working["task"]["id"].as_str().unwrap().to_owned();
    let canceled = rest_ok(&p, Verb::POST, &format!("/tasks/{wid}:cancel"), None, Some("Task")).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    // The push config CRUD, under /tasks/{taskId}/pushNotificationConfigs
    let hook = unused_webhook();
    let base = format!("/tasks/{id}/pushNotificationConfigs");
    let created = rest_ok(
        &p,
        Verb::POST,
        &base,
        Some(json!({"id": "cfg-1", "url": hook, "token": "tok"})),
        Some("TaskPushNotificationConfig"),
    )
    .await;
    assert_eq!((&created["id"], &created["taskId"]), (&json!("cfg-1"), &json!(id)));
    assert!(created.get("token").is_none(), "the token is a secret");
    let list = rest_ok(&p, Verb::GET, &base, None, Some("ListTaskPushNotificationConfigsResponse")).await;
    assert_eq!(list["configs"][0]["id"], "cfg-1");
    let one = rest_ok(&p, Verb::GET, &format!("{base}/cfg-1"), None, Some("TaskPushNotificationConfig")).await;
    assert_eq!(one["url"], hook.as_str());
    assert_eq!(rest_ok(&p, Verb::DELETE, &format!("{base}/cfg-1"), None, None).await, json!({}));
    let gone = rest(&p, Verb::GET, &format!("{base}/cfg-1"), None).await;
    assert_eq!((gone.status, gone.reason()), (404, "TASK_NOT_FOUND"));
    // GET /extendedAgentCard: the bearer token, as over JSON-RPC
    let refused = rest(&p, Verb::GET, "/extendedAgentCard", None).await;
    assert_eq!((refused.status, refused.reason()), (401, "UNAUTHENTICATED"));
    assert!(refused.headers.contains_key("www-authenticate"));
    let card = rest_with(&p, Verb::GET, "/extendedAgentCard", None, &[("authorization", "Bearer s3cret")]).await;
    schema::assert_valid("AgentCard", card.ok());
    assert!(card.ok()["skills"].as_array().unwrap().iter().any(|s| s["id"] == "extended-diagnostics"));
    // A verb a path does not serve: 405 and Allow.
    let wrong = rest(&p, Verb::PUT, "/tasks", None).await;
    assert_eq!((wrong.status, wrong.headers["allow"].to_str().unwrap()), (405, "GET"));
    let nothing = rest(&p, Verb::GET, "/no/such/operation/here/x", None).await;
    assert_eq!(nothing.status, 404);
    // A client that joins the card's URL (ending in `/`) and `/tasks` asks for `//tasks`.
    let joined = p.http.get(format!("{}/tasks", p.server.rest_url())).header("a2a-version", "1.0");
    assert_eq!(joined.send().await.unwrap().status(), 200);
}

/// The `/{tenant}/…` variant of every path: tasks live under the tenant their path names, as
/// under the `tenant` member of a JSON-RPC call's params.
#[tokio::test]
async fn tenant_paths_and_the_tenant_of_json_rpc_params_are_one() {
    let p = Peer::start(config(|c| c.tenant = "acme".into())).await;
    let card: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    assert_eq!(card["supportedInterfaces"][1]["tenant"], "acme");
    let sent = send_text(&p, "/acme", "tck-complete-task hi", json!({})).await;
    let id = sent["task"]["id"].as_str().unwrap().to_owned();
    rest_ok(&p, Verb::GET, &format!("/acme/tasks/{id}"), None, Some("Task")).await;
    let listed = rest_ok(&p, Verb::GET, "/acme/tasks", None, Some("ListTasksResponse")).await;
    assert_eq!(listed["totalSize"], 1);
    let elsewhere = rest(&p, Verb::GET, &format!("/tasks/{id}"), None).await;
    assert_eq!((elsewhere.status, elsewhere.reason()), (404, "TASK_NOT_FOUND"));
    assert_eq!(rest_ok(&p, Verb::GET, "/tasks", None, None).await["totalSize"], 0);
    let rpc = p.call("GetTask", json!({"id": id, "tenant": "acme"})).await;
    assert_eq!(rpc.result()["id"], id.as_str());
    let cancel = rest(&p, Verb::POST, &format!("/acme/tasks/{id}:cancel"), None).await;
    assert_eq!((cancel.status, cancel.reason()), (400, "TASK_NOT_CANCELABLE"));
}

/// One store, one behaviour: a task created over JSON-RPC is read and canceled over REST, and the
/// cancel shows over JSON-RPC; a task created over REST is read over JSON-RPC.
#[tokio::test]
async fn one_task_seen_over_both_bindings() {
    let p = Peer::default().await;
    let created = p
        .call(
            "SendMessage",
            json!({"message": user_message("tck-cancel work"), "configuration": {"returnImmediately": true}}),
        )
        .await;
    let id = created.result()["task"]["id"].as_str().unwrap().to_owned();
    let over_rest = rest_ok(&p, Verb::GET, &format!("/tasks/{id}"), None, Some("Task")).await;
    assert_eq!(over_rest["id"], id.as_str());
    assert_ne!(over_rest["status"]["state"], "TASK_STATE_CANCELED");
    let canceled = rest_ok(&p, Verb::POST, &format!("/tasks/{id}:cancel"), Some(json!({})), Some("Task")).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let over_rpc = p.call("GetTask", json!({"id": id})).await;
    assert_eq!(over_rpc.result()["status"]["state"], "TASK_STATE_CANCELED");

    let sent = send_text(&p, "", "tck-complete-task back", json!({})).await;
    let rid = sent["task"]["id"].as_str().unwrap();
    let read = p.call("GetTask", json!({"id": rid})).await;
    assert_eq!(read.result()["status"]["state"], "TASK_STATE_COMPLETED");
    let listed = p.call("ListTasks", json!({})).await;
    assert_eq!(listed.result()["totalSize"], 2, "both tasks in the one store");
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// §5.4 (1.0.1) and §11.6: each A2A error the mock can give, with its HTTP status, google.rpc
/// status name, and an ErrorInfo (domain a2a-protocol.org) naming it.
#[tokio::test]
async fn each_a2a_error_has_its_http_status_and_error_info() {
    let p = Peer::start(config(|c| c.extended_card = ExtendedCard::Unconfigured)).await;
    let done = send_text(&p, "", "tck-complete-task x", json!({})).await;
    let done_id = done["task"]["id"].as_str().unwrap().to_owned();
    let png = json!({"message": {"messageId": "m-png", "role": "ROLE_USER",
        "parts": [{"raw": "iVBORw0KGgo=", "mediaType": "image/png"}]}});
    let cases: Vec<(Answer, u16, &str, &str)> = vec![
        (rest(&p, Verb::GET, "/tasks/missing", None).await, 404, "NOT_FOUND", "TASK_NOT_FOUND"),
        (
            rest(&p, Verb::POST, &format!("/tasks/{done_id}:cancel"), None).await,
            400,
            "FAILED_PRECONDITION",
            "TASK_NOT_CANCELABLE",
        ),
        (
            rest(&p, Verb::POST, &format!("/tasks/{done_id}:subscribe"), None).await,
            400,
            "FAILED_PRECONDITION",
            "UNSUPPORTED_OPERATION",
        ),
        (rest(&p, Verb::POST, "/message:send", Some(png)).await, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"),
        (
            rest(&p, Verb::GET, "/extendedAgentCard", None).await,
            400,
            "FAILED_PRECONDITION",
            "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        ),
        (
            rest_with(&p, Verb::GET, "/tasks", None, &[("a2a-version", "9.9")]).await,
            400,
            "FAILED_PRECONDITION",
            "VERSION_NOT_SUPPORTED",
        ),
    ];
    for (a, status, name, reason) in &cases {
        assert_eq!(
            (a.status, a.body["error"]["status"].as_str(), a.reason()),
            (*status, Some(*name), *reason),
            "{}",
            a.body
        );
        assert_eq!(a.content_type(), A2A_JSON);
        let info = a.body["error"]["details"].as_array().unwrap().iter().find(|d| d["@type"] == ERROR_INFO).unwrap();
        assert_eq!(info["domain"], "a2a-protocol.org");
    }
    assert_eq!(cases[0].0.body["error"]["details"][0]["metadata"]["taskId"], "missing");

    let no_push = Peer::start(config(|c| c.push_notifications = false)).await;
    let a = rest(&no_push, Verb::GET, "/tasks/t/pushNotificationConfigs", None).await;
    assert_eq!((a.status, a.reason()), (400, "PUSH_NOTIFICATION_NOT_SUPPORTED"));

    let ext = Peer::start(config(|c| c.required_extensions = vec!["urn:x:needed".into()])).await;
    let a = rest(&ext, Verb::GET, "/tasks", None).await;
    assert_eq!((a.status, a.reason()), (400, "EXTENSION_SUPPORT_REQUIRED"));
    let a = rest_with(&ext, Verb::GET, "/tasks", None, &[("a2a-extensions", "urn:x:needed")]).await;
    a.ok();
    assert_eq!(a.headers["a2a-extensions"], "urn:x:needed", "the activated extension is echoed");

    let auth = Peer::start(config(|c| c.callers = vec!["tok-a".into()])).await;
    let a = rest(&auth, Verb::GET, "/tasks", None).await;
    assert_eq!((a.status, a.body["error"]["status"].as_str()), (401, Some("UNAUTHENTICATED")));
    assert!(a.headers["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    rest_with(&auth, Verb::GET, "/tasks", None, &[("authorization", "Bearer tok-a")]).await.ok();

    // Not A2A errors: invalid params (400, BadRequest), a body that is not JSON, no A2A-Version.
    let a = rest(&p, Verb::POST, "/message:send", Some(json!({"message": {"role": "ROLE_USER"}}))).await;
    assert_eq!((a.status, a.body["error"]["status"].as_str()), (400, Some("INVALID_ARGUMENT")));
    assert_eq!(a.body["error"]["details"][0]["@type"], BAD_REQUEST);
    let raw = p
        .http
        .post(url(&p, "/message:send"))
        .header("a2a-version", "1.0")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 400, "application/json is read too; the body is not JSON");
    let plain = p.http.post(url(&p, "/message:send")).header("a2a-version", "1.0").header("content-type", "text/plain");
    let plain = plain.body("{}").send().await.unwrap();
    assert_eq!(plain.status(), 415, "HTTP's Unsupported Media Type, not an A2A error");
    let plain: Value = plain.json().await.unwrap();
    assert_eq!(
        (plain["error"]["code"].as_i64(), plain["error"]["status"].as_str()),
        (Some(415), Some("INVALID_ARGUMENT"))
    );
    let unversioned = p.http.get(url(&p, "/tasks")).send().await.unwrap();
    assert_eq!(unversioned.status(), 400, "no A2A-Version is 0.3 (§3.6.2)");
}

// ---------------------------------------------------------------------------------------------
// Query parameters
// ---------------------------------------------------------------------------------------------

/// §11.5: camelCase names, booleans `true`/`false`, decimal numbers, ISO 8601 timestamps, enums by
/// name; a bad value is the -32602 the JSON-RPC call with that value gets, as 400 INVALID_ARGUMENT.
#[tokio::test]
async fn query_parameters_are_read_as_json_rpc_params_are() {
    let p = Peer::default().await;
    let a = send_text(&p, "", "tck-artifact-text one", json!({})).await;
    let ctx = a["task"]["contextId"].as_str().unwrap().to_owned();
    send_text(
        &p,
        "",
        "tck-complete-task two",
        json!({"message": {"messageId": "m-2", "role": "ROLE_USER",
        "contextId": ctx, "parts": [{"text": "tck-complete-task two"}]}}),
    )
    .await;
    send_text(&p, "", "tck-input-required three", json!({})).await;

    async fn list_with(p: &Peer, q: &str) -> Value {
        rest_ok(p, Verb::GET, &format!("/tasks?{q}"), None, Some("ListTasksResponse")).await
    }
    assert_eq!(list_with(&p, &format!("contextId={ctx}")).await["totalSize"], 2);
    assert_eq!(list_with(&p, "status=TASK_STATE_INPUT_REQUIRED").await["totalSize"], 1);
    let page = list_with(&p, "pageSize=1").await;
    assert_eq!((page["pageSize"].as_i64(), page["tasks"].as_array().map(Vec::len)), (Some(1), Some(1)));
    let token = page["nextPageToken"].as_str().unwrap().to_owned();
    assert!(!token.is_empty());
    let next = list_with(&p, &format!("pageSize=1&pageToken={token}")).await;
    assert_ne!(next["tasks"][0]["id"], page["tasks"][0]["id"]);
    let with = list_with(&p, &format!("contextId={ctx}&includeArtifacts=true")).await;
    assert!(with["tasks"].as_array().unwrap().iter().any(|t| t.get("artifacts").is_some()));
    let without = list_with(&p, &format!("contextId={ctx}&includeArtifacts=false")).await;
    assert!(without["tasks"].as_array().unwrap().iter().all(|t| t.get("artifacts").is_none()));
    assert_eq!(list_with(&p, "historyLength=0").await["tasks"][0].get("history"), None);
    assert_eq!(list_with(&p, "statusTimestampAfter=2999-01-01T00:00:00Z").await["totalSize"], 0);
    assert_eq!(list_with(&p, "statusTimestampAfter=2000-01-01T00:00:00%2B01:00").await["totalSize"], 3);
    // The proto's own names are read too, as ProtoJSON parsers read them.
    assert_eq!(list_with(&p, &format!("context_id={ctx}")).await["totalSize"], 2);

    for (query, member, value) in [
        ("pageSize=ten", "pageSize", json!("ten")),
        ("status=TASK_STATE_BOGUS", "status", json!("TASK_STATE_BOGUS")),
        ("includeArtifacts=yes", "includeArtifacts", json!("yes")),
        ("historyLength=-1", "historyLength", json!(-1)),
        ("statusTimestampAfter=yesterday", "statusTimestampAfter", json!("yesterday")),
        ("pageSize=0", "pageSize", json!(0)),
    ] {
        let a = rest(&p, Verb::GET, &format!("/tasks?{query}"), None).await;
        assert_eq!(
            (a.status, a.body["error"]["status"].as_str()),
            (400, Some("INVALID_ARGUMENT")),
            "{query}: {}",
            a.body
        );
        let rpc = p.call("ListTasks", json!({ member: value })).await;
        assert_eq!(rpc.error_code(), -32602, "{query}");
        assert_eq!(a.body["error"]["message"], rpc.body["error"]["message"], "{query}: the same words");
        assert_eq!(a.body["error"]["details"], rpc.body["error"]["data"], "{query}: the same field violations");
    }
    let a = rest(&p, Verb::GET, "/tasks/x?historyLength=many", None).await;
    assert_eq!(a.body["error"]["details"][0]["fieldViolations"][0]["field"], "historyLength");
    let twice = rest(&p, Verb::GET, "/tasks?pageSize=1&pageSize=2", None).await;
    assert_eq!(twice.status, 400);
}

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

/// §11.7: POST /message:stream and SubscribeToTask on both verbs (digest §14 item 1) stream bare
/// StreamResponses with `id:` lines, broadcast alike, closing after the terminal state.
#[tokio::test]
async fn streams_are_bare_on_both_subscribe_verbs_and_close_at_terminal() {
    let p = Peer::default().await;
    let mut s = open_stream(
        &p,
        Verb::POST,
        "/message:stream",
        Some(json!({"message": user_message("tck-stream-artifact-chunked go")})),
    )
    .await
    .expect("a stream");
    assert_eq!(s.resp.headers()["content-type"], "text/event-stream");
    let events = s.rest().await;
    assert_task_stream(&events, "TASK_STATE_COMPLETED");
    assert!(events.iter().any(|e| e.kind() == "artifactUpdate"), "{events:?}");

    // A task waiting for input; two subscribers, GET and POST, then the follow-up completes it.
    let waiting = send_text(&p, "", "tck-input-required more", json!({})).await;
    let id = waiting["task"]["id"].as_str().unwrap().to_owned();
    let ctx = waiting["task"]["contextId"].as_str().unwrap().to_owned();
    let path = format!("/tasks/{id}:subscribe");
    let mut by_get = open_stream(&p, Verb::GET, &path, None).await.expect("GET subscribes");
    let mut by_post = open_stream(&p, Verb::POST, &path, None).await.expect("POST subscribes");
    let first_get = by_get.next().await.unwrap();
    let first_post = by_post.next().await.unwrap();
    assert_eq!((first_get.kind(), first_post.kind()), ("task", "task"));
    assert_eq!(first_get.state(), Some("TASK_STATE_INPUT_REQUIRED"));
    let follow_up = json!({"message": {"messageId": "m-follow", "role": "ROLE_USER", "taskId": id, "contextId": ctx,
        "parts": [{"text": "here it is"}]}});
    send_text(&p, "", "", follow_up).await;
    let mut got = vec![first_get];
    got.extend(by_get.rest().await);
    let mut posted = vec![first_post];
    posted.extend(by_post.rest().await);
    assert_task_stream(&got, "TASK_STATE_COMPLETED");
    assert_task_stream(&posted, "TASK_STATE_COMPLETED");
    let ids = |v: &[Event]| v.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&got), ids(&posted), "both verbs get the same events");

    // Before the stream: an HTTP error, not SSE.
    let missing = open_stream(&p, Verb::GET, "/tasks/nope:subscribe", None).await.err().expect("an error");
    assert_eq!(missing.status, 404);
}

/// An error once the stream has started (here an event over --max-event-bytes) is a `data:`
/// holding the Status body an HTTP error would have, and the stream ends.
#[tokio::test]
async fn an_error_mid_stream_is_a_status_event() {
    let p = Peer::start(config(|c| c.limits.max_event_bytes = 64)).await;
    let mut s =
        open_stream(&p, Verb::POST, "/message:stream", Some(json!({"message": user_message("tck-stream-001 x")})))
            .await
            .expect("a stream");
    s.bare = false;
    let events = s.rest().await;
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0].data["error"];
    assert_eq!((e["code"].as_i64(), e["status"].as_str()), (Some(500), Some("INTERNAL")), "{events:?}");
}

/// The streaming capability off: both streaming operations are 400 UNSUPPORTED_OPERATION.
#[tokio::test]
async fn streaming_not_declared_is_unsupported_over_rest() {
    let p = Peer::start(config(|c| c.streaming = false)).await;
    let a = open_stream(&p, Verb::POST, "/message:stream", Some(json!({"message": user_message("x")}))).await;
    let a = a.err().expect("no stream");
    assert_eq!((a.status, a.reason()), (400, "UNSUPPORTED_OPERATION"));
}

// ---------------------------------------------------------------------------------------------
// The card and --binding
// ---------------------------------------------------------------------------------------------

async fn card(p: &Peer) -> Value {
    p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap()
}

/// JSON-RPC first, then HTTP+JSON at the base URL; `--binding` declares and serves one of them,
/// and `--path-prefix` moves both.
#[tokio::test]
async fn the_card_lists_what_is_served_and_only_that_is_served() {
    let p = Peer::default().await;
    let c = card(&p).await;
    schema::assert_valid("AgentCard", &c);
    assert_eq!(
        c["supportedInterfaces"],
        json!([
            {"url": p.server.rpc_url(), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": format!("{}/", p.server.url()), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
        ])
    );
    assert_eq!(p.server.rest_url(), format!("{}/", p.server.url()));

    let rpc_only = Peer::start(config(|c| c.bindings = Bindings::JsonRpc)).await;
    let c = card(&rpc_only).await;
    assert_eq!(c["supportedInterfaces"].as_array().unwrap().len(), 1);
    assert_eq!(c["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(send(&rpc_only, Verb::GET, "/tasks", None, &[]).await.status(), 404, "REST is not served");
    let body = json!({"message": user_message("hi")});
    assert_eq!(send(&rpc_only, Verb::POST, "/message:send", Some(body), &[]).await.status(), 404);
    rpc_only.send_text("tck-complete-task still").await.result();

    let rest_only = Peer::start(config(|c| c.bindings = Bindings::HttpJson)).await;
    let c = card(&rest_only).await;
    assert_eq!(c["supportedInterfaces"].as_array().unwrap().len(), 1);
    assert_eq!(c["supportedInterfaces"][0]["protocolBinding"], Binding::HttpJson.protocol_binding());
    let rpc = rest_only.post_rpc(&json!(1), "GetTask", json!({"id": "x"}), &[]).await;
    assert_ne!(rpc.status(), 200, "JSON-RPC is not served");
    send_text(&rest_only, "", "tck-complete-task hi", json!({})).await;

    let prefixed = Peer::start(config(|c| c.path_prefix = "/agents/a".into())).await;
    let c = card(&prefixed).await;
    assert_eq!(c["supportedInterfaces"][1]["url"], format!("{}/", prefixed.server.url()));
    assert!(prefixed.server.rest_url().ends_with("/agents/a/"));
    send_text(&prefixed, "", "tck-complete-task hi", json!({})).await;
    let root = prefixed.http.get(format!("http://{}/tasks", prefixed.server.addr())).header("a2a-version", "1.0");
    assert_eq!(root.send().await.unwrap().status(), 404, "nothing at the root");
}

// ---------------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------------

/// The REST faults are catalogued for HTTP+JSON only, name the checks being written for them, and
/// wait for those checks before the kill matrix runs them.
#[test]
fn the_rest_faults_are_scoped_and_name_their_checks() {
    let c = FaultCatalogue::builtin().unwrap();
    for (id, kill) in [
        ("FAULT-REST-ERR-NO-ERROR-INFO", "REST-ERR-001"),
        ("FAULT-REST-ERR-STATUS-200", "REST-ERR-002"),
        ("FAULT-REST-QUERY-SNAKE-CASE", "REST-QUERY-001"),
        ("FAULT-REST-CT-JSON", "REST-CT-001"),
        ("FAULT-REST-SSE-JSONRPC-ENVELOPE", "REST-SSE-001"),
        ("FAULT-REST-GET-OTHER-TIMESTAMP", "BIND-EQ-001"),
    ] {
        let f = c.get(id).unwrap_or_else(|| panic!("{id}"));
        assert_eq!(f.kills, [kill], "{id}");
        assert_eq!(f.bindings, [Binding::HttpJson], "{id}");
        // The checks exist: the matrix runs them; a fleet never commits them (a registry run
        // narrowed to JSON-RPC would not see them).
        assert!(!f.awaiting_checks && !f.fleet_safe(), "{id}");
    }
}

/// An error answer over both bindings, for a fault test to compare.
async fn missing_task_both_ways(p: &Peer) -> (Answer, peer::Reply) {
    (rest(p, Verb::GET, "/tasks/missing", None).await, p.call("GetTask", json!({"id": "missing"})).await)
}

#[tokio::test]
async fn fault_rest_error_without_error_info() {
    let p = Peer::start(with_fault("FAULT-REST-ERR-NO-ERROR-INFO")).await;
    let (a, rpc) = missing_task_both_ways(&p).await;
    assert_eq!((a.status, &a.body["error"]["status"]), (404, &json!("NOT_FOUND")), "the status is right");
    assert_eq!(a.body["error"]["details"], json!([]), "but no ErrorInfo: {}", a.body);
    assert_eq!(rpc.body["error"]["data"][0]["reason"], "TASK_NOT_FOUND", "JSON-RPC keeps it");
    let bad = rest(&p, Verb::GET, "/tasks?pageSize=ten", None).await;
    assert_eq!(bad.body["error"]["details"][0]["@type"], BAD_REQUEST, "a BadRequest stays");
}

#[tokio::test]
async fn fault_rest_task_not_found_with_status_200() {
    let p = Peer::start(with_fault("FAULT-REST-ERR-STATUS-200")).await;
    let (a, rpc) = missing_task_both_ways(&p).await;
    assert_eq!(a.status, 200);
    assert_eq!((a.body["error"]["code"].as_i64(), a.reason()), (Some(404), "TASK_NOT_FOUND"), "the body as it was");
    assert_eq!(rpc.error_code(), -32001);
    let done = send_text(&p, "", "tck-complete-task x", json!({})).await;
    let id = done["task"]["id"].as_str().unwrap();
    let other = rest(&p, Verb::POST, &format!("/tasks/{id}:cancel"), None).await;
    assert_eq!(other.status, 400, "other errors keep their status");
}

#[tokio::test]
async fn fault_rest_query_names_in_snake_case_only() {
    let p = Peer::start(with_fault("FAULT-REST-QUERY-SNAKE-CASE")).await;
    let one = send_text(&p, "", "tck-complete-task a", json!({})).await;
    send_text(&p, "", "tck-complete-task b", json!({})).await;
    let ctx = one["task"]["contextId"].as_str().unwrap();
    let camel = rest_ok(&p, Verb::GET, &format!("/tasks?contextId={ctx}&pageSize=1"), None, None).await;
    assert_eq!((camel["totalSize"].as_i64(), camel["pageSize"].as_i64()), (Some(2), Some(50)), "camelCase ignored");
    let snake = rest_ok(&p, Verb::GET, &format!("/tasks?context_id={ctx}&page_size=1"), None, None).await;
    assert_eq!((snake["totalSize"].as_i64(), snake["pageSize"].as_i64()), (Some(1), Some(1)));
    let rpc = p.call("ListTasks", json!({"contextId": ctx})).await;
    assert_eq!(rpc.result()["totalSize"], 1, "JSON-RPC params are untouched");
}

#[tokio::test]
async fn fault_rest_content_type_application_json() {
    let p = Peer::start(with_fault("FAULT-REST-CT-JSON")).await;
    let a = rest(&p, Verb::GET, "/tasks", None).await;
    assert_eq!((a.status, a.content_type()), (200, "application/json"));
    let (e, rpc) = missing_task_both_ways(&p).await;
    assert_eq!((e.status, e.content_type(), e.reason()), (404, "application/json", "TASK_NOT_FOUND"));
    assert_eq!(rpc.headers["content-type"], "application/json");
    let mut s =
        open_stream(&p, Verb::POST, "/message:stream", Some(json!({"message": user_message("tck-stream-001 x")})))
            .await
            .expect("streams keep text/event-stream");
    assert_task_stream(&s.rest().await, "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn fault_rest_stream_events_in_a_json_rpc_envelope() {
    let p = Peer::start(with_fault("FAULT-REST-SSE-JSONRPC-ENVELOPE")).await;
    let mut s =
        open_stream(&p, Verb::POST, "/message:stream", Some(json!({"message": user_message("tck-stream-001 x")})))
            .await
            .expect("a stream");
    s.bare = false;
    let events = s.rest().await;
    assert!(events.len() >= 2);
    for e in &events {
        assert_eq!((&e.data["jsonrpc"], &e.data["id"]), (&json!("2.0"), &json!(1)), "{e:?}");
        schema::assert_valid("StreamResponse", &e.data["result"]);
        assert!(e.id.is_some(), "ids are kept");
    }
    assert_eq!(events[0].data["result"].as_object().unwrap().keys().next().unwrap(), "task");
    // JSON-RPC streams are as they were.
    let rpc = p.stream("SendStreamingMessage", json!({"message": user_message("tck-stream-001 y")})).await.unwrap();
    assert_eq!(rpc[0].data["id"], "s-1");
    // Non-streaming REST answers are untouched.
    assert!(rest_ok(&p, Verb::GET, "/tasks", None, None).await.get("jsonrpc").is_none());
}

/// A fault without a `bindings` filter is committed over REST as over JSON-RPC: a `result`
/// mutation on the REST body, an error-code change rendered as the new code's HTTP error; a fault
/// scoped to JSON-RPC leaves REST alone.
#[tokio::test]
async fn unscoped_faults_reach_rest_answers_and_json_rpc_ones_do_not() {
    let p = Peer::start(with_fault("FAULT-BARE-TASK")).await;
    let sent =
        rest(&p, Verb::POST, "/message:send", Some(json!({"message": user_message("tck-complete-task x")}))).await;
    assert!(sent.ok().get("task").is_none() && sent.ok()["id"].is_string(), "a bare Task: {}", sent.body);

    let p = Peer::start(with_fault("FAULT-ERR-INVALID-PARAMS-CODE")).await;
    let rpc = p.call("ListTasks", json!({"pageSize": "ten"})).await;
    assert_eq!(rpc.error_code(), -32603);
    let a = rest(&p, Verb::GET, "/tasks?pageSize=ten", None).await;
    assert_eq!((a.status, a.body["error"]["status"].as_str()), (500, Some("INTERNAL")), "{}", a.body);

    // A code change is JSON-RPC's alone: a REST client reads the ErrorInfo, which keeps its reason.
    let p = Peer::start(with_fault("FAULT-ERR-TASK-NOT-FOUND-CODE")).await;
    let (a, rpc) = missing_task_both_ways(&p).await;
    assert_eq!(rpc.error_code(), -32603);
    assert_eq!((a.status, a.body["error"]["status"].as_str()), (404, Some("NOT_FOUND")), "{}", a.body);

    let p = Peer::start(with_fault("FAULT-ENV-HTTP-500-ERRORS")).await;
    let (a, rpc) = missing_task_both_ways(&p).await;
    assert_eq!((a.status, rpc.status), (404, 500), "scoped to JSON-RPC");
}

/// Bounded: a REST exchange with the mock never waits for long, whatever the test machine does.
#[tokio::test]
async fn a_blocking_send_over_rest_returns_the_finished_task() {
    let p = Peer::default().await;
    let started = std::time::Instant::now();
    let sent = send_text(&p, "", "tck-long-running x", json!({})).await;
    assert_eq!(sent["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(started.elapsed() < Duration::from_secs(15));
}

/// `a2a-conform mock --binding B` as a user runs it: the lines it prints name what it serves, and
/// its card declares that binding alone.
#[tokio::test]
async fn the_binding_flag_of_the_mock_command() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let http = reqwest::Client::builder().timeout(EXCHANGE_TIMEOUT).build().unwrap();
    for (flag, printed, other, binding) in
        [("jsonrpc", "JSON-RPC:", "HTTP+JSON:", "JSONRPC"), ("http+json", "HTTP+JSON:", "JSON-RPC:", "HTTP+JSON")]
    {
        let mut child = KillOnDrop(
            Command::new(env!("CARGO_BIN_EXE_a2a-conform"))
                .args(["mock", "--port", "0", "--binding", flag])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("the binary starts"),
        );
        let stdout = child.0.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
            let _ = tx.send(lines.by_ref().take(3).collect::<Vec<String>>());
            for _ in lines {}
        });
        let lines = rx.recv_timeout(Duration::from_secs(30)).expect("three lines within 30 s");
        assert!(lines[2].starts_with(printed), "--binding {flag}: {lines:?}");
        assert!(lines.iter().all(|l| !l.starts_with(other)), "--binding {flag}: {lines:?}");
        let base = lines[0].strip_prefix("listening on ").unwrap();
        let url = lines[2].split_whitespace().nth(1).unwrap();
        let c: Value =
            http.get(format!("{base}/.well-known/agent-card.json")).send().await.unwrap().json().await.unwrap();
        assert_eq!(c["supportedInterfaces"].as_array().unwrap().len(), 1, "--binding {flag}: {c}");
        assert_eq!(
            (c["supportedInterfaces"][0]["protocolBinding"].as_str(), c["supportedInterfaces"][0]["url"].as_str()),
            (Some(binding), Some(url))
        );
        let rest = http.get(format!("{base}/tasks")).header("a2a-version", "1.0").send().await.unwrap();
        assert_eq!(rest.status() == 200, flag == "http+json", "--binding {flag}: GET /tasks is {}", rest.status());
    }
}

//! The mock peer's JSON-RPC surface, exchange by exchange (A2A 1.0, JSON-RPC binding, §9): every
//! method's success shape, every error code the mock produces, every scenario file, the agent card
//! and its caching, and the resource limits. Each test starts its own in-process mock on
//! 127.0.0.1:0 with the configuration it needs and talks to it over real HTTP; every JSON-RPC
//! answer is validated against the spec schema by `peer`.

#[path = "common/peer.rs"]
mod peer;
#[path = "common/schema.rs"]
mod schema;

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use a2a_conform::protocol::Timestamp;
use a2a_conform::server::{ExtendedCard, MissingVersion, MockConfig, WebhookPolicy};
use futures::future::join_all;
use peer::{Peer, Reply, user_message};
use serde_json::{Value, json};

const ERROR_INFO: &str = "type.googleapis.com/google.rpc.ErrorInfo";
const BAD_REQUEST: &str = "type.googleapis.com/google.rpc.BadRequest";
const DOMAIN: &str = "a2a-protocol.org";
const JSON_CT: (&str, &str) = ("content-type", "application/json");
const V1: (&str, &str) = ("a2a-version", "1.0");
const SCENARIO_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/mock-peer/scenarios");

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The default configuration changed by `f`.
fn config(f: impl FnOnce(&mut MockConfig)) -> MockConfig {
    let mut c = MockConfig::default();
    f(&mut c);
    c
}

/// A configuration that may register webhooks on 127.0.0.1 and gives up on them quickly.
fn loopback_push_config() -> MockConfig {
    config(|c| {
        c.webhooks = WebhookPolicy::AllowLoopback;
        c.push_retries = 0;
        c.push_timeout_ms = 500;
    })
}

/// A webhook URL on a loopback port nobody listens on (CRUD needs no delivery to succeed).
fn unused_webhook() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("http://127.0.0.1:{port}/webhook")
}

/// A JSON-RPC request body with id 1.
fn request(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

/// POSTs `body` to `url` with exactly `headers` and returns the decoded answer, its envelope
/// checked as `method`'s (pass "" when only an error is expected).
async fn post_to(p: &Peer, method: &str, url: &str, body: impl Into<reqwest::Body>, headers: &[(&str, &str)]) -> Reply {
    let mut req = p.http.post(url).body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.expect("mock answers");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let ct = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert!(ct.starts_with("application/json"), "content type {ct:?}");
    let body: Value = resp.json().await.expect("JSON body");
    peer::check_envelope(method, &body);
    Reply { status, headers, body }
}

/// POSTs a raw body to the JSON-RPC URL with `Content-Type: application/json` and `A2A-Version: 1.0`.
async fn post_json(p: &Peer, body: impl Into<reqwest::Body>) -> Reply {
    post_to(p, "", &p.server.rpc_url(), body, &[JSON_CT, V1]).await
}

/// SendMessage params: one text message with `configuration`.
fn send_params(text: &str, configuration: Value) -> Value {
    json!({"message": user_message(text), "configuration": configuration})
}

/// A follow-up ROLE_USER message naming only the task (§3.4.3: the server infers the context).
fn follow_up(task_id: &str, text: &str) -> Value {
    json!({
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER",
        "taskId": task_id,
        "parts": [{"text": text}],
    })
}

/// The task of a SendMessage reply, failing unless the reply is `{"task": …}`.
#[track_caller]
fn task_of(r: &Reply) -> Value {
    let result = r.result();
    assert!(result["task"].is_object() && result.get("message").is_none(), "expected {{task}}, got {}", r.body);
    result["task"].clone()
}

/// Blocking SendMessage of one text message; the returned task.
async fn run_task(p: &Peer, text: &str) -> Value {
    task_of(&p.send_text(text).await)
}

/// SendMessage with `returnImmediately: true`; the task as created.
async fn start_task(p: &Peer, text: &str) -> Value {
    task_of(&p.call("SendMessage", send_params(text, json!({"returnImmediately": true}))).await)
}

async fn get_task(p: &Peer, params: Value) -> Value {
    p.call("GetTask", params).await.result().clone()
}

async fn list_tasks(p: &Peer, params: Value) -> Value {
    p.call("ListTasks", params).await.result().clone()
}

fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or("<no state>")
}

fn task_id(task: &Value) -> String {
    task["id"].as_str().expect("task id").to_owned()
}

fn is_terminal(state: &str) -> bool {
    matches!(state, "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_CANCELED" | "TASK_STATE_REJECTED")
}

/// The texts of the text parts in a parts array.
fn texts(parts: &Value) -> Vec<String> {
    parts.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).map(str::to_owned).collect()
}

/// The ids of a ListTasks page, in order.
fn ids(page: &Value) -> Vec<String> {
    page["tasks"].as_array().expect("tasks array").iter().map(task_id).collect()
}

/// The status timestamp of a task, in ms since the epoch.
fn status_millis(task: &Value) -> i128 {
    let ts = task["status"]["timestamp"].as_str().expect("status timestamp");
    Timestamp::parse(ts).unwrap().unix_millis()
}

/// Checks an A2A error (§3.3.2, §9.5): the code and an ErrorInfo detail with `reason` and
/// `domain: a2a-protocol.org`. Returns the ErrorInfo.
#[track_caller]
fn expect_a2a_error(r: &Reply, code: i64, reason: &str) -> Value {
    assert_eq!(r.error_code(), code, "{}", r.body);
    let info = r.body["error"]["data"]
        .as_array()
        .and_then(|d| d.iter().find(|e| e["@type"] == ERROR_INFO))
        .unwrap_or_else(|| panic!("no ErrorInfo in {}", r.body));
    assert_eq!(info["reason"], reason, "{}", r.body);
    assert_eq!(info["domain"], DOMAIN, "{}", r.body);
    info.clone()
}

/// Checks a -32602 whose BadRequest detail names a field containing `field`.
#[track_caller]
fn expect_invalid_params(r: &Reply, field: &str) {
    assert_eq!(r.error_code(), -32602, "{}", r.body);
    let fields: Vec<&str> = r.body["error"]["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["@type"] == BAD_REQUEST)
        .flat_map(|d| d["fieldViolations"].as_array().into_iter().flatten())
        .filter_map(|v| v["field"].as_str())
        .collect();
    assert!(fields.iter().any(|f| f.contains(field)), "expected a violation of {field:?}, got {fields:?}: {}", r.body);
}

/// Checks a standard JSON-RPC error (§9.5) and the `id` it carries (null when unreadable).
#[track_caller]
fn expect_jsonrpc_error(r: &Reply, code: i64, id: Value) {
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.error_code(), code, "{}", r.body);
    assert_eq!(r.body["id"], id, "{}", r.body);
}

// ---------------------------------------------------------------------------------------------
// 1. Success shapes
// ---------------------------------------------------------------------------------------------

/// §3.1.1, §3.2.2: with `returnImmediately` unset SendMessage waits until the task is terminal and
/// returns it with its artifacts; the ids are server-generated and returned (§3.4.1, §3.4.2).
#[tokio::test]
async fn send_message_blocks_until_terminal_and_includes_artifacts() {
    let p = Peer::default().await;
    let task = run_task(&p, "tck-artifact-text please").await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    assert!(!task_id(&task).is_empty());
    assert!(task["contextId"].as_str().is_some_and(|c| !c.is_empty()), "{task}");
    assert_eq!(task["artifacts"][0]["artifactId"], "artifact-text");
    assert_eq!(texts(&task["artifacts"][0]["parts"]), ["Generated text content"]);
    assert_eq!(task["history"][0]["role"], "ROLE_USER");
    assert_eq!(texts(&task["history"][0]["parts"]), ["tck-artifact-text please"]);

    let again = run_task(&p, "tck-artifact-text please").await;
    assert_ne!(again["id"], task["id"], "every new task gets a fresh id");
    assert_ne!(again["contextId"], task["contextId"], "a new context is generated when none is given");
}

/// §3.2.2: a blocking SendMessage also returns when the task is interrupted (INPUT_REQUIRED), with
/// the agent's status message.
#[tokio::test]
async fn send_message_blocking_returns_at_interrupted_state() {
    let p = Peer::default().await;
    let task = run_task(&p, "tck-input-required start").await;
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
    assert_eq!(texts(&task["status"]["message"]["parts"]), ["Please provide more input."]);
}

/// §3.2.2: `returnImmediately: true` returns right after the task is created, still active.
#[tokio::test]
async fn send_message_return_immediately_returns_the_new_task() {
    let p = Peer::default().await;
    let started = Instant::now();
    let task = start_task(&p, "tck-long-running job").await;
    assert!(started.elapsed() < Duration::from_millis(1000), "returned after {:?}", started.elapsed());
    assert!(matches!(state(&task), "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"), "{task}");
    let now = get_task(&p, json!({"id": task_id(&task)})).await;
    assert!(!is_terminal(state(&now)), "the script is still sleeping: {now}");
}

/// §3.1.1: a scenario may answer with a Message and no task; `returnImmediately` does not change
/// that (§3.2.2). The agent's message carries a contextId and no taskId (proto Message comment).
#[tokio::test]
async fn send_message_answers_with_a_message_for_tck_message_response() {
    let p = Peer::default().await;
    for configuration in [json!({}), json!({"returnImmediately": true})] {
        let r = p.call("SendMessage", send_params("tck-message-response hi", configuration)).await;
        let result = r.result();
        assert!(result.get("task").is_none(), "{result}");
        let m = &result["message"];
        assert_eq!(m["role"], "ROLE_AGENT");
        assert_eq!(texts(&m["parts"]), ["Direct message response"]);
        assert!(m["contextId"].as_str().is_some_and(|c| !c.is_empty()), "{m}");
        assert!(m.get("taskId").is_none(), "no task was created: {m}");
    }
    assert_eq!(list_tasks(&p, json!({})).await["totalSize"], 0);
}

/// §3.4.1: the agent may accept a client-provided contextId for a new task; the mock does.
#[tokio::test]
async fn send_message_keeps_a_client_context_id() {
    let p = Peer::default().await;
    let mut msg = user_message("tck-complete-task in my context");
    msg["contextId"] = json!("ctx-chosen-by-client");
    let task = task_of(&p.call("SendMessage", json!({"message": msg})).await);
    assert_eq!(task["contextId"], "ctx-chosen-by-client");
}

/// §3.1.3: GetTask returns the task as it stands.
#[tokio::test]
async fn get_task_returns_the_current_task() {
    let p = Peer::default().await;
    let sent = run_task(&p, "tck-complete-task now").await;
    let got = get_task(&p, json!({"id": task_id(&sent)})).await;
    assert_eq!(got["id"], sent["id"]);
    assert_eq!(got["contextId"], sent["contextId"]);
    assert_eq!(state(&got), "TASK_STATE_COMPLETED");
    assert_eq!(texts(&got["status"]["message"]["parts"]), ["Hello from TCK"]);
}

/// §3.2.4: `historyLength` unset returns the whole history, 0 omits `history`, N returns at most
/// the most recent N; the same applies to SendMessage's `configuration.historyLength`.
#[tokio::test]
async fn history_length_unset_zero_and_n() {
    let p = Peer::default().await;
    let first = run_task(&p, "tck-multi-turn first").await;
    let id = task_id(&first);
    task_of(&p.call("SendMessage", json!({"message": follow_up(&id, "second")})).await);

    let full = get_task(&p, json!({"id": id})).await["history"].as_array().cloned().expect("history");
    assert!(full.len() >= 3, "two user turns and agent replies: {full:?}");

    let zero = get_task(&p, json!({"id": id, "historyLength": 0})).await;
    assert!(zero.get("history").is_none(), "historyLength 0 omits history: {zero}");

    for n in [1usize, 2, 3] {
        let got = get_task(&p, json!({"id": id, "historyLength": n})).await;
        assert_eq!(got["history"].as_array().unwrap(), &full[full.len() - n..], "historyLength {n}");
    }
    let big = get_task(&p, json!({"id": id, "historyLength": 1000})).await;
    assert_eq!(big["history"].as_array().unwrap(), &full);

    let r = p.call("SendMessage", send_params("tck-complete-task h", json!({"historyLength": 1}))).await;
    assert_eq!(task_of(&r)["history"].as_array().map(Vec::len), Some(1));
    let r = p.call("SendMessage", send_params("tck-complete-task h", json!({"historyLength": 0}))).await;
    assert!(task_of(&r).get("history").is_none(), "{}", r.body);
}

/// §3.1.4: an empty store lists no tasks, with `nextPageToken: ""`, the default page size 50 and
/// `totalSize: 0` (all REQUIRED, digest §14 item 9).
#[tokio::test]
async fn list_tasks_on_an_empty_store() {
    let p = Peer::default().await;
    let page = list_tasks(&p, json!({})).await;
    assert_eq!(page, json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}));
}

/// §3.1.4: the default page size is 50, 1 and 100 are the accepted bounds, and `totalSize` counts
/// every match before pagination.
#[tokio::test]
async fn list_tasks_page_size_default_and_bounds() {
    let p = Peer::default().await;
    let inputs: Vec<String> = (0..51).map(|i| format!("tck-stream-002 #{i}")).collect();
    join_all(inputs.iter().map(|text| run_task(&p, text))).await;

    let page = list_tasks(&p, json!({})).await;
    assert_eq!(ids(&page).len(), 50);
    assert_eq!(page["pageSize"], 50);
    assert_eq!(page["totalSize"], 51);
    assert_ne!(page["nextPageToken"], "", "a 51st task remains");

    let page = list_tasks(&p, json!({"pageSize": 100})).await;
    assert_eq!(ids(&page).len(), 51);
    assert_eq!(page["pageSize"], 100);
    assert_eq!(page["nextPageToken"], "", "last page");

    let page = list_tasks(&p, json!({"pageSize": 1})).await;
    assert_eq!(ids(&page).len(), 1);
    assert_eq!(page["totalSize"], 51);
}

/// §3.1.4: cursor pagination visits every task exactly once, newest status first, with
/// `nextPageToken: ""` on the last page; a task whose status changed last comes first.
#[tokio::test]
async fn list_tasks_paginates_newest_status_first() {
    let p = Peer::default().await;
    let waiting = run_task(&p, "tck-multi-turn old task").await;
    let mut created: HashSet<String> = HashSet::from([task_id(&waiting)]);
    for i in 0..6 {
        created.insert(task_id(&run_task(&p, &format!("tck-complete-task {i}")).await));
    }
    // Let the clock move on, then give the oldest task the newest status.
    tokio::time::sleep(Duration::from_millis(3)).await;
    let done = task_of(&p.call("SendMessage", json!({"message": follow_up(&task_id(&waiting), "done")})).await);
    assert_eq!(state(&done), "TASK_STATE_COMPLETED");

    let mut seen: Vec<Value> = Vec::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let page = list_tasks(&p, json!({"pageSize": 3, "pageToken": token})).await;
        pages += 1;
        assert_eq!(page["totalSize"], 7);
        assert_eq!(page["pageSize"], 3);
        seen.extend(page["tasks"].as_array().unwrap().iter().cloned());
        token = page["nextPageToken"].as_str().expect("nextPageToken is always present").to_owned();
        if token.is_empty() {
            break;
        }
        assert!(pages < 10, "pagination does not end");
    }
    assert_eq!(pages, 3, "7 tasks in pages of 3");
    let listed: Vec<String> = seen.iter().map(task_id).collect();
    assert_eq!(listed.len(), 7, "no duplicates: {listed:?}");
    assert_eq!(listed.iter().cloned().collect::<HashSet<_>>(), created, "no omissions");
    let stamps: Vec<i128> = seen.iter().map(status_millis).collect();
    assert!(stamps.windows(2).all(|w| w[0] >= w[1]), "newest status first: {stamps:?}");
    assert_eq!(listed[0], task_id(&waiting), "the most recently updated task leads");
}

/// §3.1.4 (proto ListTasksRequest.contextId): only tasks of that context.
#[tokio::test]
async fn list_tasks_filters_by_context_id() {
    let p = Peer::default().await;
    for ctx in ["ctx-a", "ctx-a", "ctx-b"] {
        let mut msg = user_message("tck-complete-task ctx");
        msg["contextId"] = json!(ctx);
        p.call("SendMessage", json!({"message": msg})).await.result();
    }
    let page = list_tasks(&p, json!({"contextId": "ctx-a"})).await;
    assert_eq!(page["totalSize"], 2);
    assert!(page["tasks"].as_array().unwrap().iter().all(|t| t["contextId"] == "ctx-a"), "{page}");
    let page = list_tasks(&p, json!({"contextId": "ctx-none"})).await;
    assert_eq!(page["tasks"], json!([]));
    assert_eq!(page["nextPageToken"], "");
}

/// §3.1.4 (proto ListTasksRequest.status): only tasks in that state.
#[tokio::test]
async fn list_tasks_filters_by_status() {
    let p = Peer::default().await;
    run_task(&p, "tck-complete-task a").await;
    let failed = run_task(&p, "tck-task-failure b").await;
    let waiting = run_task(&p, "tck-input-required c").await;
    let page = list_tasks(&p, json!({"status": "TASK_STATE_FAILED"})).await;
    assert_eq!(ids(&page), [task_id(&failed)]);
    let page = list_tasks(&p, json!({"status": "TASK_STATE_INPUT_REQUIRED"})).await;
    assert_eq!(ids(&page), [task_id(&waiting)]);
    assert_eq!(page["totalSize"], 1);
    let page = list_tasks(&p, json!({"status": "TASK_STATE_CANCELED"})).await;
    assert_eq!(page["totalSize"], 0);
}

/// Digest §4: `statusTimestampAfter` keeps tasks whose status timestamp is at or after the
/// instant (>=, despite the name).
#[tokio::test]
async fn list_tasks_status_timestamp_after_is_inclusive() {
    let p = Peer::default().await;
    let a = run_task(&p, "tck-complete-task a").await;
    run_task(&p, "tck-complete-task b").await;
    let t_a = status_millis(&a);
    let at = |ms: i128| Timestamp::from_unix_millis(ms).unwrap().to_string();

    let page = list_tasks(&p, json!({"statusTimestampAfter": at(t_a)})).await;
    assert!(ids(&page).contains(&task_id(&a)), "a task stamped exactly at the bound is included: {page}");
    assert!(page["tasks"].as_array().unwrap().iter().all(|t| status_millis(t) >= t_a), "{page}");

    let page = list_tasks(&p, json!({"statusTimestampAfter": at(t_a + 1)})).await;
    assert!(!ids(&page).contains(&task_id(&a)), "{page}");
    assert!(page["tasks"].as_array().unwrap().iter().all(|t| status_millis(t) > t_a), "{page}");

    let page = list_tasks(&p, json!({"statusTimestampAfter": at(t_a - 3_600_000)})).await;
    assert_eq!(page["totalSize"], 2);
}

/// §3.1.4: with `includeArtifacts` unset or false the `artifacts` member is omitted entirely;
/// true includes them. `historyLength` applies per task.
#[tokio::test]
async fn list_tasks_include_artifacts_and_history_length() {
    let p = Peer::default().await;
    let task = run_task(&p, "tck-artifact-text art").await;
    assert!(task["artifacts"].is_array());
    for params in [json!({}), json!({"includeArtifacts": false})] {
        let page = list_tasks(&p, params).await;
        assert!(page["tasks"][0].get("artifacts").is_none(), "artifacts must be omitted: {page}");
    }
    let page = list_tasks(&p, json!({"includeArtifacts": true})).await;
    assert_eq!(page["tasks"][0]["artifacts"], task["artifacts"]);
    let page = list_tasks(&p, json!({"historyLength": 0})).await;
    assert!(page["tasks"][0].get("history").is_none(), "{page}");
    let page = list_tasks(&p, json!({"historyLength": 1})).await;
    assert_eq!(page["tasks"][0]["history"].as_array().map(Vec::len), Some(1));
}

/// §3.1.5: CancelTask of a working task returns it CANCELED, and it stays so; a second cancel of
/// the now terminal task is -32002 (the mock's stance on digest §14 / §9 "idempotent" [AMBIG]).
#[tokio::test]
async fn cancel_task_cancels_a_working_task() {
    let p = Peer::default().await;
    let task = start_task(&p, "tck-cancel me").await;
    let id = task_id(&task);
    let canceled = p.call("CancelTask", json!({"id": id})).await.result().clone();
    assert_eq!(canceled["id"], task["id"]);
    assert_eq!(state(&canceled), "TASK_STATE_CANCELED");
    assert_eq!(state(&get_task(&p, json!({"id": id})).await), "TASK_STATE_CANCELED");
    let again = p.call("CancelTask", json!({"id": id})).await;
    expect_a2a_error(&again, -32002, "TASK_NOT_CANCELABLE");
}

/// §3.1.5, §3.3.2: canceling a terminal task is TaskNotCancelableError (-32002).
#[tokio::test]
async fn cancel_task_on_a_terminal_task_is_not_cancelable() {
    let p = Peer::default().await;
    let task = run_task(&p, "tck-complete-task finished").await;
    let r = p.call("CancelTask", json!({"id": task_id(&task)})).await;
    let info = expect_a2a_error(&r, -32002, "TASK_NOT_CANCELABLE");
    assert_eq!(info["metadata"]["taskId"], task["id"]);
    assert_eq!(state(&get_task(&p, json!({"id": task_id(&task)})).await), "TASK_STATE_COMPLETED");
}

/// §3.1.7–§3.1.10: Create assigns an id (or keeps the client's), Get and List return the config
/// without its secrets (`token`, `authentication.credentials`), Delete returns `{}` and is
/// idempotent, and Get of a deleted config is -32001.
#[tokio::test]
async fn push_config_create_get_list_delete() {
    let p = Peer::start(loopback_push_config()).await;
    let task = run_task(&p, "tck-input-required hook me").await;
    let tid = task_id(&task);
    let hook = unused_webhook();

    let r = p
        .call(
            "CreateTaskPushNotificationConfig",
            json!({
                "taskId": tid,
                "url": hook,
                "token": "secret-token",
                "authentication": {"scheme": "Bearer", "credentials": "secret-credentials"},
            }),
        )
        .await;
    let created = r.result().clone();
    let cid = created["id"].as_str().expect("server-assigned id").to_owned();
    assert!(!cid.is_empty());
    assert_eq!(created["taskId"], tid.as_str());
    assert_eq!(created["url"], hook.as_str());
    assert_eq!(created["authentication"]["scheme"], "Bearer");
    // The mock treats secrets as write-only, Create included.
    assert!(!r.body.to_string().contains("secret"), "secrets echoed: {}", r.body);

    let mine = p
        .call(
            "CreateTaskPushNotificationConfig",
            json!({"taskId": tid, "id": "cfg-mine", "url": hook, "token": "secret-2"}),
        )
        .await
        .result()
        .clone();
    assert_eq!(mine["id"], "cfg-mine", "a client-chosen id is kept");

    let r = p.call("GetTaskPushNotificationConfig", json!({"taskId": tid, "id": cid})).await;
    let got = r.result();
    assert_eq!(got["id"], cid.as_str());
    assert_eq!(got["taskId"], tid.as_str());
    assert_eq!(got["url"], hook.as_str());
    assert_eq!(got["authentication"]["scheme"], "Bearer");
    assert!(got.get("token").is_none() && got["authentication"].get("credentials").is_none(), "{got}");
    assert!(!r.body.to_string().contains("secret"), "secrets echoed: {}", r.body);

    let r = p.call("ListTaskPushNotificationConfigs", json!({"taskId": tid})).await;
    let listed: BTreeMap<String, Value> = r.result()["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_owned(), c.clone()))
        .collect();
    assert_eq!(listed.keys().cloned().collect::<HashSet<_>>(), HashSet::from([cid.clone(), "cfg-mine".to_owned()]));
    assert!(!r.body.to_string().contains("secret"), "secrets echoed: {}", r.body);

    for _ in 0..2 {
        let r = p.call("DeleteTaskPushNotificationConfig", json!({"taskId": tid, "id": cid})).await;
        assert_eq!(r.result(), &json!({}), "Delete returns google.protobuf.Empty, every time");
    }
    let r = p.call("GetTaskPushNotificationConfig", json!({"taskId": tid, "id": cid})).await;
    let info = expect_a2a_error(&r, -32001, "TASK_NOT_FOUND");
    assert_eq!(info["metadata"]["configId"], cid.as_str());
    let r = p.call("ListTaskPushNotificationConfigs", json!({"taskId": tid})).await;
    assert_eq!(r.result()["configs"].as_array().map(Vec::len), Some(1));
    assert_eq!(r.result()["configs"][0]["id"], "cfg-mine");
}

/// §3.1.11, §3.3.4: GetExtendedAgentCard when the card does not declare the capability is
/// UnsupportedOperationError (-32004).
#[tokio::test]
async fn extended_card_not_declared_is_unsupported() {
    let p = Peer::default().await;
    let r = p.call("GetExtendedAgentCard", json!({})).await;
    expect_a2a_error(&r, -32004, "UNSUPPORTED_OPERATION");
}

/// §3.1.11, §3.3.2: declared but not configured is ExtendedAgentCardNotConfiguredError (-32007).
#[tokio::test]
async fn extended_card_declared_but_unconfigured() {
    let p = Peer::start(config(|c| c.extended_card = ExtendedCard::Unconfigured)).await;
    let card: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);
    let r = p.call("GetExtendedAgentCard", json!({})).await;
    expect_a2a_error(&r, -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED");
}

/// §3.1.11, §13.3: the extended card needs the bearer token. Missing or wrong credentials are HTTP
/// 401 with `WWW-Authenticate` and the kit's -32000 (digest §3 [AMBIG]); the right token returns
/// an AgentCard with the extra skill. `params` may be omitted (§9.4.8).
#[tokio::test]
async fn extended_card_requires_the_bearer_token() {
    let p = Peer::start(config(|c| c.extended_card = ExtendedCard::Bearer("s3cret".into()))).await;
    let public: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    assert_eq!(public["capabilities"]["extendedAgentCard"], true);
    assert_eq!(public["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"], "Bearer");

    for auth in [None, Some("Bearer wrong"), Some("Basic czNjcmV0"), Some("s3cret")] {
        let extra: Vec<(&str, &str)> = auth.map(|a| ("authorization", a)).into_iter().collect();
        let r = p.call_with("GetExtendedAgentCard", json!({}), &extra).await;
        assert_eq!(r.status, 401, "{auth:?}: {}", r.body);
        expect_a2a_error(&r, -32000, "UNAUTHENTICATED");
        let challenge = r.headers.get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("");
        assert!(challenge.starts_with("Bearer"), "{auth:?}: WWW-Authenticate {challenge:?}");
    }

    let r = p.call_with("GetExtendedAgentCard", json!({}), &[("authorization", "Bearer s3cret")]).await;
    assert_eq!(r.status, 200);
    let skills = |card: &Value| -> Vec<String> {
        card["skills"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect()
    };
    assert!(skills(r.result()).contains(&"extended-diagnostics".to_owned()), "{}", r.body);
    assert!(!skills(&public).contains(&"extended-diagnostics".to_owned()));

    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"}).to_string();
    let r = post_to(
        &p,
        "GetExtendedAgentCard",
        &p.server.rpc_url(),
        body,
        &[JSON_CT, V1, ("authorization", "Bearer s3cret")],
    )
    .await;
    assert_eq!(r.result()["name"], public["name"]);
}

// ---------------------------------------------------------------------------------------------
// 2. Errors
// ---------------------------------------------------------------------------------------------

/// §9.5: a body that is not JSON, or not UTF-8, is -32700 with a null id.
#[tokio::test]
async fn parse_error_for_bad_json_and_invalid_utf8() {
    let p = Peer::default().await;
    let r = post_json(&p, r#"{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"#).await;
    expect_jsonrpc_error(&r, -32700, Value::Null);

    let mut bytes = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":""#.to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(br#""}}"#);
    let r = post_json(&p, bytes).await;
    expect_jsonrpc_error(&r, -32700, Value::Null);
}

/// §9.5, digest §2 [AMBIG]: batches and non-object requests are -32600 with a null id.
#[tokio::test]
async fn invalid_request_for_batches_and_non_objects() {
    let p = Peer::default().await;
    let batch = format!("[{}]", request("GetTask", json!({"id": "x"})));
    expect_jsonrpc_error(&post_json(&p, batch).await, -32600, Value::Null);
    for body in [r#""GetTask""#, "42", "null", "true"] {
        expect_jsonrpc_error(&post_json(&p, body).await, -32600, Value::Null);
    }
}

/// JSON-RPC 2.0 §4.1: a notification (no `id` member) gets no reply at all. A null id is a call
/// (§4: an id "MUST contain a String, Number, or NULL value"), served and answered with id null; an
/// object id is -32600; a wrong or missing `jsonrpc` is -32600 echoing the id; so is a non-string
/// method.
#[tokio::test]
async fn notifications_get_no_reply_and_bad_envelopes_get_invalid_request() {
    let p = Peer::default().await;
    let no_id = json!({"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}}).to_string();
    let resp = p
        .http
        .post(p.server.rpc_url())
        .header(JSON_CT.0, JSON_CT.1)
        .header(V1.0, V1.1)
        .body(no_id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 204);
    assert!(resp.bytes().await.unwrap().is_empty(), "a notification gets no JSON-RPC response");
    let null_id = json!({"jsonrpc": "2.0", "id": null, "method": "GetTask", "params": {"id": "x"}}).to_string();
    expect_jsonrpc_error(&post_json(&p, null_id).await, -32001, Value::Null);
    let object_id = json!({"jsonrpc": "2.0", "id": {"k": 1}, "method": "GetTask", "params": {"id": "x"}}).to_string();
    expect_jsonrpc_error(&post_json(&p, object_id).await, -32600, Value::Null);
    let v1 = json!({"jsonrpc": "1.0", "id": 7, "method": "GetTask", "params": {"id": "x"}}).to_string();
    expect_jsonrpc_error(&post_json(&p, v1).await, -32600, json!(7));
    let missing = json!({"id": "r-8", "method": "GetTask", "params": {"id": "x"}}).to_string();
    expect_jsonrpc_error(&post_json(&p, missing).await, -32600, json!("r-8"));
    let bad_method = json!({"jsonrpc": "2.0", "id": 9, "method": 5, "params": {}}).to_string();
    expect_jsonrpc_error(&post_json(&p, bad_method).await, -32600, json!(9));
}

/// §9.1: JSON-RPC requests are `application/json`; another or no Content-Type is -32600.
#[tokio::test]
async fn invalid_request_for_wrong_or_missing_content_type() {
    let p = Peer::default().await;
    let body = request("ListTasks", json!({}));
    let url = p.server.rpc_url();
    let r = post_to(&p, "", &url, body.clone(), &[("content-type", "text/plain"), V1]).await;
    expect_jsonrpc_error(&r, -32600, Value::Null);
    let r = post_to(&p, "", &url, body.clone(), &[V1]).await;
    expect_jsonrpc_error(&r, -32600, Value::Null);
    let r = post_to(&p, "ListTasks", &url, body, &[("content-type", "application/json; charset=utf-8"), V1]).await;
    r.result();
}

/// Mock limits (digest §15 item 4): a body over `max_request_bytes` or nested deeper than
/// `max_json_depth` is -32600, as is a request id longer than `max_id_len`.
#[tokio::test]
async fn invalid_request_for_oversized_deep_or_long_id_requests() {
    let p = Peer::start(config(|c| {
        c.limits.max_request_bytes = 2048;
        c.limits.max_json_depth = 8;
    }))
    .await;
    let big = request("SendMessage", json!({"message": user_message(&"x".repeat(4096))}));
    expect_jsonrpc_error(&post_json(&p, big).await, -32600, Value::Null);

    let mut deep = json!("bottom");
    for _ in 0..10 {
        deep = json!({"n": deep});
    }
    let body = request("SendMessage", json!({"message": user_message("hi"), "metadata": deep}));
    expect_jsonrpc_error(&post_json(&p, body).await, -32600, Value::Null);

    let long_id = json!({"jsonrpc": "2.0", "id": "i".repeat(300), "method": "ListTasks", "params": {}}).to_string();
    expect_jsonrpc_error(&post_json(&p, long_id).await, -32600, Value::Null);
}

/// §5.3, digest §3: only the PascalCase 1.0 names exist; unknown names, the 0.3 slash names and
/// wrong case are -32601.
#[tokio::test]
async fn method_not_found_for_unknown_and_legacy_names() {
    let p = Peer::default().await;
    for method in ["NoSuchMethod", "message/send", "tasks/get", "sendMessage"] {
        let body = json!({"jsonrpc": "2.0", "id": "m", "method": method, "params": {"message": user_message("hi")}});
        expect_jsonrpc_error(&post_json(&p, body.to_string()).await, -32601, json!("m"));
    }
}

/// §3.3.2, §4.1.4, §4.1.6: invalid messages are -32602 naming the field: missing or empty
/// messageId, no parts, a part with two content members, ROLE_AGENT from a client, too many parts,
/// an over-long id.
#[tokio::test]
async fn invalid_params_for_malformed_messages() {
    let p = Peer::start(config(|c| c.limits.max_parts = 4)).await;
    let send = |message: Value| p.call("SendMessage", json!({"message": message}));
    let base = user_message("hello");

    let mut m = base.clone();
    m.as_object_mut().unwrap().remove("messageId");
    expect_invalid_params(&send(m).await, "message.messageId");
    let mut m = base.clone();
    m["messageId"] = json!("");
    expect_invalid_params(&send(m).await, "message.messageId");
    let mut m = base.clone();
    m["parts"] = json!([]);
    expect_invalid_params(&send(m).await, "message.parts");
    let mut m = base.clone();
    m["parts"] = json!([{"text": "a", "data": {"b": 1}}]);
    expect_invalid_params(&send(m).await, "message.parts");
    let mut m = base.clone();
    m["role"] = json!("ROLE_AGENT");
    expect_invalid_params(&send(m).await, "message.role");
    let mut m = base.clone();
    m["parts"] = json!([{"text": "1"}, {"text": "2"}, {"text": "3"}, {"text": "4"}, {"text": "5"}]);
    expect_invalid_params(&send(m).await, "message.parts");
    let mut m = base.clone();
    m["messageId"] = json!("m".repeat(300));
    expect_invalid_params(&send(m).await, "message.messageId");
    assert_eq!(list_tasks(&p, json!({})).await["totalSize"], 0, "no rejected message created a task");
}

/// §3.3.2, §3.2.4, §3.1.4, §9.3: invalid request params are -32602: negative historyLength,
/// pageSize 0 and 101, a pageToken the server never issued, an over-long task id, params given
/// as an array or missing.
#[tokio::test]
async fn invalid_params_for_bad_arguments() {
    let p = Peer::default().await;
    let task = run_task(&p, "tck-complete-task x").await;
    let id = task_id(&task);

    expect_invalid_params(&p.call("GetTask", json!({"id": id, "historyLength": -1})).await, "historyLength");
    let r = p.call("SendMessage", send_params("hi", json!({"historyLength": -2}))).await;
    expect_invalid_params(&r, "historyLength");
    expect_invalid_params(&p.call("ListTasks", json!({"historyLength": -1})).await, "historyLength");
    expect_invalid_params(&p.call("ListTasks", json!({"pageSize": 0})).await, "pageSize");
    expect_invalid_params(&p.call("ListTasks", json!({"pageSize": 101})).await, "pageSize");
    expect_invalid_params(&p.call("ListTasks", json!({"pageToken": "not-a-token!"})).await, "pageToken");
    expect_invalid_params(&p.call("ListTasks", json!({"status": "TASK_STATE_BOGUS"})).await, "status");
    expect_invalid_params(&p.call("GetTask", json!({"id": "t".repeat(300)})).await, "id");
    expect_invalid_params(&p.call("GetTask", json!({})).await, "id");
    expect_invalid_params(&p.call("GetTask", json!([id])).await, "params");
    let no_params = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask"}).to_string();
    expect_invalid_params(&post_json(&p, no_params).await, "params");
}

/// §3.4.3: a message whose contextId does not match its task's is rejected (-32602, digest §9
/// [AMBIG] on the code) and leaves the task untouched.
#[tokio::test]
async fn invalid_params_for_mismatched_task_and_context() {
    let p = Peer::default().await;
    let task = run_task(&p, "tck-input-required ctx").await;
    let mut m = follow_up(&task_id(&task), "more");
    m["contextId"] = json!("some-other-context");
    expect_invalid_params(&p.call("SendMessage", json!({"message": m})).await, "message.contextId");
    let now = get_task(&p, json!({"id": task_id(&task)})).await;
    assert_eq!(now["history"], task["history"]);
    assert_eq!(state(&now), "TASK_STATE_INPUT_REQUIRED");
}

/// §3.3.2, §3.4.2, §3.1.8: an unknown task is TaskNotFoundError (-32001) for every method that
/// names one, and so is an unknown push config.
#[tokio::test]
async fn task_not_found_for_unknown_tasks_and_configs() {
    let p = Peer::start(loopback_push_config()).await;
    let ghost = "no-such-task";
    let hook = unused_webhook();
    let calls = [
        ("GetTask", json!({"id": ghost})),
        ("CancelTask", json!({"id": ghost})),
        ("SendMessage", json!({"message": follow_up(ghost, "hello?")})),
        ("CreateTaskPushNotificationConfig", json!({"taskId": ghost, "url": hook})),
        ("GetTaskPushNotificationConfig", json!({"taskId": ghost, "id": "c"})),
        ("ListTaskPushNotificationConfigs", json!({"taskId": ghost})),
        ("DeleteTaskPushNotificationConfig", json!({"taskId": ghost, "id": "c"})),
    ];
    for (method, params) in calls {
        let r = p.call(method, params).await;
        let info = expect_a2a_error(&r, -32001, "TASK_NOT_FOUND");
        assert_eq!(info["metadata"]["taskId"], ghost, "{method}: {}", r.body);
    }
    let r = p.stream("SubscribeToTask", json!({"id": ghost})).await.expect_err("no stream for an unknown task");
    expect_a2a_error(&r, -32001, "TASK_NOT_FOUND");

    let task = run_task(&p, "tck-input-required t").await;
    let r = p.call("GetTaskPushNotificationConfig", json!({"taskId": task_id(&task), "id": "never-created"})).await;
    expect_a2a_error(&r, -32001, "TASK_NOT_FOUND");
}

/// §3.3.4: without `capabilities.pushNotifications` every config method, and a config inline in
/// SendMessage, is PushNotificationNotSupportedError (-32003); the inline case creates no task.
#[tokio::test]
async fn push_not_supported_for_every_config_method() {
    let p = Peer::start(config(|c| c.push_notifications = false)).await;
    let card: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    assert_eq!(card["capabilities"]["pushNotifications"], false);
    let task = run_task(&p, "tck-input-required x").await;
    let tid = task_id(&task);
    let calls = [
        ("CreateTaskPushNotificationConfig", json!({"taskId": tid, "url": "https://example.com/hook"})),
        ("GetTaskPushNotificationConfig", json!({"taskId": tid, "id": "c"})),
        ("ListTaskPushNotificationConfigs", json!({"taskId": tid})),
        ("DeleteTaskPushNotificationConfig", json!({"taskId": tid, "id": "c"})),
        (
            "SendMessage",
            send_params(
                "tck-complete-task",
                json!({"taskPushNotificationConfig": {"url": "https://example.com/hook"}}),
            ),
        ),
    ];
    for (method, params) in calls {
        let r = p.call(method, params).await;
        expect_a2a_error(&r, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED");
    }
    assert_eq!(list_tasks(&p, json!({})).await["totalSize"], 1, "the refused SendMessage created no task");
}

/// §3.3.4: without `capabilities.streaming` both streaming methods are -32004 (before any SSE),
/// and the refused SendStreamingMessage creates no task.
#[tokio::test]
async fn unsupported_operation_when_streaming_is_off() {
    let p = Peer::start(config(|c| c.streaming = false)).await;
    let card: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    assert_eq!(card["capabilities"]["streaming"], false);
    let task = run_task(&p, "tck-input-required x").await;

    let r = p.stream("SendStreamingMessage", json!({"message": user_message("tck-complete-task")})).await;
    expect_a2a_error(&r.expect_err("no stream"), -32004, "UNSUPPORTED_OPERATION");
    let r = p.stream("SubscribeToTask", json!({"id": task_id(&task)})).await;
    expect_a2a_error(&r.expect_err("no stream"), -32004, "UNSUPPORTED_OPERATION");
    assert_eq!(list_tasks(&p, json!({})).await["totalSize"], 1);
}

/// §3.1.1, §9: a terminal task accepts no further messages (-32004), streaming or not.
#[tokio::test]
async fn unsupported_operation_for_a_message_to_a_terminal_task() {
    let p = Peer::default().await;
    let task = run_task(&p, "tck-complete-task done").await;
    let r = p.call("SendMessage", json!({"message": follow_up(&task_id(&task), "one more")})).await;
    let info = expect_a2a_error(&r, -32004, "UNSUPPORTED_OPERATION");
    assert_eq!(info["metadata"]["state"], "TASK_STATE_COMPLETED");
    let r = p.stream("SendStreamingMessage", json!({"message": follow_up(&task_id(&task), "and more")})).await;
    expect_a2a_error(&r.expect_err("no stream"), -32004, "UNSUPPORTED_OPERATION");
    assert_eq!(get_task(&p, json!({"id": task_id(&task)})).await["history"], task["history"], "history unchanged");
}

/// §3.1.6, §9.4.6: SubscribeToTask on a terminal task is -32004, not an empty stream.
#[tokio::test]
async fn unsupported_operation_for_subscribe_to_a_terminal_task() {
    let p = Peer::default().await;
    let task = run_task(&p, "tck-reject-task no").await;
    assert_eq!(state(&task), "TASK_STATE_REJECTED");
    let r = p.stream("SubscribeToTask", json!({"id": task_id(&task)})).await;
    let info = expect_a2a_error(&r.expect_err("no stream"), -32004, "UNSUPPORTED_OPERATION");
    assert_eq!(info["metadata"]["taskId"], task["id"]);
}

/// §3.1.1, §3.2.2: a part whose mediaType the agent does not accept, or acceptedOutputModes
/// disjoint from the agent's output modes, is ContentTypeNotSupportedError (-32005); accepted types
/// (with parameters, or by wildcard) pass.
#[tokio::test]
async fn content_type_not_supported_for_media_types() {
    let p = Peer::default().await;
    let mut m = user_message("tck-complete-task img");
    m["parts"] = json!([{"text": "look"}, {"raw": "iVBORw0KGgo=", "mediaType": "image/png", "filename": "a.png"}]);
    let r = p.call("SendMessage", json!({"message": m})).await;
    let info = expect_a2a_error(&r, -32005, "CONTENT_TYPE_NOT_SUPPORTED");
    assert_eq!(info["metadata"]["mediaType"], "image/png");

    let r = p
        .call(
            "SendMessage",
            send_params("tck-complete-task", json!({"acceptedOutputModes": ["image/png", "audio/mpeg"]})),
        )
        .await;
    expect_a2a_error(&r, -32005, "CONTENT_TYPE_NOT_SUPPORTED");
    assert_eq!(list_tasks(&p, json!({})).await["totalSize"], 0);

    let mut m = user_message("tck-complete-task ok");
    m["parts"] = json!([{"text": "plain", "mediaType": "text/plain; charset=utf-8"}]);
    let r = p.call("SendMessage", json!({"message": m, "configuration": {"acceptedOutputModes": ["text/*"]}})).await;
    assert_eq!(state(&task_of(&r)), "TASK_STATE_COMPLETED");
}

/// §3.3.4, §3.2.6: a `required: true` extension the client did not activate is -32008; activating
/// it with `A2A-Extensions` succeeds and the response echoes the activated extension.
#[tokio::test]
async fn extension_support_required_until_activated() {
    const EXT: &str = "https://example.com/ext/required/v1";
    let p = Peer::start(config(|c| c.required_extensions = vec![EXT.into()])).await;
    let card: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    assert_eq!(card["capabilities"]["extensions"][0]["uri"], EXT);
    assert_eq!(card["capabilities"]["extensions"][0]["required"], true);

    let r = p.call("ListTasks", json!({})).await;
    let info = expect_a2a_error(&r, -32008, "EXTENSION_SUPPORT_REQUIRED");
    assert_eq!(info["metadata"]["extension"], EXT);
    let r = p.call_with("ListTasks", json!({}), &[("a2a-extensions", "urn:other")]).await;
    expect_a2a_error(&r, -32008, "EXTENSION_SUPPORT_REQUIRED");

    let header = format!("urn:other, {EXT}");
    let r = p
        .call_with(
            "SendMessage",
            json!({"message": user_message("tck-complete-task")}),
            &[("A2A-Extensions", header.as_str())],
        )
        .await;
    assert_eq!(state(&task_of(&r)), "TASK_STATE_COMPLETED");
    let echoed = r.headers.get("a2a-extensions").and_then(|v| v.to_str().ok()).unwrap_or("");
    assert!(echoed.contains(EXT), "activated extension echoed: {echoed:?}");
    assert!(!echoed.contains("urn:other"), "only activated extensions are echoed: {echoed:?}");
}

/// §3.6.2: unsupported `A2A-Version`s (0.3, 2.0, garbage) are -32009; the patch component is ignored
/// (1.0.5 is 1.0); the version may come as the `A2A-Version` query parameter (§3.6.1); an absent
/// version is served as 1.0 by default (digest §14 item 2, the mock's default stance).
#[tokio::test]
async fn version_negotiation() {
    let p = Peer::default().await;
    let body = request("ListTasks", json!({}));
    let url = p.server.rpc_url();
    for v in ["0.3", "2.0", "1.1", "one-point-oh", "1"] {
        let r = post_to(&p, "", &url, body.clone(), &[JSON_CT, ("A2A-Version", v)]).await;
        let info = expect_a2a_error(&r, -32009, "VERSION_NOT_SUPPORTED");
        assert_eq!(info["metadata"]["supportedVersions"], "1.0", "{v}");
        assert_eq!(r.body["id"], 1);
    }
    let legacy = request("message/send", json!({"message": user_message("hi")}));
    let r = post_to(&p, "", &url, legacy, &[JSON_CT, ("A2A-Version", "0.3")]).await;
    expect_a2a_error(&r, -32009, "VERSION_NOT_SUPPORTED");

    post_to(&p, "ListTasks", &url, body.clone(), &[JSON_CT, ("A2A-Version", "1.0.5")]).await.result();
    post_to(&p, "ListTasks", &url, body.clone(), &[JSON_CT, ("a2a-version", "1.0")]).await.result();
    post_to(&p, "ListTasks", &format!("{url}?A2A-Version=1.0"), body.clone(), &[JSON_CT]).await.result();
    let r = post_to(&p, "", &format!("{url}?A2A-Version=0.3"), body.clone(), &[JSON_CT]).await;
    expect_a2a_error(&r, -32009, "VERSION_NOT_SUPPORTED");
}

/// §3.6.2: "Agents MUST interpret empty value as 0.3 version", which this 1.0-only mock refuses
/// with -32009; an explicit 1.0, as header or parameter, still works. `--lenient-version` serves it
/// as 1.0, for clients that omit the header.
#[tokio::test]
async fn a_missing_version_is_read_as_0_3_unless_lenient() {
    let lenient = Peer::start(config(|c| c.missing_version = MissingVersion::AssumeCurrent)).await;
    post_to(&lenient, "ListTasks", &lenient.server.rpc_url(), request("ListTasks", json!({})), &[JSON_CT])
        .await
        .result();
    let p = Peer::default().await;
    let body = request("ListTasks", json!({}));
    let url = p.server.rpc_url();
    let r = post_to(&p, "", &url, body.clone(), &[JSON_CT]).await;
    let info = expect_a2a_error(&r, -32009, "VERSION_NOT_SUPPORTED");
    assert_eq!(info["metadata"]["requestedVersion"], "0.3");
    post_to(&p, "ListTasks", &url, body.clone(), &[JSON_CT, V1]).await.result();
    post_to(&p, "ListTasks", &format!("{url}?A2A-Version=1.0"), body, &[JSON_CT]).await.result();
}

// ---------------------------------------------------------------------------------------------
// 3. Scenarios
// ---------------------------------------------------------------------------------------------

/// What a scenario file says its first message leads to.
#[derive(Debug, Default)]
struct Expected {
    name: String,
    prefixes: Vec<String>,
    /// Parts of a direct Message reply, if the scenario answers without a task.
    reply: Option<Vec<Value>>,
    /// The last status step's state and text.
    final_state: Option<String>,
    final_text: Option<String>,
    /// Artifacts in first-emitted order: (id, name, parts after applying `append`).
    artifacts: Vec<(String, Option<String>, Vec<Value>)>,
    /// Total sleep of the first run, in ms.
    sleep_ms: u64,
}

/// Reads a scenario file as data (independently of the mock's own loader).
fn expected(file: &Value) -> Expected {
    let mut e = Expected {
        name: file["name"].as_str().expect("name").to_owned(),
        prefixes: file["prefixes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str().map(str::to_owned))
            .collect(),
        ..Expected::default()
    };
    for (i, step) in file["steps"].as_array().expect("steps").iter().enumerate() {
        if let Some(s) = step.get("status") {
            e.final_state = s["state"].as_str().map(str::to_owned);
            e.final_text = s["text"].as_str().map(str::to_owned);
        } else if let Some(a) = step.get("artifact") {
            let id = a["artifactId"].as_str().map_or_else(|| format!("artifact-{i}"), str::to_owned);
            let parts = a["parts"].as_array().expect("artifact parts").clone();
            let name = a["name"].as_str().map(str::to_owned);
            match e.artifacts.iter_mut().find(|(aid, _, _)| *aid == id) {
                Some(existing) if a["append"] == true => existing.2.extend(parts),
                Some(existing) => *existing = (id, name, parts),
                None => e.artifacts.push((id, name, parts)),
            }
        } else if let Some(r) = step.get("reply") {
            e.reply = Some(r["parts"].as_array().expect("reply parts").clone());
        } else if let Some(s) = step.get("sleep") {
            e.sleep_ms += s["ms"].as_u64().expect("sleep ms");
        }
    }
    e
}

/// Every scenario file in `mock-peer/scenarios`, read now.
fn scenario_files() -> Vec<Value> {
    let mut paths: Vec<_> = std::fs::read_dir(SCENARIO_DIR)
        .expect("scenario directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            serde_json::from_str(&std::fs::read_to_string(p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect()
}

fn scenario(name: &str) -> Expected {
    scenario_files().iter().map(expected).find(|e| e.name == name).unwrap_or_else(|| panic!("no scenario {name}"))
}

/// Fills the scenario templates the way the files document them.
fn render(parts: &[Value], input: &str, task_id: &str, context_id: &str) -> Vec<Value> {
    parts
        .iter()
        .map(|p| {
            let mut p = p.clone();
            if let Some(t) = p["text"].as_str() {
                p["text"] = json!(
                    t.replace("{{input}}", input).replace("{{taskId}}", task_id).replace("{{contextId}}", context_id)
                );
            }
            p
        })
        .collect()
}

/// Checks a settled task against what its scenario file describes.
#[track_caller]
fn assert_outcome(e: &Expected, task: &Value, input: &str) {
    let (tid, ctx) = (task_id(task), task["contextId"].as_str().unwrap_or("").to_owned());
    assert_eq!(Some(state(task)), e.final_state.as_deref(), "{}: final state: {task}", e.name);
    if let Some(text) = &e.final_text {
        let want = render(&[json!({"text": text})], input, &tid, &ctx);
        assert_eq!(
            texts(&task["status"]["message"]["parts"]),
            texts(&Value::Array(want)),
            "{}: status message",
            e.name
        );
        assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT", "{}", e.name);
    }
    if e.artifacts.is_empty() {
        assert!(task.get("artifacts").is_none(), "{}: no artifact steps, no artifacts: {task}", e.name);
        return;
    }
    let got = task["artifacts"].as_array().unwrap_or_else(|| panic!("{}: artifacts missing: {task}", e.name));
    assert_eq!(got.len(), e.artifacts.len(), "{}: {task}", e.name);
    for (want, have) in e.artifacts.iter().zip(got) {
        let (id, name, parts) = want;
        assert_eq!(have["artifactId"], id.as_str(), "{}", e.name);
        if let Some(n) = name {
            assert_eq!(have["name"], n.as_str(), "{}", e.name);
        }
        assert_eq!(have["parts"].as_array().unwrap(), &render(parts, input, &tid, &ctx), "{}: artifact {id}", e.name);
    }
}

/// Runs one scenario's first message and checks the outcome its file describes. Scripts that
/// sleep are started with `returnImmediately`; short ones are then followed with SubscribeToTask
/// until they settle, and ones that would outlast the suite are canceled.
async fn check_scenario(p: &Peer, e: &Expected) {
    let prefix = &e.prefixes[0];
    let input = format!("{prefix} scenario check");
    if let Some(reply) = &e.reply {
        let r = p.send_text(&input).await;
        let m = &r.result()["message"];
        assert!(r.result().get("task").is_none(), "{}: {}", e.name, r.body);
        assert_eq!(m["role"], "ROLE_AGENT", "{}", e.name);
        let ctx = m["contextId"].as_str().unwrap_or("");
        assert_eq!(m["parts"].as_array().unwrap(), &render(reply, &input, "", ctx), "{}", e.name);
        return;
    }
    if e.sleep_ms == 0 {
        let task = run_task(p, &input).await;
        assert_outcome(e, &task, &input);
        return;
    }
    let task = start_task(p, &input).await;
    assert!(matches!(state(&task), "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"), "{}: {task}", e.name);
    let id = task_id(&task);
    if e.sleep_ms <= 2_000 {
        // The stream ends when the task settles; an error means it settled already.
        let _ = p.stream("SubscribeToTask", json!({"id": id})).await;
        assert_outcome(e, &get_task(p, json!({"id": id})).await, &input);
    } else {
        let canceled = p.call("CancelTask", json!({"id": id})).await;
        assert_eq!(state(canceled.result()), "TASK_STATE_CANCELED", "{}", e.name);
    }
}

/// ACTS §11: every scenario file with prefixes, selected by the first text part, leads to what the
/// file describes: a Message reply, or a task whose final state is the last status step's and
/// whose artifacts are the artifact steps' (appended chunks concatenated).
#[tokio::test]
async fn every_scenario_file_behaves_as_described() {
    let files = scenario_files();
    let scenarios: Vec<Expected> = files.iter().map(expected).filter(|e| !e.prefixes.is_empty()).collect();
    assert!(scenarios.len() >= 10, "scenario files found: {}", scenarios.len());
    assert!(scenarios.iter().any(|e| e.artifacts.iter().any(|a| a.2.len() > 1)), "some scenario appends chunks");
    let p = Peer::default().await;
    join_all(scenarios.iter().map(|e| check_scenario(&p, e))).await;
}

/// a2a-tck convention: a scenario prefix on the messageId selects it even when the text is neutral.
#[tokio::test]
async fn message_id_prefix_selects_the_scenario() {
    let p = Peer::default().await;
    let m = json!({"messageId": "tck-artifact-data-1a2b3c4d", "role": "ROLE_USER", "parts": [{"text": "hello there"}]});
    let task = task_of(&p.call("SendMessage", json!({"message": m})).await);
    assert_outcome(&scenario("tck-artifact-data"), &task, "hello there");
    assert_eq!(task["artifacts"][0]["parts"][0]["data"], json!({"key": "value", "count": 42}));
}

/// §3.4.3, §3.2.2: tck-multi-turn waits for input; a follow-up naming only the task keeps its
/// context and stays INPUT_REQUIRED; "done" completes it; history holds the user turns in order.
#[tokio::test]
async fn multi_turn_conversation() {
    let p = Peer::default().await;
    let first = run_task(&p, "tck-multi-turn hello").await;
    assert_eq!(state(&first), "TASK_STATE_INPUT_REQUIRED");
    let (id, ctx) = (task_id(&first), first["contextId"].clone());

    let second = task_of(&p.call("SendMessage", json!({"message": follow_up(&id, "more details")})).await);
    assert_eq!(second["id"], first["id"]);
    assert_eq!(second["contextId"], ctx, "the context is inferred from the task");
    assert_eq!(state(&second), "TASK_STATE_INPUT_REQUIRED");

    let third = task_of(&p.call("SendMessage", json!({"message": follow_up(&id, "done")})).await);
    assert_eq!(state(&third), "TASK_STATE_COMPLETED");
    assert_eq!(texts(&third["status"]["message"]["parts"]), ["Conversation complete."]);

    let history = get_task(&p, json!({"id": id})).await["history"].as_array().cloned().unwrap();
    let user_turns: Vec<String> =
        history.iter().filter(|m| m["role"] == "ROLE_USER").flat_map(|m| texts(&m["parts"])).collect();
    assert_eq!(user_turns, ["tck-multi-turn hello", "more details", "done"]);
    assert!(history.iter().all(|m| m["contextId"] == ctx), "every message carries the context: {history:?}");
}

/// The default scenario (no prefix matches) completes the task and echoes the input text.
#[tokio::test]
async fn default_scenario_echoes_the_input() {
    let p = Peer::default().await;
    let task = run_task(&p, "just some words").await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    assert_eq!(texts(&task["status"]["message"]["parts"]), ["just some words"]);
    assert_outcome(&scenario("echo"), &task, "just some words");
}

// ---------------------------------------------------------------------------------------------
// 4. Agent card
// ---------------------------------------------------------------------------------------------

/// §8.2, §8.3, §4.4: the well-known card is a valid AgentCard whose first interface is this mock's
/// JSON-RPC URL for protocol 1.0, with none of the 0.3 top-level fields (digest §16).
#[tokio::test]
async fn agent_card_describes_the_json_rpc_interface() {
    let p = Peer::default().await;
    let resp = p.http.get(p.server.card_url()).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert!(ct.starts_with("application/json"), "{ct}");
    let card: Value = resp.json().await.unwrap();
    schema::assert_valid("AgentCard", &card);
    assert_eq!(
        card["supportedInterfaces"][0],
        json!({"url": p.server.rpc_url(), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})
    );
    for legacy in
        ["protocolVersion", "url", "preferredTransport", "additionalInterfaces", "supportsAuthenticatedExtendedCard"]
    {
        assert!(card.get(legacy).is_none(), "0.3 field {legacy} on the card");
    }
    assert_eq!(card["defaultInputModes"], json!(MockConfig::default().input_modes));
    assert_eq!(card["defaultOutputModes"], json!(MockConfig::default().output_modes));
}

/// §4.4.3: `capabilities` states exactly what the configuration enables.
#[tokio::test]
async fn agent_card_capabilities_reflect_the_config() {
    let p = Peer::default().await;
    let card: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert_eq!(card["capabilities"]["extendedAgentCard"], false);
    // The only extension declared by default is the mock's resume extension (afterEventId).
    let uris: Vec<&str> =
        card["capabilities"]["extensions"].as_array().unwrap().iter().map(|e| e["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, [a2a_conform::server::RESUME_EXTENSION_URI]);
    assert_eq!(card["capabilities"]["extensions"][0]["required"], json!(null), "optional: `required` omitted");

    let p = Peer::start(config(|c| {
        c.name = "custom agent".into();
        c.streaming = false;
        c.push_notifications = false;
        c.extended_card = ExtendedCard::Unconfigured;
        c.extensions = vec!["urn:ext:optional".into()];
        c.required_extensions = vec!["urn:ext:required".into()];
        c.input_modes = vec!["text/plain".into()];
        c.output_modes = vec!["application/json".into()];
        c.tenant = "acme".into();
    }))
    .await;
    let card: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    schema::assert_valid("AgentCard", &card);
    let caps = &card["capabilities"];
    assert_eq!(caps["streaming"], false);
    assert_eq!(caps["pushNotifications"], false);
    assert_eq!(caps["extendedAgentCard"], true);
    let exts: Vec<(String, bool)> = caps["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["uri"].as_str().unwrap().to_owned(), x["required"] == true))
        .collect();
    assert_eq!(exts, [("urn:ext:optional".to_owned(), false), ("urn:ext:required".to_owned(), true)]);
    assert_eq!(card["name"], "custom agent");
    assert_eq!(card["defaultInputModes"], json!(["text/plain"]));
    assert_eq!(card["defaultOutputModes"], json!(["application/json"]));
    assert_eq!(card["supportedInterfaces"][0]["tenant"], "acme");
}

/// §8.6: the card carries `Cache-Control: max-age`, an `ETag` and `Last-Modified`; conditional
/// requests with either validator get 304, stale validators the card.
#[tokio::test]
async fn agent_card_caching_and_conditional_requests() {
    let p = Peer::start(config(|c| c.card_max_age_secs = 123)).await;
    let url = p.server.card_url();
    let resp = p.http.get(&url).send().await.unwrap();
    let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let cache_control = header("cache-control").expect("Cache-Control");
    assert!(cache_control.contains("max-age=123"), "{cache_control}");
    let etag = header("etag").expect("ETag");
    let last_modified = header("last-modified").expect("Last-Modified");
    assert!(httpdate::parse_http_date(&last_modified).is_ok(), "{last_modified}");

    let r = p.http.get(&url).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status(), 304);
    assert!(r.headers().contains_key("etag"));
    assert!(r.bytes().await.unwrap().is_empty());
    let r = p.http.get(&url).header("if-none-match", "\"something-else\"").send().await.unwrap();
    assert_eq!(r.status(), 200);

    let r = p.http.get(&url).header("if-modified-since", &last_modified).send().await.unwrap();
    assert_eq!(r.status(), 304);
    let r = p.http.get(&url).header("if-modified-since", "Mon, 01 Jan 2001 00:00:00 GMT").send().await.unwrap();
    assert_eq!(r.status(), 200);
    schema::assert_valid("AgentCard", &r.json().await.unwrap());
}

/// Digest §2: the JSON-RPC endpoint is the interface URL; the mock also answers with a trailing slash.
#[tokio::test]
async fn rpc_url_with_and_without_trailing_slash() {
    let p = Peer::default().await;
    let body = request("ListTasks", json!({}));
    for url in [p.server.rpc_url(), format!("{}/", p.server.rpc_url())] {
        let r = post_to(&p, "ListTasks", &url, body.clone(), &[JSON_CT, V1]).await;
        assert_eq!(r.result()["totalSize"], 0, "{url}");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Limits keep state
// ---------------------------------------------------------------------------------------------

/// Rejected oversized and too-deep requests change nothing: an earlier task is still there and new
/// work is still accepted.
#[tokio::test]
async fn rejected_requests_keep_state() {
    let p = Peer::start(config(|c| {
        c.limits.max_request_bytes = 4096;
        c.limits.max_json_depth = 8;
    }))
    .await;
    let task = run_task(&p, "tck-input-required keep me").await;
    let big = request("SendMessage", json!({"message": follow_up(&task_id(&task), &"y".repeat(8192))}));
    expect_jsonrpc_error(&post_json(&p, big).await, -32600, Value::Null);
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{{"id":"{}","x":{}1{}}}}}"#,
        task_id(&task),
        "[".repeat(20),
        "]".repeat(20)
    );
    expect_jsonrpc_error(&post_json(&p, deep).await, -32600, Value::Null);

    let now = get_task(&p, json!({"id": task_id(&task)})).await;
    assert_eq!(now, task);
    assert_eq!(state(&run_task(&p, "tck-complete-task after").await), "TASK_STATE_COMPLETED");
}

/// `max_tasks`: when the store is full, the task that finished longest ago is evicted (and is
/// then unknown, -32001); new tasks keep working.
#[tokio::test]
async fn max_tasks_evicts_finished_tasks_oldest_first() {
    let p = Peer::start(config(|c| c.limits.max_tasks = 2)).await;
    let t1 = run_task(&p, "tck-complete-task 1").await;
    let t2 = run_task(&p, "tck-complete-task 2").await;
    let t3 = run_task(&p, "tck-complete-task 3").await;
    assert_eq!(state(&t3), "TASK_STATE_COMPLETED");
    expect_a2a_error(&p.call("GetTask", json!({"id": task_id(&t1)})).await, -32001, "TASK_NOT_FOUND");
    get_task(&p, json!({"id": task_id(&t2)})).await;
    get_task(&p, json!({"id": task_id(&t3)})).await;
    let t4 = run_task(&p, "tck-complete-task 4").await;
    expect_a2a_error(&p.call("GetTask", json!({"id": task_id(&t2)})).await, -32001, "TASK_NOT_FOUND");
    let page = list_tasks(&p, json!({})).await;
    assert_eq!(page["totalSize"], 2);
    assert_eq!(ids(&page).into_iter().collect::<HashSet<_>>(), HashSet::from([task_id(&t3), task_id(&t4)]));
}

/// `max_tasks`: unfinished tasks are never evicted; a full store of them refuses new tasks
/// (-32004, the mock's limit error) until one finishes.
#[tokio::test]
async fn max_tasks_never_evicts_unfinished_tasks() {
    let p = Peer::start(config(|c| c.limits.max_tasks = 1)).await;
    let running = start_task(&p, "tck-cancel hold the slot").await;
    let r = p.send_text("tck-complete-task no room").await;
    expect_a2a_error(&r, -32004, "UNSUPPORTED_OPERATION");
    assert_eq!(state(&get_task(&p, json!({"id": task_id(&running)})).await), "TASK_STATE_WORKING");
    p.call("CancelTask", json!({"id": task_id(&running)})).await.result();
    assert_eq!(state(&run_task(&p, "tck-complete-task room now").await), "TASK_STATE_COMPLETED");
}

/// `max_push_configs`: a task holds at most that many configs (-32004 beyond); replacing an
/// existing id or creating after a delete is fine.
#[tokio::test]
async fn max_push_configs_is_enforced() {
    let mut c = loopback_push_config();
    c.limits.max_push_configs = 2;
    let p = Peer::start(c).await;
    let tid = task_id(&run_task(&p, "tck-input-required hooks").await);
    let hook = unused_webhook();
    let create = |id: &str| p.call("CreateTaskPushNotificationConfig", json!({"taskId": tid, "id": id, "url": hook}));
    create("a").await.result();
    create("b").await.result();
    expect_a2a_error(&create("c").await, -32004, "UNSUPPORTED_OPERATION");
    create("b").await.result();
    p.call("DeleteTaskPushNotificationConfig", json!({"taskId": tid, "id": "a"})).await.result();
    create("c").await.result();
    let r = p.call("ListTaskPushNotificationConfigs", json!({"taskId": tid})).await;
    let listed: HashSet<&str> =
        r.result()["configs"].as_array().unwrap().iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(listed, HashSet::from(["b", "c"]));
}

/// `max_history`: a task keeps only the most recent messages, dropping the oldest first.
#[tokio::test]
async fn max_history_drops_the_oldest_messages() {
    let p = Peer::start(config(|c| c.limits.max_history = 3)).await;
    let id = task_id(&run_task(&p, "tck-multi-turn first words").await);
    task_of(&p.call("SendMessage", json!({"message": follow_up(&id, "second words")})).await);
    task_of(&p.call("SendMessage", json!({"message": follow_up(&id, "third words")})).await);
    let history = get_task(&p, json!({"id": id})).await["history"].as_array().cloned().unwrap();
    assert_eq!(history.len(), 3, "{history:?}");
    let all: Vec<String> = history.iter().flat_map(|m| texts(&m["parts"])).collect();
    assert!(!all.iter().any(|t| t.contains("first words") || t.contains("second words")), "oldest dropped: {all:?}");
    assert!(all.iter().any(|t| t == "third words"), "{all:?}");
    assert_eq!(history.last().unwrap()["role"], "ROLE_AGENT", "the newest message is the agent's latest question");
}

//! The mock's behaviours that differ between real agents, each a `MockConfig` field and a `mock`
//! flag, and the three behaviours the official a2a-tck relies on: webhook names resolved at
//! delivery (§13.2), follow-ups steering a continuation, and SubscribeToTask closing on an
//! interrupted task (§11.7). Over real HTTP on 127.0.0.1.

#[path = "common/peer.rs"]
mod peer;
#[path = "common/schema.rs"]
mod schema;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use a2a_conform::protocol::limits::Limits;
use a2a_conform::server::{MockConfig, RESUME_EXTENSION_URI};
use peer::{Event, LiveStream, Peer, Reply, user_message};
use serde_json::{Value, json};

/// Longest wait for one stream event.
const STEP: Duration = Duration::from_secs(5);

fn message(message_id: &str, text: &str, task_id: Option<&str>) -> Value {
    let mut m = json!({"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(t) = task_id {
        m["taskId"] = json!(t);
    }
    m
}

fn state(r: &Reply) -> String {
    let t = &r.result()["task"];
    t["status"]["state"].as_str().unwrap_or_else(|| panic!("no task state in {}", r.body)).to_owned()
}

async fn read_to_end(s: &mut LiveStream) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(ev) = s.next_within(STEP).await {
        out.push(ev);
    }
    out
}

fn ids(events: &[Event]) -> Vec<u64> {
    events.iter().map(|e| e.id.as_deref().expect("every event has an id").parse().expect("numeric id")).collect()
}

/// Test-only scenarios: `kit-slow` (WORKING, three artifacts and COMPLETED, 150 ms apart) and
/// `kit-later-input` (WORKING, then INPUT_REQUIRED 300 ms later).
fn scenarios() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mock_options-scenarios");
        std::fs::create_dir_all(&dir).unwrap();
        let sleep = json!({"sleep": {"ms": 150}});
        let art = |n: u32| json!({"artifact": {"artifactId": format!("a{n}"), "parts": [{"text": format!("part {n}")}]}});
        let files = [
            json!({
                "name": "kit-slow", "description": "test only", "prefixes": ["kit-slow"],
                "steps": [{"status": {"state": "TASK_STATE_WORKING"}}, sleep, art(1), sleep, art(2), sleep, art(3), sleep,
                          {"status": {"state": "TASK_STATE_COMPLETED"}}]
            }),
            json!({
                "name": "kit-later-input", "description": "test only", "prefixes": ["kit-later-input"],
                "steps": [{"status": {"state": "TASK_STATE_WORKING"}}, {"sleep": {"ms": 300}},
                          {"status": {"state": "TASK_STATE_INPUT_REQUIRED", "text": "more?"}}]
            }),
        ];
        for f in files {
            let name = f["name"].as_str().unwrap().to_owned();
            let tmp = dir.join(format!(".{name}.{}", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec(&f).unwrap()).unwrap();
            std::fs::rename(&tmp, dir.join(format!("{name}.json"))).unwrap();
        }
        dir
    })
    .clone()
}

async fn start_task(p: &Peer, text: &str) -> String {
    let r = p
        .call("SendMessage", json!({"message": user_message(text), "configuration": {"returnImmediately": true}}))
        .await;
    r.result()["task"]["id"].as_str().unwrap().to_owned()
}

// ---------------------------------------------------------------------------------------------
// The three behaviours the a2a-tck run needs
// ---------------------------------------------------------------------------------------------

/// §13.2 (SSRF guard) without DNS at create time: a webhook named by a host name is registered
/// as given, without resolving it (a CI box without DNS can register `https://example.com/...`),
/// and read back by Get and List; a name that never resolves (`.invalid`, RFC 6761) only fails
/// the deliveries, while the task itself completes.
#[tokio::test]
async fn a_webhook_name_is_registered_unresolved_and_judged_at_delivery() {
    let p = Peer::start(MockConfig { push_timeout_ms: 500, push_retries: 0, ..MockConfig::default() }).await;
    let task_id = start_task(&p, "tck-input-required hook").await;
    for (id, url) in [("a", "https://example.com/hook"), ("b", "https://a2a-conform-test.invalid/hook")] {
        let t0 = Instant::now();
        let r = p
            .call("CreateTaskPushNotificationConfig", json!({"taskId": task_id, "id": id, "url": url, "token": "t"}))
            .await;
        assert!(t0.elapsed() < Duration::from_secs(1), "{url}: create took {:?}", t0.elapsed());
        assert_eq!(r.result()["url"], url);
        let got = p.call("GetTaskPushNotificationConfig", json!({"taskId": task_id, "id": id})).await;
        assert_eq!(got.result()["url"], url);
    }
    let list = p.call("ListTaskPushNotificationConfigs", json!({"taskId": task_id})).await;
    assert_eq!(list.result()["configs"].as_array().unwrap().len(), 2);
    // A literal private address is still refused at once.
    let e =
        p.call("CreateTaskPushNotificationConfig", json!({"taskId": task_id, "url": "http://192.168.0.1/hook"})).await;
    assert_eq!(e.error_code(), -32602, "{}", e.body);
    // Deliveries to the unresolvable name fail in the background; the task goes on.
    let done =
        p.call("SendMessage", json!({"message": message("tck-complete-task-0001", "finish", Some(&task_id))})).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED");
}

/// A follow-up steers the continuation by its messageId prefix, as the a2a-tck does: two
/// `tck-input-required-…` follow-ups keep the task INPUT_REQUIRED, a `tck-complete-task-…` one
/// completes it with the complete-task reply, and every user message is in the history in order.
#[tokio::test]
async fn follow_ups_steer_the_continuation_by_prefix() {
    let p = Peer::default().await;
    let first = p.call("SendMessage", json!({"message": message("tck-input-required-00000001", "start", None)})).await;
    assert_eq!(state(&first), "TASK_STATE_INPUT_REQUIRED");
    let task_id = first.result()["task"]["id"].as_str().unwrap().to_owned();
    for (i, text) in ["history 1", "history 2"].iter().enumerate() {
        let r = p
            .call(
                "SendMessage",
                json!({"message": message(&format!("tck-input-required-1000000{i}"), text, Some(&task_id))}),
            )
            .await;
        assert_eq!(state(&r), "TASK_STATE_INPUT_REQUIRED", "follow-up {i}: {}", r.body);
    }
    let done = p
        .call("SendMessage", json!({"message": message("tck-complete-task-00000009", "finish", Some(&task_id))}))
        .await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED");
    assert_eq!(done.result()["task"]["status"]["message"]["parts"][0]["text"], "Hello from TCK");
    let got = p.call("GetTask", json!({"id": task_id})).await;
    let user_texts: Vec<&str> = got.result()["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "ROLE_USER")
        .map(|m| m["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(user_texts, ["start", "history 1", "history 2", "finish"]);
}

/// §11.7 ("until the task reaches a terminal or interrupted state, at which point the stream
/// closes"), under `--subscribe-closes-at-interrupted`: SubscribeToTask on a task already
/// INPUT_REQUIRED sends the task snapshot and closes.
#[tokio::test]
async fn subscribing_to_an_interrupted_task_closes_after_the_snapshot() {
    let p = Peer::start(MockConfig { subscribe_until_terminal: false, ..MockConfig::default() }).await;
    let r = p.call("SendMessage", json!({"message": user_message("tck-input-required x")})).await;
    let task_id = r.result()["task"]["id"].as_str().unwrap().to_owned();
    let t0 = Instant::now();
    let events = p.stream("SubscribeToTask", json!({"id": task_id})).await.unwrap_or_else(|e| panic!("{}", e.body));
    assert!(t0.elapsed() < Duration::from_secs(2), "the stream stayed open {:?}", t0.elapsed());
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].kind(), "task");
    assert_eq!(events[0].state(), Some("TASK_STATE_INPUT_REQUIRED"));
}

/// §11.7, under `--subscribe-closes-at-interrupted`: a subscription opened while the task works
/// closes after the event that interrupts it.
#[tokio::test]
async fn a_subscription_closes_after_the_event_that_interrupts_the_task() {
    let p = Peer::start(MockConfig {
        scenario_dir: Some(scenarios()),
        subscribe_until_terminal: false,
        ..MockConfig::default()
    })
    .await;
    let task_id = start_task(&p, "kit-later-input").await;
    let mut s = p.open_stream("SubscribeToTask", json!({"id": task_id})).await.unwrap_or_else(|e| panic!("{}", e.body));
    let events = read_to_end(&mut s).await;
    assert_eq!(events[0].kind(), "task");
    let last = events.last().unwrap();
    assert_eq!(last.state(), Some("TASK_STATE_INPUT_REQUIRED"), "{events:?}");
}

/// By default (§3.1.6, §7.6.1; the Python SDK's behaviour, which the official TCK expects): the
/// subscription stays open through the interruption and ends with the terminal state a follow-up
/// brings.
#[tokio::test]
async fn a_subscription_stays_open_through_an_interruption_by_default() {
    let p = Peer::default().await;
    let r = p.call("SendMessage", json!({"message": user_message("tck-input-required x")})).await;
    let task_id = r.result()["task"]["id"].as_str().unwrap().to_owned();
    let mut s = p.open_stream("SubscribeToTask", json!({"id": task_id})).await.unwrap_or_else(|e| panic!("{}", e.body));
    let snap = s.next_within(STEP).await.unwrap();
    assert_eq!(snap.state(), Some("TASK_STATE_INPUT_REQUIRED"));
    p.call("SendMessage", json!({"message": message("m-2", "answer", Some(&task_id))})).await.result();
    let rest = read_to_end(&mut s).await;
    assert_eq!(rest.last().and_then(Event::state), Some("TASK_STATE_COMPLETED"), "{rest:?}");
}

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/// Resume extension: the card declares it; `afterEventId` in the params replays exactly what the
/// `Last-Event-ID` header replays (same ids, same events, no snapshot); ids are log positions,
/// identical for the same event on every stream. With `resume_extension` off the param is ignored
/// (a fresh snapshot) and the card does not declare it.
#[tokio::test]
async fn after_event_id_resumes_like_last_event_id() {
    let p = Peer::start(MockConfig { scenario_dir: Some(scenarios()), ..MockConfig::default() }).await;
    let card: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    let declared = card["capabilities"]["extensions"].as_array().unwrap();
    assert!(declared.iter().any(|e| e["uri"] == RESUME_EXTENSION_URI), "{card}");

    let task_id = start_task(&p, "kit-slow").await;
    let mut head =
        p.open_stream("SubscribeToTask", json!({"id": task_id})).await.unwrap_or_else(|e| panic!("{}", e.body));
    let first = head.next_within(STEP).await.unwrap();
    let after = first.id.clone().unwrap();
    drop(head);
    let mut by_param = p
        .open_stream("SubscribeToTask", json!({"id": task_id, "afterEventId": after}))
        .await
        .unwrap_or_else(|e| panic!("{}", e.body));
    let mut by_header = p
        .open_stream_with(json!("s-2"), "SubscribeToTask", json!({"id": task_id}), &[("last-event-id", &after)])
        .await
        .unwrap_or_else(|e| panic!("{}", e.body));
    let (a, b) = (read_to_end(&mut by_param).await, read_to_end(&mut by_header).await);
    assert!(!a.is_empty() && a.iter().all(|e| e.kind() != "task"), "{a:?}");
    assert_eq!(ids(&a), ids(&b), "the same events under the same ids");
    assert!(ids(&a).iter().all(|id| *id > after.parse::<u64>().unwrap()));
    assert!(ids(&a).windows(2).all(|w| w[0] < w[1]), "never duplicated: {:?}", ids(&a));
    let strip = |evs: &[Event]| evs.iter().map(|e| e.data["result"].clone()).collect::<Vec<_>>();
    assert_eq!(strip(&a), strip(&b));
    assert_eq!(a.last().unwrap().state(), Some("TASK_STATE_COMPLETED"));

    let off =
        Peer::start(MockConfig { scenario_dir: Some(scenarios()), resume_extension: false, ..MockConfig::default() })
            .await;
    let card: Value = off.http.get(off.server.card_url()).send().await.unwrap().json().await.unwrap();
    assert!(card["capabilities"].get("extensions").is_none(), "{card}");
    let task_id = start_task(&off, "kit-slow").await;
    let mut s = off
        .open_stream("SubscribeToTask", json!({"id": task_id, "afterEventId": "0"}))
        .await
        .unwrap_or_else(|e| panic!("{}", e.body));
    assert_eq!(s.next_within(STEP).await.unwrap().kind(), "task", "the param is ignored: a fresh snapshot");
}

/// An `afterEventId` the task never issued is -32602 naming the param.
#[tokio::test]
async fn an_unknown_after_event_id_is_invalid_params() {
    let p = Peer::start(MockConfig { scenario_dir: Some(scenarios()), ..MockConfig::default() }).await;
    let task_id = start_task(&p, "kit-slow").await;
    for bad in [json!("999"), json!("x"), json!(true)] {
        let Err(e) = p.open_stream("SubscribeToTask", json!({"id": task_id, "afterEventId": bad})).await else {
            panic!("{bad}: a stream instead of -32602");
        };
        assert_eq!(e.error_code(), -32602, "{bad}: {}", e.body);
        assert!(e.body["error"]["message"].as_str().unwrap().contains("afterEventId"), "{}", e.body);
    }
}

/// `path_prefix`: the card is at `{prefix}/.well-known/agent-card.json`, its interface URL and the
/// JSON-RPC endpoint are under the prefix, and nothing is served at the root.
#[tokio::test]
async fn a_path_prefix_moves_the_card_and_the_endpoint() {
    let p = Peer::start(MockConfig { path_prefix: "/agents/a/".into(), ..MockConfig::default() }).await;
    let base = p.server.url().to_owned();
    assert!(base.ends_with("/agents/a"), "{base}");
    assert_eq!(p.server.card_url(), format!("{base}/.well-known/agent-card.json"));
    let card: Value = p.http.get(p.server.card_url()).send().await.unwrap().json().await.unwrap();
    assert_eq!(card["supportedInterfaces"][0]["url"], format!("{base}/rpc"));
    assert_eq!(p.send_text("hello").await.result()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let root = base.trim_end_matches("/agents/a");
    let at_root = p.http.get(format!("{root}/.well-known/agent-card.json")).send().await.unwrap();
    assert_eq!(at_root.status(), 404);

    for bad in ["agents", "/a/../b", "/a?x=1", "/a//b"] {
        let e = a2a_conform::server::MockServer::start(MockConfig { path_prefix: bad.into(), ..MockConfig::default() })
            .await
            .unwrap_err();
        assert!(e.to_string().contains("--path-prefix"), "{bad}: {e}");
    }
}

/// `legacy_method_names`: off, `message/send` is -32601 (a 1.0 agent); on, the 0.3 names are
/// aliases of the 1.0 methods (params and results stay 1.0).
#[tokio::test]
async fn legacy_method_names_are_aliases_only_when_asked() {
    let params = json!({"message": user_message("hello")});
    let p = Peer::default().await;
    assert_eq!(p.call("message/send", params.clone()).await.error_code(), -32601);

    let p = Peer::start(MockConfig { legacy_method_names: true, ..MockConfig::default() }).await;
    let sent = p.call("message/send", params).await;
    let task_id = sent.result()["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(p.call("tasks/get", json!({"id": task_id})).await.result()["id"], task_id);
    assert_eq!(p.call("tasks/cancel", json!({"id": task_id})).await.error_code(), -32002);
    assert_eq!(p.call("tasks/list", json!({})).await.error_code(), -32601, "0.3 had no tasks/list");
}

/// `single_use_message_ids` (§3.3.1: agents may use the messageId to detect duplicates): a repeated
/// messageId is -32602 naming `message.messageId`; a message refused for another reason does not
/// use its id up. Off (the default), a repeat is accepted.
#[tokio::test]
async fn single_use_message_ids_refuse_a_repeat() {
    let p = Peer::start(MockConfig { single_use_message_ids: true, ..MockConfig::default() }).await;
    let bad = json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "x", "mediaType": "image/png"}]}});
    assert_eq!(p.call("SendMessage", bad).await.error_code(), -32005);
    p.call("SendMessage", json!({"message": message("m-1", "hello", None)})).await.result();
    let again = p.call("SendMessage", json!({"message": message("m-1", "hello", None)})).await;
    assert_eq!(again.error_code(), -32602, "{}", again.body);
    let text = again.body["error"]["message"].as_str().unwrap();
    assert!(text.contains("message.messageId") && text.contains("already used"), "{text}");

    let p = Peer::default().await;
    for _ in 0..2 {
        p.call("SendMessage", json!({"message": message("m-1", "hello", None)})).await.result();
    }
}

/// `error_info_everywhere`: -32700, -32600, -32601 and -32602 carry a `google.rpc.ErrorInfo` with
/// the code's reason (A2A codes always do); off, a -32601 has no `data`.
#[tokio::test]
async fn error_info_everywhere_covers_standard_codes() {
    let p = Peer::start(MockConfig { error_info_everywhere: true, ..MockConfig::default() }).await;
    let json_headers = [("content-type", "application/json"), ("a2a-version", "1.0")];
    let cases: [(&str, i64, &str); 4] = [
        ("{bad", -32700, "PARSE_ERROR"),
        ("[]", -32600, "INVALID_REQUEST"),
        (r#"{"jsonrpc":"2.0","id":1,"method":"Nope","params":{}}"#, -32601, "METHOD_NOT_FOUND"),
        (r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":""}}"#, -32602, "INVALID_PARAMS"),
    ];
    for (body, code, reason) in cases {
        let v: Value = p.post_raw(body, &json_headers).await.json().await.unwrap();
        assert_eq!(v["error"]["code"], code, "{v}");
        let infos: Vec<&Value> = v["error"]["data"]
            .as_array()
            .unwrap_or_else(|| panic!("no data: {v}"))
            .iter()
            .filter(|d| d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
            .collect();
        assert_eq!(infos.len(), 1, "{v}");
        assert_eq!(infos[0]["reason"], reason);
        assert_eq!(infos[0]["domain"], "a2a-protocol.org");
    }
    let plain = Peer::default().await;
    let v: Value = plain.post_raw(cases[2].0, &json_headers).await.json().await.unwrap();
    assert!(v["error"].get("data").is_none(), "{v}");
}

/// §3.3.2, §13.1: a task of another tenant is indistinguishable from one that does not exist:
/// the same code, message and ErrorInfo (up to the id asked for), answered as fast, for GetTask,
/// CancelTask, SubscribeToTask and the push config methods.
#[tokio::test]
async fn a_foreign_task_is_answered_exactly_like_an_unknown_one() {
    let p = Peer::start(MockConfig { tenant: "acme".into(), ..MockConfig::default() }).await;
    let r = p.call("SendMessage", json!({"tenant": "acme", "message": user_message("tck-input-required x")})).await;
    let foreign = r.result()["task"]["id"].as_str().unwrap().to_owned();
    let unknown = uuid::Uuid::new_v4().to_string();
    let methods = [
        ("GetTask", "id"),
        ("CancelTask", "id"),
        ("SubscribeToTask", "id"),
        ("ListTaskPushNotificationConfigs", "taskId"),
        ("CreateTaskPushNotificationConfig", "taskId"),
    ];
    for (method, field) in methods {
        let ask = |id: &str| {
            let mut params = json!({"tenant": "other", field: id});
            if method == "CreateTaskPushNotificationConfig" {
                params["url"] = json!("https://example.com/hook");
            }
            params
        };
        let t0 = Instant::now();
        let a = p.call(method, ask(&foreign)).await;
        let ta = t0.elapsed();
        let t0 = Instant::now();
        let b = p.call(method, ask(&unknown)).await;
        let tb = t0.elapsed();
        assert_eq!(a.error_code(), -32001, "{method}: {}", a.body);
        let normalize = |r: &Reply, id: &str| r.body["error"].to_string().replace(id, "ID");
        assert_eq!(normalize(&a, &foreign), normalize(&b, &unknown), "{method}");
        // Same timing class: both are answered from memory at once.
        assert!(ta < Duration::from_millis(500) && tb < Duration::from_millis(500), "{method}: {ta:?} vs {tb:?}");
    }
}

/// The limits table: a page bigger than `max_page_size` is served with that many tasks and a
/// token; a `pageToken` over `max_cursor_len` is -32602; a result over `max_response_bytes` is
/// -32603 naming the flag; an SSE event over `max_event_bytes` becomes an error event that ends
/// the stream; a stream open longer than `max_stream_ms` closes.
#[tokio::test]
async fn limits_bound_pages_cursors_responses_events_and_streams() {
    let limits = Limits { max_page_size: 2, max_cursor_len: 16, ..Limits::default() };
    let p = Peer::start(MockConfig { limits, ..MockConfig::default() }).await;
    for _ in 0..3 {
        p.send_text("hello").await.result();
    }
    let page = p.call("ListTasks", json!({"pageSize": 50})).await;
    assert_eq!(page.result()["tasks"].as_array().unwrap().len(), 2);
    assert_ne!(page.result()["nextPageToken"], "");
    let e = p.call("ListTasks", json!({"pageToken": "x".repeat(17)})).await;
    assert_eq!(e.error_code(), -32602);

    let small = Limits { max_response_bytes: 200, max_event_bytes: 150, ..Limits::default() };
    let p = Peer::start(MockConfig { limits: small, ..MockConfig::default() }).await;
    let e = p.send_text("hello").await;
    assert_eq!(e.error_code(), -32603);
    assert!(e.body["error"]["message"].as_str().unwrap().contains("--max-response-bytes"), "{}", e.body);
    let events = p.stream("SendStreamingMessage", json!({"message": user_message("hello")})).await.unwrap();
    let last = events.last().unwrap();
    assert_eq!(last.data["error"]["code"], -32603, "{events:?}");
    assert!(last.data["error"]["message"].as_str().unwrap().contains("--max-event-bytes"));

    let short = Limits { max_stream_ms: 300, ..Limits::default() };
    let p = Peer::start(MockConfig { limits: short, ..MockConfig::default() }).await;
    let task_id = start_task(&p, "tck-cancel long").await;
    let t0 = Instant::now();
    let events = p.stream("SubscribeToTask", json!({"id": task_id})).await.unwrap();
    assert!(t0.elapsed() < Duration::from_secs(3), "closed after {:?}", t0.elapsed());
    assert_eq!(events[0].kind(), "task");
}

/// `mock --print-limits` prints every limit with its flag, the value in force and the default.
#[test]
fn print_limits_lists_every_limit_flag() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-conform"))
        .args(["mock", "--print-limits", "--max-parts", "3"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for row in Limits::default().table() {
        assert!(text.contains(row.flag), "{} missing:\n{text}", row.flag);
    }
    let parts = text.lines().find(|l| l.starts_with("--max-parts")).unwrap();
    let cols: Vec<&str> = parts.split_whitespace().collect();
    assert_eq!(&cols[1..3], ["3", "64"], "{parts}");
}

//! Streams, resume, concurrent subscribers, cancel during a stream, push delivery and resource
//! bounds of the mock peer, over real HTTP (§3.1.2, §3.1.6, §3.5.2, §4.3.3, §9.4.2, §13.2).
//!
//! Every wait is bounded: single events by `STEP`, background effects by `eventually`.

#[path = "common/peer.rs"]
mod peer;
#[path = "common/schema.rs"]
mod schema;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use a2a_conform::protocol::limits::Limits;
use a2a_conform::server::{MockConfig, WebhookPolicy};
use peer::{Event, LiveStream, Peer, Reply, user_message};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer as Hook, ResponseTemplate};

/// Longest wait for one stream event.
const STEP: Duration = Duration::from_secs(5);

/// Credentials every push config in this file carries.
const CANARY: &str = "canary-secret";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Polls `f` every 20 ms until it yields a value, failing the test after `limit`.
async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out after {limit:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn is_terminal(state: &str) -> bool {
    matches!(state, "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_CANCELED" | "TASK_STATE_REJECTED")
}

fn is_interrupted(state: &str) -> bool {
    matches!(state, "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED")
}

/// Lifecycle position of a state within one stream: a stream never moves to a lower rank.
fn rank(state: &str) -> u8 {
    match state {
        "TASK_STATE_SUBMITTED" => 0,
        "TASK_STATE_WORKING" => 1,
        s if is_interrupted(s) => 2,
        s if is_terminal(s) => 3,
        other => panic!("unexpected state {other:?}"),
    }
}

/// The `id:` of an event as a number.
fn seq(ev: &Event) -> u64 {
    let id = ev.id.as_deref().unwrap_or_else(|| panic!("event without id: {}", ev.data));
    id.parse().unwrap_or_else(|_| panic!("event id {id:?} is not a sequence number"))
}

fn seqs(events: &[Event]) -> Vec<u64> {
    events.iter().map(seq).collect()
}

/// The StreamResponse of an event.
fn result(ev: &Event) -> &Value {
    assert!(ev.data.get("error").is_none(), "stream carried an error: {}", ev.data);
    &ev.data["result"]
}

/// The task id a StreamResponse belongs to.
fn task_id_of(sr: &Value) -> &str {
    let id = sr["task"]["id"]
        .as_str()
        .or_else(|| sr.as_object().and_then(|o| o.values().next()).and_then(|v| v["taskId"].as_str()));
    id.unwrap_or_else(|| panic!("no task id in {sr}"))
}

/// The state of a `task` or `statusUpdate` StreamResponse.
fn state_of(sr: &Value) -> Option<&str> {
    sr["task"]["status"]["state"].as_str().or_else(|| sr["statusUpdate"]["status"]["state"].as_str())
}

/// Checks the task-stream shape of §3.1.2 / §3.1.6 / §9.4.2 on a complete stream: every event is a
/// JSON-RPC response echoing `req_id` with a result for `task_id`; the first is a `task` snapshot
/// and no other is; ids are unique and increasing; states never go backwards (a snapshot of an
/// interrupted task may be followed by WORKING, as a follow-up resumes it); the last event, and
/// only it, is a status update into a terminal or interrupted state.
fn check_task_stream(events: &[Event], req_id: &Value, task_id: &str) {
    assert!(!events.is_empty(), "empty stream");
    for (i, ev) in events.iter().enumerate() {
        assert_eq!(ev.data["id"], *req_id, "event {i} does not echo the request id: {}", ev.data);
        let sr = result(ev);
        assert_eq!(task_id_of(sr), task_id, "event {i} is about another task: {sr}");
        assert_eq!(ev.kind() == "task", i == 0, "only the first event is a task snapshot: {:?}", kinds(events));
        assert!(
            matches!(ev.kind(), "task" | "statusUpdate" | "artifactUpdate"),
            "unexpected {} in a task stream",
            ev.kind()
        );
    }
    let ids = seqs(events);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids must increase strictly: {ids:?}");
    let states: Vec<&str> = events.iter().filter_map(|e| state_of(result(e))).collect();
    let skip = usize::from(is_interrupted(states[0]));
    let ranks: Vec<u8> = states[skip..].iter().map(|s| rank(s)).collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "states went backwards: {states:?}");
    let last = events.last().unwrap();
    let last_state = state_of(result(last)).unwrap_or("");
    assert!(
        last.kind() == "statusUpdate" && (is_terminal(last_state) || is_interrupted(last_state)),
        "the stream must close right after a terminal or interrupted status, ended with {}",
        last.data
    );
    for ev in &events[..events.len() - 1] {
        if ev.kind() == "statusUpdate" {
            let s = state_of(result(ev)).unwrap();
            assert!(
                !is_terminal(s) && !is_interrupted(s),
                "events followed the closing status {s}: {:?}",
                kinds(events)
            );
        }
    }
}

fn kinds(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            format!("{}#{}:{}", e.kind(), e.id.as_deref().unwrap_or("-"), state_of(&e.data["result"]).unwrap_or(""))
        })
        .collect()
}

/// Reads a built-in scenario file.
fn scenario_file(name: &str) -> Value {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mock-peer/scenarios").join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

/// Asserts that `events` (everything after the snapshot) are exactly what the scenario's `steps`
/// script, in order, up to the first terminal or interrupted status. `input` fills `{{input}}`.
fn assert_follows_script(events: &[Event], steps: &[Value], input: &str, what: &str) {
    let mut expected = Vec::new();
    for step in steps {
        if let Some(s) = step.get("status") {
            let state = s["state"].as_str().unwrap();
            expected.push(step);
            if is_terminal(state) || is_interrupted(state) {
                break;
            }
        } else if step.get("artifact").is_some() {
            expected.push(step);
        }
    }
    let got: Vec<&Value> = events.iter().map(result).collect();
    assert_eq!(got.len(), expected.len(), "{what}: scripted {} events, streamed {:?}", expected.len(), kinds(events));
    for (i, (sr, step)) in got.iter().zip(&expected).enumerate() {
        if let Some(s) = step.get("status") {
            let u = &sr["statusUpdate"];
            assert!(u.is_object(), "{what}: event {i} should be a statusUpdate: {sr}");
            assert_eq!(u["status"]["state"], s["state"], "{what}: event {i}");
            if let Some(text) = s["text"].as_str() {
                let want = text.replace("{{input}}", input);
                assert_eq!(u["status"]["message"]["parts"][0]["text"], want, "{what}: status message of event {i}");
                assert_eq!(u["status"]["message"]["role"], "ROLE_AGENT", "{what}: event {i}");
            }
        } else {
            let a = &step["artifact"];
            let u = &sr["artifactUpdate"];
            assert!(u.is_object(), "{what}: event {i} should be an artifactUpdate: {sr}");
            assert_eq!(u["artifact"]["artifactId"], a["artifactId"], "{what}: event {i}");
            if let Some(name) = a.get("name") {
                assert_eq!(&u["artifact"]["name"], name, "{what}: event {i}");
            }
            let want: Value = serde_json::from_str(&a["parts"].to_string().replace("{{input}}", input)).unwrap();
            assert_eq!(u["artifact"]["parts"], want, "{what}: parts of event {i}");
            let flag = |v: &Value, k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
            assert_eq!(flag(u, "append"), flag(a, "append"), "{what}: append of event {i}");
            assert_eq!(flag(u, "lastChunk"), flag(a, "lastChunk"), "{what}: lastChunk of event {i}");
        }
    }
}

/// SendMessage with `returnImmediately`; returns the task id.
async fn start_task(p: &Peer, text: &str) -> String {
    let r = p
        .call("SendMessage", json!({"message": user_message(text), "configuration": {"returnImmediately": true}}))
        .await;
    r.result()["task"]["id"].as_str().expect("a task").to_owned()
}

/// Waits until GetTask reports `state`.
async fn wait_state(p: &Peer, task_id: &str, state: &str) {
    eventually(&format!("task {task_id} in {state}"), Duration::from_secs(5), || async {
        let r = p.call("GetTask", json!({"id": task_id})).await;
        (r.result()["status"]["state"] == state).then_some(())
    })
    .await
}

async fn subscribe(p: &Peer, task_id: &str) -> LiveStream {
    p.open_stream("SubscribeToTask", json!({"id": task_id}))
        .await
        .unwrap_or_else(|e| panic!("SubscribeToTask refused: {}", e.body))
}

async fn subscribe_after(p: &Peer, task_id: &str, last_event_id: &str) -> Result<LiveStream, Reply> {
    p.open_stream_with(json!("s-1"), "SubscribeToTask", json!({"id": task_id}), &[("last-event-id", last_event_id)])
        .await
}

/// Reads up to and including the first event `stop` accepts.
async fn read_until(s: &mut LiveStream, mut stop: impl FnMut(&Event) -> bool) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let ev = s.next_within(STEP).await.unwrap_or_else(|| panic!("stream closed early after {:?}", kinds(&out)));
        let done = stop(&ev);
        out.push(ev);
        if done {
            return out;
        }
    }
}

/// Reads the rest of a stream, each event within `STEP`.
async fn read_to_end(s: &mut LiveStream) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(ev) = s.next_within(STEP).await {
        out.push(ev);
    }
    out
}

/// A directory holding test-only scenarios with short sleeps between several events, so that a
/// stream can be cut in the middle of a live task.
fn kit_scenarios() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mock_streams_push-scenarios");
        std::fs::create_dir_all(&dir).unwrap();
        let sleep = json!({"sleep": {"ms": 200}});
        let chunk = |text: &str, append: bool, last: bool| {
            json!({"artifact": {"artifactId": "slow", "name": "slow-result", "parts": [{"text": text}], "append": append, "lastChunk": last}})
        };
        let scenario = json!({
            "name": "kit-slow-chunks",
            "description": "test only: WORKING, three artifact chunks and COMPLETED, 200 ms apart",
            "prefixes": ["kit-slow-chunks"],
            "steps": [
                {"status": {"state": "TASK_STATE_WORKING"}},
                sleep, chunk("one ", false, false),
                sleep, chunk("two ", true, false),
                sleep, chunk("three", true, true),
                sleep, {"status": {"state": "TASK_STATE_COMPLETED", "text": "slow done"}}
            ]
        });
        // Written aside and renamed, so that a concurrent run of this binary never reads half a file.
        let tmp = dir.join(format!(".kit-slow-chunks.{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec_pretty(&scenario).unwrap()).unwrap();
        std::fs::rename(&tmp, dir.join("kit-slow-chunks.json")).unwrap();
        dir
    })
    .clone()
}

fn config_with_kit_scenarios() -> MockConfig {
    MockConfig { scenario_dir: Some(kit_scenarios()), ..MockConfig::default() }
}

fn push_config(policy: WebhookPolicy) -> MockConfig {
    MockConfig { webhooks: policy, push_timeout_ms: 2_000, push_retries: 0, ..MockConfig::default() }
}

/// A webhook receiver answering every POST to `/hook` with `status`.
async fn hook(status: u16) -> Hook {
    let h = Hook::start().await;
    Mock::given(method("POST")).and(path("/hook")).respond_with(ResponseTemplate::new(status)).mount(&h).await;
    h
}

fn hook_url(h: &Hook) -> String {
    format!("{}/hook", h.uri())
}

async fn received(h: &Hook) -> Vec<wiremock::Request> {
    h.received_requests().await.unwrap_or_default()
}

fn header<'a>(req: &'a wiremock::Request, name: &str) -> Option<&'a str> {
    req.headers.get(name).and_then(|v| v.to_str().ok())
}

/// Checks one push delivery (§4.3.3, §13.2) and returns its body: a POST with the configured
/// credentials and token, `Content-Type: application/a2a+json`, and a body that is one
/// StreamResponse about `task_id`, not a JSON-RPC envelope.
fn check_delivery(req: &wiremock::Request, token: &str, task_id: &str) -> Value {
    assert_eq!(req.method.as_str(), "POST");
    assert_eq!(
        header(req, "authorization"),
        Some(format!("Bearer {CANARY}").as_str()),
        "push must carry the configured credentials"
    );
    let ct = header(req, "content-type").unwrap_or("");
    assert_eq!(ct.split(';').next().unwrap().trim(), "application/a2a+json", "push content type");
    assert_eq!(header(req, "x-a2a-notification-token"), Some(token), "push must carry the config's token");
    let body: Value = serde_json::from_slice(&req.body).expect("push body is JSON");
    assert!(
        body.get("jsonrpc").is_none() && body.get("result").is_none(),
        "push body must not be a JSON-RPC envelope: {body}"
    );
    assert_eq!(body.as_object().map(|o| o.len()), Some(1), "exactly one StreamResponse member: {body}");
    schema::validate("StreamResponse", &body).unwrap_or_else(|e| panic!("push body violates StreamResponse: {e}"));
    assert_eq!(task_id_of(&body), task_id);
    body
}

/// Waits until `h` has received a status update into `state`; returns every request so far.
async fn wait_delivery(h: &Hook, state: &str) -> Vec<wiremock::Request> {
    eventually(&format!("a push of {state}"), Duration::from_secs(5), || async {
        let reqs = received(h).await;
        let seen = reqs.iter().any(|r| {
            serde_json::from_slice::<Value>(&r.body).is_ok_and(|b| b["statusUpdate"]["status"]["state"] == state)
        });
        seen.then_some(reqs)
    })
    .await
}

fn push_params(task_id: &str, id: &str, url: &str, token: &str) -> Value {
    json!({"taskId": task_id, "id": id, "url": url, "token": token, "authentication": {"scheme": "Bearer", "credentials": CANARY}})
}

/// The field names of a -32602's BadRequest details.
fn violated_fields(r: &Reply) -> Vec<String> {
    r.body["error"]["data"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|d| d["fieldViolations"].as_array().into_iter().flatten())
        .filter_map(|v| v["field"].as_str().map(str::to_owned))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 1. SendStreamingMessage shapes
// ---------------------------------------------------------------------------------------------

/// §3.1.2, §9.4.2, §3.5.2: for every built-in task scenario that runs without long waits,
/// SendStreamingMessage answers HTTP 200 `text/event-stream`; the stream starts with the SUBMITTED
/// task (id 0), then carries exactly the scripted events in order, each a JSON-RPC response echoing
/// the request id, with ids 0, 1, 2, … and closes right after the terminal or interrupted status.
#[tokio::test]
async fn streaming_message_follows_every_scenario_file() {
    let p = Peer::default().await;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mock-peer/scenarios");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
        .collect();
    names.sort();
    let mut checked = 0;
    for name in &names {
        let sc = scenario_file(name);
        let steps = sc["steps"].as_array().unwrap();
        let has = |k: &str| steps.iter().any(|s| s.get(k).is_some());
        if has("reply") || has("sleep") {
            continue;
        }
        let input = sc["prefixes"]
            .get(0)
            .and_then(Value::as_str)
            .map_or_else(|| "plain words for the default".to_owned(), |p| format!("{p} please"));
        let req_id = json!(42);
        let mut s = p
            .open_stream_with(req_id.clone(), "SendStreamingMessage", json!({"message": user_message(&input)}), &[])
            .await
            .unwrap_or_else(|e| panic!("{name}: {}", e.body));
        assert_eq!(s.status, 200);
        assert_eq!(s.headers["content-type"].to_str().unwrap().split(';').next().unwrap(), "text/event-stream");
        let events = read_to_end(&mut s).await;
        let first = result(&events[0]);
        assert_eq!(
            first["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
            "{name}: the first event is the task as created"
        );
        let task_id = first["task"]["id"].as_str().unwrap().to_owned();
        check_task_stream(&events, &req_id, &task_id);
        assert_eq!(
            seqs(&events),
            (0..events.len() as u64).collect::<Vec<_>>(),
            "{name}: a new task's stream carries its whole log"
        );
        assert_follows_script(&events[1..], steps, &input, name);
        let ctx = first["task"]["contextId"].as_str().unwrap();
        for ev in &events[1..] {
            let sr = result(ev);
            let inner = sr.as_object().unwrap().values().next().unwrap();
            assert_eq!(inner["contextId"], ctx, "{name}: every event carries the task's context");
        }
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} scenarios checked");
}

/// §3.1.2, §4.2.2: tck-stream-chunked and tck-stream-artifact-chunked deliver their chunks in
/// order, the first without `append` and the later ones with `append: true`, `lastChunk: true` only
/// on the last, as the scenario files say; concatenated, they equal the artifact GetTask returns.
#[tokio::test]
async fn chunked_artifacts_arrive_in_order_with_append_and_last_chunk() {
    let p = Peer::default().await;
    for (name, whole) in
        [("tck-stream-chunked", "chunk-1 chunk-2 chunk-3"), ("tck-stream-artifact-chunked", "chunk-1 chunk-2")]
    {
        let events = p.stream("SendStreamingMessage", json!({"message": user_message(name)})).await.unwrap();
        let task_id = result(&events[0])["task"]["id"].as_str().unwrap().to_owned();
        check_task_stream(&events, &json!("s-1"), &task_id);
        let steps = scenario_file(name)["steps"].as_array().unwrap().clone();
        assert_follows_script(&events[1..], &steps, name, name);
        let chunks: Vec<&Value> = events.iter().map(result).filter_map(|r| r.get("artifactUpdate")).collect();
        assert!(chunks.len() >= 2, "{name}: chunked");
        assert!(chunks[0].get("append").is_none_or(|a| a == false), "{name}: the first chunk does not append");
        assert!(chunks[1..].iter().all(|c| c["append"] == true), "{name}: later chunks append");
        let last_flags: Vec<bool> = chunks.iter().map(|c| c["lastChunk"] == true).collect();
        assert_eq!(last_flags.iter().filter(|f| **f).count(), 1, "{name}: one lastChunk");
        assert_eq!(last_flags.last(), Some(&true), "{name}: lastChunk on the final chunk");
        let text: String = chunks
            .iter()
            .flat_map(|c| c["artifact"]["parts"].as_array().unwrap())
            .map(|p| p["text"].as_str().unwrap())
            .collect();
        assert_eq!(text, whole, "{name}: chunks in order");
        let task = p.call("GetTask", json!({"id": task_id})).await;
        let stored: String = task.result()["artifacts"][0]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect();
        assert_eq!(stored, whole, "{name}: the stored artifact is the chunks appended");
    }
}

/// §3.1.2 (message-only stream), §9.4.2: tck-message-response streams exactly one `message` event
/// echoing the request id, then closes.
#[tokio::test]
async fn message_only_stream_is_one_message_then_close() {
    let p = Peer::default().await;
    let mut s = p
        .open_stream_with(
            json!("m-7"),
            "SendStreamingMessage",
            json!({"message": user_message("tck-message-response")}),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(s.headers["content-type"].to_str().unwrap().split(';').next().unwrap(), "text/event-stream");
    let events = read_to_end(&mut s).await;
    assert_eq!(events.len(), 1, "exactly one event: {:?}", kinds(&events));
    assert_eq!(events[0].kind(), "message");
    assert_eq!(events[0].data["id"], "m-7");
    let m = &result(&events[0])["message"];
    assert_eq!(m["role"], "ROLE_AGENT");
    assert_eq!(m["parts"][0]["text"], "Direct message response");
    assert!(s.is_closed());
}

/// §3.1.2, §11.7 and digest §14 item 5: the tck-input-required stream closes after INPUT_REQUIRED;
/// a follow-up SendStreamingMessage to the task starts with its snapshot (labelled with the last id
/// of the first stream) and continues the same event sequence to COMPLETED.
#[tokio::test]
async fn input_required_closes_the_stream_and_a_follow_up_continues_the_log() {
    let p = Peer::default().await;
    let events =
        p.stream("SendStreamingMessage", json!({"message": user_message("tck-input-required")})).await.unwrap();
    let task_id = result(&events[0])["task"]["id"].as_str().unwrap().to_owned();
    check_task_stream(&events, &json!("s-1"), &task_id);
    assert_eq!(state_of(result(events.last().unwrap())), Some("TASK_STATE_INPUT_REQUIRED"));
    let last = seq(events.last().unwrap());

    let mut follow_up = user_message("more details");
    follow_up["taskId"] = json!(task_id);
    let events2 = p.stream("SendStreamingMessage", json!({"message": follow_up})).await.unwrap();
    check_task_stream(&events2, &json!("s-1"), &task_id);
    assert_eq!(seq(&events2[0]), last, "the snapshot reflects the log up to the last event sent");
    assert_eq!(state_of(result(&events2[0])), Some("TASK_STATE_INPUT_REQUIRED"));
    assert_eq!(seqs(&events2[1..]), vec![last + 1, last + 2], "{:?}", kinds(&events2));
    assert_eq!(state_of(result(&events2[1])), Some("TASK_STATE_WORKING"));
    let done = &result(&events2[2])["statusUpdate"]["status"];
    assert_eq!(done["state"], "TASK_STATE_COMPLETED");
    assert_eq!(done["message"]["parts"][0]["text"], "Done: more details");
}

// ---------------------------------------------------------------------------------------------
// 2. Concurrent subscribers
// ---------------------------------------------------------------------------------------------

/// §3.5.2 (multiple streams per task), §3.1.6: two concurrent SubscribeToTask streams of one
/// tck-long-running task both start with the same `task` snapshot, then receive the same events
/// with the same ids in the same order, and both close at COMPLETED.
#[tokio::test]
async fn two_subscribers_receive_the_same_events() {
    let p = Peer::default().await;
    let task_id = start_task(&p, "tck-long-running").await;
    wait_state(&p, &task_id, "TASK_STATE_WORKING").await;
    let (mut a, mut b) = tokio::join!(subscribe(&p, &task_id), subscribe(&p, &task_id));
    let (ea, eb) = tokio::join!(read_to_end(&mut a), read_to_end(&mut b));
    for events in [&ea, &eb] {
        check_task_stream(events, &json!("s-1"), &task_id);
        assert_eq!(state_of(result(&events[0])), Some("TASK_STATE_WORKING"), "snapshot of the current state");
        assert_eq!(state_of(result(events.last().unwrap())), Some("TASK_STATE_COMPLETED"));
        assert!(events.len() >= 2);
    }
    assert_eq!(ea[0].id, eb[0].id, "both snapshots reflect the same log position");
    assert_eq!(result(&ea[0]), result(&eb[0]), "the same snapshot");
    let tail = |ev: &[Event]| ev[1..].iter().map(|e| (seq(e), result(e).clone())).collect::<Vec<_>>();
    assert_eq!(tail(&ea), tail(&eb), "the same events, ids and order on both streams");
    assert_eq!(seqs(&ea[1..]).first(), Some(&(seq(&ea[0]) + 1)), "no gap after the snapshot");
}

/// §3.5.2 ("closing one stream MUST NOT affect other active streams"; "the task lifecycle is
/// independent of any individual stream"): dropping one of two subscribers midway leaves the other
/// running to COMPLETED, and the task completes.
#[tokio::test]
async fn dropping_one_subscriber_does_not_affect_the_other() {
    let p = Peer::default().await;
    let task_id = start_task(&p, "tck-long-running").await;
    let (mut a, mut b) = tokio::join!(subscribe(&p, &task_id), subscribe(&p, &task_id));
    let (sa, sb) = tokio::join!(a.next_within(STEP), b.next_within(STEP));
    assert_eq!(sa.unwrap().kind(), "task");
    let snap_b = sb.unwrap();
    assert_eq!(snap_b.kind(), "task");
    drop(a);
    let mut events = vec![snap_b];
    events.extend(read_to_end(&mut b).await);
    check_task_stream(&events, &json!("s-1"), &task_id);
    assert_eq!(state_of(result(events.last().unwrap())), Some("TASK_STATE_COMPLETED"));
    let ids = seqs(&events);
    assert_eq!(ids, (ids[0]..ids[0] + ids.len() as u64).collect::<Vec<_>>(), "no gap after the snapshot");
    wait_state(&p, &task_id, "TASK_STATE_COMPLETED").await;
}

/// §3.5.2, §3.1.2, §3.1.6: a SendStreamingMessage stream and a SubscribeToTask stream opened on
/// the same task while it runs see the same tail: after the subscriber's snapshot, both carry the
/// same events with the same ids, ending at COMPLETED.
#[tokio::test]
async fn streaming_message_and_subscriber_see_the_same_tail() {
    let p = Peer::default().await;
    let mut send = p
        .open_stream_with(json!(7), "SendStreamingMessage", json!({"message": user_message("tck-long-running")}), &[])
        .await
        .unwrap();
    let first = send.next_within(STEP).await.unwrap();
    assert_eq!(first.kind(), "task");
    assert_eq!(seq(&first), 0);
    let task_id = result(&first)["task"]["id"].as_str().unwrap().to_owned();
    let mut sub = subscribe(&p, &task_id).await;
    let (rest, sub_events) = tokio::join!(read_to_end(&mut send), read_to_end(&mut sub));
    let mut send_events = vec![first];
    send_events.extend(rest);
    check_task_stream(&send_events, &json!(7), &task_id);
    check_task_stream(&sub_events, &json!("s-1"), &task_id);
    let snap = seq(&sub_events[0]);
    let after =
        |ev: &[Event]| ev.iter().filter(|e| seq(e) > snap).map(|e| (seq(e), result(e).clone())).collect::<Vec<_>>();
    let tail = after(&send_events);
    assert!(!tail.is_empty());
    assert_eq!(after(&sub_events[1..]), tail, "the subscriber sees the same tail as the sender");
    assert_eq!(state_of(&tail.last().unwrap().1), Some("TASK_STATE_COMPLETED"));
    // The snapshot matches the sender's view at that position.
    let state_at_snap = send_events.iter().rev().filter(|e| seq(e) <= snap).find_map(|e| state_of(result(e)));
    assert_eq!(state_of(result(&sub_events[0])), state_at_snap, "the snapshot reflects the events up to its id");
}

// ---------------------------------------------------------------------------------------------
// 3. Resume with Last-Event-ID
// ---------------------------------------------------------------------------------------------

/// Kit extension of the `resume` profile (§3.5.2 "a client reconnecting to a task after a network
/// interruption"): a SubscribeToTask stream cut after the first artifact chunk and reopened with
/// `Last-Event-ID: <last id read>` replays exactly the events after that id — no snapshot, no
/// duplicate, no gap, the same ids and payloads as an uninterrupted subscriber — to COMPLETED.
#[tokio::test]
async fn resume_replays_exactly_the_events_after_last_event_id() {
    let p = Peer::start(config_with_kit_scenarios()).await;
    let task_id = start_task(&p, "kit-slow-chunks").await;
    let mut reference = subscribe(&p, &task_id).await;
    let mut cut = subscribe(&p, &task_id).await;
    let read = read_until(&mut cut, |e| e.kind() == "artifactUpdate").await;
    let last = seq(read.last().unwrap());
    drop(cut);

    let mut resumed =
        subscribe_after(&p, &task_id, &last.to_string()).await.unwrap_or_else(|e| panic!("resume refused: {}", e.body));
    let replay = read_to_end(&mut resumed).await;
    let all = read_to_end(&mut reference).await;
    check_task_stream(&all, &json!("s-1"), &task_id);
    assert!(seq(&all[0]) < last, "the reference subscribed before the cut");

    assert!(replay.iter().all(|e| e.kind() != "task"), "a resumed stream has no snapshot: {:?}", kinds(&replay));
    let want: Vec<(u64, Value)> = all.iter().filter(|e| seq(e) > last).map(|e| (seq(e), result(e).clone())).collect();
    let got: Vec<(u64, Value)> = replay.iter().map(|e| (seq(e), result(e).clone())).collect();
    assert_eq!(got, want, "replay after {last}");
    assert_eq!(seqs(&replay), (last + 1..=last + replay.len() as u64).collect::<Vec<_>>(), "no gap, no duplicate");
    assert_eq!(state_of(&got.last().unwrap().1), Some("TASK_STATE_COMPLETED"));
    assert!(replay.iter().all(|e| e.data["id"] == "s-1"));
}

/// Kit extension of the `resume` profile; §3.1.6 errors: a `Last-Event-ID` this task never issued
/// (or not a number) is -32602 naming the header; SubscribeToTask on a terminal task is -32004 (with
/// or without `Last-Event-ID`); an unknown task is -32001.
#[tokio::test]
async fn resume_and_subscribe_errors() {
    let p = Peer::default().await;
    let task_id = start_task(&p, "tck-cancel").await;
    for bad in ["999", "not-a-number"] {
        let e =
            subscribe_after(&p, &task_id, bad).await.err().unwrap_or_else(|| panic!("Last-Event-ID {bad} accepted"));
        assert_eq!(e.error_code(), -32602, "{}", e.body);
        assert_eq!(e.status, 200);
        assert!(violated_fields(&e).iter().any(|f| f == "Last-Event-ID"), "names the header: {}", e.body);
    }
    p.call("CancelTask", json!({"id": task_id})).await.result();
    let e = p.open_stream("SubscribeToTask", json!({"id": task_id})).await.err().expect("terminal task refused");
    assert_eq!(e.error_code(), -32004, "{}", e.body);
    let e = subscribe_after(&p, &task_id, "0").await.err().expect("terminal task refused on resume too");
    assert_eq!(e.error_code(), -32004, "{}", e.body);
    let e = p.open_stream("SubscribeToTask", json!({"id": "no-such-task"})).await.err().expect("unknown task refused");
    assert_eq!(e.error_code(), -32001, "{}", e.body);
}

// ---------------------------------------------------------------------------------------------
// 4. Cancel during a stream
// ---------------------------------------------------------------------------------------------

/// §3.1.5, §3.1.6: a subscriber of a tck-cancel task sees the CancelTask as a CANCELED status update
/// right after what it already had, then the stream closes; GetTask agrees.
#[tokio::test]
async fn cancel_ends_the_subscription_with_canceled() {
    let p = Peer::default().await;
    let task_id = start_task(&p, "tck-cancel").await;
    wait_state(&p, &task_id, "TASK_STATE_WORKING").await;
    let mut s = subscribe(&p, &task_id).await;
    let snap = s.next_within(STEP).await.unwrap();
    assert_eq!(snap.kind(), "task");
    assert_eq!(state_of(result(&snap)), Some("TASK_STATE_WORKING"));
    let c = p.call("CancelTask", json!({"id": task_id})).await;
    assert_eq!(c.result()["status"]["state"], "TASK_STATE_CANCELED");
    let mut events = vec![snap];
    events.extend(read_to_end(&mut s).await);
    check_task_stream(&events, &json!("s-1"), &task_id);
    assert_eq!(events.len(), 2, "{:?}", kinds(&events));
    assert_eq!(state_of(result(&events[1])), Some("TASK_STATE_CANCELED"));
    assert_eq!(seq(&events[1]), seq(&events[0]) + 1);
    wait_state(&p, &task_id, "TASK_STATE_CANCELED").await;
}

// ---------------------------------------------------------------------------------------------
// 5. Push delivery
// ---------------------------------------------------------------------------------------------

/// §4.3.3, §13.2, §3.1.7: after CreateTaskPushNotificationConfig on a running tck-long-running task,
/// every event that follows is POSTed to the webhook with `Authorization: Bearer <credentials>`,
/// `Content-Type: application/a2a+json` and the token header; each body is one StreamResponse (no
/// JSON-RPC envelope), in generation order, ending with COMPLETED, each delivered once.
#[tokio::test]
async fn push_delivers_each_event_with_credentials_and_token() {
    let p = Peer::start(push_config(WebhookPolicy::AllowLoopback)).await;
    let h = hook(200).await;
    let task_id = start_task(&p, "tck-long-running").await;
    let r = p.call("CreateTaskPushNotificationConfig", push_params(&task_id, "cfg-1", &hook_url(&h), "tok-123")).await;
    assert_eq!(r.result()["id"], "cfg-1");
    let reqs = wait_delivery(&h, "TASK_STATE_COMPLETED").await;
    let bodies: Vec<Value> = reqs.iter().map(|r| check_delivery(r, "tok-123", &task_id)).collect();
    let states: Vec<&str> =
        bodies.iter().map(|b| state_of(b).unwrap_or_else(|| panic!("a status event: {b}"))).collect();
    let script = ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"];
    assert!(script.ends_with(&states), "deliveries are the task's events after registration, in order: {states:?}");
    assert_eq!(
        bodies.last().unwrap()["statusUpdate"]["status"]["message"]["parts"][0]["text"],
        "Long-running work finished."
    );
}

/// §3.1.1 (`taskPushNotificationConfig` in SendMessageConfiguration), §4.3.3: an inline config
/// receives every event of the new task from its initial `task` event on — for tck-stream-chunked,
/// the task, WORKING, the three chunks as scripted and COMPLETED, in order.
#[tokio::test]
async fn inline_push_config_delivers_from_the_initial_task_event() {
    let p = Peer::start(push_config(WebhookPolicy::AllowLoopback)).await;
    let h = hook(200).await;
    let cfg = json!({"url": hook_url(&h), "token": "inline-tok", "authentication": {"scheme": "Bearer", "credentials": CANARY}});
    let r = p.call("SendMessage", json!({"message": user_message("tck-stream-chunked"), "configuration": {"taskPushNotificationConfig": cfg}})).await;
    let task_id = r.result()["task"]["id"].as_str().unwrap().to_owned();
    let reqs = wait_delivery(&h, "TASK_STATE_COMPLETED").await;
    let bodies: Vec<Value> = reqs.iter().map(|r| check_delivery(r, "inline-tok", &task_id)).collect();
    assert!(bodies[0].get("task").is_some(), "the first push is the task as created: {}", bodies[0]);
    assert_eq!(bodies[0]["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
    let as_events: Vec<Event> = bodies[1..].iter().map(|b| Event { id: None, data: json!({"result": b}) }).collect();
    let steps = scenario_file("tck-stream-chunked")["steps"].as_array().unwrap().clone();
    assert_follows_script(&as_events, &steps, "tck-stream-chunked", "push of tck-stream-chunked");
}

/// §13.2 ("SHOULD implement retry logic with exponential backoff"), §4.3.3: a receiver answering
/// 500 once gets the same event again, then the rest of the events, each once.
#[tokio::test]
async fn push_retries_after_a_server_error() {
    let p = Peer::start(MockConfig {
        push_retries: 1,
        push_timeout_ms: 1_000,
        ..push_config(WebhookPolicy::AllowLoopback)
    })
    .await;
    let h = Hook::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&h)
        .await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(200)).with_priority(2).mount(&h).await;
    let cfg = json!({"url": hook_url(&h), "token": "retry-tok", "authentication": {"scheme": "Bearer", "credentials": CANARY}});
    let r = p
        .call(
            "SendMessage",
            json!({"message": user_message("tck-stream-002"), "configuration": {"taskPushNotificationConfig": cfg}}),
        )
        .await;
    let task_id = r.result()["task"]["id"].as_str().unwrap().to_owned();
    let reqs = wait_delivery(&h, "TASK_STATE_COMPLETED").await;
    let bodies: Vec<Value> = reqs.iter().map(|r| check_delivery(r, "retry-tok", &task_id)).collect();
    assert_eq!(bodies.len(), 3, "task (refused), task again, COMPLETED: {bodies:#?}");
    assert!(bodies[0].get("task").is_some());
    assert_eq!(bodies[0], bodies[1], "the refused event is sent again, unchanged");
    assert_eq!(state_of(&bodies[2]), Some("TASK_STATE_COMPLETED"));
}

/// §13.2 ("SHOULD implement reasonable timeout values"), §3.5.2 (task lifecycle independent of
/// delivery): a webhook that accepts the connection and never answers delays neither CancelTask nor
/// the task's state, and the next webhook still gets the event within the per-attempt timeout.
#[tokio::test]
async fn silent_webhook_does_not_hold_up_the_task_or_other_webhooks() {
    const TIMEOUT_MS: u64 = 600;
    let p = Peer::start(MockConfig {
        push_timeout_ms: TIMEOUT_MS,
        push_retries: 0,
        ..push_config(WebhookPolicy::AllowLoopback)
    })
    .await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/hook", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            held.push(sock);
        }
    });
    let h = hook(200).await;
    let task_id = start_task(&p, "tck-cancel").await;
    wait_state(&p, &task_id, "TASK_STATE_WORKING").await;
    // "a-…" sorts first, so the silent webhook is tried before the good one.
    p.call("CreateTaskPushNotificationConfig", push_params(&task_id, "a-silent", &silent_url, "t-a")).await.result();
    p.call("CreateTaskPushNotificationConfig", push_params(&task_id, "b-good", &hook_url(&h), "t-b")).await.result();

    let t0 = Instant::now();
    let c = p.call("CancelTask", json!({"id": task_id})).await;
    assert_eq!(c.result()["status"]["state"], "TASK_STATE_CANCELED");
    assert!(
        t0.elapsed() < Duration::from_millis(TIMEOUT_MS),
        "CancelTask waited for push delivery: {:?}",
        t0.elapsed()
    );
    let got = p.call("GetTask", json!({"id": task_id})).await;
    assert_eq!(got.result()["status"]["state"], "TASK_STATE_CANCELED");
    let reqs = wait_delivery(&h, "TASK_STATE_CANCELED").await;
    let elapsed = t0.elapsed();
    assert!(
        elapsed < Duration::from_millis(TIMEOUT_MS + 1_500),
        "the good webhook waited {elapsed:?} for the silent one"
    );
    let body = check_delivery(reqs.last().unwrap(), "t-b", &task_id);
    assert_eq!(state_of(&body), Some("TASK_STATE_CANCELED"));
    assert!(accepted.load(Ordering::SeqCst) >= 1, "the silent webhook was tried");
    silent.abort();
}

/// §13.2 (SSRF: "Reject private IP ranges (127.0.0.0/8 …)", "Reject localhost"): with the default
/// policy, a loopback webhook (address or `localhost`) is refused with -32602 naming the url field
/// and saying loopback, both in CreateTaskPushNotificationConfig and inline in SendMessage; nothing
/// is stored.
#[tokio::test]
async fn ssrf_guard_refuses_loopback_by_default() {
    let p = Peer::default().await;
    let h = hook(200).await;
    let port = h.address().port();
    let r = p.send_text("tck-complete-task").await;
    let task_id = r.result()["task"]["id"].as_str().unwrap().to_owned();
    for url in [
        format!("http://127.0.0.1:{port}/hook"),
        format!("http://localhost:{port}/hook"),
        format!("http://[::1]:{port}/hook"),
    ] {
        let e = p.call("CreateTaskPushNotificationConfig", push_params(&task_id, "", &url, "t")).await;
        assert_eq!(e.error_code(), -32602, "{url}: {}", e.body);
        let msg = e.body["error"]["message"].as_str().unwrap().to_ascii_lowercase();
        assert!(msg.contains("loopback"), "{url}: the refusal says why: {msg}");
        assert!(
            violated_fields(&e).iter().any(|f| f == "url" || f.ends_with(".url")),
            "{url}: names the url field: {}",
            e.body
        );
    }
    let cfg = json!({"url": format!("http://127.0.0.1:{port}/hook"), "authentication": {"scheme": "Bearer", "credentials": CANARY}});
    let e = p
        .call(
            "SendMessage",
            json!({"message": user_message("tck-complete-task"), "configuration": {"taskPushNotificationConfig": cfg}}),
        )
        .await;
    assert_eq!(e.error_code(), -32602, "{}", e.body);
    assert!(violated_fields(&e).contains(&"configuration.taskPushNotificationConfig.url".to_owned()), "{}", e.body);
    let list = p.call("ListTaskPushNotificationConfigs", json!({"taskId": task_id})).await;
    assert_eq!(list.result()["configs"].as_array().map_or(0, Vec::len), 0);
    assert!(received(&h).await.is_empty(), "nothing reached the loopback receiver");
}

/// §13.2 (SSRF: "Reject private IP ranges (… 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)", "link-local"):
/// even with loopback allowed, private and link-local webhooks are refused with -32602 at once,
/// before any connection (no traffic is sent to those addresses), and nothing is stored.
#[tokio::test]
async fn ssrf_guard_refuses_private_even_with_allow_loopback() {
    let p = Peer::start(push_config(WebhookPolicy::AllowLoopback)).await;
    let task_id = start_task(&p, "tck-long-running").await;
    for url in [
        "http://10.0.0.1/hook",
        "http://192.168.1.1:8080/hook",
        "http://172.16.0.1/hook",
        "http://169.254.169.254/latest",
        "http://[fd00::1]/hook",
    ] {
        let t0 = Instant::now();
        let e = p.call("CreateTaskPushNotificationConfig", push_params(&task_id, "", url, "t")).await;
        assert!(t0.elapsed() < Duration::from_secs(1), "{url}: refusal took {:?}", t0.elapsed());
        assert_eq!(e.error_code(), -32602, "{url}: {}", e.body);
        let msg = e.body["error"]["message"].as_str().unwrap().to_ascii_lowercase();
        assert!(msg.contains("private"), "{url}: the refusal says why: {msg}");
        assert!(violated_fields(&e).iter().any(|f| f == "url" || f.ends_with(".url")), "{url}: {}", e.body);
    }
    let cfg = json!({"url": "http://10.0.0.1/hook"});
    let e = p
        .call(
            "SendMessage",
            json!({"message": user_message("tck-complete-task"), "configuration": {"taskPushNotificationConfig": cfg}}),
        )
        .await;
    assert_eq!(e.error_code(), -32602, "{}", e.body);
    let list = p.call("ListTaskPushNotificationConfigs", json!({"taskId": task_id})).await;
    assert_eq!(list.result()["configs"].as_array().map_or(0, Vec::len), 0);
}

/// §3.1.10 ("deletion MUST be permanent"), §4.3.3: once a config is deleted, no later event reaches
/// its webhook, while another config of the same task keeps receiving.
#[tokio::test]
async fn deleted_config_gets_no_further_deliveries() {
    let p = Peer::start(push_config(WebhookPolicy::AllowLoopback)).await;
    let (gone, kept) = (hook(200).await, hook(200).await);
    let cfg = json!({"id": "a-gone", "url": hook_url(&gone), "token": "t-a", "authentication": {"scheme": "Bearer", "credentials": CANARY}});
    let r = p.call("SendMessage", json!({"message": user_message("tck-cancel"), "configuration": {"returnImmediately": true, "taskPushNotificationConfig": cfg}})).await;
    let task_id = r.result()["task"]["id"].as_str().unwrap().to_owned();
    p.call("CreateTaskPushNotificationConfig", push_params(&task_id, "b-kept", &hook_url(&kept), "t-b")).await.result();
    let before = wait_delivery(&gone, "TASK_STATE_WORKING").await.len();
    let d = p.call("DeleteTaskPushNotificationConfig", json!({"taskId": task_id, "id": "a-gone"})).await;
    assert_eq!(d.result(), &json!({}));
    p.call("CancelTask", json!({"id": task_id})).await.result();
    // "a-gone" sorts before "b-kept": had it still been registered, it would have been served first.
    let reqs = wait_delivery(&kept, "TASK_STATE_CANCELED").await;
    check_delivery(reqs.last().unwrap(), "t-b", &task_id);
    let after = received(&gone).await;
    assert_eq!(after.len(), before, "a deleted config got deliveries");
    for r in &after {
        check_delivery(r, "t-a", &task_id);
    }
    let list = p.call("ListTaskPushNotificationConfigs", json!({"taskId": task_id})).await;
    let ids: Vec<&str> = list.result()["configs"].as_array().unwrap().iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, ["b-kept"]);
}

// ---------------------------------------------------------------------------------------------
// 6. Bounds
// ---------------------------------------------------------------------------------------------

/// Resource bounds (`limits.max_subscribers`), §3.1.6 errors: with one subscriber allowed, a second
/// concurrent SubscribeToTask gets a well-formed JSON-RPC error (HTTP 200, application/json, no SSE)
/// and the first stream is unaffected; once the first subscriber disconnects, its slot is free again.
#[tokio::test]
async fn subscriber_limit_refuses_cleanly_and_frees_the_slot() {
    let p =
        Peer::start(MockConfig { limits: Limits { max_subscribers: 1, ..Limits::default() }, ..MockConfig::default() })
            .await;
    let task_id = start_task(&p, "tck-cancel").await;
    let mut first = subscribe(&p, &task_id).await;
    assert_eq!(first.next_within(STEP).await.unwrap().kind(), "task");
    let e =
        p.open_stream("SubscribeToTask", json!({"id": task_id})).await.err().expect("a second subscriber is refused");
    assert_eq!(e.status, 200);
    assert!(e.body["error"]["code"].is_i64(), "{}", e.body);
    assert!(e.body["error"]["message"].as_str().unwrap().contains("subscriber"), "{}", e.body);
    drop(first);
    // The disconnected subscriber's slot must come back without waiting for a keep-alive write.
    let mut again = eventually("the slot of the dropped subscriber", Duration::from_secs(2), || async {
        p.open_stream("SubscribeToTask", json!({"id": task_id})).await.ok()
    })
    .await;
    assert_eq!(again.next_within(STEP).await.unwrap().kind(), "task");
    p.call("CancelTask", json!({"id": task_id})).await.result();
    let rest = read_to_end(&mut again).await;
    assert_eq!(rest.len(), 1);
    assert_eq!(state_of(result(&rest[0])), Some("TASK_STATE_CANCELED"));
}

/// Resource bounds (`limits.max_subscribers`): the limit counts SSE streams only. A push worker and a
/// blocking SendMessage waiting on the same task do not use up stream slots.
#[tokio::test]
async fn subscriber_limit_counts_streams_only() {
    let p = Peer::start(MockConfig {
        limits: Limits { max_subscribers: 1, ..Limits::default() },
        webhooks: WebhookPolicy::AllowLoopback,
        ..MockConfig::default()
    })
    .await;
    let receiver = wiremock::MockServer::start().await;
    let task_id = start_task(&p, "tck-cancel").await;
    let hook = format!("{}/hook", receiver.uri());
    p.call("CreateTaskPushNotificationConfig", json!({"taskId": task_id, "url": hook})).await.result();
    let mut only = subscribe(&p, &task_id).await;
    assert_eq!(only.next_within(STEP).await.unwrap().kind(), "task");
    p.call("CancelTask", json!({"id": task_id})).await.result();
    let rest = read_to_end(&mut only).await;
    assert_eq!(state_of(result(&rest[0])), Some("TASK_STATE_CANCELED"));
}

/// Resource bounds (`limits.max_task_events`), kit resume extension: with a one-event log, resuming
/// after an id that is still retained replays from the log, but resuming after an evicted id falls
/// back to a fresh `task` snapshot (labelled with the id it reflects) instead of silently skipping
/// the evicted events. The task is interrupted, so both streams end there (§11.7); with
/// `subscribe_until_terminal` the fallback stream continues to the terminal state.
#[tokio::test]
async fn resume_from_an_evicted_id_falls_back_to_a_snapshot() {
    for until_terminal in [false, true] {
        let p = Peer::start(MockConfig {
            limits: Limits { max_task_events: 1, ..Limits::default() },
            subscribe_until_terminal: until_terminal,
            ..MockConfig::default()
        })
        .await;
        let task_id = start_task(&p, "tck-input-required").await;
        wait_state(&p, &task_id, "TASK_STATE_INPUT_REQUIRED").await;
        // Log: 0 task, 1 WORKING, 2 INPUT_REQUIRED; only 2 is retained.

        let mut retained = subscribe_after(&p, &task_id, "1").await.unwrap_or_else(|e| panic!("{}", e.body));
        let first = retained.next_within(STEP).await.unwrap();
        assert_eq!(seq(&first), 2);
        assert_eq!(first.kind(), "statusUpdate");
        assert_eq!(state_of(result(&first)), Some("TASK_STATE_INPUT_REQUIRED"));
        if !until_terminal {
            assert!(read_to_end(&mut retained).await.is_empty(), "the replay ends at the interruption");
        }
        drop(retained);

        let mut fallback = subscribe_after(&p, &task_id, "0").await.unwrap_or_else(|e| panic!("{}", e.body));
        let snap = fallback.next_within(STEP).await.unwrap();
        assert_eq!(snap.kind(), "task", "event 1 was evicted: a snapshot, not a gap");
        assert_eq!(seq(&snap), 2);
        assert_eq!(state_of(result(&snap)), Some("TASK_STATE_INPUT_REQUIRED"));
        if !until_terminal {
            assert!(read_to_end(&mut fallback).await.is_empty(), "the snapshot of an interrupted task ends the stream");
            continue;
        }
        p.call("CancelTask", json!({"id": task_id})).await.result();
        let rest = read_to_end(&mut fallback).await;
        assert_eq!(seqs(&rest), [3], "{:?}", kinds(&rest));
        assert_eq!(state_of(result(&rest[0])), Some("TASK_STATE_CANCELED"));
    }
}

/// Resource bounds (`limits.max_task_events`), §3.5.2 (no reordering, no loss): a live stream that
/// falls behind a one-event log never skips events silently: its result events keep consecutive
/// ids and it either reaches the terminal status or ends with a JSON-RPC error event.
#[tokio::test]
async fn a_stream_behind_a_tiny_log_errors_instead_of_skipping() {
    let p =
        Peer::start(MockConfig { limits: Limits { max_task_events: 1, ..Limits::default() }, ..MockConfig::default() })
            .await;
    for _ in 0..5 {
        let mut s = p
            .open_stream("SendStreamingMessage", json!({"message": user_message("tck-stream-chunked")}))
            .await
            .unwrap();
        let events = read_to_end(&mut s).await;
        let (results, errors): (Vec<&Event>, Vec<&Event>) = events.iter().partition(|e| e.data.get("result").is_some());
        let ids: Vec<u64> = results.iter().map(|e| seq(e)).collect();
        assert_eq!(ids, (0..ids.len() as u64).collect::<Vec<_>>(), "no silent gap: {:?}", kinds(&events));
        match errors.as_slice() {
            [] => assert_eq!(state_of(result(events.last().unwrap())), Some("TASK_STATE_COMPLETED")),
            [e] => {
                assert!(std::ptr::eq(*e, events.last().unwrap()), "the error ends the stream");
                assert!(e.data["error"]["code"].is_i64() && e.data["id"] == "s-1", "{}", e.data);
            }
            more => panic!("several errors: {more:?}"),
        }
    }
}

/// Resource bounds (`limits.max_task_events`), §4.3.3 ("Agents MUST attempt delivery at least once
/// for each configured webhook"): when a slow webhook lets the one-event log evict events the
/// push worker has not delivered yet, the receiver is not left with a silent gap: it still learns
/// the whole outcome (every artifact chunk as an update, or a `task` snapshot holding it) and the
/// last push shows the task COMPLETED.
#[tokio::test]
async fn push_behind_a_tiny_log_sends_a_snapshot_instead_of_skipping() {
    let cfg = MockConfig {
        limits: Limits { max_task_events: 1, ..Limits::default() },
        ..push_config(WebhookPolicy::AllowLoopback)
    };
    let p = Peer::start(cfg).await;
    let h = Hook::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_millis(100)))
        .mount(&h)
        .await;
    let cfg =
        json!({"url": hook_url(&h), "token": "lag-tok", "authentication": {"scheme": "Bearer", "credentials": CANARY}});
    let r = p.call("SendMessage", json!({"message": user_message("tck-stream-chunked"), "configuration": {"taskPushNotificationConfig": cfg}})).await;
    let task = r.result()["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    let task_id = task["id"].as_str().unwrap();
    let reqs = eventually("a push showing the task COMPLETED", Duration::from_secs(5), || async {
        let reqs = received(&h).await;
        let done = reqs
            .last()
            .and_then(|r| serde_json::from_slice::<Value>(&r.body).ok())
            .is_some_and(|b| state_of(&b) == Some("TASK_STATE_COMPLETED"));
        done.then_some(reqs)
    })
    .await;
    let bodies: Vec<Value> = reqs.iter().map(|r| check_delivery(r, "lag-tok", task_id)).collect();
    let mut seen_text = String::new();
    let mut from_snapshot = None;
    for b in &bodies {
        if let Some(u) = b.get("artifactUpdate") {
            seen_text.extend(
                u["artifact"]["parts"].as_array().unwrap().iter().map(|p| p["text"].as_str().unwrap().to_owned()),
            );
        }
        if let Some(t) = b.get("task") {
            let text: String = t["artifacts"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|a| a["parts"].as_array().unwrap())
                .map(|p| p["text"].as_str().unwrap())
                .collect();
            from_snapshot = Some(text);
        }
    }
    let whole = "chunk-1 chunk-2 chunk-3";
    let states: Vec<&str> = bodies.iter().filter_map(state_of).collect();
    assert!(
        seen_text == whole || from_snapshot.as_deref() == Some(whole),
        "the receiver never learned the artifact: {states:?}, updates {seen_text:?}, snapshot {from_snapshot:?}"
    );
}

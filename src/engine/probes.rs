//! Named checks written in Rust for what data cannot say: concurrent subscribers, replay after
//! `Last-Event-ID`, webhook delivery, conditional card requests. Each is selected, filtered and
//! reported like a data check (its id, level and section live in the suite file).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::context::{CheckRun, StepFail, compact};
use super::evidence::ToEvidence as _;
use super::request::{cut_by_kit, normalize_params};
use super::security;
use super::states::{is_terminal, state_of};
use crate::client::http::{HttpRequest, StreamExchange};
use crate::client::rpc::rpc_request;
use crate::report::{Failure, SkipReason};
use crate::sse::SseLimits;

/// The probes a suite may name.
pub const PROBES: &[&str] = &[
    "concurrent_subscribers",
    "resume_last_event_id",
    "push_delivery",
    "card_conditional_get",
    "card_signatures",
    "tenant_isolation",
];

pub async fn run(run: &mut CheckRun<'_>, name: &str, params: &Value) -> Result<(), StepFail> {
    if run.ctx.rpc_url.is_empty() && name != "card_conditional_get" && security::uses_interface(name, params) {
        return Err(StepFail::undecided("probe", "the card offers no A2A 1.0 JSON-RPC interface to probe"));
    }
    match name {
        "concurrent_subscribers" => concurrent_subscribers(run, params).await,
        "resume_last_event_id" => resume_last_event_id(run, params).await,
        "push_delivery" => push_delivery(run, params).await,
        "card_conditional_get" => card_conditional_get(run).await,
        "card_signatures" => security::card_signatures(run, params).await,
        "tenant_isolation" => security::tenant_isolation(run, params).await,
        other => Err(StepFail::undecided("probe", format!("unknown probe {other:?}; known: {}", PROBES.join(", ")))),
    }
}

fn message(text: &str) -> Value {
    json!({"message": {"role": "ROLE_USER", "parts": [{"text": text}]}, "configuration": {"returnImmediately": true}})
}

/// Starts a task with the given behaviour prefix and returns its id. Its failure is SendMessage's,
/// which CORE-SEND-001 grades: the probe defers to it.
async fn start_task(run: &mut CheckRun<'_>, step: &str, text: &str) -> Result<String, StepFail> {
    start_task_inner(run, step, text).await.map_err(|e| match e {
        e @ (StepFail::Violation(_) | StepFail::Undecided(_)) => {
            StepFail::Prerequisite { causes: vec![SEND_ANCHOR.into()], failure: Box::new(e) }
        }
        other => other,
    })
}

/// The check that grades SendMessage itself.
const SEND_ANCHOR: &str = super::diagnose::ANCHOR;

async fn start_task_inner(run: &mut CheckRun<'_>, step: &str, text: &str) -> Result<String, StepFail> {
    let params = normalize_params("send_message", message(text), &run.ctx.tenant, &run.ctx.behaviors);
    let req = rpc_request(&run.ctx.rpc_url, &json!(step), "SendMessage", Some(params));
    let x = run.exchange(step, req).await?;
    run.keep(x.to_evidence(Some(step), &run.ctx.redactor));
    if x.truncated {
        return Err(cut_by_kit(step, run.ctx.client.config().max_body_bytes));
    }
    let v = x.json().map_err(|e| StepFail::violation(step, format!("SendMessage answer is not JSON: {e}")))?;
    let result = v.get("result").map(|r| run.read_send(r).unwrap_or_else(|| r.clone())).unwrap_or_default();
    result.pointer("/task/id").and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
        StepFail::Violation(Failure {
            message: "SendMessage did not return a task".into(),
            step_id: Some(step.into()),
            pointer: Some("/result/task/id".into()),
            expected: Some("{\"result\": {\"task\": {\"id\": …}}}".into()),
            actual: Some(compact(&v)),
        })
    })
}

/// Where a resumed subscription names the last event it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ResumeVia {
    /// The SSE `Last-Event-ID` header.
    Header,
    /// `afterEventId` in the SubscribeToTask params (the resume extension some agents declare).
    Param,
}

async fn subscribe(
    run: &CheckRun<'_>,
    step: &str,
    task: &str,
    last_event_id: Option<&str>,
) -> Result<StreamExchange, StepFail> {
    subscribe_full(run, step, task, last_event_id.map(|id| (id, ResumeVia::Header)), None).await
}

async fn subscribe_resumed(
    run: &CheckRun<'_>,
    step: &str,
    task: &str,
    after: &str,
    via: ResumeVia,
) -> Result<StreamExchange, StepFail> {
    subscribe_full(run, step, task, Some((after, via)), None).await
}

/// A subscription that hangs up after `stop_after` events (a client going away mid-stream).
async fn subscribe_with(
    run: &CheckRun<'_>,
    step: &str,
    task: &str,
    stop_after: Option<usize>,
) -> Result<StreamExchange, StepFail> {
    subscribe_full(run, step, task, None, stop_after).await
}

async fn subscribe_full(
    run: &CheckRun<'_>,
    step: &str,
    task: &str,
    resume: Option<(&str, ResumeVia)>,
    stop_after: Option<usize>,
) -> Result<StreamExchange, StepFail> {
    let mut params = json!({"id": task});
    if let Some((id, ResumeVia::Param)) = resume {
        params["afterEventId"] = json!(id);
    }
    let params = normalize_params("subscribe_to_task", params, &run.ctx.tenant, &run.ctx.behaviors);
    let mut req: HttpRequest = rpc_request(&run.ctx.rpc_url, &json!(step), "SubscribeToTask", Some(params));
    if let Some((id, ResumeVia::Header)) = resume {
        req.headers.push(("Last-Event-ID".into(), id.into()));
    }
    let limits =
        SseLimits { total_timeout: run.ctx.patience + Duration::from_secs(5), ..run.ctx.client.config().sse.clone() };
    run.exchange_stream(step, req, &limits, stop_after).await
}

/// A stream's events as (SSE id, JSON-RPC result).
type Events = Vec<(Option<String>, Value)>;

/// The results of a stream's events, failing on anything that is not a JSON-RPC result.
fn results(step: &str, x: &StreamExchange) -> Result<Events, StepFail> {
    if !x.is_sse() {
        return Err(StepFail::violation(step, format!("expected an SSE stream, got {:?}", x.content_type())));
    }
    x.events
        .iter()
        .enumerate()
        .map(|(i, ev)| {
            let v: Value = serde_json::from_str(&ev.data)
                .map_err(|e| StepFail::violation(step, format!("event {i}: data is not JSON: {e}")))?;
            let r = v
                .get("result")
                .cloned()
                .ok_or_else(|| StepFail::violation(step, format!("event {i}: no result: {}", compact(&v))))?;
            Ok((ev.id.clone(), r))
        })
        .collect()
}

/// §3.5.2, with `params.expect`:
/// - `broadcast`: every event one subscriber receives after its snapshot, the other receives too;
/// - `same_order`: both receive those events in the same order;
/// - `independent_close`: one subscriber hangs up after its first event, the other still reaches
///   the terminal state.
async fn concurrent_subscribers(run: &mut CheckRun<'_>, params: &Value) -> Result<(), StepFail> {
    let text = params.get("text").and_then(Value::as_str).unwrap_or("tck-long-running concurrent");
    let expect = params.get("expect").and_then(Value::as_str).unwrap_or("same_order");
    let task = start_task(run, "start", text).await?;
    let hang_up = (expect == "independent_close").then_some(1);
    let (a, b) =
        tokio::join!(subscribe_with(run, "subscriber-a", &task, hang_up), subscribe(run, "subscriber-b", &task, None));
    let (a, b) = (a?, b?);
    run.keep(a.to_evidence(Some("subscriber-a"), &run.ctx.redactor));
    run.keep(b.to_evidence(Some("subscriber-b"), &run.ctx.redactor));
    let (ra, rb) = (results("subscriber-a", &a)?, results("subscriber-b", &b)?);
    let both: &[(&str, &Events)] =
        if hang_up.is_some() { &[("subscriber-b", &rb)] } else { &[("subscriber-a", &ra), ("subscriber-b", &rb)] };
    for (name, r) in both {
        match r.first() {
            Some((_, first)) if first.get("task").is_some() => {}
            other => {
                return Err(StepFail::violation(
                    name,
                    format!("first event must be a task snapshot (§3.1.6), got {:?}", other.map(|(_, v)| compact(v))),
                ));
            }
        }
        let last_state = r
            .last()
            .and_then(|(_, v)| v.pointer("/statusUpdate/status/state").or_else(|| v.pointer("/task/status/state")));
        if !last_state.and_then(Value::as_str).is_some_and(is_terminal) {
            let why = if hang_up.is_some() { " after the other subscriber hung up" } else { "" };
            return Err(StepFail::violation(
                name,
                format!(
                    "the stream ended before a terminal state{why} (last state: {})",
                    last_state
                        .map(|v| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()))
                        .unwrap_or_else(|| "none".into())
                ),
            ));
        }
    }
    if hang_up.is_some() {
        return Ok(());
    }
    // Snapshots may differ (taken at different moments); what follows the later snapshot must agree.
    let tail = |r: &[(Option<String>, Value)]| r.iter().skip(1).map(|(_, v)| v.clone()).collect::<Vec<_>>();
    let (ta, tb) = (tail(&ra), tail(&rb));
    let n = ta.len().min(tb.len());
    let (sa, sb) = (&ta[ta.len() - n..], &tb[tb.len() - n..]);
    let agrees = match expect {
        "broadcast" => sa.iter().all(|e| sb.contains(e)) && sb.iter().all(|e| sa.contains(e)),
        _ => sa == sb,
    };
    if !agrees {
        let what = if expect == "broadcast" { "different events" } else { "the events in a different order" };
        return Err(StepFail::Violation(Failure {
            message: format!("two concurrent subscribers received {what} (§3.5.2)"),
            step_id: Some("compare".into()),
            pointer: None,
            expected: Some(compact(&Value::Array(ta))),
            actual: Some(compact(&Value::Array(tb))),
        }));
    }
    Ok(())
}

/// Resume extension: after reading part of a stream, reconnecting with `Last-Event-ID` (or, with
/// `params.via: "after_event_id"`, with `afterEventId` in the params) replays exactly the events
/// that followed, with the same ids.
async fn resume_last_event_id(run: &mut CheckRun<'_>, params: &Value) -> Result<(), StepFail> {
    let via = match params.get("via").and_then(Value::as_str) {
        None | Some("last_event_id") => ResumeVia::Header,
        Some("after_event_id") => ResumeVia::Param,
        Some(other) => {
            return Err(StepFail::undecided(
                "probe",
                format!("unknown via {other:?}; known: last_event_id, after_event_id"),
            ));
        }
    };
    let task = start_task(run, "start", "tck-long-running resume").await?;
    let full = subscribe(run, "reference", &task, None).await?;
    run.keep(full.to_evidence(Some("reference"), &run.ctx.redactor));
    let events = results("reference", &full)?;
    if events.len() < 2 {
        return Err(StepFail::violation(
            "reference",
            format!("need at least two events to test resume, got {}", events.len()),
        ));
    }
    let Some(first_id) = events[0].0.clone() else {
        // Resumption is the kit's extension: an agent without SSE ids does not offer it.
        return Err(StepFail::Skip(
            SkipReason::BehaviorNotAvailable,
            "the agent's events carry no SSE id: it does not offer resumption".into(),
        ));
    };
    // The task is terminal now, so a second task is needed to resume mid-way.
    let task2 = start_task(run, "start-2", "tck-long-running resume").await?;
    let head = subscribe_first(run, &task2).await?;
    let resumed = subscribe_resumed(run, "resumed", &task2, &head, via).await?;
    run.keep(resumed.to_evidence(Some("resumed"), &run.ctx.redactor));
    let tail = results("resumed", &resumed)?;
    if tail.iter().any(|(id, v)| id.as_deref() == Some(head.as_str()) || v.get("task").is_some()) {
        return Err(StepFail::violation(
            "resumed",
            format!("replay after id {head} repeated the snapshot or the event itself"),
        ));
    }
    if tail.is_empty() {
        return Err(StepFail::violation(
            "resumed",
            format!("nothing replayed after id {head} (first reference id {first_id})"),
        ));
    }
    Ok(())
}

/// Opens a subscription, reads its first event's id, and hangs up.
async fn subscribe_first(run: &CheckRun<'_>, task: &str) -> Result<String, StepFail> {
    let x = subscribe_with(run, "first", task, Some(1)).await?;
    x.events
        .first()
        .and_then(|e| e.id.clone())
        .ok_or_else(|| StepFail::violation("first", "the first event carries no SSE `id:`"))
}

async fn create_push_config(run: &mut CheckRun<'_>, task: &str, mut config: Value) -> Result<(), StepFail> {
    config["taskId"] = json!(task);
    let cfg = normalize_params("create_push_config", config, &run.ctx.tenant, &run.ctx.behaviors);
    let req = rpc_request(&run.ctx.rpc_url, &json!("create"), "CreateTaskPushNotificationConfig", Some(cfg));
    let x = run.exchange("create", req).await?;
    run.keep(x.to_evidence(Some("create"), &run.ctx.redactor));
    if x.truncated {
        return Err(cut_by_kit("create", run.ctx.client.config().max_body_bytes));
    }
    let v = x.json().map_err(|e| StepFail::violation("create", format!("not JSON: {e}")))?;
    if v.get("result").is_none() {
        return Err(StepFail::violation("create", format!("creating the push config failed: {}", compact(&v))));
    }
    Ok(())
}

/// SendMessage of the prompt with the push config in its configuration (§3.2.2), answered at once.
async fn start_with_push_config(run: &mut CheckRun<'_>, config: Value) -> Result<(), StepFail> {
    let params = json!({
        "message": {"role": "ROLE_USER", "parts": [{"text": run.ctx.prompt}]},
        "configuration": {"returnImmediately": true, "taskPushNotificationConfig": config},
    });
    let params = normalize_params("send_message", params, &run.ctx.tenant, &run.ctx.behaviors);
    let req = rpc_request(&run.ctx.rpc_url, &json!("start"), "SendMessage", Some(params));
    let x = run.exchange("start", req).await?;
    run.keep(x.to_evidence(Some("start"), &run.ctx.redactor));
    if x.truncated {
        return Err(cut_by_kit("start", run.ctx.client.config().max_body_bytes));
    }
    let v = x.json().map_err(|e| StepFail::violation("start", format!("SendMessage answer is not JSON: {e}")))?;
    let result = v.get("result").map(|r| run.read_send(r).unwrap_or_else(|| r.clone())).unwrap_or_default();
    if result.pointer("/task/id").is_some() {
        return Ok(());
    }
    if result.get("message").is_some() {
        return Err(StepFail::Skip(
            SkipReason::BehaviorNotAvailable,
            format!(
                "the agent answered {:?} with a Message, so no task exists to send notifications about",
                run.ctx.prompt
            ),
        ));
    }
    Err(StepFail::violation("start", format!("SendMessage with a push config did not start a task: {}", compact(&v))))
}

/// §4.3.3 / §13.2: the agent POSTs StreamResponse bodies to the webhook with the configured
/// credentials. `params.expect` picks what is graded.
async fn push_delivery(run: &mut CheckRun<'_>, params: &Value) -> Result<(), StepFail> {
    let Some(hook) = run.ctx.webhook.clone() else {
        return Err(StepFail::undecided("webhook", "no webhook receiver is running (see --webhook-bind)"));
    };
    let (url, inbox) = hook.new_endpoint();
    let canary = format!("kit-canary-{}", uuid::Uuid::new_v4().simple());
    let config =
        json!({"url": url, "token": "kit-token", "authentication": {"scheme": "Bearer", "credentials": canary}});
    if run.ctx.behaviors.provides("tck-long-running") {
        // A task that keeps running gets a config of its own, then notifications of what follows.
        let task = start_task(run, "start", "tck-long-running push").await?;
        create_push_config(run, &task, config).await?;
    } else {
        // Any agent: the config travels with the neutral message; every update after it counts.
        start_with_push_config(run, config).await.map_err(|e| match e {
            e @ (StepFail::Violation(_) | StepFail::Undecided(_)) => {
                StepFail::Prerequisite { causes: vec![SEND_ANCHOR.into()], failure: Box::new(e) }
            }
            other => other,
        })?;
    }
    let deadline = Instant::now() + run.ctx.patience;
    let deliveries = loop {
        let d = hook.deliveries(&inbox);
        let done = d.iter().any(|x| {
            serde_json::from_slice::<Value>(&x.body).ok().is_some_and(|v| state_of(&v).is_some_and(is_terminal))
        });
        if done || Instant::now() > deadline {
            break d;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let want = params.get("expect").and_then(Value::as_str).unwrap_or("at_least_one");
    if deliveries.is_empty() {
        return Err(StepFail::violation(
            "deliver",
            format!(
                "no notification reached the webhook within {} s (§4.3.3: at least one attempt)",
                run.ctx.patience.as_secs()
            ),
        ));
    }
    for (i, d) in deliveries.iter().enumerate() {
        let step = format!("delivery-{i}");
        match want {
            "authorization" => {
                let expected = format!("Bearer {canary}");
                if d.header("authorization") != Some(expected.as_str()) {
                    return Err(StepFail::Violation(Failure {
                        message: "the webhook POST does not carry the configured credentials (§4.3.3)".into(),
                        step_id: Some(step),
                        pointer: None,
                        expected: Some("Authorization: Bearer <configured credentials>".into()),
                        actual: Some(format!(
                            "Authorization: {}",
                            d.header("authorization").map(|_| "<other value>").unwrap_or("<absent>")
                        )),
                    }));
                }
            }
            "content_type" => {
                let ct = d.header("content-type").unwrap_or("");
                if !ct.starts_with("application/a2a+json") && !ct.starts_with("application/json") {
                    return Err(StepFail::violation(
                        &step,
                        format!("push Content-Type {ct:?}, expected application/a2a+json"),
                    ));
                }
            }
            "stream_response_body" => {
                let v: Value = serde_json::from_slice(&d.body)
                    .map_err(|e| StepFail::violation(&step, format!("push body is not JSON: {e}")))?;
                if v.get("jsonrpc").is_some() {
                    return Err(StepFail::violation(
                        &step,
                        "push body is wrapped in a JSON-RPC envelope (§4.3.3: a bare StreamResponse)",
                    ));
                }
                let members = ["task", "message", "statusUpdate", "artifactUpdate"]
                    .iter()
                    .filter(|k| v.get(**k).is_some())
                    .count();
                if members != 1 {
                    return Err(StepFail::violation(
                        &step,
                        format!(
                            "push body must hold exactly one StreamResponse member, has {members}: {}",
                            compact(&v)
                        ),
                    ));
                }
                run.wire_check(&step, "StreamResponse", &v);
            }
            _ => {}
        }
    }
    Ok(())
}

/// §8.6: the card is served with an ETag, and a conditional request with it gets 304.
async fn card_conditional_get(run: &mut CheckRun<'_>) -> Result<(), StepFail> {
    let url = run.ctx.discovery.card_url.clone();
    let get = |headers: Vec<(String, String)>| HttpRequest {
        method: "GET".into(),
        url: url.clone(),
        headers,
        ..HttpRequest::default()
    };
    let x = run
        .ctx
        .client
        .send(get(vec![]))
        .await
        .map_err(|e| StepFail::undecided("card", format!("request failed: {e}")))?;
    run.keep(x.to_evidence(Some("card"), &run.ctx.redactor));
    let Some(etag) = x.header("etag").map(str::to_owned) else {
        return Err(StepFail::violation("card", "the card is served without an ETag (§8.6.1 SHOULD)"));
    };
    let y = run
        .ctx
        .client
        .send(get(vec![("If-None-Match".into(), etag.clone())]))
        .await
        .map_err(|e| StepFail::undecided("conditional", format!("request failed: {e}")))?;
    run.keep(y.to_evidence(Some("conditional"), &run.ctx.redactor));
    if y.status != 304 {
        return Err(StepFail::violation(
            "conditional",
            format!("If-None-Match: {etag} answered HTTP {}, expected 304", y.status),
        ));
    }
    Ok(())
}

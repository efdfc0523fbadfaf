//! Named checks written in Rust for what data cannot say: concurrent subscribers, replay after
//! `Last-Event-ID`, webhook delivery, conditional card requests. Each is selected, filtered and
//! reported like a data check (its id, level and section live in the suite file).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::context::{CheckRun, StepFail, compact};
use super::evidence::ToEvidence as _;
use super::framing;
use super::non_blocking;
use super::request::{cut_by_kit, normalize_params};
use super::security;
use super::settle::in_progress;
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
    "non_blocking_send",
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
        "non_blocking_send" => non_blocking_send(run).await,
        other => Err(StepFail::undecided("probe", format!("unknown probe {other:?}; known: {}", PROBES.join(", ")))),
    }
}

fn message(text: &str) -> Value {
    json!({"message": {"role": "ROLE_USER", "parts": [{"text": text}]}, "configuration": {"returnImmediately": true}})
}

/// The check that grades SendMessage itself.
const SEND_ANCHOR: &str = super::diagnosis::ANCHOR;
/// The check that grades returnImmediately: the task SendMessage answers with is still running.
const RETURN_IMMEDIATELY_ANCHOR: &str = "CORE-EXEC-001";
/// The checks that grade that the id SendMessage returns names the new task.
const TASK_ID_ANCHORS: [&str; 2] = ["KIT-SEND-004", "CORE-GET-001"];
/// The checks that grade a SendStreamingMessage answer as an SSE stream of JSON-RPC responses.
const STREAM_ANCHORS: [&str; 2] = ["KIT-STREAM-002", "JSONRPC-SSE-001"];
/// The check that grades unique SSE ids on a SendStreamingMessage stream.
const IDS_ANCHOR: &str = "EXT-RESUME-001";
/// The check that grades SubscribeToTask on a running task.
const SUBSCRIBE_ANCHOR: &str = "STREAM-SUB-001";
/// The check that grades that a subscription begins with the Task (§3.1.6).
const SNAPSHOT_ANCHOR: &str = "STREAM-SSE-004";
/// The check that grades each SSE event as a JSON-RPC response holding a StreamResponse.
const ENVELOPE_ANCHOR: &str = "JSONRPC-SSE-001";

/// How often a probe that needs a running task starts a fresh one when the last one finished
/// before the kit's subscription reached the agent: a race the kit lost (on a loaded machine, or
/// against a quick agent), which says nothing about the agent.
const ATTEMPTS: usize = 3;

fn anchored(causes: &[&str], failure: StepFail) -> StepFail {
    StepFail::Prerequisite { causes: causes.iter().map(|c| (*c).to_owned()).collect(), failure: Box::new(failure) }
}

/// Starts a task with the given behaviour prefix and returns its id and the state SendMessage
/// answered with. Its failure is SendMessage's, which CORE-SEND-001 grades: the probe defers to it.
async fn start_task(run: &mut CheckRun<'_>, step: &str, text: &str) -> Result<(String, Option<String>), StepFail> {
    let s = start_timed(run, step, text).await?;
    Ok((s.id, s.state))
}

/// A task a probe started with `returnImmediately`.
struct Started {
    id: String,
    /// The state SendMessage answered with.
    state: Option<String>,
    /// From sending SendMessage to the end of its answer.
    answered_in: Duration,
}

/// [`start_task`], also saying how long the answer took.
async fn start_timed(run: &mut CheckRun<'_>, step: &str, text: &str) -> Result<Started, StepFail> {
    start_task_inner(run, step, text).await.map_err(|e| match e {
        e @ (StepFail::Violation(_) | StepFail::Undecided(_)) => anchored(&[SEND_ANCHOR], e),
        other => other,
    })
}

async fn start_task_inner(run: &mut CheckRun<'_>, step: &str, text: &str) -> Result<Started, StepFail> {
    let params = normalize_params("send_message", message(text), &run.ctx.tenant, &run.ctx.behaviors);
    let req = rpc_request(&run.ctx.rpc_url, &json!(step), "SendMessage", Some(params));
    let x = run.exchange(step, req).await?;
    run.keep(x.to_evidence(Some(step), &run.ctx.redactor));
    if x.truncated {
        return Err(cut_by_kit(step, run.ctx.client.config().max_body_bytes));
    }
    let v = x.json().map_err(|e| StepFail::violation(step, format!("SendMessage answer is not JSON: {e}")))?;
    let result = v.get("result").map(|r| run.read_send(r).unwrap_or_else(|| r.clone())).unwrap_or_default();
    let state = result.pointer("/task/status/state").and_then(Value::as_str).map(str::to_owned);
    let id = result.pointer("/task/id").and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
        StepFail::Violation(Failure {
            message: "SendMessage did not return a task".into(),
            step_id: Some(step.into()),
            pointer: Some("/result/task/id".into()),
            expected: Some("{\"result\": {\"task\": {\"id\": …}}}".into()),
            actual: Some(compact(&v)),
        })
    })?;
    Ok(Started { id, state, answered_in: x.elapsed })
}

/// Starts a task that is still running when SendMessage answers (returnImmediately) and returns its
/// id. A task that had already finished leaves nothing to subscribe to: whether returnImmediately
/// was honoured is CORE-EXEC-001's question, and the probe defers to it.
async fn start_running_task(run: &mut CheckRun<'_>, step: &str, text: &str) -> Result<String, StepFail> {
    let (id, state) = start_task(run, step, text).await?;
    match state {
        Some(s) if is_terminal(&s) => Err(anchored(
            &[RETURN_IMMEDIATELY_ANCHOR],
            StepFail::Skip(
                SkipReason::BehaviorNotAvailable,
                format!(
                    "SendMessage with returnImmediately answered with the task already {s}: no running task to subscribe to"
                ),
            ),
        )),
        _ => Ok(id),
    }
}

/// The task's state as GetTask tells it now, or what GetTask answered instead.
async fn task_state(run: &CheckRun<'_>, step: &str, task: &str) -> Result<String, String> {
    let params = normalize_params("get_task", json!({"id": task}), &run.ctx.tenant, &run.ctx.behaviors);
    let req = rpc_request(&run.ctx.rpc_url, &json!(step), "GetTask", Some(params));
    let x = run.ctx.exchange(&format!("{} / {step}", run.id), req).await?;
    let v = x.json()?;
    let task = v.get("result").map(super::workaround::task_of);
    task.and_then(|t| t.pointer("/status/state")).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| compact(&v))
}

/// Why a subscription was answered with a JSON-RPC error instead of a stream.
enum Refusal {
    /// The task had already finished (in this state): the agent refused rightly, the kit was late.
    Finished(String),
    /// The task was still running: a real refusal.
    Running { state: String, error: String },
    /// GetTask does not find the task either.
    Unknown { error: String, get: String },
}

/// The JSON-RPC error a subscription was answered with instead of a stream.
fn refusal_error(x: &StreamExchange) -> Option<String> {
    if x.is_sse() {
        return None;
    }
    let v: Value = serde_json::from_slice(&x.body).ok()?;
    v.get("error").map(compact)
}

/// Asks GetTask, right after a refusal, whether the task had finished: a terminal task stays
/// terminal, so one still running then was running when the agent refused.
async fn classify(run: &CheckRun<'_>, step: &str, task: &str, error: String) -> Refusal {
    match task_state(run, step, task).await {
        Ok(s) if is_terminal(&s) => Refusal::Finished(s),
        Ok(state) => Refusal::Running { state, error },
        Err(get) => Refusal::Unknown { error, get },
    }
}

/// A subscription, and why it was refused (asked at once, while the other may still be reading).
async fn subscriber(
    run: &CheckRun<'_>,
    step: &str,
    task: &str,
    stop_after: Option<usize>,
) -> Result<(StreamExchange, Option<Refusal>), StepFail> {
    let x = subscribe_with(run, step, task, stop_after).await?;
    let refusal = match refusal_error(&x) {
        Some(error) => Some(classify(run, &format!("{step}-state"), task, error).await),
        None => None,
    };
    Ok((x, refusal))
}

/// The verdict on a refused subscription of a task SendMessage started.
fn refused(step: &str, r: Refusal) -> StepFail {
    match r {
        Refusal::Finished(s) => StepFail::undecided(step, format!("the task had already finished ({s})")),
        Refusal::Running { state, error } => anchored(
            &[SUBSCRIBE_ANCHOR],
            StepFail::violation(step, format!("SubscribeToTask of a running task ({state}) was refused: {error}")),
        ),
        Refusal::Unknown { error, get } => anchored(
            &TASK_ID_ANCHORS,
            StepFail::violation(
                step,
                format!(
                    "SubscribeToTask of the task SendMessage returned was refused ({error}), and GetTask does not find that task either: {get}"
                ),
            ),
        ),
    }
}

/// Where a resumed subscription names the last event it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ResumeVia {
    /// The SSE `Last-Event-ID` header.
    Header,
    /// `afterEventId` in the SubscribeToTask params (the resume extension some agents declare).
    Param,
}

fn stream_limits(run: &CheckRun<'_>) -> SseLimits {
    SseLimits { total_timeout: run.ctx.patience + Duration::from_secs(5), ..run.ctx.client.config().sse.clone() }
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
    run.exchange_stream(step, req, &stream_limits(run), stop_after).await
}

/// SendStreamingMessage of `text`, hanging up after `stop_after` events.
async fn stream_message(
    run: &CheckRun<'_>,
    step: &str,
    text: &str,
    stop_after: usize,
) -> Result<StreamExchange, StepFail> {
    let params = json!({"message": {"role": "ROLE_USER", "parts": [{"text": text}]}});
    let params = normalize_params("send_streaming_message", params, &run.ctx.tenant, &run.ctx.behaviors);
    let req = rpc_request(&run.ctx.rpc_url, &json!(step), "SendStreamingMessage", Some(params));
    run.exchange_stream(step, req, &stream_limits(run), Some(stop_after)).await
}

/// A stream's events as (SSE id, JSON-RPC result).
type Events = Vec<(Option<String>, Value)>;

/// The results of a stream's events, failing on anything that is not a JSON-RPC result (a bare
/// StreamResponse is read as its result: the envelope is JSONRPC-SSE-001's finding).
fn results(run: &CheckRun<'_>, step: &str, x: &StreamExchange) -> Result<Events, StepFail> {
    readable(run, step, x)?
        .into_iter()
        .enumerate()
        .map(|(i, (id, r))| r.map(|v| (id, v)).map_err(|why| StepFail::violation(step, format!("event {i}: {why}"))))
        .collect()
}

/// A stream's events (SSE id, and the result or why the event cannot be read as one).
type Readable = Vec<(Option<String>, Result<Value, String>)>;

/// A stream's events, each as its result or why it cannot be read as one; the stream itself must
/// be whole and SSE.
fn readable(run: &CheckRun<'_>, step: &str, x: &StreamExchange) -> Result<Readable, StepFail> {
    // What a probe reads of a stream (its end, its last state, its timing) needs all of it.
    if let Some(why) = framing::cut_short(x) {
        return Err(StepFail::undecided(step, framing::cut_message(x, why)));
    }
    if !x.is_sse() {
        return Err(StepFail::violation(step, format!("expected an SSE stream, got {:?}", x.content_type())));
    }
    Ok(x.events
        .iter()
        .map(|ev| {
            let read = match serde_json::from_str::<Value>(&ev.data) {
                Err(e) => Err(format!("data is not JSON: {e}")),
                Ok(v) => match v.get("result") {
                    Some(r) => Ok(r.clone()),
                    None => run.read_bare_event(&v).ok_or_else(|| format!("no result: {}", compact(&v))),
                },
            };
            (ev.id.clone(), read)
        })
        .collect())
}

/// §3.2.2: `returnImmediately` does not wait for the work (see [`non_blocking`]).
async fn non_blocking_send(run: &mut CheckRun<'_>) -> Result<(), StepFail> {
    let Some(text) = non_blocking::prompt(&run.ctx.behaviors) else {
        return Err(StepFail::Skip(
            SkipReason::BehaviorNotAvailable,
            "no message the kit knows takes time: no long-running behaviour, and every prompt tried was answered \
             at once, so there is no work an answer could wait for"
                .into(),
        ));
    };
    let started = start_timed(run, "send", &text).await?;
    let spelled = started.state.clone().unwrap_or_default();
    let state = super::workaround::state_name(&spelled).map(str::to_owned).unwrap_or(spelled);
    // §3.2.2 counts an interrupted task as in progress too ("e.g., TASK_STATE_WORKING,
    // TASK_STATE_INPUT_REQUIRED"): only a task already ended can show an answer that waited.
    if in_progress(&state) || non_blocking::INTERRUPTED.contains(&state.as_str()) {
        return Ok(());
    }
    if !is_terminal(&state) {
        return Err(StepFail::undecided(
            "send",
            format!("the non-blocking answer holds no task state the kit knows ({state:?})"),
        ));
    }
    let streams = run.ctx.discovery.card.pointer("/capabilities/streaming").and_then(|v| v.as_bool()) == Some(true);
    if !streams {
        return Err(StepFail::Skip(
            SkipReason::CapabilityNotDeclared,
            format!(
                "the non-blocking answer held the task already {state}; the card declares no streaming, so how long \
                 the work takes cannot be seen"
            ),
        ));
    }
    // A first event held up by a busy machine hides how long the work takes; a second stream of
    // the same message, once, tells more often than not.
    let mut again = false;
    let (times, first, last) = loop {
        let step = if again { "stream again" } else { "stream" };
        let x = stream_message(run, step, &text, usize::MAX).await?;
        run.keep(x.to_evidence(Some(step), &run.ctx.redactor));
        results(run, step, &x).map_err(|e| anchored(&STREAM_ANCHORS, e))?;
        let (Some(&first), Some(&last)) = (x.arrivals.first(), x.arrivals.last()) else {
            return Err(StepFail::Skip(
                SkipReason::BehaviorNotAvailable,
                "the stream of the same message held no event".into(),
            ));
        };
        let times = non_blocking::judge(started.answered_in, first, last);
        if !again && matches!(times, non_blocking::Times::TooQuick(_)) {
            again = true;
            continue;
        }
        break (times, first, last);
    };
    match times {
        non_blocking::Times::CannotTell(why) | non_blocking::Times::TooQuick(why) => {
            Err(StepFail::Skip(SkipReason::BehaviorNotAvailable, why))
        }
        non_blocking::Times::Waited => Err(StepFail::Violation(Failure {
            message: format!(
                "with returnImmediately, SendMessage answered only after {} ms, with the task already {state}; \
                 streamed, the same message's task was reported after {} ms and ended after {} ms: the answer \
                 waited for the work instead of returning once the task existed",
                started.answered_in.as_millis(),
                first.as_millis(),
                last.as_millis()
            ),
            step_id: Some("send".into()),
            pointer: Some("/result/task/status/state".into()),
            expected: Some(
                "an answer while the task is in progress (TASK_STATE_SUBMITTED or TASK_STATE_WORKING)".into(),
            ),
            actual: Some(format!("{state} after {} ms", started.answered_in.as_millis())),
        })),
    }
}

/// §3.5.2, with `params.expect`:
/// - `broadcast`: every event one subscriber receives after its snapshot, the other receives too;
/// - `same_order`: both receive those events in the same order;
/// - `independent_close`: one subscriber hangs up after its first event, the other still reaches
///   the terminal state.
///
/// Both subscribe to a task that was running when SendMessage answered; one that finished before
/// a subscription reached the agent is refused rightly, and the probe starts another. An agent that
/// serves one stream and refuses the second does what §3.5.2 leaves to it ("MAY serve multiple
/// concurrent streams"): the check skips.
async fn concurrent_subscribers(run: &mut CheckRun<'_>, params: &Value) -> Result<(), StepFail> {
    let text = params.get("text").and_then(Value::as_str).unwrap_or("tck-long-running concurrent");
    let expect = params.get("expect").and_then(Value::as_str).unwrap_or("same_order");
    let hang_up = (expect == "independent_close").then_some(1);
    let mut late = Vec::new();
    for _ in 0..ATTEMPTS {
        let task = start_running_task(run, "start", text).await?;
        let (a, b) =
            tokio::join!(subscriber(run, "subscriber-a", &task, hang_up), subscriber(run, "subscriber-b", &task, None));
        let ((a, refused_a), (b, refused_b)) = (a?, b?);
        run.keep(a.to_evidence(Some("subscriber-a"), &run.ctx.redactor));
        run.keep(b.to_evidence(Some("subscriber-b"), &run.ctx.redactor));
        match (refused_a, refused_b) {
            (None, None) => return judge_subscribers(run, expect, hang_up.is_some(), &a, &b),
            (Some(Refusal::Finished(s)), _) | (_, Some(Refusal::Finished(s))) => late.push(s),
            (Some(Refusal::Running { state, error }), None) | (None, Some(Refusal::Running { state, error })) => {
                return Err(StepFail::Skip(
                    SkipReason::BehaviorNotAvailable,
                    format!(
                        "the agent served one SubscribeToTask stream of the running task ({state}) and refused the concurrent one: {error}; serving several streams for one task is a MAY (§3.5.2)"
                    ),
                ));
            }
            (Some(r), _) => return Err(refused("subscriber-a", r)),
            (None, Some(r)) => return Err(refused("subscriber-b", r)),
        }
    }
    Err(StepFail::undecided(
        "subscribe",
        format!(
            "{ATTEMPTS} times the task had finished ({}) before a subscription reached the agent, which refused it rightly: the kit was late each time, and the agent is not graded",
            late.join(", ")
        ),
    ))
}

fn judge_subscribers(
    run: &CheckRun<'_>,
    expect: &str,
    hung_up: bool,
    a: &StreamExchange,
    b: &StreamExchange,
) -> Result<(), StepFail> {
    // What the probe assumes of each stream (JSON-RPC results, a Task first) is graded elsewhere.
    let envelope = |e| anchored(&[ENVELOPE_ANCHOR], e);
    let (ra, rb) =
        (readable(run, "subscriber-a", a).map_err(envelope)?, readable(run, "subscriber-b", b).map_err(envelope)?);
    // An event the kit cannot read as a result (its JSON or its envelope broken: JSONRPC-SSE-001's
    // finding) still takes its place, by its raw data: two subscribers sent the same events when
    // they sent the same data in the same order.
    let as_value = |r: &Result<Value, String>, raw: &str| match r {
        Ok(v) => v.clone(),
        Err(_) => json!({ UNREADABLE: raw }),
    };
    let unreadable = |name: &str, which: &str, why: &str| {
        envelope(StepFail::undecided(name, format!("the {which} event cannot be read as a result ({why})")))
    };
    let both: &[(&str, &Readable)] =
        if hung_up { &[("subscriber-b", &rb)] } else { &[("subscriber-a", &ra), ("subscriber-b", &rb)] };
    // A last event that cannot be read leaves open whether its stream ended at a terminal state;
    // two streams the agent closed can still be compared, and a difference is this check's.
    let mut unread_end = None;
    for (name, r) in both {
        // A subscription that does not begin with the Task is STREAM-SSE-004's finding: the
        // events are compared all the same, from where both streams agree to be.
        if r.is_empty() {
            return Err(anchored(&[SNAPSHOT_ANCHOR], StepFail::violation(name, "the subscription sent no event")));
        }
        let last = match r.last() {
            Some((_, Err(why))) => {
                unread_end.get_or_insert_with(|| unreadable(name, "last", why));
                continue;
            }
            Some((_, Ok(v))) => Some(v),
            None => None,
        };
        let last_state =
            last.and_then(|v| v.pointer("/statusUpdate/status/state").or_else(|| v.pointer("/task/status/state")));
        // Read through the 0.3 spelling: whether the stream ended is this check's question, how
        // the state is spelled DM-FMT-002's.
        let ended = last_state.and_then(Value::as_str).and_then(super::workaround::state_name).is_some_and(is_terminal);
        if !ended {
            let why = if hung_up { " after the other subscriber hung up" } else { "" };
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
    if hung_up {
        return unread_end.map_or(Ok(()), Err);
    }
    // An unreadable event's raw data still carries the JSON-RPC id of its own subscription, which
    // differs between the two by design: it is blanked out, and where the id is too plain to find
    // safely in raw text, the streams are not compared by raw data at all.
    let raw_comparable = |x: &StreamExchange| {
        request_id(x).filter(|id| id.len() >= 8 && x.events.iter().all(|e| e.data.matches(id.as_str()).count() <= 1))
    };
    let any_unreadable = ra.iter().chain(rb.iter()).any(|(_, v)| v.is_err());
    let (ida, idb) = (raw_comparable(a), raw_comparable(b));
    if any_unreadable && (ida.is_none() || idb.is_none()) {
        return Err(unread_end.unwrap_or_else(|| {
            envelope(StepFail::undecided(
                "compare",
                "an event cannot be read as a result, and its raw data cannot be compared across the two subscriptions",
            ))
        }));
    }
    let (ra, rb): (Events, Events) = [(a, &ra, ida), (b, &rb, idb)]
        .map(|(x, r, id)| {
            r.iter()
                .zip(&x.events)
                .map(|((sse_id, v), ev)| {
                    let raw = id.as_deref().map_or_else(|| ev.data.clone(), |id| ev.data.replace(id, "<request id>"));
                    (sse_id.clone(), as_value(v, &raw))
                })
                .collect()
        })
        .into();
    // Snapshots may differ (taken at different moments); what follows the later snapshot must agree.
    // A first event that cannot be read is taken for the snapshot §3.1.6 puts there: compared by
    // its raw data, two snapshots taken at different moments would differ.
    let tail = |r: &[(Option<String>, Value)]| {
        let snapshot = r.first().is_some_and(|(_, v)| v.get("task").is_some() || v.get(UNREADABLE).is_some());
        r.iter().skip(usize::from(snapshot)).map(|(_, v)| v.clone()).collect::<Vec<_>>()
    };
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
    unread_end.map_or(Ok(()), Err)
}

/// The JSON-RPC id of the request that opened a stream, when it is a string.
fn request_id(x: &StreamExchange) -> Option<String> {
    let body: Value = serde_json::from_slice(x.request.body.as_deref()?).ok()?;
    body.get("id")?.as_str().map(str::to_owned)
}

/// How the subscribers' comparison holds an event it cannot read as a result: by its raw data.
const UNREADABLE: &str = "unreadable event";

/// How one try of the resume probe ended.
enum Resumed {
    /// Graded: the replay holds.
    Held,
    /// The task had finished (in this state) before the resumed subscription reached the agent.
    Late(String),
    /// The task's first events leave no event with a known successor to resume after: try again
    /// with a resume point whose successor is not known.
    NoSuccessor,
}

/// Resume extension: after reading part of a stream, reconnecting with `Last-Event-ID` (or, with
/// `params.via: "after_event_id"`, with `afterEventId` in the params) replays the events that
/// followed, with the same ids.
///
/// The stream read in part is a SendStreamingMessage of a long-running task: it holds the task's
/// events from its creation, so the kit knows which event followed the one it resumes after. The
/// resumed SubscribeToTask may begin with a Task snapshot, as §3.1.6 requires of every
/// subscription ("The operation MUST return a Task object as the first event in the stream"); what
/// follows must begin with that next event, not repeat the one resumed after, and not be empty. A
/// subscription that starts afresh folds the missed event into its snapshot, and so fails.
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
    let mut late = Vec::new();
    let mut successor_known = true;
    let mut tries = 0;
    while late.len() < ATTEMPTS && tries <= ATTEMPTS {
        tries += 1;
        match resume_once(run, via, successor_known).await? {
            Resumed::Held => return Ok(()),
            // The task ended right after its second event (a task with nothing to report until
            // its end sends its artifacts and its terminal state together): resume after the
            // first instead.
            Resumed::Late(s) if successor_known => {
                late.push(s);
                successor_known = false;
            }
            Resumed::Late(s) => late.push(s),
            Resumed::NoSuccessor => successor_known = false,
        }
    }
    // Each time, the subscription went out as soon as the stream's first event came, and the
    // task had ended by the time it reached the agent: the agent's stream leaves no event between
    // its first and the task's end to resume after, which is not the kit failing to decide.
    Err(StepFail::Skip(
        SkipReason::BehaviorNotAvailable,
        format!(
            "{} times the task had finished ({}) by the time a subscription resuming after its stream's first event reached the agent (a terminal task is rightly refused one): the agent's stream leaves no event between its first and the task's end to resume after",
            late.len(),
            late.join(", ")
        ),
    ))
}

/// The task a stream event is about.
fn task_of(v: &Value) -> Option<&str> {
    v.pointer("/task/id")
        .or_else(|| v.pointer("/statusUpdate/taskId"))
        .or_else(|| v.pointer("/artifactUpdate/taskId"))
        .and_then(Value::as_str)
}

/// The member a StreamResponse holds.
fn kind_of(v: &Value) -> Option<&'static str> {
    ["task", "message", "statusUpdate", "artifactUpdate"].into_iter().find(|k| v.get(*k).is_some())
}

fn describe_event((id, v): &(Option<String>, Value)) -> String {
    format!(
        "id {}: {} {}",
        id.as_deref().unwrap_or("<none>"),
        kind_of(v).unwrap_or("<unknown>"),
        state_of(v).unwrap_or("")
    )
    .trim_end()
    .to_owned()
}

/// One try: a SendStreamingMessage read for two events (one, without `with_successor`), then a
/// subscription resumed after the first.
async fn resume_once(run: &mut CheckRun<'_>, via: ResumeVia, with_successor: bool) -> Result<Resumed, StepFail> {
    let head = stream_message(run, "head", "tck-long-running resume", if with_successor { 2 } else { 1 }).await?;
    run.keep(head.to_evidence(Some("head"), &run.ctx.redactor));
    // The stream itself is what KIT-STREAM-002 and JSONRPC-SSE-001 grade.
    let events = results(run, "head", &head).map_err(|e| anchored(&STREAM_ANCHORS, e))?;
    let Some((first_id, first)) = events.first() else {
        return Err(anchored(
            &STREAM_ANCHORS,
            StepFail::violation("head", "SendStreamingMessage answered a stream without events"),
        ));
    };
    let Some(after) = first_id.clone() else {
        // Resumption is the kit's extension: an agent without SSE ids does not offer it.
        return Err(StepFail::Skip(
            SkipReason::BehaviorNotAvailable,
            "the agent's events carry no SSE id: it does not offer resumption".into(),
        ));
    };
    let task = task_of(first)
        .map(str::to_owned)
        .ok_or_else(|| StepFail::undecided("head", format!("the first event names no task: {}", compact(first))))?;
    if let Some((Some(second), _)) = events.get(1)
        && *second == after
    {
        // Ids that repeat name no event to resume after; EXT-RESUME-001 grades them.
        return Err(anchored(
            &[IDS_ANCHOR],
            StepFail::violation("head", format!("the stream's first two events both carry SSE id {after:?}")),
        ));
    }
    if events.iter().any(|(_, v)| state_of(v).is_some_and(is_terminal)) {
        // The task ended within the events read: nothing is left to resume.
        return Ok(if with_successor { Resumed::NoSuccessor } else { Resumed::Late(state_of_last(&events)) });
    }
    // The event that followed, unless it is a snapshot (which a replay need not repeat).
    let successor = events.get(1).filter(|(_, v)| v.get("task").is_none());
    let resumed = subscribe_resumed(run, "resumed", &task, &after, via).await?;
    run.keep(resumed.to_evidence(Some("resumed"), &run.ctx.redactor));
    if let Some(error) = refusal_error(&resumed) {
        return match classify(run, "resumed-state", &task, error).await {
            Refusal::Finished(s) => Ok(Resumed::Late(s)),
            Refusal::Running { state, error } => Err(StepFail::violation(
                "resumed",
                format!("resuming after id {after} was refused while the task was {state}: {error}"),
            )),
            Refusal::Unknown { error, get } => Err(StepFail::violation(
                "resumed",
                format!("resuming after id {after} was refused ({error}), and GetTask does not find the task: {get}"),
            )),
        };
    }
    let tail = results(run, "resumed", &resumed)?;
    // §3.1.6: every subscription begins with a Task, a resumed one too.
    let replay = match tail.first() {
        Some((_, v)) if v.get("task").is_some() => &tail[1..],
        _ => &tail[..],
    };
    if replay.iter().any(|(id, _)| id.as_deref() == Some(after.as_str())) {
        return Err(StepFail::violation("resumed", format!("the replay after id {after} repeated the event itself")));
    }
    let Some(next) = replay.first() else {
        return Err(StepFail::violation("resumed", format!("nothing replayed after id {after}")));
    };
    if let Some(want) = successor {
        let same = match &want.0 {
            Some(id) => next.0.as_ref() == Some(id),
            // Without ids after the first, the event is known by its kind and state.
            None => kind_of(&next.1) == kind_of(&want.1) && state_of(&next.1) == state_of(&want.1),
        };
        if !same {
            return Err(StepFail::Violation(Failure {
                message: format!(
                    "the replay after id {after} does not begin with the event that followed it: that event was lost, as when a subscription starts afresh"
                ),
                step_id: Some("resumed".into()),
                pointer: None,
                expected: Some(describe_event(want)),
                actual: Some(describe_event(next)),
            }));
        }
    }
    Ok(Resumed::Held)
}

fn state_of_last(events: &Events) -> String {
    events.iter().rev().find_map(|(_, v)| state_of(v)).unwrap_or("finished").to_owned()
}

/// The checks that grade creating a push config on a task SendMessage started.
const CREATE_ANCHORS: [&str; 3] = ["PUSH-CFG-001", "KIT-SEND-004", "CORE-GET-001"];

async fn create_push_config(run: &mut CheckRun<'_>, task: &str, mut config: Value) -> Result<(), StepFail> {
    config["taskId"] = json!(task);
    let local = on_local_address(&config);
    let public = local.then(|| json!(with_public_url(&config)));
    let cfg = normalize_params("create_push_config", config, &run.ctx.tenant, &run.ctx.behaviors);
    let req = rpc_request(&run.ctx.rpc_url, &json!("create"), "CreateTaskPushNotificationConfig", Some(cfg));
    let x = run.exchange("create", req).await?;
    run.keep(x.to_evidence(Some("create"), &run.ctx.redactor));
    if x.truncated {
        return Err(cut_by_kit("create", run.ctx.client.config().max_body_bytes));
    }
    let v = x.json().map_err(|e| StepFail::violation("create", format!("not JSON: {e}")))?;
    if v.get("error").is_some()
        && let Some(public) = public
    {
        // The same config on a public name: taken, the refusal was about the address.
        let cfg = normalize_params("create_push_config", public, &run.ctx.tenant, &run.ctx.behaviors);
        let req = rpc_request(&run.ctx.rpc_url, &json!("create-public"), "CreateTaskPushNotificationConfig", Some(cfg));
        let y = run.exchange("create-public", req).await?;
        run.keep(y.to_evidence(Some("create-public"), &run.ctx.redactor));
        if let Some(id) = y.json().ok().as_ref().and_then(|v| v.pointer("/result/id")).and_then(Value::as_str) {
            let params = json!({"taskId": task, "id": id});
            let params = normalize_params("delete_push_config", params, &run.ctx.tenant, &run.ctx.behaviors);
            let req = rpc_request(
                &run.ctx.rpc_url,
                &json!("delete-public"),
                "DeleteTaskPushNotificationConfig",
                Some(params),
            );
            let _ = run.exchange("delete-public", req).await;
            return Err(guarded_against(&v));
        }
    }
    if v.get("result").is_none() {
        return Err(anchored(
            &CREATE_ANCHORS,
            StepFail::violation("create", format!("creating the push config failed: {}", compact(&v))),
        ));
    }
    Ok(())
}

/// A long-running task with a push config created on it while it still runs: GetTask, asked once
/// the config exists, finds the task unsettled, so its next updates come after the config. A task
/// that settled first owes the config no notification; the probe starts another.
async fn running_task_with_config(run: &mut CheckRun<'_>, config: &Value) -> Result<String, StepFail> {
    let mut late = Vec::new();
    for _ in 0..ATTEMPTS {
        let task = start_running_task(run, "start", "tck-long-running push").await?;
        create_push_config(run, &task, config.clone()).await?;
        match task_state(run, "created", &task).await {
            Ok(s) if settled(&s) => late.push(s),
            // Still running, or GetTask cannot tell (which is GetTask's finding): deliveries count.
            _ => return Ok(task),
        }
    }
    Err(StepFail::undecided(
        "create",
        format!(
            "{ATTEMPTS} times the task had settled ({}) by the time its push config existed, so no notification was due: the kit was late each time, and the agent is not graded",
            late.join(", ")
        ),
    ))
}

/// SendMessage of `text` with the push config in its configuration (§3.2.2), answered at once; the
/// id of the task it started.
async fn start_with_push_config(run: &mut CheckRun<'_>, text: &str, config: Value) -> Result<String, StepFail> {
    let public = on_local_address(&config).then(|| with_public_url(&config));
    let params = json!({
        "message": {"role": "ROLE_USER", "parts": [{"text": text}]},
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
    if v.get("error").is_some()
        && let Some(public) = public
    {
        // The same message with the config on a public name: taken, the refusal was about the
        // address (the task it starts notifies a host that serves no webhook).
        let params = json!({
            "message": {"role": "ROLE_USER", "parts": [{"text": text}]},
            "configuration": {"returnImmediately": true, "taskPushNotificationConfig": public},
        });
        let params = normalize_params("send_message", params, &run.ctx.tenant, &run.ctx.behaviors);
        let req = rpc_request(&run.ctx.rpc_url, &json!("start-public"), "SendMessage", Some(params));
        let y = run.exchange("start-public", req).await?;
        run.keep(y.to_evidence(Some("start-public"), &run.ctx.redactor));
        if y.json().ok().is_some_and(|w| w.get("result").is_some()) {
            return Err(guarded_against(&v));
        }
    }
    let result = v.get("result").map(|r| run.read_send(r).unwrap_or_else(|| r.clone())).unwrap_or_default();
    if let Some(id) = result.pointer("/task/id").and_then(Value::as_str) {
        return Ok(id.to_owned());
    }
    if result.get("message").is_some() {
        return Err(StepFail::Skip(
            SkipReason::BehaviorNotAvailable,
            format!("the agent answered {text:?} with a Message, so no task exists to send notifications about"),
        ));
    }
    Err(StepFail::violation("start", format!("SendMessage with a push config did not start a task: {}", compact(&v))))
}

/// True when a push config's webhook is on a loopback or private address, as the kit's own
/// receiver is unless `--webhook-url` says otherwise.
fn on_local_address(config: &Value) -> bool {
    let Some(host) = config
        .get("url")
        .and_then(Value::as_str)
        .and_then(|u| reqwest::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase()))
    else {
        return false;
    };
    host == "localhost"
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| match ip {
            std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
            std::net::IpAddr::V6(v6) => v6.is_loopback() || v6.is_unique_local() || v6.is_unicast_link_local(),
        })
}

/// `config` pointing at a public name instead.
fn with_public_url(config: &Value) -> Value {
    let mut c = config.clone();
    c["url"] = json!(security::push_url());
    c
}

/// The skip of a delivery check whose config on the kit's loopback receiver the agent refused
/// (`refusal`) while it took the same config on a public name: §13.2 advises agents to refuse
/// those addresses ("Agents SHOULD validate webhook URLs to prevent SSRF", "Reject private IP
/// ranges"), so it is no violation, and the delivery cannot be seen from here.
fn guarded_against(refusal: &Value) -> StepFail {
    StepFail::Skip(
        SkipReason::PreconditionFailed,
        format!(
            "the agent refused a push config whose webhook is the kit's receiver, on a loopback address ({}), and \
             took the same config on a public name: it guards against SSRF as §13.2 advises (\"Reject private IP \
             ranges\"), so delivery cannot be seen from here; give --webhook-bind and --webhook-url a public address \
             of the kit's receiver to grade it",
            compact(refusal.get("error").unwrap_or(refusal))
        ),
    )
}

/// True for a state after which a task changes no more until a client acts: terminal or
/// interrupted (§4.1.3).
fn settled(state: &str) -> bool {
    is_terminal(state) || matches!(state, "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED")
}

/// True when an `Authorization` value is `<scheme> <credentials>`: the scheme in any case (RFC 9110
/// §11.1: "It uses a case-insensitive token to identify the authentication scheme"), then one or
/// more spaces.
fn carries_credentials(value: Option<&str>, scheme: &str, credentials: &str) -> bool {
    value
        .map(str::trim)
        .and_then(|v| v.split_once(' '))
        .is_some_and(|(s, c)| s.eq_ignore_ascii_case(scheme) && c.trim_start_matches(' ') == credentials)
}

/// §4.3.3 / §13.2: the agent POSTs StreamResponse bodies to the webhook with the configured
/// credentials. `params.expect` picks what is graded.
///
/// With the tck-long-running behaviour, the config is created on a task that is still running
/// once it exists ([`running_task_with_config`]); otherwise it travels in the SendMessage of the
/// neutral message that starts the task (§3.2.2), and every update after it counts. Either way the
/// kit waits `--patience` from when it sees the task settled (GetTask), not from when it asked:
/// how long the task takes on a loaded machine or agent is not the delivery's delay.
async fn push_delivery(run: &mut CheckRun<'_>, params: &Value) -> Result<(), StepFail> {
    let Some(hook) = run.ctx.webhook.clone() else {
        return Err(StepFail::undecided("webhook", "no webhook receiver is running (see --webhook-bind)"));
    };
    let (url, inbox) = hook.new_endpoint();
    let canary = format!("kit-canary-{}", uuid::Uuid::new_v4().simple());
    let config =
        json!({"url": url, "token": "kit-token", "authentication": {"scheme": "Bearer", "credentials": canary}});
    let task = if run.ctx.behaviors.provides("tck-long-running") {
        running_task_with_config(run, &config).await?
    } else {
        let prompt = run.ctx.prompt.clone();
        start_with_push_config(run, &prompt, config).await.map_err(|e| match e {
            e @ (StepFail::Violation(_) | StepFail::Undecided(_)) => anchored(&[SEND_ANCHOR], e),
            other => other,
        })?
    };
    let patience = run.ctx.patience;
    let started = Instant::now();
    // When the kit first saw the task settled; until then, GetTask is asked now and then.
    let mut settled_at: Option<Instant> = None;
    let mut next_look = started;
    let deliveries = loop {
        let d = hook.deliveries(&inbox);
        let done = d.iter().any(|x| {
            serde_json::from_slice::<Value>(&x.body).ok().is_some_and(|v| state_of(&v).is_some_and(is_terminal))
        });
        if done {
            break d;
        }
        let now = Instant::now();
        if settled_at.is_none() && now >= next_look && now < started + patience {
            if task_state(run, "state", &task).await.is_ok_and(|s| settled(&s)) {
                settled_at = Some(Instant::now());
            }
            next_look = Instant::now() + Duration::from_millis(500);
        }
        // Patience after the task settled, within twice the patience in all; the patience alone
        // while the task is not seen settled (then the updates so far count).
        let deadline = match settled_at {
            Some(t) => (t + patience).min(started + 2 * patience),
            None => started + patience,
        };
        if Instant::now() > deadline {
            break hook.deliveries(&inbox);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let want = params.get("expect").and_then(Value::as_str).unwrap_or("at_least_one");
    if deliveries.is_empty() {
        let waited = match settled_at {
            Some(_) => format!("within {} s of the task settling", patience.as_secs()),
            None => format!("within {} s", patience.as_secs()),
        };
        return Err(StepFail::violation(
            "deliver",
            format!("no notification reached the webhook {waited} (§4.3.3: at least one attempt)"),
        ));
    }
    for (i, d) in deliveries.iter().enumerate() {
        let step = format!("delivery-{i}");
        match want {
            "authorization" if !carries_credentials(d.header("authorization"), "Bearer", &canary) => {
                return Err(StepFail::Violation(Failure {
                    message: "the webhook POST does not carry the configured credentials (§4.3.3)".into(),
                    step_id: Some(step),
                    pointer: None,
                    expected: Some("Authorization: Bearer <configured credentials> (the scheme in any case)".into()),
                    actual: Some(format!(
                        "Authorization: {}",
                        d.header("authorization").map(|_| "<other value>").unwrap_or("<absent>")
                    )),
                }));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_auth_scheme_is_matched_in_any_case() {
        for v in ["Bearer s3cret", "bearer s3cret", "BEARER s3cret", "BeArEr  s3cret", " Bearer s3cret "] {
            assert!(carries_credentials(Some(v), "Bearer", "s3cret"), "{v:?}");
        }
        for v in ["Bearer S3CRET", "Bearer s3cret2", "Basic s3cret", "Bearers3cret", "s3cret", ""] {
            assert!(!carries_credentials(Some(v), "Bearer", "s3cret"), "{v:?}");
        }
        assert!(!carries_credentials(None, "Bearer", "s3cret"));
    }

    #[test]
    fn stream_events_name_their_task_and_kind() {
        let snapshot = json!({"task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}});
        let update = json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_COMPLETED"}}});
        assert_eq!(task_of(&snapshot), Some("t"));
        assert_eq!(task_of(&update), Some("t"));
        assert_eq!(kind_of(&update), Some("statusUpdate"));
        assert_eq!(describe_event(&(Some("2".into()), update)), "id 2: statusUpdate TASK_STATE_COMPLETED");
        assert_eq!(describe_event(&(None, json!({}))), "id <none>: <unknown>");
        assert!(settled("TASK_STATE_INPUT_REQUIRED") && settled("TASK_STATE_CANCELED"));
        assert!(!settled("TASK_STATE_WORKING"));
    }
}

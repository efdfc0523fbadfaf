//! The 11 methods (§3.1, §9.4), on typed params. Each returns a JSON result, an SSE response or a
//! JSON-RPC error; the HTTP adapter in `rpc` does the rest.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::response::Response;
use base64::Engine as _;
use serde_json::{Value, json};

use super::app::App;
use super::binding::Binding;
use super::config::ExtendedCard;
use super::faults::ForeignTreatment;
use super::push::ensure_worker;
use super::scenario::{TemplateVars, render_parts};
use super::ssrf;
use super::stream::{self, CloseAt, Framing, StreamOptions};
use super::tasks::runner::{agent_message, cancel, spawn_run};
use super::tasks::view::view;
use super::tasks::{LoggedEvent, StreamSlot, Subscription, TaskHandle};
use super::validate::{
    Params, check_history_length, check_id, check_input_media_types, check_message, check_output_modes, parse_params,
    require,
};
use crate::protocol::limits::{LIST_TASKS_DEFAULT_PAGE_SIZE, LIST_TASKS_MAX_PAGE_SIZE};
use crate::protocol::{
    CancelTaskRequest, ErrorCode, GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Message, Method, RequestId, RpcError,
    SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef, TaskState,
};

/// What a method produced.
pub enum Outcome {
    Result(Value),
    /// A result already serialized: the hot paths skip building a `Value` tree only to print it.
    Json(String),
    /// An SSE response.
    Stream(Response),
}

/// Request facts that live outside `params`.
pub struct CallContext {
    /// The binding the call came over: its faults, and how its stream events are framed.
    pub binding: Binding,
    /// The JSON-RPC request id (REST calls have none; they carry a placeholder).
    pub id: RequestId,
    pub method: Method,
    pub authorization: Option<String>,
    pub last_event_id: Option<String>,
    /// The authenticated caller ("" when the mock authenticates no one).
    pub owner: String,
    /// Set when the request named another caller's task (the answer then mirrors a missing one).
    pub foreign: AtomicBool,
}

impl CallContext {
    /// How this call's stream events are framed: in a JSON-RPC response with the request's id
    /// (§9.4.2), or bare (§11.7).
    pub fn framing(&self) -> Framing {
        match self.binding {
            Binding::JsonRpc => Framing::JsonRpc(self.id.clone()),
            Binding::HttpJson => Framing::Bare,
        }
    }

    /// The faults committed on this call's binding.
    fn faults<'a>(&self, app: &'a App) -> &'a super::faults::ActiveFaults {
        app.faults_for(self.binding)
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("protocol types serialize")
}

fn limit_reached(what: &str, limit: usize, flag: &str) -> RpcError {
    RpcError::new(ErrorCode::UnsupportedOperation, format!("{what} limit of {limit} reached (raise it with {flag})"))
}

/// The caller's task. Another caller's task is answered exactly as a missing one (§3.3.2, §13.1),
/// unless a fault says otherwise.
fn lookup(app: &App, ctx: &CallContext, tenant: &str, id: &str) -> Result<Arc<TaskHandle>, RpcError> {
    if let Some(h) = app.store.get(tenant, &ctx.owner, id) {
        return Ok(h);
    }
    if let Some(h) = app.store.get_any_owner(tenant, id) {
        ctx.foreign.store(true, Ordering::Relaxed);
        match ctx.faults(app).foreign_task(ctx.method.name()) {
            Some((ForeignTreatment::Visible, _)) => return Ok(h),
            Some((ForeignTreatment::Revealed, _)) => {
                return Err(RpcError::new(ErrorCode::TaskNotFound, format!("task {id} belongs to another caller"))
                    .with_meta("taskId", id));
            }
            _ => {}
        }
    }
    Err(RpcError::task_not_found(id))
}

/// A message was accepted: either answered directly or attached to a task.
enum Accepted {
    Message(Message),
    /// The task; a snapshot of it as accepted, when asked for, and the log position it reflects;
    /// and a subscription from that position, taken before the task's script ran, so that
    /// whatever the script did is still in the log for it.
    Task(Arc<TaskHandle>, Option<Box<Task>>, u64, Subscription),
}

/// Accepts a message, claiming its `messageId` first when ids are single-use; a message refused
/// for any other reason gives its id back. `snapshot`: also return the task as accepted.
async fn accept_message(
    app: &App,
    ctx: &CallContext,
    req: &SendMessageRequest,
    snapshot: bool,
) -> Result<Accepted, RpcError> {
    let single_use = app.config.single_use_message_ids && !req.message.message_id.is_empty();
    if single_use && !app.message_ids.claim(&req.tenant, &req.message.message_id) {
        return Err(RpcError::invalid_params(
            "message.messageId",
            format!(
                "{:?} was already used; this agent treats message ids as single-use (§3.3.1: agents may use the \
                 messageId to detect duplicate messages), so send a new one",
                req.message.message_id
            ),
        ));
    }
    let accepted = accept_new_message(app, ctx, req, snapshot).await;
    if single_use && accepted.is_err() {
        app.message_ids.release(&req.tenant, &req.message.message_id);
    }
    accepted
}

async fn accept_new_message(
    app: &App,
    ctx: &CallContext,
    req: &SendMessageRequest,
    snapshot: bool,
) -> Result<Accepted, RpcError> {
    let limits = &app.config.limits;
    let msg = &req.message;
    check_message(msg, limits)?;
    let cfg = req.configuration.clone().unwrap_or_default();
    check_history_length("configuration.historyLength", cfg.history_length)?;
    check_input_media_types(msg, &app.config.input_modes)?;
    check_output_modes(&cfg.accepted_output_modes, &app.config.output_modes)?;
    let inline_push = match cfg.task_push_notification_config {
        Some(p) => Some(prepare_push_config(app, p, "configuration.taskPushNotificationConfig")?),
        None => None,
    };
    let input = msg.first_text().unwrap_or("").to_owned();

    if !msg.task_id.is_empty() {
        let handle = lookup(app, ctx, &req.tenant, &msg.task_id)?;
        let mut msg = msg.clone();
        let task_id = handle.id.clone();
        let accepted = handle.update(|t| {
            if !msg.context_id.is_empty() && msg.context_id != t.context_id() {
                return Err(RpcError::invalid_params(
                    "message.contextId",
                    format!("task {task_id} belongs to context {}, not {}", t.context_id(), msg.context_id),
                ));
            }
            let state = t.state();
            if state.is_terminal() {
                return Err(RpcError::new(
                    ErrorCode::UnsupportedOperation,
                    format!("task {task_id} is in terminal state {state} and accepts no further messages"),
                )
                .with_meta("taskId", task_id.clone())
                .with_meta("state", state.as_str()));
            }
            msg.context_id = t.context_id().to_owned();
            t.push_history(msg.clone());
            let steps = state.is_interrupted().then(|| {
                let (scenario, steps) = app.scenarios.continuation(&t.scenario, &msg, app.config.behaviors);
                t.scenario = scenario;
                steps
            });
            let seq = t.log.last_seq().unwrap_or(0);
            Ok((steps, snapshot.then(|| Box::new(t.task().into_owned())), seq))
        })?;
        let (steps, snapshot, seq) = accepted;
        let sub = handle.subscribe_after(Some(seq));
        if let Some(mut p) = inline_push {
            p.task_id = handle.id.clone();
            handle.update(|t| t.push_configs.insert(p.id.clone(), p));
            ensure_worker(&handle, app.push.clone(), None, Some(seq));
        }
        if let Some(steps) = steps {
            spawn_run(handle.clone(), &steps, input);
        }
        return Ok(Accepted::Task(handle, snapshot, seq, sub));
    }

    let scenario = if app.config.behaviors { app.scenarios.select(msg) } else { app.scenarios.default_scenario() };
    let context_id = match msg.context_id.is_empty() {
        true if app.config.context_ids => super::ids::new_id(),
        _ => msg.context_id.clone(),
    };
    if let Some(parts) = scenario.message_reply() {
        let delay = scenario.reply_delay_ms();
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        let vars = TemplateVars { input: &input, task_id: "", context_id: &context_id };
        return Ok(Accepted::Message(agent_message("", &context_id, render_parts(parts, &vars))));
    }
    let handle = app
        .store
        .create(&req.tenant, &ctx.owner, context_id, msg.clone(), scenario.clone())
        .map_err(|e| limit_reached("stored unfinished task", e.limit, "--max-tasks"))?;
    if app.config.record_requests {
        app.recorder
            .incident(serde_json::json!({"kind": "task_created", "task": handle.id, "scenario": scenario.name}));
    }
    if let Some(mut p) = inline_push {
        p.task_id = handle.id.clone();
        handle.update(|t| t.push_configs.insert(p.id.clone(), p));
        // The task as created (event 0) is the first notification.
        let created = StreamResponse::Task(handle.lock().task().into_owned());
        let first = LoggedEvent { seq: 0, event: created, closes_stream: false };
        ensure_worker(&handle, app.push.clone(), Some(first), Some(0));
    }
    let snapshot = snapshot.then(|| Box::new(handle.lock().task().into_owned()));
    let sub = handle.subscribe_after(Some(0));
    match ctx.faults(app).run_delay() {
        // A worker that picks the task up later: a cancel in between leaves it nothing to run.
        Some(delay) => {
            let handle = handle.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                spawn_run(handle, &scenario.steps, input);
            });
        }
        None => spawn_run(handle.clone(), &scenario.steps, input),
    }
    Ok(Accepted::Task(handle, snapshot, 0, sub))
}

/// Calls `ctx.method` with `params`: what both bindings' adapters do once they have read a call.
pub async fn call(app: &App, ctx: &CallContext, params: Params<'_>) -> Result<Outcome, RpcError> {
    let outcome = match ctx.method {
        Method::SendMessage => send_message(app, ctx, params).await,
        Method::SendStreamingMessage => send_streaming_message(app, ctx, params).await,
        Method::GetTask => get_task(app, ctx, params),
        Method::ListTasks => list_tasks(app, ctx, params.into_value()),
        Method::CancelTask => cancel_task(app, ctx, params.into_value()),
        Method::SubscribeToTask => subscribe_to_task(app, ctx, params.into_value()),
        Method::CreateTaskPushNotificationConfig => create_push_config(app, ctx, params.into_value()),
        Method::GetTaskPushNotificationConfig => get_push_config(app, ctx, params.into_value()),
        Method::ListTaskPushNotificationConfigs => list_push_configs(app, ctx, params.into_value()),
        Method::DeleteTaskPushNotificationConfig => delete_push_config(app, ctx, params.into_value()),
        Method::GetExtendedAgentCard => get_extended_card(app, ctx, params.into_value()),
    };
    // A fault may make another caller's task slower to refuse than a missing one (a timing leak).
    if ctx.foreign.load(Ordering::Relaxed)
        && let Some((ForeignTreatment::Slow, ms)) = ctx.faults(app).foreign_task(ctx.method.name())
    {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    outcome
}

/// SendMessage (§3.1.1): blocking by default, `returnImmediately` returns the task as created.
pub async fn send_message(app: &App, ctx: &CallContext, params: Params<'_>) -> Result<Outcome, RpcError> {
    let req: SendMessageRequest = params.parse()?;
    let cfg = req.configuration.clone().unwrap_or_default();
    let (handle, snapshot, mut sub) = match accept_message(app, ctx, &req, cfg.return_immediately).await? {
        Accepted::Message(m) => return Ok(Outcome::Result(to_value(&SendMessageResponse::Message(m)))),
        Accepted::Task(h, snap, _, sub) => (h, snap, sub),
    };
    if let Some(task) = snapshot {
        let task = view(&task, cfg.history_length, true);
        return Ok(Outcome::Result(to_value(&SendMessageResponse::Task(task))));
    }
    // A script that never settles must not hold the caller forever; it gets the task as it stands.
    // Most have settled already (they ran before the call got here), and need no timer.
    if !sub.is_settled() {
        let limit = Duration::from_millis(app.config.limits.max_blocking_ms);
        let _ = tokio::time::timeout(limit, sub.settled()).await;
    }
    let mut out = String::from(r#"{"task":"#);
    handle.lock().write_task_json(&mut out, cfg.history_length, true);
    out.push('}');
    Ok(Outcome::Json(out))
}

fn check_streaming(app: &App) -> Result<(), RpcError> {
    if !app.config.streaming {
        return Err(RpcError::new(
            ErrorCode::UnsupportedOperation,
            "streaming is not supported: the agent card declares capabilities.streaming false",
        ));
    }
    Ok(())
}

fn open_stream_slot(app: &App, handle: &Arc<TaskHandle>) -> Result<StreamSlot, RpcError> {
    let max = app.config.limits.max_subscribers;
    handle.try_open_stream(max).ok_or_else(|| limit_reached("concurrent subscriber", max, "--max-subscribers"))
}

/// SendStreamingMessage (§3.1.2).
pub async fn send_streaming_message(app: &App, ctx: &CallContext, params: Params<'_>) -> Result<Outcome, RpcError> {
    check_streaming(app)?;
    let req: SendMessageRequest = params.parse()?;
    let hl = req.configuration.as_ref().and_then(|c| c.history_length);
    match accept_message(app, ctx, &req, true).await? {
        Accepted::Message(m) => {
            let opts = StreamOptions::new(&app.config, CloseAt::TerminalOrInterrupted);
            Ok(Outcome::Stream(stream::single(ctx.framing(), StreamResponse::Message(m), opts)))
        }
        Accepted::Task(handle, snapshot, seq, sub) => {
            let slot = open_stream_slot(app, &handle)?;
            let snapshot = snapshot.expect("asked for");
            let first = StreamResponse::Task(view(&snapshot, hl, true));
            let opts = StreamOptions::new(&app.config, CloseAt::TerminalOrInterrupted);
            let cut = first_stream_cut(app, &snapshot.id, &req);
            Ok(Outcome::Stream(stream::follow(ctx.framing(), Some((seq, first)), sub, slot, opts, cut)))
        }
    }
}

/// The cut of a task's first stream, under `cut_streams_after`; every later stream of the task
/// runs whole. The cut is recorded with the task, the last event id sent and the message's parts,
/// so that `client-check` can tell a resubscription from the message sent again.
fn first_stream_cut(app: &App, task: &str, req: &SendMessageRequest) -> Option<stream::Cut> {
    let after = app.config.cut_streams_after?;
    if !app.cut_tasks.lock().unwrap_or_else(|p| p.into_inner()).insert(task.to_owned()) {
        return None;
    }
    let recorder = app.recorder.clone();
    let task = task.to_owned();
    let parts = serde_json::to_value(&req.message.parts).unwrap_or_default();
    Some(stream::Cut {
        after: after.max(1),
        note: Box::new(move |seq| {
            recorder.incident(serde_json::json!({
                "kind": "stream_cut",
                "task": task,
                "after_event_id": seq.to_string(),
                "message": {"parts": parts},
            }))
        }),
    })
}

/// GetTask (§3.1.3).
pub fn get_task(app: &App, ctx: &CallContext, params: Params<'_>) -> Result<Outcome, RpcError> {
    let req: GetTaskRequest = params.parse()?;
    require("id", &req.id)?;
    check_id("id", &req.id, &app.config.limits)?;
    check_history_length("historyLength", req.history_length)?;
    let handle = lookup(app, ctx, &req.tenant, &req.id)?;
    let task = handle.lock().task_json(req.history_length, true);
    Ok(Outcome::Json(task))
}

/// A `pageToken` longer than `max_cursor_len` is not one this server issued.
fn check_cursor(token: &str, limits: &crate::protocol::limits::Limits) -> Result<(), RpcError> {
    if token.len() > limits.max_cursor_len {
        return Err(RpcError::invalid_params("pageToken", format!("longer than {} bytes", limits.max_cursor_len)));
    }
    Ok(())
}

fn encode_cursor(ts_ms: i128, id: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{ts_ms}:{id}"))
}

fn decode_cursor(token: &str) -> Option<(i128, String)> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).ok()?;
    let s = String::from_utf8(raw).ok()?;
    let (ts, id) = s.split_once(':')?;
    Some((ts.parse().ok()?, id.to_owned()))
}

/// ListTasks (§3.1.4): filters, newest status first, cursor pagination, `nextPageToken: ""` last.
pub fn list_tasks(app: &App, ctx: &CallContext, params: Value) -> Result<Outcome, RpcError> {
    let req: ListTasksRequest = parse_params(params)?;
    let page_size = req.page_size.unwrap_or(LIST_TASKS_DEFAULT_PAGE_SIZE);
    if !(1..=LIST_TASKS_MAX_PAGE_SIZE).contains(&page_size) {
        return Err(RpcError::invalid_params(
            "pageSize",
            format!("must be between 1 and {LIST_TASKS_MAX_PAGE_SIZE} (got {page_size})"),
        ));
    }
    check_history_length("historyLength", req.history_length)?;
    check_id("contextId", &req.context_id, &app.config.limits)?;
    check_cursor(&req.page_token, &app.config.limits)?;
    // A bigger page than the agent serves is answered with fewer items (the token says there is more).
    let page_size = page_size.min(i32::try_from(app.config.limits.max_page_size.max(1)).unwrap_or(i32::MAX));
    let cursor = if req.page_token.is_empty() {
        None
    } else {
        Some(
            decode_cursor(&req.page_token)
                .ok_or_else(|| RpcError::invalid_params("pageToken", "is not a token this server issued"))?,
        )
    };
    let after_ms = req.status_timestamp_after.map(|t| t.unix_millis());
    let owner = match ctx.faults(app).foreign_task(ctx.method.name()) {
        Some((ForeignTreatment::Visible, _)) => None,
        _ => Some(ctx.owner.as_str()),
    };
    // Filtered and sorted on what each task keeps at hand; only the page is read in full.
    let mut rows: Vec<(i128, Arc<TaskHandle>)> = app
        .store
        .all(&req.tenant, owner)
        .into_iter()
        .filter_map(|h| {
            let ms = {
                let t = h.lock();
                let wanted = (req.context_id.is_empty() || t.context_id() == req.context_id)
                    && (req.status == TaskState::Unspecified || t.state() == req.status);
                wanted.then(|| t.status_timestamp().map_or(0, |ts| ts.unix_millis()))?
            };
            after_ms.is_none_or(|a| ms >= a).then_some((ms, h))
        })
        .collect();
    // Newest status first (§3.1.4); the id breaks ties so that the cursor order is total.
    rows.sort_by(|(a_ms, a), (b_ms, b)| b_ms.cmp(a_ms).then_with(|| a.id.cmp(&b.id)));
    let total = rows.len();
    let start = match &cursor {
        None => 0,
        Some((ms, id)) => rows
            .iter()
            .position(|(r_ms, t)| (r_ms < ms) || (r_ms == ms && t.id.as_str() > id.as_str()))
            .unwrap_or(total),
    };
    let page: Vec<(i128, Arc<TaskHandle>)> = rows.into_iter().skip(start).take(page_size as usize).collect();
    let next_page_token = if start + page.len() < total {
        page.last().map(|(ms, t)| encode_cursor(*ms, &t.id)).unwrap_or_default()
    } else {
        String::new()
    };
    let include_artifacts = req.include_artifacts.unwrap_or(false);
    let resp = ListTasksResponse {
        tasks: page.iter().map(|(_, h)| view(&h.lock().task(), req.history_length, include_artifacts)).collect(),
        next_page_token,
        page_size,
        total_size: i32::try_from(total).unwrap_or(i32::MAX),
    };
    Ok(Outcome::Result(to_value(&resp)))
}

/// CancelTask (§3.1.5).
pub fn cancel_task(app: &App, ctx: &CallContext, params: Value) -> Result<Outcome, RpcError> {
    let req: CancelTaskRequest = parse_params(params)?;
    require("id", &req.id)?;
    check_id("id", &req.id, &app.config.limits)?;
    let handle = lookup(app, ctx, &req.tenant, &req.id)?;
    if let Err(state) = cancel(&handle) {
        if ctx.faults(app).refused_cancel_applies() {
            handle.update(|t| t.overwrite_finished_state(TaskState::Canceled));
        }
        return Err(RpcError::new(
            ErrorCode::TaskNotCancelable,
            format!("task {} is in terminal state {state} and cannot be canceled", req.id),
        )
        .with_meta("taskId", req.id.clone())
        .with_meta("state", state.as_str()));
    }
    let task = handle.lock().task_json(None, true);
    Ok(Outcome::Json(task))
}

/// Where a resumed subscription starts: after the `afterEventId` param (the resume extension,
/// when enabled), else after the `Last-Event-ID` header.
fn resume_point(app: &App, ctx: &CallContext, params: &Value) -> Result<Option<(u64, &'static str)>, RpcError> {
    let param = params.get("afterEventId").filter(|_| app.config.resume_extension);
    let (raw, field) = match (param, &ctx.last_event_id) {
        (Some(Value::String(s)), _) => (s.clone(), "afterEventId"),
        (Some(Value::Number(n)), _) => (n.to_string(), "afterEventId"),
        (Some(other), _) => {
            return Err(RpcError::invalid_params("afterEventId", format!("must be a string, got {other}")));
        }
        (None, Some(h)) => (h.clone(), "Last-Event-ID"),
        (None, None) => return Ok(None),
    };
    let seq = raw
        .trim()
        .parse::<u64>()
        .map_err(|_| RpcError::invalid_params(field, format!("{raw:?} is not an event id this server issued")))?;
    Ok(Some((seq, field)))
}

/// SubscribeToTask (§3.1.6), with resume after `afterEventId` / `Last-Event-ID` (kit extension).
/// By default the stream stays open through an interrupted state to a terminal one (§3.1.6);
/// under `--subscribe-closes-at-interrupted` it closes after the snapshot of a task already
/// interrupted (§11.7).
pub fn subscribe_to_task(app: &App, ctx: &CallContext, params: Value) -> Result<Outcome, RpcError> {
    check_streaming(app)?;
    let resume = resume_point(app, ctx, &params)?;
    let req: SubscribeToTaskRequest = parse_params(params)?;
    require("id", &req.id)?;
    check_id("id", &req.id, &app.config.limits)?;
    let handle = lookup(app, ctx, &req.tenant, &req.id)?;
    let close = if app.config.subscribe_until_terminal { CloseAt::Terminal } else { CloseAt::TerminalOrInterrupted };
    let opts = StreamOptions::new(&app.config, close);
    let (snapshot, seq, replay, interrupted) = {
        let g = handle.lock();
        let state = g.state();
        if state.is_terminal() {
            return Err(RpcError::new(
                ErrorCode::UnsupportedOperation,
                format!("task {} is in terminal state {state}; there is nothing to subscribe to", req.id),
            )
            .with_meta("taskId", req.id.clone())
            .with_meta("state", state.as_str()));
        }
        if let Some((after, field)) = resume
            && !g.log.has_generated(after)
        {
            return Err(RpcError::invalid_params(field, format!("event {after} has not been sent on this task")));
        }
        // `None` when not resuming, or when the events to replay were already evicted.
        let replay = resume.and_then(|(after, _)| g.log.after(Some(after)).ok());
        let interrupted = close == CloseAt::TerminalOrInterrupted && state.is_interrupted();
        (g.task().into_owned(), g.log.last_seq().unwrap_or(0), replay, interrupted)
    };
    let id = ctx.framing();
    if interrupted {
        // Nothing more will happen until a follow-up: the stream ends with what the client lacks.
        let events = match replay {
            Some(events) => {
                let end = events.iter().position(|e| e.closes_stream).map_or(events.len(), |i| i + 1);
                events.into_iter().take(end).map(|e| (e.seq, e.event)).collect()
            }
            None => vec![(seq, StreamResponse::Task(snapshot))],
        };
        return Ok(Outcome::Stream(stream::fixed(id, events, opts)));
    }
    let slot = open_stream_slot(app, &handle)?;
    let out = match (resume, replay) {
        // Replay what came after the client's last event; no snapshot, the client has the state.
        (Some((after, _)), Some(_)) => stream::follow(id, None, handle.subscribe_after(Some(after)), slot, opts, None),
        // First subscription, or the events to replay were evicted: start from a fresh snapshot.
        _ => {
            let first = Some((seq, StreamResponse::Task(snapshot)));
            stream::follow(id, first, handle.subscribe_after(Some(seq)), slot, opts, None)
        }
    };
    Ok(Outcome::Stream(out))
}

fn check_push(app: &App) -> Result<(), RpcError> {
    if !app.config.push_notifications {
        return Err(RpcError::standard(ErrorCode::PushNotificationNotSupported));
    }
    Ok(())
}

/// Validates a config and assigns its id; the webhook URL must pass the create-time SSRF guard.
fn prepare_push_config(
    app: &App,
    mut cfg: TaskPushNotificationConfig,
    prefix: &str,
) -> Result<TaskPushNotificationConfig, RpcError> {
    check_push(app)?;
    let limits = &app.config.limits;
    // `prefix` locates the config in params: "" for Create, where the config is the params.
    let at = |name: &str| if prefix.is_empty() { name.to_owned() } else { format!("{prefix}.{name}") };
    require(&at("url"), &cfg.url)?;
    check_id(&at("id"), &cfg.id, limits)?;
    if let Some(a) = &cfg.authentication {
        require(&at("authentication.scheme"), &a.scheme)?;
    }
    // Syntax and literal addresses now; names are resolved and judged at each delivery.
    ssrf::check_url(&cfg.url, app.config.webhooks)
        .map_err(|why| RpcError::invalid_params(at("url"), format!("webhook refused: {why}")))?;
    if cfg.id.is_empty() {
        cfg.id = super::ids::new_id();
    }
    Ok(cfg)
}

/// A config as returned to callers: the token and credentials are secrets and never come back.
fn redacted(cfg: &TaskPushNotificationConfig) -> TaskPushNotificationConfig {
    let mut c = cfg.clone();
    c.token.clear();
    if let Some(a) = c.authentication.as_mut() {
        a.credentials.clear();
    }
    c
}

/// CreateTaskPushNotificationConfig (§3.1.7).
pub fn create_push_config(app: &App, ctx: &CallContext, params: Value) -> Result<Outcome, RpcError> {
    check_push(app)?;
    let req: TaskPushNotificationConfig = parse_params(params)?;
    require("taskId", &req.task_id)?;
    check_id("taskId", &req.task_id, &app.config.limits)?;
    let handle = lookup(app, ctx, &req.tenant, &req.task_id)?;
    let cfg = prepare_push_config(app, req, "")?;
    let max = app.config.limits.max_push_configs;
    let (stored, seq, terminal) = handle.update(|t| {
        if !t.push_configs.contains_key(&cfg.id) && t.push_configs.len() >= max {
            return Err(limit_reached("push configs per task", max, "--max-push-configs"));
        }
        t.push_configs.insert(cfg.id.clone(), cfg.clone());
        Ok((cfg.clone(), t.log.last_seq(), t.state().is_terminal()))
    })?;
    if !terminal {
        ensure_worker(&handle, app.push.clone(), None, seq);
    }
    Ok(Outcome::Result(to_value(&redacted(&stored))))
}

fn config_ref(
    app: &App,
    ctx: &CallContext,
    params: Value,
) -> Result<(TaskPushNotificationConfigRef, Arc<TaskHandle>), RpcError> {
    check_push(app)?;
    let req: TaskPushNotificationConfigRef = parse_params(params)?;
    require("taskId", &req.task_id)?;
    require("id", &req.id)?;
    check_id("taskId", &req.task_id, &app.config.limits)?;
    check_id("id", &req.id, &app.config.limits)?;
    let handle = lookup(app, ctx, &req.tenant, &req.task_id)?;
    Ok((req, handle))
}

/// GetTaskPushNotificationConfig (§3.1.8).
pub fn get_push_config(app: &App, ctx: &CallContext, params: Value) -> Result<Outcome, RpcError> {
    let (req, handle) = config_ref(app, ctx, params)?;
    let found = handle.lock().push_configs.get(&req.id).cloned();
    match found {
        Some(c) => Ok(Outcome::Result(to_value(&redacted(&c)))),
        None => Err(RpcError::new(
            ErrorCode::TaskNotFound,
            format!("push notification config {} does not exist for task {}", req.id, req.task_id),
        )
        .with_meta("taskId", req.task_id)
        .with_meta("configId", req.id)),
    }
}

/// ListTaskPushNotificationConfigs (§3.1.9).
pub fn list_push_configs(app: &App, ctx: &CallContext, params: Value) -> Result<Outcome, RpcError> {
    check_push(app)?;
    let req: ListTaskPushNotificationConfigsRequest = parse_params(params)?;
    require("taskId", &req.task_id)?;
    check_id("taskId", &req.task_id, &app.config.limits)?;
    if req.page_size < 0 {
        return Err(RpcError::invalid_params("pageSize", "must not be negative"));
    }
    check_cursor(&req.page_token, &app.config.limits)?;
    let handle = lookup(app, ctx, &req.tenant, &req.task_id)?;
    let all: Vec<TaskPushNotificationConfig> = handle.lock().push_configs.values().cloned().collect();
    let after = if req.page_token.is_empty() {
        None
    } else {
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&req.page_token)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| RpcError::invalid_params("pageToken", "is not a token this server issued"))?;
        Some(raw)
    };
    let max = app.config.limits.max_page_size.max(1);
    let size = if req.page_size == 0 { all.len().clamp(1, max) } else { (req.page_size as usize).min(max) };
    let rest: Vec<_> = all.into_iter().filter(|c| after.as_ref().is_none_or(|a| c.id.as_str() > a.as_str())).collect();
    let page: Vec<_> = rest.iter().take(size).map(redacted).collect();
    let next_page_token = if rest.len() > page.len() {
        page.last().map(|c| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&c.id)).unwrap_or_default()
    } else {
        String::new()
    };
    Ok(Outcome::Result(to_value(&ListTaskPushNotificationConfigsResponse { configs: page, next_page_token })))
}

/// DeleteTaskPushNotificationConfig (§3.1.10): idempotent, `{}` on success.
pub fn delete_push_config(app: &App, ctx: &CallContext, params: Value) -> Result<Outcome, RpcError> {
    let (req, handle) = config_ref(app, ctx, params)?;
    handle.update(|t| t.push_configs.remove(&req.id));
    Ok(Outcome::Result(json!({})))
}

/// GetExtendedAgentCard (§3.1.11, §13.3).
pub fn get_extended_card(app: &App, ctx: &CallContext, params: Value) -> Result<Outcome, RpcError> {
    if !params.is_null() {
        let _: GetExtendedAgentCardRequest = parse_params(params)?;
    }
    match &app.config.extended_card {
        ExtendedCard::Off => Err(RpcError::new(
            ErrorCode::UnsupportedOperation,
            "the agent card does not declare capabilities.extendedAgentCard",
        )),
        ExtendedCard::Unconfigured => Err(RpcError::standard(ErrorCode::ExtendedAgentCardNotConfigured)),
        // Every caller was authenticated before the method ran.
        ExtendedCard::Bearer(_) if !app.config.callers.is_empty() => {
            Ok(Outcome::Result(app.extended_card.as_ref().expect("built when a token is set").card.clone()))
        }
        ExtendedCard::Bearer(token) => {
            let presented = ctx
                .authorization
                .as_deref()
                .and_then(|h| h.split_once(' '))
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, t)| t.trim());
            if presented.is_none_or(|p| !constant_time_eq(p.as_bytes(), token.as_bytes())) {
                return Err(RpcError::new(
                    ErrorCode::Unauthenticated,
                    "GetExtendedAgentCard requires a valid bearer token (scheme \"bearer\" on the card)",
                ));
            }
            Ok(Outcome::Result(app.extended_card.as_ref().expect("built when a token is set").card.clone()))
        }
    }
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

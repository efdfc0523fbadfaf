//! Confirms, once per run, that each behaviour the user's map names really happens when its
//! message is sent: a map that promises INPUT_REQUIRED for a message the agent simply completes
//! would otherwise turn every multi-turn check into a false failure.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::context::{Ctx, compact};
use super::framing;
use super::request::normalize_params;
use super::settle::{in_progress, settle_result};
use super::states::state_of;
use crate::suite::assert;
use crate::suite::behaviors::{Behaviors, Confirm, MapOrigin, contract};
use crate::suite::paths;

/// Behaviour → why the agent did not do it (absent: it did).
pub type Refuted = BTreeMap<String, String>;

/// Tries every behaviour in `needed` that the map names; returns those the agent did not do.
pub async fn confirm(ctx: &Ctx, needed: &[String], budget: Duration) -> Refuted {
    let Behaviors::Map(map) = &ctx.behaviors else { return Refuted::new() };
    if map.origin != MapOrigin::File {
        // The kit found these itself, by seeing them happen.
        return Refuted::new();
    }
    let mut refuted = Refuted::new();
    for name in needed {
        let (Some(entry), Some(c)) = (map.entries.get(name), contract().get(name)) else { continue };
        let outcome = tokio::time::timeout(budget, try_one(ctx, &entry.text, entry.followup.as_deref(), &c.confirm))
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {} s", budget.as_secs())));
        if let Err(why) = outcome {
            refuted.insert(name.clone(), format!("{} ({:?}): {why}", c.description, entry.text));
        }
    }
    refuted
}

async fn try_one(ctx: &Ctx, text: &str, followup: Option<&str>, c: &Confirm) -> Result<(), String> {
    if ctx.primary.is_none() {
        return Err("the card offers no interface the kit can use to send it to".into());
    }
    let streaming = c.operation.as_deref() == Some("send_streaming_message");
    let mut params = json!({"message": {"role": "ROLE_USER", "parts": [{"text": text}]}});
    if c.return_immediately {
        params["configuration"] = json!({"returnImmediately": true});
    }
    let op = if streaming { "send_streaming_message" } else { "send_message" };
    // Texts come from the map already: no contract prefix to rewrite.
    let params = normalize_params(op, params, ctx.primary_tenant(), &Behaviors::None);
    let id = format!("kit-confirm-{}", uuid::Uuid::new_v4().simple());
    if streaming {
        let req = ctx.own_request(&id, "SendStreamingMessage", params)?;
        let limits = crate::sse::SseLimits { total_timeout: ctx.patience, ..ctx.client.config().sse.clone() };
        let x = ctx.exchange_stream("behaviour map", req, &limits, None).await?;
        if !x.is_sse() {
            return Err(format!("the answer is not an event stream (HTTP {})", x.status));
        }
        if let Some(why) = framing::cut_short(&x) {
            return Err(framing::cut_message(&x, why));
        }
        let events: Vec<Value> = x.events.iter().filter_map(|e| ctx.own_event_result(&e.data)).collect();
        if let Some(want) = &c.any_event
            && !events.iter().any(|e| assert::check(Some(e), want, "").is_empty())
        {
            return Err(format!("no event matched {}; got {} event(s)", compact(want), events.len()));
        }
        if let Some(want) = &c.final_event
            && let Some(m) = assert::check(events.last(), want, "").first()
        {
            return Err(format!("the last event: {m}"));
        }
        return Ok(());
    }
    let result = send(ctx, params).await?;
    check_result(&result, c)?;
    if c.still_running {
        still_running(ctx, &result).await?;
    }
    if let Some(next) = &c.followup {
        let Some(text) = followup else {
            return Err("the contract needs a follow-up and the map gives none (`followup`)".into());
        };
        let task = result.pointer("/task/id").and_then(Value::as_str).ok_or("no task to follow up")?;
        let context = result.pointer("/task/contextId").cloned().unwrap_or(Value::Null);
        let mut message = json!({"role": "ROLE_USER", "parts": [{"text": text}], "taskId": task});
        if !context.is_null() {
            message["contextId"] = context;
        }
        let params =
            normalize_params("send_message", json!({"message": message}), ctx.primary_tenant(), &Behaviors::None);
        let after = send(ctx, params).await?;
        check_result(&after, next).map_err(|e| format!("after the follow-up {text:?}: {e}"))?;
    }
    Ok(())
}

/// How often, and how long after the answer, the task is looked at: long enough for a task that
/// only looked running (SUBMITTED, its work not yet started) to finish, short of what a check
/// that needs it running spends before it acts on it.
pub(super) const WATCH: [Duration; 4] =
    [Duration::ZERO, Duration::from_millis(50), Duration::from_millis(150), Duration::from_millis(300)];

/// The task of `result` is still running after the answer: GetTask sees it SUBMITTED or WORKING,
/// never terminal or interrupted, for the whole of [`WATCH`].
async fn still_running(ctx: &Ctx, result: &Value) -> Result<(), String> {
    let task = result.pointer("/task/id").and_then(Value::as_str).ok_or("the answer holds no task to watch")?;
    match watch(ctx, task).await? {
        None => Ok(()),
        Some((found, after)) => Err(format!(
            "the answer said the task was running, but GetTask found it {} {} ms later: it does not keep running",
            state_of_task(&found),
            after.as_millis()
        )),
    }
}

/// Looks at `task` at each of [`WATCH`]; the task as GetTask found it once no longer in progress,
/// and when, or `None` when it was running every time.
pub(super) async fn watch(ctx: &Ctx, task: &str) -> Result<Option<(Value, Duration)>, String> {
    let started = std::time::Instant::now();
    for wait in WATCH {
        tokio::time::sleep(wait).await;
        let found = get_task(ctx, task).await?;
        if !in_progress(state_of_task(&found)) {
            return Ok(Some((found, started.elapsed())));
        }
    }
    Ok(None)
}

/// GetTask on a task the kit started on its own behalf; the task it answered.
pub(super) async fn get_task(ctx: &Ctx, task: &str) -> Result<Value, String> {
    let params = normalize_params("get_task", json!({"id": task}), ctx.primary_tenant(), &Behaviors::None);
    let id = format!("kit-confirm-{}", uuid::Uuid::new_v4().simple());
    let req = ctx.own_request(&id, "GetTask", params)?;
    let x = ctx.exchange("behaviour map", req).await?;
    let v = ctx.read_own(&x)?;
    match v.get("result").map(super::workaround::task_of) {
        Some(task) if task.pointer("/status/state").is_some_and(Value::is_string) => Ok(task.clone()),
        _ => Err(format!("GetTask on the task it started answered {}", compact(&v))),
    }
}

/// A task's state, "" when it has none.
pub(super) fn state_of_task(task: &Value) -> &str {
    task.pointer("/status/state").and_then(Value::as_str).unwrap_or("")
}

pub(super) async fn send(ctx: &Ctx, params: Value) -> Result<Value, String> {
    let id = format!("kit-confirm-{}", uuid::Uuid::new_v4().simple());
    let req = ctx.own_request(&id, "SendMessage", params)?;
    let x = ctx.exchange("behaviour map", req).await?;
    let v = ctx.read_own(&x)?;
    if let Some(err) = v.get("error") {
        return Err(format!("the agent answered with error {}", compact(err)));
    }
    let result = v.get("result").ok_or_else(|| format!("no result in {}", compact(&v)))?;
    let result = ctx.read_send(result).unwrap_or_else(|| result.clone());
    // What the agent does with the message is what it shows once the task settled, not what a
    // blocking answer sent before its work ran says (§3.2.2 is the blocking checks' to grade).
    Ok(settle_result(ctx, "behaviour map", &x.request, result).await)
}

pub(super) fn check_result(result: &Value, c: &Confirm) -> Result<(), String> {
    if let Some(want) = &c.result
        && let Some(m) = assert::check(Some(result), want, "").first()
    {
        let state = state_of(result).map(|s| format!(" (task state {s})")).unwrap_or_default();
        return Err(format!("{m}{state}"));
    }
    if let Some(any) = &c.any {
        let path = any.get("path").and_then(Value::as_str).unwrap_or("");
        let want = any.get("match").cloned().unwrap_or(Value::Null);
        let items = paths::select(result, path).map_err(|e| format!("contract data: {e}"))?;
        if !items.iter().any(|(_, v)| assert::check(Some(v), &want, "").is_empty()) {
            return Err(format!("nothing at {path} matches {}", compact(&want)));
        }
    }
    Ok(())
}

//! Settling before judging (issue 18). A blocking SendMessage MUST wait until its task is terminal
//! or interrupted (§3.2.2), but an agent may answer before its worker has run: the task is then
//! SUBMITTED (or WORKING) in one run and COMPLETED in the next, and every verdict that depends on
//! the task having finished (its state, artifacts, history, what a later call on it gets) would
//! flip with the timing. Before it judges such an answer the kit polls GetTask, within
//! `--patience`, until the task is terminal or interrupted, and judges that task; the checks of
//! blocking itself say `settle: false` and judge the first answer, every run.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::context::{CheckRun, Ctx};
use super::evidence::ToEvidence as _;
use super::request::{Answer, binding_of, normalize_params};
use crate::client::http::{HttpExchange, HttpRequest};
use crate::client::rest::{envelope, rest_request};
use crate::suite::behaviors::Behaviors;
use crate::suite::binding::Binding;
use crate::suite::model::Step;

/// The first look at the task comes this long after the answer; each later one waits twice as
/// long as the one before, up to [`MAX_INTERVAL`].
const FIRST_INTERVAL: Duration = Duration::from_millis(20);
const MAX_INTERVAL: Duration = Duration::from_millis(250);

/// True for the states of a task whose work is still in progress, in either spelling (when to stop
/// waiting does not depend on how the state is spelled): an answer holding one is not final.
/// Every other state (terminal, interrupted, or one the kit does not know) is judged as is.
pub fn in_progress(state: &str) -> bool {
    matches!(super::workaround::state_name(state).unwrap_or(state), "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING")
}

/// A task the kit saw settle.
pub(crate) struct Settled {
    /// The task as GetTask last returned it (terminal or interrupted).
    pub task: Value,
    /// That GetTask exchange, for evidence.
    pub exchange: HttpExchange,
}

/// Asks GetTask about `task` until it is no longer in progress, within `patience`. `template` is
/// the request whose URL and headers the GetTask reuses (the caller's credentials included);
/// `adapt` applies the run's workaround to each request, which goes through the run's guard as
/// `origin`. `None` when GetTask fails, answers anything but that task, or the task is still in
/// progress when the patience is spent: the answer is then judged as it came.
pub(crate) async fn poll(
    ctx: &Ctx,
    origin: &str,
    template: HttpRequest,
    params: Value,
    rest: Option<&str>,
    adapt: impl Fn(&mut HttpRequest),
) -> Option<Settled> {
    let task = params.get("id").and_then(Value::as_str)?.to_owned();
    let deadline = Instant::now() + ctx.patience;
    let mut interval = FIRST_INTERVAL;
    let mut attempt = 0;
    loop {
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        tokio::time::sleep(interval.min(deadline - now)).await;
        interval = (interval * 2).min(MAX_INTERVAL);
        attempt += 1;
        let mut req = match rest {
            None => {
                let envelope = json!({"jsonrpc": "2.0", "id": format!("kit-settle-{attempt}"), "method": "GetTask", "params": params});
                HttpRequest { body: serde_json::to_vec(&envelope).ok().map(Into::into), ..template.clone() }
            }
            // Over HTTP+JSON, GetTask is a GET of its own; the step's own headers go with it.
            Some(base) => {
                let mut req = rest_request(base, "GetTask", &params).ok()?;
                let own = ["content-type", "accept", "a2a-version"];
                req.headers.extend(
                    template.headers.iter().filter(|(k, _)| !own.contains(&k.to_ascii_lowercase().as_str())).cloned(),
                );
                req.omit_user_headers.clone_from(&template.omit_user_headers);
                req
            }
        };
        adapt(&mut req);
        let x = ctx.exchange(origin, req).await.ok()?;
        let answer = match rest {
            None => x.json().ok()?,
            Some(_) => envelope(x.status, x.json().ok().as_ref())?,
        };
        let got = answer.get("result")?;
        let got = super::workaround::task_of(got).clone();
        if got.get("id").and_then(Value::as_str) != Some(task.as_str()) {
            return None;
        }
        let state = got.pointer("/status/state").and_then(Value::as_str)?;
        if !in_progress(state) {
            return Some(Settled { task: got, exchange: x });
        }
    }
}

/// The GetTask params that read back the task a SendMessage request created: its id, the
/// request's tenant and its `configuration.historyLength` (so that the task is read as a blocking
/// answer would have shown it).
fn get_params(sent: &Value, task: &str, tenant: &str, behaviors: &Behaviors) -> Value {
    let mut p = json!({"id": task});
    if let Some(n) = sent.pointer("/params/configuration/historyLength") {
        p["historyLength"] = n.clone();
    }
    if let Some(t) = sent.pointer("/params/tenant") {
        p["tenant"] = t.clone();
    }
    normalize_params("get_task", p, tenant, behaviors)
}

/// True when the request asked not to block.
fn non_blocking(sent: &Value) -> bool {
    sent.pointer("/params/configuration/returnImmediately").and_then(Value::as_bool) == Some(true)
}

/// The id of the task a SendMessage result (in the 1.0 shape) holds while its work is in progress.
fn in_progress_task(result: &Value) -> Option<String> {
    let task = result.get("task")?;
    let state = task.pointer("/status/state").and_then(Value::as_str)?;
    in_progress(state).then(|| task.get("id").and_then(Value::as_str).map(str::to_owned))?
}

/// [`in_progress_task`] of a result read where the run reads SendMessage results.
fn unsettled_task(run: &CheckRun<'_>, result: &Value) -> Option<String> {
    in_progress_task(run.read_send(result).as_ref().unwrap_or(result))
}

/// A blocking SendMessage step's answer, settled: when its task is still in progress, GetTask is
/// polled until the task is terminal or interrupted, and the answer is judged with that task in
/// the place of the first one (evidence keeps both). A step with `settle: false` is judged on the
/// answer as it came; when other steps follow it, the kit still waits for the task to settle, so
/// that they find it done however quick the agent was. Any other answer is returned unchanged.
pub(crate) async fn settle_answer(run: &mut CheckRun<'_>, step: &Step, last: bool, answer: Answer) -> Answer {
    if step.operation.as_deref() != Some("send_message")
        || step.expect_error.is_some()
        || step.expect_refused.is_some()
        || step.repeat.is_some()
    {
        return answer;
    }
    let judge_settled = step.settle != Some(false);
    if !judge_settled && last {
        return answer;
    }
    let Answer::Single(x) = answer else { return answer };
    let (Ok(envelope), Some(sent)) = (x.json(), x.request.body.as_deref().and_then(|b| serde_json::from_slice(b).ok()))
    else {
        return Answer::Single(x);
    };
    let rest = (binding_of(run, step) == Binding::HttpJson).then_some(run.ctx.rest_url.as_str());
    // An HTTP+JSON SendMessage body is the request itself, JSON-RPC's params.
    let sent: Value = if rest.is_some() { json!({ "params": sent }) } else { sent };
    let Some(result) = envelope.get("result") else { return Answer::Single(x) };
    if non_blocking(&sent) {
        return Answer::Single(x);
    }
    let Some(task) = unsettled_task(run, result) else { return Answer::Single(x) };
    let tenant = if rest.is_some() { &run.ctx.rest_tenant } else { &run.ctx.tenant };
    let params = get_params(&sent, &task, tenant, &run.ctx.behaviors);
    let template = HttpRequest { body: None, ..x.request.clone() };
    let origin = format!("{} / {}-settle", run.id, step.id);
    let settled = poll(run.ctx, &origin, template, params, rest, |req| run.adapt(req, false)).await;
    let Some(settled) = settled else { return Answer::Single(x) };
    run.keep(settled.exchange.to_evidence(Some(&format!("{}-settle", step.id)), &run.ctx.redactor));
    if !judge_settled {
        return Answer::Single(x);
    }
    // What the first answer was is WIRE-SCHEMA's as much as what the kit judges instead.
    run.wire_check(&step.id, "SendMessageResponse", result);
    let mut envelope = envelope;
    match envelope.get_mut("result") {
        Some(Value::Object(r)) if r.contains_key("task") => {
            r.insert("task".into(), settled.task);
        }
        // A bare task the run's workaround reads as one: the settled task, as bare.
        Some(r) => *r = settled.task,
        None => return Answer::Single(x),
    }
    let body = serde_json::to_vec(&envelope).unwrap_or_default();
    Answer::Single(HttpExchange { body, ..x })
}

/// [`settle_answer`] for a SendMessage result the kit sends on its own behalf (the behaviour map's
/// confirmation): the result with its task settled, or as it came.
pub(crate) async fn settle_result(ctx: &Ctx, origin: &str, sent: &HttpRequest, result: Value) -> Value {
    let Some(body) = sent.body.as_deref().and_then(|b| serde_json::from_slice::<Value>(b).ok()) else {
        return result;
    };
    let rest = (ctx.primary == Some(Binding::HttpJson)).then_some(ctx.rest_url.as_str());
    // An HTTP+JSON SendMessage body is the request itself, JSON-RPC's params.
    let body = if rest.is_some() { json!({ "params": body }) } else { body };
    if non_blocking(&body) {
        return result;
    }
    let Some(task) = in_progress_task(&result) else { return result };
    let params = get_params(&body, &task, ctx.primary_tenant(), &Behaviors::None);
    let template = HttpRequest { body: None, ..sent.clone() };
    let settled = poll(ctx, origin, template, params, rest, |req| {
        ctx.adapt(req);
    })
    .await;
    match settled {
        Some(s) => {
            let mut result = result;
            result["task"] = s.task;
            result
        }
        None => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_submitted_and_working_are_in_progress() {
        assert!(in_progress("TASK_STATE_SUBMITTED") && in_progress("TASK_STATE_WORKING"));
        assert!(in_progress("submitted") && in_progress("working") && !in_progress("completed"));
        for s in ["TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED", "input-required", ""]
        {
            assert!(!in_progress(s), "{s}");
        }
    }

    #[test]
    fn the_task_is_read_back_as_the_request_asked_for_it() {
        let sent = json!({"params": {"message": {}, "configuration": {"historyLength": 1}, "tenant": "t1"}});
        assert_eq!(
            get_params(&sent, "task-1", "", &Behaviors::None),
            json!({"id": "task-1", "historyLength": 1, "tenant": "t1"})
        );
        assert_eq!(get_params(&json!({"params": {}}), "x", "", &Behaviors::None), json!({"id": "x"}));
        assert!(non_blocking(&json!({"params": {"configuration": {"returnImmediately": true}}})));
        assert!(!non_blocking(&json!({"params": {"configuration": {"returnImmediately": false}}})));
    }
}

//! One check's steps: send each request, grade the answer, capture variables, poll, and run the
//! check's assertions. Probes take the place of steps for what data cannot say.

use std::time::Duration;

use serde_json::{Value, json};

use super::context::{CheckRun, StepFail, compact};
use super::expect::{HELD_BACK, evaluate, named_assertion};
use super::framing;
use super::probes;
use super::request::{Answer, binding_of, send, verb_not_served};
use super::settle::settle_answer;
use super::states::is_terminal;
use crate::client::rest::{envelope, rest_request};
use crate::client::rpc::rpc_request;
use crate::report::{Failure, SkipReason};
use crate::suite::assert;
use crate::suite::binding::{Binding, REST_ERR};
use crate::suite::model::{OnlyIf, Step, Test};
use crate::suite::paths;

/// The checks that judge whether a stream can be read at all: its SSE framing, and each event a
/// response holding a StreamResponse. A stream read whole shows none of their defects.
const STREAM_FRAMING_OWNERS: [&str; 2] = ["JSONRPC-SSE-001", "REST-SSE-001"];

/// The check that judges a stream's label. A stream that came as SSE under a wrong label (the
/// client reads SSE framing whatever the label) is read as SSE: what is wrong in it, its framing
/// included, is not the label's finding.
const STREAM_LABEL_OWNER: &str = "KIT-STREAM-002";

/// Runs the check's probe, or its steps and assertions.
pub(crate) async fn run_test(run: &mut CheckRun<'_>, test: &Test) -> Result<(), StepFail> {
    if let Some(probe) = &test.probe {
        return probes::run(run, probe, test.probe_params.as_ref().unwrap_or(&Value::Null)).await;
    }
    if test.steps.is_empty() {
        return Err(StepFail::undecided("-", "the check has no steps and no probe"));
    }
    for (i, step) in test.steps.iter().enumerate() {
        if let Some(ms) = step.delay_ms {
            tokio::time::sleep(Duration::from_millis(ms.min(60_000))).await;
        }
        let last = i + 1 == test.steps.len();
        run.stream_read_whole = false;
        run.stream_was_sse = false;
        run.guarded_result = false;
        run.unnamed_error = false;
        if let Err(e) = run_step(run, step, last).await {
            // A stream read whole (its events responses holding results, its framing sound) does
            // not show the defect its framing owner judges, nor a stream read as SSE its label's;
            // a listing narrowed to the kit's own task held it; a member of a result the step's
            // guard accepted (any result, with no guard) is what the step reads (when it says
            // `own_result`); and an error whose shape alone is judged (no code asked) was an error
            // whichever it was: what the step found wrong in any of them is this check's own.
            let own = matches!(e, StepFail::Violation(_));
            let error_shape = matches!(&e, StepFail::Violation(f) if shape_of_any_error(step, f));
            let causes: Vec<String> = step
                .prerequisite
                .0
                .iter()
                // An error that named its A2A error was judged as what it named.
                .filter(|id| run.unnamed_error || Binding::plain_id(id) != REST_ERR)
                .filter(|id| {
                    !(own
                        && (!step.narrow.is_empty()
                            || error_shape
                            || step.own_result && run.guarded_result
                            || run.stream_read_whole && STREAM_FRAMING_OWNERS.contains(&Binding::plain_id(id))
                            || run.stream_was_sse && Binding::plain_id(id) == STREAM_LABEL_OWNER))
                })
                .cloned()
                .collect();
            return Err(match e {
                e @ (StepFail::Violation(_) | StepFail::Undecided(_)) if !causes.is_empty() => {
                    StepFail::Prerequisite { causes, failure: Box::new(e) }
                }
                e => e,
            });
        }
    }
    for a in &test.assertions {
        named_assertion(run, "assertions", a)?;
    }
    Ok(())
}

/// Whether `f` faults a member of an error the step expects in no particular code: the answer was
/// an error, and what is wrong with its members does not depend on which error it is.
fn shape_of_any_error(step: &Step, f: &Failure) -> bool {
    step.expect_error.as_ref().is_some_and(|ee| ee.code.is_none() && ee.error_type.is_none())
        && f.pointer.as_deref().is_some_and(|p| p.starts_with("/error/"))
}

/// `last`: no step follows this one.
async fn run_step(run: &mut CheckRun<'_>, step: &Step, last: bool) -> Result<(), StepFail> {
    if let Some(a) = &step.assertion {
        return named_assertion(run, &step.id, a);
    }
    let attempts = step.repeat.as_ref().map_or(1, |r| r.max_attempts.unwrap_or(10).clamp(1, 100));
    let mut attempt = 0;
    let mut live_retried = false;
    loop {
        attempt += 1;
        let answer = send(run, step).await?;
        let answer = if step.all_pages { every_page(run, step, answer).await? } else { answer };
        let answer = if step.narrow.is_empty() { answer } else { narrowed(run, step, answer)? };
        if step.unserved_skips
            && let Answer::Single(x) = &answer
            && ((binding_of(run, step) == Binding::HttpJson && verb_not_served(x.status, &x.body))
                || x.json().ok().and_then(|b| b.pointer("/error/code")?.as_i64()) == Some(-32004))
        {
            return Err(StepFail::Skip(
                SkipReason::BehaviorNotAvailable,
                format!(
                    "the agent does not serve this operation (HTTP {}), so how it reads the request cannot be judged",
                    x.status
                ),
            ));
        }
        // A blocking answer whose task is still in progress is judged once the task settled.
        let answer = settle_answer(run, step, last, answer).await;
        if let Some(why) = late_subscription(run, step, &answer).await {
            return Err(StepFail::undecided(&step.id, why));
        }
        // Polling decides on the raw answer; the step's expectations apply to the final one only.
        if let Some(rep) = &step.repeat {
            let done = assert::eval_until(&rep.until, &read_as_graded(run, step, peek_root(&answer)))
                .map_err(|e| StepFail::undecided(&step.id, format!("repeat.until: {e}")))?;
            // A guarded step polls for what the agent may do; when it never does, its last
            // answer goes to the guard, which says why the check cannot be decided.
            let given_up = attempt >= attempts && step.only_if.is_some();
            if !done && !given_up {
                if attempt >= attempts {
                    return Err(StepFail::Violation(Failure {
                        message: format!("`{}` still did not hold after {attempts} attempts", rep.until),
                        step_id: Some(step.id.clone()),
                        pointer: None,
                        expected: Some(rep.until.clone()),
                        actual: Some(compact(&peek_root(&answer))),
                    }));
                }
                let base = rep.delay_ms.unwrap_or(1000).min(30_000);
                let delay = match rep.backoff.as_deref() {
                    Some("linear") => base * attempt as u64,
                    Some("exponential") => base.saturating_mul(1 << (attempt - 1).min(6)),
                    _ => base,
                };
                tokio::time::sleep(Duration::from_millis(delay)).await;
                continue;
            }
        }
        let guarded = match (&step.only_if, success_root(step, &answer)) {
            (Some(guard), Some(root)) => Some(guard_holds(run, &step.id, guard, &read_as_graded(run, step, root))?),
            _ => None,
        };
        // With no guard, any result is the step's own to judge.
        run.guarded_result = guarded == Some(true) || step.only_if.is_none() && success_root(step, &answer).is_some();
        if guarded == Some(false)
            && let Some(guard) = &step.only_if
        {
            // A stream the kit cut short may not have shown yet what the check needs.
            if let Answer::Stream(x) = &answer
                && let Some(why) = framing::cut_short(x)
            {
                return Err(StepFail::undecided(
                    &step.id,
                    format!("{}, and those do not show what the check needs", framing::cut_message(x, why)),
                ));
            }
            let reason = run.render_str(&step.id, &guard.reason)?;
            let kind = if guard.behavior { SkipReason::BehaviorNotAvailable } else { SkipReason::FreedomTaken };
            return Err(StepFail::Skip(kind, reason));
        }
        let root = match evaluate(run, step, &answer) {
            // A first event late under load looks like a held-back stream: an agent that holds
            // its updates back does so on every stream, a busy machine rarely twice in a row.
            Err(StepFail::Violation(f)) if !live_retried && f.expected.as_deref() == Some(HELD_BACK) => {
                live_retried = true;
                attempt -= 1;
                continue;
            }
            Err(StepFail::Violation(f)) => {
                if step.own_result {
                    run.guarded_result &= judged_member_sent(run, step, &answer, &f);
                }
                return Err(StepFail::Violation(f));
            }
            r => r?,
        };
        if let Some(again) = with_supplied(step, &answer, root.as_ref(), run) {
            return Box::pin(run_step(run, &again, last)).await;
        }
        return finish_step(run, step, &answer, root);
    }
}

/// The step once more with the kit's own value for each capture it may supply (`supply`) that the
/// answer does not hold; `None` when nothing is missing.
fn with_supplied(step: &Step, answer: &Answer, root: Option<&Value>, run: &CheckRun<'_>) -> Option<Step> {
    if step.supply.is_empty() {
        return None;
    }
    let root = root.cloned().unwrap_or(Value::Null);
    let shaped = (step.operation.as_deref() == Some("send_message")).then(|| run.read_send(&root)).flatten();
    let read = shaped.as_ref().unwrap_or(&root);
    let missing: Vec<(&String, &String)> = step
        .supply
        .iter()
        .filter(|(var, _)| {
            step.capture
                .get(*var)
                .map(|p| capture_path(p).0)
                .is_some_and(|path| capture(answer, read, path).filter(|v| given(path, v)).is_none())
        })
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut again = step.clone();
    again.supply.clear();
    let mut params = again.params.take().unwrap_or_else(|| json!({}));
    for (var, pointer) in missing {
        let value = json!(format!("kit-{var}-{}", uuid::Uuid::new_v4().simple()));
        set_pointer(&mut params, pointer, value);
    }
    again.params = Some(params);
    Some(again)
}

/// Sets `value` at `pointer`, creating the objects on the way.
fn set_pointer(root: &mut Value, pointer: &str, value: Value) {
    let mut at = root;
    let parts: Vec<String> = pointer.split('/').skip(1).map(|p| p.replace("~1", "/").replace("~0", "~")).collect();
    for (i, part) in parts.iter().enumerate() {
        if !at.is_object() {
            *at = json!({});
        }
        let map = at.as_object_mut().expect("an object");
        if i + 1 == parts.len() {
            map.insert(part.clone(), value);
            return;
        }
        at = map.entry(part.clone()).or_insert_with(|| json!({}));
    }
}

/// Why a SubscribeToTask that was to stream was refused rightly: its task had already finished,
/// and §3.1.6 refuses a subscription to a terminal task. The step then says the kit came late (a
/// task that ends on its own may end before the subscription reaches a loaded agent), not that the
/// agent failed. GetTask is asked at once: a task terminal now was terminal or became so since,
/// and one still running was running when the agent refused.
async fn late_subscription(run: &CheckRun<'_>, step: &Step, answer: &Answer) -> Option<String> {
    if step.operation.as_deref() != Some("subscribe_to_task")
        || step.expect_error.is_some()
        || step.expect_refused.is_some()
        || step.caller.as_deref().is_some_and(|c| c != "a")
    {
        return None;
    }
    let Answer::Stream(x) = answer else { return None };
    if x.is_sse() {
        return None;
    }
    let error = serde_json::from_slice::<Value>(&x.body).ok()?.get("error").cloned()?;
    let origin = format!("{} / {}-state", run.id, step.id);
    let got = if binding_of(run, step) == Binding::HttpJson {
        // `…/tasks/{id}:subscribe`: the id is the path's; the tenant, when the interface has one,
        // is the run's.
        let path = reqwest::Url::parse(&x.request.url).ok()?.path().to_owned();
        let id = path.strip_suffix(":subscribe")?.rsplit('/').next()?;
        let id = percent_decoded(id);
        let mut params = json!({"id": id});
        if !run.ctx.rest_tenant.is_empty() {
            params["tenant"] = json!(run.ctx.rest_tenant);
        }
        let req = rest_request(&run.ctx.rest_url, "GetTask", &params).ok()?;
        let x = run.ctx.exchange(&origin, req).await.ok()?;
        envelope(x.status, x.json().ok().as_ref())?
    } else {
        let sent = serde_json::from_slice::<Value>(x.request.body.as_deref()?).ok()?;
        let task = sent.pointer("/params/id").and_then(Value::as_str)?;
        let mut params = json!({"id": task});
        if let Some(tenant) = sent.pointer("/params/tenant") {
            params["tenant"] = tenant.clone();
        }
        let req = rpc_request(&run.ctx.rpc_url, &json!(format!("{}-state", step.id)), "GetTask", Some(params));
        run.ctx.exchange(&origin, req).await.ok()?.json().ok()?
    };
    let task = super::workaround::task_of(got.get("result")?);
    let state = task.pointer("/status/state").and_then(Value::as_str).filter(|s| is_terminal(s))?;
    Some(format!(
        "the task had already finished ({state}) when the subscription reached the agent, which refused it as §3.1.6 requires ({}): the kit was late, and the agent is not graded",
        compact(&error)
    ))
}

fn percent_decoded(s: &str) -> String {
    reqwest::Url::parse(&format!("http://x/?v={s}"))
        .ok()
        .and_then(|u| u.query_pairs().next().map(|(_, v)| v.into_owned()))
        .unwrap_or_else(|| s.to_owned())
}

/// Most pages a step with `all_pages` reads.
const MAX_PAGES: usize = 20;
/// The check that grades that a pageToken leads to the next page.
const PAGE_TOKEN_OWNER: &str = "KIT-LIST-004";
/// The check that grades that a contextId filter lists that context only.
const CONTEXT_FILTER_OWNER: &str = "CORE-LIST-001";

/// The ids of the elements a page lists (its tasks or configs).
fn listed_ids(page: &Value) -> std::collections::BTreeSet<String> {
    page.as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|item| item.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// The answer of a list step over all its pages: while the page read names a `nextPageToken`, the
/// step is sent again with it as `pageToken`, and the pages' lists are joined into the last
/// answer (each page is kept as evidence as it came). An error answer, or one that is not a list,
/// ends the reading: the step grades it as it is. The walk also ends after [`MAX_PAGES`] or at a
/// page that repeats the one before (a pageToken not honoured): a step about the last page's
/// nextPageToken is then undecided (deferring to KIT-LIST-004 for a repeat), any other is judged
/// on the pages read.
async fn every_page(run: &mut CheckRun<'_>, step: &Step, first: Answer) -> Result<Answer, StepFail> {
    let Answer::Single(mut x) = first else { return Ok(first) };
    // An answer over either binding reads in the JSON-RPC shape here: the list is the `result`.
    let list_of = |v: &Value| -> Option<Value> { v.get("result").filter(|r| r.is_object()).cloned() };
    let Some(mut joined) = x.json().ok().as_ref().and_then(list_of) else { return Ok(Answer::Single(x)) };
    let token_of = |v: &Value| v.get("nextPageToken").and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut seen = listed_ids(&joined);
    // A step about the last page cannot be judged on one before it; a step about what the listing
    // holds is judged on the pages read.
    let about_last_page =
        step.expect.as_ref().and_then(|e| e.body.as_ref()).is_some_and(|b| b.get("nextPageToken").is_some());
    let mut read = 1;
    loop {
        let token = token_of(&joined);
        if token.is_empty() {
            break;
        }
        if read >= MAX_PAGES {
            if about_last_page {
                // An endless listing is one whose pageToken or contextId filter the agent ignores
                // (a page of every context, renewed as tasks come); the check that grades either
                // has the finding, and only without one is the last page undecided.
                let binding = binding_of(run, step);
                let causes = [PAGE_TOKEN_OWNER, CONTEXT_FILTER_OWNER].map(|c| binding.check_id(c));
                return Err(StepFail::Prerequisite {
                    causes: causes.into_iter().filter(|c| *c != run.id).collect(),
                    failure: Box::new(StepFail::undecided(
                        &step.id,
                        format!(
                            "the agent still names a nextPageToken after {MAX_PAGES} pages, the most the kit reads for one step, so the last page was not reached"
                        ),
                    )),
                });
            }
            break;
        }
        read += 1;
        let mut next = step.clone();
        let mut params = next.params.take().unwrap_or_else(|| json!({}));
        params["pageToken"] = json!(token);
        next.params = Some(params);
        let Answer::Single(y) = send(run, &next).await? else { break };
        let Some(page) = y.json().ok().as_ref().and_then(list_of) else {
            return Ok(Answer::Single(y));
        };
        // A page that names the token of the page before, or lists only what earlier pages did,
        // was not read from the token: the walk would never reach the last page.
        let ids = listed_ids(&page);
        if token_of(&page) == token || (!ids.is_empty() && ids.is_subset(&seen)) {
            if !about_last_page {
                break;
            }
            return Err(StepFail::Prerequisite {
                causes: vec![binding_of(run, step).check_id(PAGE_TOKEN_OWNER)],
                failure: Box::new(StepFail::undecided(
                    &step.id,
                    format!(
                        "page {read}, asked for with the nextPageToken of page {}, repeats it, so the kit cannot reach the last page",
                        read - 1
                    ),
                )),
            });
        }
        seen.extend(ids);
        if let (Some(all), Some(more)) = (joined.as_object_mut(), page.as_object()) {
            for (k, v) in more {
                match (all.get_mut(k), v) {
                    (Some(Value::Array(items)), Value::Array(new)) => items.extend(new.iter().cloned()),
                    _ => {
                        all.insert(k.clone(), v.clone());
                    }
                }
            }
            if !more.contains_key("nextPageToken") {
                all.remove("nextPageToken");
            }
        }
        x = y;
    }
    let mut body = x.json().unwrap_or(Value::Null);
    body["result"] = joined;
    x.body = serde_json::to_vec(&body).unwrap_or_default();
    Ok(Answer::Single(x))
}

/// The answer as `narrow` grades it: each named array of the result holds only the elements that
/// satisfy its assertion. An answer that is no list (an error, another shape) is left to the
/// step's expectations.
fn narrowed(run: &CheckRun<'_>, step: &Step, answer: Answer) -> Result<Answer, StepFail> {
    let Answer::Single(mut x) = answer else { return Ok(answer) };
    let Ok(mut body) = x.json() else { return Ok(Answer::Single(x)) };
    let Some(result) = body.get_mut("result").and_then(Value::as_object_mut) else {
        return Ok(Answer::Single(x));
    };
    for (member, want) in &step.narrow {
        let want = run.render(&step.id, want)?;
        let Some(Value::Array(items)) = result.get_mut(member) else { continue };
        let listed = items.len();
        items.retain(|item| assert::check(Some(item), &want, "").is_empty());
        if items.is_empty() {
            return Err(StepFail::undecided(
                &step.id,
                format!(
                    "none of the {listed} element(s) of `{member}` the agent listed is {}, so what it carries cannot be judged",
                    compact(&want)
                ),
            ));
        }
    }
    x.body = serde_json::to_vec(&body).unwrap_or_default();
    Ok(Answer::Single(x))
}

/// What the agent chose to answer, when the answer is a success: the JSON-RPC `result` (the body
/// for the card and raw requests, when 2xx), or every event's `result` of a stream made only of
/// results. `None` for anything that failed, which the step's expectations grade instead.
fn success_root(step: &Step, answer: &Answer) -> Option<Value> {
    match answer {
        Answer::Single(x) => {
            let body = x.json().ok()?;
            if step.raw.is_some() || step.operation.as_deref() == Some("get_agent_card") {
                return x.is_success().then_some(body);
            }
            body.get("result").cloned()
        }
        Answer::Stream(x) => {
            if !x.is_sse() || x.events.is_empty() {
                return None;
            }
            x.events
                .iter()
                .map(|e| serde_json::from_str::<Value>(&e.data).ok().and_then(|v| v.get("result").cloned()))
                .collect::<Option<Vec<Value>>>()
                .map(Value::Array)
        }
    }
}

fn guard_holds(run: &CheckRun<'_>, step: &str, guard: &OnlyIf, root: &Value) -> Result<bool, StepFail> {
    if let Some(m) = &guard.match_ {
        let want = run.render(step, m)?;
        if !assert::check(Some(root), &want, "").is_empty() {
            return Ok(false);
        }
    }
    if let Some(any) = &guard.any {
        let want = run.render(step, &any.match_)?;
        let items =
            paths::select(root, &any.path).map_err(|e| StepFail::undecided(step, format!("only_if.any.path: {e}")))?;
        if !items.iter().any(|(_, v)| assert::check(Some(v), &want, "").is_empty()) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A success root as the check grades it (a stream's roots as they came).
fn read_as_graded(run: &CheckRun<'_>, step: &Step, root: Value) -> Value {
    match step.operation.as_deref() {
        // A stream's root is the array of its results; a bare list of push configs is one answer.
        Some(op) if !root.is_array() || op == "list_push_configs" => {
            let mut graded = run.read_result(op, &root).unwrap_or(root);
            run.read_spellings(&mut graded);
            graded
        }
        _ => root,
    }
}

/// Whether the member a violation points at is one the answer holds: a value the agent sent and
/// the step judged wrong is the step's own (`own_result`), a member missing from an answer its
/// prerequisite faults (a result that is no task at all) is the prerequisite's story.
fn judged_member_sent(run: &CheckRun<'_>, step: &Step, answer: &Answer, f: &Failure) -> bool {
    let Some(pointer) = f.pointer.as_deref() else { return true };
    success_root(step, answer).is_some_and(|root| read_as_graded(run, step, root).pointer(pointer).is_some())
}

/// The answer's assertion root without any checking: the JSON-RPC `result` (or the whole body),
/// or a stream's first result.
fn peek_root(answer: &Answer) -> Value {
    let unwrap = |v: Value| v.get("result").cloned().unwrap_or(v);
    match answer {
        Answer::Single(x) => x.json().map(unwrap).unwrap_or(Value::Null),
        Answer::Stream(x) => x
            .events
            .first()
            .and_then(|e| serde_json::from_str::<Value>(&e.data).ok())
            .map(unwrap)
            .unwrap_or(Value::Null),
    }
}

fn finish_step(run: &mut CheckRun<'_>, step: &Step, answer: &Answer, root: Option<Value>) -> Result<(), StepFail> {
    let root = root.unwrap_or(Value::Null);
    // Under a workaround that reads bare SendMessage results, captures and the `response` later
    // steps compare with read the task or message where the 1.0 shape has it (the shape is its
    // owners' finding, not every reader's).
    // Captures read the answer as the other checks grade it; a check of the answer's shape keeps
    // it as it came for its own assertions.
    let op = step.operation.as_deref().unwrap_or_default();
    let shaped = if op == "send_message" && !step.capture.is_empty() {
        run.read_send(&root)
    } else {
        run.read_result(op, &root)
    };
    // Later steps compare with what the check graded, enum spellings included.
    let shaped = shaped.map(|mut v| {
        run.read_spellings(&mut v);
        v
    });
    let mut root = root;
    run.read_spellings(&mut root);
    for (var, path) in &step.capture {
        let (path, optional) = capture_path(path);
        // A value the answer does not hold is nothing this check may send on, nor a finding of
        // its own: a member the spec requires is its owner's to miss, and an optional one (a
        // contextId the agent did not generate, a task where it answered with a Message) is the
        // agent's choice. The check cannot go on, and says why, unless it said it can do without.
        let Some(value) = capture(answer, shaped.as_ref().unwrap_or(&root), path).filter(|v| given(path, v)) else {
            if optional {
                continue;
            }
            let read = shaped.as_ref().unwrap_or(&root);
            let field = path.rsplit('.').next().unwrap_or(path);
            let what = if read.get("message").is_some() && read.get("task").is_none() {
                "it answered with a Message, not a Task".to_owned()
            } else if let Some(task) = read.get("task").or_else(|| read.get("status").map(|_| read)) {
                let id = task.get("id").map(compact).unwrap_or_else(|| "<no id>".into());
                format!("the task it returned ({id}) has no `{field}`")
            } else {
                format!("it answered {}", compact(read))
            };
            return Err(StepFail::Skip(
                SkipReason::BehaviorNotAvailable,
                format!(
                    "the agent's answer to step `{}` holds nothing at `{path}`, which the check goes on with: {what}",
                    step.id
                ),
            ));
        };
        run.vars.set_step(&step.id, var, value);
    }
    let response = match op {
        "send_message" if run.owns_send_shape() => root,
        _ => shaped.unwrap_or(root),
    };
    run.vars.set_step(&step.id, "response", response);
    for a in &step.assertions {
        named_assertion(run, &step.id, a)?;
    }
    Ok(())
}

/// Whether a captured value is one the agent gave: `null` is none, and an empty id is none either
/// (a proto3 string left unset reads as "", and a request carrying it filters or refers to
/// nothing).
fn given(path: &str, v: &Value) -> bool {
    let field = path.rsplit(['.', '/']).next().unwrap_or(path);
    let id = field == "id" || field.ends_with("Id");
    let empty_id = id && v.as_str() == Some("");
    !(v.is_null() || empty_id)
}

/// A capture's path without its `?`, and whether it had one (the value is optional).
fn capture_path(path: &str) -> (&str, bool) {
    match path.strip_suffix('?') {
        Some(p) => (p, true),
        None => (path, false),
    }
}

fn capture(answer: &Answer, root: &Value, path: &str) -> Option<Value> {
    let (status, headers) = match answer {
        Answer::Single(x) => (x.status, &x.headers),
        Answer::Stream(x) => (x.status, &x.headers),
    };
    if path == "@status" {
        return Some(json!(status));
    }
    if let Some(name) = path.strip_prefix("@header:") {
        return headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| json!(v));
    }
    paths::get(root, path).ok().flatten().cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_the_agent_did_not_give_is_not_captured() {
        assert!(!given("task.contextId", &Value::Null));
        assert!(!given("task.contextId", &json!("")));
        assert!(!given("id", &json!("")));
        assert!(given("task.contextId", &json!("c-1")));
        // An empty text is a value; only an unset id reads as "".
        assert!(given("task.status.message.parts.0.text", &json!("")));
    }

    #[test]
    fn a_supplied_value_is_set_where_the_pointer_says_creating_the_way() {
        let mut p = json!({"message": {"role": "ROLE_USER"}});
        set_pointer(&mut p, "/message/contextId", json!("kit-c"));
        assert_eq!(p, json!({"message": {"role": "ROLE_USER", "contextId": "kit-c"}}));
        let mut q = json!({});
        set_pointer(&mut q, "/configuration/a~1b", json!(1));
        assert_eq!(q, json!({"configuration": {"a/b": 1}}));
    }
}

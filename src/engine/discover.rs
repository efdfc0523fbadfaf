//! Finding behaviours without a map (issue 18, "grade from what happened"). A run given no
//! `--behaviors` tries the neutral prompt and the example prompts the agent's own card lists
//! under its skills, once each, and keeps the behaviours of the contract it *saw* happen: a
//! Message, a task that completes, fails, is rejected, stops for input or auth, or is still
//! running half a second after a `returnImmediately` answer. Checks needing one of those then run
//! on that prompt instead of skipping; a check needing a behaviour nothing showed skips saying
//! what each prompt did.
//!
//! Only what was seen is kept, and in the contract's own terms (the confirmations of
//! `suites/behaviors.json`): a found behaviour is as certain as a mapped one the kit confirmed.
//! Behaviours that need a follow-up only a person can know (multi-turn's `again`) or a stream
//! (chunked artifacts) are left to a map.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::stream::{self, StreamExt};
use serde_json::{Value, json};

use super::behaviors::{check_result, send, state_of_task, watch};
use super::context::{Ctx, compact};
use super::request::normalize_params;
use super::settle::{in_progress, poll};
use crate::suite::behaviors::{BehaviorMap, Behaviors, Confirm, MapOrigin, Mapped, contract};

/// Most prompts tried: the neutral one and the card's first examples (an agent's card lists a
/// handful; the mock's, one per ACTS behaviour).
const MAX_PROMPTS: usize = 16;
/// Longest example text the kit sends; a longer one is not a prompt but a description.
const MAX_TEXT: usize = 512;
/// Prompts tried at once.
const IN_FLIGHT: usize = 4;
/// Where the kit's own requests come from, in the guard's records.
const ORIGIN: &str = "behaviour discovery";

/// The prompts to try: the neutral one first, then each skill's examples in card order, without
/// repeats, blanks or overlong texts.
pub fn prompts(card: &Value, neutral: &str) -> Vec<String> {
    let examples = card
        .get("skills")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("examples").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .map(str::trim);
    let mut out: Vec<String> = Vec::new();
    for t in std::iter::once(neutral).chain(examples) {
        if !t.is_empty() && t.len() <= MAX_TEXT && !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
        if out.len() == MAX_PROMPTS {
            break;
        }
    }
    out
}

/// What a prompt answered with a Message did, in [`Tried::seen`]'s words.
const A_MESSAGE: &str = "a Message";

/// What one prompt did: in plain words, and the behaviours it showed.
struct Tried {
    text: String,
    seen: String,
    found: Vec<(String, Mapped)>,
    /// How long the `returnImmediately` answer took, when it came with a completed task.
    completed_in: Option<Duration>,
}

/// A prompt whose completed answer took this many times the neutral prompt's is slow.
const SLOW_RATIO: u32 = 10;

/// The prompts answered with a completed task [`SLOW_RATIO`] times later than `neutral` took,
/// slowest first: on a busy machine a quick prompt can pass the ratio by a hiccup of a few
/// milliseconds, and a work that really takes time is then still the one chosen.
fn slow(tried: &[Tried], neutral: Option<Duration>) -> Vec<String> {
    let Some(q) = neutral else { return Vec::new() };
    let mut slow: Vec<(Duration, &str)> = tried
        .iter()
        .filter_map(|t| t.completed_in.filter(|d| *d >= q * SLOW_RATIO).map(|d| (d, t.text.as_str())))
        .collect();
    slow.sort_by_key(|s| std::cmp::Reverse(s.0));
    slow.into_iter().map(|(_, t)| t.to_owned()).collect()
}

/// Tries every prompt (each within the run's patience and a little more for its follow-up) and
/// returns the map of what happened; the first prompt, in order, that showed a behaviour is the
/// one checks use for it. The neutral prompt goes alone first: its answer time is the yardstick
/// of "slow", which prompts sent alongside it would stretch.
pub async fn discover(ctx: &Ctx) -> BehaviorMap {
    let mut texts = prompts(&ctx.discovery.card, &ctx.prompt).into_iter();
    let Some(neutral) = texts.next() else { return BehaviorMap::default() };
    let (first, neutral_in) = try_one(ctx, neutral).await;
    let rest: Vec<(Tried, Option<Duration>)> =
        stream::iter(texts).map(|t| try_one(ctx, t)).buffered(IN_FLIGHT).collect().await;
    let tried: Vec<Tried> = std::iter::once(first).chain(rest.into_iter().map(|(t, _)| t)).collect();
    let mut entries = BTreeMap::new();
    for t in &tried {
        for (name, m) in &t.found {
            entries.entry(name.clone()).or_insert_with(|| m.clone());
        }
    }
    let seen = tried.iter().map(|t| format!("{:?}: {}", t.text, t.seen)).collect();
    let slow = slow(&tried[1..], neutral_in);
    let messages_only = tried.iter().all(|t| t.seen == A_MESSAGE);
    BehaviorMap {
        source: "the prompts the kit tried".into(),
        entries,
        origin: MapOrigin::Found { seen, slow, messages_only },
    }
}

/// [`try_prompt`] within its budget; what it did, and how long its answer took.
async fn try_one(ctx: &Ctx, text: String) -> (Tried, Option<Duration>) {
    let budget = ctx.patience + Duration::from_secs(5);
    let outcome = tokio::time::timeout(budget, try_prompt(ctx, &text))
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {} s", budget.as_secs())));
    match outcome {
        Ok(Seen { seen, found, answered_in, completed }) => {
            (Tried { text, seen, found, completed_in: completed.then_some(answered_in) }, Some(answered_in))
        }
        Err(why) => (Tried { text, seen: ctx.redactor.redact(&why), found: Vec::new(), completed_in: None }, None),
    }
}

/// The found behaviours, one line for the report's target notes.
pub fn summary(map: &BehaviorMap) -> String {
    if map.entries.is_empty() {
        return "behaviours: no prompt the kit tried showed one a check needs (pass --behaviors FILE to map them)"
            .into();
    }
    let found: Vec<String> = map.entries.iter().map(|(name, m)| format!("{name} ({:?})", m.text)).collect();
    format!("behaviours found by trying the neutral prompt and the card's skill examples: {}", found.join(", "))
}

/// A confirmation the kit can judge on one task as it settled: no stream, no follow-up, no
/// watch of a running task.
fn on_settled_task(c: &Confirm) -> bool {
    c.operation.is_none() && !c.return_immediately && !c.still_running && c.followup.is_none()
}

/// The behaviours of the contract whose settled-task confirmation `result` satisfies.
fn shown_by(result: &Value, text: &str) -> Vec<(String, Mapped)> {
    contract()
        .iter()
        .filter(|(_, c)| on_settled_task(&c.confirm) && check_result(result, &c.confirm).is_ok())
        .map(|(name, _)| (name.clone(), Mapped { text: text.to_owned(), followup: None, again: None }))
        .collect()
}

/// A state as a reader says it: `COMPLETED` for `TASK_STATE_COMPLETED`.
fn said(state: &str) -> &str {
    state.strip_prefix("TASK_STATE_").unwrap_or(state)
}

/// What the agent did with one prompt.
struct Seen {
    seen: String,
    found: Vec<(String, Mapped)>,
    /// From sending the `returnImmediately` request to the end of its answer.
    answered_in: Duration,
    /// That answer held a completed task.
    completed: bool,
}

/// Sends `text` with `returnImmediately` and follows what the agent does with it.
async fn try_prompt(ctx: &Ctx, text: &str) -> Result<Seen, String> {
    let message = json!({"role": "ROLE_USER", "parts": [{"text": text}]});
    let params = json!({"message": message, "configuration": {"returnImmediately": true}});
    let params = normalize_params("send_message", params, ctx.primary_tenant(), &Behaviors::None);
    let id = format!("kit-discover-{}", uuid::Uuid::new_v4().simple());
    let req = ctx.own_request(&id, "SendMessage", params)?;
    let x = ctx.exchange(ORIGIN, req).await?;
    let answered_in = x.elapsed;
    let v = ctx.read_own(&x)?;
    if let Some(err) = v.get("error") {
        return Err(format!("answered error {}", compact(err)));
    }
    let result = v.get("result").ok_or_else(|| format!("answered {}", compact(&v)))?;
    let result = ctx.read_send(result).unwrap_or_else(|| result.clone());
    let Some(task) = result.get("task") else {
        let seen = if result.get("message").is_some() { A_MESSAGE } else { "neither a Task nor a Message" };
        return Ok(Seen { seen: seen.into(), found: shown_by(&result, text), answered_in, completed: false });
    };
    let id = task.get("id").and_then(Value::as_str).ok_or("a task without an id")?.to_owned();
    let state = state_of_task(task).to_owned();
    let (settled, mut seen) = if in_progress(&state) {
        match watch(ctx, &id).await? {
            Some((found, _)) => {
                (found.clone(), format!("{}, then {} a moment later", said(&state), said(state_of_task(&found))))
            }
            None => {
                let (seen, found) = still_running(ctx, text, &result, &x.request, &id).await;
                return Ok(Seen { seen, found, answered_in, completed: false });
            }
        }
    } else {
        (task.clone(), said(&state).to_owned())
    };
    let settled = json!({"task": settled});
    let mut found = shown_by(&settled, text);
    if let Some(c) = contract().get("tck-input-required")
        && let Some(next) = &c.confirm.followup
        && check_result(&settled, &c.confirm).is_ok()
    {
        // Whether a follow-up ends the interruption: the neutral prompt is the one the kit has.
        let follow = &ctx.prompt;
        let context = settled.pointer("/task/contextId").cloned().unwrap_or(Value::Null);
        let mut message = json!({"role": "ROLE_USER", "parts": [{"text": follow}], "taskId": id});
        if !context.is_null() {
            message["contextId"] = context;
        }
        let params =
            normalize_params("send_message", json!({"message": message}), ctx.primary_tenant(), &Behaviors::None);
        match send(ctx, params).await {
            Ok(after) if check_result(&after, next).is_ok() => {
                seen.push_str(&format!("; the follow-up {follow:?} ended the interruption"));
                let mapped = Mapped { text: text.to_owned(), followup: Some(follow.clone()), again: None };
                found.push(("tck-input-required".into(), mapped));
            }
            Ok(after) => {
                let state = after.pointer("/task/status/state").and_then(Value::as_str).unwrap_or("no task state");
                seen.push_str(&format!("; the follow-up {follow:?} left it {}", said(state)));
            }
            Err(why) => seen.push_str(&format!("; the follow-up {follow:?}: {why}")),
        }
    }
    Ok(Seen { seen, found, answered_in, completed: state == "TASK_STATE_COMPLETED" })
}

/// A task still running when the watch ended: a task to cancel, and, when it then completes
/// within the patience, the long-running behaviour (the contract's task completes).
async fn still_running(
    ctx: &Ctx,
    text: &str,
    answer: &Value,
    template: &crate::client::http::HttpRequest,
    id: &str,
) -> (String, Vec<(String, Mapped)>) {
    let plain = |name: &str| (name.to_owned(), Mapped { text: text.to_owned(), followup: None, again: None });
    let shows = |name: &str| {
        contract().get(name).is_some_and(|c| {
            c.confirm.return_immediately && c.confirm.still_running && check_result(answer, &c.confirm).is_ok()
        })
    };
    let mut found: Vec<(String, Mapped)> = ["tck-cancel"].into_iter().filter(|n| shows(n)).map(plain).collect();
    let started = state_of_task(answer.get("task").unwrap_or(&Value::Null)).to_owned();
    let params = normalize_params("get_task", json!({"id": id}), ctx.primary_tenant(), &Behaviors::None);
    let rest = (ctx.primary == Some(crate::suite::binding::Binding::HttpJson)).then_some(ctx.rest_url.as_str());
    let seen = match poll(ctx, ORIGIN, template.clone(), params, rest, |r| {
        ctx.adapt(r);
    })
    .await
    {
        Some(end) => {
            let state = state_of_task(&end.task).to_owned();
            if state == "TASK_STATE_COMPLETED" && shows("tck-long-running") {
                found.push(plain("tck-long-running"));
            }
            format!("{}, still running half a second later, then {}", said(&started), said(&state))
        }
        None => {
            // Leave the agent as found: a task that would run on forever is the kit's to end.
            cancel(ctx, id).await;
            format!("{}, still running half a second later and not done within --patience", said(&started))
        }
    };
    (seen, found)
}

/// CancelTask on a task the kit started; what the agent answers is other checks' to judge.
async fn cancel(ctx: &Ctx, id: &str) {
    let params = normalize_params("cancel_task", json!({"id": id}), ctx.primary_tenant(), &Behaviors::None);
    let rid = format!("kit-discover-{}", uuid::Uuid::new_v4().simple());
    if let Ok(req) = ctx.own_request(&rid, "CancelTask", params) {
        let _ = ctx.exchange(ORIGIN, req).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_completed_prompt_comes_first() {
        let ms = Duration::from_millis;
        let tried = |text: &str, completed: Option<u64>| Tried {
            text: text.into(),
            seen: String::new(),
            found: Vec::new(),
            completed_in: completed.map(ms),
        };
        let all = [
            tried("a hiccup", Some(25)),
            tried("still running", None),
            tried("real work", Some(1_500)),
            tried("quick", Some(3)),
        ];
        assert_eq!(slow(&all, Some(ms(2))), ["real work", "a hiccup"]);
        assert!(slow(&all, None).is_empty());
    }

    #[test]
    fn prompts_are_the_neutral_one_then_the_examples_once_each() {
        let card = json!({"skills": [
            {"examples": ["hello", " please wait ", "", 7]},
            {"examples": ["need input", "please wait", "x".repeat(MAX_TEXT + 1)]},
            {"id": "no-examples"}
        ]});
        assert_eq!(prompts(&card, "hello"), ["hello", "please wait", "need input"]);
        let many = json!({"skills": [{"examples": (0..20).map(|i| format!("p{i}")).collect::<Vec<_>>()}]});
        assert_eq!(prompts(&many, "hi").len(), MAX_PROMPTS);
        assert_eq!(prompts(&json!({}), "hi"), ["hi"]);
    }

    #[test]
    fn a_settled_task_shows_the_behaviours_of_its_state_and_artifacts() {
        let names = |v: Value| shown_by(&v, "t").into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        let done = json!({"task": {"id": "1", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"parts": [{"text": "a"}, {"data": {"k": 1}}]}]}});
        assert_eq!(names(done), ["tck-artifact-data", "tck-artifact-text", "tck-complete-task"]);
        assert_eq!(
            names(json!({"task": {"id": "1", "status": {"state": "TASK_STATE_REJECTED"}}})),
            ["tck-reject-task"]
        );
        assert_eq!(names(json!({"message": {"messageId": "m"}})), ["tck-message-response"]);
        // Input required needs its follow-up tried; a running task needs watching.
        assert!(names(json!({"task": {"id": "1", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}})).is_empty());
        assert!(names(json!({"task": {"id": "1", "status": {"state": "TASK_STATE_WORKING"}}})).is_empty());
    }
}

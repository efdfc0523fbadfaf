//! The probes of the `signatures` and `security` profiles, for what data cannot say: verifying a
//! card's JWS signatures against the keys the user pins (§8.4), and comparing how an agent answers a
//! second caller about the first caller's task with how it answers about a task that does not exist
//! (§3.3.2, §13.1): code, message, data shape, HTTP status and timing.

use std::time::Duration;

use regex::Regex;
use serde_json::{Value, json};

use super::context::{CheckRun, StepFail, code_and_message, compact};
use super::evidence::ToEvidence as _;
use super::framing;
use super::request::{apply_caller, cut_by_kit, normalize_params};
use crate::card::jcs;
use crate::card::jws::{self, Reading};
use crate::client::http::HttpRequest;
use crate::client::rpc::rpc_request;
use crate::report::{Failure, SkipReason};
use crate::sse::SseLimits;

/// Which card a signature probe reads.
fn which_card(params: &Value) -> &str {
    params.get("card").and_then(Value::as_str).unwrap_or("public")
}

/// True when the probe needs the JSON-RPC interface.
pub fn uses_interface(probe: &str, params: &Value) -> bool {
    probe != "card_signatures" || which_card(params) == "extended"
}

/// The card to grade, parsed strictly from the bytes the agent sent.
async fn fetch_card(run: &mut CheckRun<'_>, which: &str) -> Result<Value, StepFail> {
    if which == "public" {
        let x = run.ctx.discovery.exchange.clone();
        run.keep(x.to_evidence(Some("card"), &run.ctx.redactor));
        return jcs::parse_strict_bytes(&x.body).map_err(|e| {
            StepFail::violation("card", format!("the card has no canonical form, so no signature can hold: {e}"))
        });
    }
    let req = rpc_request(&run.ctx.rpc_url, &json!("xcard"), "GetExtendedAgentCard", None);
    let x = run.exchange("xcard", req).await?;
    run.keep(x.to_evidence(Some("xcard"), &run.ctx.redactor));
    if x.truncated {
        return Err(cut_by_kit("xcard", run.ctx.client.config().max_body_bytes));
    }
    let got = jcs::parse_strict_bytes(&x.body)
        .map_err(|e| StepFail::violation("xcard", format!("the answer has no canonical form: {e}")))?;
    match got.get("result") {
        Some(card) if card.is_object() => Ok(card.clone()),
        _ => Err(StepFail::Prerequisite {
            causes: vec!["CARD-EXT-001".into()],
            failure: Box::new(StepFail::violation(
                "xcard",
                format!("GetExtendedAgentCard returned no card: {}", compact(&got)),
            )),
        }),
    }
}

/// `card_signatures` (§8.4): `params.card` (`public` or `extended`) and `params.grade`:
/// - `header`: every protected header decodes and has `alg` and `kid` (§8.4.2);
/// - `typ`: every protected header says `typ: JOSE` (§8.4.2 SHOULD);
/// - `verify`: every signature by a pinned key verifies over the §8.4.1 payload, and one does;
/// - `exclusion` / `presence`: a failed signature is blamed on `signatures` covered (rule 3) / on
///   field presence (rule 1), else the check defers to CARD-SIGN-001.
pub async fn card_signatures(run: &mut CheckRun<'_>, params: &Value) -> Result<(), StepFail> {
    let which = which_card(params);
    let grade = params.get("grade").and_then(Value::as_str).unwrap_or("verify");
    let step = if which == "public" { "card" } else { "xcard" };
    let card = fetch_card(run, which).await?;
    let keys = run.ctx.trust_keys.clone();
    let verdict = jws::verify(&card, &keys);
    let kids: Vec<String> =
        verdict.signatures.iter().map(|c| c.kid().map(|k| format!("{k:?}")).unwrap_or("none".into())).collect();
    match grade {
        "header" | "typ" if !verdict.is_signed() => {
            return Err(StepFail::Skip(SkipReason::CapabilityNotDeclared, format!("the {which} card is not signed")));
        }
        "header" => {
            for c in &verdict.signatures {
                let problem = match &c.header {
                    None => match &c.outcome {
                        jws::Outcome::Malformed { reason } => Some(reason.clone()),
                        _ => None,
                    },
                    Some(h) => jws::header_problems(h).into_iter().next(),
                };
                if let Some(p) = problem {
                    return Err(StepFail::violation(step, format!("signature {}: {p}", c.index)));
                }
            }
            return Ok(());
        }
        "typ" => {
            for c in &verdict.signatures {
                let typ = c.header.as_ref().and_then(|h| h.get("typ")).cloned();
                if typ != Some(json!("JOSE")) {
                    return Err(StepFail::Violation(Failure {
                        message: format!(
                            "signature {}: the protected header's `typ` is not \"JOSE\" (§8.4.2 SHOULD)",
                            c.index
                        ),
                        step_id: Some(step.into()),
                        pointer: Some(format!("/signatures/{}/protected", c.index)),
                        expected: Some("\"typ\": \"JOSE\"".into()),
                        actual: Some(typ.map(|t| t.to_string()).unwrap_or_else(|| "absent".into())),
                    }));
                }
            }
            return Ok(());
        }
        _ => {}
    }
    if !verdict.is_signed() && keys.is_empty() {
        // Signing is optional (§8.4); with no key pinned nobody expects this card to be signed.
        return Err(StepFail::Skip(
            SkipReason::CapabilityNotDeclared,
            format!("the {which} card is not signed and no key is pinned (--trust-key)"),
        ));
    }
    if keys.is_empty() {
        return Err(StepFail::Skip(
            SkipReason::CredentialsNotSupplied,
            format!(
                "the {which} card is signed (kid {}); pin the agent's public key with --trust-key to verify it",
                kids.join(", ")
            ),
        ));
    }
    let failure = if !verdict.is_signed() {
        StepFail::violation(
            step,
            format!("the {which} card carries no signature, but --trust-key pins the key(s) it should be signed with"),
        )
    } else {
        let Some(reason) = verdict.reason() else {
            return Ok(());
        };
        StepFail::Violation(Failure {
            message: format!("the {which} card's signature does not hold: {reason}"),
            step_id: Some(step.into()),
            pointer: Some("/signatures".into()),
            expected: Some("every signature by a pinned key verifies over the §8.4.1 payload (RFC 8785, `signatures` excluded, field presence applied)".into()),
            actual: Some(verdict.signatures.iter().map(|c| c.describe()).collect::<Vec<_>>().join("\n")),
        })
    };
    let blamed = match grade {
        "exclusion" => verdict.reading() == Some(Reading::SignaturesIncluded),
        "presence" => verdict.reading().is_some_and(Reading::is_presence_defect),
        _ => true,
    };
    if blamed {
        Err(failure)
    } else {
        Err(StepFail::Prerequisite { causes: vec!["CARD-SIGN-001".into()], failure: Box::new(failure) })
    }
}

/// One JSON-RPC call of the isolation probe, as the second caller (or the first).
struct Call {
    status: u16,
    body: Value,
    elapsed: Duration,
}

async fn call(run: &mut CheckRun<'_>, step: &str, method: &str, params: Value, as_b: bool) -> Result<Call, StepFail> {
    let op = match method {
        "SendMessage" => "send_message",
        "CreateTaskPushNotificationConfig" => "create_push_config",
        _ => "",
    };
    let params = normalize_params(op, params, &run.ctx.tenant, &run.ctx.behaviors);
    let mut req: HttpRequest = rpc_request(&run.ctx.rpc_url, &json!(step), method, Some(params));
    if as_b {
        apply_caller(&run.ctx.callers, "b", &mut req).map_err(|(r, why)| StepFail::Skip(r, why))?;
    }
    if method == "SubscribeToTask" {
        let limits = SseLimits { total_timeout: run.ctx.patience, ..run.ctx.client.config().sse.clone() };
        let x = run.exchange_stream(step, req, &limits, Some(1)).await?;
        run.keep(x.to_evidence(Some(step), &run.ctx.redactor));
        if let (true, Some(why)) = (x.events.is_empty(), framing::cut_short(&x)) {
            return Err(StepFail::undecided(step, framing::cut_message(&x, why)));
        }
        let body = match x.events.first() {
            Some(e) => serde_json::from_str(&e.data).unwrap_or(Value::Null),
            None => serde_json::from_slice(&x.body).unwrap_or(Value::Null),
        };
        return Ok(Call { status: x.status, body, elapsed: x.elapsed });
    }
    let x = run.exchange(step, req).await?;
    run.keep(x.to_evidence(Some(step), &run.ctx.redactor));
    if x.truncated {
        return Err(cut_by_kit(step, run.ctx.client.config().max_body_bytes));
    }
    Ok(Call { status: x.status, body: x.json().unwrap_or(Value::Null), elapsed: x.elapsed })
}

/// The first caller's task (and, for the push methods, a push config on it).
async fn first_callers_task(run: &mut CheckRun<'_>, push: bool) -> Result<(String, Option<String>), StepFail> {
    let msg = json!({"message": {"role": "ROLE_USER", "parts": [{"text": run.ctx.prompt.clone()}]}, "configuration": {"returnImmediately": true}});
    let r = call(run, "a-send", "SendMessage", msg, false).await?;
    let setup = |cause: &str, why: String| StepFail::Prerequisite {
        causes: vec![cause.into()],
        failure: Box::new(StepFail::violation("a-send", why)),
    };
    let result = r.body.get("result").map(|x| run.read_send(x).unwrap_or_else(|| x.clone())).unwrap_or_default();
    if result.get("message").is_some() {
        return Err(StepFail::Skip(
            SkipReason::BehaviorNotAvailable,
            format!(
                "the agent answered {:?} with a Message, so there is no task to keep from another caller",
                run.ctx.prompt
            ),
        ));
    }
    let Some(task) = result.pointer("/task/id").and_then(Value::as_str).map(str::to_owned) else {
        return Err(setup("CORE-SEND-001", format!("SendMessage did not return a task: {}", compact(&r.body))));
    };
    if !push {
        return Ok((task, None));
    }
    // Nothing is delivered: a public name, which an agent guarding against SSRF accepts.
    let url = push_url();
    let r = call(run, "a-push", "CreateTaskPushNotificationConfig", json!({"taskId": task, "url": url}), false).await?;
    match r.body.pointer("/result/id").and_then(Value::as_str) {
        Some(id) => Ok((task, Some(id.to_owned()))),
        None => Err(StepFail::Prerequisite {
            causes: vec!["PUSH-CFG-001".into()],
            failure: Box::new(StepFail::violation(
                "a-push",
                format!("creating a push config failed: {}", compact(&r.body)),
            )),
        }),
    }
}

/// Params of `method` on `task` (with push config `config`).
fn params_for(method: &str, task: &str, config: &str, url: &str, prompt: &str) -> Value {
    match method {
        "SendMessage" => {
            json!({"message": {"role": "ROLE_USER", "taskId": task, "parts": [{"text": prompt}]}, "configuration": {"returnImmediately": true}})
        }
        "GetTaskPushNotificationConfig" | "DeleteTaskPushNotificationConfig" => json!({"taskId": task, "id": config}),
        "ListTaskPushNotificationConfigs" => json!({"taskId": task}),
        "CreateTaskPushNotificationConfig" => json!({"taskId": task, "url": url}),
        _ => json!({"id": task}),
    }
}

/// The error with the two ids, timestamps and request ids masked, for comparing two answers.
fn masked(v: &Value, ids: &[&str]) -> String {
    let mut s = v.to_string();
    for id in ids {
        if !id.is_empty() {
            s = s.replace(id, "<id>");
        }
    }
    let time = Regex::new(r"\d{4}-\d{2}-\d{2}T[0-9:.]+(Z|[+-]\d{2}:\d{2})?").expect("valid regex");
    time.replace_all(&s, "<time>").into_owned()
}

/// The structure of a JSON value: its keys and the types of its leaves.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(shape).collect()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => Value::Null,
    }
}

/// GetTask calls timed per kind (another caller's task, a missing one) by the timing grade.
const TIMED_PAIRS: usize = 12;
/// Which timing stands for what a kind costs without the load, fastest first: the third of
/// twelve, the low quartile.
const LOW_QUARTILE: usize = 2;
/// Which timing stands for a kind's usual call: the eighth of twelve, two thirds of the calls
/// being as fast or faster.
const USUAL: usize = 7;
/// How much slower than the other kind's typical call a kind's low quartile must be to tell them
/// apart.
const TIMING_GAP: Duration = Duration::from_millis(100);

/// The `rank`-th fastest of `v` (0 for the fastest).
fn nth_fastest(v: &[Duration], rank: usize) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v.get(rank.min(v.len().saturating_sub(1))).copied().unwrap_or_default()
}

/// How far one kind's low quartile lies above the other kind's usual call (zero when it does not):
/// how much slower even the faster calls of the slower kind are than two thirds of the other's.
/// Load on the machine or the agent only ever adds time, and more to some calls than to others:
/// it spreads each kind's timings, which lifts the usual call above the low quartile and so
/// narrows this gap. A leak adds its time to every call of its kind, so it shows in the low
/// quartile however loaded the moment. When load drowns everything, the gap opens only if one
/// kind's three fastest calls all come after eight of the other's: for calls interleaved as the
/// probe takes them, 1.8% per direction however the load falls (and the 100 ms must still show).
fn timing_gap(foreign: &[Duration], missing: &[Duration]) -> Duration {
    let up = nth_fastest(foreign, LOW_QUARTILE).saturating_sub(nth_fastest(missing, USUAL));
    let down = nth_fastest(missing, LOW_QUARTILE).saturating_sub(nth_fastest(foreign, USUAL));
    up.max(down)
}

/// The timing grade: GetTask of the first caller's task and of a missing one, as the second
/// caller, in pairs taken one right after the other, the order alternating from pair to pair, so
/// that the load of any moment weighs on both kinds alike. The two are told apart when even the
/// faster quarter of one kind's calls is more than 100 ms slower than two thirds of the other's
/// (see [`timing_gap`]).
async fn timing(run: &mut CheckRun<'_>, task: &str, missing: &str) -> Result<(), StepFail> {
    let (mut foreign, mut absent) = (Vec::new(), Vec::new());
    for i in 0..TIMED_PAIRS {
        let f_step = format!("b-foreign-{i}");
        let m_step = format!("b-missing-{i}");
        if i % 2 == 0 {
            foreign.push(call(run, &f_step, "GetTask", json!({"id": task}), true).await?.elapsed);
            absent.push(call(run, &m_step, "GetTask", json!({"id": missing}), true).await?.elapsed);
        } else {
            absent.push(call(run, &m_step, "GetTask", json!({"id": missing}), true).await?.elapsed);
            foreign.push(call(run, &f_step, "GetTask", json!({"id": task}), true).await?.elapsed);
        }
    }
    if timing_gap(&foreign, &absent) <= TIMING_GAP {
        return Ok(());
    }
    let ms = |v: &[Duration]| {
        let mut v = v.to_vec();
        v.sort();
        v.iter().map(|d| d.as_millis().to_string()).collect::<Vec<_>>().join(" ")
    };
    let q = |v: &[Duration], rank| nth_fastest(v, rank).as_millis();
    Err(StepFail::Violation(Failure {
        message: format!(
            "GetTask of another caller's task takes {} ms (low quartile; two thirds within {} ms), of a missing task {} ms (two thirds within {} ms), over {TIMED_PAIRS} calls each: the timing tells them apart",
            q(&foreign, LOW_QUARTILE),
            q(&foreign, USUAL),
            q(&absent, LOW_QUARTILE),
            q(&absent, USUAL),
        ),
        step_id: Some("timing".into()),
        pointer: None,
        expected: Some(
            "neither kind's low quartile more than 100 ms above two thirds of the other kind's calls".into(),
        ),
        actual: Some(format!("foreign (ms, sorted): {}; missing (ms, sorted): {}", ms(&foreign), ms(&absent))),
    }))
}

/// `tenant_isolation` (§3.3.2, §13.1): the second caller (`--header-b`) names the first caller's
/// task in each of `params.methods`, and must get what it gets for a task that does not exist:
/// -32001, the same message and data shape once the ids are masked, the same HTTP status. With
/// `params.grade: "timing"`, GetTask on both is timed instead (see [`timing`]).
pub async fn tenant_isolation(run: &mut CheckRun<'_>, params: &Value) -> Result<(), StepFail> {
    let methods: Vec<String> = params
        .get("methods")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_else(|| vec!["GetTask".into()]);
    let push = methods.iter().any(|m| m.contains("PushNotificationConfig"));
    let (task, config) = first_callers_task(run, push).await?;
    let config = config.unwrap_or_default();
    let missing = uuid::Uuid::new_v4().to_string();
    let url = push_url();
    let prompt = run.ctx.prompt.clone();
    if params.get("grade").and_then(Value::as_str) == Some("timing") {
        return timing(run, &task, &missing).await;
    }
    for method in &methods {
        let step = format!("b-{}", method.to_ascii_lowercase());
        let foreign =
            call(run, &format!("{step}-foreign"), method, params_for(method, &task, &config, &url, &prompt), true)
                .await?;
        let absent =
            call(run, &format!("{step}-missing"), method, params_for(method, &missing, &config, &url, &prompt), true)
                .await?;
        let fail = |message: String, expected: String, actual: String| {
            Err(StepFail::Violation(Failure {
                message,
                step_id: Some(format!("{step}-foreign")),
                pointer: Some("/error".into()),
                expected: Some(expected),
                actual: Some(actual),
            }))
        };
        let Some(ferr) = foreign.body.get("error") else {
            return fail(
                format!("{method} by a second caller on the first caller's task was served (HTTP {})", foreign.status),
                "TaskNotFoundError (-32001), as for a task that does not exist".into(),
                compact(&foreign.body),
            );
        };
        if ferr.get("code") != Some(&json!(-32001)) {
            return fail(
                format!(
                    "{method} on another caller's task answered code {} instead of TaskNotFoundError",
                    code_and_message(ferr)
                ),
                "-32001 (§3.3.2: not found, never forbidden)".into(),
                compact(ferr),
            );
        }
        let Some(aerr) = absent.body.get("error") else {
            return Err(StepFail::undecided(
                &format!("{step}-missing"),
                format!("{method} on a task that does not exist did not fail: {}", compact(&absent.body)),
            ));
        };
        let ids = [task.as_str(), missing.as_str()];
        let (fm, am) = (masked(&ferr["message"], &ids), masked(&aerr["message"], &ids));
        if fm != am || ferr.get("code") != aerr.get("code") {
            return fail(
                format!("{method}: the answer about another caller's task differs from the one about a missing task"),
                format!("as for a missing task: {} {am}", aerr.get("code").map(compact).unwrap_or_default()),
                format!("{} {fm}", ferr.get("code").map(compact).unwrap_or_default()),
            );
        }
        let (fd, ad) = (shape(&ferr["data"]), shape(&aerr["data"]));
        if fd != ad {
            return fail(
                format!(
                    "{method}: the error data about another caller's task has another shape than for a missing task"
                ),
                compact(&ad),
                compact(&fd),
            );
        }
        if foreign.status != absent.status {
            return fail(
                format!(
                    "{method}: HTTP {} for another caller's task, {} for a missing one",
                    foreign.status, absent.status
                ),
                format!("HTTP {}", absent.status),
                format!("HTTP {}", foreign.status),
            );
        }
    }
    Ok(())
}

/// A fresh webhook URL for a push config nothing is to be delivered to: example.com is reserved for
/// documentation (RFC 2606), resolves, and serves no webhook, and its name is public, so an agent
/// guarding against SSRF takes it.
pub(crate) fn push_url() -> String {
    format!("https://example.com/a2a-conform/webhook/{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|m| Duration::from_millis(*m)).collect()
    }

    #[test]
    fn a_leak_shows_through_load_and_load_alone_does_not() {
        // Measured in a kill-matrix run on two loaded cores: a mock that answers another caller's
        // task 400 ms late (FAULT-TENANT-SLOW), with its missing-task calls spread by the load.
        let slow = ms(&[601, 654, 671, 671, 682, 707, 731, 743, 761, 794, 953, 993]);
        let fast = ms(&[79, 101, 112, 144, 185, 216, 219, 228, 238, 317, 374, 528]);
        assert!(timing_gap(&slow, &fast) > TIMING_GAP);
        assert!(timing_gap(&fast, &slow) > TIMING_GAP, "a leak either way");
        // The same run, a clean mock: one kind's fastest calls luckier than the other's (the
        // fastest of each is 150 against 37 ms, which the fastest-of-seven rule called a leak).
        let a = ms(&[150, 155, 160, 170, 190, 260, 300, 420, 480, 600, 650, 737]);
        let b = ms(&[37, 60, 87, 100, 140, 170, 250, 300, 330, 350, 360, 369]);
        assert_eq!(timing_gap(&a, &b), Duration::ZERO);
        // A steady agent: 150 ms more for every call of one kind is a class of its own.
        let steady = ms(&[1000; 12]);
        let late: Vec<Duration> = steady.iter().map(|d| *d + Duration::from_millis(150)).collect();
        assert!(timing_gap(&late, &steady) > TIMING_GAP);
        assert!(timing_gap(&steady, &steady) <= TIMING_GAP);
    }
}

//! Differential diagnosis of the neutral SendMessage. When the message CORE-SEND-001 sends gets no
//! JSON-RPC success with a task or a message, nearly every other check would wait on that one
//! failure without the report saying why. Before they run, the kit sends the same request varied
//! one dimension at a time (the table [`VARIANTS`]), then all 0.3 dimensions together: a handful of
//! requests under one bound. What the agent accepts and refuses becomes one finding
//! (KIT-DIAG-001), and the variant that works becomes the run's workaround (`workaround.rs`).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::context::{Ctx, truncate};
use super::diagnosis::*;
use super::evidence::ToEvidence as _;
use super::request::normalize_params;
use super::workaround::{self, Spelling, Workaround, bare_kind};
use crate::client::http::HttpExchange;
use crate::client::rest::{envelope, rest_request};
use crate::client::rpc::rpc_request;
use crate::report::{CheckMeta, CheckResult, Evidence, Failure, Outcome, SkipReason};
use crate::suite::binding::Binding;

/// The check the diagnosis waits on when the interface cannot be used.
const INTERFACE: &str = "KIT-IFACE-001";
/// KIT-DIAG-001's result: a pass saying the neutral SendMessage succeeded, or the finding (an info
/// result, never scored: the failure it explains is CORE-SEND-001's) with every request as
/// evidence.
pub fn verdict(ctx: &Ctx, meta: &CheckMeta) -> CheckResult {
    let Some(d) = &ctx.diagnosis else {
        return match &ctx.interface_problem {
            Some(_) => CheckResult {
                depends_on: Some(INTERFACE.into()),
                ..CheckResult::skipped(
                    meta,
                    SkipReason::DependsOnFailed,
                    format!("{INTERFACE}: the interface cannot be used"),
                )
            },
            None => CheckResult::skipped(meta, SkipReason::Filtered, "the diagnosis did not run in this run"),
        };
    };
    let took = format!("{} request(s) in {} ms", d.attempts.len(), d.elapsed.as_millis());
    let evidence = d.attempts.iter().map(|a| a.evidence.clone()).collect();
    let duration_ms = d.elapsed.as_millis() as u64;
    if d.healthy() {
        return CheckResult {
            measurement: Some(format!("the neutral SendMessage got {}: no diagnosis was needed", d.neutral().words())),
            evidence,
            duration_ms,
            ..CheckResult::new(meta, Outcome::Pass)
        };
    }
    let failure = Failure {
        message: d.message(ctx.workaround.is_some()),
        step_id: None,
        pointer: None,
        expected: Some("a JSON-RPC success holding a SendMessageResponse with a task or a message".into()),
        actual: Some(ctx.redactor.redact(&d.lines())),
    };
    CheckResult { measurement: Some(took), evidence, duration_ms, ..CheckResult::violated(meta, ctx.strict, failure) }
}

/// The neutral SendMessage's params, as CORE-SEND-001 sends them: a user message with one text part
/// (`--prompt`) and a messageId, with the interface's tenant.
fn neutral_params(ctx: &Ctx) -> Value {
    let params = json!({"message": {"role": "ROLE_USER", "parts": [{"text": ctx.prompt}]}});
    normalize_params("send_message", params, ctx.primary_tenant(), &ctx.behaviors)
}

/// `params` with only the REQUIRED members of the message and no other param.
fn minimal(params: &Value) -> Value {
    let m = &params["message"];
    let parts: Vec<Value> = m["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p.get("text").map_or_else(|| p.clone(), |t| json!({"text": t})))
        .collect();
    json!({"message": {"messageId": m["messageId"], "role": m["role"], "parts": parts}})
}

/// Runs the diagnosis, within `bound` (at most [`BOUND`]): the neutral request, and when that
/// fails, the variants.
/// Each request waits at most `per_request` (the run's check timeout).
pub async fn run(ctx: &Ctx, bound: Duration, per_request: Duration) -> Diagnosis {
    let started = Instant::now();
    let deadline = started + bound.min(BOUND);
    let neutral = neutral_params(ctx);
    let first = attempt(ctx, None, neutral.clone(), deadline, per_request).await;
    // The variants are the request the agent just answered, varied: they get a few times the time
    // it took to answer it (at least 2 s), so an agent that goes silent costs seconds, not a
    // timeout per variant.
    let per_variant = per_request.min((started.elapsed() * 4).max(Duration::from_secs(2)));
    let mut d = Diagnosis {
        attempts: vec![first],
        not_sent: Vec::new(),
        chosen: None,
        workaround: None,
        elapsed: Duration::ZERO,
    };
    if d.neutral().works() {
        // Healthy, or a bare result to a request the agent accepts: no variant can say more. A bare
        // result is read as the SendMessageResponse holding it by every check but the shape's own,
        // so that the rest of what the agent does is graded.
        // Answers in the 0.3 enum spelling are read in their 1.0 names, and members named by their
        // proto names by their JSON names, by every check but the spelling's own, likewise.
        let bare = matches!(d.neutral(), Answer::Bare(_));
        let result = d.attempts[0].result.as_ref();
        let legacy_answers = result.is_some_and(workaround::shows_legacy_enums);
        let snake_answers = result.is_some_and(workaround::shows_snake_members);
        if bare || legacy_answers || snake_answers {
            d.workaround = Some(Workaround { spelling: Spelling::NONE, bare, legacy_answers, snake_answers });
        }
        d.elapsed = started.elapsed();
        return d;
    }
    if d.attempts[0].evidence.status.is_none() {
        // No answer at all (silence, a reset): no variant of the request's content can say why, and
        // each would wait out the same silence.
        d.not_sent.extend((0..VARIANTS.len()).map(|i| (i, "the agent gave the 1.0 request no answer at all")));
        d.elapsed = started.elapsed();
        return d;
    }
    for (i, v) in VARIANTS.iter().enumerate() {
        // Each variant is a message of its own: an agent may refuse a messageId it has seen.
        let mut params = neutral.clone();
        params["message"]["messageId"] = json!(uuid::Uuid::new_v4().to_string());
        if v.minimal {
            let trimmed = minimal(&params);
            if trimmed == params {
                d.not_sent.push((i, "the 1.0 request has only the REQUIRED fields already"));
                continue;
            }
            params = trimmed;
        }
        if v.spelling.method && !v.spelling.roles && ctx.primary == Some(Binding::HttpJson) {
            d.not_sent.push((i, "HTTP+JSON names the operation by its path: there is no method name to vary"));
            continue;
        }
        if Instant::now() >= deadline {
            d.not_sent.push((i, "past the diagnosis bound"));
            continue;
        }
        if d.attempts.last().is_some_and(|a| a.evidence.status.is_none()) {
            d.not_sent.push((i, "the agent stopped answering"));
            continue;
        }
        d.attempts.push(attempt(ctx, Some(i), params, deadline, per_variant).await);
    }
    // The minimal variant only tells; leaving out what the checks are about is no workaround.
    if let Some(a) = d.attempts.iter().find(|a| a.answer.works() && a.variant.is_some_and(|i| !VARIANTS[i].minimal)) {
        let mut spelling = a.variant.map_or(Spelling::NONE, |i| VARIANTS[i].spelling);
        // Over HTTP+JSON no method name is sent, so none is changed.
        spelling.method &= ctx.primary != Some(Binding::HttpJson);
        // No SendMessage variant can vary a task state; the agent's own answer can show them.
        spelling.states = spelling.roles && a.result.as_ref().is_some_and(workaround::shows_legacy_states);
        let legacy_answers = a.result.as_ref().is_some_and(workaround::shows_legacy_enums);
        let snake_answers = a.result.as_ref().is_some_and(workaround::shows_snake_members);
        let bare = matches!(a.answer, Answer::Bare(_));
        d.workaround = Some(Workaround { spelling, bare, legacy_answers, snake_answers });
        d.chosen = a.variant;
    }
    d.elapsed = started.elapsed();
    d
}

async fn attempt(
    ctx: &Ctx,
    variant: Option<usize>,
    params: Value,
    deadline: Instant,
    per_request: Duration,
) -> Attempt {
    let spelling = variant.map_or(Spelling::NONE, |i| VARIANTS[i].spelling);
    let id = json!(format!("kit-diag-{}", variant.map_or(0, |i| i + 1)));
    let step = format!("diagnosis {}", variant.map_or("1.0 request", |i| VARIANTS[i].label));
    let (binding, url, _) = ctx.primary_interface();
    // The same code that rewrites the other checks' requests under the workaround.
    let w = Workaround { spelling, bare: false, legacy_answers: false, snake_answers: false };
    let req = match binding {
        Binding::JsonRpc => {
            let mut req = rpc_request(url, &id, "SendMessage", Some(params));
            if !spelling.is_none() {
                w.rewrite(&mut req, url, false);
            }
            req
        }
        Binding::HttpJson => match rest_request(url, "SendMessage", &params) {
            Ok(mut req) => {
                if !spelling.is_none() {
                    w.rewrite_rest(&mut req, url, false);
                }
                req
            }
            Err(why) => {
                let evidence = Evidence { step_id: Some(step), ..Evidence::default() };
                return Attempt {
                    variant,
                    answer: Answer::Refused(format!("not sent ({why})")),
                    result: None,
                    evidence,
                };
            }
        },
    };
    let left = deadline.saturating_duration_since(Instant::now()).min(per_request);
    let sent = req.clone();
    let outcome = match tokio::time::timeout(left, ctx.exchange(&format!("KIT-DIAG-001 / {step}"), req)).await {
        Ok(x) => x,
        Err(_) => Err(format!("no answer within {} ms", left.as_millis())),
    };
    match outcome {
        Ok(x) => {
            let (answer, result) = classify(&x, binding);
            Attempt { variant, answer, result, evidence: x.to_evidence(Some(&step), &ctx.redactor) }
        }
        Err(why) => {
            let why = ctx.redactor.redact(&why);
            let evidence = Evidence {
                step_id: Some(step),
                method: sent.method.clone(),
                url: sent.url.clone(),
                request_body: sent.body.as_deref().map(|b| ctx.redactor.redact(&String::from_utf8_lossy(b))),
                ..Evidence::default()
            };
            Attempt { variant, answer: Answer::Refused(format!("no answer ({why})")), result: None, evidence }
        }
    }
}

/// What an answer is, for the diagnosis: a SendMessageResponse, a bare Task or Message, or a
/// refusal told the way a person would ("HTTP 500 (text/plain)", "JSON-RPC error -32602 ...").
fn classify(x: &HttpExchange, binding: Binding) -> (Answer, Option<Value>) {
    let ct = x.content_type().unwrap_or("no content type");
    let ct = ct.split(';').next().unwrap_or(ct).trim().to_owned();
    let parsed = serde_json::from_slice::<Value>(&x.body).ok();
    // An HTTP+JSON answer is read in the JSON-RPC shape, as the checks read it.
    let shaped = match binding {
        Binding::JsonRpc => parsed,
        Binding::HttpJson => envelope(x.status, parsed.as_ref()),
    };
    let Some(v) = shaped else {
        return (Answer::Refused(format!("HTTP {} ({ct})", x.status)), None);
    };
    if let Some(err) = v.get("error") {
        let code = match err.get("code") {
            Some(c) if !c.is_null() => c.to_string(),
            _ => "without an A2A error code".into(),
        };
        let msg =
            err.get("message").and_then(Value::as_str).map(|m| format!(" ({})", truncate(m, 80))).unwrap_or_default();
        let what = match binding {
            Binding::JsonRpc => "JSON-RPC error".to_owned(),
            Binding::HttpJson => format!("HTTP {} error", x.status),
        };
        return (Answer::Refused(format!("{what} {code}{msg}")), None);
    }
    let Some(result) = v.get("result") else {
        return (Answer::Refused(format!("HTTP {} with JSON that is no JSON-RPC response", x.status)), None);
    };
    if let Some(k) = bare_kind(result) {
        return (Answer::Bare(k), Some(result.clone()));
    }
    for k in ["task", "message"] {
        if result.get(k).is_some_and(Value::is_object) {
            return (Answer::Wrapped(k), Some(result.clone()));
        }
    }
    (Answer::Refused("a result that is neither a task nor a message".into()), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::workaround::Version;

    fn attempt(variant: Option<usize>, answer: Answer) -> Attempt {
        Attempt { variant, answer, result: None, evidence: Evidence::default() }
    }

    fn refused(how: &str) -> Answer {
        Answer::Refused(how.into())
    }

    #[test]
    fn the_variant_table_varies_one_dimension_then_all() {
        let one =
            |s: &Spelling| [s.roles, s.kinds, s.method, s.version != Version::Current].iter().filter(|x| **x).count();
        let (last, singles) = VARIANTS.split_last().unwrap();
        assert!(singles.iter().all(|v| one(&v.spelling) + usize::from(v.minimal) == 1));
        assert_eq!(last.spelling, ALL_LEGACY);
    }

    #[test]
    fn the_finding_names_what_works_and_what_does_not() {
        let crash = refused("HTTP 500 (text/plain)");
        let d = Diagnosis {
            attempts: vec![
                attempt(None, crash.clone()),
                attempt(Some(0), Answer::Bare("task")),
                attempt(Some(1), crash.clone()),
                attempt(Some(2), refused("JSON-RPC error -32601 (\"Method not found\")")),
                attempt(Some(6), Answer::Bare("task")),
            ],
            not_sent: vec![(5, "the 1.0 request has only the REQUIRED fields already")],
            chosen: Some(0),
            workaround: Some(Workaround {
                spelling: VARIANTS[0].spelling,
                bare: true,
                legacy_answers: false,
                snake_answers: false,
            }),
            elapsed: Duration::ZERO,
        };
        let m = d.message(true);
        assert!(
            m.starts_with(
                "SendMessage answers HTTP 500 (text/plain) to role ROLE_USER and succeeds with role user: the agent \
                 expects the 0.3 enum spelling (§5.5 requires ROLE_USER); it answers with a bare Task"
            ),
            "{m}"
        );
        assert!(m.contains("Also accepted: every 0.3 spelling together."), "{m}");
        assert!(m.contains("Refused like the 1.0 request: the 0.3 kind discriminators."), "{m}");
        assert!(m.contains("Refused otherwise: the 0.3 method message/send (JSON-RPC error -32601"), "{m}");
        assert!(m.contains("workaround: role sent in its 0.3 spelling"), "{m}");
        assert!(d.message(false).contains("--no-workaround"));
        assert!(d.lines().contains("only the REQUIRED fields: not sent"));
    }

    #[test]
    fn refused_the_same_way_has_no_workaround() {
        let crash = refused("HTTP 500 (text/plain)");
        let d = Diagnosis {
            attempts: (0..7usize).map(|i| attempt(i.checked_sub(1), crash.clone())).collect(),
            not_sent: Vec::new(),
            chosen: None,
            workaround: None,
            elapsed: Duration::ZERO,
        };
        assert!(d.message(true).contains("every variant was refused the same way: HTTP 500 (text/plain)"));
        assert!(d.workaround.is_none());
    }
}

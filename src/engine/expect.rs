//! Grading one answer against a step's expectations: results, errors and streams, as ACTS
//! assertions on raw JSON; named and collection assertions over earlier answers.

use serde_json::{Map, Value, json};

use super::context::{CheckRun, StepFail, code_and_message, compact, truncate};
use super::framing;
use super::liveness::{self, Liveness};
use super::request::{Answer, binding_of, operation};
use super::states::{is_terminal, state_of};
use crate::client::http::{HttpExchange, StreamExchange};
use crate::report::errors;
use crate::report::{Failure, SkipReason, WANTED_ERROR, WANTED_RESULT, WANTED_STREAM};

/// What a held-back stream's failure expected: the runner tries such a stream once more.
pub(crate) const HELD_BACK: &str = "updates sent while the task runs";
use crate::sse::SseError;
use crate::suite::assert;
use crate::suite::binding::Binding;
use crate::suite::model::{Expect, ExpectError, ExpectRefused, NamedAssertion, Step};
use crate::suite::paths;
use crate::suite::schema;

/// Checks one answer against the step's expectations and returns the assertion root.
pub(crate) fn evaluate(run: &mut CheckRun<'_>, step: &Step, answer: &Answer) -> Result<Option<Value>, StepFail> {
    if let Some(r) = &step.expect_refused {
        return refused(step, answer, r);
    }
    let is_raw = step.raw.is_some();
    let op = step.operation.as_deref().unwrap_or("");
    match answer {
        Answer::Single(x) => {
            if let Some(exp) = &step.expect {
                if let Some(status) = &exp.status {
                    check_at(&step.id, "HTTP status", Some(&json!(x.status)), status, "")?;
                }
                check_headers(&step.id, x, exp)?;
            }
            let body = if x.body.is_empty() && is_raw { None } else { Some(x.json()) };
            if is_raw || op == "get_agent_card" {
                let root = match body {
                    Some(Ok(v)) => Some(v),
                    Some(Err(e))
                        if step.expect.as_ref().is_some_and(|e| e.body.is_some()) || step.expect_error.is_some() =>
                    {
                        let wanted = if step.expect_error.is_some() { WANTED_ERROR } else { "a JSON body" };
                        return Err(not_jsonrpc(&step.id, format!("the body is not JSON: {e}"), wanted, x));
                    }
                    _ => None,
                };
                if op == "get_agent_card" {
                    if !(200..300).contains(&x.status) {
                        return Err(StepFail::violation(&step.id, format!("the card URL answered HTTP {}", x.status)));
                    }
                    if let Some(card) = &root {
                        run.wire_check(&step.id, "AgentCard", card);
                    }
                }
                if let Some(ee) = &step.expect_error {
                    let err = root.as_ref().and_then(|r| r.get("error")).ok_or_else(|| {
                        let got = root.as_ref().map_or_else(|| http_answer(x.status, x.content_type()), compact);
                        StepFail::Violation(Failure {
                            message: "expected a JSON-RPC error object, got none".into(),
                            step_id: Some(step.id.clone()),
                            pointer: Some("/error".into()),
                            expected: Some(WANTED_ERROR.into()),
                            actual: Some(got),
                        })
                    })?;
                    check_error(&step.id, x.status, err, &rendered_error(run, &step.id, ee)?)?;
                }
                if let Some(exp) = &step.expect {
                    expect_body(run, &step.id, root.as_ref(), exp)?;
                }
                return Ok(root);
            }
            let wanted = if step.expect_error.is_some() { WANTED_ERROR } else { WANTED_RESULT };
            let v = match body {
                Some(Ok(v)) => v,
                Some(Err(e)) => {
                    return Err(not_jsonrpc(&step.id, format!("the answer is not JSON-RPC: {e}"), wanted, x));
                }
                None => return Err(not_jsonrpc(&step.id, "empty answer".into(), wanted, x)),
            };
            if let Some(ee) = &step.expect_error {
                if let (Some(result), Some(want)) = (v.get("result"), &ee.or_result) {
                    let want = run.render(&step.id, want)?;
                    check_at(&step.id, "result (accepted instead of the error)", Some(result), &want, "/result")?;
                    return Ok(Some(result.clone()));
                }
                let Some(err) = v.get("error") else {
                    return Err(StepFail::Violation(Failure {
                        message: format!("expected an error, got a result (HTTP {})", x.status),
                        step_id: Some(step.id.clone()),
                        pointer: Some("/result".into()),
                        expected: Some(describe_error(ee)),
                        actual: Some(compact(v.get("result").unwrap_or(&v))),
                    }));
                };
                check_error(&step.id, x.status, err, &rendered_error(run, &step.id, ee)?)?;
                return Ok(Some(err.clone()));
            }
            if let Some(err) = v.get("error") {
                return Err(StepFail::Violation(Failure {
                    message: format!("expected a result, got JSON-RPC error {}", code_and_message(err)),
                    step_id: Some(step.id.clone()),
                    pointer: Some("/error".into()),
                    expected: Some("a result".into()),
                    actual: Some(compact(err)),
                }));
            }
            let Some(result) = v.get("result").cloned() else {
                return Err(StepFail::Violation(Failure {
                    message: "the answer has neither `result` nor `error`".into(),
                    step_id: Some(step.id.clone()),
                    pointer: Some(String::new()),
                    expected: Some(wanted.into()),
                    actual: Some(compact(&v)),
                }));
            };
            // Under a workaround that reads bare SendMessage results (or a wrapped Task, or a bare
            // list of configs), a check that is not about that shape judges, and validates, what
            // the 1.0 shape holds: the shape is its owners' finding, not every reader's.
            let shaped = run.read_result(op, &result);
            if let Some((_, def, _)) = operation(op)
                && !def.is_empty()
            {
                run.wire_check(&step.id, def, shaped.as_ref().unwrap_or(&result));
            }
            if let Some(exp) = &step.expect {
                let mut graded = shaped.unwrap_or_else(|| result.clone());
                run.read_spellings(&mut graded);
                expect_body(run, &step.id, Some(&graded), exp)?;
            }
            Ok(Some(result))
        }
        Answer::Stream(x) => evaluate_stream(run, step, x),
    }
}

/// ext `expect_refused` (§7.4, §3.3.2): the agent refused the request for its credentials. Nothing
/// may come back as a result; the refusal is HTTP 401 or 403 (whatever the body) or a JSON-RPC
/// error; with `challenge`, HTTP 401 with a `WWW-Authenticate` header.
fn refused(step: &Step, answer: &Answer, r: &ExpectRefused) -> Result<Option<Value>, StepFail> {
    let (status, www, body): (u16, Option<&str>, Option<Value>) = match answer {
        Answer::Single(x) => (x.status, x.header("www-authenticate"), x.json().ok()),
        Answer::Stream(x) => {
            let served = x
                .events
                .iter()
                .find_map(|e| serde_json::from_str::<Value>(&e.data).ok().filter(|v| v.get("result").is_some()));
            let body = served.or_else(|| serde_json::from_slice::<Value>(&x.body).ok());
            (x.status, x.header("www-authenticate"), body)
        }
    };
    if let Some(result) = body.as_ref().and_then(|b| b.get("result")) {
        return Err(StepFail::Violation(Failure {
            message: format!("the request was served without valid credentials (HTTP {status} with a result)"),
            step_id: Some(step.id.clone()),
            pointer: Some("/result".into()),
            expected: Some("a refusal: HTTP 401 or 403, or a JSON-RPC error".into()),
            actual: Some(compact(result)),
        }));
    }
    let error = body.as_ref().and_then(|b| b.get("error")).cloned();
    // -32002..-32009 say the request was processed and failed on its merits, not refused.
    if let Some(code) = error.as_ref().and_then(|e| e.get("code")).and_then(Value::as_i64)
        && (-32009..=-32002).contains(&code)
        && !matches!(status, 401 | 403)
    {
        return Err(StepFail::Violation(Failure {
            message: format!(
                "the request was processed without valid credentials: it failed with {} on its merits",
                error.as_ref().map(code_and_message).unwrap_or_default()
            ),
            step_id: Some(step.id.clone()),
            pointer: Some("/error/code".into()),
            expected: Some("a refusal of the credentials: HTTP 401 or 403, or an authentication error".into()),
            actual: Some(error.as_ref().map(compact).unwrap_or_default()),
        }));
    }
    if !(matches!(status, 401 | 403) || error.is_some()) {
        return Err(StepFail::Violation(Failure {
            message: format!("HTTP {status} without a JSON-RPC error is not a refusal of the credentials"),
            step_id: Some(step.id.clone()),
            pointer: None,
            expected: Some("HTTP 401 or 403, or a JSON-RPC error".into()),
            actual: Some(body.as_ref().map(compact).unwrap_or_else(|| format!("HTTP {status}"))),
        }));
    }
    if r.challenge == Some(true) && (status != 401 || www.is_none()) {
        return Err(StepFail::Violation(Failure {
            message: "the refusal carries no authentication challenge (§7.4 SHOULD: HTTP 401 with WWW-Authenticate)"
                .into(),
            step_id: Some(step.id.clone()),
            pointer: None,
            expected: Some("HTTP 401 with a WWW-Authenticate header naming the scheme".into()),
            actual: Some(format!(
                "HTTP {status}, WWW-Authenticate {}",
                www.map(|w| format!("{w:?}")).unwrap_or_else(|| "absent".into())
            )),
        }));
    }
    Ok(error)
}

fn check_headers(step: &str, x: &HttpExchange, exp: &Expect) -> Result<(), StepFail> {
    for (name, want) in &exp.headers {
        let have = x.header(name).map(|v| json!(v));
        check_at(step, &format!("header {name}"), have.as_ref(), want, "")?;
    }
    Ok(())
}

fn expect_body(run: &CheckRun<'_>, step: &str, root: Option<&Value>, exp: &Expect) -> Result<(), StepFail> {
    if let Some(body) = &exp.body {
        let body = run.render(step, body)?;
        check_at(step, "body", root, &body, "")?;
    }
    if let Some(def) = &exp.schema {
        let v = schema::violations(def, root.unwrap_or(&Value::Null));
        if let Some((pointer, message)) = v.first() {
            return Err(StepFail::Violation(Failure {
                message: format!("does not validate as {def}: {message}"),
                step_id: Some(step.into()),
                pointer: Some(pointer.clone()),
                expected: Some(format!("a valid {def}")),
                actual: root.map(compact),
            }));
        }
    }
    Ok(())
}

/// Most further mismatches a finding names after its first.
const MAX_ALSO: usize = 4;

fn check_at(step: &str, what: &str, actual: Option<&Value>, expected: &Value, pointer: &str) -> Result<(), StepFail> {
    let all = assert::check(actual, expected, pointer);
    let Some(m) = all.first() else { return Ok(()) };
    let mut fail = StepFail::from_mismatch(step, what, m);
    // Every member the answer gets wrong is named: an agent that lacks two REQUIRED members
    // learns of both from one finding.
    if let (StepFail::Violation(f), [_, rest @ ..]) = (&mut fail, all.as_slice())
        && !rest.is_empty()
    {
        let place = |p: &str| if p.is_empty() { "(root)".to_owned() } else { p.to_owned() };
        let mut also: Vec<String> =
            rest.iter().take(MAX_ALSO).map(|m| format!("{} at {}", m.message, place(&m.pointer))).collect();
        if rest.len() > MAX_ALSO {
            also.push(format!("{} more", rest.len() - MAX_ALSO));
        }
        f.message = format!("{}; also {}", f.message, also.join("; "));
    }
    Err(fail)
}

/// [`check_at`] on an error's code: a wrong code is told with the agent's message next to it.
fn check_code(step: &str, what: &str, err: &Value, expected: &Value) -> Result<(), StepFail> {
    match assert::check(err.get("code"), expected, "/error/code").first() {
        None => Ok(()),
        Some(m) => {
            let mut fail = StepFail::from_mismatch(step, what, m);
            if let StepFail::Violation(f) = &mut fail {
                f.message = format!("{what}: expected {}, got {} at /error/code", m.expected, code_and_message(err));
            }
            Err(fail)
        }
    }
}

/// `HTTP 500 text/plain`: what came back where JSON-RPC was due.
fn http_answer(status: u16, content_type: Option<&str>) -> String {
    format!("HTTP {status} {}", content_type.unwrap_or("without a content type"))
}

/// A violation by an answer that is not JSON-RPC: `expected` says what kind of answer was due,
/// `actual` what came (the kind of answer is part of a root cause).
fn not_jsonrpc(step: &str, message: String, wanted: &str, x: &HttpExchange) -> StepFail {
    StepFail::Violation(Failure {
        message,
        step_id: Some(step.into()),
        pointer: None,
        expected: Some(wanted.into()),
        actual: Some(http_answer(x.status, x.content_type())),
    })
}

/// The code the A2A spec assigns to an abstract error name (not the ACTS draft table where the two
/// differ, digest §14 item 10).
pub fn error_code(error_type: &str) -> Option<i64> {
    // Older names the ACTS draft and the 0.3 spec use for errors 1.0 renamed or merged.
    match error_type.trim_end_matches("Error") {
        "StreamingNotSupported" | "ExtendedCardNotSupported" => Some(-32004),
        "AuthenticatedExtendedCardNotConfigured" => Some(-32007),
        "Parse" => Some(-32700),
        _ => errors::error_code(error_type),
    }
}

/// The ACTS corpus writes error names where a code is meant (`code: TaskNotFoundError`,
/// `one_of: [TaskNotFoundError, ...]`); known names become the spec's codes, anything else stays.
fn codes_for_names(v: &Value) -> Value {
    match v {
        Value::String(s) => error_code(s).map(|c| json!(c)).unwrap_or_else(|| v.clone()),
        Value::Array(a) => Value::Array(a.iter().map(codes_for_names).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), codes_for_names(v))).collect()),
        other => other.clone(),
    }
}

fn describe_error(ee: &ExpectError) -> String {
    match (&ee.error_type, &ee.code) {
        (Some(t), _) => format!("{t} ({})", error_code(t).map(|c| c.to_string()).unwrap_or_else(|| "?".into())),
        (None, Some(c)) => format!("an error with code {}", compact(c)),
        _ => "an error".into(),
    }
}

/// `ee` with its `{{…}}` rendered: an error compared with one an earlier step captured.
fn rendered_error(run: &CheckRun<'_>, step: &str, ee: &ExpectError) -> Result<ExpectError, StepFail> {
    let v = serde_json::to_value(ee).map_err(|e| StepFail::undecided(step, format!("expect_error: {e}")))?;
    serde_json::from_value(run.render(step, &v)?).map_err(|e| StepFail::undecided(step, format!("expect_error: {e}")))
}

fn check_error(step: &str, status: u16, err: &Value, ee: &ExpectError) -> Result<(), StepFail> {
    if let Some(t) = &ee.error_type {
        let code = error_code(t).ok_or_else(|| StepFail::undecided(step, format!("unknown error_type {t:?}")))?;
        check_code(step, &format!("error code for {t}"), err, &json!(code))?;
    }
    if let Some(c) = &ee.code {
        check_code(step, "error code", err, &codes_for_names(c))?;
    }
    if let Some(m) = &ee.message {
        check_at(step, "error message", err.get("message"), m, "/error/message")?;
    }
    if let Some(d) = &ee.details {
        check_at(step, "error data", err.get("data"), d, "/error/data")?;
    }
    if let Some(s) = &ee.status {
        check_at(step, "HTTP status", Some(&json!(status)), s, "")?;
    }
    Ok(())
}

/// ACTS writes event kinds in snake_case (`status_update`); the wire uses camelCase, and ACTS uses
/// `one_of` over alternative shapes where the DSL means `any_of`.
fn normalize_event_assertion(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, val) in m {
                let key = match k.as_str() {
                    "status_update" => "statusUpdate",
                    "artifact_update" => "artifactUpdate",
                    other => other,
                };
                let val = if (k == "one_of" || k == "any_of")
                    && val.as_array().is_some_and(|a| a.iter().all(Value::is_object))
                {
                    let items: Vec<Value> =
                        val.as_array().into_iter().flatten().map(normalize_event_assertion).collect();
                    out.insert("any_of".into(), Value::Array(items));
                    continue;
                } else {
                    val.clone()
                };
                out.insert(key.to_owned(), val);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn evaluate_stream(run: &mut CheckRun<'_>, step: &Step, x: &StreamExchange) -> Result<Option<Value>, StepFail> {
    let sid = step.id.as_str();
    run.stream_was_sse = x.is_sse();
    if !x.is_sse() {
        let body: Result<Value, String> = serde_json::from_slice(&x.body).map_err(|e| e.to_string());
        let fail = |message: String, wanted: &str| {
            StepFail::Violation(Failure {
                message,
                step_id: Some(sid.into()),
                pointer: None,
                expected: Some(wanted.into()),
                actual: Some(http_answer(x.status, x.content_type())),
            })
        };
        if let Some(ee) = &step.expect_error {
            let v = body.map_err(|e| fail(format!("expected a JSON-RPC error, got non-JSON: {e}"), WANTED_ERROR))?;
            let err = v.get("error").ok_or_else(|| fail("expected a JSON-RPC error object".into(), WANTED_ERROR))?;
            check_error(sid, x.status, err, &rendered_error(run, sid, ee)?)?;
            return Ok(Some(err.clone()));
        }
        return Err(match body.ok().and_then(|v| v.get("error").cloned()) {
            // An error where a stream was due is told as the error it is.
            Some(e) => StepFail::violation(
                sid,
                format!(
                    "expected an SSE stream (text/event-stream), got a JSON-RPC error instead: {}",
                    code_and_message(&e)
                ),
            ),
            None => fail(
                format!(
                    "expected an SSE stream (text/event-stream), got content type {:?}",
                    x.content_type().unwrap_or("none")
                ),
                WANTED_STREAM,
            ),
        });
    }
    if x.status != 200 {
        return Err(StepFail::violation(sid, format!("a stream must be answered with HTTP 200, got {}", x.status)));
    }
    let mut roots = Vec::new();
    for (i, ev) in x.events.iter().enumerate() {
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            StepFail::violation(sid, format!("event {i}: `data` is not JSON ({e}): {}", truncate(&ev.data, 120)))
        })?;
        // A JSON-RPC stream's events are JSON-RPC responses (§9.4.2); an HTTP+JSON stream's are
        // bare StreamResponses (§11.7), read in that shape when they came (REST-SSE-001 grades it).
        if binding_of(run, step) == Binding::JsonRpc && v.get("jsonrpc") != Some(&json!("2.0")) {
            if let Some(mut graded) = run.read_bare_event(&v) {
                run.wire_check(sid, "StreamResponse", &graded);
                run.read_spellings(&mut graded);
                roots.push(graded);
                continue;
            }
            return Err(StepFail::violation(sid, format!("event {i} is not a JSON-RPC 2.0 response: {}", compact(&v))));
        }
        if let Some(err) = v.get("error") {
            if let Some(ee) = &step.expect_error {
                check_error(sid, x.status, err, &rendered_error(run, sid, ee)?)?;
                return Ok(Some(err.clone()));
            }
            return Err(StepFail::violation(sid, format!("event {i} is a JSON-RPC error: {}", code_and_message(err))));
        }
        let Some(result) = v.get("result") else {
            return Err(StepFail::violation(sid, format!("event {i} has no `result`")));
        };
        run.wire_check(sid, "StreamResponse", result);
        let mut graded = result.clone();
        run.read_spellings(&mut graded);
        roots.push(graded);
    }
    let broken = framing::undispatched(x);
    run.stream_read_whole = broken.is_none();
    if let Some(ee) = &step.expect_error {
        // A stream that said nothing before the kit's bounds (its patience, its caps), before it
        // broke, or in a framing no reader can use, may still have had the error to send: those
        // bounds are not the agent's rule, and the framing is JSONRPC-SSE-001's finding.
        let unread = broken.clone().or_else(|| x.end.as_ref().err().map(ToString::to_string));
        // Data lines no blank line dispatched can still show, each read as JSON on its own, that
        // the agent sent results where the error was due: that much the framing does not hide.
        let undispatched_result = x.pending.as_ref().and_then(|p| p.data.as_deref()).is_some_and(|d| {
            d.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).any(|v| v.get("result").is_some())
        });
        if let (true, Some(why), false) = (roots.is_empty(), unread, undispatched_result) {
            return Err(StepFail::undecided(
                sid,
                format!(
                    "expected an error; the agent opened a stream and sent no event the kit could read in it ({why})"
                ),
            ));
        }
        return Err(StepFail::Violation(Failure {
            message: "expected an error, got a stream of results".into(),
            step_id: Some(sid.into()),
            pointer: None,
            expected: Some(describe_error(ee)),
            actual: Some(format!("a stream of {} result(s)", roots.len())),
        }));
    }
    if let Some(problem) = broken {
        return Err(StepFail::violation(sid, problem));
    }
    let es = step.expect_stream.clone().unwrap_or_default();
    // A stream the kit cut short (the stream breaker) is judged on the events that came: what
    // they decide is the verdict; what needs the rest of the stream is left undecided.
    let cut = framing::cut_short(x);
    let mut unseen: Option<&str> = None;
    if es.closes.unwrap_or(true)
        && let Err(e) = &x.end
    {
        let message = format!("the stream did not end cleanly after {} event(s): {e}", roots.len());
        // The kit's own bounds on a stream are its choice, not rules the agent broke.
        if matches!(
            e,
            SseError::EventTooLarge { .. } | SseError::StreamTooLarge { .. } | SseError::TooManyEvents { .. }
        ) {
            return Err(StepFail::undecided(sid, format!("{message} (a bound of the kit's reader, not of the spec)")));
        }
        match cut {
            Some(_) => {
                unseen.get_or_insert("whether the stream closes");
            }
            None => return Err(StepFail::violation(sid, message)),
        }
    }
    if let Some(min) = es.min_count
        && roots.len() < min
    {
        match cut {
            Some(_) => {
                unseen.get_or_insert("the events the check needs");
            }
            None => return Err(StepFail::violation(sid, format!("{} event(s), expected at least {min}", roots.len()))),
        }
    }
    if let Some(max) = es.max_count
        && roots.len() > max
    {
        return Err(StepFail::violation(sid, format!("{} event(s), expected at most {max}", roots.len())));
    }
    if es.ordering.as_deref() == Some("monotonic_state")
        && let Some(problem) = state_order_problem(&roots)
    {
        return Err(StepFail::violation(sid, problem));
    }
    if es.echo_request_id == Some(true) {
        let sent = x.request.body.as_deref().and_then(|b| serde_json::from_slice::<Value>(b).ok());
        let want = sent.as_ref().and_then(|v| v.get("id")).cloned().unwrap_or(Value::Null);
        for (i, ev) in x.events.iter().enumerate() {
            let got = serde_json::from_str::<Value>(&ev.data).ok().and_then(|v| v.get("id").cloned());
            if got.as_ref() != Some(&want) {
                return Err(StepFail::Violation(Failure {
                    message: format!("event {i} answers another request: its JSON-RPC id is not the request's"),
                    step_id: Some(sid.into()),
                    pointer: Some(format!("/{i}/id")),
                    expected: Some(compact(&want)),
                    actual: Some(got.as_ref().map(compact).unwrap_or_else(|| "<absent>".into())),
                }));
            }
        }
    }
    if es.live == Some(true) {
        match (cut, liveness::judge(&x.arrivals, &roots)) {
            (Some(_), _) => {
                unseen.get_or_insert("when the task's updates came, to its end");
            }
            (None, Liveness::Live) => {}
            (None, Liveness::HeldBack(why)) => {
                return Err(StepFail::Violation(Failure {
                    message: format!("the updates were held back to the end of the task: {why}"),
                    step_id: Some(sid.into()),
                    pointer: None,
                    expected: Some(HELD_BACK.into()),
                    actual: Some(why),
                }));
            }
            (None, Liveness::CannotTell(why)) => return Err(StepFail::Skip(SkipReason::BehaviorNotAvailable, why)),
        }
    }
    if es.unique_ids == Some(true) {
        // SSE ids are the kit's resume extension, not an A2A requirement: an agent that sends none
        // does not offer resumption, and there is nothing to grade.
        if cut.is_none() && !x.events.is_empty() && x.events.iter().all(|e| e.id.is_none()) {
            return Err(StepFail::Skip(
                SkipReason::BehaviorNotAvailable,
                "the agent's events carry no SSE id: it does not offer resumption".into(),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, ev) in x.events.iter().enumerate() {
            let Some(id) = &ev.id else {
                return Err(StepFail::violation(sid, format!("event {i} has no SSE `id:`")));
            };
            if !seen.insert(id.clone()) {
                return Err(StepFail::violation(sid, format!("event {i} repeats SSE id {id:?}")));
            }
        }
    }
    let stream_root = Value::Array(roots.clone());
    for (i, ea) in es.events.iter().enumerate() {
        let ea = run.render(sid, ea)?;
        let any = ea.get("match").and_then(Value::as_str) == Some("any_position");
        let index = ea.get("index").and_then(Value::as_u64).map(|n| n as usize).unwrap_or(i);
        let desc = ea.get("description").and_then(Value::as_str).unwrap_or("").to_owned();
        let mut a = normalize_event_assertion(&ea);
        if let Value::Object(m) = &mut a {
            for k in ["match", "index", "description"] {
                m.remove(k);
            }
        }
        let what = if desc.is_empty() { format!("events[{i}]") } else { format!("events[{i}] ({desc})") };
        if any {
            if !roots.iter().any(|r| assert::check(Some(r), &a, "").is_empty()) {
                if cut.is_some() {
                    unseen.get_or_insert("the events the check looks for");
                    continue;
                }
                return Err(StepFail::Violation(Failure {
                    message: format!("{what}: no event matches"),
                    step_id: Some(sid.into()),
                    pointer: None,
                    expected: Some(compact(&a)),
                    actual: Some(truncate(&compact(&stream_root), 600)),
                }));
            }
        } else if cut.is_some() && index >= roots.len() {
            unseen.get_or_insert("the events the check looks for");
        } else {
            check_at(sid, &what, roots.get(index), &a, &format!("/{index}"))?;
        }
    }
    if let Some(fe) = &es.final_event {
        if cut.is_some() {
            unseen.get_or_insert("the stream's final event");
        } else {
            let fe = normalize_event_assertion(&run.render(sid, fe)?);
            check_at(sid, "final event", roots.last(), &fe, &format!("/{}", roots.len().saturating_sub(1)))?;
        }
    }
    if let Some(each) = &es.each_event {
        let each = normalize_event_assertion(&run.render(sid, each)?);
        for (i, r) in roots.iter().enumerate() {
            check_at(sid, &format!("event {i}"), Some(r), &each, &format!("/{i}"))?;
        }
    }
    if let Some(seq) = &es.sequence {
        let seq = run.render(sid, seq)?;
        match (cut, assert::check(Some(&stream_root), &seq, "").first()) {
            (_, None) => {}
            // Which of the events it relates did not come is more than the events in hand say.
            (Some(_), Some(_)) => {
                unseen.get_or_insert("the rest of the events the check relates");
            }
            (None, Some(m)) => return Err(StepFail::from_mismatch(sid, "the stream's events", m)),
        }
    }
    if let Some(reason) = cut {
        // The streams that made the kit cut this one short may have shown what this one had no
        // time to: they are the same agent's streams, and this check owns their framing.
        if es.framing_from_run == Some(true)
            && let Some((origin, what)) = run.ctx.guard.framing_fault(&x.request.url)
        {
            return Err(StepFail::violation(
                sid,
                format!(
                    "the kit cut this stream short after {} event(s) ({reason}); another stream of the agent's, read by {origin}, shows the framing broken: {what}",
                    roots.len()
                ),
            ));
        }
        let rest = match unseen {
            Some(what) => format!("{what} did not come"),
            None => "the events that came meet the check; the rest were not seen".into(),
        };
        return Err(StepFail::undecided(sid, format!("{}: {rest}", framing::cut_message(x, reason))));
    }
    // Captures on a stream read from its first event (the task snapshot, or the message).
    Ok(Some(roots.first().cloned().unwrap_or(Value::Null)))
}

/// Evaluates a named or collection assertion (ACTS §5.5).
pub(crate) fn named_assertion(run: &CheckRun<'_>, step: &str, a: &NamedAssertion) -> Result<(), StepFail> {
    let src = a.source.trim().trim_start_matches("{{").trim_end_matches("}}").trim();
    let src = if src.contains('.') { src.to_owned() } else { format!("{src}.response") };
    let source = run.vars.lookup(&src).map_err(|e| StepFail::undecided(step, format!("assertion source: {e}")))?;
    let at = match &a.path {
        Some(p) => {
            paths::get(&source, p).map_err(|e| StepFail::undecided(step, format!("assertion path: {e}")))?.cloned()
        }
        None => Some(source.clone()),
    };
    let label = a.description.clone().or_else(|| a.id.clone()).unwrap_or_else(|| "assertion".into());
    if let Some(m) = &a.match_ {
        check_at(step, &label, at.as_ref(), &run.render(step, m)?, "")?;
    }
    let base = at.unwrap_or(Value::Null);
    for (kind, cm) in [("any", &a.any), ("all", &a.all), ("none", &a.none)] {
        let Some(cm) = cm else { continue };
        let expected = run.render(step, &cm.match_)?;
        let items =
            paths::select(&base, &cm.path).map_err(|e| StepFail::undecided(step, format!("{kind}.path: {e}")))?;
        let matching = items.iter().filter(|(_, v)| assert::check(Some(v), &expected, "").is_empty()).count();
        let ok = match kind {
            "any" => matching > 0,
            "all" => matching == items.len() && !items.is_empty(),
            _ => matching == 0,
        };
        if !ok {
            return Err(StepFail::Violation(Failure {
                message: format!(
                    "{label}: {kind} of {} element(s) at `{}` should match, {matching} did",
                    items.len(),
                    cm.path
                ),
                step_id: Some(step.into()),
                pointer: None,
                expected: Some(compact(&expected)),
                actual: Some(truncate(&compact(&base), 600)),
            }));
        }
    }
    Ok(())
}

/// What breaks `ordering: "monotonic_state"` in a stream's results: another state after a terminal
/// one, or a return to SUBMITTED. The same terminal state again is no change: §11.7 lets an agent
/// "optionally resend a final `Task` snapshot before closing" after the terminal status update.
fn state_order_problem(roots: &[Value]) -> Option<String> {
    let mut prev: Option<&str> = None;
    for (i, r) in roots.iter().enumerate() {
        let Some(s) = state_of(r) else { continue };
        if let Some(p) = prev {
            if is_terminal(p) && s != p {
                return Some(format!("event {i}: {s} after terminal state {p}"));
            }
            if s == "TASK_STATE_SUBMITTED" && p != "TASK_STATE_SUBMITTED" {
                return Some(format!("event {i}: back to SUBMITTED after {p}"));
            }
        }
        prev = Some(s);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_codes_win_over_the_acts_table() {
        assert_eq!(error_code("PushNotificationNotSupportedError"), Some(-32003));
        assert_eq!(error_code("VersionNotSupportedError"), Some(-32009));
        assert_eq!(error_code("StreamingNotSupportedError"), Some(-32004));
        assert_eq!(error_code("Nonsense"), None);
    }

    #[test]
    fn a_wrong_code_is_told_with_the_agents_message() {
        let ee = ExpectError { error_type: Some("TaskNotFoundError".into()), ..ExpectError::default() };
        let err = json!({"code": -32603, "message": "Internal error"});
        let Err(StepFail::Violation(f)) = check_error("get", 200, &err, &ee) else { panic!("a wrong code passed") };
        assert_eq!(
            f.message,
            "error code for TaskNotFoundError: expected -32001, got -32603 'Internal error' at /error/code"
        );
        assert_eq!((f.pointer.as_deref(), f.actual.as_deref()), (Some("/error/code"), Some("-32603")));
        assert!(check_error("get", 200, &json!({"code": -32001, "message": "x"}), &ee).is_ok());
    }

    #[test]
    fn acts_event_kinds_are_camel_cased() {
        let a = normalize_event_assertion(&json!({"one_of": [{"task": {}}, {"status_update": {"status": {}}}]}));
        assert_eq!(a, json!({"any_of": [{"task": {}}, {"statusUpdate": {"status": {}}}]}));
    }

    #[test]
    fn a_final_snapshot_may_repeat_the_terminal_state() {
        let task = |s: &str| json!({"task": {"status": {"state": s}}});
        let update = |s: &str| json!({"statusUpdate": {"status": {"state": s}}});
        let working = "TASK_STATE_WORKING";
        let done = "TASK_STATE_COMPLETED";
        // §11.7: a final Task snapshot after the terminal status update.
        assert_eq!(state_order_problem(&[task(working), update(done), task(done)]), None);
        assert_eq!(state_order_problem(&[task("TASK_STATE_SUBMITTED"), update(working), update(done)]), None);
        let regress = state_order_problem(&[task(working), update(done), update(working)]);
        assert_eq!(regress.as_deref(), Some("event 2: TASK_STATE_WORKING after terminal state TASK_STATE_COMPLETED"));
        let other = state_order_problem(&[task(working), update(done), task("TASK_STATE_FAILED")]);
        assert!(other.is_some_and(|m| m.contains("after terminal state")));
        let back = state_order_problem(&[task(working), update("TASK_STATE_SUBMITTED")]);
        assert_eq!(back.as_deref(), Some("event 1: back to SUBMITTED after TASK_STATE_WORKING"));
    }
}

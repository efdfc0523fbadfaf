//! Turning a step into an HTTP request: abstract operations into JSON-RPC methods, ACTS params into
//! 1.0 wire params, raw requests with generated hostile bodies, headers, and sending it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::context::{Callers, CheckRun, StepFail};
use super::evidence::{ToEvidence as _, read_reply};
use crate::client::http::{HttpExchange, HttpRequest, StreamExchange};
use crate::client::rest::{envelope, read_answer, rest_request, subscribe_by_get, unnamed_error};
use crate::client::rpc::rpc_request;
use crate::report::SkipReason;
use crate::sse::SseLimits;
use crate::suite::behaviors::Behaviors;
use crate::suite::binding::Binding;
use crate::suite::model::{ExpectStream, RawRequest, Step};

/// What one request produced.
pub(crate) enum Answer {
    Single(HttpExchange),
    /// An answer read as a stream (SSE or not).
    Stream(StreamExchange),
}

/// The JSON-RPC method, the schema definition of its result, and whether it streams.
pub(crate) fn operation(op: &str) -> Option<(&'static str, &'static str, bool)> {
    Some(match op {
        "send_message" => ("SendMessage", "SendMessageResponse", false),
        "send_streaming_message" => ("SendStreamingMessage", "StreamResponse", true),
        "get_task" => ("GetTask", "Task", false),
        "list_tasks" => ("ListTasks", "ListTasksResponse", false),
        "cancel_task" => ("CancelTask", "Task", false),
        "subscribe_to_task" => ("SubscribeToTask", "StreamResponse", true),
        // The ACTS corpus also spells these set_/get_/list_/delete_push_notification_config(s).
        "create_push_config" | "set_push_notification_config" => {
            ("CreateTaskPushNotificationConfig", "TaskPushNotificationConfig", false)
        }
        "get_push_config" | "get_push_notification_config" => {
            ("GetTaskPushNotificationConfig", "TaskPushNotificationConfig", false)
        }
        "list_push_configs" | "list_push_notification_configs" => {
            ("ListTaskPushNotificationConfigs", "ListTaskPushNotificationConfigsResponse", false)
        }
        "delete_push_config" | "delete_push_notification_config" => ("DeleteTaskPushNotificationConfig", "", false),
        "get_extended_agent_card" => ("GetExtendedAgentCard", "AgentCard", false),
        _ => return None,
    })
}

/// Turns ACTS abstract params into the 1.0 wire params (see suites/README.md); a message the suite
/// wrote as `tck-<behaviour> …` gets the text the user's behaviour map gives for it.
pub fn normalize_params(op: &str, params: Value, tenant: &str, behaviors: &Behaviors) -> Value {
    let op = match op {
        "set_push_notification_config" => "create_push_config",
        "get_push_notification_config" => "get_push_config",
        "delete_push_notification_config" => "delete_push_config",
        other => other,
    };
    let mut p = match params {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => return other,
    };
    if matches!(op, "send_message" | "send_streaming_message") {
        let moved: Vec<(String, Value)> =
            ["taskId", "contextId"].iter().filter_map(|k| p.remove(*k).map(|v| ((*k).to_owned(), v))).collect();
        if let Some(Value::Object(msg)) = p.get_mut("message") {
            for (k, v) in moved {
                msg.entry(k).or_insert(v);
            }
            for part in msg.get_mut("parts").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(Value::String(text)) = part.get_mut("text")
                    && let Some(mapped) = behaviors.rewrite(text)
                {
                    *text = mapped.to_owned();
                }
            }
            msg.entry("messageId").or_insert_with(|| json!(uuid::Uuid::new_v4().to_string()));
        }
    }
    if op == "create_push_config"
        && let Some(Value::Object(inner)) = p.remove("pushNotificationConfig")
    {
        for (k, v) in inner {
            p.entry(k).or_insert(v);
        }
    }
    if matches!(op, "get_push_config" | "delete_push_config") {
        for alias in ["pushNotificationConfigId", "configId"] {
            if let Some(v) = p.remove(alias) {
                p.entry("id").or_insert(v);
            }
        }
    }
    if !tenant.is_empty() {
        p.entry("tenant").or_insert_with(|| json!(tenant));
    }
    Value::Object(p)
}

/// Sets or (with `None`) removes headers, including the user's `--header`s for this request only.
fn apply_headers(req: &mut HttpRequest, extra: &[(String, Option<String>)]) {
    for (name, value) in extra {
        req.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        match value {
            Some(v) => req.headers.push((name.clone(), v.clone())),
            None => req.omit_user_headers.push(name.clone()),
        }
    }
}

fn rendered_headers(
    run: &CheckRun<'_>,
    step: &str,
    h: &BTreeMap<String, Option<String>>,
) -> Result<Vec<(String, Option<String>)>, StepFail> {
    h.iter()
        .map(|(k, v)| {
            let v = match v {
                Some(s) => Some(run.render_str(step, s)?),
                None => None,
            };
            Ok((k.clone(), v))
        })
        .collect()
}

fn stream_limits(run: &CheckRun<'_>, es: Option<&ExpectStream>) -> SseLimits {
    let mut l = run.ctx.client.config().sse.clone();
    // A suite's own timeout wins; otherwise the run's patience bounds how long a stream may take.
    let t = es.and_then(|e| e.timeout_ms).map(Duration::from_millis).unwrap_or(run.ctx.patience);
    l.total_timeout = t;
    l.idle_timeout = l.idle_timeout.min(t);
    l
}

/// How many events settle a stream that need not close (`closes: false`): enough for `min_count`
/// and for every event assertion made by position. Waiting longer would only spend the timeout on
/// a stream that stays open. Expectations on the whole stream (an event at any position, its
/// count, order, last or every event, ids) read on to its end or the timeout.
fn enough_events(es: Option<&ExpectStream>) -> Option<usize> {
    let es = es?;
    let whole_stream = es.max_count.is_some()
        || es.final_event.is_some()
        || es.each_event.is_some()
        || es.ordering.is_some()
        || es.unique_ids == Some(true)
        || es.echo_request_id == Some(true)
        || es.live == Some(true)
        || es.sequence.is_some();
    if es.closes != Some(false) || whole_stream {
        return None;
    }
    let mut n = es.min_count.unwrap_or(0);
    for (i, ea) in es.events.iter().enumerate() {
        if ea.get("match").and_then(Value::as_str) == Some("any_position") {
            return None;
        }
        let index = ea.get("index").map_or(Some(i as u64), Value::as_u64)?;
        n = n.max(usize::try_from(index).ok()?.saturating_add(1));
    }
    (n > 0).then_some(n)
}

/// A credential value of the same scheme as `v` that no agent issued.
pub(crate) fn wrong_credential(v: &str) -> String {
    let wrong = format!("kit-wrong-credential-{}", uuid::Uuid::new_v4().simple());
    match v.split_once(' ') {
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("basic") => {
            use base64::Engine as _;
            format!("{scheme} {}", base64::engine::general_purpose::STANDARD.encode(format!("{wrong}:{wrong}")))
        }
        Some((scheme, _)) if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') => {
            format!("{scheme} {wrong}")
        }
        _ => wrong,
    }
}

/// Makes `req` carry the credentials of `caller` (ext step `caller`): `a` (unchanged), `b` (the
/// second caller's headers instead of the first's credentials), `none` (the credential headers
/// left off) or `wrong` (each with a wrong value of its scheme). A caller the user gave no
/// credentials for cannot be played: the check skips.
pub(crate) fn apply_caller(callers: &Callers, caller: &str, req: &mut HttpRequest) -> Result<(), (SkipReason, String)> {
    let creds = &callers.credential_headers;
    match caller {
        "a" => Ok(()),
        "b" => {
            if callers.second.is_empty() {
                return Err((
                    SkipReason::CredentialsNotSupplied,
                    "needs a second caller's credentials (--header-b)".into(),
                ));
            }
            req.headers.retain(|(k, _)| !creds.iter().any(|c| c.eq_ignore_ascii_case(k)));
            req.omit_user_headers.extend(creds.iter().cloned());
            for (k, v) in &callers.second {
                req.headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
                req.headers.push((k.clone(), v.clone()));
            }
            Ok(())
        }
        "none" | "wrong" => {
            if creds.is_empty() {
                return Err((
                    SkipReason::CredentialsNotSupplied,
                    "none of the --header names carries a credential (Authorization, an API key, a token, a cookie)"
                        .into(),
                ));
            }
            req.headers.retain(|(k, _)| !creds.iter().any(|c| c.eq_ignore_ascii_case(k)));
            req.omit_user_headers.extend(creds.iter().cloned());
            if caller == "wrong" {
                for name in creds {
                    let original =
                        callers.values.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
                    req.headers.push((name.clone(), wrong_credential(original.unwrap_or(""))));
                }
            }
            Ok(())
        }
        other => Err((SkipReason::Filtered, format!("unknown caller {other:?} in the suite"))),
    }
}

/// The binding the step's operation goes over: its own, else its check's.
pub(crate) fn binding_of(run: &CheckRun<'_>, step: &Step) -> Binding {
    step.binding.as_deref().and_then(Binding::parse).unwrap_or(run.binding)
}

/// Builds and sends the step's request, keeping the exchange as evidence.
pub(crate) async fn send(run: &mut CheckRun<'_>, step: &Step) -> Result<Answer, StepFail> {
    let to_card = step.operation.as_deref() == Some("get_agent_card")
        || step.raw.as_ref().is_some_and(|r| r.path.starts_with("/.well-known/") || r.path.starts_with("http"));
    let rest = binding_of(run, step) == Binding::HttpJson && step.raw.is_none();
    // A raw request goes where its path says (checked once rendered, in `raw_request`).
    if !to_card && !rest && step.raw.is_none() && run.ctx.rpc_url.is_empty() {
        return Err(StepFail::undecided(&step.id, "the card offers no A2A 1.0 JSON-RPC interface to send this to"));
    }
    if !to_card && rest && run.ctx.rest_url.is_empty() {
        return Err(StepFail::undecided(&step.id, "the card offers no A2A 1.0 HTTP+JSON interface to send this to"));
    }
    // The A2A method an HTTP+JSON request calls, which its answer's evidence is told under.
    let mut rest_method = None;
    let (mut req, streaming) = if let Some(raw) = &step.raw {
        (raw_request(run, &step.id, raw)?, false)
    } else {
        let op = step
            .operation
            .as_deref()
            .ok_or_else(|| StepFail::undecided(&step.id, "a step needs `operation`, `raw` or `assertion`"))?;
        if op == "get_agent_card" {
            (HttpRequest::get(run.ctx.discovery.card_url.clone()), false)
        } else {
            let (method, _, streaming) =
                operation(op).ok_or_else(|| StepFail::undecided(&step.id, format!("unknown operation {op:?}")))?;
            let params = run.render(&step.id, step.params.as_ref().unwrap_or(&Value::Null))?;
            if rest {
                let params = normalize_params(op, params, &run.ctx.rest_tenant, &run.ctx.behaviors);
                let req = rest_request(&run.ctx.rest_url, method, &params)
                    .map_err(|why| StepFail::undecided(&step.id, why))?;
                rest_method = Some(method);
                (req, streaming)
            } else {
                let params = normalize_params(op, params, &run.ctx.tenant, &run.ctx.behaviors);
                let params = (op != "get_extended_agent_card" || params.as_object().is_some_and(|m| !m.is_empty()))
                    .then_some(params);
                let id = json!(uuid::Uuid::new_v4().simple().to_string());
                (rpc_request(&run.ctx.rpc_url, &id, method, params), streaming)
            }
        }
    };
    let extra = rendered_headers(run, &step.id, &step.headers)?;
    apply_headers(&mut req, &extra);
    if let Some(caller) = step.caller.as_deref() {
        apply_caller(&run.ctx.callers, caller, &mut req).map_err(|(reason, why)| StepFail::Skip(reason, why))?;
    }
    let own_version = sets_version(step, &req.url);
    if streaming {
        let limits = stream_limits(run, step.expect_stream.as_ref());
        let stop = enough_events(step.expect_stream.as_ref());
        let fallback = (rest && step.operation.as_deref() == Some("subscribe_to_task")).then(|| subscribe_by_get(&req));
        let mut x = run.exchange_stream_as(&step.id, req, &limits, stop, own_version).await?;
        if let Some(get) = fallback
            && verb_not_served(x.status, &x.body)
        {
            run.keep(x.to_evidence(Some(&step.id), &run.ctx.redactor));
            x = run.exchange_stream_as(&step.id, get, &limits, stop, own_version).await?;
        }
        run.keep(x.to_evidence(Some(&step.id), &run.ctx.redactor));
        if x.truncated {
            return Err(cut_by_kit(&step.id, run.ctx.client.config().max_body_bytes));
        }
        if rest && x.is_sse() {
            let wrapped = read_rest_stream(&mut x);
            let mut seen = run.ctx.rest_streams.lock().unwrap_or_else(|p| p.into_inner());
            seen.read += 1;
            if wrapped > 0 && seen.wrapped.len() < 5 {
                seen.wrapped.push(format!("{} / {}: {wrapped} of {} events", run.id, step.id, x.events.len()));
            }
        } else if rest {
            run.unnamed_error = unnamed_error(x.status, &x.body);
            read_rest_answer(&mut x.body, x.status);
            told_as_read(run, rest_method, &x.body);
        }
        Ok(Answer::Stream(x))
    } else {
        let mut x = run.exchange_as(&step.id, req, own_version).await?;
        run.keep(x.to_evidence(Some(&step.id), &run.ctx.redactor));
        if rest && !x.truncated {
            run.unnamed_error = unnamed_error(x.status, &x.body);
            read_rest_answer(&mut x.body, x.status);
            told_as_read(run, rest_method, &x.body);
        }
        if x.truncated {
            let cap = run.ctx.client.config().max_body_bytes;
            // A step that expects an error is answered by a result however long: what the kit read
            // already says the agent accepted the request.
            if step.expect_error.is_some() && first_member(&x.body) == Some("result") {
                return Err(StepFail::violation(
                    &step.id,
                    format!(
                        "the agent answered with a JSON-RPC result of more than {cap} bytes (HTTP {}), not an error: it accepted the request",
                        x.status
                    ),
                ));
            }
            return Err(cut_by_kit(&step.id, cap));
        }
        Ok(Answer::Single(x))
    }
}

/// Whether an HTTP+JSON agent answered as one that does not serve the request's verb on that path:
/// 405 or 501, a 404 that names no A2A error (a router's "no such route", not a TaskNotFound), a
/// JSON-RPC answer (the request fell through to a JSON-RPC endpoint), or ContentTypeNotSupported
/// (a subscription has no content to refuse).
/// SubscribeToTask is then tried with the other verb the spec names (digest §14 item 1).
pub(crate) fn verb_not_served(status: u16, body: &[u8]) -> bool {
    let body = serde_json::from_slice::<Value>(body).ok();
    let error_code = || envelope(status, body.as_ref()).and_then(|e| e.pointer("/error/code").and_then(Value::as_i64));
    // A JSON-RPC answer to an HTTP+JSON path: the POST fell through to the agent's JSON-RPC
    // endpoint, so no HTTP+JSON route serves that verb there.
    let json_rpc = body.as_ref().is_some_and(|b| b.get("jsonrpc").is_some());
    match status {
        405 | 501 => true,
        404 => error_code().is_none() || json_rpc,
        // A subscription carries no content for the agent to judge: ContentTypeNotSupportedError
        // to a POST says the route wants another request, the proto's GET.
        _ => json_rpc || error_code() == Some(-32005),
    }
}

/// The evidence just kept of an HTTP+JSON operation's answer tells its reply as the graders read
/// it (the A2A error its ErrorInfo or name says, the method called), so that findings on one
/// wrong error group alike whichever verb carried them.
fn told_as_read(run: &mut CheckRun<'_>, method: Option<&str>, shaped: &[u8]) {
    if let (Some(method), Some(e)) = (method, run.evidence.last_mut()) {
        e.reply = Some(read_reply(method, shaped, &run.ctx.redactor));
    }
}

/// An HTTP+JSON answer, once kept as evidence as it came, read in the JSON-RPC shape the graders
/// read (`client::rest::envelope`); a body that is not JSON stays as it is, for the graders to say so.
fn read_rest_answer(body: &mut Vec<u8>, status: u16) {
    if let Some(shaped) = read_answer(status, body) {
        *body = serde_json::to_vec(&shaped).unwrap_or_default();
    }
}

/// An HTTP+JSON stream read the same way: each event's data, a bare StreamResponse (§11.7), as the
/// `result` of an event. How many events came wrapped in a JSON-RPC envelope instead.
fn read_rest_stream(x: &mut StreamExchange) -> usize {
    let mut wrapped = 0;
    for e in &mut x.events {
        if let Ok(mut data) = serde_json::from_str::<Value>(&e.data) {
            // Data wrapped in a JSON-RPC envelope breaks §11.7 (REST-SSE-001's finding); the
            // event is read through it, so that no other check repeats that finding.
            if data.get("jsonrpc").is_some()
                && let Some(inner) = data.get("result").or_else(|| data.get("error")).cloned()
            {
                wrapped += 1;
                data = if data.get("error").is_some() { json!({ "error": inner }) } else { inner };
            }
            let shaped =
                if data.get("error").is_some() { envelope(500, Some(&data)) } else { envelope(200, Some(&data)) };
            if let Some(shaped) = shaped {
                e.data = shaped.to_string();
            }
        }
    }
    wrapped
}

/// Which of `result` and `error` comes first among the top-level members of a JSON-RPC answer the
/// kit read only the beginning of (the envelope's members precede the result's contents).
fn first_member(prefix: &[u8]) -> Option<&'static str> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut key_start = None;
    for (i, &b) in prefix.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    if let Some(start) = key_start.take() {
                        let rest = prefix[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
                        if rest == Some(&b':') {
                            match &prefix[start..i] {
                                b"result" => return Some("result"),
                                b"error" => return Some("error"),
                                _ => {}
                            }
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                key_start = (depth == 1).then_some(i + 1);
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// True when the step names the protocol version itself (a header of its own, set or removed, or
/// the `A2A-Version` request parameter): the version is then what it is about.
fn sets_version(step: &Step, url: &str) -> bool {
    let named = |h: &BTreeMap<String, Option<String>>| h.keys().any(|k| k.eq_ignore_ascii_case("A2A-Version"));
    named(&step.headers)
        || step.raw.as_ref().is_some_and(|r| named(&r.headers))
        || url.to_ascii_lowercase().contains("a2a-version=")
}

/// The kit stopped reading at its own cap: what it did not read it cannot grade, and the cap is
/// the kit's choice, not a rule the agent broke.
pub(crate) fn cut_by_kit(step: &str, cap: usize) -> StepFail {
    StepFail::undecided(
        step,
        format!("the answer is longer than the kit reads (max_body_bytes = {cap} bytes), so it cannot be judged"),
    )
}

fn raw_request(run: &CheckRun<'_>, step: &str, raw: &RawRequest) -> Result<HttpRequest, StepFail> {
    let path = run.render_str(step, &raw.path)?;
    // ACTS posts JSON-RPC to "the interface root", written "/" (digest §2).
    let absolute = path.starts_with("http://") || path.starts_with("https://");
    let to_interface = path.is_empty() || path == "/" || (!absolute && !path.starts_with('/'));
    if to_interface && run.ctx.rpc_url.is_empty() {
        return Err(StepFail::undecided(step, "the card offers no A2A 1.0 JSON-RPC interface to send this to"));
    }
    let url = if path.is_empty() || path == "/" {
        run.ctx.rpc_url.clone()
    } else if absolute {
        path
    } else if path.starts_with('/') {
        format!("{}{path}", run.ctx.base_url)
    } else {
        format!("{}/{path}", run.ctx.rpc_url.trim_end_matches('/'))
    };
    let body: Option<Vec<u8>> = if let Some(n) = raw.body_size {
        Some(sized_body(n.min(64 * 1024 * 1024)))
    } else if let Some(d) = raw.body_depth {
        Some(deep_body(d.min(1_000_000)))
    } else if let Some(s) = &raw.body_raw {
        Some(s.clone().into_bytes())
    } else if let Some(b) = &raw.body {
        Some(run.render(step, b)?.to_string().into_bytes())
    } else {
        None
    };
    let method = raw.method.to_ascii_uppercase();
    let mut headers = Vec::new();
    if method == "POST" {
        headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
        headers.push(("A2A-Version".to_owned(), "1.0".to_owned()));
    }
    let mut req = HttpRequest { method, url, headers, body: body.map(Into::into), ..HttpRequest::default() };
    let extra = rendered_headers(run, step, &raw.headers)?;
    apply_headers(&mut req, &extra);
    Ok(req)
}

/// A SendMessage request of exactly `n` bytes (at least the envelope), padded in the text part.
pub fn sized_body(n: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","id":"kit-size","method":"SendMessage","params":{"message":{"messageId":"kit-size","role":"ROLE_USER","parts":[{"text":""#;
    let tail = r#""}]}}}"#;
    let pad = n.saturating_sub(head.len() + tail.len());
    let mut b = Vec::with_capacity(head.len() + pad + tail.len());
    b.extend_from_slice(head.as_bytes());
    b.resize(head.len() + pad, b'x');
    b.extend_from_slice(tail.as_bytes());
    b
}

/// A SendMessage request whose metadata nests arrays `depth` deep.
pub fn deep_body(depth: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","id":"kit-depth","method":"SendMessage","params":{"message":{"messageId":"kit-depth","role":"ROLE_USER","parts":[{"text":"deep"}]},"metadata":{"deep":"#;
    let mut b = Vec::with_capacity(head.len() + 2 * depth + 8);
    b.extend_from_slice(head.as_bytes());
    b.resize(head.len() + depth, b'[');
    b.resize(head.len() + 2 * depth, b']');
    b.extend_from_slice(b"}}}");
    b
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_first_envelope_member_of_a_cut_answer() {
        assert_eq!(first_member(br#"{"jsonrpc":"2.0","id":"a\"error\"","result":{"task":{"error":"#), Some("result"));
        assert_eq!(first_member(br#"{ "jsonrpc" : "2.0", "error" : {"code":-32602,"message":"xxxx"#), Some("error"));
        assert_eq!(first_member(br#"{"jsonrpc":"2.0","id":1,"res"#), None);
        assert_eq!(first_member(br#"["result"]"#), None);
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn acts_params_become_wire_params() {
        let p = normalize_params(
            "send_message",
            json!({"taskId": "t", "message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}),
            "acme",
            &Behaviors::None,
        );
        assert_eq!(p["message"]["taskId"], "t");
        assert!(p["message"]["messageId"].is_string());
        assert_eq!(p["tenant"], "acme");
        assert!(p.get("taskId").is_none());
        let c = normalize_params(
            "create_push_config",
            json!({"taskId": "t", "pushNotificationConfig": {"url": "u"}}),
            "",
            &Behaviors::None,
        );
        assert_eq!(c, json!({"taskId": "t", "url": "u"}));
    }

    #[test]
    fn mapped_behaviours_replace_the_contract_prefix() {
        let map = crate::suite::behaviors::BehaviorMap::parse("m", "behaviors:\n  tck-cancel: please wait\n").unwrap();
        let params =
            json!({"message": {"role": "ROLE_USER", "parts": [{"text": "tck-cancel push"}, {"text": "tck-x"}]}});
        let p = normalize_params("send_message", params, "", &Behaviors::Map(map));
        assert_eq!(p["message"]["parts"][0]["text"], "please wait");
        assert_eq!(p["message"]["parts"][1]["text"], "tck-x");
    }

    #[test]
    fn a_stream_that_need_not_close_is_read_until_the_named_events_arrive() {
        let es = |v: Value| serde_json::from_value::<ExpectStream>(v).unwrap();
        let open = es(json!({"closes": false, "min_count": 1, "events": [{}, {}]}));
        assert_eq!(enough_events(Some(&open)), Some(2));
        assert_eq!(enough_events(Some(&es(json!({"closes": false, "min_count": 3, "events": [{}]})))), Some(3));
        let indexed = es(json!({"closes": false, "events": [{"index": 4, "task": {}}]}));
        assert_eq!(enough_events(Some(&indexed)), Some(5));
        let anywhere = es(json!({"closes": false, "min_count": 1, "events": [{"match": "any_position", "task": {}}]}));
        assert_eq!(enough_events(Some(&anywhere)), None, "any position: the whole stream");
        assert_eq!(
            enough_events(Some(&es(json!({"min_count": 1})))),
            None,
            "a stream that must close is read to its end"
        );
        assert_eq!(enough_events(Some(&es(json!({"closes": false})))), None, "nothing named: read to the timeout");
        for whole in [
            json!({"max_count": 4}),
            json!({"final_event": {}}),
            json!({"each_event": {}}),
            json!({"ordering": "monotonic_state"}),
            json!({"unique_ids": true}),
            json!({"echo_request_id": true}),
        ] {
            let mut v = json!({"closes": false, "min_count": 1});
            v.as_object_mut().unwrap().extend(whole.as_object().unwrap().clone());
            assert_eq!(enough_events(Some(&es(v.clone()))), None, "{v}");
        }
        assert_eq!(enough_events(None), None);
    }

    #[test]
    fn a_verb_the_agent_does_not_route_is_told_from_a_missing_task() {
        assert!(verb_not_served(405, b""));
        assert!(verb_not_served(501, b"not implemented"));
        assert!(verb_not_served(404, br#"{"detail": "Not Found"}"#), "a router's 404");
        assert!(verb_not_served(404, b"<html>404</html>"));
        let missing = br#"{"error": {"code": 404, "status": "NOT_FOUND", "message": "no task",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND"}]}}"#;
        assert!(!verb_not_served(404, missing), "a TaskNotFoundError is the answer");
        assert!(!verb_not_served(400, b""));
        // A POST that fell through to the agent's JSON-RPC endpoint, and a subscription refused
        // for a content type it does not carry.
        let fell_through =
            br#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32005, "message": "Unsupported Content-Type"}}"#;
        assert!(verb_not_served(200, fell_through));
        let no_content = br#"{"error": {"code": 415, "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "CONTENT_TYPE_NOT_SUPPORTED", "domain": "a2a-protocol.org"}]}}"#;
        assert!(verb_not_served(415, no_content));
        let not_cancelable = br#"{"error": {"code": 400, "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNSUPPORTED_OPERATION"}]}}"#;
        assert!(!verb_not_served(400, not_cancelable), "an A2A error about the task is the answer");
    }

    #[test]
    fn generated_bodies_have_the_requested_shape() {
        let b = sized_body(4096);
        assert_eq!(b.len(), 4096);
        assert!(serde_json::from_slice::<Value>(&b).is_ok());
        assert!(serde_json::from_slice::<Value>(&deep_body(10)).is_ok());
    }
}

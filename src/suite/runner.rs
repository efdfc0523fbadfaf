//! Runs planned checks against one agent: operations and raw requests through the reference client,
//! ACTS assertions on raw JSON, captures and polling, with every check bounded in time and checks
//! run concurrently. Emits run events; never reads an answer through the mock's typed model.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, mpsc};

use super::assert::{self, Mismatch};
use super::model::{Expect, ExpectError, ExpectStream, NamedAssertion, RawRequest, Step, Test};
use super::paths;
use super::plan::PlannedCheck;
use super::probes;
use super::schema;
use super::template::{self, Vars};
use super::webhook::WebhookReceiver;
use crate::client::discovery::Discovery;
use crate::client::http::{HttpClient, HttpExchange, HttpRequest, StreamExchange};
use crate::client::redact::Redactor;
use crate::client::rpc::rpc_request;
use crate::client::sse::SseLimits;
use crate::report::{CheckResult, Evidence, Failure, Level, Outcome, RunEvent, SpecRef};

/// Most exchanges kept as evidence per check.
const MAX_EVIDENCE: usize = 4;
/// Default time a stream may take to close.
const DEFAULT_STREAM_TIMEOUT: Duration = Duration::from_secs(15);

/// Everything a check needs about the target and the run.
pub struct Ctx {
    /// The bounded HTTP client (with the user's headers).
    pub client: HttpClient,
    /// Replaces user secrets in everything reported.
    pub redactor: Redactor,
    /// The card and selected interface.
    pub discovery: Discovery,
    /// Interface URL all JSON-RPC calls go to.
    pub rpc_url: String,
    /// The interface's tenant ("" for none).
    pub tenant: String,
    /// The agent's origin, for raw paths.
    pub base_url: String,
    /// Receiver for push checks.
    pub webhook: Option<Arc<WebhookReceiver>>,
    /// `--strict`: SHOULD violations fail.
    pub strict: bool,
    /// Schema violations seen in any answer, for the synthetic WIRE-SCHEMA check.
    pub wire: Mutex<Vec<WireViolation>>,
}

/// One answer that did not match the spec schema.
#[derive(Debug, Clone)]
pub struct WireViolation {
    /// The check and step that received it.
    pub origin: String,
    /// Schema definition.
    pub def: String,
    /// JSON pointer in the answer.
    pub pointer: String,
    /// Why.
    pub message: String,
}

/// Why a check stopped before passing.
#[derive(Debug)]
pub enum StepFail {
    /// The peer violated the requirement.
    Violation(Failure),
    /// The kit could not decide (transport failure, bad suite data).
    Undecided(Failure),
}

impl StepFail {
    /// A violation at a step.
    pub fn violation(step: &str, message: impl Into<String>) -> Self {
        StepFail::Violation(Failure { message: message.into(), step_id: Some(step.to_owned()), ..Failure::default() })
    }

    /// An undecidable outcome at a step.
    pub fn undecided(step: &str, message: impl Into<String>) -> Self {
        StepFail::Undecided(Failure { message: message.into(), step_id: Some(step.to_owned()), ..Failure::default() })
    }

    fn from_mismatch(step: &str, what: &str, m: &Mismatch) -> Self {
        StepFail::Violation(Failure {
            message: format!("{what}: {} at {}", m.message, if m.pointer.is_empty() { "(root)" } else { &m.pointer }),
            step_id: Some(step.to_owned()),
            pointer: Some(m.pointer.clone()),
            expected: Some(m.expected.clone()),
            actual: Some(m.actual.clone()),
        })
    }
}

/// The running state of one check.
pub struct CheckRun<'a> {
    /// Shared context.
    pub ctx: &'a Ctx,
    /// The check's id.
    pub id: String,
    /// Variables and captures.
    pub vars: Vars,
    /// Exchanges kept as evidence.
    pub evidence: Vec<Evidence>,
}

impl CheckRun<'_> {
    /// Keeps an exchange as evidence (the most recent few).
    pub fn keep(&mut self, e: Evidence) {
        if self.evidence.len() == MAX_EVIDENCE {
            self.evidence.remove(0);
        }
        self.evidence.push(e);
    }

    /// Validates a received value against the schema, recording violations for WIRE-SCHEMA.
    pub fn wire_check(&self, step: &str, def: &str, value: &Value) {
        let v = schema::violations(def, value);
        if v.is_empty() {
            return;
        }
        let mut wire = self.ctx.wire.lock().unwrap_or_else(|p| p.into_inner());
        for (pointer, message) in v {
            if wire.len() < 200 {
                wire.push(WireViolation { origin: format!("{} / {step}", self.id), def: def.into(), pointer, message });
            }
        }
    }
}

/// Runs every check of the plan with at most `jobs` at a time, each bounded by `timeout`, emitting
/// events through `sink`; returns the results in plan order, plus the WIRE-SCHEMA check.
pub async fn run_all(
    ctx: Arc<Ctx>,
    checks: Vec<PlannedCheck>,
    jobs: usize,
    timeout: Duration,
    wire_schema_selected: bool,
    sink: &mut (dyn FnMut(&RunEvent) + Send),
) -> Vec<CheckResult> {
    let sem = Arc::new(Semaphore::new(jobs.max(1)));
    let (tx, mut rx) = mpsc::unbounded_channel::<(usize, Option<CheckResult>)>();
    let total = checks.len();
    for (i, check) in checks.into_iter().enumerate() {
        let (ctx, sem, tx) = (ctx.clone(), sem.clone(), tx.clone());
        tokio::spawn(async move {
            if check.skip.is_some() {
                let _ = tx.send((i, Some(skipped(&check))));
                return;
            }
            let _permit = sem.acquire().await;
            let _ = tx.send((i, None));
            let result = run_check(&ctx, &check, timeout).await;
            let _ = tx.send((i, Some(result)));
        });
    }
    drop(tx);
    let mut results: Vec<Option<CheckResult>> = vec![None; total];
    let mut ids: Vec<Option<String>> = vec![None; total];
    while let Some((i, r)) = rx.recv().await {
        match r {
            None => {
                let id = format!("#{i}");
                ids[i] = Some(id.clone());
                sink(&RunEvent::CheckStarted { id });
            }
            Some(r) => {
                if ids[i].is_none() {
                    sink(&RunEvent::CheckStarted { id: r.id.clone() });
                }
                sink(&RunEvent::CheckFinished(Box::new(r.clone())));
                results[i] = Some(r);
            }
        }
    }
    let mut out: Vec<CheckResult> = results.into_iter().flatten().collect();
    let mut wire = wire_schema_result(&ctx, &out);
    if !wire_schema_selected {
        wire.outcome = Outcome::Skip;
        wire.failure = None;
        wire.skip_reason = Some(crate::report::SkipReason::Filtered);
        wire.skip_detail = Some("excluded by --only / --exclude".into());
    }
    sink(&RunEvent::CheckStarted { id: wire.id.clone() });
    sink(&RunEvent::CheckFinished(Box::new(wire.clone())));
    out.push(wire);
    out
}

fn base_result(check: &PlannedCheck) -> CheckResult {
    let t = &check.test;
    CheckResult {
        id: t.id.clone(),
        title: t.name.clone(),
        suite: check.suite.clone(),
        profile: check.profile.clone(),
        level: t.level,
        spec: SpecRef {
            section: t.section.clone().or_else(|| t.spec_ref.clone()).unwrap_or_default(),
            requirement: t.requirement.clone().or_else(|| t.description.clone()).unwrap_or_default(),
        },
        outcome: Outcome::Pass,
        skip_reason: None,
        skip_detail: None,
        scored: check.scored,
        duration_ms: 0,
        failure: None,
        measurement: None,
        evidence: Vec::new(),
    }
}

fn skipped(check: &PlannedCheck) -> CheckResult {
    let mut r = base_result(check);
    r.outcome = Outcome::Skip;
    if let Some((reason, detail)) = &check.skip {
        r.skip_reason = Some(*reason);
        r.skip_detail = Some(detail.clone());
    }
    r
}

async fn run_check(ctx: &Ctx, check: &PlannedCheck, timeout: Duration) -> CheckResult {
    let started = Instant::now();
    let mut result = base_result(check);
    let mut run = CheckRun { ctx, id: check.test.id.clone(), vars: base_vars(ctx), evidence: Vec::new() };
    let outcome = tokio::time::timeout(timeout, run_test(&mut run, &check.test)).await;
    result.duration_ms = started.elapsed().as_millis() as u64;
    match outcome {
        Err(_) => {
            result.outcome = Outcome::Error;
            result.failure = Some(Failure {
                message: format!("the check did not finish within {} ms (--timeout)", timeout.as_millis()),
                ..Failure::default()
            });
        }
        Ok(Ok(())) => {}
        Ok(Err(StepFail::Violation(f))) => {
            result.outcome = check.test.level.violation(ctx.strict);
            result.failure = Some(redact_failure(&ctx.redactor, f));
        }
        Ok(Err(StepFail::Undecided(f))) => {
            result.outcome = Outcome::Error;
            result.failure = Some(redact_failure(&ctx.redactor, f));
        }
    }
    result.evidence = run.evidence;
    result
}

fn redact_failure(r: &Redactor, f: Failure) -> Failure {
    Failure {
        message: r.redact(&f.message),
        step_id: f.step_id,
        pointer: f.pointer,
        expected: f.expected.map(|s| r.redact(&s)),
        actual: f.actual.map(|s| r.redact(&s)),
    }
}

fn base_vars(ctx: &Ctx) -> Vars {
    let mut v = Vars::new();
    v.set("agentUrl", json!(ctx.rpc_url));
    v.set("baseUrl", json!(ctx.base_url));
    v.set("cardUrl", json!(ctx.discovery.card_url));
    if let Some(hook) = &ctx.webhook {
        v.set("webhookUrl", json!(hook.new_endpoint().0));
    }
    v
}

fn wire_schema_result(ctx: &Ctx, results: &[CheckResult]) -> CheckResult {
    let wire = ctx.wire.lock().unwrap_or_else(|p| p.into_inner());
    let graded = results.iter().filter(|r| r.outcome != Outcome::Skip).count();
    let mut r = CheckResult {
        id: "WIRE-SCHEMA".into(),
        title: "Every payload received validates against the spec's JSON Schema".into(),
        suite: "synthetic".into(),
        profile: "core".into(),
        level: Level::Must,
        spec: SpecRef {
            section: "1.4".into(),
            requirement: "a2a.proto is the single authoritative normative definition of all protocol data objects; \
                          the JSON Schema is generated from it."
                .into(),
        },
        outcome: Outcome::Pass,
        skip_reason: None,
        skip_detail: None,
        scored: true,
        duration_ms: 0,
        failure: None,
        measurement: None,
        evidence: Vec::new(),
    };
    if graded == 0 {
        r.outcome = Outcome::Skip;
        r.skip_reason = Some(crate::report::SkipReason::Filtered);
        r.skip_detail = Some("no check ran, so nothing was received".into());
    } else if let Some(first) = wire.first() {
        r.outcome = Outcome::Fail;
        let shown: Vec<String> =
            wire.iter().take(5).map(|w| format!("{}: {} at {}: {}", w.origin, w.def, w.pointer, w.message)).collect();
        r.failure = Some(Failure {
            message: format!("{} schema violation(s); first: {} ({})", wire.len(), first.message, first.origin),
            step_id: None,
            pointer: Some(first.pointer.clone()),
            expected: Some(format!("a valid {}", first.def)),
            actual: Some(ctx.redactor.redact(&shown.join("\n"))),
        });
    }
    r
}

async fn run_test(run: &mut CheckRun<'_>, test: &Test) -> Result<(), StepFail> {
    if let Some(probe) = &test.probe {
        return probes::run(run, probe, test.probe_params.as_ref().unwrap_or(&Value::Null)).await;
    }
    if test.steps.is_empty() {
        return Err(StepFail::undecided("-", "the check has no steps and no probe"));
    }
    for step in &test.steps {
        if let Some(ms) = step.delay_ms {
            tokio::time::sleep(Duration::from_millis(ms.min(60_000))).await;
        }
        run_step(run, step).await?;
    }
    for a in &test.assertions {
        named_assertion(run, "assertions", a)?;
    }
    Ok(())
}

fn render(run: &CheckRun<'_>, step: &str, v: &Value) -> Result<Value, StepFail> {
    template::render(v, &run.vars).map_err(|e| StepFail::undecided(step, format!("suite data: {e}")))
}

/// What one request produced.
enum Answer {
    Single(HttpExchange),
    Stream(StreamExchange),
}

async fn run_step(run: &mut CheckRun<'_>, step: &Step) -> Result<(), StepFail> {
    if let Some(a) = &step.assertion {
        return named_assertion(run, &step.id, a);
    }
    let attempts = step.repeat.as_ref().map_or(1, |r| r.max_attempts.unwrap_or(10).clamp(1, 100));
    let mut attempt = 0;
    loop {
        attempt += 1;
        let answer = send(run, step).await?;
        // Polling decides on the raw answer; the step's expectations apply to the final one only.
        if let Some(rep) = &step.repeat {
            let done = assert::eval_until(&rep.until, &peek_root(&answer))
                .map_err(|e| StepFail::undecided(&step.id, format!("repeat.until: {e}")))?;
            if !done {
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
        let root = evaluate(run, step, &answer)?;
        return finish_step(run, step, &answer, root);
    }
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
    for (var, path) in &step.capture {
        let value = capture(answer, &root, path).ok_or_else(|| {
            StepFail::Violation(Failure {
                message: format!("capture {var}: nothing at `{path}` in the answer"),
                step_id: Some(step.id.clone()),
                pointer: None,
                expected: Some(format!("a value at `{path}`")),
                actual: Some(compact(&root)),
            })
        })?;
        run.vars.set_step(&step.id, var, value);
    }
    run.vars.set_step(&step.id, "response", root);
    for a in &step.assertions {
        named_assertion(run, &step.id, a)?;
    }
    Ok(())
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

/// The JSON-RPC method, the schema definition of its result, and whether it streams.
fn operation(op: &str) -> Option<(&'static str, &'static str, bool)> {
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

/// Turns ACTS abstract params into the 1.0 wire params (see suites/README.md).
pub fn normalize_params(op: &str, params: Value, tenant: &str) -> Value {
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
    h: &std::collections::BTreeMap<String, Option<String>>,
) -> Result<Vec<(String, Option<String>)>, StepFail> {
    h.iter()
        .map(|(k, v)| {
            let v = match v {
                Some(s) => Some(
                    template::render_str(s, &run.vars)
                        .map_err(|e| StepFail::undecided(step, format!("suite data: {e}")))?,
                ),
                None => None,
            };
            Ok((k.clone(), v))
        })
        .collect()
}

fn stream_limits(run: &CheckRun<'_>, es: Option<&ExpectStream>) -> SseLimits {
    let mut l = run.ctx.client.config().sse.clone();
    let t = es.and_then(|e| e.timeout_ms).map(Duration::from_millis).unwrap_or(DEFAULT_STREAM_TIMEOUT);
    l.total_timeout = t.min(l.total_timeout.max(t));
    l.idle_timeout = l.idle_timeout.min(t);
    l
}

async fn send(run: &mut CheckRun<'_>, step: &Step) -> Result<Answer, StepFail> {
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
            let params = render(run, &step.id, step.params.as_ref().unwrap_or(&Value::Null))?;
            let params = normalize_params(op, params, &run.ctx.tenant);
            let params = (op != "get_extended_agent_card" || params.as_object().is_some_and(|m| !m.is_empty()))
                .then_some(params);
            let id = json!(uuid::Uuid::new_v4().simple().to_string());
            (rpc_request(&run.ctx.rpc_url, &id, method, params), streaming)
        }
    };
    let extra = rendered_headers(run, &step.id, &step.headers)?;
    apply_headers(&mut req, &extra);
    let transport = |e: crate::client::http::ClientError| StepFail::undecided(&step.id, format!("request failed: {e}"));
    if streaming {
        let limits = stream_limits(run, step.expect_stream.as_ref());
        let x = run.ctx.client.send_streaming_with(req, &limits, None).await.map_err(transport)?;
        run.keep(x.to_evidence(Some(&step.id), &run.ctx.redactor));
        Ok(Answer::Stream(x))
    } else {
        let x = run.ctx.client.send(req).await.map_err(transport)?;
        run.keep(x.to_evidence(Some(&step.id), &run.ctx.redactor));
        Ok(Answer::Single(x))
    }
}

fn raw_request(run: &CheckRun<'_>, step: &str, raw: &RawRequest) -> Result<HttpRequest, StepFail> {
    let path = template::render_str(&raw.path, &run.vars)
        .map_err(|e| StepFail::undecided(step, format!("suite data: {e}")))?;
    // ACTS posts JSON-RPC to "the interface root", written "/" (digest §2).
    let url = if path.is_empty() || path == "/" {
        run.ctx.rpc_url.clone()
    } else if path.starts_with("http://") || path.starts_with("https://") {
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
        Some(render(run, step, b)?.to_string().into_bytes())
    } else {
        None
    };
    let method = raw.method.to_ascii_uppercase();
    let mut headers = Vec::new();
    if method == "POST" {
        headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
        headers.push(("A2A-Version".to_owned(), "1.0".to_owned()));
    }
    let mut req = HttpRequest { method, url, headers, body, ..HttpRequest::default() };
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

/// Checks one answer against the step's expectations and returns the assertion root.
fn evaluate(run: &mut CheckRun<'_>, step: &Step, answer: &Answer) -> Result<Option<Value>, StepFail> {
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
                        return Err(StepFail::violation(&step.id, format!("the body is not JSON: {e}")));
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
                    let err = root
                        .as_ref()
                        .and_then(|r| r.get("error"))
                        .ok_or_else(|| StepFail::violation(&step.id, "expected a JSON-RPC error object, got none"))?;
                    check_error(&step.id, x.status, err, ee)?;
                }
                if let Some(exp) = &step.expect {
                    expect_body(run, &step.id, root.as_ref(), exp)?;
                }
                return Ok(root);
            }
            let v = match body {
                Some(Ok(v)) => v,
                Some(Err(e)) => return Err(StepFail::violation(&step.id, format!("the answer is not JSON-RPC: {e}"))),
                None => return Err(StepFail::violation(&step.id, "empty answer")),
            };
            if let Some(ee) = &step.expect_error {
                let Some(err) = v.get("error") else {
                    return Err(StepFail::Violation(Failure {
                        message: format!("expected an error, got a result (HTTP {})", x.status),
                        step_id: Some(step.id.clone()),
                        pointer: Some("/result".into()),
                        expected: Some(describe_error(ee)),
                        actual: Some(compact(v.get("result").unwrap_or(&v))),
                    }));
                };
                check_error(&step.id, x.status, err, ee)?;
                return Ok(Some(err.clone()));
            }
            if let Some(err) = v.get("error") {
                return Err(StepFail::Violation(Failure {
                    message: format!(
                        "expected a result, got JSON-RPC error {} ({})",
                        err.get("code").map(compact).unwrap_or_default(),
                        err.get("message").and_then(Value::as_str).unwrap_or("")
                    ),
                    step_id: Some(step.id.clone()),
                    pointer: Some("/error".into()),
                    expected: Some("a result".into()),
                    actual: Some(compact(err)),
                }));
            }
            let Some(result) = v.get("result").cloned() else {
                return Err(StepFail::violation(&step.id, "the answer has neither `result` nor `error`"));
            };
            if let Some((_, def, _)) = operation(op)
                && !def.is_empty()
            {
                run.wire_check(&step.id, def, &result);
            }
            if let Some(exp) = &step.expect {
                expect_body(run, &step.id, Some(&result), exp)?;
            }
            Ok(Some(result))
        }
        Answer::Stream(x) => evaluate_stream(run, step, x),
    }
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
        let body = render(run, step, body)?;
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

fn check_at(step: &str, what: &str, actual: Option<&Value>, expected: &Value, pointer: &str) -> Result<(), StepFail> {
    match assert::check(actual, expected, pointer).first() {
        None => Ok(()),
        Some(m) => Err(StepFail::from_mismatch(step, what, m)),
    }
}

/// The code the A2A spec assigns to an abstract error name (not the ACTS draft table where the two
/// differ, digest §14 item 10).
pub fn error_code(error_type: &str) -> Option<i64> {
    Some(match error_type.trim_end_matches("Error") {
        "TaskNotFound" => -32001,
        "TaskNotCancelable" => -32002,
        "PushNotificationNotSupported" => -32003,
        "UnsupportedOperation" | "StreamingNotSupported" | "ExtendedCardNotSupported" => -32004,
        "ContentTypeNotSupported" => -32005,
        "InvalidAgentResponse" => -32006,
        "ExtendedAgentCardNotConfigured" | "AuthenticatedExtendedCardNotConfigured" => -32007,
        "ExtensionSupportRequired" => -32008,
        "VersionNotSupported" => -32009,
        "JSONParse" | "Parse" => -32700,
        "InvalidRequest" => -32600,
        "MethodNotFound" => -32601,
        "InvalidParams" => -32602,
        "Internal" => -32603,
        _ => return None,
    })
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

fn check_error(step: &str, status: u16, err: &Value, ee: &ExpectError) -> Result<(), StepFail> {
    if let Some(t) = &ee.error_type {
        let code = error_code(t).ok_or_else(|| StepFail::undecided(step, format!("unknown error_type {t:?}")))?;
        check_at(step, &format!("error code for {t}"), err.get("code"), &json!(code), "/error/code")?;
    }
    if let Some(c) = &ee.code {
        check_at(step, "error code", err.get("code"), &codes_for_names(c), "/error/code")?;
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

fn state_of(ev: &Value) -> Option<&str> {
    ev.pointer("/task/status/state").or_else(|| ev.pointer("/statusUpdate/status/state")).and_then(Value::as_str)
}

fn is_terminal(state: &str) -> bool {
    matches!(state, "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_CANCELED" | "TASK_STATE_REJECTED")
}

fn evaluate_stream(run: &mut CheckRun<'_>, step: &Step, x: &StreamExchange) -> Result<Option<Value>, StepFail> {
    let sid = step.id.as_str();
    let is_sse = x.content_type().is_some_and(|c| c.starts_with("text/event-stream"));
    if !is_sse {
        let body: Result<Value, String> = serde_json::from_slice(&x.body).map_err(|e| e.to_string());
        if let Some(ee) = &step.expect_error {
            let v =
                body.map_err(|e| StepFail::violation(sid, format!("expected a JSON-RPC error, got non-JSON: {e}")))?;
            let err = v.get("error").ok_or_else(|| StepFail::violation(sid, "expected a JSON-RPC error object"))?;
            check_error(sid, x.status, err, ee)?;
            return Ok(Some(err.clone()));
        }
        let detail = match body.ok().and_then(|v| v.get("error").cloned()) {
            Some(e) => format!("a JSON-RPC error instead: {}", compact(&e)),
            None => format!("content type {:?}", x.content_type().unwrap_or("none")),
        };
        return Err(StepFail::violation(sid, format!("expected an SSE stream (text/event-stream), got {detail}")));
    }
    if x.status != 200 {
        return Err(StepFail::violation(sid, format!("a stream must be answered with HTTP 200, got {}", x.status)));
    }
    let mut roots = Vec::new();
    for (i, ev) in x.events.iter().enumerate() {
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            StepFail::violation(sid, format!("event {i}: `data` is not JSON ({e}): {}", truncate(&ev.data, 120)))
        })?;
        if v.get("jsonrpc") != Some(&json!("2.0")) {
            return Err(StepFail::violation(sid, format!("event {i} is not a JSON-RPC 2.0 response: {}", compact(&v))));
        }
        if let Some(err) = v.get("error") {
            if let Some(ee) = &step.expect_error {
                check_error(sid, x.status, err, ee)?;
                return Ok(Some(err.clone()));
            }
            return Err(StepFail::violation(sid, format!("event {i} is a JSON-RPC error: {}", compact(err))));
        }
        let Some(result) = v.get("result") else {
            return Err(StepFail::violation(sid, format!("event {i} has no `result`")));
        };
        run.wire_check(sid, "StreamResponse", result);
        roots.push(result.clone());
    }
    if step.expect_error.is_some() {
        return Err(StepFail::violation(sid, "expected an error, got a stream of results"));
    }
    let es = step.expect_stream.clone().unwrap_or_default();
    if es.closes.unwrap_or(true)
        && let Err(e) = &x.end
    {
        return Err(StepFail::violation(
            sid,
            format!("the stream did not end cleanly after {} event(s): {e}", roots.len()),
        ));
    }
    if let Some(min) = es.min_count
        && roots.len() < min
    {
        return Err(StepFail::violation(sid, format!("{} event(s), expected at least {min}", roots.len())));
    }
    if let Some(max) = es.max_count
        && roots.len() > max
    {
        return Err(StepFail::violation(sid, format!("{} event(s), expected at most {max}", roots.len())));
    }
    if es.ordering.as_deref() == Some("monotonic_state") {
        let mut prev: Option<&str> = None;
        for (i, r) in roots.iter().enumerate() {
            let Some(s) = state_of(r) else { continue };
            if let Some(p) = prev {
                if is_terminal(p) {
                    return Err(StepFail::violation(sid, format!("event {i}: {s} after terminal state {p}")));
                }
                if s == "TASK_STATE_SUBMITTED" && p != "TASK_STATE_SUBMITTED" {
                    return Err(StepFail::violation(sid, format!("event {i}: back to SUBMITTED after {p}")));
                }
            }
            prev = Some(s);
        }
    }
    if es.unique_ids == Some(true) {
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
        let ea = render(run, sid, ea)?;
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
                return Err(StepFail::Violation(Failure {
                    message: format!("{what}: no event matches"),
                    step_id: Some(sid.into()),
                    pointer: None,
                    expected: Some(compact(&a)),
                    actual: Some(truncate(&compact(&stream_root), 600)),
                }));
            }
        } else {
            check_at(sid, &what, roots.get(index), &a, &format!("/{index}"))?;
        }
    }
    if let Some(fe) = &es.final_event {
        let fe = normalize_event_assertion(&render(run, sid, fe)?);
        check_at(sid, "final event", roots.last(), &fe, &format!("/{}", roots.len().saturating_sub(1)))?;
    }
    if let Some(each) = &es.each_event {
        let each = normalize_event_assertion(&render(run, sid, each)?);
        for (i, r) in roots.iter().enumerate() {
            check_at(sid, &format!("event {i}"), Some(r), &each, &format!("/{i}"))?;
        }
    }
    // Captures on a stream read from its first event (the task snapshot, or the message).
    Ok(Some(roots.first().cloned().unwrap_or(Value::Null)))
}

fn named_assertion(run: &CheckRun<'_>, step: &str, a: &NamedAssertion) -> Result<(), StepFail> {
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
        check_at(step, &label, at.as_ref(), &render(run, step, m)?, "")?;
    }
    let base = at.unwrap_or(Value::Null);
    for (kind, cm) in [("any", &a.any), ("all", &a.all), ("none", &a.none)] {
        let Some(cm) = cm else { continue };
        let expected = render(run, step, &cm.match_)?;
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

/// Compact JSON, truncated for findings.
pub fn compact(v: &Value) -> String {
    truncate(&v.to_string(), 400)
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acts_params_become_wire_params() {
        let p = normalize_params(
            "send_message",
            json!({"taskId": "t", "message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}),
            "acme",
        );
        assert_eq!(p["message"]["taskId"], "t");
        assert!(p["message"]["messageId"].is_string());
        assert_eq!(p["tenant"], "acme");
        assert!(p.get("taskId").is_none());
        let c =
            normalize_params("create_push_config", json!({"taskId": "t", "pushNotificationConfig": {"url": "u"}}), "");
        assert_eq!(c, json!({"taskId": "t", "url": "u"}));
    }

    #[test]
    fn spec_codes_win_over_the_acts_table() {
        assert_eq!(error_code("PushNotificationNotSupportedError"), Some(-32003));
        assert_eq!(error_code("VersionNotSupportedError"), Some(-32009));
        assert_eq!(error_code("StreamingNotSupportedError"), Some(-32004));
        assert_eq!(error_code("Nonsense"), None);
    }

    #[test]
    fn generated_bodies_have_the_requested_shape() {
        let b = sized_body(4096);
        assert_eq!(b.len(), 4096);
        assert!(serde_json::from_slice::<Value>(&b).is_ok());
        assert!(serde_json::from_slice::<Value>(&deep_body(10)).is_ok());
    }

    #[test]
    fn acts_event_kinds_are_camel_cased() {
        let a = normalize_event_assertion(&json!({"one_of": [{"task": {}}, {"status_update": {"status": {}}}]}));
        assert_eq!(a, json!({"any_of": [{"task": {}}, {"statusUpdate": {"status": {}}}]}));
    }
}

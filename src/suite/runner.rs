//! Runs planned checks against one agent: operations and raw requests through the reference client,
//! ACTS assertions on raw JSON, captures and polling, with every check bounded in time and checks
//! run concurrently. Emits run events; never reads an answer through the mock's typed model.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};

use super::assert::{self, Mismatch};
use super::expect::{compact, evaluate, named_assertion};
use super::model::{Step, Test};
use super::paths;
use super::plan::PlannedCheck;
use super::probes;
use super::request::{Answer, send};
use super::schema;
use super::template::{self, Vars};
use super::webhook::WebhookReceiver;
use crate::client::discovery::Discovery;
use crate::client::http::HttpClient;
use crate::client::redact::Redactor;
use crate::report::{CheckResult, Evidence, Failure, Level, Outcome, RunEvent, SpecRef};

/// Most exchanges kept as evidence per check.
const MAX_EVIDENCE: usize = 4;

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
    /// How long to wait for what the agent does on its own: a stream to close, a webhook to be
    /// called.
    pub patience: Duration,
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

    pub(crate) fn from_mismatch(step: &str, what: &str, m: &Mismatch) -> Self {
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

/// Renders suite data with the check's variables; a template error is the suite's fault.
pub(crate) fn render(run: &CheckRun<'_>, step: &str, v: &Value) -> Result<Value, StepFail> {
    template::render(v, &run.vars).map_err(|e| StepFail::undecided(step, format!("suite data: {e}")))
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

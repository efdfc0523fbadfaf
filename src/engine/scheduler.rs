//! Runs a plan: checks at once up to `--jobs`, each bounded by `--timeout`, with their events
//! emitted to the sinks as they start and finish; then the synthetic checks, decided from what the
//! others received.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc, watch};

use super::context::{CheckRun, Ctx, StepFail, compact};
use super::diagnose;
use super::error_details::Fault;
use super::runner::run_test;
use crate::client::redact::Redactor;
use crate::report::{CheckResult, Failure, Outcome, RunEvent, Sink, SkipReason};
use crate::suite::plan::{Disposition, PlannedCheck};
use crate::suite::template::Vars;

/// Id of the synthetic check that validates every payload received against the spec schema.
pub const WIRE_SCHEMA: &str = "WIRE-SCHEMA";
/// Id of the synthetic check that judges the id of every JSON-RPC answer of the run.
pub const ID_ECHO: &str = "JSONRPC-ID-001";
/// Synthetic: every JSON-RPC error's `data`, when present, is an array (§9.5).
pub const DATA_ARRAY: &str = "KIT-ERR-020";
/// Synthetic: every element of every JSON-RPC error's `data` carries `@type` (§9.5).
pub const DATA_TYPED: &str = "KIT-ERR-021";
/// Synthetic: every HTTP+JSON A2A error carries the HTTP status §5.4 maps it to.
pub const ERROR_STATUS: &str = "KIT-ERR-022";
/// Synthetic: the interfaces the run grades can be used (on an allowed host, and answering).
pub const INTERFACE: &str = "KIT-IFACE-001";
/// HTTP+JSON streams carry bare StreamResponses (§11.7).
pub const REST_SSE: &str = "REST-SSE-001";
/// Synthetic: no answer carries a credential the kit sent (the user's, or its invented one).
pub const SECRET_CREDENTIAL: &str = "KIT-SECRET-010";
/// Synthetic: no answer carries the canary the kit sends in a header of its own.
pub const SECRET_HEADER: &str = "KIT-SECRET-011";
/// Synthetic: what the agent accepts when the neutral SendMessage fails (`diagnose.rs`).
pub const DIAGNOSIS: &str = crate::report::causes::DIAGNOSIS;

enum Progress {
    Started(usize),
    Finished(usize, Box<CheckResult>),
}

/// How a check ended, for the checks that build on it.
#[derive(Debug, Clone)]
struct Ending {
    outcome: Outcome,
    /// It found a violation (fail, warn, or a MAY/info check with a failure) or could not decide.
    found: bool,
    /// Its one-line reason.
    why: String,
    /// The failed check at the root of a chain of deferrals, when this one deferred too.
    root: Option<String>,
}

type Settled = watch::Sender<Option<Ending>>;

/// One channel per planned id: dependents wait on it only when a setup step of theirs failed.
fn settled_channels(ids: &[String]) -> Arc<HashMap<String, Settled>> {
    let mut map = HashMap::new();
    for id in ids {
        map.entry(id.clone()).or_insert_with(|| watch::channel(None).0);
    }
    Arc::new(map)
}

fn publish(settled: &HashMap<String, Settled>, r: &CheckResult) {
    if let Some(tx) = settled.get(&r.id) {
        let why = r.failure.as_ref().map(|f| f.message.clone()).or_else(|| r.skip_detail.clone()).unwrap_or_default();
        let found = matches!(r.outcome, Outcome::Fail | Outcome::Warn | Outcome::Error)
            || (r.outcome == Outcome::Info && r.failure.is_some());
        tx.send_replace(Some(Ending { outcome: r.outcome, found, why, root: r.depends_on.clone() }));
    }
}

/// How many check timeouts a check waits for a cause to settle. A cause that ran in this phase or
/// an earlier one always settles (each check is bounded by its timeout once it has a slot), but
/// under load it may wait long for a slot, and a dependent that stops waiting judges on its own: a
/// false verdict. The bound only ends a wait that can never end (a cycle in a user's suite).
const CAUSE_WAIT_TIMEOUTS: u32 = 12;

/// Waits (at most `limit`) for how `cause` ended; `None` if it never ran or never ended in time.
async fn settled_outcome(settled: &HashMap<String, Settled>, cause: &str, limit: Duration) -> Option<Ending> {
    let mut rx = settled.get(cause)?.subscribe();
    let ended = tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await.ok()?.ok()?;
    ended.clone()
}

/// Profile whose checks run after all others (see [`run_all`]).
const LAST_PROFILE: &str = "caps";

/// Runs every check of the plan with at most `jobs` at a time, each bounded by `timeout`, emitting
/// `CheckStarted` / `CheckFinished` through `sink`. Returns the results in plan order.
///
/// Hostile-input checks (profile `caps`) run after everything else: they may leave huge tasks
/// behind that A2A gives no way to delete, and no later ListTasks should have to carry them.
/// Synthetic checks come last of all: they judge what every other check received.
pub async fn run_all(
    ctx: Arc<Ctx>,
    checks: Vec<PlannedCheck>,
    jobs: usize,
    timeout: Duration,
    sink: &mut (dyn Sink + Send),
) -> Vec<CheckResult> {
    let sem = Arc::new(Semaphore::new(jobs.max(1)));
    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
    let total = checks.len();
    let ids: Vec<String> = checks.iter().map(|c| c.test.id.clone()).collect();
    let settled = settled_channels(&ids);
    let mut board = Board { ids, started: vec![false; total], results: vec![None; total] };
    let (mut early, mut late, mut synthetic) = (Vec::new(), Vec::new(), Vec::new());
    for (i, check) in checks.into_iter().enumerate() {
        match &check.disposition {
            Disposition::Skip(reason, detail) => {
                let r = CheckResult::skipped(&check.meta(), *reason, detail.clone());
                publish(&settled, &r);
                board.finish(i, r, sink);
            }
            Disposition::Invalid(why) => {
                let failure = Failure { message: format!("suite data: {why}"), ..Failure::default() };
                let r = CheckResult { failure: Some(failure), ..CheckResult::new(&check.meta(), Outcome::Error) };
                publish(&settled, &r);
                board.finish(i, r, sink);
            }
            Disposition::Blocked { cause, detail } => {
                let r = CheckResult {
                    depends_on: Some(cause.clone()),
                    ..CheckResult::skipped(&check.meta(), SkipReason::DependsOnFailed, detail.clone())
                };
                publish(&settled, &r);
                board.finish(i, r, sink);
            }
            Disposition::Run if check.test.synthetic => synthetic.push((i, check)),
            Disposition::Run if check.profile == LAST_PROFILE => late.push((i, check)),
            Disposition::Run => early.push((i, check)),
        }
    }
    for phase in [early, late] {
        let mut running = phase.len();
        for (i, check) in phase {
            let (ctx, sem, tx, settled) = (ctx.clone(), sem.clone(), tx.clone(), settled.clone());
            tokio::spawn(async move {
                let result = run_one(&ctx, &check, &sem, &tx, i, &settled, timeout).await;
                let _ = tx.send(Progress::Finished(i, Box::new(result)));
            });
        }
        while running > 0 {
            match rx.recv().await {
                Some(Progress::Started(i)) => board.start(i, sink),
                Some(Progress::Finished(i, r)) => {
                    board.finish(i, *r, sink);
                    running -= 1;
                }
                // Every task holds a sender until it has reported; this cannot happen.
                None => break,
            }
        }
    }
    let received: Vec<CheckResult> = board.results.iter().flatten().cloned().collect();
    for (i, check) in synthetic {
        board.finish(i, decide_synthetic(&ctx, &check, &received), sink);
    }
    board.results.into_iter().flatten().collect()
}

/// One check in its slot; a check whose setup step failed, or that did not pass and declares
/// `depends_on`, waits out of its slot for how those checks ended, and defers to the first of them
/// that found a violation: one violation, one finding.
async fn run_one(
    ctx: &Ctx,
    check: &PlannedCheck,
    sem: &Semaphore,
    tx: &mpsc::UnboundedSender<Progress>,
    i: usize,
    settled: &HashMap<String, Settled>,
    timeout: Duration,
) -> CheckResult {
    let permit = sem.acquire().await;
    let _ = tx.send(Progress::Started(i));
    let (mut result, mut causes) = match ctx.guard.stopped() {
        // The agent stopped answering or the run ran out of time: nothing more is sent.
        Some(why) => (stopped_result(check, why), Vec::new()),
        None => tokio::select! {
            r = run_check(ctx, check, timeout) => r,
            why = ctx.guard.wait_stop() => (stopped_result(check, why), Vec::new()),
        },
    };
    // Waiting for the causes holds no slot: a cause may still need one to run.
    drop(permit);
    let own_finding = matches!(result.outcome, Outcome::Fail | Outcome::Warn | Outcome::Error)
        || (result.outcome == Outcome::Info && result.failure.is_some());
    if own_finding {
        causes.extend(check.test.depends_on.iter().filter(|c| !causes.contains(c)).cloned().collect::<Vec<_>>());
    }
    // Graded under the workaround, the check sent what the agent accepts: CORE-SEND-001's refusal
    // of the 1.0 spelling is not why it ended this way, so its finding stays its own.
    if !result.workaround.is_empty() {
        let anchor = ctx.primary.unwrap_or(crate::suite::binding::Binding::JsonRpc).check_id(super::diagnosis::ANCHOR);
        causes.retain(|c| *c != anchor);
        // Nor is the check whose finding the check read through (a bare event's envelope, a
        // wrapped Task, a 0.3 enum spelling).
        let read_through: Vec<&str> =
            result.workaround.iter().flat_map(|n| super::context::read_through(n)).copied().collect();
        causes.retain(|c| !read_through.contains(&crate::suite::binding::Binding::plain_id(c)));
    }
    let mut deferred = None;
    for cause in causes {
        if let Some(ending) = settled_outcome(settled, &cause, timeout * CAUSE_WAIT_TIMEOUTS).await
            && (ending.found || ending.root.is_some())
        {
            deferred = Some((cause, ending));
            break;
        }
    }
    if let Some((cause, ending)) = deferred {
        // A cause that itself deferred passes its root on: one story, told at its beginning.
        let (cause, detail) = match ending.root {
            Some(root) => (root, format!("{cause}, which depends on it: {}", ending.why)),
            None => (cause.clone(), format!("{cause} {}: {}", ending.outcome.as_str(), ending.why)),
        };
        let detail = ctx.redactor.redact(&detail);
        let evidence = std::mem::take(&mut result.evidence);
        let workaround = std::mem::take(&mut result.workaround);
        let duration_ms = result.duration_ms;
        result = CheckResult {
            evidence,
            workaround,
            duration_ms,
            depends_on: Some(cause),
            ..CheckResult::skipped(&check.meta(), SkipReason::DependsOnFailed, detail)
        };
    }
    publish(settled, &result);
    result
}

/// Which checks have started and how the finished ones ended, so that every check's
/// `CheckStarted` precedes its `CheckFinished` exactly once.
struct Board {
    ids: Vec<String>,
    started: Vec<bool>,
    results: Vec<Option<CheckResult>>,
}

impl Board {
    fn start(&mut self, i: usize, sink: &mut (dyn Sink + Send)) {
        if !self.started[i] {
            self.started[i] = true;
            sink.event(&RunEvent::CheckStarted { id: self.ids[i].clone() });
        }
    }

    fn finish(&mut self, i: usize, r: CheckResult, sink: &mut (dyn Sink + Send)) {
        self.start(i, sink);
        sink.event(&RunEvent::CheckFinished(Box::new(r.clone())));
        self.results[i] = Some(r);
    }
}

fn stopped_result(check: &PlannedCheck, why: String) -> CheckResult {
    CheckResult {
        failure: Some(Failure { message: why, ..Failure::default() }),
        ..CheckResult::new(&check.meta(), Outcome::Error)
    }
}

/// Runs one check; also returns the checks a failed setup step may defer to.
async fn run_check(ctx: &Ctx, check: &PlannedCheck, timeout: Duration) -> (CheckResult, Vec<String>) {
    let started = Instant::now();
    let meta = check.meta();
    let mut run = CheckRun::new(ctx, check.test.id.clone(), base_vars(ctx, check));
    run.deadline = Some(started + timeout);
    run.binding = check.binding;
    let mut outcome = tokio::time::timeout(timeout, run_test(&mut run, &check.test)).await;
    let mut causes = Vec::new();
    if let Ok(Err(StepFail::Prerequisite { causes: c, failure })) = outcome {
        causes = c;
        outcome = Ok(Err(*failure));
    }
    let mut result = match outcome {
        Err(_) => CheckResult {
            failure: Some(Failure {
                message: format!("the check did not finish within {} ms (--timeout)", timeout.as_millis()),
                ..Failure::default()
            }),
            ..CheckResult::new(&meta, Outcome::Error)
        },
        Ok(Ok(())) => CheckResult::new(&meta, Outcome::Pass),
        Ok(Err(StepFail::Violation(f))) => CheckResult::violated(&meta, ctx.strict, redact_failure(&ctx.redactor, f)),
        Ok(Err(StepFail::Skip(reason, detail))) => CheckResult::skipped(&meta, reason, ctx.redactor.redact(&detail)),
        Ok(Err(StepFail::Undecided(f))) => {
            CheckResult { failure: Some(redact_failure(&ctx.redactor, f)), ..CheckResult::new(&meta, Outcome::Error) }
        }
        // Unwrapped above; a prerequisite failure never nests.
        Ok(Err(StepFail::Prerequisite { .. })) => CheckResult::new(&meta, Outcome::Error),
    };
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.workaround = run.workaround_notes();
    result.evidence = run.evidence;
    (result, causes)
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

fn base_vars(ctx: &Ctx, check: &PlannedCheck) -> Vars {
    let mut v = Vars::new();
    v.set("prompt", json!(ctx.prompt));
    let f = ctx.behaviors.follow_ups(&check.test.requires_behaviors);
    if let Some(t) = f.followup {
        v.set("followup", json!(t));
    }
    if let Some(t) = f.again {
        v.set("again", json!(t));
    }
    v.set("agentUrl", json!(ctx.rpc_url));
    // The HTTP+JSON interface, with the tenant's path segment when it has one: `{{restUrl}}/tasks/…`.
    let rest = match ctx.rest_tenant.as_str() {
        "" => ctx.rest_url.trim_end_matches('/').to_owned(),
        t => format!("{}/{t}", ctx.rest_url.trim_end_matches('/')),
    };
    v.set("restUrl", json!(rest));
    v.set("baseUrl", json!(ctx.base_url));
    v.set("cardUrl", json!(ctx.discovery.card_url));
    if let Some(hook) = &ctx.webhook {
        v.set("webhookUrl", json!(hook.new_endpoint().0));
    }
    // Where push configs point when nothing is to be delivered (creating, reading, listing,
    // deleting them): a public name, so that an agent guarding against SSRF (§13.2: "Reject
    // private IP ranges") takes it as it takes a real client's; only delivery needs the kit's own
    // receiver, which listens on loopback.
    v.set("pushUrl", json!(super::security::push_url()));
    v
}

/// Whether the card lists any interface at all.
fn declares_interfaces(card: &Value) -> bool {
    card.get("supportedInterfaces").and_then(Value::as_array).is_some_and(|a| !a.is_empty())
}

/// The card check that requires supportedInterfaces, when it failed.
fn failed_card_check(others: &[CheckResult]) -> Option<&'static str> {
    const CARD_INTERFACES: &str = "CARD-DISC-002";
    others
        .iter()
        .any(|r| r.id == CARD_INTERFACES && matches!(r.outcome, Outcome::Fail | Outcome::Warn))
        .then_some(CARD_INTERFACES)
}

fn decide_synthetic(ctx: &Ctx, check: &PlannedCheck, others: &[CheckResult]) -> CheckResult {
    let meta = check.meta();
    match meta.id.as_str() {
        WIRE_SCHEMA => wire_schema(ctx, &meta, others),
        ID_ECHO => ids_echoed(ctx, &meta),
        DATA_ARRAY => error_details(ctx, &meta, Fault::NotAnArray, others),
        DATA_TYPED => error_details(ctx, &meta, Fault::Untyped, others),
        ERROR_STATUS => error_statuses(ctx, &meta, others),
        INTERFACE => match &ctx.interface_problem {
            None => CheckResult::new(&meta, Outcome::Pass),
            // A card without the REQUIRED supportedInterfaces names nothing to use: that is the
            // card check's finding, decided, and no interface is left undecided by it.
            Some(why) if !declares_interfaces(&ctx.discovery.card) => match failed_card_check(others) {
                Some(card) => CheckResult {
                    depends_on: Some(card.to_owned()),
                    ..CheckResult::skipped(&meta, SkipReason::DependsOnFailed, format!("{card} failed: {why}"))
                },
                None => CheckResult {
                    failure: Some(Failure { message: why.clone(), ..Failure::default() }),
                    ..CheckResult::new(&meta, Outcome::Error)
                },
            },
            Some(why) => CheckResult {
                failure: Some(Failure { message: why.clone(), ..Failure::default() }),
                ..CheckResult::new(&meta, Outcome::Error)
            },
        },
        DIAGNOSIS => diagnose::verdict(ctx, &meta),
        REST_SSE => rest_streams(ctx, &meta),
        SECRET_CREDENTIAL => leaks(ctx, &meta, |place| place != CANARY_PLACE),
        SECRET_HEADER => leaks(ctx, &meta, |place| place == CANARY_PLACE),
        other => CheckResult {
            failure: Some(Failure {
                message: format!("{other} is declared synthetic, but the engine computes no such check"),
                ..Failure::default()
            }),
            ..CheckResult::new(&meta, Outcome::Error)
        },
    }
}

/// Where the header canary is sent; every other canary is a credential.
const CANARY_PLACE: &str = "the X-A2A-Conform-Canary header";

/// Judges the canaries sent to places `which` picks: pass when no answer carried one.
fn leaks(ctx: &Ctx, meta: &crate::report::CheckMeta, which: impl Fn(&str) -> bool) -> CheckResult {
    if !ctx.guard.canary_places().iter().any(|p| which(p)) {
        return CheckResult::skipped(meta, SkipReason::CredentialsNotSupplied, "no such value was sent in this run");
    }
    let found: Vec<_> = ctx.guard.leaks().into_iter().filter(|l| which(&l.canary)).collect();
    let Some(first) = found.first() else {
        return CheckResult::new(meta, Outcome::Pass);
    };
    let shown: Vec<String> =
        found.iter().take(8).map(|l| format!("{}: {} came back in the {}", l.origin, l.canary, l.place)).collect();
    CheckResult::violated(
        meta,
        ctx.strict,
        Failure {
            message: format!(
                "{} answer(s) carried a value the kit sent as a secret; first: {} in {} ({})",
                found.len(),
                first.canary,
                first.place,
                first.origin
            ),
            step_id: None,
            pointer: None,
            expected: Some("no answer contains a credential the request carried".into()),
            actual: Some(shown.join("\n")),
        },
    )
}

fn rest_streams(ctx: &Ctx, meta: &crate::report::CheckMeta) -> CheckResult {
    let seen = ctx.rest_streams.lock().unwrap_or_else(|p| p.into_inner());
    if seen.read == 0 {
        return CheckResult::skipped(meta, SkipReason::Filtered, "no HTTP+JSON stream was read in this run");
    }
    if seen.wrapped.is_empty() {
        return CheckResult {
            measurement: Some(format!("{} stream(s), every event a bare StreamResponse", seen.read)),
            ..CheckResult::new(meta, Outcome::Pass)
        };
    }
    CheckResult::violated(
        meta,
        ctx.strict,
        Failure {
            message: format!(
                "HTTP+JSON stream events came as JSON-RPC responses (`jsonrpc`, `result`) instead of bare StreamResponses: {}",
                seen.wrapped.join("; ")
            ),
            expected: Some("data: a StreamResponse ({\"task\": …}, {\"statusUpdate\": …}, …)".into()),
            actual: Some("data: {\"jsonrpc\": \"2.0\", \"result\": …}".into()),
            ..Failure::default()
        },
    )
}

fn ids_echoed(ctx: &Ctx, meta: &crate::report::CheckMeta) -> CheckResult {
    let ids = ctx.ids.lock().unwrap_or_else(|p| p.into_inner());
    if ids.judged == 0 {
        // No answer came because the card named no interface to send to: the interface check's
        // story, which this one waits on like every check that needed the interface.
        if let Some(why) = ctx.interface_problem.as_ref().filter(|_| ctx.rpc_url.is_empty()) {
            return CheckResult {
                depends_on: Some(INTERFACE.to_owned()),
                ..CheckResult::skipped(meta, SkipReason::DependsOnFailed, format!("{INTERFACE}: {why}"))
            };
        }
        return CheckResult::skipped(meta, SkipReason::Filtered, "no JSON-RPC answer was received in this run");
    }
    let Some(first) = ids.wrong.first() else {
        return CheckResult::new(meta, Outcome::Pass);
    };
    let show = |v: &Option<Value>| v.as_ref().map_or_else(|| "no id member".to_owned(), Value::to_string);
    let code = |c: Option<i64>| c.map_or_else(|| "a result".to_owned(), |c| format!("error {c}"));
    let shown: Vec<String> = ids
        .wrong
        .iter()
        .map(|w| format!("{}: sent id {}, got {} ({})", w.origin, w.sent, show(&w.got), code(w.code)))
        .collect();
    let message = format!(
        "{} of {} JSON-RPC answers do not carry their request's id; first: sent {}, got {} ({}, {})",
        ids.wrong_total,
        ids.judged,
        first.sent,
        show(&first.got),
        code(first.code),
        first.origin
    );
    run_wide(ctx, meta, message, Some("/id"), "the id of the request each answer answers".to_owned(), &shown)
}

/// Judges the details of every JSON-RPC error of the run that asked for 1.0 for one `fault`; the
/// check probing that fault on one error (CORE-ERR-007, CORE-ERR-008) has it first: an agent that
/// breaks §9.5 there is that check's finding.
fn error_details(ctx: &Ctx, meta: &crate::report::CheckMeta, fault: Fault, others: &[CheckResult]) -> CheckResult {
    let probe = match fault {
        Fault::NotAnArray => "CORE-ERR-007",
        Fault::Untyped => "CORE-ERR-008",
    };
    // The probe's finding, or the one it waited on (the same errors judged first by their code, a
    // version refused): one story, told where it began.
    if let Some(r) = others.iter().find(|r| r.id == probe) {
        let deferred = match (r.outcome, &r.depends_on) {
            (Outcome::Fail | Outcome::Warn, _) => {
                let why = r.failure.as_ref().map_or("", |f| f.message.as_str());
                Some((probe.to_owned(), format!("{probe} {}: {why}", r.outcome.as_str())))
            }
            (Outcome::Skip, Some(root)) if r.skip_reason == Some(SkipReason::DependsOnFailed) => Some((
                root.clone(),
                format!("{probe}, which judges the same, waits on it: {}", r.skip_detail.as_deref().unwrap_or("")),
            )),
            _ => None,
        };
        if let Some((cause, detail)) = deferred {
            return CheckResult {
                depends_on: Some(cause),
                ..CheckResult::skipped(meta, SkipReason::DependsOnFailed, detail)
            };
        }
    }
    let ledger = ctx.details.lock().unwrap_or_else(|p| p.into_inner());
    let (judged, faulty, total, what, due) = match fault {
        Fault::NotAnArray => {
            (ledger.with_data, &ledger.not_array, ledger.not_array_total, "is no array", "an array of objects")
        }
        Fault::Untyped => (
            ledger.arrays,
            &ledger.untyped,
            ledger.untyped_total,
            "holds an element without a string @type",
            "every element an object with a string @type",
        ),
    };
    if judged == 0 {
        // The details are optional (§3.3.2): an agent whose errors carry none has nothing to judge.
        let why = match fault {
            Fault::NotAnArray => {
                "no JSON-RPC error to a request asking for A2A 1.0 carried data in this run (the details are optional)"
            }
            Fault::Untyped => {
                "no JSON-RPC error to a request asking for A2A 1.0 carried a data array in this run (the details are optional)"
            }
        };
        return CheckResult::skipped(meta, SkipReason::BehaviorNotAvailable, why);
    }
    let Some(first) = faulty.first() else {
        return CheckResult {
            measurement: Some(format!("{judged} error(s) with details, each as §9.5 maps them")),
            ..CheckResult::new(meta, Outcome::Pass)
        };
    };
    let code =
        |c: Option<i64>| c.map_or_else(|| "an error without a numeric code".to_owned(), |c| format!("error {c}"));
    let shown: Vec<String> =
        faulty.iter().map(|f| format!("{}: {} with data {}", f.origin, code(f.code), compact(&f.data))).collect();
    let message = format!(
        "{total} of {judged} JSON-RPC errors have data that {what}; first: {} ({})",
        code(first.code),
        first.origin
    );
    run_wide(ctx, meta, message, Some("/error/data"), due.to_owned(), &shown)
}

/// Judges the HTTP status of every HTTP+JSON A2A error of the run that asked for 1.0. A missing
/// task's status is REST-ERR-002's when that check found it wrong: the same errors, one story.
fn error_statuses(ctx: &Ctx, meta: &crate::report::CheckMeta, others: &[CheckResult]) -> CheckResult {
    const PROBE: &str = "REST-ERR-002";
    const TASK_NOT_FOUND: i64 = -32001;
    let probe_found =
        others.iter().any(|r| r.id.starts_with(PROBE) && matches!(r.outcome, Outcome::Fail | Outcome::Warn));
    let ledger = ctx.statuses.lock().unwrap_or_else(|p| p.into_inner());
    if ledger.judged == 0 {
        return CheckResult::skipped(
            meta,
            SkipReason::BehaviorNotAvailable,
            "no HTTP+JSON answer to a request asking for A2A 1.0 named an A2A error in this run (by its ErrorInfo reason or status name)",
        );
    }
    let mine = |code: i64| !(probe_found && code == TASK_NOT_FOUND);
    let total: usize = ledger.faulty_by_code.iter().filter(|(c, _)| mine(**c)).map(|(_, n)| n).sum();
    let kept: Vec<_> = ledger.faulty.iter().filter(|f| mine(f.code)).collect();
    let Some(first) = kept.first() else {
        if ledger.faulty_by_code.is_empty() {
            return CheckResult {
                measurement: Some(format!("{} A2A error(s), each with its §5.4 status", ledger.judged)),
                ..CheckResult::new(meta, Outcome::Pass)
            };
        }
        return CheckResult {
            depends_on: Some(PROBE.to_owned()),
            ..CheckResult::skipped(
                meta,
                SkipReason::DependsOnFailed,
                format!("{PROBE} failed: the only A2A errors with another status than §5.4's are TaskNotFoundError's"),
            )
        };
    };
    let due = |code: i64| {
        crate::client::rest::statuses_in_1_0(code).iter().map(u16::to_string).collect::<Vec<_>>().join(" or ")
    };
    let name = |code: i64| crate::report::errors::described(code);
    let shown: Vec<String> = kept
        .iter()
        .map(|f| {
            format!(
                "{}: {} answered {} with HTTP {} ({} due)",
                f.origin,
                f.request,
                name(f.code),
                f.status,
                due(f.code)
            )
        })
        .collect();
    let message = format!(
        "{total} of {} HTTP+JSON A2A errors carry another HTTP status than §5.4 maps them to; first: {} with HTTP {} where {} is due ({})",
        ledger.judged,
        name(first.code),
        first.status,
        due(first.code),
        first.request
    );
    run_wide(ctx, meta, message, None, format!("HTTP {} for {}", due(first.code), name(first.code)), &shown)
}

fn wire_schema(ctx: &Ctx, meta: &crate::report::CheckMeta, others: &[CheckResult]) -> CheckResult {
    let graded = others.iter().filter(|r| r.outcome != Outcome::Skip).count();
    if graded == 0 {
        return CheckResult::skipped(meta, SkipReason::Filtered, "no check ran, so nothing was received");
    }
    let wire = ctx.wire.lock().unwrap_or_else(|p| p.into_inner());
    let Some(first) = wire.first() else {
        return CheckResult::new(meta, Outcome::Pass);
    };
    let shown: Vec<String> =
        wire.iter().take(5).map(|w| format!("{}: {} at {}: {}", w.origin, w.def, w.pointer, w.message)).collect();
    let message = format!("{} schema violation(s); first: {} ({})", wire.len(), first.message, first.origin);
    run_wide(ctx, meta, message, Some(&first.pointer), format!("a valid {}", first.def), &shown)
}

/// The finding of a check judged over the whole run: `shown` lists its instances as `CHECK /
/// step: …` (redacted), the first of which a cause links by.
fn run_wide(
    ctx: &Ctx,
    meta: &crate::report::CheckMeta,
    message: String,
    pointer: Option<&str>,
    expected: String,
    shown: &[String],
) -> CheckResult {
    CheckResult::violated(
        meta,
        ctx.strict,
        Failure {
            message,
            step_id: None,
            pointer: pointer.map(str::to_owned),
            expected: Some(expected),
            actual: Some(ctx.redactor.redact(&shown.join("\n"))),
        },
    )
}

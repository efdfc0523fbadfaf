//! What a running check holds: the run-wide context (client, card, receiver, settings), the
//! check's own variables and evidence, what the run's workaround changed for it, and how a step
//! stops (violation or undecided). Every other engine file works on these types; this one imports
//! only the run-wide parts a context holds (guard, receiver, diagnosis, workaround).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::diagnosis::{ANCHOR, Diagnosis};
use super::error_details::DetailsLedger;
use super::error_status::StatusLedger;
use super::guard::{AFTER_TRIP, Guard};
use super::ids::IdLedger;
use super::webhook::WebhookReceiver;
use super::workaround::Workaround;
use crate::client::discovery::Discovery;
use crate::client::http::{HttpClient, HttpExchange, HttpRequest, StreamExchange};
use crate::client::redact::Redactor;
use crate::report::{Evidence, Failure, SkipReason};
use crate::sse::SseLimits;
use crate::suite::assert::Mismatch;
use crate::suite::behaviors::Behaviors;
use crate::suite::binding::Binding;
use crate::suite::schema;
use crate::suite::template::{self, Vars};

/// Exchanges kept as evidence per check: the last few tell the story; more bloat the report.
const MAX_EVIDENCE: usize = 4;

/// Schema violations kept for WIRE-SCHEMA across the run.
const MAX_WIRE_VIOLATIONS: usize = 200;

/// Everything a check needs about the target and the run.
pub struct Ctx {
    /// Carries the user's headers on every request.
    pub client: HttpClient,
    /// Replaces user secrets in everything reported.
    pub redactor: Redactor,
    pub discovery: Discovery,
    /// Interface URL all JSON-RPC calls go to; empty when the card offers no usable interface.
    pub rpc_url: String,
    /// The interface's tenant, echoed in every request ("" for none).
    pub tenant: String,
    /// The HTTP+JSON interface's URL, when the run grades that binding ("" otherwise), and its
    /// tenant.
    pub rest_url: String,
    pub rest_tenant: String,
    /// The binding the kit's own requests go over (the diagnosis, behaviour discovery and
    /// confirmation): the first the run grades whose interface can be used, JSON-RPC when it is
    /// declared; `None` when none can be.
    pub primary: Option<Binding>,
    /// HTTP+JSON streams read so far, and where one's events came wrapped in a JSON-RPC envelope
    /// (REST-SSE-001).
    pub rest_streams: Mutex<RestStreams>,
    /// The agent's origin, for raw paths that start with `/`.
    pub base_url: String,
    /// Receiver for push checks; started only when a planned check needs it.
    pub webhook: Option<Arc<WebhookReceiver>>,
    /// `--strict`: SHOULD violations fail.
    pub strict: bool,
    /// How long to wait for what the agent does on its own: a stream to close, a webhook to be
    /// called.
    pub patience: Duration,
    /// Where the behaviours checks need come from, and the user's map texts.
    pub behaviors: Behaviors,
    /// The neutral message contract-free checks send (`{{prompt}}`, `--prompt`).
    pub prompt: String,
    /// Schema violations seen in any answer, for the synthetic WIRE-SCHEMA check.
    pub wire: Mutex<Vec<WireViolation>>,
    /// Every JSON-RPC answer's id against its request's (JSONRPC-ID-001).
    pub ids: Mutex<IdLedger>,
    /// Every JSON-RPC error's details against §9.5 (CORE-ERR-007, CORE-ERR-008).
    pub details: Mutex<DetailsLedger>,
    /// Every HTTP+JSON A2A error's HTTP status against §5.4 (REST-ERR-002's, on every path).
    pub statuses: Mutex<StatusLedger>,
    /// The circuit breaker, the run deadline and the canaries.
    pub guard: Arc<Guard>,
    /// Why an interface the run grades cannot be used (another host, unreachable, none on the
    /// card); decides KIT-IFACE-001.
    pub interface_problem: Option<String>,
    /// The callers the security checks speak as.
    pub callers: Callers,
    /// Keys the user trusts to sign the agent's cards (`--trust-key`).
    pub trust_keys: Vec<crate::card::PublicKey>,
    /// What the diagnosis of the neutral SendMessage found (KIT-DIAG-001); `None` when it did not
    /// run.
    pub diagnosis: Option<Diagnosis>,
    /// The change the diagnosis found and the run applies to every check's requests but
    /// CORE-SEND-001's (off with `--no-workaround`).
    pub workaround: Option<Workaround>,
}

/// What the run saw of HTTP+JSON streams.
#[derive(Debug, Default)]
pub struct RestStreams {
    pub read: usize,
    /// Where an event's data was a JSON-RPC response, not a bare StreamResponse (first few).
    pub wrapped: Vec<String>,
}

/// Whose credentials a request carries (ext step `caller`).
#[derive(Debug, Clone, Default)]
pub struct Callers {
    /// Names of the first caller's credential headers (among the user's `--header`s): what
    /// `caller: none` leaves off and `caller: wrong` corrupts.
    pub credential_headers: Vec<String>,
    /// The first caller's credential headers with their values (the scheme a wrong one keeps).
    pub values: Vec<(String, String)>,
    /// The second caller's headers (`--header-b`), sent instead of the first caller's credentials.
    pub second: Vec<(String, String)>,
}

impl Ctx {
    /// Sends through the guard: refused once the run has stopped; every outcome counts toward the
    /// circuit breaker; every answer is searched for the canaries.
    pub async fn exchange(&self, origin: &str, req: HttpRequest) -> Result<HttpExchange, String> {
        self.exchange_within(origin, req, self.client.config().timeout).await
    }

    /// [`Ctx::exchange`] within `limit`, when that is shorter than the client's timeout.
    pub async fn exchange_within(
        &self,
        origin: &str,
        req: HttpRequest,
        limit: Duration,
    ) -> Result<HttpExchange, String> {
        if let Some(why) = self.guard.stopped() {
            return Err(why);
        }
        let url = req.url.clone();
        // A run that stops (deadline, signal, unresponsive agent) does not wait for the answers in flight.
        let x = tokio::select! {
            x = self.client.send_within(req, limit) => x,
            why = self.guard.wait_stop() => return Err(why),
        };
        // An exchange left less than half the timeout by its check's deadline says little about
        // the agent when it runs out: a slow answer is not a silent agent.
        let short = limit < self.client.config().timeout / 2;
        if !(short && matches!(x, Err(crate::client::http::ClientError::Timeout { .. }))) {
            self.guard.record(&url, &x);
        }
        let x = x.map_err(|e| format!("request failed: {e}"))?;
        self.guard.scan_exchange(origin, &x);
        self.ids.lock().unwrap_or_else(|p| p.into_inner()).note(origin, &x);
        self.note_error(origin, &x);
        Ok(x)
    }

    /// Enters an answer in the run's error ledgers (details, HTTP status).
    fn note_error(&self, origin: &str, x: &HttpExchange) {
        self.details.lock().unwrap_or_else(|p| p.into_inner()).note(origin, x);
        self.statuses.lock().unwrap_or_else(|p| p.into_inner()).note(origin, x);
    }

    /// The interface URL and tenant of the binding the kit's own requests go over.
    pub fn primary_interface(&self) -> (Binding, &str, &str) {
        match self.primary {
            Some(Binding::HttpJson) => (Binding::HttpJson, &self.rest_url, &self.rest_tenant),
            _ => (Binding::JsonRpc, &self.rpc_url, &self.tenant),
        }
    }

    /// The tenant the kit's own requests carry (that of the binding they go over).
    pub fn primary_tenant(&self) -> &str {
        self.primary_interface().2
    }

    /// The request of `method` with `params` (tenant included) over the primary binding, with the
    /// run's workaround applied; `id` is the JSON-RPC request id.
    pub fn own_request(&self, id: &str, method: &str, params: Value) -> Result<HttpRequest, String> {
        let (binding, url, _) = self.primary_interface();
        let mut req = match binding {
            Binding::JsonRpc if crate::client::rest::streams(method) => {
                crate::client::rpc::rpc_stream_request(url, &Value::from(id), method, Some(params))
            }
            Binding::JsonRpc => crate::client::rpc::rpc_request(url, &Value::from(id), method, Some(params)),
            Binding::HttpJson => crate::client::rest::rest_request(url, method, &params)?,
        };
        self.adapt(&mut req);
        Ok(req)
    }

    /// An answer to one of [`Ctx::own_request`]'s, in the JSON-RPC shape (`{"result": …}` or
    /// `{"error": …}`) whichever binding carried it.
    pub fn read_own(&self, x: &HttpExchange) -> Result<Value, String> {
        match self.primary {
            Some(Binding::HttpJson) => crate::client::rest::read_answer(x.status, &x.body)
                .ok_or_else(|| format!("HTTP {} with a body that is not JSON", x.status)),
            _ => x.json().map_err(|e| self.redactor.redact(&e)),
        }
    }

    /// A stream event's data from the primary binding as the JSON-RPC event's `result` (an
    /// HTTP+JSON event is the bare StreamResponse).
    pub fn own_event_result(&self, data: &str) -> Option<Value> {
        let v: Value = serde_json::from_str(data).ok()?;
        match self.primary {
            Some(Binding::HttpJson) if v.get("error").is_none() => Some(v),
            _ => v.get("result").cloned(),
        }
    }

    /// Applies the run's workaround to a request the kit makes on its own behalf (not a check's);
    /// returns what changed.
    pub fn adapt(&self, req: &mut HttpRequest) -> Vec<&'static str> {
        self.workaround
            .as_ref()
            .map(|w| match self.primary {
                // The workaround is what the agent accepts over the binding the diagnosis spoke:
                // the other binding's requests go as the spec writes them.
                Some(Binding::HttpJson) => w.rewrite_rest(req, &self.rest_url, false),
                _ => w.rewrite(req, &self.rpc_url, false),
            })
            .unwrap_or_default()
    }

    /// A SendMessage result as the run reads it: wrapped when the workaround reads bare results.
    pub fn read_send(&self, result: &Value) -> Option<Value> {
        self.workaround.as_ref().and_then(|w| w.wrap_result(result))
    }

    /// [`Ctx::exchange`] for an answer that may be an event stream.
    pub async fn exchange_stream(
        &self,
        origin: &str,
        req: HttpRequest,
        limits: &SseLimits,
        stop_after: Option<usize>,
    ) -> Result<StreamExchange, String> {
        if let Some(why) = self.guard.stopped() {
            return Err(why);
        }
        let url = req.url.clone();
        // Once the agent's streams have been found hostile, a stream is still asked for (its
        // answer may be plain JSON) but read only briefly, and one being read stops at once:
        // either way with what came, which the check still judges.
        let guard = &self.guard;
        let tripped = guard.streams_tripped();
        let cut = async move {
            match tripped {
                Some(why) => {
                    tokio::time::sleep(AFTER_TRIP).await;
                    format!("{why}; so the kit reads each stream for {} s only", AFTER_TRIP.as_secs())
                }
                None => guard.wait_streams_tripped().await,
            }
        };
        let x = tokio::select! {
            x = self.client.send_streaming_until(req, limits, stop_after, cut) => x,
            why = self.guard.wait_stop() => return Err(why),
        };
        self.guard.record(&url, &x);
        let x = x.map_err(|e| format!("request failed: {e}"))?;
        self.guard.note_framing(origin, &x);
        self.guard.record_stream(&url, &x);
        self.guard.scan_stream(origin, &x);
        // A stream refused with a plain error is an error answer like any other.
        if !x.is_sse() {
            self.note_error(origin, &x.as_exchange());
        }
        Ok(x)
    }
}

/// One answer that did not match the spec schema.
#[derive(Debug, Clone)]
pub struct WireViolation {
    /// The check and step that received it.
    pub origin: String,
    /// Schema definition it was validated against.
    pub def: String,
    /// JSON pointer in the answer.
    pub pointer: String,
    pub message: String,
}

/// Why a check stopped before passing.
#[derive(Debug)]
pub enum StepFail {
    /// The peer violated the requirement.
    Violation(Failure),
    /// The kit could not decide (transport failure, bad suite data).
    Undecided(Failure),
    /// The check does not apply to what this agent does (its own answers rule it out).
    Skip(SkipReason, String),
    /// A setup step failed; `causes` are the checks that grade that step. Whether this check
    /// reports the failure or defers to one of them depends on how they ended.
    Prerequisite { causes: Vec<String>, failure: Box<StepFail> },
}

impl StepFail {
    pub fn violation(step: &str, message: impl Into<String>) -> Self {
        StepFail::Violation(Failure { message: message.into(), step_id: Some(step.to_owned()), ..Failure::default() })
    }

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

/// How long before a check's deadline its exchanges end, at most (a tenth of what is left when
/// that is less): time for the check to judge what came.
const EXCHANGE_MARGIN: Duration = Duration::from_millis(500);

/// The running state of one check.
pub struct CheckRun<'a> {
    pub ctx: &'a Ctx,
    pub id: String,
    /// Variables and captures, visible to templates.
    pub vars: Vars,
    pub evidence: Vec<Evidence>,
    /// What the workaround changed in this check's requests or in how it read their answers.
    pub worked_around: Mutex<Vec<&'static str>>,
    /// When the check's `--timeout` runs out.
    pub deadline: Option<Instant>,
    /// The binding this check's operations go over.
    pub binding: Binding,
    /// The last stream a step judged was read whole: every event a response holding a result, its
    /// framing sound. A violation then found in it is the check's own, not its framing owner's.
    pub stream_read_whole: bool,
    /// The last stream a step judged came as SSE (labelled so, or framed so under another label):
    /// what is wrong in it is not its label's finding.
    pub stream_was_sse: bool,
    /// The step's answer was a result its `only_if` guard accepted, or any result when it has no
    /// guard (see `Step::own_result`).
    pub guarded_result: bool,
    /// The step's HTTP+JSON answer was an error that names no A2A error (`client::rest::unnamed_error`):
    /// what the step expected of its code is then REST-ERR-001's to say.
    pub unnamed_error: bool,
}

impl<'a> CheckRun<'a> {
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
            if wire.len() < MAX_WIRE_VIOLATIONS {
                wire.push(WireViolation { origin: format!("{} / {step}", self.id), def: def.into(), pointer, message });
            }
        }
    }

    /// A new running check.
    pub fn new(ctx: &'a Ctx, id: impl Into<String>, vars: Vars) -> Self {
        CheckRun {
            ctx,
            id: id.into(),
            vars,
            evidence: Vec::new(),
            worked_around: Mutex::new(Vec::new()),
            deadline: None,
            binding: Binding::JsonRpc,
            stream_read_whole: false,
            stream_was_sse: false,
            guarded_result: false,
            unnamed_error: false,
        }
    }

    /// Sends a request of this check's step through the guard, under the run's workaround.
    pub(crate) async fn exchange(&self, step: &str, req: HttpRequest) -> Result<HttpExchange, StepFail> {
        self.exchange_as(step, req, false).await
    }

    /// [`CheckRun::exchange`] for a step that sets `A2A-Version` itself (`own_version`): the
    /// workaround then leaves that header as the step wrote it.
    pub(crate) async fn exchange_as(
        &self,
        step: &str,
        mut req: HttpRequest,
        own_version: bool,
    ) -> Result<HttpExchange, StepFail> {
        self.adapt(&mut req, own_version);
        let limit = self.within().unwrap_or(self.ctx.client.config().timeout);
        self.ctx
            .exchange_within(&format!("{} / {step}", self.id), req, limit)
            .await
            .map_err(|e| StepFail::undecided(step, e))
    }

    pub(crate) async fn exchange_stream(
        &self,
        step: &str,
        req: HttpRequest,
        limits: &SseLimits,
        stop_after: Option<usize>,
    ) -> Result<StreamExchange, StepFail> {
        self.exchange_stream_as(step, req, limits, stop_after, false).await
    }

    pub(crate) async fn exchange_stream_as(
        &self,
        step: &str,
        mut req: HttpRequest,
        limits: &SseLimits,
        stop_after: Option<usize>,
        own_version: bool,
    ) -> Result<StreamExchange, StepFail> {
        self.adapt(&mut req, own_version);
        let mut limits = limits.clone();
        if let Some(within) = self.within() {
            limits.total_timeout = limits.total_timeout.min(within);
            limits.idle_timeout = limits.idle_timeout.min(within);
        }
        self.ctx
            .exchange_stream(&format!("{} / {step}", self.id), req, &limits, stop_after)
            .await
            .map_err(|e| StepFail::undecided(step, e))
    }

    /// How long an exchange may take so that it ends, under its own bound, a little before the
    /// check's deadline: the breakers then learn how it ended instead of seeing it cut off.
    fn within(&self) -> Option<Duration> {
        let left = self.deadline?.saturating_duration_since(Instant::now());
        Some(left.saturating_sub(EXCHANGE_MARGIN.min(left / 10)))
    }

    /// The workaround on one of this check's requests. CORE-SEND-001 is graded on the true 1.0
    /// request: it is the finding the workaround works around.
    pub(crate) fn adapt(&self, req: &mut HttpRequest, own_version: bool) {
        if self.is_anchor() {
            return;
        }
        if let Some(w) = &self.ctx.workaround {
            let notes = match self.ctx.primary {
                Some(Binding::HttpJson) => w.rewrite_rest(req, &self.ctx.rest_url, own_version),
                _ => w.rewrite(req, &self.ctx.rpc_url, own_version),
            };
            self.note(&notes);
        }
    }

    /// Whether this check is the diagnosed one (CORE-SEND-001, over whichever binding grades it),
    /// which is graded on the true 1.0 request and the answer as it came: the shape the other
    /// checks read through is its finding over each binding.
    pub(crate) fn is_anchor(&self) -> bool {
        self.plain_id() == ANCHOR
    }

    /// Whether this check's requirement is the SendMessageResponse shape itself, so that it reads
    /// SendMessage answers as they came, also under a workaround (CORE-SEND-001 always does).
    pub(crate) fn owns_send_shape(&self) -> bool {
        ["KIT-SEND-001", "DM-SERIAL-002"].contains(&self.plain_id())
    }

    /// A SendMessage result as this check reads it for captures: wrapped when the workaround reads
    /// bare results (never for CORE-SEND-001).
    pub(crate) fn read_send(&self, result: &Value) -> Option<Value> {
        if self.is_anchor() {
            return None;
        }
        let wrapped = self.ctx.read_send(result)?;
        self.note(&[super::workaround::BARE_NOTE]);
        Some(wrapped)
    }

    /// The answer to `op` as this check grades it: a SendMessage result as the workaround reads it
    /// (see [`CheckRun::read_send`]), a Task that GetTask or CancelTask answered inside a `task`
    /// wrapper as the Task itself; `None` when it reads as it came. The checks of the answer's shape
    /// read it as it came: the shape is their finding, not every reader's.
    pub(crate) fn read_result(&self, op: &str, result: &Value) -> Option<Value> {
        match op {
            "send_message" if !self.owns_send_shape() => self.read_send(result),
            "get_task" | "cancel_task" if !WRAPPED_TASK_OWNERS.contains(&self.plain_id()) => {
                let inner = super::workaround::wrapped_task(result)?;
                self.note(&[super::workaround::WRAPPED_TASK_NOTE]);
                Some(inner.clone())
            }
            "list_push_configs" if self.plain_id() != BARE_CONFIGS_OWNER => {
                let configs = result.as_array().filter(|a| a.iter().all(Value::is_object))?;
                self.note(&[super::workaround::BARE_CONFIGS_NOTE]);
                Some(serde_json::json!({ "configs": configs }))
            }
            _ => None,
        }
    }

    /// `v`, an answer this check grades, read in the names the run saw the agent use in its
    /// SendMessage answers: task states and roles spelled the 0.3 way as their 1.0 names, members
    /// named by their proto names (`context_id`) as their JSON names. The spelling is its owners'
    /// finding (DM-FMT-002 and the enum checks; DM-FMT-001), not every reader's. An agent whose
    /// SendMessage answers are spelled right is read as it came everywhere, so that a wrong
    /// spelling elsewhere stays in every check's sight.
    /// CORE-SEND-001 reads the names too: a member it requires that came under its proto name is
    /// the naming's finding, not a second one of its own.
    pub(crate) fn read_spellings(&self, v: &mut Value) {
        let Some(w) = self.ctx.workaround.as_ref() else { return };
        let id = self.plain_id();
        if w.legacy_answers
            && !self.is_anchor()
            && !ENUM_OWNERS.contains(&id)
            && super::workaround::read_legacy_enums(v)
        {
            self.note(&[super::workaround::LEGACY_ANSWERS_NOTE]);
        }
        if w.snake_answers && id != SNAKE_OWNER && super::workaround::read_snake_members(v) {
            self.note(&[super::workaround::SNAKE_ANSWERS_NOTE]);
        }
    }

    /// A JSON-RPC stream's event that came as a bare StreamResponse, without the JSON-RPC
    /// envelope, as the result it would have held: the envelope is JSONRPC-SSE-001's finding, what
    /// the event says every other stream check's. `None` for JSONRPC-SSE-001 itself, and for an
    /// event that is not a StreamResponse either.
    pub(crate) fn read_bare_event(&self, event: &Value) -> Option<Value> {
        if self.plain_id() == BARE_EVENTS_OWNER || !super::workaround::is_bare_stream_response(event) {
            return None;
        }
        self.note(&[super::workaround::BARE_EVENTS_NOTE]);
        Some(event.clone())
    }

    /// The check's id whatever binding grades it.
    fn plain_id(&self) -> &str {
        crate::suite::binding::Binding::plain_id(&self.id)
    }

    fn note(&self, notes: &[&'static str]) {
        let mut seen = self.worked_around.lock().unwrap_or_else(|p| p.into_inner());
        for n in notes {
            if !seen.contains(n) {
                seen.push(n);
            }
        }
    }

    /// What the workaround changed for this check, in the order it first happened.
    pub fn workaround_notes(&self) -> Vec<String> {
        self.worked_around.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|n| (*n).to_owned()).collect()
    }

    /// Renders suite data with the check's variables; a template error is the suite's fault.
    pub(crate) fn render(&self, step: &str, v: &Value) -> Result<Value, StepFail> {
        template::render(v, &self.vars).map_err(|e| StepFail::undecided(step, format!("suite data: {e}")))
    }

    /// [`CheckRun::render`] for a string.
    pub(crate) fn render_str(&self, step: &str, s: &str) -> Result<String, StepFail> {
        template::render_str(s, &self.vars).map_err(|e| StepFail::undecided(step, format!("suite data: {e}")))
    }
}

/// A JSON-RPC error as a finding names it: its code with the agent's message, `-32603 'Internal
/// error'`, so that a reader sees what the agent meant, not only which number it chose.
pub fn code_and_message(err: &Value) -> String {
    let code = err.get("code").map_or_else(|| "no code".to_owned(), compact);
    match err.get("message").and_then(Value::as_str) {
        Some(m) => format!("{code} '{}'", truncate(m, 200)),
        None => code,
    }
}

/// Compact JSON, truncated for findings.
pub fn compact(v: &Value) -> String {
    truncate(&v.to_string(), 400)
}

/// `s` cut to at most `max` bytes on a char boundary, saying how long it was.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

/// The checks whose finding a reading under the workaround note `note` reads through: a check
/// graded that way did not end as it did for what they judge, so they are not its cause.
pub(crate) fn read_through(note: &str) -> &'static [&'static str] {
    use super::workaround as w;
    match note {
        n if n == w::WRAPPED_TASK_NOTE => &WRAPPED_TASK_OWNERS,
        n if n == w::BARE_EVENTS_NOTE => &[BARE_EVENTS_OWNER],
        n if n == w::LEGACY_ANSWERS_NOTE => &ENUM_OWNERS,
        n if n == w::SNAKE_ANSWERS_NOTE => &[SNAKE_OWNER],
        n if n == w::BARE_CONFIGS_NOTE => &[BARE_CONFIGS_OWNER],
        _ => &[],
    }
}

/// The checks of the shape of GetTask's and CancelTask's answers (a Task, not a wrapper): they
/// read those answers as they came.
const WRAPPED_TASK_OWNERS: [&str; 2] = ["KIT-TASK-001", "KIT-CANCEL-006"];
/// The check of the JSON-RPC envelope of every SSE event.
const BARE_EVENTS_OWNER: &str = "JSONRPC-SSE-001";
/// The checks of how answers spell enum values: they read the 0.3 spellings as they came.
const ENUM_OWNERS: [&str; 5] = ["DM-FMT-002", "KIT-TASK-004", "KIT-LIST-020", "KIT-SEND-006", "KIT-STREAM-017"];
/// The check of the names of data-model members (camelCase, not the proto's snake_case).
const SNAKE_OWNER: &str = "DM-FMT-001";
/// The check of the shape of ListTaskPushNotificationConfigs's answer (an object whose `configs`
/// holds them, not a bare array).
const BARE_CONFIGS_OWNER: &str = "KIT-PUSH-011";

//! Named, single spec violations the mock can be told to commit (`mock --fault ID`), as data:
//! each fault in `mock-peer/faults/*.json` is a list of generic mutations of what the mock receives
//! or sends. The kill matrix (`a2a-conform selftest`) proves every check fails under some fault.

pub mod apply;
pub mod layer;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::binding::Binding;

/// Fault files compiled into the binary.
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_faults.rs"));

/// Where a response mutation applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// A JSON-RPC `result` (non-streaming answers and each stream event's result).
    #[default]
    Result,
    /// A JSON-RPC `error` object.
    Error,
    /// The whole JSON-RPC envelope.
    Envelope,
    /// The public agent card as the agent builds it: applied at start-up, before the card is
    /// signed, so the signature covers the card as served (a card defect, not tampering).
    Card,
    /// The extended card (GetExtendedAgentCard's result) as the agent builds it, before signing.
    ExtendedCard,
    /// The public card as served, after it was signed: an edit the signature does not cover
    /// (tampering, §8.4.3). To edit the extended card after signing, target GetExtendedAgentCard's
    /// `result`.
    SignedCard,
    /// The body of a push notification.
    Push,
}

/// One generic change. `methods` (JSON-RPC method names) narrows where it applies; empty: everywhere.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Mutation {
    /// Renames a key wherever it occurs in the target.
    RenameKey {
        from: String,
        to: String,
        #[serde(default)]
        target: Target,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Removes a key wherever it occurs, or only at `pointer` when given.
    DropKey {
        /// Key name (recursive) — or use `pointer`.
        #[serde(default)]
        key: Option<String>,
        /// JSON pointer from the target root.
        #[serde(default)]
        pointer: Option<String>,
        /// Only a value equal to this (e.g. `""`: a member left out when empty).
        #[serde(default)]
        when_equals: Option<Value>,
        /// Only when the target has something at this pointer (e.g. `/configs/1`: when there are
        /// two or more).
        #[serde(default)]
        when_present: Option<String>,
        /// With `key`: only from objects whose members have these values (e.g.
        /// `{"role": "ROLE_AGENT"}`: the agent's messages, not the client's).
        #[serde(default)]
        where_members: Option<serde_json::Map<String, Value>>,
        #[serde(default)]
        target: Target,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Sets the value at a JSON pointer (creating the last member if missing).
    Set {
        /// JSON pointer from the target root.
        pointer: String,
        value: Value,
        /// Only when the value there equals this (e.g. `[]`: an empty list).
        #[serde(default)]
        when_equals: Option<Value>,
        /// Only when the target has something at this pointer (e.g. `/error`: error answers).
        #[serde(default)]
        when_present: Option<String>,
        #[serde(default)]
        target: Target,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Copies the value at `from` to `to` (creating the last member), when there is one: the
    /// answer's own ids into a member a fault adds, say.
    Copy {
        /// JSON pointer from the target root.
        from: String,
        /// JSON pointer from the target root.
        to: String,
        #[serde(default)]
        target: Target,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Adds the member `key` to every object of the target that lacks it, except inside the
    /// free-form `metadata` and `data` values: an agent of a later protocol version, whose unknown
    /// members a client ignores (§5.7).
    AddEverywhere {
        key: String,
        value: Value,
        #[serde(default)]
        target: Target,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Replaces every string value equal to `from`.
    ReplaceString {
        from: String,
        to: Value,
        #[serde(default)]
        target: Target,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Rewrites string values matching a regular expression (`$1`… refer to groups); only the values
    /// of members named `key` when given (e.g. timestamps with an offset instead of `Z`).
    RewriteString {
        pattern: String,
        to: String,
        /// Only values of members with this name.
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        target: Target,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Copies the value of a request header into the response at `pointer` (leaks it), appended to
    /// the string already there when `append`. Applies to JSON answers (not streams, card or push).
    SetFromHeader {
        /// Request header name.
        name: String,
        /// JSON pointer from the target root.
        pointer: String,
        /// Append to an existing string instead of replacing it.
        #[serde(default)]
        append: bool,
        #[serde(default)]
        target: Target,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Replaces the result with its member (e.g. a bare Task instead of `{task: …}`).
    UnwrapResult {
        /// The member to lift.
        member: String,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Changes an error code (every code when `from` is absent).
    ErrorCode {
        /// Only this code.
        #[serde(default)]
        from: Option<i64>,
        to: i64,
        /// Only errors whose message contains this (e.g. `Task not found`: a missing task, not a
        /// missing push config, which has the same code).
        #[serde(default)]
        message_contains: Option<String>,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Turns an error answer into a result answer holding `value`.
    ErrorToResult {
        /// Only this code.
        #[serde(default)]
        code: Option<i64>,
        value: Value,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Changes the request before the mock sees it (the mock then "ignores" what was removed).
    RequestDrop {
        /// JSON pointer into the request envelope, e.g. `/params/historyLength`.
        pointer: String,
        /// Only a value whose JSON text matches this regular expression (e.g. `^[0-9]+$`: an agent
        /// that validates the field, then ignores it, still refuses `"ten"` or `-1`).
        #[serde(default)]
        matching: Option<String>,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Moves an RFC 3339 timestamp of the request by `ms` milliseconds before the mock sees it
    /// (e.g. `statusTimestampAfter` one ms later: the bound read as exclusive).
    RequestShiftTime {
        /// JSON pointer into the request envelope.
        pointer: String,
        ms: i64,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Sets a value in the request before the mock sees it.
    RequestSet {
        /// JSON pointer into the request envelope.
        pointer: String,
        value: Value,
        /// Only when the request has nothing there (e.g. give a notification an id).
        #[serde(default)]
        if_absent: bool,
        /// Only when the request has something at this pointer (e.g. a field the mock should not
        /// know about).
        #[serde(default)]
        when_present: Option<String>,
        /// Only when the request has nothing at this pointer (e.g. `/params/message/taskId`: a
        /// message that starts a task, not a follow-up).
        #[serde(default)]
        when_absent: Option<String>,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Enum spelling in requests (§5.5), as by an agent whose model knows only the 0.3 names: a
    /// request whose `role`, `state` or `status` member holds a 1.0 enum name (`ROLE_USER`,
    /// `ROLE_AGENT`, `TASK_STATE_*`) is answered HTTP 500 `text/plain` before the mock sees it, and
    /// the 0.3 lowercase spellings (`user`, `agent`, `completed`, `input-required`, ...) are read as
    /// those names, so that the mock serves them as it serves the 1.0 request.
    LegacyEnums {
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Removes a request header before the mock sees it.
    RequestDropHeader { name: String },
    /// Sets a request header before the mock sees it; with `if_absent`, only when the client sent
    /// none; with `when_matches`, only when the value the client sent matches this regex.
    RequestSetHeader {
        name: String,
        value: String,
        #[serde(default)]
        if_absent: bool,
        #[serde(default)]
        when_matches: Option<String>,
    },
    /// Removes the query string before the mock sees the request; with `names`, only the
    /// parameters of those names (compared without case).
    RequestDropQuery {
        #[serde(default)]
        names: Vec<String>,
    },
    /// HTTP+JSON query parameters (§11.5) are read only in the proto's snake_case spelling: every
    /// camelCase name (`contextId`, `pageSize`, `historyLength`, ...) is dropped before the mock
    /// sees the request, and the snake_case one (`context_id`), which the mock reads as ProtoJSON
    /// parsers do, is left. Service parameters (`A2A-Version`) stay. Only REST requests have them.
    QuerySnakeCaseOnly {
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Drops stream events of a kind (`task`, `message`, `statusUpdate`, `artifactUpdate`), all of
    /// them or only the `nth` (0-based) of that kind.
    SseDrop {
        /// Event kind.
        kind: String,
        /// Only this occurrence.
        #[serde(default)]
        nth: Option<usize>,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Swaps stream events `a` and `b` (0-based positions).
    SseSwap {
        /// First position.
        a: usize,
        /// Second position.
        b: usize,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Sends stream event `index` twice.
    SseDuplicate {
        /// Position.
        index: usize,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Removes (or, with `same`, repeats) the `id:` of stream events.
    SseIds {
        /// Give every event this id instead of removing it.
        #[serde(default)]
        same: Option<String>,
        /// Leave the first `from` events of each stream alone (0-based position).
        #[serde(default)]
        from: usize,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// In a SubscribeToTask stream opened while another SubscribeToTask stream of the same task is
    /// open, sets `pointer` (from the event's `result`, creating the last member) in every event
    /// after the first: the later subscriber is sent events of its own, not the ones broadcast.
    SseConcurrentSet { pointer: String, value: Value },
    /// Holds every event of a stream back until the task has finished, then sends them together:
    /// a stream that is not real-time.
    SseHoldBack {
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Keeps a stream open this long after its last event.
    SseKeepOpen {
        /// Milliseconds.
        ms: u64,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Sends stream events as bare StreamResponse objects, without the JSON-RPC envelope (a
    /// JSON-RPC stream; HTTP+JSON events are bare already).
    SseBareEvents {
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Wraps each HTTP+JSON stream event in a JSON-RPC response envelope, `{"jsonrpc": "2.0", "id":
    /// id, "result": <StreamResponse>}`, as an agent whose REST streams reuse its JSON-RPC framing
    /// (§11.7 wants the bare StreamResponse); JSON-RPC events have theirs already.
    SseWrapJsonrpc {
        #[serde(default = "default_wrap_id")]
        id: Value,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Answers a JSON-RPC error (of one of `codes`; empty: any) with HTTP `status` and a
    /// `text/plain` body instead: a web framework's error page where a JSON-RPC error is due.
    ErrorAsText {
        #[serde(default)]
        codes: Vec<i64>,
        status: u16,
        body: String,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Over HTTP+JSON, answers 405 Method Not Allowed (with `Allow`) to `verb` on the operations of
    /// `methods` that the binding also serves on another verb: SubscribeToTask on one of GET
    /// (the proto's) and POST (the prose's) only.
    RefuseVerb {
        verb: String,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Over HTTP+JSON, a successful answer has this status and an empty body (a delete confirmed
    /// by its status alone).
    EmptyBody {
        status: u16,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Frames stream events as the SSE format allows but the mock does not by default: a comment
    /// line before each event, an `event:` field, the JSON pretty-printed over several `data:`
    /// lines, CRLF line ends.
    SseFraming {
        #[serde(default)]
        comments: bool,
        #[serde(default)]
        event: Option<String>,
        #[serde(default)]
        multiline: bool,
        #[serde(default)]
        crlf: bool,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Writes stream events as a broken SSE writer does (`sse_framing` writes what the format
    /// allows): see [`SseDefect`].
    SseMalformed {
        defect: SseDefect,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Answers with this HTTP status (body unchanged).
    HttpStatus {
        /// Status.
        status: u16,
        /// Only error answers of these codes (JSON-RPC and A2A codes; an HTTP+JSON error by the
        /// code it is rendered from, e.g. -32001 for a 404 TaskNotFound); empty: every answer.
        #[serde(default)]
        codes: Vec<i64>,
        /// Only the card (`card`) or only JSON-RPC (`rpc`); default both.
        #[serde(default)]
        on: Option<String>,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Answers with this Content-Type.
    ContentType {
        value: String,
        /// Only answers whose Content-Type is this media type (e.g. `application/a2a+json`: the
        /// JSON answers, not the streams); default every answer.
        #[serde(default)]
        from: Option<String>,
        /// `card` or `rpc`; default both.
        #[serde(default)]
        on: Option<String>,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Answers with an HTML page instead of the body.
    HtmlBody {
        /// `card` or `rpc`; default both.
        #[serde(default)]
        on: Option<String>,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Removes a response header.
    DropResponseHeader {
        name: String,
        /// `card` or `rpc`; default both.
        #[serde(default)]
        on: Option<String>,
    },
    /// Waits before answering.
    Stall {
        /// Milliseconds.
        ms: u64,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Push delivery: leave out the Authorization header.
    PushDropAuth,
    /// Push delivery: send with this Content-Type.
    PushContentType { value: String },
    /// Push delivery: wrap the body in a JSON-RPC envelope.
    PushWrapJsonrpc,
    /// Push delivery: send nothing.
    PushSkip,
    /// Card signing (§8.4): sign the way a defective signer does. `reading` picks the bytes
    /// signed (`defaults_filled`, `oneof_dropped`, `signatures_included`, ...), `alg` what the header
    /// claims, `no_kid` / `no_typ` leave those out, `unsigned` signs nothing; `card` narrows it to
    /// `public` or `extended` (default both).
    SignCard {
        #[serde(default)]
        reading: Option<crate::card::Reading>,
        #[serde(default)]
        alg: Option<String>,
        #[serde(default)]
        no_kid: bool,
        #[serde(default)]
        no_typ: bool,
        #[serde(default)]
        unsigned: bool,
        #[serde(default)]
        card: Option<String>,
    },
    /// Authentication (§7.4): a request whose credential is `missing`, `wrong` or either (`any`) is
    /// served as if the first caller had sent it.
    AuthBypass {
        when: AuthBypassWhen,
        #[serde(default)]
        methods: Vec<String>,
    },
    /// Task ids (§3.4.2): every new task gets this id, as from an id minted once instead of per
    /// task; the task last stored under it replaces the one before, for every method.
    ReuseTaskId { id: String },
    /// CancelTask (§3.1.5): a cancel refused because the task is finished (TaskNotCancelableError)
    /// marks the task canceled all the same.
    RefusedCancelApplies,
    /// Tasks (§3.2.2): the script of a new task starts `min_ms`..=`max_ms` milliseconds (drawn
    /// afresh for each task) after the task was created, as by an agent whose worker picks the
    /// task up from a queue. Alone it is conforming (a blocking call still waits for the task);
    /// with a blocking SendMessage answered at once it is an agent that answers before its work
    /// has run, the task finishing a few milliseconds later.
    DeferRun { min_ms: u64, max_ms: u64 },
    /// Tenant isolation (§13.1): how a caller is answered about another caller's task: `visible`
    /// (as if it were its own; ListTasks lists everyone's), `revealed` (-32001, but the message says
    /// the task exists), `slow` (-32001 as for a missing task, after `ms`).
    ForeignTask {
        treat: ForeignTreatment,
        #[serde(default)]
        ms: u64,
        #[serde(default)]
        methods: Vec<String>,
    },
}

fn default_wrap_id() -> Value {
    Value::from(1)
}

/// How [`Mutation::SseMalformed`] breaks the event stream's framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SseDefect {
    /// No blank line after an event's fields (nor after a comment): nothing is ever dispatched, and
    /// a reader holds one event whose `data:` lines pile up until the stream ends.
    NoBlankLine,
    /// Each event's data is written as a Python dict's `repr` (`{'jsonrpc': '2.0', ...}`, `True`,
    /// `None`), not as JSON.
    PythonRepr,
}

/// Which credentials [`Mutation::AuthBypass`] lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthBypassWhen {
    Missing,
    Wrong,
    Any,
}

/// How [`Mutation::ForeignTask`] answers about another caller's task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForeignTreatment {
    Visible,
    Revealed,
    Slow,
}

/// A named single violation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    /// Stable id, e.g. `FAULT-ENUM-LOWERCASE`.
    pub id: String,
    /// Spec section violated.
    pub section: String,
    /// One line: what the mock does wrong.
    pub description: String,
    pub mutations: Vec<Mutation>,
    /// Ids of the checks this fault exists to kill: the ones that test the requirement it violates.
    /// Whatever else it kills is collateral. The kill matrix fails when one of these survives.
    /// Empty exactly when the fault is `conforming`.
    #[serde(default)]
    pub kills: Vec<String>,
    /// Not a violation: a behaviour the spec allows that agents show (an unknown card member, say),
    /// committed so that the kill matrix proves no check fails or warns on it.
    #[serde(default)]
    pub conforming: bool,
    /// The mock the fault is committed by: some violations only exist where the card declares a
    /// capability off (serving the extended card anyway, say).
    #[serde(default)]
    pub mock: MockVariant,
    /// The bindings on whose operations the fault is committed (`["http+json"]`: only REST
    /// answers); empty: every binding. What belongs to no binding (the card, its signature, push
    /// delivery) is only changed by a fault without this filter.
    #[serde(default)]
    pub bindings: Vec<Binding>,
    /// The checks `kills` names are not in the built-in suites yet (they are being written): the
    /// kill matrix lists the fault without running it, and fails once every check it names exists
    /// (the mark is then stale); a fleet does not commit it.
    #[serde(default)]
    pub awaiting_checks: bool,
    /// What the fault leaves the kit unable to judge, when it is more than its own requirement:
    /// an agent that refuses A2A-Version 1.0 answers every other request with that refusal, one
    /// that sends no notification has none whose credentials could be read. In a mix, the faults
    /// whose checks wait on this one's findings are one story with it, told by its cause.
    #[serde(default)]
    pub masks: Option<String>,
}

/// Which mock configuration a fault (or a clean baseline) runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MockVariant {
    /// Every capability declared and served, the extended card behind a token.
    #[default]
    Full,
    /// Streaming, push notifications and the extended card declared off.
    CapabilitiesOff,
    /// As `Full`, but the card declares and the mock serves HTTP+JSON alone: an agent whose
    /// defects only a run with no JSON-RPC interface to lean on can show.
    HttpJsonOnly,
}

/// What a fleet agent may not commit although its operations would allow it
/// (`mock-peer/fleet.json`, compiled in), read by [`Fault::fleet_safe`].
const FLEET_EXCLUSIONS: &str = include_str!("../../../mock-peer/fleet.json");

/// `mock-peer/fleet.json`: the faults a fleet agent does not commit, beyond what their operations
/// and settings tell, and why.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetExclusions {
    pub about: String,
    /// Faults none of whose `kills` is a scored MUST check that a check run of a fleet agent grades.
    pub no_must_kill: FleetGroup,
    /// Id → why, for the other faults whose run ends otherwise than non-conformant.
    pub other: BTreeMap<String, String>,
}

/// Faults excluded for one reason.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetGroup {
    pub why: String,
    pub faults: Vec<String>,
}

impl FleetExclusions {
    /// The compiled-in list (a unit test proves it reads).
    pub fn builtin() -> &'static FleetExclusions {
        static LIST: std::sync::OnceLock<FleetExclusions> = std::sync::OnceLock::new();
        LIST.get_or_init(|| serde_json::from_str(FLEET_EXCLUSIONS).expect("mock-peer/fleet.json reads"))
    }

    /// Why fault `id` is listed, if it is.
    pub fn why(&self, id: &str) -> Option<&str> {
        match self.no_must_kill.faults.iter().any(|f| f == id) {
            true => Some(&self.no_must_kill.why),
            false => self.other.get(id).map(String::as_str),
        }
    }
}

impl Fault {
    /// Whether every mutation of the fault rewrites answers only (a member dropped, set, renamed,
    /// an error code changed): what it changes shows in the answers, or nowhere (see
    /// [`ActiveFaults::was_shown`]). A fault acting on requests, streams or the card may show in
    /// ways no comparison of answers tells.
    pub fn answer_only(&self) -> bool {
        !self.mutations.is_empty()
            && self.mutations.iter().all(|m| match m {
                Mutation::UnwrapResult { .. } | Mutation::ErrorCode { .. } | Mutation::ErrorToResult { .. } => true,
                Mutation::RenameKey { target, .. }
                | Mutation::DropKey { target, .. }
                | Mutation::Set { target, .. }
                | Mutation::Copy { target, .. }
                | Mutation::ReplaceString { target, .. }
                | Mutation::AddEverywhere { target, .. }
                | Mutation::RewriteString { target, .. } => {
                    matches!(target, Target::Result | Target::Error | Target::Envelope)
                }
                _ => false,
            })
    }

    /// Whether an agent of a fleet (`mock --fleet`) may commit this fault. Each agent of a fleet
    /// must show its faults on its own, the same way on every run, to a checker that holds no
    /// credentials, no trusted key and no extended-card token: `check URL --behaviors acts` against
    /// it ends non-conformant (exit 1). So a fault is out when:
    /// - it is `conforming` (no violation), or needs another mock than the full one (`mock`);
    /// - an operation's effect depends on timing: a delay, a held or kept-open stream, a shifted
    ///   timestamp, a deferred task;
    /// - an operation only acts with settings a fleet agent's checker does not have: card signing,
    ///   callers (auth bypass, foreign tasks), the signed or the extended card as target;
    /// - it is not committed on JSON-RPC (`bindings`): a fleet agent serves both bindings, but a
    ///   registry run narrowed to JSON-RPC (`--binding jsonrpc`) must still see its faults; or it
    ///   is `awaiting_checks`;
    /// - `mock-peer/fleet.json` lists it, with the reason (what the operations cannot tell).
    pub fn fleet_safe(&self) -> bool {
        let op_safe = |m: &Mutation| match m {
            Mutation::Stall { .. }
            | Mutation::SseHoldBack { .. }
            | Mutation::SseKeepOpen { .. }
            | Mutation::RequestShiftTime { .. }
            | Mutation::DeferRun { .. } => false,
            Mutation::SignCard { .. } | Mutation::AuthBypass { .. } | Mutation::ForeignTask { .. } => false,
            Mutation::RenameKey { target, .. }
            | Mutation::DropKey { target, .. }
            | Mutation::Set { target, .. }
            | Mutation::Copy { target, .. }
            | Mutation::AddEverywhere { target, .. }
            | Mutation::ReplaceString { target, .. }
            | Mutation::RewriteString { target, .. }
            | Mutation::SetFromHeader { target, .. } => !matches!(target, Target::SignedCard | Target::ExtendedCard),
            Mutation::UnwrapResult { .. }
            | Mutation::ErrorCode { .. }
            | Mutation::ErrorToResult { .. }
            | Mutation::RequestDrop { .. }
            | Mutation::RequestSet { .. }
            | Mutation::LegacyEnums { .. }
            | Mutation::RequestDropHeader { .. }
            | Mutation::RequestSetHeader { .. }
            | Mutation::RequestDropQuery { .. }
            | Mutation::SseDrop { .. }
            | Mutation::SseSwap { .. }
            | Mutation::SseDuplicate { .. }
            | Mutation::SseIds { .. }
            | Mutation::SseConcurrentSet { .. }
            | Mutation::SseBareEvents { .. }
            | Mutation::SseWrapJsonrpc { .. }
            | Mutation::QuerySnakeCaseOnly { .. }
            | Mutation::ErrorAsText { .. }
            | Mutation::HttpStatus { .. }
            | Mutation::ContentType { .. }
            | Mutation::HtmlBody { .. }
            | Mutation::DropResponseHeader { .. }
            | Mutation::PushDropAuth
            | Mutation::PushContentType { .. }
            | Mutation::PushWrapJsonrpc
            | Mutation::PushSkip
            | Mutation::ReuseTaskId { .. }
            | Mutation::RefusedCancelApplies
            | Mutation::RefuseVerb { .. }
            | Mutation::EmptyBody { .. }
            | Mutation::SseFraming { .. }
            | Mutation::SseMalformed { .. } => true,
        };
        // A fleet agent is checked over JSON-RPC, where a fault committed only on HTTP+JSON shows
        // nothing, and a fault whose checks are not written yet is caught by none.
        let on_jsonrpc = self.bindings.is_empty() || self.bindings.contains(&Binding::JsonRpc);
        !self.conforming
            && !self.awaiting_checks
            && on_jsonrpc
            && self.mock == MockVariant::Full
            && self.mutations.iter().all(op_safe)
            && FleetExclusions::builtin().why(&self.id).is_none()
    }
}

impl Fault {
    /// The members (by name, per target) the fault's value operations touch: two faults that
    /// touch one member do not add up (a member renamed by one and dropped by the other shows
    /// only one of them), so a mix of faults keeps them apart.
    pub fn touches(&self) -> std::collections::BTreeSet<(String, String)> {
        let last = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
        let mut out = std::collections::BTreeSet::new();
        for m in &self.mutations {
            let (target, names): (Target, Vec<String>) = match m {
                Mutation::RenameKey { from, to, target, .. } => (*target, vec![from.clone(), to.clone()]),
                Mutation::DropKey { key, pointer, target, .. } => {
                    let mut names: Vec<String> = key.iter().cloned().chain(pointer.as_deref().map(last)).collect();
                    // An error's `@type` keys are those of its details: a fault that replaces the
                    // details leaves none to drop.
                    if *target == Target::Error && key.as_deref() == Some("@type") {
                        names.push("data".to_owned());
                    }
                    (*target, names)
                }
                Mutation::Set { pointer, target, .. } => (*target, vec![last(pointer)]),
                // A member copied over the whole answer is lifted out of it: a pointer through
                // that member reaches nothing any more.
                Mutation::Copy { from, to, target, .. } if to.is_empty() => (*target, vec![last(from)]),
                Mutation::Copy { to, target, .. } => (*target, vec![last(to)]),
                Mutation::RewriteString { key: Some(k), target, .. } => (*target, vec![k.clone()]),
                Mutation::UnwrapResult { member, .. } => (Target::Result, vec![member.clone()]),
                // Two rewrites of one request header: the later one decides what the agent
                // reads, so only one of them is committed.
                // An error chosen by its message is not found once another fault takes the
                // message away.
                Mutation::ErrorCode { message_contains: Some(_), .. } => (Target::Error, vec!["message".to_owned()]),
                Mutation::RequestSetHeader { name, .. } | Mutation::RequestDropHeader { name } => {
                    out.insert(("request header".to_owned(), name.to_ascii_lowercase()));
                    continue;
                }
                _ => continue,
            };
            for n in names.into_iter().filter(|n| !n.is_empty()) {
                out.insert((format!("{target:?}"), n));
            }
        }
        out
    }

    /// Whether it changes how errors are answered (their code, status, form).
    fn rewrites_errors(&self) -> bool {
        self.mutations.iter().any(|m| {
            matches!(
                m,
                Mutation::ErrorCode { .. }
                    | Mutation::ErrorToResult { .. }
                    | Mutation::ErrorAsText { .. }
                    | Mutation::HttpStatus { .. }
            )
        })
    }

    /// Whether a pointer of its value operations goes through a result member `other` lifts out
    /// of the result (`unwrap_result`, or a copy over the whole answer) or through a stream event
    /// kind `other` never sends (every event of it dropped): the pointer then reaches nothing.
    /// A member set at the top of a result `other` unwraps lands beside the wrapper's member or
    /// inside the object lifted out, whichever fault comes first: an answer of no one shape.
    fn reaches_through_lifted(&self, other: &Fault) -> bool {
        let unwraps = other.mutations.iter().any(|m| matches!(m, Mutation::UnwrapResult { .. }));
        let at_top = |p: &str| p.starts_with('/') && !p[1..].contains('/');
        if unwraps
            && self
                .mutations
                .iter()
                .any(|m| matches!(m, Mutation::Set { pointer, target: Target::Result, .. } if at_top(pointer)))
        {
            return true;
        }
        let lifted: Vec<String> = other
            .mutations
            .iter()
            .filter_map(|m| match m {
                Mutation::UnwrapResult { member, .. } => Some(format!("/{member}/")),
                Mutation::Copy { from, to, .. } if to.is_empty() => Some(format!("{from}/")),
                Mutation::SseDrop { kind, nth: None, .. } => Some(format!("/{kind}/")),
                _ => None,
            })
            .collect();
        self.mutations.iter().any(|m| {
            let pointer = match m {
                Mutation::Set { pointer, .. } | Mutation::DropKey { pointer: Some(pointer), .. } => pointer,
                _ => return false,
            };
            lifted.iter().any(|l| pointer.starts_with(l.as_str()))
        })
    }

    /// Whether this fault and `other` each show in one agent that commits both. A fault that
    /// masks (every request refused, say) shows by the error it answers; one that rewrites errors
    /// would make that refusal another story.
    pub fn combines_with(&self, other: &Fault) -> bool {
        let masks_rewritten = |a: &Fault, b: &Fault| a.masks.is_some() && b.rewrites_errors();
        self.id != other.id
            && self.touches().is_disjoint(&other.touches())
            && !masks_rewritten(self, other)
            && !masks_rewritten(other, self)
            && !self.reaches_through_lifted(other)
            && !other.reaches_through_lifted(self)
    }
}

/// A fault file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("fault {file}: {reason}")]
pub struct FaultError {
    pub file: String,
    pub reason: String,
}

/// All known faults by id.
#[derive(Debug, Clone, Default)]
pub struct FaultCatalogue {
    by_id: BTreeMap<String, Arc<Fault>>,
}

impl FaultCatalogue {
    pub fn builtin() -> Result<Self, FaultError> {
        let mut c = FaultCatalogue::default();
        for (file, text) in BUILTIN {
            c.add(file, text)?;
        }
        Ok(c)
    }

    /// The faults of every `*.json` file in `dir`, in name order (what `mock-peer/faults/` holds).
    pub fn from_dir(dir: &std::path::Path) -> Result<Self, FaultError> {
        let err = |reason: String| FaultError { file: dir.display().to_string(), reason };
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| err(e.to_string()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        let mut c = FaultCatalogue::default();
        for p in files {
            let text = std::fs::read_to_string(&p).map_err(|e| err(format!("{}: {e}", p.display())))?;
            c.add(&p.display().to_string(), &text)?;
        }
        Ok(c)
    }

    /// Adds the faults of one file (an object or an array of objects).
    pub fn add(&mut self, file: &str, text: &str) -> Result<(), FaultError> {
        let err = |reason: String| FaultError { file: file.to_owned(), reason };
        let v: Value = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
        let list = match v {
            Value::Array(a) => a,
            other => vec![other],
        };
        for item in list {
            let f: Fault = serde_json::from_value(item).map_err(|e| err(e.to_string()))?;
            if f.mutations.is_empty() {
                return Err(err(format!("{} has no mutations", f.id)));
            }
            if f.kills.is_empty() && !f.conforming {
                return Err(err(format!("{} names no check it exists to kill (`kills`)", f.id)));
            }
            if f.conforming && !f.kills.is_empty() {
                return Err(err(format!("{} is conforming: it may kill nothing (`kills` must be empty)", f.id)));
            }
            if self.by_id.contains_key(&f.id) {
                return Err(err(format!("duplicate fault id {}", f.id)));
            }
            self.by_id.insert(f.id.clone(), Arc::new(f));
        }
        Ok(())
    }

    pub fn get(&self, id: &str) -> Option<Arc<Fault>> {
        self.by_id.get(id).cloned()
    }

    pub fn all(&self) -> impl Iterator<Item = &Arc<Fault>> {
        self.by_id.values()
    }

    /// The faults a fleet agent may commit ([`Fault::fleet_safe`]), by id.
    pub fn fleet_pool(&self) -> Vec<Arc<Fault>> {
        self.all().filter(|f| f.fleet_safe()).cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// True when a mutation limited to `methods` (empty: all) applies to `method`.
fn for_method(methods: &[String], method: &str) -> bool {
    methods.is_empty() || methods.iter().any(|m| m == method)
}

/// The faults a running mock commits, and the ids of those whose answer mutations changed an
/// answer (shared by every scope of one mock): a fault that only rewrites answers and never
/// changed one left nothing any client could see.
#[derive(Debug, Clone, Default)]
pub struct ActiveFaults(pub Vec<Arc<Fault>>, pub Shown);

/// Fault ids, shared between the scopes of one mock and whoever started it.
pub type Shown = Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>;

impl ActiveFaults {
    /// The faults of one mock, none shown yet.
    pub fn new(faults: Vec<Arc<Fault>>) -> Self {
        ActiveFaults(faults, Shown::default())
    }

    /// Records that `id` changed an answer.
    pub fn shown(&self, id: &str) {
        self.1.lock().unwrap_or_else(|p| p.into_inner()).insert(id.to_owned());
    }

    /// Whether `id` has changed an answer yet.
    pub fn was_shown(&self, id: &str) -> bool {
        self.1.lock().unwrap_or_else(|p| p.into_inner()).contains(id)
    }

    /// The faults committed on `binding`'s operations (those without a `bindings` filter, and those
    /// naming it); with `None`, on what belongs to no binding (the card, push delivery): only the
    /// faults without a filter.
    pub fn scoped(&self, binding: Option<Binding>) -> ActiveFaults {
        let on = |f: &&Arc<Fault>| f.bindings.is_empty() || binding.is_some_and(|b| f.bindings.contains(&b));
        ActiveFaults(self.0.iter().filter(on).cloned().collect(), self.1.clone())
    }

    /// How another caller's task is answered for `method`, when a fault says.
    pub fn foreign_task(&self, method: &str) -> Option<(ForeignTreatment, u64)> {
        self.mutations().find_map(|m| match m {
            Mutation::ForeignTask { treat, ms, methods } if for_method(methods, method) => Some((*treat, *ms)),
            _ => None,
        })
    }

    /// The id every new task gets, when a fault says so.
    pub fn reused_task_id(&self) -> Option<&str> {
        self.mutations().find_map(|m| match m {
            Mutation::ReuseTaskId { id } => Some(id.as_str()),
            _ => None,
        })
    }

    /// How long a new task's script waits before it starts, when a fault defers it: drawn from the
    /// fault's range afresh on every call.
    pub fn run_delay(&self) -> Option<std::time::Duration> {
        self.mutations().find_map(|m| match m {
            Mutation::DeferRun { min_ms, max_ms } => {
                let (lo, hi) = (*min_ms.min(max_ms), *min_ms.max(max_ms));
                let r = u64::from_le_bytes(uuid::Uuid::new_v4().as_bytes()[..8].try_into().expect("8 bytes"));
                Some(std::time::Duration::from_millis(lo + r % (hi - lo + 1)))
            }
            _ => None,
        })
    }

    /// True when a refused cancel still cancels.
    pub fn refused_cancel_applies(&self) -> bool {
        self.mutations().any(|m| matches!(m, Mutation::RefusedCancelApplies))
    }

    /// True when a fault lets a `missing` (or else wrong) credential through for `method`.
    pub fn auth_bypass(&self, method: &str, missing: bool) -> bool {
        self.mutations().any(|m| match m {
            Mutation::AuthBypass { when, methods } => {
                for_method(methods, method)
                    && matches!(
                        (when, missing),
                        (AuthBypassWhen::Any, _) | (AuthBypassWhen::Missing, true) | (AuthBypassWhen::Wrong, false)
                    )
            }
            _ => false,
        })
    }

    /// The signing defects for the `public` or `extended` card.
    pub fn sign_card(&self, which: &str) -> impl Iterator<Item = &Mutation> {
        self.mutations()
            .filter(move |m| matches!(m, Mutation::SignCard { card, .. } if card.as_deref().is_none_or(|c| c == which)))
    }

    /// Every mutation of every active fault.
    pub fn mutations(&self) -> impl Iterator<Item = &Mutation> {
        self.0.iter().flat_map(|f| f.mutations.iter())
    }

    /// True when no fault is active.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_that_rewrite_one_request_header_are_not_mixed() {
        let c = FaultCatalogue::builtin().unwrap();
        let f = |id: &str| c.get(id).unwrap();
        assert!(!f("FAULT-VER-HEADER-IGNORED").combines_with(&f("FAULT-VER-CURRENT-REJECTED")));
        assert!(!f("FAULT-VER-CURRENT-REJECTED").combines_with(&f("FAULT-VER-PATCH-CONSIDERED")));
        assert!(f("FAULT-VER-CURRENT-REJECTED").combines_with(&f("FAULT-CARD-NO-OUTPUT-MODES")));
        assert!(!f("FAULT-PUSH-LIST-BARE").combines_with(&f("FAULT-PUSH-LIST-PHANTOM")), "a member lifted to the root");
        assert!(!f("FAULT-PUSH-LIST-DROPS-ONE").combines_with(&f("FAULT-PUSH-LIST-BARE")), "a pointer through it");
        assert!(!f("FAULT-SEND-MESSAGE-AND-TASK").combines_with(&f("FAULT-BARE-TASK")), "a member set beside it");
        assert!(
            !f("FAULT-ERR-SEND-DATA-OBJECT").combines_with(&f("FAULT-ERR-SEND-DATA-NO-TYPE")),
            "details replaced leave no @type to drop"
        );
        assert!(
            !f("FAULT-SEC-FOREIGN-TASK-FORBIDDEN").combines_with(&f("FAULT-ERR-NO-MESSAGE")),
            "an error found by its message"
        );
    }

    /// `selftest --faults-dir mock-peer/faults` commits the same faults as the compiled-in catalogue.
    #[test]
    fn the_fault_folder_reads_as_the_builtin_catalogue() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mock-peer/faults");
        let from_dir = FaultCatalogue::from_dir(&dir).expect("mock-peer/faults loads");
        let builtin = FaultCatalogue::builtin().expect("the catalogue loads");
        let ids = |c: &FaultCatalogue| c.all().map(|f| f.id.clone()).collect::<std::collections::BTreeSet<_>>();
        assert_eq!(ids(&from_dir), ids(&builtin));
        assert!(FaultCatalogue::from_dir(&dir.join("no-such-folder")).is_err());
    }

    #[test]
    fn a_fleet_commits_no_fault_that_depends_on_timing_settings_or_another_mock() {
        let c = FaultCatalogue::builtin().unwrap();
        let safe = |id: &str| c.get(id).unwrap_or_else(|| panic!("{id} is catalogued")).fleet_safe();
        for id in [
            "FAULT-STREAM-KEEP-OPEN",            // sse_keep_open
            "FAULT-STREAM-SEND-KEEP-OPEN",       // sse_keep_open
            "FAULT-STREAM-HELD-BACK",            // sse_hold_back
            "FAULT-SEND-EARLY-ANSWER",           // defer_run
            "FAULT-LIST-TIMESTAMP-FILTER-WRONG", // request_shift_time
            "FAULT-TENANT-SLOW",                 // foreign_task, slow
            "FAULT-SIG-NO-KID",                  // sign_card: needs a signing key
            "FAULT-SIG-TAMPERED",                // the signed card
            "FAULT-AUTH-MISSING-ACCEPTED",       // auth_bypass: needs callers
            "FAULT-XCARD-NO-NAME",               // the extended card
            "FAULT-DECL-STREAMING-SERVED",       // the capabilities_off mock
            "FAULT-CARD-NOT-FOUND",              // listed: exit 2, not 1
            "FAULT-CARD-NO-ETAG",                // listed: a SHOULD only
        ] {
            assert!(!safe(id), "{id} must not be in a fleet");
        }
        for id in ["FAULT-ENUM-LOWERCASE", "FAULT-BARE-TASK", "FAULT-SEND-SAME-TASK-ID", "FAULT-STREAM-NO-TASK-FIRST"] {
            assert!(safe(id), "{id} belongs in a fleet");
        }
        // Every fault with a delay is out, whatever its file says.
        for f in c.all() {
            let json = format!("{:?}", f.mutations);
            if json.contains("ms:") {
                assert!(!f.fleet_safe(), "{} waits, and is in the fleet", f.id);
            }
        }
        let pool = c.fleet_pool();
        assert!(pool.len() >= 50, "only {} faults for a fleet", pool.len());
        assert!(pool.windows(2).all(|w| w[0].id < w[1].id), "the pool is in id order");
    }

    #[test]
    fn the_fleet_list_names_catalogued_faults_once_and_only_what_the_rule_cannot_tell() {
        let c = FaultCatalogue::builtin().unwrap();
        let list = FleetExclusions::builtin();
        let mut seen = std::collections::BTreeSet::new();
        for id in list.no_must_kill.faults.iter().chain(list.other.keys()) {
            assert!(seen.insert(id.clone()), "{id} is listed twice in mock-peer/fleet.json");
            let f = c.get(id).unwrap_or_else(|| panic!("mock-peer/fleet.json lists {id}, which is no fault"));
            // Listed for a reason the rest of the rule does not already give.
            let unlisted = Fault { id: "UNLISTED".into(), ..(*f).clone() };
            assert!(unlisted.fleet_safe(), "{id} is out of the fleet anyway: drop it from mock-peer/fleet.json");
        }
    }
}

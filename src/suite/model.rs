//! The case format: an ACTS document (acts-specification.md §2–§9) plus the kit's extensions, each
//! marked `ext` below and documented in `suites/README.md`. Assertions stay `serde_json::Value`:
//! the `assert` module interprets the ACTS assertion DSL on raw JSON, never on the mock's types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::report::Level;
use crate::spec::Source;

/// An ACTS document: one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Document {
    #[serde(default)]
    pub acts_version: String,
    #[serde(default)]
    pub spec_version: String,
    #[serde(default)]
    pub metadata: Option<Value>,
    /// Variables available to every test.
    #[serde(default)]
    pub variables: BTreeMap<String, String>,
    /// Other files to load (relative to this one).
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub suites: Vec<Suite>,
}

/// A named group of tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    /// kebab-case id.
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Tags inherited by every test.
    #[serde(default)]
    pub tags: Vec<String>,
    /// ext: default profile of its tests (`core` when absent).
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default)]
    pub tests: Vec<std::sync::Arc<Test>>,
}

/// One check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Test {
    /// Stable id (ACTS id where the requirement is the same; `KIT-*`, `EXT-*` otherwise).
    pub id: String,
    /// Title.
    pub name: String,
    /// What and why.
    #[serde(default)]
    pub description: Option<String>,
    /// ACTS spec reference (free text).
    #[serde(default)]
    pub spec_ref: Option<String>,
    /// ext: section of the A2A 1.0 specification, e.g. `3.1.4`.
    #[serde(default)]
    pub section: Option<String>,
    /// ext: the spec's own words behind the check, verbatim: one quote, or several for a
    /// requirement spread over sentences (`tests/spec_quotes.rs` finds each in `fixtures/spec/`).
    #[serde(default)]
    pub requirement: Option<Requirement>,
    /// ext: the text the quotes come from when a quote does not say (default: the A2A spec).
    #[serde(default)]
    pub source: Option<Source>,
    /// ext: the kit's reading of the quoted words, where it needs one; findings show it apart.
    #[serde(default)]
    pub interpretation: Option<String>,
    /// ext: profile (overrides the suite's).
    #[serde(default)]
    pub profile: Option<String>,
    /// ext: false for checks that are shown but never change the verdict.
    #[serde(default)]
    pub scored: Option<bool>,
    pub level: Level,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Bindings the test applies to (absent: all).
    #[serde(default)]
    pub transport: Vec<String>,
    #[serde(default)]
    pub preconditions: Option<Preconditions>,
    /// ACTS §11 behaviours the agent must implement.
    #[serde(default)]
    pub requires_behaviors: Vec<String>,
    /// Runner facilities needed (webhook_endpoint, concurrent_streams, ...).
    #[serde(default)]
    pub runner_requirements: Vec<String>,
    /// ext: checks whose requirement this one's verdict builds on (the webhook's headers are graded
    /// only if a webhook call came: PUSH-DELIV-002). When this check does not pass and one of them
    /// found a violation, it ends as `skip: depends_on_failed` naming it: one violation, one finding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// ext: a named Rust probe run instead of (or after) the steps.
    #[serde(default)]
    pub probe: Option<String>,
    /// ext: parameters for the probe.
    #[serde(default)]
    pub probe_params: Option<Value>,
    /// ext: decided by the engine from the whole run rather than by steps of its own (WIRE-SCHEMA,
    /// the 0.3 peer detection); declared here so that it has an id, a level and a section like any
    /// other check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub synthetic: bool,
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Assertions after all steps.
    #[serde(default)]
    pub assertions: Vec<NamedAssertion>,
    /// ext, client checks: what the mock recorded of the client, graded instead of steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observe: Option<Observe>,
    /// ext, client checks: the `client-check --scenario` names the check needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires_scenarios: Vec<String>,
}

/// ext: how a client check reads the recording (`engine::observe`): requests selected by an
/// assertion, then one of the ways of grading them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observe {
    /// An ACTS assertion a recorded request must satisfy to be graded (absent: every JSON-RPC call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<Value>,
    /// What the skip says when nothing was selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select_reason: Option<String>,
    /// Every selected request satisfies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub each: Option<Value>,
    /// With `each`: what a request that does not satisfy it did, in plain words, said in the
    /// finding instead of the assertion's own mismatch (which, for an `any_of`, names no cause).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<String>,
    /// At least one selected request satisfies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub some: Option<Value>,
    /// A pointer whose values differ between selected requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique: Option<String>,
    /// Two requests equal at this pointer are one request sent again, not a reuse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_unless_same: Option<String>,
    /// A named observer for what data cannot say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// One check id or several, written as a string or a list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ids(pub Vec<String>);

impl Ids {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

impl<'de> Deserialize<'de> for Ids {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            One(String),
            Many(Vec<String>),
        }
        Ok(match Form::deserialize(d)? {
            Form::One(id) => Ids(vec![id]),
            Form::Many(ids) => Ids(ids),
        })
    }
}

impl Serialize for Ids {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => s.serialize_str(one),
            many => many.serialize(s),
        }
    }
}

/// A check's quoted requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Requirement {
    One(String),
    Many(Vec<QuoteItem>),
}

/// One quote of a requirement: its words, or its words with the text and section they stand in
/// when those differ from the check's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum QuoteItem {
    Words(String),
    Placed {
        quote: String,
        #[serde(default)]
        source: Option<Source>,
        #[serde(default)]
        section: Option<String>,
    },
}

/// A quote with its text and section resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedQuote {
    pub text: String,
    pub source: Source,
    /// Empty when neither the quote nor the check names one.
    pub section: String,
}

impl Test {
    /// The check's quotes, each with its source and section (the quote's own, else the check's).
    pub fn quotes(&self) -> Vec<ResolvedQuote> {
        let source = self.source.unwrap_or_default();
        let section = self.section.clone().unwrap_or_default();
        let resolve = |item: &QuoteItem| match item {
            QuoteItem::Words(w) => ResolvedQuote { text: w.clone(), source, section: section.clone() },
            QuoteItem::Placed { quote, source: s, section: sec } => ResolvedQuote {
                text: quote.clone(),
                source: s.unwrap_or(source),
                section: sec.clone().unwrap_or_else(|| section.clone()),
            },
        };
        match &self.requirement {
            None => Vec::new(),
            Some(Requirement::One(w)) => vec![resolve(&QuoteItem::Words(w.clone()))],
            Some(Requirement::Many(items)) => items.iter().map(resolve).collect(),
        }
    }
}

/// What the card must declare for a test to apply (§3.3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Preconditions {
    /// Capability field → required value.
    #[serde(default)]
    pub capabilities: BTreeMap<String, Value>,
    /// Required skills (`{id}`).
    #[serde(default)]
    pub skills: Vec<Value>,
    /// Required bindings.
    #[serde(default)]
    pub transport: Vec<String>,
    /// Required extension URIs.
    #[serde(default)]
    pub extensions: Vec<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// ext: `true` when the card must declare `securityRequirements`.
    #[serde(default)]
    pub security: Option<bool>,
}

/// One step: an operation, a raw HTTP request, or an assertion on earlier results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Unique within the test.
    pub id: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Abstract operation (`send_message`, `get_task`, ...).
    #[serde(default)]
    pub operation: Option<String>,
    /// Operation params in the abstract data model (templated).
    #[serde(default)]
    pub params: Option<Value>,
    #[serde(default)]
    pub raw: Option<RawRequest>,
    /// ext: extra request headers for an operation step (templated). A header set to null removes
    /// a default header such as `A2A-Version`.
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
    #[serde(default)]
    pub expect: Option<Expect>,
    #[serde(default)]
    pub expect_error: Option<ExpectError>,
    #[serde(default)]
    pub expect_stream: Option<ExpectStream>,
    /// Variable name → dot-path into the response. A path ending in `?` (ext) names a value the
    /// agent may leave out (an optional member): when the answer holds none, the variable stays
    /// unset and the check goes on, its templates written `{{step.var?}}` leaving their member
    /// out; without `?`, the check cannot go on and skips, saying why.
    #[serde(default)]
    pub capture: BTreeMap<String, String>,
    /// Assertions after this step.
    #[serde(default)]
    pub assertions: Vec<NamedAssertion>,
    #[serde(default)]
    pub repeat: Option<Repeat>,
    /// ext: the check only applies when the agent's successful answer to this step matches; when it
    /// does not, the check skips with `behavior_not_available` and this reason (e.g. "the agent
    /// answered {{prompt}} with a Message, so there is no task to cancel"). Never consulted for an
    /// error answer: a step that fails is graded as usual.
    #[serde(default)]
    pub only_if: Option<OnlyIf>,
    /// ext: this step only sets the check up, and the checks named here grade what it does (e.g. a
    /// SendMessage that creates the task GetTask then reads is graded by CORE-SEND-001; the
    /// contextId it captures by KIT-SEND-005). When the step fails and one of them failed too, this
    /// check ends as `skip: depends_on_failed` naming the first such, instead of repeating the same
    /// failure. One id or a list.
    #[serde(default, skip_serializing_if = "Ids::is_empty")]
    pub prerequisite: Ids,
    /// ext: the binding this step's operation goes over (`jsonrpc`, `http+json`), whatever the
    /// check's: a check comparing the bindings sends the same operation over each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<String>,
    /// ext: whose credentials the request carries: `a` (default: the user's `--header`s), `b` (the
    /// second caller's, `--header-b`), `none` (credential headers left off) or `wrong` (each
    /// credential header with a wrong value of the same scheme).
    #[serde(default)]
    pub caller: Option<String>,
    /// ext: the request must be refused for its credentials (§7.4).
    #[serde(default)]
    pub expect_refused: Option<ExpectRefused>,
    /// ext: `false` judges a blocking SendMessage answer as it came. By default, an answer whose
    /// task is still SUBMITTED or WORKING is settled first: the kit polls GetTask (within
    /// `--patience`) until the task is terminal or interrupted and judges the step on that task,
    /// so that an agent that answers before its work has run gets the same verdicts every run.
    /// The checks of blocking itself (§3.2.2) say `false`: the first answer is their subject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<bool>,
    /// ext: captures the kit may supply itself: variable → JSON pointer into `params`. When the
    /// answer holds nothing for the variable (a contextId the agent did not generate, §3.4.1), the
    /// step is sent once more with a value of the kit's own at that pointer, and its captures are
    /// taken from that answer; an agent that cannot accept the value answers with an error
    /// (§3.4.1), which the step then grades as usual.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub supply: BTreeMap<String, String>,
    /// ext: a list step reads every page (following `nextPageToken`) and is graded on the items of
    /// all of them, as one answer: an agent may page what it lists (§3.1.4, §3.1.9).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_pages: bool,
    /// ext: array member of the result → assertion: the step is graded on the elements that
    /// satisfy it (the kit's own task among whatever else a listing holds), so that a check of
    /// what a listed task carries does not wait on the listing's filters. When none does, the step
    /// cannot be decided (its `prerequisite` names the check of the listing).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub narrow: BTreeMap<String, Value>,
    /// ext: a result that the step's `only_if` accepted (any result, with no `only_if`) is this
    /// check's to judge whole: what the step finds wrong in a member the result holds is its own
    /// finding, and its `prerequisite` covers an answer that is no result (a refused request) or
    /// lacks the member judged. For a check of what a SendMessage answer's members say, whatever
    /// else its shape gets wrong (CORE-SEND-001's finding).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_result: bool,
    /// ext: an answer saying the agent does not serve the operation at all (HTTP 405 or 501, a
    /// router's 404, a JSON-RPC answer to an HTTP+JSON path, UnsupportedOperationError) skips the
    /// check: for a check whose sentence is about how the operation is served (its query's
    /// names), not whether (§3.1 says "must support" in lower case only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unserved_skips: bool,
    /// Delay before the step.
    #[serde(default)]
    pub delay_ms: Option<u64>,
    #[serde(default)]
    pub assertion: Option<NamedAssertion>,
}

/// A raw HTTP request (ACTS §4.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawRequest {
    /// GET, POST, PUT, DELETE.
    pub method: String,
    /// ext: empty or absent means the selected interface URL; `/…` is relative to the agent's
    /// origin; an absolute URL is used as is.
    #[serde(default)]
    pub path: String,
    /// Headers (templated). ext: JSON-RPC POSTs get `Content-Type: application/json` and
    /// `A2A-Version: 1.0` unless given here (null removes).
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
    /// JSON body (templated).
    #[serde(default)]
    pub body: Option<Value>,
    /// Raw string body (for malformed input).
    #[serde(default)]
    pub body_raw: Option<String>,
    /// ext: a body of this many bytes (a JSON string padded out), for size caps.
    #[serde(default)]
    pub body_size: Option<usize>,
    /// ext: a body nested this deep (`[[[…]]]` inside params), for depth caps.
    #[serde(default)]
    pub body_depth: Option<usize>,
}

/// Expected successful response (ACTS §6.1), plus ext fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Expect {
    /// HTTP status assertion.
    #[serde(default)]
    pub status: Option<Value>,
    /// Assertion on the unwrapped A2A result (operation steps) or the raw body (raw steps).
    #[serde(default)]
    pub body: Option<Value>,
    /// ext: header name (case-insensitive) → assertion on its value.
    #[serde(default)]
    pub headers: BTreeMap<String, Value>,
    /// ext: schema definition the unwrapped result must validate against (`Task`, ...).
    #[serde(default)]
    pub schema: Option<String>,
}

/// Expected error (ACTS §6.2), plus ext fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpectError {
    /// Abstract error name, mapped to the code the A2A spec assigns (not the ACTS table where
    /// they differ).
    #[serde(default)]
    pub error_type: Option<String>,
    /// ext: assertion on the numeric code (e.g. `{one_of: [-32602, -32600]}`).
    #[serde(default)]
    pub code: Option<Value>,
    /// Assertion on the message.
    #[serde(default)]
    pub message: Option<Value>,
    /// Assertion on `error.data`.
    #[serde(default)]
    pub details: Option<Value>,
    /// ext: assertion on the HTTP status of the error response (default: any).
    #[serde(default)]
    pub status: Option<Value>,
    /// ext: a result is acceptable too, when it matches this assertion (for requirements like
    /// "returns the task or TaskNotCancelableError").
    #[serde(default)]
    pub or_result: Option<Value>,
}

/// ext: a refusal for missing or wrong credentials (§7.4, §3.3.2): no JSON-RPC result, and HTTP 401
/// or 403 or a JSON-RPC error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpectRefused {
    /// Also require HTTP 401 with a `WWW-Authenticate` challenge (§7.4 SHOULD).
    #[serde(default)]
    pub challenge: Option<bool>,
}

/// Stream expectations (ACTS §7), plus ext fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpectStream {
    #[serde(default)]
    pub min_count: Option<usize>,
    #[serde(default)]
    pub max_count: Option<usize>,
    /// Time allowed for the stream to close.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `monotonic_state`.
    #[serde(default)]
    pub ordering: Option<String>,
    /// Per-event assertions.
    #[serde(default)]
    pub events: Vec<Value>,
    /// Assertion on the last event.
    #[serde(default)]
    pub final_event: Option<Value>,
    /// Assertion on every event.
    #[serde(default)]
    pub each_event: Option<Value>,
    /// ext: the stream must close by itself within the timeout (default true).
    #[serde(default)]
    pub closes: Option<bool>,
    /// ext: every event's SSE `id:` is present and unique (resume profile).
    #[serde(default)]
    pub unique_ids: Option<bool>,
    /// ext: every event's JSON-RPC `id` is the request's (JSON-RPC 2.0 §5: a response carries
    /// the id of the request it answers).
    #[serde(default)]
    pub echo_request_id: Option<bool>,
    /// ext: the updates came while the task ran, not held back to its end (§3.1.2 "real-time
    /// updates"; see engine::liveness for the tolerance).
    #[serde(default)]
    pub live: Option<bool>,
    /// ext: an assertion on the stream's results as one array, in order (element 0 is the first
    /// event): for what relates one event to another, such as an update to the task the stream
    /// began with.
    #[serde(default)]
    pub sequence: Option<Value>,
    /// ext: when the kit cut this stream short (the stream breaker) before its own events decided
    /// anything, a broken SSE framing that another stream from the same endpoint showed in the
    /// run decides it: for the check that owns the framing of every stream.
    #[serde(default)]
    pub framing_from_run: Option<bool>,
}

/// A post-step or post-test assertion (ACTS §5.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedAssertion {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// `{{step.response}}`, `{{step.var}}` or a step id.
    pub source: String,
    /// Sub-path within the source.
    #[serde(default)]
    pub path: Option<String>,
    /// Direct assertion.
    #[serde(rename = "match", default)]
    pub match_: Option<Value>,
    /// At least one element matches.
    #[serde(default)]
    pub any: Option<CollectionMatch>,
    /// Every element matches.
    #[serde(default)]
    pub all: Option<CollectionMatch>,
    /// No element matches.
    #[serde(default)]
    pub none: Option<CollectionMatch>,
}

/// Elements selected by a wildcard path, and what they must satisfy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectionMatch {
    /// Dot-path with `[*]` wildcards.
    pub path: String,
    /// Assertion object applied to each element.
    #[serde(rename = "match")]
    pub match_: Value,
}

/// Polling (ACTS §9): the step is sent again until `until` holds. When it never does, a step with
/// an `only_if` hands its last answer to that guard (what it polled for is a behaviour the agent
/// may not have); a step without one fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeat {
    /// `path == value`, `path != value` or `path in [a, b]`.
    pub until: String,
    /// Attempts (default 10).
    #[serde(default)]
    pub max_attempts: Option<u32>,
    /// Delay between attempts (default 1000 ms).
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// none / linear / exponential.
    #[serde(default)]
    pub backoff: Option<String>,
}

/// When a check applies, judged on what the agent chose to do (ext `only_if`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnlyIf {
    /// Assertion on the step's assertion root.
    #[serde(rename = "match", default)]
    pub match_: Option<Value>,
    /// Collection assertion: at least one element at `path` matches.
    #[serde(default)]
    pub any: Option<CollectionMatch>,
    /// Why the check cannot be decided otherwise (templated).
    pub reason: String,
    /// The guard waits on a behaviour the step asked for (a long-running prompt, an interrupted
    /// task's follow-up), which a behaviour map may supply: the skip is `behavior_not_available`.
    /// Otherwise what it waits on is the agent's freedom (a Task rather than a Message, an
    /// optional member) and the skip is `freedom_taken`.
    #[serde(default)]
    pub behavior: bool,
}

//! The verdict model (DESIGN "Verdicts"): outcomes, levels, what a check is and how it ended, and
//! what a run is about.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How one check ended. Exactly one per check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Observed behaviour satisfies the requirement.
    Pass,
    /// The peer violated a MUST (or a SHOULD under `--strict`).
    Fail,
    /// A SHOULD was violated, or an ambiguous point was resolved the less common way.
    Warn,
    /// Not applicable; see the skip reason.
    Skip,
    /// The kit could not decide (unreachable, timeout, kit fault). Never folded into pass.
    Error,
    /// A measurement only.
    Info,
}

impl Outcome {
    /// Every outcome, in report order.
    pub const ALL: [Outcome; 6] =
        [Outcome::Pass, Outcome::Fail, Outcome::Warn, Outcome::Skip, Outcome::Error, Outcome::Info];

    /// Lower-case name, as in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Warn => "warn",
            Outcome::Skip => "skip",
            Outcome::Error => "error",
            Outcome::Info => "info",
        }
    }
}

/// Why a check was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The card does not declare the capability the check needs.
    CapabilityNotDeclared,
    /// The check needs a behaviour the agent was not shown to have: the ACTS contract was not
    /// declared, the map does not name it, or the agent's own answers rule it out (a task that
    /// never stays running cannot be canceled while running).
    BehaviorNotAvailable,
    /// The agent took a freedom the spec gives it (answered with a Message, not a Task; left out
    /// an optional member), which leaves the check nothing to judge: like an undeclared
    /// capability, the check does not apply, and no map or credential would change that.
    FreedomTaken,
    /// A behaviour the user's map promised did not happen when the kit tried it.
    PreconditionFailed,
    /// An earlier check that this one builds on failed, so this one cannot be decided; the
    /// detail names it.
    DependsOnFailed,
    /// The check needs credentials the user did not supply.
    CredentialsNotSupplied,
    /// The check's profile was not selected.
    ProfileNotSelected,
    /// Excluded by `--only` / `--exclude`.
    Filtered,
}

impl SkipReason {
    /// Every reason, in report order.
    pub const ALL: [SkipReason; 8] = [
        SkipReason::CapabilityNotDeclared,
        SkipReason::BehaviorNotAvailable,
        SkipReason::FreedomTaken,
        SkipReason::PreconditionFailed,
        SkipReason::DependsOnFailed,
        SkipReason::CredentialsNotSupplied,
        SkipReason::ProfileNotSelected,
        SkipReason::Filtered,
    ];

    /// Snake-case name, as in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::CapabilityNotDeclared => "capability_not_declared",
            SkipReason::BehaviorNotAvailable => "behavior_not_available",
            SkipReason::FreedomTaken => "freedom_taken",
            SkipReason::PreconditionFailed => "precondition_failed",
            SkipReason::DependsOnFailed => "depends_on_failed",
            SkipReason::CredentialsNotSupplied => "credentials_not_supplied",
            SkipReason::ProfileNotSelected => "profile_not_selected",
            SkipReason::Filtered => "filtered",
        }
    }
}

/// Conformance level of a requirement: the RFC 2119 keyword of the sentence a check quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// MUST / MUST NOT / REQUIRED / SHALL.
    Must,
    /// SHOULD / SHOULD NOT / RECOMMENDED.
    Should,
    /// MAY / OPTIONAL.
    May,
    /// The spec has no keyword sentence for what the check looks at: what it finds is reported,
    /// never scored.
    Info,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "must",
            Level::Should => "should",
            Level::May => "may",
            Level::Info => "info",
        }
    }

    /// The outcome of a violated requirement at this level.
    pub fn violation(self, strict: bool) -> Outcome {
        match self {
            Level::Must => Outcome::Fail,
            Level::Should if strict => Outcome::Fail,
            Level::Should => Outcome::Warn,
            Level::May | Level::Info => Outcome::Info,
        }
    }
}

/// Where a requirement is stated: the section, and the spec's own words.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SpecRef {
    /// Section of the A2A 1.0 specification, e.g. `3.1.4` (for a check that quotes only the proto or
    /// JSON-RPC 2.0: the section of its first quote there).
    pub section: String,
    /// The quoted sentence(s) as one line (quotes joined by " … "), for readers of the ACTS subset.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub requirement: String,
    /// Each quoted sentence with the text and section it stands in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quotes: Vec<Quote>,
    /// The kit's reading of the quoted words, where it needs one; shown apart from the quotes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpretation: Option<String>,
}

impl SpecRef {
    /// A reference made of quotes: `requirement` is their words joined.
    pub fn quoted(section: impl Into<String>, quotes: Vec<Quote>, interpretation: Option<String>) -> SpecRef {
        let requirement = quotes.iter().map(|q| q.text.as_str()).collect::<Vec<_>>().join(" … ");
        SpecRef { section: section.into(), requirement, quotes, interpretation }
    }

    /// The quotes to show: the structured ones, or the one-line requirement of an older report.
    pub fn shown_quotes(&self) -> Vec<Quote> {
        if !self.quotes.is_empty() {
            return self.quotes.clone();
        }
        if self.requirement.is_empty() {
            return Vec::new();
        }
        vec![Quote { text: self.requirement.clone(), source: "a2a-spec".into(), section: self.section.clone() }]
    }
}

/// One verbatim sentence of a normative text.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Quote {
    pub text: String,
    /// `a2a-spec` (specification.md), `a2a-proto` (a2a.proto) or `jsonrpc-2.0`.
    pub source: String,
    /// The section it stands in (for the proto: a definition such as `Task`, or the spec section
    /// that renders it).
    pub section: String,
}

impl Quote {
    /// Where a reader finds it: `A2A 1.0 §3.3.2`, `A2A 1.0 a2a.proto Task`, `JSON-RPC 2.0 §4.1`.
    pub fn place(&self) -> String {
        let numbered = self.section.chars().next().is_some_and(|c| c.is_ascii_digit())
            || (self.section.len() > 1 && self.section.as_bytes()[1] == b'.');
        let section = if numbered { format!("§{}", self.section) } else { self.section.clone() };
        let place = match self.source.as_str() {
            "a2a-proto" => format!("A2A 1.0 a2a.proto {section}"),
            "jsonrpc-2.0" => format!("JSON-RPC 2.0 {section}"),
            _ => format!("A2A 1.0 {section}"),
        };
        // A check of an external suite may name no section: then the text alone is the place.
        place.trim_end().to_owned()
    }
}

/// What went wrong in a failed, warned or errored check.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Failure {
    /// One-line reason.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// JSON pointer to the offending value in the response (RFC 6901).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// Expected value or rule, stringified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// Actual value, stringified (redacted, truncated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

/// One HTTP exchange kept as evidence (redacted and truncated before it gets here).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Evidence {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// HTTP method, e.g. `POST`.
    pub method: String,
    pub url: String,
    /// Request headers, `name: value`, secrets replaced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_headers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    /// HTTP status, when a response arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `name: value`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_headers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
    /// A curl command reproducing the request (secrets replaced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curl: Option<String>,
    /// Milliseconds from request to the end of the response.
    #[serde(default)]
    pub elapsed_ms: u64,
    /// For a POST (the only method of the JSON-RPC binding): how the whole answer reads as
    /// JSON-RPC, read before the body was cut for the report. Root causes are told by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<Reply>,
}

/// A JSON-RPC call and what kind of answer it got, as structured facts: two checks that met the
/// same error code and message, or the same HTTP 500 text/plain, share a root cause.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Reply {
    /// The request's JSON-RPC `method`, when its body named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    pub kind: ReplyKind,
    /// For `error`: the error's `code`, when it is an integer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// For `error`: the error's `message` (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What came back to a JSON-RPC call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyKind {
    /// A JSON-RPC response with a `result`.
    Result,
    /// A JSON-RPC response with an `error` (or an SSE event that is one).
    Error,
    /// An SSE stream of events that are not errors.
    Stream,
    /// Anything else: not JSON, no body, or JSON that is no JSON-RPC response.
    #[default]
    NotJsonrpc,
}

impl ReplyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReplyKind::Result => "result",
            ReplyKind::Error => "error",
            ReplyKind::Stream => "stream",
            ReplyKind::NotJsonrpc => "not_jsonrpc",
        }
    }
}

/// `expected` of a failure whose answer was not the JSON-RPC error the step expected. The wanted
/// kind of answer is part of a root cause: an HTTP 500 where a result is due is another story than
/// one where an error is due.
pub const WANTED_ERROR: &str = "a JSON-RPC error";
/// `expected` of a failure whose answer was not the JSON-RPC result the step expected.
pub const WANTED_RESULT: &str = "a JSON-RPC result";
/// `expected` of a failure whose answer was not the SSE stream the step expected.
pub const WANTED_STREAM: &str = "an SSE stream (text/event-stream)";

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// Stable id, e.g. `CORE-SEND-001` or `KIT-CAPS-003`.
    pub id: String,
    pub title: String,
    /// Suite (file) the check came from.
    pub suite: String,
    /// Profile, e.g. `core`, `streaming`.
    pub profile: String,
    pub level: Level,
    pub spec: SpecRef,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<SkipReason>,
    /// Details of a skip (e.g. which capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_detail: Option<String>,
    /// For `depends_on_failed`: the check whose failure leaves this one undecided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<String>,
    /// False for extension and kit-policy profiles: shown, never changes the verdict.
    pub scored: bool,
    /// Wall time of the check.
    pub duration_ms: u64,
    /// What went wrong, for fail / warn / error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// A measurement, for info outcomes (and extra facts on others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement: Option<String>,
    /// Graded under the run's workaround: what the kit changed in this check's requests (or in how
    /// it read their answers) because the diagnosis (KIT-DIAG-001) found the agent refuses the 1.0
    /// spelling. Empty for a check graded as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workaround: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// The plain words a root cause of this check is told in, when the check knows them better than
    /// the kit's reading of its failure does (a diagnosis). A cause takes its root's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
}

/// What a check is before it runs: everything its result carries except what the run found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckMeta {
    pub id: String,
    pub title: String,
    /// Suite (file) the check is declared in.
    pub suite: String,
    pub profile: String,
    pub level: Level,
    pub spec: SpecRef,
    /// False for extension and kit-policy profiles.
    pub scored: bool,
}

#[cfg(test)]
impl CheckMeta {
    /// A scored core MUST check with id as title, for the report modules' tests.
    pub(crate) fn sample(id: &str) -> Self {
        CheckMeta {
            id: id.into(),
            title: id.into(),
            suite: "s".into(),
            profile: "core".into(),
            level: Level::Must,
            spec: SpecRef::default(),
            scored: true,
        }
    }
}

impl CheckResult {
    /// A result of `meta` with `outcome` and nothing observed yet.
    pub fn new(meta: &CheckMeta, outcome: Outcome) -> Self {
        CheckResult {
            id: meta.id.clone(),
            title: meta.title.clone(),
            suite: meta.suite.clone(),
            profile: meta.profile.clone(),
            level: meta.level,
            spec: meta.spec.clone(),
            outcome,
            skip_reason: None,
            skip_detail: None,
            depends_on: None,
            scored: meta.scored,
            duration_ms: 0,
            failure: None,
            measurement: None,
            workaround: Vec::new(),
            evidence: Vec::new(),
            headline: None,
        }
    }

    pub fn skipped(meta: &CheckMeta, reason: SkipReason, detail: impl Into<String>) -> Self {
        CheckResult {
            skip_reason: Some(reason),
            skip_detail: Some(detail.into()),
            ..CheckResult::new(meta, Outcome::Skip)
        }
    }

    /// A violation of the check's requirement: fail, warn or info by its level.
    pub fn violated(meta: &CheckMeta, strict: bool, failure: Failure) -> Self {
        CheckResult { failure: Some(failure), ..CheckResult::new(meta, meta.level.violation(strict)) }
    }
}

/// The run's verdict (DESIGN "Run verdict and exit status").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every scored MUST passed (warnings allowed unless `--strict`): exit 0.
    Conformant,
    /// A scored fail: exit 1.
    NonConformant,
    /// Usage or input error, or zero checks graded: exit 2.
    UsageError,
    /// No fail, but a scored check ended in error or the target was unreachable: exit 3.
    Inconclusive,
}

impl Verdict {
    /// Snake-case name, as in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Conformant => "conformant",
            Verdict::NonConformant => "non_conformant",
            Verdict::UsageError => "usage_error",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Conformant => 0,
            Verdict::NonConformant => 1,
            Verdict::UsageError => 2,
            Verdict::Inconclusive => 3,
        }
    }

    /// Derives the verdict from results. `reasons` explains it.
    pub fn decide(results: &[CheckResult]) -> (Verdict, Vec<String>) {
        let scored: Vec<&CheckResult> = results.iter().filter(|r| r.scored).collect();
        let failed: Vec<&str> = scored.iter().filter(|r| r.outcome == Outcome::Fail).map(|r| r.id.as_str()).collect();
        let errored: Vec<&str> = scored.iter().filter(|r| r.outcome == Outcome::Error).map(|r| r.id.as_str()).collect();
        let graded =
            scored.iter().filter(|r| matches!(r.outcome, Outcome::Pass | Outcome::Fail | Outcome::Warn)).count();
        // The reason names the root causes, not every check: one broken call is one story.
        // Of how many of the causes every rendering counts (`summary.causes`), so that the two
        // numbers read together.
        let roots = |outcome: Outcome| {
            let causes = super::causes::of(results);
            let roots: Vec<&str> =
                super::causes::failing(&causes, results, outcome).iter().map(|c| c.root.as_str()).collect();
            match causes.len() {
                n if n == roots.len() => format!("from {} root cause(s): {}", roots.len(), list_ids(&roots)),
                n => format!("from {} of the {n} root causes: {}", roots.len(), list_ids(&roots)),
            }
        };
        if !failed.is_empty() {
            return (
                Verdict::NonConformant,
                vec![format!("{} scored check(s) failed, {}", failed.len(), roots(Outcome::Fail))],
            );
        }
        if !errored.is_empty() {
            return (
                Verdict::Inconclusive,
                vec![format!("{} scored check(s) could not be decided, {}", errored.len(), roots(Outcome::Error))],
            );
        }
        if graded == 0 {
            return (Verdict::UsageError, vec!["no scored check was graded".into()]);
        }
        (Verdict::Conformant, vec![format!("all {graded} graded scored checks passed or warned")])
    }
}

/// Ids joined for a sentence, every one of them: a reason names what to act on (a stale baseline
/// entry to remove), and the terminal wraps it rather than cutting it.
pub fn list_ids(ids: &[&str]) -> String {
    ids.join(", ")
}

/// A baseline's overlay on one result (DESIGN "Overlays").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineStatus {
    /// A listed failure: it does not fail the run.
    Accepted,
    /// Listed, but the check now passes: the entry must go, and the run fails until it does.
    Stale,
    /// Listed with an expiry that has passed: the entry no longer applies.
    Expired,
}

impl BaselineStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            BaselineStatus::Accepted => "accepted",
            BaselineStatus::Stale => "stale",
            BaselineStatus::Expired => "expired",
        }
    }
}

/// What became of one baseline entry in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    /// The check failed (or warned) as listed; accepted.
    Accepted,
    /// The check passed: the entry is stale and fails the run.
    Stale,
    /// The entry's expiry has passed; the check's own outcome stands.
    Expired,
    /// The check was skipped this time; the entry is kept and tolerated.
    Skipped,
    /// The check ended in error; nothing to accept (an error is never folded into pass).
    Undecided,
    /// No check of this run has the id.
    Unknown,
}

impl EntryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryStatus::Accepted => "accepted",
            EntryStatus::Stale => "stale",
            EntryStatus::Expired => "expired",
            EntryStatus::Skipped => "skipped",
            EntryStatus::Undecided => "undecided",
            EntryStatus::Unknown => "unknown",
        }
    }
}

/// One baseline entry and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineEntryReport {
    /// Check id.
    pub id: String,
    /// Why the failure is accepted.
    pub reason: String,
    /// Last day the entry applies (`YYYY-MM-DD`, UTC), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    pub status: EntryStatus,
}

/// How a baseline file applied to a run (the report's `baseline` section).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BaselineReport {
    /// The file as given on the command line.
    pub source: String,
    /// SHA-256 of the file's bytes, lower-case hex.
    pub sha256: String,
    /// The day (UTC) expiries were judged against, `YYYY-MM-DD`.
    pub evaluated_on: String,
    /// Every entry, in file order.
    pub entries: Vec<BaselineEntryReport>,
}

impl BaselineReport {
    /// Ids of the entries with `status`, in file order.
    pub fn ids(&self, status: EntryStatus) -> Vec<&str> {
        self.entries.iter().filter(|e| e.status == status).map(|e| e.id.as_str()).collect()
    }

    /// The entry for check `id`.
    pub fn entry(&self, id: &str) -> Option<&BaselineEntryReport> {
        self.entries.iter().find(|e| e.id == id)
    }
}

/// Everything about the run that does not come from the checks themselves.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunInfo {
    /// Tool name, `a2a-conform`.
    pub tool: String,
    pub tool_version: String,
    /// A2A protocol version tested, `1.0`.
    pub spec_version: String,
    /// Commit of the specification the checks were written against.
    pub spec_commit: String,
    pub run_id: String,
    /// `server` (the kit tests a server) or `client`.
    pub mode: String,
    /// Start of the run, RFC 3339 in UTC (`Z`).
    pub started_at: String,
    /// Whether SHOULD violations fail.
    pub strict: bool,
    pub profiles: Vec<String>,
    /// Seed of generated inputs, when any.
    pub seed: Option<u64>,
    pub suites: Vec<SuiteSource>,
    pub target: TargetInfo,
}

/// One suite file and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SuiteSource {
    pub name: String,
    /// `builtin` or the path it was read from.
    pub origin: String,
    /// SHA-256 of the suite file's bytes, lower-case hex.
    pub sha256: String,
}

/// The peer under test.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Base URL (or `embedded mock`).
    pub url: String,
    /// SHA-256 of the agent card bytes as served.
    #[serde(default)]
    pub card_sha256: Option<String>,
    /// The card's `capabilities` object as declared.
    #[serde(default)]
    pub capabilities: Option<Value>,
    /// Free-form observations about the target (e.g. "identified as a 0.3 peer").
    #[serde(default)]
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, outcome: Outcome, scored: bool) -> CheckResult {
        CheckResult {
            id: id.into(),
            title: id.into(),
            suite: "s".into(),
            profile: "core".into(),
            level: Level::Must,
            spec: SpecRef::default(),
            outcome,
            skip_reason: None,
            skip_detail: None,
            depends_on: None,
            scored,
            duration_ms: 0,
            failure: None,
            measurement: None,
            workaround: vec![],
            evidence: vec![],
            headline: None,
        }
    }

    #[test]
    fn verdicts_follow_the_design() {
        let pass = result("a", Outcome::Pass, true);
        assert_eq!(Verdict::decide(std::slice::from_ref(&pass)).0, Verdict::Conformant);
        assert_eq!(Verdict::decide(&[pass.clone(), result("b", Outcome::Fail, true)]).0, Verdict::NonConformant);
        assert_eq!(Verdict::decide(&[pass.clone(), result("b", Outcome::Error, true)]).0, Verdict::Inconclusive);
        assert_eq!(Verdict::decide(&[pass.clone(), result("b", Outcome::Fail, false)]).0, Verdict::Conformant);
        assert_eq!(Verdict::decide(&[result("b", Outcome::Skip, true)]).0, Verdict::UsageError);
        assert_eq!(Verdict::decide(&[]).0, Verdict::UsageError);
    }

    #[test]
    fn places_name_the_text_and_the_section() {
        let q =
            |source: &str, section: &str| Quote { text: "x".into(), source: source.into(), section: section.into() };
        assert_eq!(q("a2a-spec", "3.3.2").place(), "A2A 1.0 §3.3.2");
        assert_eq!(q("a2a-spec", "A.2.1").place(), "A2A 1.0 §A.2.1");
        assert_eq!(q("a2a-proto", "Task").place(), "A2A 1.0 a2a.proto Task");
        assert_eq!(q("jsonrpc-2.0", "4.1").place(), "JSON-RPC 2.0 §4.1");
        assert_eq!(q("a2a-spec", "").place(), "A2A 1.0");
    }

    #[test]
    fn levels_map_to_outcomes() {
        assert_eq!(Level::Should.violation(false), Outcome::Warn);
        assert_eq!(Level::Should.violation(true), Outcome::Fail);
        assert_eq!(Level::Must.violation(false), Outcome::Fail);
    }
}

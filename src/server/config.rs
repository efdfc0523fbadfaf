//! What the mock peer declares and how it behaves, set from the command line or by a test.

use std::path::PathBuf;

use super::binding::Bindings;
use crate::protocol::limits::Limits;

/// How the mock treats a request without an `A2A-Version` service parameter (§3.6.2, digest §14
/// item 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingVersion {
    /// "Agents MUST interpret empty value as 0.3 version" (§3.6.2), which this 1.0-only mock does
    /// not support: -32009.
    #[default]
    Reject,
    /// Serve it as 1.0, for clients that omit the header (`--lenient-version`).
    AssumeCurrent,
}

/// Which webhook destinations push delivery may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WebhookPolicy {
    /// Public addresses only, as a production agent must (SSRF guard).
    #[default]
    PublicOnly,
    /// Also loopback (127.0.0.0/8, ::1), for local receivers and tests.
    AllowLoopback,
    /// Also private and link-local ranges.
    AllowPrivate,
}

/// The mock's extended card setting (§3.1.11, §13.3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ExtendedCard {
    /// Not declared: GetExtendedAgentCard returns -32004.
    #[default]
    Off,
    /// Declared but not configured: -32007.
    Unconfigured,
    /// Served to callers presenting `Authorization: Bearer <token>`.
    Bearer(String),
}

/// How the mock signs its cards (§8.4).
#[derive(Debug, Clone)]
pub struct CardSigning {
    pub key: crate::card::PrivateKey,
    /// `kid` of the protected header.
    pub kid: String,
    /// `jku` of the protected header, when given.
    pub jku: Option<String>,
}

impl CardSigning {
    /// Signs with `key`, under its own `kid` or else its RFC 7638 thumbprint.
    pub fn new(key: crate::card::PrivateKey) -> Self {
        let kid = key.kid_or_thumbprint();
        CardSigning { key, kid, jku: None }
    }
}

/// Every setting of the mock peer.
#[derive(Debug, Clone)]
pub struct MockConfig {
    pub name: String,
    /// Declare and serve streaming.
    pub streaming: bool,
    /// Declare and serve push notifications.
    pub push_notifications: bool,
    pub extended_card: ExtendedCard,
    /// Bearer tokens of the callers the mock knows (§7.4). With any, every method requires one of
    /// them (the card declares a bearer scheme and a security requirement), each caller sees only
    /// the tasks it created (§13.1), and any of them may read the extended card.
    pub callers: Vec<String>,
    /// Sign the public and the extended card (§8.4).
    pub signing: Option<CardSigning>,
    /// Extension URIs declared optional on the card.
    pub extensions: Vec<String>,
    /// Extension URIs declared `required: true` (a request not activating them gets -32008).
    pub required_extensions: Vec<String>,
    /// Tenant the card's interface asks clients to echo ("" for none).
    pub tenant: String,
    /// Base URL to advertise instead of the bound address (behind a proxy).
    pub public_url: Option<String>,
    /// Media types accepted in message parts (§3.1.1, -32005 otherwise).
    pub input_modes: Vec<String>,
    /// Media types the agent produces.
    pub output_modes: Vec<String>,
    pub missing_version: MissingVersion,
    pub webhooks: WebhookPolicy,
    /// Per-attempt timeout of a webhook POST, in ms.
    pub push_timeout_ms: u64,
    /// Extra attempts after a failed webhook POST (exponential backoff).
    pub push_retries: u32,
    /// Extra scenario files, overriding built-ins of the same name.
    pub scenario_dir: Option<PathBuf>,
    /// Honour the tck-* prefix contract; off, every message gets the echo scenario, as from an
    /// ordinary agent.
    pub behaviors: bool,
    pub limits: Limits,
    /// `Cache-Control: max-age` of the card, in seconds.
    pub card_max_age_secs: u64,
    /// Spec violations to commit on purpose (`--fault`); empty for a faithful mock.
    pub faults: Vec<std::sync::Arc<super::faults::Fault>>,
    /// SubscribeToTask streams stay open through INPUT_REQUIRED / AUTH_REQUIRED and close only at a
    /// terminal state (§3.1.6, §7.6.1), as the Python SDK does and the official TCK expects; off
    /// (`--subscribe-closes-at-interrupted`), they close at an interrupted state too (§11.7). The
    /// spec allows both (digest §14 item 5), and the checker accepts both.
    pub subscribe_until_terminal: bool,
    /// Declare the resume extension ([`RESUME_EXTENSION_URI`]) and honour `afterEventId` in
    /// SubscribeToTask params. `Last-Event-ID` is honoured either way.
    pub resume_extension: bool,
    /// Serve the card and both bindings under this path (`/agents/a`); empty for the root.
    pub path_prefix: String,
    /// Accept the 0.3 method names (`message/send`, `tasks/get`, ...) as aliases of the 1.0 ones;
    /// off, they get -32601 as from any 1.0 agent.
    pub legacy_method_names: bool,
    /// Refuse a `messageId` already used (-32602), as agents that deduplicate do (§3.3.1).
    pub single_use_message_ids: bool,
    /// Every error carries a `google.rpc.ErrorInfo` detail, JSON-RPC standard codes included (A2A
    /// codes always do).
    pub error_info_everywhere: bool,
    /// Record every request received (`MockPeer` does, for expectations).
    pub record_requests: bool,
    /// Scripted `sleep` steps last this percentage of their written length (100: as written). A
    /// mock that only the kit talks to can shorten them: its checks need a task to stay running
    /// for a few round trips, not for seconds.
    pub sleep_percent: u32,
    /// The scenario a message no prefix selects runs (`echo` when `None`).
    pub default_scenario: Option<String>,
    /// Cut the first stream of each task after this many events, as a dropped connection would
    /// (the `drop-stream` client scenario); the task runs on, and the cut is recorded.
    pub cut_streams_after: Option<usize>,
    /// The card's JSON-RPC interface is on another host (127.0.0.2, or another port where that
    /// address is not loopback), served by a second listener; the card's own address serves
    /// everything too, so a client that ignores the interface URL still gets its answers.
    pub interface_elsewhere: bool,
    /// The bindings declared on the card and served: JSON-RPC at `/rpc`, HTTP+JSON at the root
    /// (both under the path prefix).
    pub bindings: Bindings,
    /// Generate a `contextId` for a message that carries none; off, such a task or message has none
    /// (§3.4.1: "Agents MAY generate a new `contextId`").
    pub context_ids: bool,
    /// Status timestamps in whole seconds, written zero-filled (`.000Z`), as by an agent without
    /// millisecond precision (§5.6.1).
    pub whole_second_timestamps: bool,
    /// End every task stream with the task once more, as it stands at the end (§11.7: "MAY
    /// optionally resend a final `Task` snapshot before closing"); the snapshot has no `id:`.
    pub final_task_snapshot: bool,
}

impl MockConfig {
    /// The path prefix in canonical form: empty, or `/seg/seg` (leading slash, no trailing slash,
    /// no query, fragment, `.` or `..` segment).
    pub fn normalized_prefix(&self) -> Result<String, String> {
        let p = self.path_prefix.trim().trim_end_matches('/');
        if p.is_empty() {
            return Ok(String::new());
        }
        let bad = |why: &str| Err(format!("--path-prefix {:?}: {why}", self.path_prefix));
        if !p.starts_with('/') {
            return bad("must start with /");
        }
        if p.contains(['?', '#', '{', '}', '*', ' ', '%']) {
            return bad("must be plain path segments");
        }
        if p[1..].split('/').any(|seg| seg.is_empty() || seg == "." || seg == "..") {
            return bad("has an empty, . or .. segment");
        }
        Ok(p.to_owned())
    }
}

/// The URI under which the mock declares its resume extension: SSE `id:` on every event and
/// SubscribeToTask resuming after `afterEventId` (param) or `Last-Event-ID` (header).
pub const RESUME_EXTENSION_URI: &str = "urn:a2a-conform:ext:resume:v1";

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            name: "a2a-conform mock agent".into(),
            streaming: true,
            push_notifications: true,
            behaviors: true,
            extended_card: ExtendedCard::Off,
            callers: Vec::new(),
            signing: None,
            extensions: Vec::new(),
            required_extensions: Vec::new(),
            tenant: String::new(),
            public_url: None,
            input_modes: vec!["text/plain".into(), "application/json".into(), "application/octet-stream".into()],
            output_modes: vec!["text/plain".into(), "application/json".into()],
            missing_version: MissingVersion::default(),
            webhooks: WebhookPolicy::default(),
            push_timeout_ms: 10_000,
            push_retries: 2,
            scenario_dir: None,
            limits: Limits::default(),
            card_max_age_secs: 300,
            faults: Vec::new(),
            subscribe_until_terminal: true,
            resume_extension: true,
            path_prefix: String::new(),
            legacy_method_names: false,
            single_use_message_ids: false,
            error_info_everywhere: false,
            record_requests: false,
            sleep_percent: 100,
            default_scenario: None,
            cut_streams_after: None,
            interface_elsewhere: false,
            bindings: Bindings::Both,
            context_ids: true,
            whole_second_timestamps: false,
            final_task_snapshot: false,
        }
    }
}

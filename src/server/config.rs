//! What the mock peer declares and how it behaves, set from the command line or by a test.

use std::path::PathBuf;

use crate::protocol::limits::Limits;

/// How the mock treats a request without an `A2A-Version` service parameter (§3.6.2, digest §14
/// item 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingVersion {
    /// "Agents MUST interpret empty value as 0.3 version" (§3.6.2), which this 1.0-only mock does
    /// not support: -32009.
    #[default]
    Reject,
    /// Serve it as 1.0, as the official TCK expects and several SDKs do (`--lenient-version`).
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
}

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
        }
    }
}

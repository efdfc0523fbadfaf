//! The mock's Agent Card (§8) and its HTTP caching headers (§8.6).

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::binding::Binding;
use super::config::{CardSigning, ExtendedCard, MockConfig, RESUME_EXTENSION_URI};
use super::faults::Mutation;
use super::scenario::ScenarioBook;
use crate::card::jws::{self, SignOptions};
use crate::protocol::version::PROTOCOL_VERSION;
use crate::protocol::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentProvider, AgentSkill, HttpAuthSecurityScheme,
    SecurityRequirement, SecurityScheme, StringList,
};

/// Path of the well-known card (§8.2).
pub const WELL_KNOWN_PATH: &str = "/.well-known/agent-card.json";
/// Path of the JSON-RPC endpoint, advertised in `supportedInterfaces`.
pub const RPC_PATH: &str = "/rpc";
/// The HTTP+JSON interface's URL, relative to the base: the base itself (the prefix root), so that
/// its operations are at `/message:send`, `/tasks/{id}`, ... as §11.3 writes them.
pub const REST_PATH: &str = "/";
/// Name of the bearer scheme protecting the extended card.
pub const BEARER_SCHEME: &str = "bearer";

/// A card as served, with the validators a cache needs. It is JSON, not an [`AgentCard`]: a fault
/// may make the agent build a card its typed model cannot hold (a number for `version`, a 0.3
/// member), and the card is signed as it is served.
#[derive(Debug, Clone)]
pub struct CardDocument {
    pub card: Value,
    /// Its JSON bytes, as served.
    pub body: Vec<u8>,
    /// Strong ETag, quoted.
    pub etag: String,
    /// When this card was built.
    pub last_modified: SystemTime,
}

impl CardDocument {
    /// Serializes a card and derives its ETag from the bytes.
    pub fn new(card: Value) -> Self {
        let body = serde_json::to_vec_pretty(&card).expect("a JSON value serializes");
        let digest = Sha256::digest(&body);
        let etag = format!("\"{}\"", hex::encode(&digest[..12]));
        CardDocument { card, body, etag, last_modified: SystemTime::now() }
    }

    /// True if an `If-None-Match` header value matches this card (weak comparison, RFC 9110 §13.1.2).
    pub fn matches_if_none_match(&self, header: &str) -> bool {
        header.split(',').map(str::trim).any(|tag| tag == "*" || tag.trim_start_matches("W/") == self.etag)
    }

    /// True if an `If-Modified-Since` date is not older than this card (second precision).
    pub fn not_modified_since(&self, header: &str) -> bool {
        match httpdate::parse_http_date(header) {
            Ok(since) => {
                let secs = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
                secs(self.last_modified) <= secs(since)
            }
            Err(_) => false,
        }
    }
}

/// Builds the public card for a server whose base URL is `base_url` (no trailing slash).
pub fn public_card(cfg: &MockConfig, base_url: &str, scenarios: &ScenarioBook) -> AgentCard {
    let mut extensions: Vec<AgentExtension> = cfg
        .extensions
        .iter()
        .map(|uri| AgentExtension {
            uri: uri.clone(),
            description: "Optional extension declared by the mock.".into(),
            required: false,
            params: None,
        })
        .collect();
    extensions.extend(cfg.required_extensions.iter().map(|uri| AgentExtension {
        uri: uri.clone(),
        description: "Required extension: requests that do not activate it get -32008.".into(),
        required: true,
        params: None,
    }));
    if cfg.resume_extension && cfg.streaming {
        extensions.push(AgentExtension {
            uri: RESUME_EXTENSION_URI.into(),
            description: "Resumable streams: every SSE event carries an id: (its position in the task's event log); \
                          SubscribeToTask with params.afterEventId or a Last-Event-ID header replays the events after it."
                .into(),
            required: false,
            params: None,
        });
    }
    let mut security_schemes = BTreeMap::new();
    let mut security_requirements = Vec::new();
    if !cfg.callers.is_empty() {
        security_schemes.insert(
            BEARER_SCHEME.to_owned(),
            SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                description: "Bearer token required for every method; each caller sees only its own tasks.".into(),
                scheme: "Bearer".into(),
                bearer_format: String::new(),
            }),
        );
        security_requirements
            .push(SecurityRequirement { schemes: BTreeMap::from([(BEARER_SCHEME.to_owned(), StringList::default())]) });
    } else if let ExtendedCard::Bearer(_) = cfg.extended_card {
        security_schemes.insert(
            BEARER_SCHEME.to_owned(),
            SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                description: "Bearer token required for GetExtendedAgentCard.".into(),
                scheme: "Bearer".into(),
                bearer_format: String::new(),
            }),
        );
    }
    AgentCard {
        name: cfg.name.clone(),
        description: "A faithful A2A 1.0 mock peer from a2a-conform. Its behaviour is scripted by scenario files \
                      selected by the prefix of the first text part or of the messageId (ACTS §11)."
            .into(),
        supported_interfaces: cfg
            .bindings
            .served()
            .map(|b| AgentInterface {
                url: match b {
                    Binding::JsonRpc => format!("{base_url}{RPC_PATH}"),
                    Binding::HttpJson => format!("{base_url}{REST_PATH}"),
                },
                protocol_binding: b.protocol_binding().into(),
                tenant: cfg.tenant.clone(),
                protocol_version: PROTOCOL_VERSION.into(),
            })
            .collect(),
        provider: Some(AgentProvider { url: base_url.to_owned(), organization: "a2a-conform".into() }),
        version: env!("CARGO_PKG_VERSION").into(),
        documentation_url: None,
        capabilities: AgentCapabilities {
            streaming: Some(cfg.streaming),
            push_notifications: Some(cfg.push_notifications),
            extensions,
            extended_agent_card: Some(cfg.extended_card != ExtendedCard::Off),
        },
        security_schemes,
        security_requirements,
        default_input_modes: cfg.input_modes.clone(),
        default_output_modes: cfg.output_modes.clone(),
        // Without the prefix contract the mock is a plain echo agent, and says so.
        skills: scenarios
            .all()
            .filter(|sc| cfg.behaviors || sc.prefixes.is_empty())
            .map(|sc| AgentSkill {
                id: sc.name.clone(),
                name: sc.name.clone(),
                description: sc.description.clone(),
                tags: vec!["scenario".into()],
                examples: sc.prefixes.iter().map(|p| format!("{p} hello")).collect(),
                input_modes: Vec::new(),
                output_modes: Vec::new(),
                security_requirements: Vec::new(),
            })
            .collect(),
        signatures: Vec::new(),
        icon_url: None,
    }
}

/// The extended card: the public card plus a skill only authenticated callers see.
pub fn extended_card(public: &AgentCard) -> AgentCard {
    let mut card = public.clone();
    card.description.push_str(" This is the authenticated extended card.");
    card.skills.push(AgentSkill {
        id: "extended-diagnostics".into(),
        name: "Extended diagnostics".into(),
        description: "Only listed on the extended card (§3.1.11).".into(),
        tags: vec!["extended".into()],
        examples: Vec::new(),
        input_modes: Vec::new(),
        output_modes: Vec::new(),
        security_requirements: Vec::new(),
    });
    card
}

/// Signs `card` (§8.4), the JSON the agent serves, with the mock's key, committing the signing
/// defects of the active faults (`which`: `public` or `extended`). Earlier signatures are replaced.
pub fn sign<'a>(card: &mut Value, signing: &CardSigning, defects: impl Iterator<Item = &'a Mutation>) {
    let mut opts = SignOptions { jku: signing.jku.clone(), ..SignOptions::new(signing.kid.clone()) };
    let Value::Object(members) = card else { return };
    members.remove("signatures");
    for d in defects {
        if let Mutation::SignCard { reading, alg, no_kid, no_typ, unsigned, .. } = d {
            if *unsigned {
                return;
            }
            if let Some(r) = reading {
                opts.reading = *r;
            }
            if let Some(a) = alg {
                opts.alg = a.clone();
            }
            if *no_kid {
                opts.kid = None;
            }
            if *no_typ {
                opts.typ = false;
            }
        }
    }
    *card = jws::sign(card, &signing.key, &opts).expect("the mock's card canonicalizes");
}

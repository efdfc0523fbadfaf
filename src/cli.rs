//! Command-line front end: argument parsing and wiring only.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use crate::protocol::limits::Limits;
use crate::server::{ExtendedCard, MissingVersion, MockConfig, MockServer, WebhookPolicy};

/// Conformance test kit and faithful mock peer for the A2A protocol 1.0.
#[derive(Debug, Parser)]
#[command(name = "a2a-conform", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a spec-exact A2A 1.0 mock agent (JSON-RPC + SSE) on a local port.
    Mock(MockArgs),
}

/// Options of `a2a-conform mock`.
#[derive(Debug, Args)]
pub struct MockArgs {
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// Port to bind; 0 picks a free one. The first line printed is `listening on URL`.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Base URL to advertise on the card instead of the bound address (e.g. behind a proxy).
    #[arg(long)]
    pub public_url: Option<String>,
    /// Agent name on the card.
    #[arg(long, default_value = "a2a-conform mock agent")]
    pub name: String,
    /// Declare capabilities.streaming false (streaming methods then return -32004).
    #[arg(long)]
    pub no_streaming: bool,
    /// Declare capabilities.pushNotifications false (push config methods then return -32003).
    #[arg(long)]
    pub no_push: bool,
    /// Serve the extended card to callers presenting this bearer token.
    #[arg(
        long,
        env = "A2A_CONFORM_EXTENDED_CARD_TOKEN",
        hide_env_values = true,
        conflicts_with = "extended_card_unconfigured"
    )]
    pub extended_card_token: Option<String>,
    /// Declare capabilities.extendedAgentCard but configure none (GetExtendedAgentCard returns -32007).
    #[arg(long)]
    pub extended_card_unconfigured: bool,
    /// Declare an optional extension URI (repeatable).
    #[arg(long = "extension", value_name = "URI")]
    pub extensions: Vec<String>,
    /// Declare a required extension URI (repeatable); requests that do not activate it get -32008.
    #[arg(long = "require-extension", value_name = "URI")]
    pub required_extensions: Vec<String>,
    /// Tenant the card's interface asks clients to echo.
    #[arg(long, default_value = "")]
    pub tenant: String,
    /// Accepted input media type (repeatable; replaces the defaults).
    #[arg(long = "input-mode", value_name = "MEDIA_TYPE")]
    pub input_modes: Vec<String>,
    /// Produced output media type (repeatable; replaces the defaults).
    #[arg(long = "output-mode", value_name = "MEDIA_TYPE")]
    pub output_modes: Vec<String>,
    /// Treat a missing A2A-Version as 0.3 and answer -32009 (strict reading of §3.6.2).
    #[arg(long)]
    pub strict_version: bool,
    /// Allow push webhooks on loopback addresses (refused by default, as SSRF protection).
    #[arg(long)]
    pub allow_loopback_webhooks: bool,
    /// Allow push webhooks on loopback, private and link-local addresses.
    #[arg(long)]
    pub allow_private_webhooks: bool,
    /// Timeout of one webhook POST, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub push_timeout_ms: u64,
    /// Extra attempts after a failed webhook POST.
    #[arg(long, default_value_t = 2)]
    pub push_retries: u32,
    /// Directory of extra scenario files (*.json), overriding built-ins of the same name.
    #[arg(long, value_name = "DIR")]
    pub scenarios: Option<PathBuf>,
    /// Cache-Control max-age of the agent card, in seconds.
    #[arg(long, default_value_t = 300)]
    pub card_max_age: u64,
    /// Resource bounds.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The mock's resource bounds as flags (defaults from `Limits::default`).
#[derive(Debug, Args)]
pub struct LimitArgs {
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = Limits::default().max_request_bytes)]
    pub max_request_bytes: usize,
    /// Deepest JSON nesting in a request.
    #[arg(long, default_value_t = Limits::default().max_json_depth)]
    pub max_json_depth: usize,
    /// Most parts in one message.
    #[arg(long, default_value_t = Limits::default().max_parts)]
    pub max_parts: usize,
    /// Longest id accepted, in bytes.
    #[arg(long, default_value_t = Limits::default().max_id_len)]
    pub max_id_len: usize,
    /// Most messages kept in a task's history.
    #[arg(long, default_value_t = Limits::default().max_history)]
    pub max_history: usize,
    /// Most events kept per task for replay.
    #[arg(long, default_value_t = Limits::default().max_task_events)]
    pub max_task_events: usize,
    /// Most concurrent stream subscribers per task.
    #[arg(long, default_value_t = Limits::default().max_subscribers)]
    pub max_subscribers: usize,
    /// Most push configs per task.
    #[arg(long, default_value_t = Limits::default().max_push_configs)]
    pub max_push_configs: usize,
    /// Most stored tasks (finished ones are evicted oldest first).
    #[arg(long, default_value_t = Limits::default().max_tasks)]
    pub max_tasks: usize,
    /// Longest wait of a blocking SendMessage, in milliseconds.
    #[arg(long, default_value_t = Limits::default().max_blocking_ms)]
    pub max_blocking_ms: u64,
}

impl From<&LimitArgs> for Limits {
    fn from(a: &LimitArgs) -> Self {
        Limits {
            max_request_bytes: a.max_request_bytes,
            max_json_depth: a.max_json_depth,
            max_parts: a.max_parts,
            max_id_len: a.max_id_len,
            max_history: a.max_history,
            max_task_events: a.max_task_events,
            max_subscribers: a.max_subscribers,
            max_push_configs: a.max_push_configs,
            max_tasks: a.max_tasks,
            max_blocking_ms: a.max_blocking_ms,
        }
    }
}

impl MockArgs {
    /// The mock configuration these flags describe.
    pub fn to_config(&self) -> MockConfig {
        let defaults = MockConfig::default();
        MockConfig {
            name: self.name.clone(),
            streaming: !self.no_streaming,
            push_notifications: !self.no_push,
            extended_card: match (&self.extended_card_token, self.extended_card_unconfigured) {
                (Some(t), _) => ExtendedCard::Bearer(t.clone()),
                (None, true) => ExtendedCard::Unconfigured,
                (None, false) => ExtendedCard::Off,
            },
            extensions: self.extensions.clone(),
            required_extensions: self.required_extensions.clone(),
            tenant: self.tenant.clone(),
            public_url: self.public_url.clone(),
            input_modes: if self.input_modes.is_empty() { defaults.input_modes } else { self.input_modes.clone() },
            output_modes: if self.output_modes.is_empty() { defaults.output_modes } else { self.output_modes.clone() },
            missing_version: if self.strict_version { MissingVersion::Reject } else { MissingVersion::AssumeCurrent },
            webhooks: if self.allow_private_webhooks {
                WebhookPolicy::AllowPrivate
            } else if self.allow_loopback_webhooks {
                WebhookPolicy::AllowLoopback
            } else {
                WebhookPolicy::PublicOnly
            },
            push_timeout_ms: self.push_timeout_ms,
            push_retries: self.push_retries,
            scenario_dir: self.scenarios.clone(),
            limits: Limits::from(&self.limits),
            card_max_age_secs: self.card_max_age,
        }
    }
}

/// Runs the parsed command; the returned code is the process exit status.
pub async fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Mock(args) => {
            let addr = SocketAddr::new(args.host, args.port);
            let server = MockServer::bind(args.to_config(), addr)
                .await
                .with_context(|| format!("starting the mock peer on {addr}"))?;
            // The first line is the contract scripts rely on.
            println!("listening on {}", server.url());
            println!("agent card: {}", server.card_url());
            println!("JSON-RPC:   {}", server.rpc_url());
            use std::io::Write as _;
            std::io::stdout().flush().ok();
            server.run_until_ctrl_c().await;
            Ok(0)
        }
    }
}

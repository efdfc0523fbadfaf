//! Command-line front end: argument parsing and wiring only.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::client::http::ClientConfig;
use crate::commands::card::{CardCommand, CardOptions};
use crate::commands::check::{self, CheckOptions, Output};
use crate::commands::client::{ClientCommand, ClientOptions, parse_headers};
use crate::commands::registry::{self, FailOn, shard::ShardSpec, targets::BehaviorSource};
use crate::commands::{bench, client_check, coverage, mock, report, selftest};
use crate::protocol::limits::Limits;
use crate::report::baseline::Baseline;
use crate::report::files::Format;
use crate::report::terminal::use_color;
use crate::server::config::CardSigning;
use crate::server::faults::FaultCatalogue;
use crate::server::fleet::FleetConfig;
use crate::server::freedoms::FreedomCatalogue;
use crate::server::{Bindings, ExtendedCard, MissingVersion, MockConfig, WebhookPolicy};
use crate::suite::behaviors::{BehaviorMap, Behaviors};
use crate::suite::binding::Binding;

/// Conformance test kit and faithful mock peer for the A2A protocol 1.0.
#[derive(Debug, Parser)]
#[command(name = "a2a-conform", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct ClientCheckArgs {
    /// List the scenarios and the client checks, then exit.
    #[arg(long)]
    pub list: bool,
    /// Provoke the client this way (repeatable): see --list.
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<String>,
    /// Bound on the client's command, in seconds; then it is stopped (SIGTERM, then SIGKILL).
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Without a command: how long to grade whatever client connects, in seconds.
    #[arg(long, default_value_t = 60)]
    pub duration: u64,
    /// Where the mock listens.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Serve the extended card to callers presenting `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "TOKEN")]
    pub extended_card_token: Option<String>,
    /// Grade only checks whose id matches this glob (repeatable).
    #[arg(long = "only", value_name = "GLOB")]
    pub only: Vec<String>,
    /// SHOULD violations fail instead of warn.
    #[arg(long)]
    pub strict: bool,
    /// Directory for report files (client.log holds the command's output).
    #[arg(long, default_value = "a2a-client-report")]
    pub out: PathBuf,
    /// Report files to write (comma-separated): json, junit, acts, html, sarif, md.
    #[arg(long, value_delimiter = ',', default_value = "json,junit")]
    pub format: Vec<FormatArg>,
    /// Accepted failures, as for `check`.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// No notes on stderr, and the client's output is not echoed (errors still print).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print run events as JSON lines on stdout instead of the summary.
    #[arg(long)]
    pub json_lines: bool,
    /// No colours in the summary.
    #[arg(long)]
    pub no_color: bool,
    /// The client to grade and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `client-check`: flags into options, then the command.
async fn run_client_check(args: ClientCheckArgs) -> anyhow::Result<i32> {
    if args.list {
        return client_check::list();
    }
    let opts = client_check::ClientCheckOptions {
        scenarios: args.scenarios.clone(),
        timeout: std::time::Duration::from_secs(args.timeout.max(1)),
        duration: std::time::Duration::from_secs(args.duration.max(1)),
        bind: SocketAddr::new(args.host, args.port),
        extended_card_token: args.extended_card_token.clone(),
        strict: args.strict,
        only: args.only.clone(),
        baseline: match &args.baseline {
            Some(path) => Some(Baseline::load(path).map_err(|e| anyhow::anyhow!("--baseline: {e}"))?),
            None => None,
        },
        ..client_check::ClientCheckOptions::new(args.command.clone())
    };
    let output = Output {
        json_lines: args.json_lines,
        color: use_color(
            args.no_color,
            std::env::var_os("NO_COLOR").as_deref(),
            std::io::IsTerminal::is_terminal(&std::io::stdout()),
        ),
        dir: args.out.clone(),
        formats: args.format.iter().map(|f| Format::from(*f)).collect(),
        progress: false,
        quiet: args.quiet,
    };
    Ok(client_check::run_command(opts, &output).await)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check an A2A agent's conformance (with no URL: the embedded mock peer) and write reports.
    Check(CheckArgs),
    /// Serve a spec-exact A2A 1.0 mock agent (JSON-RPC + SSE) on a local port.
    Mock(MockArgs),
    /// Grade an A2A client: start the mock on loopback, run COMMAND against it ({url} and A2A_URL
    /// give its URL), or grade whatever client connects, then check what the client sent.
    ClientCheck(ClientCheckArgs),
    /// The mock's catalogue of named spec violations.
    Faults {
        #[command(subcommand)]
        command: FaultsCommand,
    },
    /// The mock's catalogue of behaviours the spec allows, each with the sentence that allows it:
    /// no check may fail, warn or end in error on any of them.
    Freedoms {
        #[command(subcommand)]
        command: FreedomsCommand,
    },
    /// Prove the checks: run them against the clean mock and against the mock committing each
    /// fault alone, and print the kill matrix.
    Selftest(SelftestArgs),
    /// Measure the kit and the mock on loopback (suite time, throughput, latency, memory), each
    /// figure also as a ratio to baselines measured in the same run; writes bench.json.
    Bench(BenchArgs),
    /// Work with saved reports: render one in another format, or compare two.
    Report {
        #[command(subcommand)]
        command: ReportCommand,
    },
    /// Traceability: every normative sentence of the spec, its proto and JSON-RPC 2.0 with the
    /// checks that quote it or why no server check can; the share of testable sentences covered;
    /// the gaps.
    Coverage {
        /// Print the same as JSON.
        #[arg(long)]
        json: bool,
        /// Print only the gaps: testable server sentences no check quotes.
        #[arg(long, conflicts_with = "freedoms")]
        gaps: bool,
        /// Print the freedom side instead: the MAY sentences and optional members an agent sends
        /// that no freedom of the mock's catalogue shows (so no selftest proves the checks accept them).
        #[arg(long)]
        freedoms: bool,
    },
    /// Talk to any A2A agent by hand; prints JSON (one line per stream event).
    Client {
        #[command(subcommand)]
        command: ClientCommand,
        #[command(flatten)]
        options: ClientOptions,
    },
    /// Agent cards: fetch, lint (1.0 structure; a 0.3 card is named), sign and verify (§8.4).
    Card {
        #[command(subcommand)]
        command: CardCommand,
        #[command(flatten)]
        options: CardOptions,
    },
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Agent base URL or card URL. Without it, an embedded mock peer is started and checked.
    pub url: Option<String>,
    /// Profile to run (repeatable or comma-separated): core, streaming, push, extended-card,
    /// signatures, security, caps, resume, legacy. Default: all.
    #[arg(long = "profile", value_delimiter = ',')]
    pub profiles: Vec<String>,
    /// Extra suite file or directory (JSON or YAML, e.g. an ACTS corpus); repeatable.
    #[arg(long = "suite", value_name = "PATH")]
    pub suites: Vec<PathBuf>,
    /// Run only the suites given with --suite.
    #[arg(long)]
    pub no_builtin: bool,
    /// Run only checks whose id matches this glob (repeatable), e.g. 'CORE-*'.
    #[arg(long = "only", value_name = "GLOB")]
    pub only: Vec<String>,
    /// Skip checks whose id matches this glob (repeatable).
    #[arg(long = "exclude", value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Header sent with every request, `Name: value` (repeatable). Values are secrets: they are
    /// redacted from every report and log.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// A second caller's header `Name: value` (repeatable), sent instead of the `--header`
    /// credentials by the tenant isolation checks (profile security). Redacted like --header.
    #[arg(long = "header-b", value_name = "NAME: VALUE")]
    pub header_b: Vec<String>,
    /// A public key the agent's cards must be signed with (repeatable): PEM, JWK or JWK Set. The
    /// signatures checks verify the public and extended card against these.
    #[arg(long = "trust-key", value_name = "FILE")]
    pub trust_keys: Vec<PathBuf>,
    /// Which messages make the agent do what checks need: `discover` (the default for a URL: the
    /// kit tries the neutral prompt and the card's skill examples, once each, and uses the
    /// behaviours it sees happen), `acts` (it implements the ACTS §11 tck-* prefixes; the default
    /// for the embedded mock), `none`, or a behaviour map FILE (YAML or JSON) naming the message
    /// that makes your agent do each behaviour. Checks needing a behaviour that is not available
    /// skip with behavior_not_available, saying what the prompts tried did.
    #[arg(long, value_name = "discover|acts|none|FILE")]
    pub behaviors: Option<String>,
    /// The neutral message checks that need no behaviour send to the agent.
    #[arg(long, default_value = check::DEFAULT_PROMPT)]
    pub prompt: String,
    /// SHOULD violations fail instead of warn.
    #[arg(long)]
    pub strict: bool,
    /// Checks run concurrently [default: 4 for a URL; 32 for the embedded mock, where checks
    /// mostly wait on scripted delays].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Time bound of one check in seconds (each HTTP exchange gets at most 10 s of it).
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Seconds to wait for what the agent does on its own: a stream to close, a webhook to be called.
    #[arg(long, default_value_t = 15)]
    pub patience: u64,
    /// Directory for report files.
    #[arg(long, default_value = "a2a-conform-report")]
    pub out: PathBuf,
    /// Report files to write (comma-separated): json, junit, acts, html, sarif, md.
    #[arg(long, value_delimiter = ',', default_value = "json,junit")]
    pub format: Vec<FormatArg>,
    /// Accepted failures (YAML or JSON: entries with id, reason and an optional expires date). A
    /// listed failure does not fail the run; a listed check that now passes is stale and does.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// No progress bar and no notes on stderr (errors still print).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Address of the webhook receiver the kit hosts for push checks.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub webhook_bind: SocketAddr,
    /// Public base URL of that receiver, when the agent reaches it through another address.
    #[arg(long)]
    pub webhook_url: Option<String>,
    /// Also send requests to this host (repeatable): by default the kit talks only to the host of
    /// URL, and a card whose interface is elsewhere is a finding.
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,
    /// The bindings to grade: `jsonrpc`, `http+json` or `all` (default: every binding the card
    /// declares that the kit speaks). A binding-neutral check is graded once per binding; over
    /// HTTP+JSON its id carries `[http+json]`.
    #[arg(long, value_name = "jsonrpc|http+json|all", default_value = "all")]
    pub binding: String,
    /// Use this JSON-RPC endpoint instead of the card's interface URL (e.g. when the card
    /// advertises https but the agent speaks plain HTTP, or names an internal host).
    #[arg(long, value_name = "URL")]
    pub rpc_url: Option<String>,
    /// Bound on the whole run in seconds: checks still running or waiting then end as error.
    #[arg(long, default_value_t = 600)]
    pub deadline: u64,
    /// Grade every check as written even when the diagnosis (KIT-DIAG-001) finds a 0.3 spelling
    /// the agent accepts: the checks that need a task then wait on CORE-SEND-001. By default the
    /// other checks' requests are sent that way, and each result graded so says it was.
    #[arg(long)]
    pub no_workaround: bool,
    /// Print run events as JSON lines on stdout instead of the summary.
    #[arg(long)]
    pub json_lines: bool,
    /// No colours in the summary.
    #[arg(long)]
    pub no_color: bool,
    /// Check every agent of a targets file (YAML or JSON: each with url and optional name,
    /// profiles, prompt, behaviors, rpc_url, allow_hosts, headers and header_b given as the NAMES
    /// of environment variables, labels). Each agent's report goes to OUT/<name>/, then
    /// OUT/index.json, index.html and junit.xml.
    #[arg(long, value_name = "FILE", conflicts_with = "url")]
    pub targets: Option<PathBuf>,
    /// With --targets: agents checked at once [default: 16 per core, at most 64].
    #[arg(long, requires = "targets")]
    pub parallel: Option<usize>,
    /// With --targets: agents of one host (host:port) checked at once; 0 for no limit.
    #[arg(long, default_value_t = 4, requires = "targets")]
    pub per_host: usize,
    /// With --targets: check only the K-th of N shards (1-based K, e.g. 2/4). A target's shard
    /// follows from its name alone, so every target is in exactly one shard whatever the order of
    /// the file. Merge the shards' outputs with `a2a-conform report merge`.
    #[arg(long, value_name = "K/N", requires = "targets")]
    pub shard: Option<ShardSpec>,
    /// With --targets: keep the agents whose complete report an earlier run left in OUT/<name>/.
    #[arg(long, requires = "targets")]
    pub resume: bool,
    /// With --targets: the exit status: 1 if any agent is non-conformant (`any`), if more than
    /// half are (`majority`), or never (`none`).
    #[arg(long, value_enum, default_value = "any", requires = "targets")]
    pub fail_on: FailOn,
    /// Check each agent N times in a row and report, per check, the outcomes that came; a check
    /// whose outcome changed is a finding of its own (KIT-REPEAT-001).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Render a report.json in another format, on stdout or into --output.
    Render {
        /// The report.json to render.
        report: PathBuf,
        /// html, sarif, md, junit, acts or json.
        #[arg(long)]
        format: FormatArg,
        /// Write here instead of stdout.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// What changed from OLD to NEW: new failures, fixed checks, changed outcomes, added and
    /// removed checks. Exit 1 on a regression (a scored check that newly fails or errors).
    Diff {
        old: PathBuf,
        new: PathBuf,
        /// Print the diff as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Merge the outputs of registry shards (`check --targets`, one run per shard: each a folder with
    /// index.json and one folder per agent) into OUT: every agent's folder copied, one index.json,
    /// index.html and junit.xml. An agent in two shards is refused. Exit 0, or 2 on an error.
    Merge {
        /// Shard output folders.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// The merged folder (may be one of the DIRs).
        #[arg(long, value_name = "OUT")]
        out: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum FaultsCommand {
    /// List every fault: id, spec section, description.
    List,
}

#[derive(Debug, Subcommand)]
pub enum FreedomsCommand {
    /// List every freedom: id, spec section, description.
    List,
}

#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Mock + check runs at once (mostly waiting on scripted delays, so more than the cores).
    #[arg(long, default_value_t = 16)]
    pub parallel: usize,
    /// Checks at once within one run (they mostly wait, as against the embedded mock).
    #[arg(long, default_value_t = crate::commands::check::EMBEDDED_JOBS)]
    pub jobs: usize,
    /// Only this fault (repeatable).
    #[arg(long = "fault", value_name = "ID")]
    pub faults: Vec<String>,
    /// For suite authors: grade with the suite files in DIR instead of the compiled-in ones, so
    /// an edited check is measured without a rebuild.
    #[arg(long, value_name = "DIR")]
    pub suites: Option<PathBuf>,
    /// For fault authors: commit the faults of the `*.json` files in DIR instead of the
    /// compiled-in catalogue.
    #[arg(long, value_name = "DIR")]
    pub faults_dir: Option<PathBuf>,
    /// What to run: `faults` (each fault alone: the kill matrix), `freedoms` (each behaviour the
    /// spec allows, alone and in combinations), `mixes` (several faults at once). Default: all,
    /// or only `faults` with --fault.
    #[arg(long, value_delimiter = ',', value_name = "PART")]
    pub part: Vec<SelftestPart>,
    /// Combinations of freedoms shown together.
    #[arg(long, default_value_t = 24, value_name = "N")]
    pub combinations: usize,
    /// Mixes of 2 to 8 faults committed together.
    #[arg(long, default_value_t = 24, value_name = "N")]
    pub mixes: usize,
    /// Seed of the combinations and the mixes (printed with them).
    #[arg(long, default_value_t = selftest::DEFAULT_SEED)]
    pub seed: u64,
    /// Directory for matrix.json and matrix.md.
    #[arg(long, default_value = "a2a-conform-selftest")]
    pub out: PathBuf,
}

/// A part of `selftest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SelftestPart {
    Faults,
    Freedoms,
    Mixes,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Directory for bench.json.
    #[arg(long, default_value = "a2a-conform-bench")]
    pub out: PathBuf,
    /// Small, short measurements that only show the command works (seconds, not a minute).
    #[arg(long)]
    pub quick: bool,
    /// Measure `check --targets` against `mock --fleet` at 100 and 1000 agents instead (10 and 30
    /// with --quick): agents per hour and the checker's peak memory; writes fleet.json.
    #[arg(long)]
    pub fleet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// report.json
    Json,
    /// junit.xml
    Junit,
    /// acts-report.json
    Acts,
    /// report.html: one self-contained page
    Html,
    /// report.sarif: SARIF 2.1.0
    Sarif,
    /// report.md: a pull-request comment
    #[value(alias = "markdown")]
    Md,
}

/// `mock --binding`: which protocol bindings the card declares and the mock serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BindingArg {
    /// JSON-RPC at /rpc only
    Jsonrpc,
    /// HTTP+JSON/REST at the root only
    #[value(name = "http+json")]
    HttpJson,
    /// Both, JSON-RPC first on the card (`all`, as `check --binding` spells it, is read too)
    #[value(alias = "all")]
    Both,
}

impl From<BindingArg> for Bindings {
    fn from(b: BindingArg) -> Bindings {
        match b {
            BindingArg::Jsonrpc => Bindings::JsonRpc,
            BindingArg::HttpJson => Bindings::HttpJson,
            BindingArg::Both => Bindings::Both,
        }
    }
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Json => Format::Json,
            FormatArg::Junit => Format::Junit,
            FormatArg::Acts => Format::Acts,
            FormatArg::Html => Format::Html,
            FormatArg::Sarif => Format::Sarif,
            FormatArg::Md => Format::Markdown,
        }
    }
}

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
    /// A caller's bearer token (repeatable: one per caller). With any, every method requires one
    /// (`Authorization: Bearer TOKEN`; else -32000 and HTTP 401), the card declares the scheme and
    /// the requirement, and each caller sees only its own tasks.
    #[arg(long = "auth-token", value_name = "TOKEN")]
    pub auth_tokens: Vec<String>,
    /// Sign the public and the extended card with this P-256 key (PEM or JWK) (§8.4).
    #[arg(long, value_name = "FILE")]
    pub sign_key: Option<PathBuf>,
    /// `kid` of the card signatures (default: the key's JWK `kid`, else its RFC 7638 thumbprint).
    #[arg(long, requires = "sign_key")]
    pub sign_kid: Option<String>,
    /// `jku` of the card signatures: where clients can fetch the public key set.
    #[arg(long, requires = "sign_key")]
    pub sign_jku: Option<String>,
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
    /// Serve a request without A2A-Version as 1.0 (for clients that omit the header) instead of reading
    /// it as 0.3 and answering -32009, as §3.6.2 says.
    #[arg(long)]
    pub lenient_version: bool,
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
    /// Ignore every tck-* prefix: behave as a plain echo agent, as an agent without the ACTS
    /// contract does.
    #[arg(long)]
    pub no_behaviors: bool,
    /// Directory of extra scenario files (*.json), overriding built-ins of the same name.
    #[arg(long, value_name = "DIR")]
    pub scenarios: Option<PathBuf>,
    /// The scenario a message no tck-* prefix selects runs (default: echo), e.g. tck-input-required
    /// for an agent that always asks for more input.
    #[arg(long, value_name = "NAME")]
    pub default_scenario: Option<String>,
    /// Cache-Control max-age of the agent card, in seconds.
    #[arg(long, default_value_t = 300)]
    pub card_max_age: u64,
    /// Scripted waits (a long-running task's work) last this percentage of their written length:
    /// a mock only a kit talks to need not keep tasks running for seconds (`check` runs its
    /// embedded mock at 33).
    #[arg(long, default_value_t = 100, value_name = "PERCENT")]
    pub sleep_percent: u32,
    /// Commit a named spec violation (repeatable); see `a2a-conform faults list`.
    #[arg(long = "fault", value_name = "ID")]
    pub faults: Vec<String>,
    /// Show a behaviour the spec allows (repeatable), over the other flags; see `a2a-conform
    /// freedoms list`.
    #[arg(long = "freedom", value_name = "ID")]
    pub freedoms: Vec<String>,
    /// Close SubscribeToTask streams at INPUT_REQUIRED / AUTH_REQUIRED too (§11.7); by default they
    /// stay open to a terminal state (§3.1.6, §7.6.1), as the Python SDK's do.
    #[arg(long)]
    pub subscribe_closes_at_interrupted: bool,
    /// Neither declare the resume extension nor honour `afterEventId` (Last-Event-ID still works).
    #[arg(long)]
    pub no_resume_extension: bool,
    /// Which protocol bindings the card declares and the mock serves: JSON-RPC at /rpc, HTTP+JSON
    /// (REST, §11) at the root; a binding not declared is not served.
    #[arg(long, value_enum, default_value = "both", value_name = "BINDING")]
    pub binding: BindingArg,
    /// Serve the card at PREFIX/.well-known/agent-card.json and both bindings under PREFIX (e.g. /agents/a).
    #[arg(long, value_name = "PREFIX", default_value = "")]
    pub path_prefix: String,
    /// Accept the 0.3 method names (message/send, tasks/get, ...) as aliases of the 1.0 ones.
    #[arg(long)]
    pub legacy_method_names: bool,
    /// Refuse a messageId already used, with -32602 naming message.messageId.
    #[arg(long)]
    pub single_use_message_ids: bool,
    /// Put a google.rpc.ErrorInfo detail on every error, JSON-RPC standard codes included.
    #[arg(long)]
    pub error_info_everywhere: bool,
    /// Print the limits table (flag, value, default, what is bounded, what happens beyond) and exit.
    #[arg(long)]
    pub print_limits: bool,
    /// Serve N distinct agents on the one listener, agent k under /agents/aNNNN (a0001, ...), each
    /// with its own card, tasks and faults from the built-in catalogue: about a third faithful,
    /// the rest one or two faults each. The other flags apply to every agent.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with_all = ["faults", "path_prefix", "name"])]
    pub fleet: Option<u32>,
    /// Seed of the fleet's faults: the same seed gives agent k the same faults in a fleet of any size.
    #[arg(long, value_name = "S", default_value_t = 0, requires = "fleet")]
    pub fleet_seed: u64,
    /// Write a targets file (YAML) listing every agent of the fleet with its URL and faults, before
    /// the first line is printed.
    #[arg(long, value_name = "FILE", requires = "fleet")]
    pub targets_out: Option<PathBuf>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Debug, Args)]
pub struct LimitArgs {
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = Limits::default().max_request_bytes)]
    pub max_request_bytes: usize,
    /// Deepest JSON nesting in a request.
    #[arg(long, default_value_t = Limits::default().max_json_depth)]
    pub max_json_depth: usize,
    /// Largest non-streaming result, in bytes.
    #[arg(long, default_value_t = Limits::default().max_response_bytes)]
    pub max_response_bytes: usize,
    /// Largest SSE event, in bytes.
    #[arg(long, default_value_t = Limits::default().max_event_bytes)]
    pub max_event_bytes: usize,
    /// Longest life of one SSE stream, in milliseconds.
    #[arg(long, default_value_t = Limits::default().max_stream_ms)]
    pub max_stream_ms: u64,
    /// Message ids remembered by --single-use-message-ids.
    #[arg(long, default_value_t = Limits::default().max_message_ids)]
    pub max_message_ids: usize,
    /// Largest page a list method returns.
    #[arg(long, default_value_t = Limits::default().max_page_size)]
    pub max_page_size: usize,
    /// Longest pageToken accepted, in bytes.
    #[arg(long, default_value_t = Limits::default().max_cursor_len)]
    pub max_cursor_len: usize,
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
            max_response_bytes: a.max_response_bytes,
            max_event_bytes: a.max_event_bytes,
            max_stream_ms: a.max_stream_ms,
            max_message_ids: a.max_message_ids,
            max_page_size: a.max_page_size,
            max_cursor_len: a.max_cursor_len,
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
    pub fn to_config(&self) -> anyhow::Result<MockConfig> {
        let defaults = MockConfig::default();
        let catalogue = FaultCatalogue::builtin()?;
        let faults = self
            .faults
            .iter()
            .map(|id| {
                catalogue.get(id).ok_or_else(|| anyhow::anyhow!("unknown fault {id:?}; see `a2a-conform faults list`"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let freedoms = FreedomCatalogue::builtin()?.pick(&self.freedoms)?;
        let signing = match &self.sign_key {
            Some(path) => {
                let key = crate::card::keys::read_private_key(path)?;
                let mut signing = CardSigning::new(key);
                if let Some(kid) = &self.sign_kid {
                    signing.kid = kid.clone();
                }
                signing.jku = self.sign_jku.clone();
                Some(signing)
            }
            None => None,
        };
        let mut config = MockConfig {
            faults,
            callers: self.auth_tokens.clone(),
            signing,
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
            missing_version: if self.lenient_version { MissingVersion::AssumeCurrent } else { MissingVersion::Reject },
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
            behaviors: !self.no_behaviors,
            limits: Limits::from(&self.limits),
            card_max_age_secs: self.card_max_age,
            subscribe_until_terminal: !self.subscribe_closes_at_interrupted,
            resume_extension: !self.no_resume_extension,
            path_prefix: self.path_prefix.clone(),
            legacy_method_names: self.legacy_method_names,
            single_use_message_ids: self.single_use_message_ids,
            error_info_everywhere: self.error_info_everywhere,
            record_requests: false,
            sleep_percent: self.sleep_percent,
            default_scenario: self.default_scenario.clone(),
            cut_streams_after: None,
            interface_elsewhere: false,
            bindings: self.binding.into(),
            ..defaults
        };
        // A freedom's settings win over the flags: it is the behaviour asked for.
        crate::server::freedoms::apply_all(&freedoms, &mut config)?;
        Ok(config)
    }
}

/// `check`: flags into options, then the command.
async fn run_check(args: CheckArgs) -> anyhow::Result<i32> {
    let headers = parse_headers(&args.headers).map_err(|e| anyhow::anyhow!(e))?;
    let header_b =
        parse_headers(&args.header_b).map_err(|e| anyhow::anyhow!("{}", e.replace("--header", "--header-b")))?;
    let mut trust_keys = Vec::new();
    for path in &args.trust_keys {
        trust_keys.extend(crate::card::keys::read_public_keys(path).map_err(|e| anyhow::anyhow!("--trust-key {e}"))?);
    }
    let opts = CheckOptions {
        header_b,
        trust_keys,
        profiles: args.profiles.clone(),
        suites: args.suites.clone(),
        no_builtin: args.no_builtin,
        only: args.only.clone(),
        exclude: args.exclude.clone(),
        strict: args.strict,
        jobs: args
            .jobs
            .unwrap_or(if args.url.is_none() && args.targets.is_none() { check::EMBEDDED_JOBS } else { 4 })
            .max(1),
        timeout: std::time::Duration::from_secs(args.timeout.max(1)),
        patience: std::time::Duration::from_secs(args.patience.max(1)),
        client: ClientConfig { headers, ..ClientConfig::default() },
        webhook_bind: args.webhook_bind,
        webhook_url: args.webhook_url.clone(),
        prompt: args.prompt.clone(),
        allow_hosts: args.allow_hosts.clone(),
        rpc_url: args.rpc_url.clone(),
        deadline: std::time::Duration::from_secs(args.deadline.max(1)),
        workaround: !args.no_workaround,
        bindings: match args.binding.as_str() {
            "all" => Vec::new(),
            b => vec![
                Binding::parse(b)
                    .ok_or_else(|| anyhow::anyhow!("--binding {b:?}: expected jsonrpc, http+json or all"))?,
            ],
        },
        baseline: match &args.baseline {
            Some(path) => Some(Baseline::load(path).map_err(|e| anyhow::anyhow!("--baseline: {e}"))?),
            None => None,
        },
        ..CheckOptions::new(args.url.clone().unwrap_or_default())
    };
    let output = Output {
        json_lines: args.json_lines,
        color: use_color(
            args.no_color,
            std::env::var_os("NO_COLOR").as_deref(),
            std::io::IsTerminal::is_terminal(&std::io::stdout()),
        ),
        dir: args.out.clone(),
        formats: args.format.iter().map(|f| Format::from(*f)).collect(),
        progress: !args.quiet && !args.json_lines && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        quiet: args.quiet,
    };
    if let Some(targets) = &args.targets {
        let behaviors = match args.behaviors.as_deref() {
            None => BehaviorSource::Unset,
            Some("discover") => BehaviorSource::Discover,
            Some("acts") => BehaviorSource::Acts,
            Some("none") => BehaviorSource::None,
            Some(file) => BehaviorSource::Map(PathBuf::from(file)),
        };
        let opts = registry::RegistryOptions {
            targets: targets.clone(),
            shared: registry::agent::Shared {
                base: opts,
                behaviors,
                out: output.dir.clone(),
                formats: output.formats.clone(),
                repeat: args.repeat.max(1),
            },
            parallel: args.parallel.unwrap_or_else(registry::default_parallel).max(1),
            per_host: args.per_host,
            shard: args.shard,
            resume: args.resume,
            fail_on: args.fail_on,
            progress: output.progress,
            quiet: args.quiet,
        };
        return Ok(registry::run_command(opts).await);
    }
    let behaviors = match args.behaviors.as_deref() {
        None | Some("discover") => None,
        Some("acts") => Some(Behaviors::Acts),
        Some("none") => Some(Behaviors::None),
        Some(file) => Some(Behaviors::Map(
            BehaviorMap::load(std::path::Path::new(file)).map_err(|e| anyhow::anyhow!("--behaviors: {e}"))?,
        )),
    };
    if args.repeat > 1 {
        return Ok(registry::repeat_one(args.url.is_none(), behaviors, opts, args.repeat, &output).await);
    }
    Ok(check::run_command(args.url.is_none(), behaviors, opts, &output).await)
}

/// Runs the parsed command; the returned code is the process exit status.
pub async fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Check(args) => run_check(args).await,
        Command::ClientCheck(args) => run_client_check(args).await,
        Command::Faults { command: FaultsCommand::List } => mock::list_faults(),
        Command::Freedoms { command: FreedomsCommand::List } => mock::list_freedoms(),
        Command::Selftest(args) => {
            let parts = match args.part.as_slice() {
                [] if !args.faults.is_empty() => vec![SelftestPart::Faults],
                [] => vec![SelftestPart::Faults, SelftestPart::Freedoms, SelftestPart::Mixes],
                some => some.to_vec(),
            };
            let opts = selftest::SelftestOptions {
                parallel_runs: args.parallel.max(1),
                jobs: args.jobs.max(1),
                faults: args.faults.clone(),
                single_faults: parts.contains(&SelftestPart::Faults),
                suites: args.suites.clone(),
                faults_dir: args.faults_dir.clone(),
                freedoms: parts.contains(&SelftestPart::Freedoms),
                combinations: if parts.contains(&SelftestPart::Freedoms) { args.combinations } else { 0 },
                mixes: if parts.contains(&SelftestPart::Mixes) { args.mixes } else { 0 },
                seed: args.seed,
                ..Default::default()
            };
            selftest::run_command(&opts, &args.out).await
        }
        Command::Bench(args) => {
            bench::run_command(&bench::BenchOptions { out: args.out, quick: args.quick, fleet: args.fleet }).await
        }
        Command::Report { command: ReportCommand::Render { report, format, output } } => {
            report::render(&report, format.into(), output.as_deref())
        }
        Command::Report { command: ReportCommand::Diff { old, new, json } } => report::diff(&old, &new, json),
        Command::Report { command: ReportCommand::Merge { dirs, out } } => report::merge(&dirs, &out),
        Command::Coverage { json, gaps, freedoms } => coverage::run_command(json, gaps, freedoms),
        Command::Client { command, options } => crate::commands::client::run(command, options).await,
        Command::Card { command, options } => Ok(crate::commands::card::run(command, options).await),
        Command::Mock(args) if args.print_limits => mock::print_limits(&args.to_config()?),
        Command::Mock(args) => match args.fleet {
            Some(agents) => {
                let config = FleetConfig { agents: agents as usize, seed: args.fleet_seed, base: args.to_config()? };
                mock::serve_fleet(config, SocketAddr::new(args.host, args.port), args.targets_out.as_deref()).await
            }
            None => mock::serve(args.to_config()?, SocketAddr::new(args.host, args.port)).await,
        },
    }
}

//! One `check` run end to end: load and plan the suites, discover the card, run the checks, and
//! tell the sinks everything as it happens. Report files, the terminal view and JSON lines are
//! sinks the caller chooses; the report this returns is built by a collector from the same events.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::client::discovery::{self, Discovery, DiscoveryError};
use crate::client::http::{ClientConfig, HttpClient};
use crate::client::redact::Redactor;
use crate::engine::behaviors;
use crate::engine::context::Ctx;
use crate::engine::evidence::ToEvidence as _;
use crate::engine::scheduler;
use crate::engine::webhook::WebhookReceiver;
use crate::report::files::{FileSink, Format};
use crate::report::json::now_rfc3339;
use crate::report::lines::JsonLines;
use crate::report::terminal::TerminalSink;
use crate::report::{
    CheckMeta, CheckResult, Collector, Failure, Report, RunEvent, RunInfo, Sink, SkipReason, SuiteSource, TargetInfo,
    Verdict,
};
use crate::server::{ExtendedCard, MockConfig, MockError, MockServer, WebhookPolicy};
use crate::suite::behaviors::Behaviors;
use crate::suite::loader::{self, LoadedSuite};
use crate::suite::plan::{self, Disposition, PlannedCheck, Selection};

/// Commit of the A2A specification the built-in checks were written against.
pub const SPEC_COMMIT: &str = "16ba52690519bf55b9388e34d4db356efa88aa51";

/// What contract-free checks send when `--prompt` does not say otherwise.
pub const DEFAULT_PROMPT: &str = "hello";

/// Id of the synthetic check that reports a 0.3 peer (declared in `suites/kit.json`).
pub const LEGACY_PEER: &str = "KIT-LEGACY-000";

/// Everything a check run needs. [`CheckOptions::new`] gives the CLI's defaults.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Agent base URL or card URL.
    pub target: String,
    /// Profiles to run (empty: all).
    pub profiles: Vec<String>,
    /// Extra suite files or directories.
    pub suites: Vec<PathBuf>,
    /// Leave the built-in suites out (the kit's synthetic checks stay).
    pub no_builtin: bool,
    /// Id globs to keep (empty: all).
    pub only: Vec<String>,
    /// Id globs to drop.
    pub exclude: Vec<String>,
    /// Where the behaviours checks need come from (none, the ACTS contract, the user's map).
    pub behaviors: Behaviors,
    /// The neutral message contract-free checks send.
    pub prompt: String,
    /// SHOULD violations fail.
    pub strict: bool,
    /// Checks run at once.
    pub jobs: usize,
    /// Time bound of one check; also bounds each HTTP exchange.
    pub timeout: Duration,
    /// How long to wait for a stream to close or a webhook to be called (within `timeout`).
    pub patience: Duration,
    /// HTTP client settings (headers, caps).
    pub client: ClientConfig,
    /// Where the kit's webhook receiver listens.
    pub webhook_bind: SocketAddr,
    /// Public base URL of the receiver, when agents reach it through another address.
    pub webhook_url: Option<String>,
}

impl CheckOptions {
    pub fn new(target: impl Into<String>) -> Self {
        CheckOptions {
            target: target.into(),
            profiles: Vec::new(),
            suites: Vec::new(),
            no_builtin: false,
            only: Vec::new(),
            exclude: Vec::new(),
            behaviors: Behaviors::None,
            prompt: DEFAULT_PROMPT.to_owned(),
            strict: false,
            jobs: 4,
            timeout: Duration::from_secs(30),
            patience: Duration::from_secs(15),
            client: ClientConfig::default(),
            webhook_bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            webhook_url: None,
        }
    }
}

/// Where `check` on the command line puts its results.
#[derive(Debug, Clone)]
pub struct Output {
    /// JSON lines on stdout instead of the summary.
    pub json_lines: bool,
    /// ANSI colours in the summary.
    pub color: bool,
    /// Directory of the report files.
    pub dir: PathBuf,
    pub formats: Vec<Format>,
}

/// `a2a-conform check`: against `opts.target`, or (with `embedded`) against a mock started for the
/// purpose, with the ACTS behaviours unless `behaviors` says otherwise. Prints to the terminal,
/// writes the report files, and returns the exit status.
pub async fn run_command(embedded: bool, behaviors: Option<Behaviors>, mut opts: CheckOptions, output: &Output) -> i32 {
    let mock = if embedded {
        let (server, auth) = match start_embedded_mock().await {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: starting the embedded mock peer: {e}");
                return 2;
            }
        };
        // The embedded mock's extended card needs its own token; a user Authorization would shadow it.
        let headers = &mut opts.client.headers;
        if headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(&auth.0)) {
            eprintln!("note: the embedded mock uses its own Authorization header; yours is not sent");
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&auth.0));
        }
        headers.push(auth);
        eprintln!("checking the embedded mock peer at {}", server.url());
        opts.target = server.url().to_owned();
        Some(server)
    } else {
        None
    };
    // The embedded mock implements the ACTS contract; an agent out there is not assumed to.
    opts.behaviors = behaviors.unwrap_or(if embedded { Behaviors::Acts } else { Behaviors::None });
    let mut files: Vec<FileSink> = output.formats.iter().map(|f| FileSink::new(*f, &output.dir)).collect();
    let mut view: Box<dyn Sink + Send> = if output.json_lines {
        Box::new(JsonLines::new(std::io::stdout()))
    } else {
        Box::new(TerminalSink::new(std::io::stdout(), output.color))
    };
    let outcome = {
        let mut sinks: Vec<&mut (dyn Sink + Send)> = vec![view.as_mut()];
        sinks.extend(files.iter_mut().map(|f| f as &mut (dyn Sink + Send)));
        run(&opts, &mut sinks).await
    };
    if let Some(server) = mock {
        server.shutdown().await;
    }
    match outcome {
        Ok(report) => {
            let mut code = report.verdict.exit_code;
            for f in &files {
                match f.outcome() {
                    Some(Ok(p)) => eprintln!("wrote {}", p.display()),
                    Some(Err(e)) => {
                        eprintln!("error: {e}");
                        code = 2;
                    }
                    None => {}
                }
            }
            code
        }
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// A run that could not happen; the message is for a person.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// Bad flags or suite files (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The target did not answer (exit 3).
    #[error("{0}")]
    Unreachable(String),
    /// The target answered, but not with an agent card (exit 2).
    #[error("{0}")]
    NotAnAgent(String),
}

impl CheckError {
    /// The process exit status (DESIGN: 2 usage/input, 3 inconclusive).
    pub fn exit_code(&self) -> i32 {
        match self {
            CheckError::Unreachable(_) => 3,
            CheckError::Usage(_) | CheckError::NotAnAgent(_) => 2,
        }
    }
}

/// Starts the mock peer that `check` grades when no URL is given: every capability on, an
/// extended card behind a fresh bearer token, loopback webhooks allowed. Returns the server and the
/// header that authenticates to it.
pub async fn start_embedded_mock() -> Result<(MockServer, (String, String)), MockError> {
    start_mock_with(MockConfig::default()).await
}

/// [`start_embedded_mock`] from another base configuration (faults, limits); the extended card and
/// the webhook policy are set as the checks need them.
pub async fn start_mock_with(base: MockConfig) -> Result<(MockServer, (String, String)), MockError> {
    let token = format!("kit-{}", uuid::Uuid::new_v4().simple());
    let config = MockConfig {
        extended_card: ExtendedCard::Bearer(token.clone()),
        webhooks: WebhookPolicy::AllowLoopback,
        ..base
    };
    let server = MockServer::start(config).await?;
    Ok((server, ("Authorization".to_owned(), format!("Bearer {token}"))))
}

fn load_suites(opts: &CheckOptions) -> Result<Vec<LoadedSuite>, CheckError> {
    let usage = |e: loader::LoadError| CheckError::Usage(e.to_string());
    let mut suites = vec![loader::kit().map_err(usage)?];
    if !opts.no_builtin {
        suites.extend(loader::builtin().map_err(usage)?);
    }
    for p in &opts.suites {
        suites.extend(loader::load_path(p).map_err(usage)?);
    }
    if suites.len() == 1 {
        return Err(CheckError::Usage("no suites to run (--no-builtin without --suite)".into()));
    }
    Ok(suites)
}

/// Runs the whole check against `opts.target`, telling `sink` every event; returns the report a
/// collector built from those events.
pub async fn run(opts: &CheckOptions, sink: &mut (dyn Sink + Send)) -> Result<Report, CheckError> {
    let mut collector = Collector::new();
    {
        let mut both: Vec<&mut (dyn Sink + Send)> = vec![sink, &mut collector];
        run_events(opts, &mut both).await?;
    }
    // The run always ends with RunFinished, which is when the collector builds the report.
    Ok(collector.into_report().expect("a finished run has a report"))
}

async fn run_events(opts: &CheckOptions, sink: &mut (dyn Sink + Send)) -> Result<(), CheckError> {
    let started = Instant::now();
    let started_at = now_rfc3339();
    let suites = load_suites(opts)?;
    let redactor = Redactor::from_headers(&opts.client.headers);
    let mut client_cfg = opts.client.clone();
    client_cfg.timeout = client_cfg.timeout.min(opts.timeout);
    let client = HttpClient::new(client_cfg).map_err(|e| CheckError::Usage(e.to_string()))?;
    let discovery = discovery::discover(&client, &opts.target).await.map_err(|e| match e {
        DiscoveryError::Client(_) => {
            CheckError::Unreachable(redactor.redact(&format!("cannot reach {}: {e}", opts.target)))
        }
        DiscoveryError::InvalidTarget { .. } => CheckError::Usage(redactor.redact(&e.to_string())),
        other => CheckError::NotAnAgent(
            redactor.redact(&format!("{} does not serve an A2A agent card: {other}", opts.target)),
        ),
    })?;
    let sel = Selection {
        profiles: opts.profiles.clone(),
        only: opts.only.clone(),
        exclude: opts.exclude.clone(),
        behaviors: opts.behaviors.clone(),
        credentials: !opts.client.headers.is_empty(),
    };
    let checks = plan::plan(&suites, &sel, Some(&discovery.card)).map_err(CheckError::Usage)?;
    if discovery.interface.is_none() {
        let legacy = discovery::v03_fields(&discovery.card);
        if !legacy.is_empty() {
            let declared = checks.iter().find(|c| c.test.id == LEGACY_PEER).ok_or_else(|| {
                CheckError::Usage(format!("{LEGACY_PEER} is not declared in the kit's synthetic checks"))
            })?;
            let mut result = legacy_result(&declared.meta(), &discovery, &redactor, &legacy);
            result.duration_ms = started.elapsed().as_millis() as u64;
            let info = run_info(opts, &suites, started_at, target_info(opts, &discovery, discovery.notes.clone()));
            sink.event(&RunEvent::RunStarted { info: Box::new(info), planned: vec![result.id.clone()] });
            sink.event(&RunEvent::CheckStarted { id: result.id.clone() });
            sink.event(&RunEvent::CheckFinished(Box::new(result.clone())));
            finish(sink, &[result], started);
            return Ok(());
        }
    }
    // The legacy verdict is only ever decided above: against a 1.0 card it has nothing to say.
    let checks: Vec<PlannedCheck> = checks.into_iter().filter(|c| c.test.id != LEGACY_PEER).collect();
    // A 1.0 card without a usable JSON-RPC interface is itself a finding: the card checks still run
    // (and fail), the checks that need the interface end in `error`.
    let iface = discovery.interface.clone();
    let mut notes = discovery.notes.clone();
    if iface.is_none() {
        notes.push("the card offers no A2A 1.0 JSON-RPC interface: only the card could be checked".into());
    }
    let mut checks = checks;
    let webhook = if checks.iter().any(needs_webhook) {
        Some(Arc::new(WebhookReceiver::start(opts.webhook_bind, opts.webhook_url.clone()).await.map_err(|e| {
            CheckError::Usage(format!("cannot start the webhook receiver on {}: {e}", opts.webhook_bind))
        })?))
    } else {
        None
    };
    let target = target_info(opts, &discovery, notes);
    let ctx = Arc::new(Ctx {
        client,
        redactor,
        rpc_url: iface.as_ref().map(|i| i.url.clone()).unwrap_or_default(),
        tenant: iface.as_ref().and_then(|i| i.tenant.clone()).unwrap_or_default(),
        base_url: origin_of(&discovery.card_url),
        discovery,
        webhook,
        strict: opts.strict,
        patience: opts.patience.min(opts.timeout),
        behaviors: opts.behaviors.clone(),
        prompt: opts.prompt.clone(),
        wire: Mutex::new(Vec::new()),
    });
    let mut target = target;
    refute_mapped_behaviors(&ctx, &mut checks, &mut target.notes, opts.timeout).await;
    let info = run_info(opts, &suites, started_at, target);
    let planned = checks.iter().map(|c| c.test.id.clone()).collect();
    sink.event(&RunEvent::RunStarted { info: Box::new(info), planned });
    let results = scheduler::run_all(ctx, checks, opts.jobs, opts.timeout, sink).await;
    finish(sink, &results, started);
    Ok(())
}

/// Tries each mapped behaviour the planned checks need; a behaviour the agent does not do is
/// reported once (a note on the target) and its checks skip with `precondition_failed`.
async fn refute_mapped_behaviors(ctx: &Ctx, checks: &mut [PlannedCheck], notes: &mut Vec<String>, budget: Duration) {
    let mut needed: Vec<String> = checks
        .iter()
        .filter(|c| c.disposition == Disposition::Run)
        .flat_map(|c| c.test.requires_behaviors.iter().cloned())
        .collect();
    needed.sort();
    needed.dedup();
    let refuted = behaviors::confirm(ctx, &needed, budget).await;
    for (name, why) in &refuted {
        notes.push(format!("behaviour map: {name} did not happen: {why}"));
    }
    for c in checks.iter_mut().filter(|c| c.disposition == Disposition::Run) {
        if let Some((name, why)) = c.test.requires_behaviors.iter().find_map(|b| refuted.get_key_value(b)) {
            c.disposition = Disposition::Skip(SkipReason::PreconditionFailed, format!("{name}: {why}"));
        }
    }
}

/// Push config checks need a webhook URL even when nothing is delivered, so the receiver runs
/// whenever any push-related check does.
fn needs_webhook(c: &PlannedCheck) -> bool {
    c.disposition == Disposition::Run
        && (c.profile == "push"
            || c.test.runner_requirements.iter().any(|r| r == "webhook_endpoint")
            || serde_json::to_string(&c.test).is_ok_and(|t| t.contains("{{webhookUrl}}")))
}

fn finish(sink: &mut (dyn Sink + Send), results: &[CheckResult], started: Instant) {
    sink.event(&RunEvent::RunFinished {
        verdict: Verdict::decide(results).0,
        duration_ms: started.elapsed().as_millis() as u64,
        finished_at: now_rfc3339(),
    });
}

/// A 0.3 peer cannot be checked as 1.0; the run reports what identified it (legacy profile).
fn legacy_result(meta: &CheckMeta, discovery: &Discovery, redactor: &Redactor, fields: &[&str]) -> CheckResult {
    let failure = Failure {
        message: format!(
            "identified as an A2A 0.3 agent: its card has {} and no A2A 1.0 JSON-RPC interface",
            fields.join(", ")
        ),
        step_id: Some("card".into()),
        pointer: Some("/supportedInterfaces".into()),
        expected: Some("supportedInterfaces with a JSONRPC entry of protocolVersion 1.0".into()),
        actual: Some(
            fields
                .iter()
                .map(|f| format!("{f}: {}", discovery.card.get(*f).map(|v| v.to_string()).unwrap_or_default()))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    };
    CheckResult {
        evidence: vec![discovery.exchange.to_evidence(Some("card"), redactor)],
        ..CheckResult::violated(meta, false, failure)
    }
}

fn target_info(opts: &CheckOptions, discovery: &Discovery, notes: Vec<String>) -> TargetInfo {
    TargetInfo {
        url: opts.target.clone(),
        card_sha256: Some(hex::encode(Sha256::digest(&discovery.exchange.body))),
        capabilities: discovery.card.get("capabilities").cloned(),
        notes,
    }
}

fn run_info(opts: &CheckOptions, suites: &[LoadedSuite], started_at: String, target: TargetInfo) -> RunInfo {
    RunInfo {
        tool: "a2a-conform".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        spec_version: "1.0".into(),
        spec_commit: SPEC_COMMIT.into(),
        run_id: uuid::Uuid::new_v4().to_string(),
        mode: "server".into(),
        started_at,
        strict: opts.strict,
        profiles: opts.profiles.clone(),
        seed: None,
        suites: suites
            .iter()
            .map(|s| SuiteSource { name: s.name.clone(), origin: s.origin.to_owned(), sha256: s.sha256.clone() })
            .collect(),
        target,
    }
}

fn origin_of(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => url.trim_end_matches('/').to_owned(),
    }
}

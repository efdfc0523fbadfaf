//! One `check` run end to end: discover the card, plan, run, build the report and write its files.
//! The CLI only parses flags into [`CheckOptions`] and prints what comes back.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::loader::{self, LoadedSuite};
use super::plan::{self, Selection};
use super::runner::{self, Ctx};
use super::webhook::WebhookReceiver;
use crate::client::discovery::{self, DiscoveryError};
use crate::client::http::{ClientConfig, HttpClient};
use crate::client::redact::Redactor;
use crate::report::{self, Report, RunEvent, RunInfo, SuiteSource, TargetInfo};
use crate::server::{ExtendedCard, MockConfig, MockError, MockServer, WebhookPolicy};

/// Commit of the A2A specification the built-in checks were written against.
pub const SPEC_COMMIT: &str = "16ba52690519bf55b9388e34d4db356efa88aa51";

/// Report formats written into `--out`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `report.json` (the kit's report, a superset of ACTS §13).
    Json,
    /// `junit.xml`.
    Junit,
    /// `acts-report.json` (the strict ACTS §13 subset).
    Acts,
}

/// Everything a check run needs.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Agent base URL or card URL.
    pub target: String,
    /// Profiles to run (empty: all).
    pub profiles: Vec<String>,
    /// Extra suite files or directories.
    pub suites: Vec<PathBuf>,
    /// Leave the built-in suites out.
    pub no_builtin: bool,
    /// Id globs to keep / drop.
    pub only: Vec<String>,
    /// Id globs to drop.
    pub exclude: Vec<String>,
    /// The agent implements the ACTS behaviour contract.
    pub behaviors: bool,
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
    /// Where report files go (none written when `None`).
    pub out: Option<PathBuf>,
    /// Which files.
    pub formats: Vec<Format>,
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
    let token = format!("kit-{}", uuid::Uuid::new_v4().simple());
    let config = MockConfig {
        extended_card: ExtendedCard::Bearer(token.clone()),
        webhooks: WebhookPolicy::AllowLoopback,
        ..MockConfig::default()
    };
    let server = MockServer::start(config).await?;
    Ok((server, ("Authorization".to_owned(), format!("Bearer {token}"))))
}

/// The outcome of a run: the report and the files written.
#[derive(Debug)]
pub struct CheckOutcome {
    /// The report.
    pub report: Report,
    /// Paths written.
    pub written: Vec<PathBuf>,
}

fn load_suites(opts: &CheckOptions) -> Result<Vec<LoadedSuite>, CheckError> {
    let mut suites =
        if opts.no_builtin { Vec::new() } else { loader::builtin().map_err(|e| CheckError::Usage(e.to_string()))? };
    for p in &opts.suites {
        suites.extend(loader::load_path(p).map_err(|e| CheckError::Usage(e.to_string()))?);
    }
    if suites.is_empty() {
        return Err(CheckError::Usage("no suites to run (--no-builtin without --suite)".into()));
    }
    Ok(suites)
}

/// Runs the whole check against `opts.target`, sending events to `sink`.
pub async fn run(opts: &CheckOptions, sink: &mut (dyn FnMut(&RunEvent) + Send)) -> Result<CheckOutcome, CheckError> {
    let started = Instant::now();
    let started_at = report::json::now_rfc3339();
    let suites = load_suites(opts)?;
    let mut redactor = Redactor::default();
    for (_, v) in &opts.client.headers {
        redactor.add(v);
    }
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
    if discovery.interface.is_none() {
        let legacy = discovery::v03_fields(&discovery.card);
        if !legacy.is_empty() {
            return legacy_outcome(opts, &suites, &discovery, &redactor, &legacy, started, started_at, sink);
        }
    }
    // A 1.0 card without a usable JSON-RPC interface is itself a finding: the card checks still run
    // (and fail), the checks that need the interface end in `error`.
    let iface = discovery.interface.clone();
    let mut notes = discovery.notes.clone();
    if iface.is_none() {
        notes.push("the card offers no A2A 1.0 JSON-RPC interface: only the card could be checked".into());
    }
    let base_url = origin_of(&discovery.card_url);
    let sel = Selection {
        profiles: opts.profiles.clone(),
        only: opts.only.clone(),
        exclude: opts.exclude.clone(),
        behaviors: opts.behaviors,
        credentials: !opts.client.headers.is_empty(),
    };
    let checks = plan::plan(&suites, &sel, Some(&discovery.card)).map_err(CheckError::Usage)?;
    // Push config checks need a webhook URL even when nothing is delivered, so the receiver runs
    // whenever any push-related check does.
    let needs_webhook = checks.iter().any(|c| {
        c.skip.is_none()
            && (c.profile == "push"
                || c.test.runner_requirements.iter().any(|r| r == "webhook_endpoint")
                || serde_json::to_string(&c.test).is_ok_and(|t| t.contains("{{webhookUrl}}")))
    });
    let webhook = if needs_webhook {
        Some(Arc::new(WebhookReceiver::start(opts.webhook_bind, opts.webhook_url.clone()).await.map_err(|e| {
            CheckError::Usage(format!("cannot start the webhook receiver on {}: {e}", opts.webhook_bind))
        })?))
    } else {
        None
    };
    let target = TargetInfo {
        url: opts.target.clone(),
        card_sha256: Some(hex::encode(Sha256::digest(&discovery.exchange.body))),
        capabilities: discovery.card.get("capabilities").cloned(),
        notes,
    };
    let ctx = Arc::new(Ctx {
        client,
        redactor,
        rpc_url: iface.as_ref().map(|i| i.url.clone()).unwrap_or_default(),
        tenant: iface.as_ref().and_then(|i| i.tenant.clone()).unwrap_or_default(),
        base_url,
        discovery,
        webhook,
        strict: opts.strict,
        patience: opts.patience.min(opts.timeout),
        wire: Mutex::new(Vec::new()),
    });
    sink(&RunEvent::RunStarted { target: opts.target.clone(), planned: checks.len() + 1 });
    let wire_selected = !plan::filtered_out("WIRE-SCHEMA", &sel).map_err(CheckError::Usage)?;
    let results = runner::run_all(ctx, checks, opts.jobs, opts.timeout, wire_selected, sink).await;
    let duration_ms = started.elapsed().as_millis() as u64;
    let info = run_info(opts, &suites, started_at, target);
    finish(opts, info, results, duration_ms, sink)
}

/// A 0.3 peer cannot be checked as 1.0; the run reports what identified it (legacy profile).
#[allow(clippy::too_many_arguments)]
fn legacy_outcome(
    opts: &CheckOptions,
    suites: &[LoadedSuite],
    discovery: &discovery::Discovery,
    redactor: &Redactor,
    fields: &[&str],
    started: Instant,
    started_at: String,
    sink: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<CheckOutcome, CheckError> {
    use crate::report::{CheckResult, Failure, Level, Outcome, SpecRef};
    let result = CheckResult {
        id: "KIT-LEGACY-001".into(),
        title: "The agent speaks A2A 1.0, not 0.3".into(),
        suite: "synthetic".into(),
        profile: "legacy".into(),
        level: Level::Must,
        spec: SpecRef {
            section: "8.3.1".into(),
            requirement: "An Agent Card MUST declare its interfaces in supportedInterfaces, each with url, \
                          protocolBinding and protocolVersion."
                .into(),
        },
        outcome: Outcome::Fail,
        skip_reason: None,
        skip_detail: None,
        scored: true,
        duration_ms: started.elapsed().as_millis() as u64,
        failure: Some(Failure {
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
        }),
        measurement: None,
        evidence: vec![discovery.exchange.to_evidence(Some("card"), redactor)],
    };
    sink(&RunEvent::RunStarted { target: opts.target.clone(), planned: 1 });
    sink(&RunEvent::CheckStarted { id: result.id.clone() });
    sink(&RunEvent::CheckFinished(Box::new(result.clone())));
    let results = vec![result];
    let duration_ms = started.elapsed().as_millis() as u64;
    let info = run_info(
        opts,
        suites,
        started_at,
        TargetInfo {
            url: opts.target.clone(),
            card_sha256: Some(hex::encode(Sha256::digest(&discovery.exchange.body))),
            capabilities: discovery.card.get("capabilities").cloned(),
            notes: discovery.notes.clone(),
        },
    );
    finish(opts, info, results, duration_ms, sink)
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

fn finish(
    opts: &CheckOptions,
    info: RunInfo,
    results: Vec<crate::report::CheckResult>,
    duration_ms: u64,
    sink: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<CheckOutcome, CheckError> {
    let report = report::build_report(&info, &results, duration_ms);
    sink(&RunEvent::RunFinished { verdict: report_verdict(&results), duration_ms });
    let written = match &opts.out {
        Some(dir) => write_files(&report, dir, &opts.formats)
            .map_err(|e| CheckError::Usage(format!("writing reports to {}: {e}", dir.display())))?,
        None => Vec::new(),
    };
    Ok(CheckOutcome { report, written })
}

fn report_verdict(results: &[crate::report::CheckResult]) -> crate::report::Verdict {
    crate::report::Verdict::decide(results).0
}

fn origin_of(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => url.trim_end_matches('/').to_owned(),
    }
}

fn write_files(report: &Report, dir: &std::path::Path, formats: &[Format]) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = Vec::new();
    for f in formats {
        let path = match f {
            Format::Json => {
                let p = dir.join("report.json");
                report::write_json(report, &p)?;
                p
            }
            Format::Junit => {
                let p = dir.join("junit.xml");
                report::junit::write_junit(report, &p)?;
                p
            }
            Format::Acts => {
                let p = dir.join("acts-report.json");
                let v = report::acts::to_acts(report, None);
                std::fs::write(&p, format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default()))?;
                p
            }
        };
        out.push(path);
    }
    Ok(out)
}

//! One `check` run end to end: load and plan the suites, discover the card, run the checks, and
//! tell the sinks everything as it happens. Report files, the terminal view and JSON lines are
//! sinks the caller chooses; the report this returns is built by a collector from the same events.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::card::PublicKey;

use crate::client::discovery::{self, Discovery, DiscoveryError};
use crate::client::http::{ClientConfig, HttpClient};
use crate::client::redact::Redactor;
use crate::engine::behaviors;
use crate::engine::context::{Callers, Ctx};
use crate::engine::diagnose;
use crate::engine::discover;
use crate::engine::evidence::ToEvidence as _;
use crate::engine::guard::{CANARY_HEADER, Guard};
use crate::engine::reach;
use crate::engine::scheduler::{self, DIAGNOSIS, INTERFACE};
use crate::engine::webhook::WebhookReceiver;
use crate::report::baseline::{self, Baseline, Overlay};
use crate::report::files::{FileSink, Format};
use crate::report::json::now_rfc3339;
use crate::report::lines::JsonLines;
use crate::report::progress::Progress;
use crate::report::terminal::TerminalSink;
use crate::report::{
    CheckMeta, CheckResult, Collector, Failure, Report, RunEvent, RunInfo, Sink, SkipReason, SuiteSource, TargetInfo,
    Verdict,
};
use crate::server::config::CardSigning;
use crate::server::{ExtendedCard, MockConfig, MockError, MockServer, WebhookPolicy};
use crate::suite::behaviors::Behaviors;
use crate::suite::binding::{Binding, step_bindings};
use crate::suite::loader::{self, LoadedSuite};
use crate::suite::plan::{self, Disposition, PlannedCheck, Selection};

/// Commit of the A2A specification the built-in checks were written against.
pub const SPEC_COMMIT: &str = "16ba52690519bf55b9388e34d4db356efa88aa51";

/// What contract-free checks send when `--prompt` does not say otherwise.
pub const DEFAULT_PROMPT: &str = "hello";

/// Checks at once against the embedded mock: they mostly wait (on scripted delays, streams,
/// webhooks), so the bound is how much waiting may overlap, not the number of cores.
pub const EMBEDDED_JOBS: usize = 32;

/// Length of the embedded mock's scripted sleeps, in percent of the scripts': a long-running task
/// then lasts half a second, still many round trips for the checks that subscribe to it or
/// cancel it while it runs.
pub const EMBEDDED_SLEEP_PERCENT: u32 = 33;

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
    /// Hosts besides the target's that the kit may send to (a card's interface elsewhere).
    pub allow_hosts: Vec<String>,
    /// The JSON-RPC endpoint to use instead of the card's interface URL.
    pub rpc_url: Option<String>,
    /// Bound on the whole run: once reached, every check still running or waiting ends as error.
    pub deadline: Duration,
    /// The bindings to grade (empty: every binding the card declares that the kit speaks).
    pub bindings: Vec<Binding>,
    /// Accepted failures laid over the results (`--baseline`).
    pub baseline: Option<Baseline>,
    /// The second caller's headers (`--header-b`) for the tenant isolation checks; redacted like
    /// `--header`.
    pub header_b: Vec<(String, String)>,
    /// Public keys trusted to sign the agent's cards (`--trust-key`).
    pub trust_keys: Vec<PublicKey>,
    /// When the diagnosis finds a 0.3 spelling the agent accepts, send every other check's
    /// requests that way (`--no-workaround` turns it off).
    pub workaround: bool,
    /// With no behaviours given (`behaviors` none), find them: try the neutral prompt and the
    /// card's skill examples and keep the behaviours seen happen (the default for a URL given no
    /// `--behaviors`).
    pub discover_behaviors: bool,
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
            discover_behaviors: false,
            prompt: DEFAULT_PROMPT.to_owned(),
            strict: false,
            jobs: 4,
            timeout: Duration::from_secs(30),
            patience: Duration::from_secs(15),
            client: ClientConfig::default(),
            webhook_bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            webhook_url: None,
            allow_hosts: Vec::new(),
            rpc_url: None,
            deadline: Duration::from_secs(600),
            bindings: Vec::new(),
            baseline: None,
            header_b: Vec::new(),
            trust_keys: Vec::new(),
            workaround: true,
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
    /// A progress bar on stderr (the caller decides: a terminal, not `--quiet`).
    pub progress: bool,
    /// No notes on stderr besides errors.
    pub quiet: bool,
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
        // The embedded mock's callers have their own tokens; a user Authorization would shadow them.
        if opts.client.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization")) || !opts.header_b.is_empty()
        {
            eprintln!("note: the embedded mock uses its own Authorization headers; yours are not sent");
        }
        if !opts.trust_keys.is_empty() {
            eprintln!("note: the embedded mock signs its cards with a key of its own; --trust-key is replaced by it");
        }
        auth.apply(&mut opts);
        if !output.quiet {
            eprintln!("checking the embedded mock peer at {}", server.url());
        }
        opts.target = server.url().to_owned();
        Some(server)
    } else {
        None
    };
    // The embedded mock implements the ACTS contract; an agent out there is not assumed to.
    // An agent given no --behaviors gets the ones the kit sees it do.
    opts.discover_behaviors = behaviors.is_none() && !embedded;
    opts.behaviors = behaviors.unwrap_or(if embedded { Behaviors::Acts } else { Behaviors::None });
    let mut files: Vec<FileSink> = output.formats.iter().map(|f| FileSink::new(*f, &output.dir)).collect();
    let mut view: Box<dyn Sink + Send> = if output.json_lines {
        Box::new(JsonLines::new(std::io::stdout()))
    } else {
        Box::new(TerminalSink::new(std::io::stdout(), output.color))
    };
    // The bar goes first, so that it is cleared before the summary prints.
    let mut progress = Progress::new(output.progress);
    let outcome = {
        let mut sinks: Vec<&mut (dyn Sink + Send)> = vec![&mut progress, view.as_mut()];
        sinks.extend(files.iter_mut().map(|f| f as &mut (dyn Sink + Send)));
        run(&opts, &mut sinks).await
    };
    if let Some(server) = mock {
        server.shutdown().await;
    }
    let mut code = match &outcome {
        Ok(report) => report.verdict.exit_code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    };
    for f in &files {
        match f.outcome() {
            Some(Ok(p)) if !output.quiet => eprintln!("wrote {}", p.display()),
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                eprintln!("error: {e}");
                code = 2;
            }
            None => {}
        }
    }
    code
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
    /// A signal ended the run before any check started (exit 3).
    #[error("{0}")]
    Interrupted(String),
}

impl CheckError {
    /// The process exit status (DESIGN: 2 usage/input, 3 inconclusive).
    pub fn exit_code(&self) -> i32 {
        match self {
            CheckError::Unreachable(_) | CheckError::Interrupted(_) => 3,
            CheckError::Usage(_) | CheckError::NotAnAgent(_) => 2,
        }
    }
}

/// What a check run needs to speak to a mock started by [`start_mock_with`]: the first caller's
/// header, the second caller's, and the public key the mock signs its cards with.
#[derive(Debug, Clone)]
pub struct MockAccess {
    /// The first caller's `Authorization` header.
    pub caller_a: (String, String),
    /// The second caller's `Authorization` header.
    pub caller_b: (String, String),
    /// The key the mock signs its cards with.
    pub trust_key: PublicKey,
}

impl MockAccess {
    /// Sets `opts` to speak as the first caller, with the second caller and the signing key known,
    /// replacing any Authorization header and trusted key there.
    pub fn apply(&self, opts: &mut CheckOptions) {
        opts.client.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&self.caller_a.0));
        opts.client.headers.push(self.caller_a.clone());
        opts.header_b = vec![self.caller_b.clone()];
        opts.trust_keys = vec![self.trust_key.clone()];
    }
}

/// Starts the mock peer that `check` grades when no URL is given: every capability on, two callers
/// with bearer tokens of their own (every method requires one; each sees only its own tasks), the
/// extended card behind the first's, both cards signed with a fresh key, loopback webhooks allowed.
pub async fn start_embedded_mock() -> Result<(MockServer, MockAccess), MockError> {
    start_mock_with(MockConfig { sleep_percent: EMBEDDED_SLEEP_PERCENT, ..MockConfig::default() }).await
}

/// [`start_embedded_mock`] from another base configuration (faults, limits); callers, the
/// extended card, card signing and the webhook policy are set as the checks need them.
pub async fn start_mock_with(base: MockConfig) -> Result<(MockServer, MockAccess), MockError> {
    let (config, access) = embedded_config(base);
    Ok((MockServer::start(config).await?, access))
}

/// The settings [`start_mock_with`] starts a mock with, and how to speak to it: for a caller that
/// changes them further (the freedoms `selftest` shows win over every other setting).
pub fn embedded_config(base: MockConfig) -> (MockConfig, MockAccess) {
    let token = |who: &str| format!("kit-{who}-{}", uuid::Uuid::new_v4().simple());
    let (a, b) = (token("a"), token("b"));
    let signing = CardSigning::new(crate::card::PrivateKey::generate());
    let trust_key = signing.key.public();
    let config = MockConfig {
        extended_card: ExtendedCard::Bearer(a.clone()),
        callers: vec![a.clone(), b.clone()],
        signing: Some(signing),
        webhooks: WebhookPolicy::AllowLoopback,
        ..base
    };
    let bearer = |t: &str| ("Authorization".to_owned(), format!("Bearer {t}"));
    (config, MockAccess { caller_a: bearer(&a), caller_b: bearer(&b), trust_key })
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
    let (report, ended) = run_to_report(opts, sink).await;
    ended?;
    // The run always ends with RunFinished, which is when the collector builds the report.
    Ok(report.expect("a finished run has a report"))
}

/// Like [`run`], and the report also of a run that ended early (an agent that could not be
/// reached leaves a report saying so); `None` only when the run never started (a usage error).
pub async fn run_to_report(
    opts: &CheckOptions,
    sink: &mut (dyn Sink + Send),
) -> (Option<Report>, Result<(), CheckError>) {
    let mut collector = Collector::new();
    let ended = {
        let mut both: Vec<&mut (dyn Sink + Send)> = vec![sink, &mut collector];
        match &opts.baseline {
            // Every sink, the collector included, sees the run with the baseline applied.
            Some(b) => run_events(opts, &mut Overlay::new(&mut both, b.clone(), baseline::today())).await,
            None => run_events(opts, &mut both).await,
        }
    };
    (collector.into_report(), ended)
}

async fn run_events(opts: &CheckOptions, sink: &mut (dyn Sink + Send)) -> Result<(), CheckError> {
    // Listening from the start: once listened to, SIGINT and SIGTERM no longer end the process,
    // and the run ends as any other does, with its report.
    let (signalled, signal) = tokio::sync::watch::channel(None::<String>);
    let signals = tokio::spawn(async move {
        let _ = signalled.send(Some(interrupted().await));
    });
    // Every way out of the run stops listening, the early ones (no card, a 0.3 peer) included.
    let _listening = AbortOnDrop(signals.abort_handle());
    let started = Instant::now();
    let started_at = now_rfc3339();
    let suites = load_suites(opts)?;
    let mut redactor = Redactor::from_headers(&opts.client.headers);
    for (_, v) in &opts.header_b {
        redactor.add(v);
    }
    let mut client_cfg = opts.client.clone();
    client_cfg.timeout = client_cfg.timeout.min(opts.timeout);
    // The kit talks to the host the user named, the hosts they allowed, and their --rpc-url.
    client_cfg.allowed_hosts = [Some(&opts.target), opts.rpc_url.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|u| reach::host_of(u))
        .chain(opts.allow_hosts.iter().map(|h| h.to_ascii_lowercase()))
        .collect();
    let client = HttpClient::new(client_cfg.clone()).map_err(|e| CheckError::Usage(e.to_string()))?;
    // A signal while the card is fetched ends the run there, with a report saying so.
    let fetched = tokio::select! {
        d = discovery::discover(&client, &opts.target) => d.map_err(Ok),
        why = signal_of(signal.clone()) => Err(Err(why)),
    };
    let discovery = match fetched {
        Ok(d) => d,
        Err(e) => {
            let err = match e {
                Err(why) => CheckError::Interrupted(format!("{why} while the agent card was fetched")),
                Ok(e @ DiscoveryError::Client(_)) => {
                    CheckError::Unreachable(redactor.redact(&format!("cannot reach {}: {e}", opts.target)))
                }
                Ok(e @ DiscoveryError::InvalidTarget { .. }) => CheckError::Usage(redactor.redact(&e.to_string())),
                Ok(other) => CheckError::NotAnAgent(
                    redactor.redact(&format!("{} does not serve an A2A agent card: {other}", opts.target)),
                ),
            };
            // Even a run that never got past the card leaves a report saying why.
            let target = TargetInfo { url: opts.target.clone(), notes: vec![err.to_string()], ..TargetInfo::default() };
            let info = run_info(opts, &suites, started_at, target);
            sink.event(&RunEvent::RunStarted { info: Box::new(info), planned: Vec::new() });
            let verdict = if err.exit_code() == 3 { Verdict::Inconclusive } else { Verdict::UsageError };
            sink.event(&RunEvent::RunFinished {
                verdict,
                reasons: vec![err.to_string()],
                duration_ms: started.elapsed().as_millis() as u64,
                finished_at: now_rfc3339(),
            });
            return Err(err);
        }
    };
    let rest = discovery::select_binding(&discovery.card, Binding::HttpJson.protocol_binding());
    let rpc_declared = discovery.interface.is_some() || opts.rpc_url.is_some();
    let bindings = graded_bindings(opts, rpc_declared, rest.is_some());
    let sel = Selection {
        profiles: opts.profiles.clone(),
        only: opts.only.clone(),
        exclude: opts.exclude.clone(),
        behaviors: opts.behaviors.clone(),
        credentials: !opts.client.headers.is_empty(),
        second_caller: !opts.header_b.is_empty(),
        bindings: bindings.clone(),
        undeclared: undeclared_bindings(&bindings, &discovery.card, rpc_declared, rest.is_some()),
    };
    let checks = plan::plan(&suites, &sel, Some(&discovery.card)).map_err(CheckError::Usage)?;
    if discovery.interface.is_none() && rest.is_none() {
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
    let mut notes = discovery.notes.clone();
    let tenant = discovery.interface.as_ref().and_then(|i| i.tenant.clone()).unwrap_or_default();
    let rest_tenant = rest.as_ref().and_then(|i| i.tenant.clone()).unwrap_or_default();
    // The interface of each binding graded, and why it cannot be used: each problem is one finding
    // (KIT-IFACE-001), and the checks that need that interface wait on it instead of failing one by one.
    let mut interfaces: Vec<(Binding, String, String)> = Vec::new();
    let mut problems: Vec<(Binding, String)> = Vec::new();
    for b in &bindings {
        let (url, t) = match b {
            Binding::JsonRpc => {
                (opts.rpc_url.clone().or_else(|| discovery.interface.as_ref().map(|i| i.url.clone())), &tenant)
            }
            Binding::HttpJson => (rest.as_ref().map(|i| i.url.clone()), &rest_tenant),
        };
        match url {
            None => problems.push((*b, no_interface(&discovery.card, *b))),
            Some(url) => match reach::refused_host(&url, &client_cfg.allowed_hosts, *b) {
                Some(why) => problems.push((*b, why)),
                None => interfaces.push((*b, url, t.clone())),
            },
        }
    }
    // Canaries: a credential-shaped value in every request, looked for in every answer.
    let canaries = canaries(opts, &discovery.card);
    for (_, value) in &canaries {
        redactor.add(value);
    }
    client_cfg.headers.extend(canaries.iter().filter_map(|(place, value)| canary_header(place, value)));
    let mut client = client.reconfigured(client_cfg.clone()).map_err(|e| CheckError::Usage(e.to_string()))?;
    let mut canaries = canaries;
    let mut reached = Vec::new();
    for (b, url, t) in interfaces {
        match reach::probe(&client, b, &url, &t).await {
            Ok(x) if matches!(x.status, 401 | 403) && canaries.iter().any(|(p, _)| p == AUTH_CANARY) => {
                // The agent objects to the kit's invented credential: drop it, keep the rest.
                notes.push(format!(
                    "the agent answered HTTP {} to a random Authorization; that canary is not sent",
                    x.status
                ));
                let dropped: Vec<String> =
                    canaries.iter().filter(|(p, _)| p == AUTH_CANARY).map(|(_, v)| v.clone()).collect();
                canaries.retain(|(p, _)| p != AUTH_CANARY);
                client_cfg.headers.retain(|(n, v)| !(n.eq_ignore_ascii_case("authorization") && dropped.contains(v)));
                client = client.reconfigured(client_cfg.clone()).map_err(|e| CheckError::Usage(e.to_string()))?;
                reached.push((b, url));
            }
            Ok(_) => reached.push((b, url)),
            Err(why) => problems.push((b, redactor.redact(&why))),
        }
    }
    for (_, why) in &problems {
        notes.push(why.clone());
    }
    let url_of = |b: Binding| reached.iter().find(|(x, _)| *x == b).map(|(_, u)| u.clone());
    let unusable = |b: &Binding| problems.iter().any(|(x, _)| x == b);
    let mut checks = checks;
    for c in checks.iter_mut().filter(|c| {
        c.disposition == Disposition::Run
            && plan::uses_interface(&c.test)
            && (unusable(&c.binding) || step_bindings(&c.test).iter().any(unusable))
    }) {
        c.disposition = Disposition::Blocked {
            cause: INTERFACE.into(),
            detail: format!("{INTERFACE}: the interface cannot be used"),
        };
    }
    let webhook = if checks.iter().any(needs_webhook) {
        Some(Arc::new(WebhookReceiver::start(opts.webhook_bind, opts.webhook_url.clone()).await.map_err(|e| {
            CheckError::Usage(format!("cannot start the webhook receiver on {}: {e}", opts.webhook_bind))
        })?))
    } else {
        None
    };
    let target = target_info(opts, &discovery, notes);
    let mut ctx = Ctx {
        client,
        redactor,
        rpc_url: url_of(Binding::JsonRpc).unwrap_or_default(),
        tenant,
        rest_url: url_of(Binding::HttpJson).unwrap_or_default(),
        rest_tenant,
        primary: bindings.iter().copied().find(|b| url_of(*b).is_some()),
        rest_streams: Default::default(),
        base_url: origin_of(&discovery.card_url),
        discovery,
        webhook,
        strict: opts.strict,
        patience: opts.patience.min(opts.timeout),
        behaviors: opts.behaviors.clone(),
        prompt: opts.prompt.clone(),
        wire: Mutex::new(Vec::new()),
        ids: Mutex::default(),
        details: Mutex::default(),
        statuses: Mutex::default(),
        guard: Arc::new(Guard::new(canaries)),
        interface_problem: (!problems.is_empty())
            .then(|| problems.iter().map(|(_, why)| why.as_str()).collect::<Vec<_>>().join("; ")),
        callers: Callers {
            values: opts.client.headers.iter().filter(|(n, _)| credential_headers(opts).contains(n)).cloned().collect(),
            credential_headers: credential_headers(opts),
            second: opts.header_b.clone(),
        },
        trust_keys: opts.trust_keys.clone(),
        diagnosis: None,
        workaround: None,
    };
    // A CI job canceled, `timeout`, Ctrl-C: the checks still running end as error with the signal
    // named, and the run writes its report like any other ending.
    let stopper = {
        let guard = ctx.guard.clone();
        let signal = signal.clone();
        tokio::spawn(async move { guard.stop(signal_of(signal).await) })
    };
    // Before any check: when the neutral SendMessage fails, find out why, and what to send instead.
    let diagnose_it =
        checks.iter().any(|c| c.test.id == DIAGNOSIS && c.disposition == Disposition::Run) && ctx.primary.is_some();
    let mut spent = Duration::ZERO;
    if diagnose_it {
        let d = diagnose::run(&ctx, opts.deadline, opts.timeout).await;
        spent = d.elapsed;
        if opts.workaround {
            ctx.workaround = d.workaround.clone();
        }
        ctx.diagnosis = Some(d);
    }
    let mut target = target;
    if opts.discover_behaviors && ctx.behaviors == Behaviors::None && ctx.primary.is_some() {
        let began = Instant::now();
        let found = discover::discover(&ctx).await;
        spent += began.elapsed();
        target.notes.push(discover::summary(&found));
        ctx.behaviors = Behaviors::Map(found);
        let sel = Selection { behaviors: ctx.behaviors.clone(), ..sel };
        let fresh = plan::plan(&suites, &sel, Some(&ctx.discovery.card)).map_err(CheckError::Usage)?;
        for c in checks.iter_mut() {
            if let Disposition::Skip(SkipReason::BehaviorNotAvailable, _) = c.disposition
                && let Some(f) = fresh.iter().find(|f| f.test.id == c.test.id)
            {
                c.disposition = f.disposition.clone();
            }
        }
    }
    let ctx = Arc::new(ctx);
    let deadline = {
        let ctx = ctx.clone();
        let limit = opts.deadline;
        // The diagnosis spent part of the run's time already.
        let left = limit.saturating_sub(spent);
        tokio::spawn(async move {
            tokio::time::sleep(left).await;
            ctx.guard.stop(format!("the run deadline ({} s, --deadline) was reached", limit.as_secs()));
        })
    };
    refute_mapped_behaviors(&ctx, &mut checks, &mut target.notes, opts.timeout).await;
    let info = run_info(opts, &suites, started_at, target);
    // The plan holds what the checks need; the parsed suite files would only take room while they
    // run (a registry runs many agents at once).
    drop(suites);
    let planned = checks.iter().map(|c| c.test.id.clone()).collect();
    sink.event(&RunEvent::RunStarted { info: Box::new(info), planned });
    let results = scheduler::run_all(ctx, checks, opts.jobs, opts.timeout, sink).await;
    deadline.abort();
    stopper.abort();
    finish(sink, &results, started);
    Ok(())
}

/// Aborts its task when dropped (a dropped JoinHandle leaves the task running).
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Resolves once a signal has stopped the run (at once if one already has), with what it was.
async fn signal_of(mut signal: tokio::sync::watch::Receiver<Option<String>>) -> String {
    let why = signal.wait_for(Option::is_some).await.ok().map(|why| why.clone().unwrap_or_default());
    match why {
        Some(why) => why,
        // The listener ended without a signal: none will come.
        None => std::future::pending().await,
    }
}

/// Resolves at the first SIGINT or SIGTERM, with what stopped the run; never, for a signal the
/// process cannot listen to.
pub(crate) async fn interrupted() -> String {
    let sigint = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let sigterm = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let sigterm = std::future::pending::<()>();
    tokio::select! {
        _ = sigint => "the run was interrupted (SIGINT)".to_owned(),
        _ = sigterm => "the run was terminated (SIGTERM)".to_owned(),
    }
}

/// Where the Authorization canary goes (also its label in findings).
const AUTH_CANARY: &str = "the Authorization header";

/// Header names that carry credentials: their values are what an agent must treat as secrets.
fn is_credential_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["authorization", "proxy-authorization", "cookie"].contains(&n.as_str())
        || ["token", "secret", "api-key", "apikey", "auth"].iter().any(|w| n.contains(w))
}

/// The first caller's credential headers: the user's `--header`s whose names carry credentials,
/// and any that `--header-b` replaces for the second caller.
fn credential_headers(opts: &CheckOptions) -> Vec<String> {
    opts.client
        .headers
        .iter()
        .map(|(n, _)| n)
        .filter(|n| is_credential_header(n) || opts.header_b.iter().any(|(b, _)| b.eq_ignore_ascii_case(n)))
        .cloned()
        .collect()
}

/// The values the kit looks for in every answer, with where each was sent: the user's credential
/// headers (values of 8 bytes or more: shorter ones occur by chance), else, when the card asks for
/// no authentication, an invented bearer token; and always a canary in a header of its own.
fn canaries(opts: &CheckOptions, card: &serde_json::Value) -> Vec<(String, String)> {
    let random = || format!("kit-canary-{}", uuid::Uuid::new_v4().simple());
    let mut out: Vec<(String, String)> = opts
        .client
        .headers
        .iter()
        .filter(|(n, v)| is_credential_header(n) && v.len() >= 8)
        .map(|(n, v)| (format!("your {n} header"), v.clone()))
        .chain(
            opts.header_b
                .iter()
                .filter(|(n, v)| is_credential_header(n) && v.len() >= 8)
                .map(|(n, v)| (format!("the second caller's {n} header"), v.clone())),
        )
        .collect();
    let asks_auth = |k: &str| {
        card.get(k).is_some_and(|v| {
            v.as_object().is_some_and(|o| !o.is_empty()) || v.as_array().is_some_and(|a| !a.is_empty())
        })
    };
    let has_auth = opts.client.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("authorization"));
    if !has_auth && !asks_auth("securitySchemes") && !asks_auth("securityRequirements") {
        out.push((AUTH_CANARY.into(), format!("Bearer {}", random())));
    }
    out.push((format!("the {CANARY_HEADER} header"), random()));
    out
}

/// The request header that carries a canary the kit invented (the user's own are sent already).
fn canary_header(place: &str, value: &str) -> Option<(String, String)> {
    if place == AUTH_CANARY {
        Some(("Authorization".into(), value.into()))
    } else if place == format!("the {CANARY_HEADER} header") {
        Some((CANARY_HEADER.into(), value.into()))
    } else {
        None
    }
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
    let (verdict, reasons) = Verdict::decide(results);
    sink.event(&RunEvent::RunFinished {
        verdict,
        reasons,
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

/// The bindings graded: those asked for (`--binding`; none: every one), of those the card declares
/// an interface of (`--rpc-url` declares JSON-RPC's). JSON-RPC stays when none is left, so that the
/// run says why nothing could be graded (KIT-IFACE-001).
fn graded_bindings(opts: &CheckOptions, jsonrpc: bool, rest: bool) -> Vec<Binding> {
    let asked = |b: Binding| opts.bindings.is_empty() || opts.bindings.contains(&b);
    let mut out: Vec<Binding> = Vec::new();
    if asked(Binding::JsonRpc) && jsonrpc {
        out.push(Binding::JsonRpc);
    }
    if asked(Binding::HttpJson) && rest {
        out.push(Binding::HttpJson);
    }
    if out.is_empty() {
        out.push(Binding::JsonRpc);
    }
    out
}

/// The bindings not graded because the card declares no 1.0 interface of theirs, with that fact
/// in words: their checks skip as not declared, not as left out by the user.
fn undeclared_bindings(
    graded: &[Binding],
    card: &serde_json::Value,
    jsonrpc: bool,
    rest: bool,
) -> Vec<(Binding, String)> {
    [(Binding::JsonRpc, jsonrpc), (Binding::HttpJson, rest)]
        .into_iter()
        .filter(|(b, declared)| !declared && !graded.contains(b))
        .map(|(b, _)| (b, no_interface(card, b)))
        .collect()
}

/// The card declares no A2A 1.0 interface of `binding`, in words, with what it declares instead.
fn no_interface(card: &serde_json::Value, binding: Binding) -> String {
    let declared: Vec<String> = card
        .get("supportedInterfaces")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .map(|i| {
            let field = |k: &str| i.get(k).and_then(serde_json::Value::as_str).unwrap_or("?").to_owned();
            format!("{} {}", field("protocolBinding"), field("protocolVersion"))
        })
        .collect();
    let instead = match declared.is_empty() {
        true => "none".to_owned(),
        false => declared.join(", "),
    };
    format!(
        "the card declares no A2A 1.0 {} interface (its supportedInterfaces: {instead})",
        binding.protocol_binding()
    )
}

fn origin_of(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => url.trim_end_matches('/').to_owned(),
    }
}

//! One run of the matrix: the mock, committing some faults and showing some freedoms, checked by
//! the kit as a user would check it; and how a run's results are read (what a fault kills).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::client::http::ClientConfig;
use crate::commands::check::{self, CheckOptions};
use crate::protocol::limits::Limits;
use crate::report::{CheckResult, Failure, Outcome};
use crate::server::faults::{Fault, MockVariant};
use crate::server::freedoms::{self, Freedom};
use crate::server::{ExtendedCard, MockConfig, MockServer, WebhookPolicy};
use crate::suite::behaviors::Behaviors;
use crate::suite::binding::Binding as BindingId;
use crate::suite::loader;
use crate::suite::plan::{self, Selection};

/// The seed of the combinations and mixes when `--seed` gives none: fixed, so that a run of an
/// unchanged kit draws what the last one drew.
pub const DEFAULT_SEED: u64 = 29;

/// The check a fault that stops discovery is booked against: without a card nothing else can run.
const DISCOVERY: &str = "CARD-DISC-001";

/// How to run the matrix.
#[derive(Debug, Clone)]
pub struct SelftestOptions {
    /// Mock + check runs at once.
    pub parallel_runs: usize,
    /// Checks at once within one run.
    pub jobs: usize,
    /// Bound on one check.
    pub timeout: Duration,
    /// How long a check waits for streams to close and webhooks to be called: the mock does both
    /// in about two seconds when faithful, so a short wait keeps the matrix fast.
    pub patience: Duration,
    /// Only these faults (empty: all).
    pub faults: Vec<String>,
    /// Commit each fault alone (the kill matrix proper); off, only the clean baselines, the
    /// freedoms and the mixes run.
    pub single_faults: bool,
    /// Suite files to grade with instead of the built-in ones.
    pub suites: Option<std::path::PathBuf>,
    /// Fault files to commit instead of the built-in catalogue.
    pub faults_dir: Option<std::path::PathBuf>,
    /// Show every freedom alone (the negative controls).
    pub freedoms: bool,
    /// Seeded combinations of freedoms shown together.
    pub combinations: usize,
    /// Most freedoms in one combination.
    pub max_freedoms: usize,
    /// Seeded mixes of several faults committed together.
    pub mixes: usize,
    /// Seed of the combinations and the mixes.
    pub seed: u64,
}

impl Default for SelftestOptions {
    fn default() -> Self {
        SelftestOptions {
            parallel_runs: 16,
            jobs: check::EMBEDDED_JOBS,
            timeout: Duration::from_secs(30),
            patience: Duration::from_secs(6),
            faults: Vec::new(),
            single_faults: true,
            suites: None,
            faults_dir: None,
            freedoms: true,
            combinations: 24,
            max_freedoms: 8,
            mixes: 24,
            seed: DEFAULT_SEED,
        }
    }
}

/// A check that failed or warned under a fault that does not name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Collateral {
    pub check: String,
    pub outcome: Outcome,
    /// What the check said, to see at a glance whose requirement it judged.
    pub message: String,
}

pub(crate) fn one_line(s: &str) -> String {
    let first = s.lines().next().unwrap_or("");
    let mut out: String = first.chars().take(160).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// True if the check caught something (a violated MUST, SHOULD or MAY).
pub(crate) fn killed(r: &CheckResult) -> bool {
    matches!(r.outcome, Outcome::Fail | Outcome::Warn) || (r.outcome == Outcome::Info && r.failure.is_some())
}

pub(crate) async fn run_once(
    variant: MockVariant,
    faults: Vec<Arc<Fault>>,
    opts: &SelftestOptions,
) -> Result<Vec<CheckResult>, String> {
    run_graded(variant, faults, Vec::new(), Mode::Acts, opts).await
}

/// Where a run's checks get the behaviours they need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The ACTS `tck-*` contract, which the mock honours (the kill matrix's way).
    Acts,
    /// What the kit finds the agent do, as for a URL given no map: an agent out there.
    Discovered,
}

/// One mock committing `faults` and showing `freedoms`, checked in `mode`.
pub(crate) async fn run_graded(
    variant: MockVariant,
    faults: Vec<Arc<Fault>>,
    freedoms: Vec<Arc<Freedom>>,
    mode: Mode,
    opts: &SelftestOptions,
) -> Result<Vec<CheckResult>, String> {
    run_graded_shown(variant, faults, freedoms, mode, opts).await.map(|(results, _)| results)
}

/// [`run_graded`], with the faults whose answer mutations changed an answer of the run.
pub(crate) async fn run_graded_shown(
    variant: MockVariant,
    faults: Vec<Arc<Fault>>,
    freedoms: Vec<Arc<Freedom>>,
    mode: Mode,
    opts: &SelftestOptions,
) -> Result<(Vec<CheckResult>, BTreeSet<String>), String> {
    let base = MockConfig {
        push_timeout_ms: 2_000,
        push_retries: 0,
        // A fault that makes SendMessage block (ignoring returnImmediately) should cost seconds, not
        // the default half minute; the faithful scenarios settle in under two seconds.
        limits: Limits { max_blocking_ms: 5_000, ..Default::default() },
        faults,
        ..MockConfig::default()
    };
    let (mut config, access) = match variant {
        MockVariant::Full => {
            let (config, access) = check::embedded_config(base);
            (config, Some(access))
        }
        MockVariant::HttpJsonOnly => {
            let (config, access) =
                check::embedded_config(MockConfig { bindings: crate::server::binding::Bindings::HttpJson, ..base });
            (config, Some(access))
        }
        MockVariant::CapabilitiesOff => {
            let config = MockConfig {
                streaming: false,
                push_notifications: false,
                extended_card: ExtendedCard::Off,
                webhooks: WebhookPolicy::AllowLoopback,
                ..base
            };
            (config, None)
        }
    };
    // What a freedom sets wins over the embedded mock's own settings: it is what is shown.
    freedoms::apply_all(&freedoms, &mut config).map_err(|e| e.to_string())?;
    let server = MockServer::start(config).await.map_err(|e| e.to_string())?;
    let mut copts = CheckOptions {
        behaviors: if mode == Mode::Acts { Behaviors::Acts } else { Behaviors::None },
        discover_behaviors: mode == Mode::Discovered,
        jobs: opts.jobs,
        timeout: opts.timeout,
        patience: opts.patience,
        client: ClientConfig { timeout: Duration::from_secs(10), ..ClientConfig::default() },
        suites: opts.suites.iter().cloned().collect(),
        no_builtin: opts.suites.is_some(),
        ..CheckOptions::new(server.url())
    };
    if let Some(access) = &access {
        access.apply(&mut copts);
    }
    let out = check::run(&copts, &mut ()).await;
    let shown = server.faults_shown();
    server.shutdown().await;
    match out {
        Ok(report) => Ok((report.results.into_iter().map(|r| r.result).collect(), shown)),
        // A fault that breaks discovery is caught by the card checks; report it as such.
        Err(e) => {
            let builtin = loader::builtin().map_err(|e| e.to_string())?;
            let checks = plan::plan(&builtin, &Selection::default(), None)?;
            let declared = checks
                .iter()
                .find(|c| c.test.id == DISCOVERY)
                .ok_or_else(|| format!("{DISCOVERY} is not among the built-in checks"))?;
            Ok((
                vec![CheckResult::violated(
                    &declared.meta(),
                    false,
                    Failure { message: e.to_string(), ..Failure::default() },
                )],
                shown,
            ))
        }
    }
}

/// The checks `f` exists to kill, over each binding it is committed on where the clean mock grades
/// them (`graded`): a fault on both bindings kills X and X[http+json].
pub(crate) fn meant_kills(f: &Fault, graded: &BTreeSet<&str>) -> Vec<String> {
    let on_rest = f.bindings.is_empty() || f.bindings.contains(&crate::server::binding::Binding::HttpJson);
    let on_rpc = f.bindings.is_empty() || f.bindings.contains(&crate::server::binding::Binding::JsonRpc);
    let mut meant = Vec::new();
    for k in &f.kills {
        let clone = BindingId::HttpJson.check_id(k);
        if on_rpc || !graded.contains(clone.as_str()) {
            meant.push(k.clone());
        }
        if on_rest && graded.contains(clone.as_str()) {
            meant.push(clone);
        }
    }
    meant
}

/// A fault committed on both bindings is one violation: a check over HTTP+JSON that waits on the
/// JSON-RPC finding of it (its root, in `direct`, the checks that failed) tells it once, there,
/// and counts as killed by it.
pub(crate) fn by_root(r: &CheckResult, meant: &[String], direct: &BTreeSet<&str>) -> bool {
    r.id.ends_with(HTTP_JSON_SUFFIX)
        && meant.contains(&r.id)
        && r.outcome == Outcome::Skip
        && r.depends_on.as_deref().is_some_and(|root| direct.contains(root) && meant.iter().any(|m| m == root))
}

/// What the id of a check graded over HTTP+JSON ends in.
pub(crate) const HTTP_JSON_SUFFIX: &str = "[http+json]";

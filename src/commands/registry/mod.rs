//! `a2a-conform check --targets FILE`: a whole registry of agents from one process. Each agent
//! gets its own run (its own bounded client, deadline, circuit breaker and webhook receiver) and
//! its usual report files in `OUT/<name>/`; `--parallel` agents run at once and at most
//! `--per-host` of them on one host, so that one slow or hostile agent holds one slot for no
//! longer than its own deadline. Then `OUT/index.json`, `index.html` and `junit.xml`.

pub mod agent;
pub mod repeat;
pub mod shard;
pub mod targets;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::sync::Semaphore;

use self::agent::Shared;
use self::shard::ShardSpec;
use self::targets::Target;
use crate::report::index::{self, AgentEntry, AgentStatus, Index, Shard};

/// When the registry run as a whole fails (its exit status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Exit 1 if any agent is non-conformant (3 if none is, but one could not be decided).
    Any,
    /// Exit 1 if more than half the agents checked are non-conformant.
    Majority,
    /// Exit 0 whatever the agents' verdicts (2 still for a usage error).
    None,
}

/// Everything `check --targets` needs besides what each agent's run shares.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    pub targets: PathBuf,
    pub shared: Shared,
    /// Agents checked at once.
    pub parallel: usize,
    /// Agents of one host (`host:port`) checked at once; 0: no limit besides `parallel`.
    pub per_host: usize,
    pub shard: Option<ShardSpec>,
    /// Keep the agents whose complete report an earlier run left in `OUT/<name>/`.
    pub resume: bool,
    pub fail_on: FailOn,
    pub progress: bool,
    pub quiet: bool,
}

/// The default `--parallel`: agents mostly wait (on the network, on scripted work), so several
/// per core.
pub fn default_parallel() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    (cores * 16).clamp(4, 64)
}

/// Runs the registry, writes every file, prints a summary; the exit status.
pub async fn run_command(opts: RegistryOptions) -> i32 {
    match run(&opts).await {
        Ok(index) => {
            if !opts.quiet {
                print_summary(&index, &opts);
            }
            exit_code(&index, opts.fail_on)
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// Checks every target of the file (of the shard), writes the index; the index.
pub async fn run(opts: &RegistryOptions) -> anyhow::Result<Index> {
    let all = targets::load(&opts.targets)?;
    let chosen: Vec<Target> = match opts.shard {
        Some(s) => all.into_iter().filter(|t| s.holds(&t.name)).collect(),
        None => all,
    };
    if opts.shared.base.webhook_bind.port() != 0 && opts.parallel > 1 {
        anyhow::bail!(
            "--webhook-bind {} names a port: with --targets every agent's run binds a receiver of its own, so give port 0 \
             (and --webhook-url if agents reach the receiver through another address) or --parallel 1",
            opts.shared.base.webhook_bind
        );
    }
    std::fs::create_dir_all(&opts.shared.out)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", opts.shared.out.display()))?;
    let started = Instant::now();
    let progress = Bar::new(opts.progress, chosen.len());
    let stop = Arc::new(Semaphore::new(0));
    let stopped = Arc::new(std::sync::Mutex::new(None::<String>));
    // A signal stops the agents not yet started; those running end as any run does on a
    // signal (their reports written), and the index still comes.
    let listener = {
        let (stop, stopped) = (stop.clone(), stopped.clone());
        tokio::spawn(async move {
            let why = crate::commands::check::interrupted().await;
            *stopped.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
            stop.close();
        })
    };
    let global = Arc::new(Semaphore::new(opts.parallel.max(1)));
    let mut hosts: HashMap<String, Arc<Semaphore>> = HashMap::new();
    let shared = Arc::new(opts.shared.clone());
    let mut tasks = tokio::task::JoinSet::new();
    for (i, t) in chosen.into_iter().enumerate() {
        let host = (opts.per_host > 0)
            .then(|| hosts.entry(host_key(&t.url)).or_insert_with(|| Arc::new(Semaphore::new(opts.per_host))).clone());
        let (global, shared, stop, stopped, progress) =
            (global.clone(), shared.clone(), stop.clone(), stopped.clone(), progress.clone());
        let resume = opts.resume;
        tasks.spawn(async move {
            let not_run = |stopped: &std::sync::Mutex<Option<String>>| {
                let why = stopped.lock().unwrap_or_else(|p| p.into_inner()).clone().unwrap_or_default();
                index::entry_failed(&t.name, &t.url, format!("not checked: {why} before its turn"), 0)
            };
            if resume && let Some(entry) = agent::resumed(&t, &shared) {
                progress.done(&entry, false);
                return (i, entry);
            }
            // The host's slot first: an agent waiting for its host holds no global slot.
            let _host = match &host {
                Some(h) => tokio::select! {
                    p = h.clone().acquire_owned() => p.ok(),
                    _ = stop.acquire() => return (i, not_run(&stopped)),
                },
                None => None,
            };
            let _slot = tokio::select! {
                p = global.acquire_owned() => p.ok(),
                _ = stop.acquire() => return (i, not_run(&stopped)),
            };
            progress.started();
            let env = |k: &str| std::env::var(k).ok();
            let entry = agent::check(&t, &shared, &env).await;
            progress.done(&entry, true);
            (i, entry)
        });
    }
    let mut entries: Vec<(usize, AgentEntry)> = Vec::with_capacity(tasks.len());
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(e) => entries.push(e),
            Err(e) => anyhow::bail!("an agent's run panicked: {e}"),
        }
    }
    listener.abort();
    progress.finish();
    entries.sort_by_key(|(i, _)| *i);
    let shard = opts.shard.map(|s| Shard { index: s.index, count: s.count });
    let mut index = Index::build(entries.into_iter().map(|(_, e)| e).collect(), shard);
    index.summary.duration_ms = started.elapsed().as_millis() as u64;
    index::write_index(&opts.shared.out, &index)
        .map_err(|e| anyhow::anyhow!("writing the index into {}: {e}", opts.shared.out.display()))?;
    Ok(index)
}

/// `host:port` of a URL (the port the scheme implies when none is written).
fn host_key(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => format!("{}:{}", u.host_str().unwrap_or_default(), u.port_or_known_default().unwrap_or_default()),
        Err(_) => url.to_owned(),
    }
}

/// The exit status `--fail-on` gives the registry's verdicts.
pub fn exit_code(index: &Index, fail_on: FailOn) -> i32 {
    let count = |s: AgentStatus| index.agents.iter().filter(|a| a.status == s).count();
    let bad = count(AgentStatus::NonConformant);
    let undecided = count(AgentStatus::Inconclusive) + count(AgentStatus::Error);
    match fail_on {
        FailOn::None => 0,
        FailOn::Any if bad > 0 => 1,
        FailOn::Any if undecided > 0 => 3,
        FailOn::Any => 0,
        FailOn::Majority if 2 * bad > index.agents.len() => 1,
        FailOn::Majority => 0,
    }
}

fn print_summary(index: &Index, opts: &RegistryOptions) {
    let s = &index.summary;
    eprintln!(
        "{} agent(s) in {:.0} s: {} conformant, {} non-conformant, {} inconclusive, {} not checked{}",
        s.agents,
        Duration::from_millis(s.duration_ms).as_secs_f64(),
        s.conformant,
        s.non_conformant,
        s.inconclusive,
        s.errored,
        if s.flaky_agents > 0 { format!(", {} with flaky checks", s.flaky_agents) } else { String::new() }
    );
    for r in index.requirements.iter().take(5) {
        eprintln!("  {:<22} {:>5} agent(s)  {}", r.id, r.agents.len(), r.title);
    }
    eprintln!("wrote {}", opts.shared.out.join("index.html").display());
}

/// Agents done, running and failed, on stderr (only on a terminal, not `--quiet`).
#[derive(Clone)]
struct Bar {
    bar: ProgressBar,
    running: Arc<AtomicUsize>,
    failed: Arc<AtomicUsize>,
}

impl Bar {
    fn new(enabled: bool, total: usize) -> Self {
        let target = if enabled { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(total as u64), target);
        let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} agents {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        if enabled {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        Bar { bar, running: Arc::default(), failed: Arc::default() }
    }

    fn started(&self) {
        self.running.fetch_add(1, Ordering::Relaxed);
        self.message();
    }

    /// `ran`: the agent was checked now (a resumed one never counted as running).
    fn done(&self, e: &AgentEntry, ran: bool) {
        if e.status != AgentStatus::Conformant {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
        if ran {
            self.running.fetch_sub(1, Ordering::Relaxed);
        }
        self.bar.inc(1);
        self.message();
    }

    fn message(&self) {
        self.bar.set_message(format!(
            "· {} running · {} not conformant",
            self.running.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed)
        ));
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// `check [URL] --repeat N`: one agent (the embedded mock without a URL) checked N times in a row;
/// the report of the first run with KIT-REPEAT-001 saying which checks changed outcome, shown and
/// written as `check` shows and writes one run. The exit status.
pub async fn repeat_one(
    embedded: bool,
    behaviors: Option<crate::suite::behaviors::Behaviors>,
    mut opts: crate::commands::check::CheckOptions,
    repeat: u32,
    output: &crate::commands::check::Output,
) -> i32 {
    use crate::suite::behaviors::Behaviors;
    let mock = if embedded {
        match crate::commands::check::start_embedded_mock().await {
            Ok((server, auth)) => {
                auth.apply(&mut opts);
                opts.target = server.url().to_owned();
                Some(server)
            }
            Err(e) => {
                eprintln!("error: starting the embedded mock peer: {e}");
                return 2;
            }
        }
    } else {
        None
    };
    opts.discover_behaviors = behaviors.is_none() && !embedded;
    opts.behaviors = behaviors.unwrap_or(if embedded { Behaviors::Acts } else { Behaviors::None });
    let checked = agent::run_into(&opts, repeat, &output.dir, &output.formats).await;
    if let Some(server) = mock {
        server.shutdown().await;
    }
    match checked {
        Ok(c) => {
            print!("{}", crate::report::terminal::render(&c.report, output.color));
            if !output.quiet {
                eprintln!("{} run(s); wrote {}", c.runs, output.dir.display());
            }
            c.report.verdict.exit_code
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

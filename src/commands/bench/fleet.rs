//! `bench --fleet`: how fast and how lean `check --targets` is against `mock --fleet N`, at the
//! default parallelism, for 100 and 1000 agents (10 and 30 with `--quick`).
//!
//! The fleet and the checker are two child processes of the kit's own binary; this process only
//! starts them and waits. Both share the machine's cores, so the figure is the throughput of the
//! two together on loopback, and the table shows each one's CPU time to say which one set it. The
//! baseline, measured in the same run against the same fleet just before the registry run, is
//! one `check` of one agent at a time: the ratios say what checking a registry at once gains over
//! a shell loop, and what it costs in memory over one run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::procs;

/// The fleet's scripted waits, as the embedded mock runs them: the checker's throughput is the
/// figure, not how long a scripted task sleeps.
const SLEEP_PERCENT: &str = "33";

/// One fleet size measured.
#[derive(Debug, Clone, Serialize)]
pub struct FleetPoint {
    pub agents: usize,
    pub wall_s: Option<f64>,
    pub agents_per_hour: Option<f64>,
    /// Agents per hour over one `check` at a time against the same fleet.
    pub vs_one_at_a_time: Option<f64>,
    pub peak_rss_mib: Option<f64>,
    /// Peak over the peak of one `check` of one agent.
    pub rss_vs_one_run: Option<f64>,
    /// CPU time of the checker and of the fleet over the registry run.
    pub checker_cpu_s: Option<f64>,
    pub fleet_cpu_s: Option<f64>,
    /// Every agent's verdict is the fleet's own (faithful ones conformant, faulty ones not).
    pub verdicts_as_built: Option<bool>,
    /// The one-agent baseline of this size: median wall time and peak memory of three runs.
    pub one_agent_wall_s: Option<f64>,
    pub one_agent_peak_rss_mib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetBench {
    pub tool_version: String,
    pub quick: bool,
    pub cores: usize,
    pub release_build: bool,
    pub parallel: usize,
    pub points: Vec<FleetPoint>,
}

const MIB: f64 = 1024.0 * 1024.0;

/// Measures every size.
pub async fn run(exe: &Path, quick: bool) -> FleetBench {
    let sizes: &[usize] = if quick { &[10, 30] } else { &[100, 1000] };
    let mut points = Vec::new();
    for &n in sizes {
        eprintln!("· fleet of {n}: the one-agent baseline, then the registry");
        points.push(size(exe, n).await);
    }
    FleetBench {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        quick,
        cores: std::thread::available_parallelism().map_or(1, usize::from),
        release_build: !cfg!(debug_assertions),
        parallel: crate::commands::registry::default_parallel(),
        points,
    }
}

async fn size(exe: &Path, n: usize) -> FleetPoint {
    let mut p = FleetPoint {
        agents: n,
        wall_s: None,
        agents_per_hour: None,
        vs_one_at_a_time: None,
        peak_rss_mib: None,
        rss_vs_one_run: None,
        checker_cpu_s: None,
        fleet_cpu_s: None,
        verdicts_as_built: None,
        one_agent_wall_s: None,
        one_agent_peak_rss_mib: None,
        note: None,
    };
    if let Err(e) = measure(exe, n, &mut p).await {
        p.note = Some(e);
    }
    p
}

async fn measure(exe: &Path, n: usize, p: &mut FleetPoint) -> Result<(), String> {
    let dir = scratch();
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let targets = dir.join("targets.yaml");
    let (n_s, targets_s) = (n.to_string(), targets.display().to_string());
    let args = [
        "--fleet",
        &n_s,
        "--fleet-seed",
        "1",
        "--targets-out",
        &targets_s,
        "--allow-loopback-webhooks",
        "--sleep-percent",
        SLEEP_PERCENT,
    ];
    let (fleet, _) = procs::start_mock(exe, &args, Duration::from_secs(30)).await?;
    let first = first_agent_url(&targets)?;
    let mut walls = Vec::new();
    let mut peaks = Vec::new();
    for i in 0..3 {
        let out = dir.join(format!("one-{i}")).display().to_string();
        let run = procs::run_check(
            exe,
            &[&first, "--behaviors", "acts", "-q", "--format", "json", "--out", &out],
            Duration::from_secs(300),
        )
        .await?;
        walls.push(run.wall.as_secs_f64());
        peaks.extend(run.peak_rss.map(|b| b as f64 / MIB));
    }
    walls.sort_by(f64::total_cmp);
    peaks.sort_by(f64::total_cmp);
    let one_wall = walls[walls.len() / 2];
    p.one_agent_wall_s = Some(one_wall);
    p.one_agent_peak_rss_mib = peaks.get(peaks.len() / 2).copied();

    let fleet_cpu_before = cpu_of(fleet.id());
    let checker_cpu_before = children_cpu();
    let out = dir.join("registry");
    let out_s = out.display().to_string();
    let run = procs::run_check(
        exe,
        &["--targets", &targets_s, "--per-host", "0", "--fail-on", "none", "-q", "--out", &out_s],
        Duration::from_secs(3600),
    )
    .await?;
    p.checker_cpu_s = children_cpu().zip(checker_cpu_before).map(|(a, b)| a - b);
    p.fleet_cpu_s = cpu_of(fleet.id()).zip(fleet_cpu_before).map(|(a, b)| a - b);
    drop(fleet);
    let wall = run.wall.as_secs_f64();
    p.wall_s = Some(wall);
    p.agents_per_hour = Some(n as f64 / wall * 3600.0);
    p.vs_one_at_a_time = Some(one_wall * n as f64 / wall);
    p.peak_rss_mib = run.peak_rss.map(|b| b as f64 / MIB);
    p.rss_vs_one_run = p.peak_rss_mib.zip(p.one_agent_peak_rss_mib).map(|(a, b)| a / b);
    p.verdicts_as_built = Some(verdicts_as_built(&out.join("index.json"), n)?);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Whether the index lists `n` agents, each faithful one conformant and each faulty one not.
fn verdicts_as_built(index: &Path, n: usize) -> Result<bool, String> {
    let text = std::fs::read_to_string(index).map_err(|e| format!("reading {}: {e}", index.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", index.display()))?;
    let agents = v["agents"].as_array().ok_or("the index lists no agents")?;
    let as_built = agents.iter().all(|a| {
        let faithful = a["labels"]["faults"].as_str().unwrap_or_default().is_empty();
        a["status"] == if faithful { "conformant" } else { "non_conformant" }
    });
    Ok(agents.len() == n && as_built)
}

fn first_agent_url(targets: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(targets).map_err(|e| format!("reading {}: {e}", targets.display()))?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix("url: "))
        .map(str::to_owned)
        .ok_or_else(|| format!("{} names no agent", targets.display()))
}

/// User and system CPU seconds of a running process (`/proc/PID/stat`).
fn cpu_of(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; the fields after it are plain.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (hz > 0.0).then(|| ticks / hz)
}

/// User and system CPU seconds of every child waited for so far.
fn children_cpu() -> Option<f64> {
    // SAFETY: getrusage writes into the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(secs(u.ru_utime) + secs(u.ru_stime))
}

fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("a2a-conform-bench-fleet-{}", uuid::Uuid::new_v4().simple()))
}

/// The table `bench --fleet` prints.
pub fn table(b: &FleetBench) -> String {
    let f = |v: Option<f64>, d: usize| v.map_or("-".to_owned(), |v| format!("{v:.d$}"));
    let mut s = format!(
        "a2a-conform bench --fleet{}: {} core(s), {} build, --parallel {} (the default), fleet scripted waits at {SLEEP_PERCENT}%; \
         the checker and the fleet are separate processes on the same cores\n\n",
        if b.quick { " --quick (figures not representative)" } else { "" },
        b.cores,
        if b.release_build { "release" } else { "debug" },
        b.parallel,
    );
    s.push_str(&format!(
        "{:>6} {:>8} {:>12} {:>7} {:>10} {:>7} {:>9} {:>9} {:>6}   one agent at a time: wall, peak\n",
        "agents", "wall s", "agents/hour", "×one", "peak MiB", "×one", "cpu kit", "cpu fleet", "as built"
    ));
    for p in &b.points {
        s.push_str(&format!(
            "{:>6} {:>8} {:>12} {:>7} {:>10} {:>7} {:>9} {:>9} {:>6}   {} s, {} MiB\n",
            p.agents,
            f(p.wall_s, 1),
            f(p.agents_per_hour, 0),
            f(p.vs_one_at_a_time, 1),
            f(p.peak_rss_mib, 0),
            f(p.rss_vs_one_run, 1),
            f(p.checker_cpu_s, 0),
            f(p.fleet_cpu_s, 0),
            p.verdicts_as_built.map_or("-", |ok| if ok { "yes" } else { "NO" }),
            f(p.one_agent_wall_s, 2),
            f(p.one_agent_peak_rss_mib, 0),
        ));
        if let Some(note) = &p.note {
            s.push_str(&format!("       {note}\n"));
        }
    }
    if let [small, large] = &b.points[..] {
        let r = |a: Option<f64>, b: Option<f64>| a.zip(b).map_or("-".into(), |(a, b)| format!("{:.2}", a / b));
        s.push_str(&format!(
            "\nfrom {} to {} agents: agents/hour ×{}, peak memory ×{}\n",
            small.agents,
            large.agents,
            r(large.agents_per_hour, small.agents_per_hour),
            r(large.peak_rss_mib, small.peak_rss_mib)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_is_as_built_when_each_agent_has_the_verdict_its_faults_give() {
        let dir = scratch();
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("index.json");
        let agent = |name: &str, faults: &str, status: &str| serde_json::json!({"name": name, "labels": {"faults": faults}, "status": status});
        let write = |agents: Vec<serde_json::Value>| {
            std::fs::write(&path, serde_json::json!({"agents": agents}).to_string()).unwrap();
        };
        write(vec![agent("a1", "", "conformant"), agent("a2", "FAULT-X", "non_conformant")]);
        assert_eq!(verdicts_as_built(&path, 2), Ok(true));
        assert_eq!(verdicts_as_built(&path, 3), Ok(false), "an agent missing");
        write(vec![agent("a1", "", "non_conformant"), agent("a2", "FAULT-X", "non_conformant")]);
        assert_eq!(verdicts_as_built(&path, 2), Ok(false), "a faithful agent failed");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_cpu_time_of_a_live_process_is_read() {
        if Path::new("/proc/self/stat").exists() {
            assert!(cpu_of(std::process::id()).is_some_and(|s| s >= 0.0));
        }
        assert!(children_cpu().is_some());
    }
}

//! One agent of a registry: its check options from the targets file and the command line, its
//! runs (one, or `--repeat N`), its report files in `OUT/<name>/`, and its line of the index.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::repeat;
use super::targets::{BehaviorSource, Target};
use crate::commands::check::{self, CheckOptions};
use crate::report::Report;
use crate::report::files::Format;
use crate::report::index::{self, AgentEntry, FlakyCheck};
use crate::report::json::ReportResult;
use crate::suite::behaviors::{BehaviorMap, Behaviors};

/// The file that says a `--repeat` agent's runs agreed or not (next to its report).
pub const REPEAT_FILE: &str = "repeat.json";

/// What every agent's run shares: the command line's options and where the files go.
#[derive(Debug, Clone)]
pub struct Shared {
    /// The command line's check options; each target's entries replace or add to them.
    pub base: CheckOptions,
    /// `--behaviors` of the command line, for targets that name none.
    pub behaviors: BehaviorSource,
    pub out: PathBuf,
    pub formats: Vec<Format>,
    pub repeat: u32,
}

/// The options of `t`'s run, or why it cannot run (a variable missing, a map unreadable).
pub fn options(
    t: &Target,
    shared: &Shared,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<CheckOptions, String> {
    let mut o = shared.base.clone();
    o.target = t.url.clone();
    if let Some(p) = &t.profiles {
        o.profiles = p.clone();
    }
    if let Some(p) = &t.prompt {
        o.prompt = p.clone();
    }
    if t.rpc_url.is_some() {
        o.rpc_url = t.rpc_url.clone();
    }
    o.allow_hosts.extend(t.allow_hosts.iter().cloned());
    let headers = Target::resolve_headers(&t.headers, env).map_err(|e| e.to_string())?;
    o.client.headers.extend(headers);
    o.header_b.extend(Target::resolve_headers(&t.header_b, env).map_err(|e| e.to_string())?);
    let source = match &t.behaviors {
        BehaviorSource::Unset => &shared.behaviors,
        given => given,
    };
    (o.behaviors, o.discover_behaviors) = match source {
        BehaviorSource::Unset | BehaviorSource::Discover => (Behaviors::None, true),
        BehaviorSource::Acts => (Behaviors::Acts, false),
        BehaviorSource::None => (Behaviors::None, false),
        BehaviorSource::Map(path) => {
            let map = BehaviorMap::load(path).map_err(|e| format!("behaviors {}: {e}", path.display()))?;
            (Behaviors::Map(map), false)
        }
    };
    Ok(o)
}

/// An agent's runs, told as one report.
pub struct Checked {
    /// The first run's report, with KIT-REPEAT-001 when the agent was checked more than once.
    pub report: Report,
    pub runs: u32,
    pub flaky: Vec<FlakyCheck>,
}

/// Checks with `opts` `repeat` times in a row, and writes the report files (and, repeated, the
/// [`REPEAT_FILE`]) into `dir`, replacing what an earlier run left there.
pub async fn run_into(opts: &CheckOptions, repeat: u32, dir: &Path, formats: &[Format]) -> Result<Checked, String> {
    // A fresh run replaces what an earlier one left, so that no stale file survives beside it.
    for f in Format::ALL.iter().map(|f| f.file_name()).chain([REPEAT_FILE]) {
        let _ = std::fs::remove_file(dir.join(f));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut reports: Vec<Report> = Vec::new();
    for _ in 0..repeat.max(1) {
        match once(opts).await {
            Ok(r) => reports.push(r),
            Err(why) if reports.is_empty() => return Err(why),
            // A later run that could not happen leaves the runs that did.
            Err(_) => break,
        }
    }
    let runs = reports.len() as u32;
    let flaky = if runs > 1 { index::flakiness(&reports) } else { Vec::new() };
    let mut report = reports.swap_remove(0);
    drop(reports);
    if repeat > 1 {
        add_result(&mut report, repeat::result(runs, &flaky));
        let doc = serde_json::json!({"runs": runs, "asked": repeat, "flaky": flaky});
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        let path = dir.join(REPEAT_FILE);
        std::fs::write(&path, text + "\n").map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    for f in formats {
        let path = dir.join(f.file_name());
        std::fs::write(&path, f.render(&report)).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(Checked { report, runs, flaky })
}

/// Checks `t` (`shared.repeat` times), writes its report files into `OUT/<name>/` and returns
/// its index line.
pub async fn check(t: &Target, shared: &Shared, env: &(dyn Fn(&str) -> Option<String> + Sync)) -> AgentEntry {
    let started = Instant::now();
    let dir = shared.out.join(&t.name);
    let checked = match options(t, shared, env) {
        Ok(opts) => run_into(&opts, shared.repeat, &dir, &shared.formats).await,
        Err(why) => Err(why),
    };
    let mut entry = match checked {
        Ok(c) => {
            let mut e = index::entry_from_report(&t.name, &t.url, &c.report, link(&dir, &t.name));
            e.runs = c.runs;
            e.flaky = c.flaky;
            e
        }
        Err(why) => index::entry_failed(&t.name, &t.url, why, 0),
    };
    entry.labels = t.labels.clone();
    entry.duration_ms = started.elapsed().as_millis() as u64;
    entry
}

/// The index line of an agent whose report an earlier run left complete (`--resume`); `None`
/// when there is none to trust, and the agent is checked again.
pub fn resumed(t: &Target, shared: &Shared) -> Option<AgentEntry> {
    let dir = shared.out.join(&t.name);
    let text = std::fs::read_to_string(dir.join(Format::Json.file_name())).ok()?;
    let report: Report = serde_json::from_str(&text).ok()?;
    // A report of another agent (the file changed between the runs) is not this one's.
    if report.target.url != t.url {
        return None;
    }
    let (runs, flaky) = if shared.repeat > 1 {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(REPEAT_FILE)).ok()?).ok()?;
        if doc["asked"].as_u64() != Some(u64::from(shared.repeat)) {
            return None;
        }
        (doc["runs"].as_u64().unwrap_or(1) as u32, serde_json::from_value(doc["flaky"].clone()).ok()?)
    } else {
        (1, Vec::new())
    };
    let mut entry = index::entry_from_report(&t.name, &t.url, &report, link(&dir, &t.name));
    entry.labels = t.labels.clone();
    entry.runs = runs;
    entry.flaky = flaky;
    entry.duration_ms = report.run.duration_ms;
    Some(entry)
}

/// One run of the check; its report, also when the agent could not be reached (the report says
/// so). An error only when no report came at all (a suite or option the kit refused).
async fn once(opts: &CheckOptions) -> Result<Report, String> {
    let mut no_sink: Vec<&mut (dyn crate::report::Sink + Send)> = Vec::new();
    match check::run_to_report(opts, &mut no_sink).await {
        (Some(r), _) => Ok(r),
        (None, Err(e)) => Err(e.to_string()),
        (None, Ok(())) => Err("the run ended without a report".into()),
    }
}

/// Appends a result the kit decided after the run, and computes again what derives from results.
fn add_result(report: &mut Report, r: crate::report::CheckResult) {
    report.results.push(ReportResult { result: r, baseline_status: None });
    report.derive();
    let results: Vec<_> = report.checks().cloned().collect();
    report.summary = crate::report::json::summarize(&results, &report.causes, report.summary.duration_ms);
}

/// The page an index links an agent to: its HTML report when written, else its JSON one.
fn link(dir: &Path, name: &str) -> Option<String> {
    [Format::Html, Format::Json]
        .into_iter()
        .find(|f| dir.join(f.file_name()).exists())
        .map(|f| format!("{name}/{}", f.file_name()))
}

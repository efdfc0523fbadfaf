//! The kill matrix: the built-in suites against the clean mock (everything must pass) and against
//! the mock committing each catalogued fault alone (each fault must be caught, and every scored
//! check must be killed by some fault). Checks no server fault can provoke are listed, with the
//! reason, in `mock-peer/unkillable.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tokio::sync::Semaphore;

use crate::report::Outcome;
use crate::server::faults::{Fault, FaultCatalogue, MockVariant, Mutation};

mod freedoms;
mod mixes;
mod runs;

pub use freedoms::{FalseVerdict, FreedomMatrix, FreedomRun, combinations};
pub use mixes::{MIX_SIZES, MixMatrix, MixRun};
pub use runs::{Collateral, DEFAULT_SEED, Mode, SelftestOptions};
use runs::{HTTP_JSON_SUFFIX, by_root, killed, meant_kills, one_line, run_once};

/// Checks that no server fault can provoke, with the reason, reviewed like code.
pub const UNKILLABLE: &str = include_str!("../../../mock-peer/unkillable.json");

/// The matrix and what it proves.
#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    /// Checks that did not pass against the clean mock: id → outcome and reason.
    pub clean_problems: BTreeMap<String, String>,
    /// Fault id → ids of the checks it killed.
    pub kills: BTreeMap<String, Vec<String>>,
    /// Fault id → the checks it exists to kill (its `kills` list); the rest of what it killed is
    /// collateral.
    pub intended: BTreeMap<String, Vec<String>>,
    /// Fault id → intended checks that survived it, or that the run never reported: gaps.
    pub survivors: BTreeMap<String, Vec<String>>,
    /// Fault id → checks that failed or warned although the fault does not name them: each is a
    /// false verdict waiting for a real agent with that one defect (a check asserting what another
    /// owns, or missing its prerequisite). Collateral `depends_on_failed` skips are not listed.
    pub collateral: BTreeMap<String, Vec<Collateral>>,
    /// Fault id → the root causes its run told (root and headline), when more than one: one
    /// defect is one cause.
    pub split: BTreeMap<String, Vec<String>>,
    /// Fault id → wall time of its run, in ms (the slowest bound the matrix's runtime).
    pub run_ms: BTreeMap<String, u64>,
    /// Faults no check caught.
    pub undetected_faults: Vec<String>,
    /// Scored checks no fault killed (and not listed as unkillable).
    pub unkilled_checks: Vec<String>,
    /// Listed as unkillable but killed after all (the list is stale).
    pub stale_unkillable: Vec<String>,
    /// Listed as unkillable: id → reason.
    pub unkillable: BTreeMap<String, String>,
    /// Faults marked `awaiting_checks` (the checks they name are being written), not run unless
    /// named with `--fault`.
    pub awaiting: Vec<String>,
    /// Faults marked `awaiting_checks` although every check they name exists: the mark is stale.
    pub stale_awaiting: Vec<String>,
    /// Number of scored checks (graded against the clean mock).
    pub scored_checks: usize,
    /// Number of violations run (conforming behaviours not counted).
    pub faults: usize,
    /// The conforming behaviours run (faults marked `conforming`): each must fail or warn nothing,
    /// which `collateral` shows.
    pub conforming: Vec<String>,
    /// Every fault of the catalogue ran, so "never killed" and "stale" mean something.
    pub whole_catalogue: bool,
    /// The freedoms shown alone and together (negative controls).
    pub freedoms: Option<FreedomMatrix>,
    /// The faults committed in mixes.
    pub mixes: Option<MixMatrix>,
    /// Wall time.
    pub duration_ms: u64,
}

impl Matrix {
    /// True when the clean mock passes, every fault is caught, every scored check is killed and no
    /// freedom draws a verdict. The mixes are a measurement (recall, false verdicts, causes per
    /// fault), printed with every gap named: a fault hidden in a mix is a check waiting on more
    /// than it builds on, which the mixes exist to find, not a gate the matrix can hold today.
    pub fn ok(&self) -> bool {
        self.clean_problems.is_empty()
            && self.undetected_faults.is_empty()
            && self.survivors.is_empty()
            && self.unkilled_checks.is_empty()
            && self.stale_unkillable.is_empty()
            && self.stale_awaiting.is_empty()
            && self.collateral.is_empty()
            && self.freedoms.as_ref().is_none_or(FreedomMatrix::ok)
            && self.mixes.as_ref().is_none_or(|m| m.runs.iter().all(|r| r.failed.is_none()))
    }

    /// Collateral fails and warns over all faults.
    pub fn collateral_total(&self) -> usize {
        self.collateral.values().map(Vec::len).sum()
    }

    /// Of the fails and warns a fault caused, the share its `kills` names (1.0 when it caused
    /// none).
    pub fn precision(&self, fault: &str) -> f64 {
        let named = self.kills.get(fault).map_or(0, |k| {
            let meant = self.intended.get(fault).map(Vec::as_slice).unwrap_or_default();
            k.iter().filter(|c| meant.contains(c)).count()
        });
        let stray = self.collateral.get(fault).map_or(0, Vec::len);
        if named + stray == 0 { 1.0 } else { named as f64 / (named + stray) as f64 }
    }

    /// What `fault` killed beyond the checks it names.
    pub fn collateral(&self, fault: &str) -> Vec<&str> {
        let intended = self.intended.get(fault).map(Vec::as_slice).unwrap_or_default();
        let killed = self.kills.get(fault).map(Vec::as_slice).unwrap_or_default();
        killed.iter().filter(|k| !intended.contains(k)).map(String::as_str).collect()
    }

    /// The matrix in both directions, as Markdown: each fault with the checks it was meant to kill
    /// and what else it killed, and each scored check with the faults that kill it.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# Kill matrix\n\n");
        s.push_str(&format!(
            "{} faults, {} scored checks.\n\n## Faults → checks that failed\n\n",
            self.faults, self.scored_checks
        ));
        s.push_str(&format!(
            "Collateral fails or warns: {}. Precision: of the fails and warns a fault causes, the share it names.\n\n",
            self.collateral_total()
        ));
        s.push_str(
            "| Fault | Precision | Meant to kill | Collateral fail / warn | Also killed (info) |\n|---|---|---|---|---|\n",
        );
        for f in self.kills.keys() {
            let survivors = self.survivors.get(f).map(Vec::as_slice).unwrap_or_default();
            let intended: Vec<String> = self
                .intended
                .get(f)
                .into_iter()
                .flatten()
                .map(|c| if survivors.contains(c) { format!("**{c} (survived)**") } else { c.clone() })
                .collect();
            let stray: Vec<String> = self
                .collateral
                .get(f)
                .into_iter()
                .flatten()
                .map(|c| format!("**{} ({})**", c.check, c.outcome.as_str()))
                .collect();
            let stray_ids: Vec<&str> = self.collateral.get(f).into_iter().flatten().map(|c| c.check.as_str()).collect();
            let info: Vec<&str> = self.collateral(f).into_iter().filter(|c| !stray_ids.contains(c)).collect();
            let dash = |v: Vec<String>| if v.is_empty() { "—".to_owned() } else { v.join(", ") };
            s.push_str(&format!(
                "| {f} | {:.0}% | {} | {} | {} |\n",
                100.0 * self.precision(f),
                intended.join(", "),
                dash(stray),
                dash(info.into_iter().map(str::to_owned).collect()),
            ));
        }
        let mut by_check: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (f, ids) in &self.kills {
            for id in ids {
                by_check.entry(id.as_str()).or_default().push(f.as_str());
            }
        }
        s.push_str("\n## Checks → faults that kill them\n\n| Check | Killed by |\n|---|---|\n");
        for (id, fs) in by_check {
            s.push_str(&format!("| {id} | {} |\n", fs.join(", ")));
        }
        for id in &self.unkilled_checks {
            s.push_str(&format!("| {id} | **never killed** |\n"));
        }
        for (id, why) in &self.unkillable {
            s.push_str(&format!("| {id} | unkillable: {why} |\n"));
        }
        s
    }

    /// The human summary `selftest` prints.
    pub fn summary(&self) -> String {
        let scored_killed = self.scored_checks - self.unkilled_checks.len();
        let detected = self.faults - self.undetected_faults.len();
        let pct = |a: usize, b: usize| if b == 0 { 100.0 } else { 100.0 * a as f64 / b as f64 };
        let mut s = String::new();
        if self.clean_problems.is_empty() {
            s.push_str("clean mock: all pass\n");
        } else {
            s.push_str(&format!("clean mock: {} check(s) did not pass\n", self.clean_problems.len()));
            for (id, why) in &self.clean_problems {
                s.push_str(&format!("  {id}: {why}\n"));
            }
        }
        s.push_str(&format!("faults detected: {detected}/{} ({:.0}%)\n", self.faults, pct(detected, self.faults)));
        for f in &self.undetected_faults {
            s.push_str(&format!("  undetected: {f} (no check fails when the mock commits it)\n"));
        }
        let precise =
            self.kills.keys().filter(|f| !self.survivors.contains_key(*f) && !self.conforming.contains(f)).count();
        let meant: usize = self.intended.values().map(Vec::len).sum();
        let collateral: usize = self.kills.keys().map(|f| self.collateral(f).len()).sum();
        s.push_str(&format!(
            "faults that kill every check they name: {precise}/{} ({meant} intended kills, {collateral} collateral)\n",
            self.faults
        ));
        for (f, ids) in &self.survivors {
            s.push_str(&format!("  {f}: meant to kill {} but they survived\n", ids.join(", ")));
        }
        s.push_str(&format!("collateral fails or warns: {}\n", self.collateral_total()));
        for (f, list) in &self.collateral {
            for c in list {
                s.push_str(&format!("  {f}: {} {} ({})\n", c.check, c.outcome.as_str(), one_line(&c.message)));
            }
        }
        if !self.whole_catalogue {
            s.push_str("scored checks killed: not judged (only some faults ran)\n");
        } else {
            s.push_str(&format!(
                "scored checks killed: {scored_killed}/{} ({:.0}%){}\n",
                self.scored_checks,
                pct(scored_killed, self.scored_checks),
                if self.unkillable.is_empty() {
                    String::new()
                } else {
                    format!(", {} listed as unkillable", self.unkillable.len())
                }
            ));
        }
        for c in &self.unkilled_checks {
            s.push_str(&format!(
                "  never killed: {c} (add a fault that makes it fail, or list it in mock-peer/unkillable.json)\n"
            ));
        }
        for c in &self.stale_unkillable {
            s.push_str(&format!("  stale: {c} is listed as unkillable but a fault kills it\n"));
        }
        if !self.awaiting.is_empty() {
            s.push_str(&format!(
                "faults awaiting their checks (not run): {}: {}\n",
                self.awaiting.len(),
                self.awaiting.join(", ")
            ));
        }
        for f in &self.stale_awaiting {
            s.push_str(&format!("  stale: {f} is marked awaiting_checks but every check it names exists\n"));
        }
        if !self.split.is_empty() || !self.kills.is_empty() {
            let faults = self.kills.len().max(1);
            let told: usize = self.kills.keys().map(|f| self.split.get(f).map_or(1, Vec::len)).sum();
            s.push_str(&format!(
                "causes told per fault alone: {:.2} ({} of {} faults told as more than one cause)\n",
                told as f64 / faults as f64,
                self.split.len(),
                self.kills.len()
            ));
        }
        if let Some(f) = &self.freedoms {
            s.push_str(&f.summary());
        }
        if let Some(m) = &self.mixes {
            s.push_str(&m.summary());
        }
        let mut slow: Vec<(&String, &u64)> = self.run_ms.iter().collect();
        slow.sort_by(|a, b| b.1.cmp(a.1));
        let slowest: Vec<String> =
            slow.iter().take(3).map(|(f, ms)| format!("{f} {:.1} s", **ms as f64 / 1000.0)).collect();
        s.push_str(&format!(
            "runtime: {:.1} s (slowest fault runs: {})\n",
            self.duration_ms as f64 / 1000.0,
            if slowest.is_empty() { "none".to_owned() } else { slowest.join(", ") }
        ));
        s
    }
}

/// Milliseconds a fault makes the mock wait on purpose (stalls, streams kept open).
fn deliberate_wait_ms(f: &Fault) -> u64 {
    f.mutations
        .iter()
        .map(|m| match m {
            Mutation::Stall { ms, .. } | Mutation::SseKeepOpen { ms, .. } => *ms,
            _ => 0,
        })
        .sum()
}

/// `a2a-conform selftest`: runs the matrix, prints its summary, writes `matrix.json` and
/// `matrix.md` into `out`; exit 0 only without gaps.
pub async fn run_command(opts: &SelftestOptions, out: &std::path::Path) -> anyhow::Result<i32> {
    use anyhow::Context as _;
    let matrix = run(opts).await.map_err(|e| anyhow::anyhow!(e))?;
    print!("{}", matrix.summary());
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let path = out.join("matrix.json");
    std::fs::write(&path, serde_json::to_string_pretty(&matrix)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    let md = out.join("matrix.md");
    std::fs::write(&md, matrix.markdown()).with_context(|| format!("writing {}", md.display()))?;
    eprintln!("wrote {} and {}", path.display(), md.display());
    Ok(if matrix.ok() { 0 } else { 1 })
}

/// Runs the matrix.
pub async fn run(opts: &SelftestOptions) -> Result<Matrix, String> {
    let started = Instant::now();
    let catalogue = match &opts.faults_dir {
        Some(dir) => FaultCatalogue::from_dir(dir),
        None => FaultCatalogue::builtin(),
    }
    .map_err(|e| e.to_string())?;
    let unkillable: BTreeMap<String, String> =
        serde_json::from_str(UNKILLABLE).map_err(|e| format!("mock-peer/unkillable.json: {e}"))?;
    // A fault whose checks are still being written runs only when named: nothing would catch it.
    let awaiting: Vec<Arc<Fault>> = catalogue.all().filter(|f| f.awaiting_checks).cloned().collect();
    let mut faults: Vec<Arc<Fault>> = catalogue
        .all()
        .filter(|_| opts.single_faults)
        .filter(|f| if opts.faults.is_empty() { !f.awaiting_checks } else { opts.faults.contains(&f.id) })
        .cloned()
        .collect();
    // Faults that wait on purpose run first, so that they do not stretch the tail of the matrix.
    faults.sort_by_key(|f| std::cmp::Reverse(deliberate_wait_ms(f)));
    for id in &opts.faults {
        if catalogue.get(id).is_none() {
            return Err(format!("unknown fault {id:?}"));
        }
    }
    // Each mock the catalogue uses gets its clean baseline: what the capabilities-off mock grades
    // (the "not declared" checks) exists only there.
    let mut variants: Vec<MockVariant> = faults.iter().map(|f| f.mock).collect();
    variants.push(MockVariant::Full);
    variants.sort();
    variants.dedup();
    let mut clean = Vec::new();
    for v in variants {
        clean.extend(run_once(v, Vec::new(), opts).await?);
    }
    let sem = Arc::new(Semaphore::new(opts.parallel_runs.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for f in &faults {
        let (f, sem, opts) = (f.clone(), sem.clone(), opts.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire().await;
            let id = f.id.clone();
            let t = Instant::now();
            let r = run_once(f.mock, vec![f], &opts).await;
            (id, r, t.elapsed().as_millis() as u64)
        });
    }
    // A check graded over both bindings is killed over each a fault is committed on: a fault on
    // both kills X and X[http+json] (where the clean run grades that clone).
    let graded: BTreeSet<&str> = clean.iter().map(|r| r.id.as_str()).collect();
    let intended: BTreeMap<String, Vec<String>> =
        faults.iter().map(|f| (f.id.clone(), meant_kills(f, &graded))).collect();
    let mut kills = BTreeMap::new();
    let mut collateral = BTreeMap::new();
    let mut split = BTreeMap::new();
    let mut run_ms = BTreeMap::new();
    while let Some(joined) = tasks.join_next().await {
        let (id, results, ms) = joined.map_err(|e| e.to_string())?;
        run_ms.insert(id.clone(), ms);
        let results = results?;
        let meant = intended.get(&id).map(Vec::as_slice).unwrap_or_default();
        let direct: BTreeSet<&str> = results.iter().filter(|r| killed(r)).map(|r| r.id.as_str()).collect();
        // A fault committed on both bindings is one violation: a check over HTTP+JSON that waits on
        // the JSON-RPC finding of it (its root) tells it once, there, and counts as killed by it.
        let killed_ids: Vec<String> =
            results.iter().filter(|r| killed(r) || by_root(r, meant, &direct)).map(|r| r.id.clone()).collect();
        let stray: Vec<Collateral> = results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Warn) && !meant.contains(&r.id))
            .map(|r| Collateral {
                check: r.id.clone(),
                outcome: r.outcome,
                message: r.failure.as_ref().map(|f| f.message.clone()).unwrap_or_default(),
            })
            .collect();
        if !stray.is_empty() {
            collateral.insert(id.clone(), stray);
        }
        let told: Vec<String> = crate::report::causes::of(&results)
            .into_iter()
            .filter(|c| c.level != crate::report::Level::Info)
            .map(|c| format!("{}: {}", c.root, c.headline))
            .collect();
        if told.len() > 1 {
            split.insert(id.clone(), told);
        }
        kills.insert(id, killed_ids);
    }
    let clean_problems: BTreeMap<String, String> = clean
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Pass | Outcome::Skip | Outcome::Info) || killed(r))
        .map(|r| {
            (
                r.id.clone(),
                format!("{}: {}", r.outcome.as_str(), r.failure.as_ref().map(|f| f.message.as_str()).unwrap_or("")),
            )
        })
        .collect();
    let scored: BTreeSet<String> =
        clean.iter().filter(|r| r.scored && r.outcome != Outcome::Skip).map(|r| r.id.clone()).collect();
    // A check graded by one baseline is skipped by the other (its capability is declared the other
    // way): those skips are not problems.
    let all_killed: BTreeSet<&String> = kills.values().flatten().collect();
    // Which checks no fault kills is a question about the whole catalogue: with `--fault`, only the
    // named faults are asked whether they kill what they claim.
    let whole = opts.faults.is_empty() && opts.single_faults;
    let unkilled_checks = if whole {
        // A check no fault can kill cannot be killed over HTTP+JSON either, for the same reason; a
        // clone may also be listed on its own, for a reason of its binding.
        let listed = |id: &str| {
            unkillable.contains_key(id) || unkillable.contains_key(id.strip_suffix(HTTP_JSON_SUFFIX).unwrap_or(id))
        };
        scored.iter().filter(|id| !all_killed.contains(id) && !listed(id)).cloned().collect()
    } else {
        Vec::new()
    };
    let stale_unkillable =
        if whole { unkillable.keys().filter(|id| all_killed.contains(id)).cloned().collect() } else { Vec::new() };
    let known: BTreeSet<&str> = clean.iter().map(|r| r.id.as_str()).collect();
    let stale_awaiting =
        awaiting.iter().filter(|f| f.kills.iter().all(|k| known.contains(k.as_str()))).map(|f| f.id.clone()).collect();
    let awaiting = awaiting.iter().filter(|f| !intended.contains_key(&f.id)).map(|f| f.id.clone()).collect();
    let conforming: Vec<String> = faults.iter().filter(|f| f.conforming).map(|f| f.id.clone()).collect();
    let undetected_faults =
        kills.iter().filter(|(f, k)| k.is_empty() && !conforming.contains(f)).map(|(f, _)| f.clone()).collect();
    let freedoms = match opts.freedoms || opts.combinations > 0 {
        true => Some(freedoms::run(opts).await?),
        false => None,
    };
    let mixes = match opts.mixes {
        0 => None,
        _ => {
            let graded: BTreeSet<String> =
                clean.iter().filter(|r| r.outcome != Outcome::Skip).map(|r| r.id.clone()).collect();
            Some(mixes::run(opts, &catalogue.fleet_pool(), &graded).await?)
        }
    };
    let survivors: BTreeMap<String, Vec<String>> = intended
        .iter()
        .filter_map(|(f, meant)| {
            let killed = kills.get(f)?;
            let left: Vec<String> = meant.iter().filter(|c| !killed.contains(c)).cloned().collect();
            (!left.is_empty()).then(|| (f.clone(), left))
        })
        .collect();
    Ok(Matrix {
        intended,
        survivors,
        collateral,
        clean_problems,
        undetected_faults,
        unkilled_checks,
        stale_unkillable,
        unkillable,
        awaiting,
        stale_awaiting,
        scored_checks: scored.len(),
        faults: faults.len() - conforming.len(),
        conforming,
        whole_catalogue: whole,
        freedoms,
        mixes,
        split,
        kills,
        run_ms,
        duration_ms: started.elapsed().as_millis() as u64,
    })
}

//! The multi-fault matrix: real agents carry many defects at once, so the mock commits seeded mixes
//! of 2 to 8 faults (drawn as `mock --fleet` draws an agent's) and each mix must still show every
//! fault (a check it names fails or warns: none hidden behind another's prerequisite), fail or warn
//! no check outside the faults' `kills`, and tell one root cause per fault.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::Semaphore;

use super::runs::{Collateral, Mode, SelftestOptions, by_root, killed, meant_kills, one_line, run_graded_shown};
use crate::engine::scheduler::WIRE_SCHEMA;
use crate::report::causes;
use crate::report::{CheckResult, Level, Outcome};
use crate::server::faults::{Fault, MockVariant};
use crate::server::fleet::fault_mix;

/// Fewest and most faults in a mix.
pub const MIX_SIZES: (usize, usize) = (2, 8);

/// One mix and what the run showed.
#[derive(Debug, Clone, Serialize)]
pub struct MixRun {
    pub faults: Vec<String>,
    /// Faults none of whose checks failed or warned, each with what its checks ended in.
    pub hidden: BTreeMap<String, Vec<String>>,
    /// Faults whose checks all wait on the finding of a fault of the mix that masks them (its
    /// `masks`): one story with it, told by its cause (fault → the masking fault).
    pub masked: BTreeMap<String, String>,
    /// Faults that rewrite answers only and changed none in this mix (another fault left them
    /// nothing to rewrite: no artifacts to drop from an answer that comes before the task has
    /// any): no client could see them, so they are neither found nor hidden.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unshown: Vec<String>,
    /// Checks that failed or warned although no fault of the mix names them.
    pub stray: Vec<Collateral>,
    /// Checks that ended in error.
    pub errors: Vec<String>,
    /// Root causes the report tells (info-level ones, measurements, left out).
    pub causes: usize,
    /// Each cause's root and headline, to see which fault it tells.
    pub cause_titles: Vec<String>,
    /// Causes that hold findings of two faults no one fault explains (each cause's root and the
    /// faults): a cause is one defect.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mixed: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// What the mixes showed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MixMatrix {
    pub seed: u64,
    pub runs: Vec<MixRun>,
}

impl MixMatrix {
    pub fn faults(&self) -> usize {
        self.runs.iter().map(|r| r.faults.len()).sum()
    }

    /// Faults that changed what the agent answered, the ones a checker can find.
    pub fn observable(&self) -> usize {
        self.faults() - self.unshown()
    }

    pub fn unshown(&self) -> usize {
        self.runs.iter().map(|r| r.unshown.len()).sum()
    }

    /// Faults found by a check they name, or told by the cause of a fault that masks them.
    pub fn found(&self) -> usize {
        self.runs.iter().map(|r| r.faults.len() - r.hidden.len() - r.unshown.len()).sum()
    }

    /// Faults told only by the cause of a fault that masks them.
    pub fn masked(&self) -> usize {
        self.runs.iter().map(|r| r.masked.len()).sum()
    }

    pub fn false_verdicts(&self) -> usize {
        self.runs.iter().map(|r| r.stray.len() + r.errors.len()).sum()
    }

    pub fn causes(&self) -> usize {
        self.runs.iter().map(|r| r.causes).sum()
    }

    /// Causes holding the findings of two faults.
    pub fn mixed(&self) -> usize {
        self.runs.iter().map(|r| r.mixed.len()).sum()
    }

    /// Causes told per fault committed.
    pub fn ratio(&self) -> f64 {
        if self.observable() == 0 { 1.0 } else { self.causes() as f64 / self.observable() as f64 }
    }

    /// Every fault found, no false verdict, at most 1.1 causes per fault. Mixed causes are
    /// reported, not yet held to zero (issue 30).
    pub fn ok(&self) -> bool {
        self.found() == self.observable()
            && self.false_verdicts() == 0
            && self.ratio() <= 1.1
            && self.runs.iter().all(|r| r.failed.is_none())
    }

    pub fn summary(&self) -> String {
        if self.runs.is_empty() {
            return String::new();
        }
        let pct = if self.observable() == 0 { 100.0 } else { 100.0 * self.found() as f64 / self.observable() as f64 };
        let mut s = format!(
            "fault mixes: {} of {}..{} faults (seed {}), recall {}/{} ({pct:.0}%; {} told by a masking fault's cause; {} of {} faults changed no answer), false verdicts: {}, causes/faults: {:.2}, mixed causes: {}\n",
            self.runs.len(),
            MIX_SIZES.0,
            MIX_SIZES.1,
            self.seed,
            self.found(),
            self.observable(),
            self.masked(),
            self.unshown(),
            self.faults(),
            self.false_verdicts(),
            self.ratio(),
            self.mixed()
        );
        for r in &self.runs {
            let over = r.causes > r.faults.len() - r.unshown.len();
            if r.hidden.is_empty()
                && r.stray.is_empty()
                && r.errors.is_empty()
                && r.failed.is_none()
                && r.mixed.is_empty()
                && !over
            {
                continue;
            }
            s.push_str(&format!("  {}:\n", r.faults.join(" + ")));
            if let Some(why) = &r.failed {
                s.push_str(&format!("    the run failed: {why}\n"));
            }
            for (f, how) in &r.hidden {
                s.push_str(&format!("    hidden: {f} ({})\n", how.join("; ")));
            }
            for m in &r.mixed {
                s.push_str(&format!("    mixed cause: {m}\n"));
            }
            for c in &r.stray {
                s.push_str(&format!("    stray: {} {} ({})\n", c.check, c.outcome.as_str(), one_line(&c.message)));
            }
            for e in &r.errors {
                s.push_str(&format!("    error: {e}\n"));
            }
            if over {
                s.push_str(&format!("    {} causes for {} faults:\n", r.causes, r.faults.len()));
                for t in &r.cause_titles {
                    s.push_str(&format!("      {}\n", one_line(t)));
                }
            }
        }
        s
    }
}

/// The fault of the mix that masks `f` (its `masks` says what it leaves unjudgeable): every check
/// `f` names that ran waits, through its chain of deferrals, on a check that fault killed.
fn masked_by(
    faults: &[Arc<Fault>],
    f: &Fault,
    mine: &[String],
    results: &[CheckResult],
    meant: &BTreeMap<&str, Vec<String>>,
    direct: &BTreeSet<&str>,
) -> Option<String> {
    // WIRE-SCHEMA validates whatever payloads came: when the masking fault lets none of them
    // through (every request refused), its pass shows nothing, and the other checks decide.
    let roots: Vec<Option<&str>> = mine
        .iter()
        .filter(|id| id.as_str() != WIRE_SCHEMA)
        .filter_map(|id| results.iter().find(|r| &r.id == id))
        .map(|r| root_of(results, r).filter(|root| direct.contains(root)))
        .collect();
    if roots.is_empty() || roots.iter().any(Option::is_none) {
        return None;
    }
    faults
        .iter()
        .filter(|m| m.id != f.id && m.masks.is_some())
        .find(|m| roots.iter().flatten().all(|root| meant[m.id.as_str()].iter().any(|k| k == root)))
        .map(|m| m.id.clone())
}

/// The check at the end of `r`'s chain of deferrals (`depends_on`), when it waits on one.
fn root_of<'a>(results: &'a [CheckResult], r: &'a CheckResult) -> Option<&'a str> {
    let mut at = r;
    let mut root = None;
    for _ in 0..results.len() {
        let Some(on) = at.depends_on.as_deref().filter(|_| at.outcome == Outcome::Skip) else { break };
        root = Some(on);
        match results.iter().find(|x| x.id == on) {
            Some(next) => at = next,
            None => break,
        }
    }
    root
}

/// Grades one mix's results: `graded` holds the ids the clean mock grades, `shown` the faults whose
/// answer mutations changed an answer.
fn judge(faults: &[Arc<Fault>], results: &[CheckResult], graded: &BTreeSet<&str>, shown: &BTreeSet<String>) -> MixRun {
    let meant: BTreeMap<&str, Vec<String>> = faults.iter().map(|f| (f.id.as_str(), meant_kills(f, graded))).collect();
    let all_meant: BTreeSet<&String> = meant.values().flatten().collect();
    let direct: BTreeSet<&str> = results.iter().filter(|r| killed(r)).map(|r| r.id.as_str()).collect();
    let mut hidden = BTreeMap::new();
    let mut masked = BTreeMap::new();
    let mut unshown = Vec::new();
    for f in faults {
        let mine = &meant[f.id.as_str()];
        let found = results.iter().any(|r| mine.contains(&r.id) && (killed(r) || by_root(r, mine, &direct)));
        if !found && let Some(by) = masked_by(faults, f, mine, results, &meant, &direct) {
            masked.insert(f.id.clone(), by);
            continue;
        }
        if !found && f.answer_only() && !shown.contains(&f.id) {
            unshown.push(f.id.clone());
            continue;
        }
        if !found {
            let how = mine
                .iter()
                .map(|id| match results.iter().find(|r| &r.id == id) {
                    Some(r) => match (&r.skip_reason, &r.depends_on) {
                        (Some(why), Some(on)) => format!("{id} {} on {on}", why.as_str()),
                        (Some(why), None) => format!("{id} {}", why.as_str()),
                        _ => format!("{id} {}", r.outcome.as_str()),
                    },
                    None => format!("{id} not run"),
                })
                .collect();
            hidden.insert(f.id.clone(), how);
        }
    }
    let stray = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Warn) && !all_meant.contains(&r.id))
        .map(|r| Collateral {
            check: r.id.clone(),
            outcome: r.outcome,
            message: r.failure.as_ref().map(|f| f.message.clone()).unwrap_or_default(),
        })
        .collect();
    let errors = results
        .iter()
        .filter(|r| r.outcome == Outcome::Error)
        .map(|r| format!("{} ({})", r.id, r.failure.as_ref().map(|f| one_line(&f.message)).unwrap_or_default()))
        .collect();
    let told: Vec<causes::Cause> = causes::of(results).into_iter().filter(|c| c.level != Level::Info).collect();
    // A cause is mixed when no one fault names all of its findings that some fault names.
    let mixed = told
        .iter()
        .filter_map(|c| {
            let owners: Vec<BTreeSet<&str>> = c
                .findings
                .iter()
                .map(|id| meant.iter().filter(|(_, kills)| kills.contains(id)).map(|(f, _)| *f).collect())
                .filter(|o: &BTreeSet<&str>| !o.is_empty())
                .collect();
            let common = owners.iter().skip(1).fold(owners.first().cloned().unwrap_or_default(), |a, b| &a & b);
            let all: BTreeSet<&str> = owners.iter().flatten().copied().collect();
            (!owners.is_empty() && common.is_empty()).then(|| {
                let faults = all.into_iter().collect::<Vec<_>>().join(" + ");
                let print = c.fingerprint.as_deref().map(|p| format!(" (by {p})")).unwrap_or_default();
                format!("{} holds {faults}{print}", c.root)
            })
        })
        .collect();
    MixRun {
        faults: faults.iter().map(|f| f.id.clone()).collect(),
        hidden,
        masked,
        unshown,
        stray,
        errors,
        causes: told.len(),
        cause_titles: told.iter().map(|c| format!("{}: {}", c.root, c.headline)).collect(),
        mixed,
        failed: None,
    }
}

/// Commits `opts.mixes` seeded mixes drawn from the fleet's pool.
pub async fn run(opts: &SelftestOptions, pool: &[Arc<Fault>], graded: &BTreeSet<String>) -> Result<MixMatrix, String> {
    let sem = Arc::new(Semaphore::new(opts.parallel_runs.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for k in 1..=opts.mixes {
        let mix = fault_mix(opts.seed, k, pool, MIX_SIZES.0, MIX_SIZES.1);
        let (sem, opts, graded) = (sem.clone(), opts.clone(), graded.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire().await;
            let graded: BTreeSet<&str> = graded.iter().map(String::as_str).collect();
            let run = match run_graded_shown(MockVariant::Full, mix.clone(), Vec::new(), Mode::Acts, &opts).await {
                Ok((results, shown)) => judge(&mix, &results, &graded, &shown),
                Err(e) => MixRun {
                    faults: mix.iter().map(|f| f.id.clone()).collect(),
                    hidden: BTreeMap::new(),
                    masked: BTreeMap::new(),
                    unshown: Vec::new(),
                    stray: Vec::new(),
                    errors: Vec::new(),
                    causes: 0,
                    cause_titles: Vec::new(),
                    mixed: Vec::new(),
                    failed: Some(e),
                },
            };
            (k, run)
        });
    }
    let mut runs = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        runs.push(joined.map_err(|e| e.to_string())?);
    }
    runs.sort_by_key(|(k, _)| *k);
    Ok(MixMatrix { seed: opts.seed, runs: runs.into_iter().map(|(_, r)| r).collect() })
}

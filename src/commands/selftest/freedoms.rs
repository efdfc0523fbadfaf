//! The negative controls of the matrix: every freedom of the catalogue (a behaviour the spec allows)
//! shown alone, in both behaviour modes, and seeded random combinations of them. Any check that
//! fails, warns or ends in error on one is a false verdict waiting for a real agent.

use std::sync::Arc;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde::Serialize;
use tokio::sync::Semaphore;

use super::runs::{Mode, SelftestOptions, one_line, run_graded};
use crate::report::{CheckResult, Outcome};
use crate::server::faults::MockVariant;
use crate::server::freedoms::{Freedom, FreedomCatalogue, compatible};

/// A check that failed, warned or ended in error on a behaviour the spec allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FalseVerdict {
    pub check: String,
    pub outcome: Outcome,
    /// What the check said.
    pub message: String,
}

/// One run: the freedoms shown together, how behaviours were found, what went wrong.
#[derive(Debug, Clone, Serialize)]
pub struct FreedomRun {
    pub freedoms: Vec<String>,
    pub mode: Mode,
    pub false_verdicts: Vec<FalseVerdict>,
    /// The run itself could not happen (the mock did not start, the check did not run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

impl FreedomRun {
    pub fn clean(&self) -> bool {
        self.false_verdicts.is_empty() && self.failed.is_none()
    }
}

/// What the freedoms showed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FreedomMatrix {
    /// Freedoms in the catalogue.
    pub freedoms: usize,
    /// The seed the combinations were drawn from (`selftest --seed`).
    pub seed: u64,
    /// Each freedom alone, in each mode.
    pub alone: Vec<FreedomRun>,
    /// The seeded combinations.
    pub combinations: Vec<FreedomRun>,
}

impl FreedomMatrix {
    /// False verdicts over every run.
    pub fn false_verdicts(&self) -> usize {
        self.alone.iter().chain(&self.combinations).map(|r| r.false_verdicts.len()).sum()
    }

    pub fn ok(&self) -> bool {
        self.alone.iter().chain(&self.combinations).all(FreedomRun::clean)
    }

    pub fn summary(&self) -> String {
        let mut s = format!(
            "freedoms: {}, combinations: {} (seed {}), false verdicts: {}\n",
            self.freedoms,
            self.combinations.len(),
            self.seed,
            self.false_verdicts()
        );
        for r in self.alone.iter().chain(&self.combinations).filter(|r| !r.clean()) {
            let mode = match r.mode {
                Mode::Acts => "acts",
                Mode::Discovered => "discovered",
            };
            s.push_str(&format!("  {} ({mode}):\n", r.freedoms.join(" + ")));
            if let Some(why) = &r.failed {
                s.push_str(&format!("    the run failed: {why}\n"));
            }
            for v in &r.false_verdicts {
                s.push_str(&format!("    {} {} ({})\n", v.check, v.outcome.as_str(), one_line(&v.message)));
            }
        }
        s
    }
}

/// The checks that failed, warned or ended in error.
fn false_verdicts(results: &[CheckResult]) -> Vec<FalseVerdict> {
    results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Warn | Outcome::Error))
        .map(|r| FalseVerdict {
            check: r.id.clone(),
            outcome: r.outcome,
            message: r.failure.as_ref().map(|f| f.message.clone()).unwrap_or_default(),
        })
        .collect()
}

/// `n` combinations of up to `max` freedoms that can be shown together, drawn from `seed`: a
/// subsequence of the catalogue (proptest's), each freedom kept when it is compatible with the
/// ones kept before it.
pub fn combinations(all: &[Arc<Freedom>], n: usize, max: usize, seed: u64) -> Vec<Vec<Arc<Freedom>>> {
    if all.is_empty() {
        return Vec::new();
    }
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &key));
    let strategy = proptest::sample::subsequence(all.to_vec(), 2.min(all.len())..=max.clamp(1, all.len()));
    (0..n)
        .filter_map(|_| strategy.new_tree(&mut runner).ok().map(|t| t.current()))
        .map(|drawn| {
            let mut kept: Vec<Arc<Freedom>> = Vec::new();
            for f in drawn {
                if kept.iter().all(|k| compatible(k, &f)) {
                    kept.push(f);
                }
            }
            kept
        })
        .collect()
}

/// Shows every freedom alone (in both modes) and `opts.combinations` combinations of them.
pub async fn run(opts: &SelftestOptions) -> Result<FreedomMatrix, String> {
    let catalogue = FreedomCatalogue::builtin().map_err(|e| e.to_string())?;
    let all: Vec<Arc<Freedom>> = catalogue.all().cloned().collect();
    let mut planned: Vec<(bool, Vec<Arc<Freedom>>, Mode)> = Vec::new();
    // An agent that honours no test contract is not checked as one that does (`--behaviors acts`
    // is the user's word that it does): only the behaviours the kit sees it do count.
    let contract_free = |fs: &[Arc<Freedom>]| fs.iter().any(|f| f.mock.no_test_contract);
    for f in &all {
        for mode in [Mode::Acts, Mode::Discovered] {
            if mode == Mode::Discovered || !contract_free(std::slice::from_ref(f)) {
                planned.push((false, vec![f.clone()], mode));
            }
        }
    }
    for (i, combo) in combinations(&all, opts.combinations, opts.max_freedoms, opts.seed).into_iter().enumerate() {
        let mode = if i % 2 == 0 && !contract_free(&combo) { Mode::Acts } else { Mode::Discovered };
        planned.push((true, combo, mode));
    }
    let sem = Arc::new(Semaphore::new(opts.parallel_runs.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for (n, (combined, freedoms, mode)) in planned.into_iter().enumerate() {
        let (sem, opts) = (sem.clone(), opts.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire().await;
            let ids: Vec<String> = freedoms.iter().map(|f| f.id.clone()).collect();
            let out = run_graded(MockVariant::Full, Vec::new(), freedoms, mode, &opts).await;
            let run = match out {
                Ok(results) => {
                    FreedomRun { freedoms: ids, mode, false_verdicts: false_verdicts(&results), failed: None }
                }
                Err(e) => FreedomRun { freedoms: ids, mode, false_verdicts: Vec::new(), failed: Some(e) },
            };
            (n, combined, run)
        });
    }
    let mut done = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        done.push(joined.map_err(|e| e.to_string())?);
    }
    done.sort_by_key(|(n, _, _)| *n);
    let mut m = FreedomMatrix { freedoms: all.len(), seed: opts.seed, ..FreedomMatrix::default() };
    for (_, combined, run) in done {
        if combined { m.combinations.push(run) } else { m.alone.push(run) }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_are_seeded_compatible_and_bounded() {
        let all: Vec<Arc<Freedom>> = FreedomCatalogue::builtin().unwrap().all().cloned().collect();
        let ids = |c: &[Vec<Arc<Freedom>>]| -> Vec<Vec<String>> {
            c.iter().map(|v| v.iter().map(|f| f.id.clone()).collect()).collect()
        };
        let a = combinations(&all, 50, 8, 7);
        assert_eq!(ids(&a), ids(&combinations(&all, 50, 8, 7)), "the same seed draws the same combinations");
        assert_ne!(ids(&a), ids(&combinations(&all, 50, 8, 8)), "another seed draws others");
        for c in &a {
            assert!(!c.is_empty() && c.len() <= 8, "{} freedoms", c.len());
            for (i, x) in c.iter().enumerate() {
                for y in &c[i + 1..] {
                    assert!(compatible(x, y), "{} and {} drawn together", x.id, y.id);
                }
            }
        }
        assert!(a.iter().any(|c| c.len() >= 5), "no combination is large");
    }
}

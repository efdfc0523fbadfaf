// Include with `#[path = "common/fuzz.rs"] mod fuzz;` from a tests/*.rs file.
//! The fuzz tests' proptest runner: a bounded number of cases (`A2A_FUZZ_CASES`), an explicit seed
//! (`A2A_FUZZ_SEED`, else a fresh one) printed before the run and in any failure, so that a failure
//! seen once in CI replays exactly with `A2A_FUZZ_SEED=<seed> cargo test --test <file>`, and no
//! failure-persistence files written into the checkout.
#![allow(dead_code)]

use std::fmt::Debug;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

/// Cases to run: `A2A_FUZZ_CASES` scaled by `weight` percent (so a costly property runs fewer
/// than a cheap one under the same setting), else `default`; at least one.
pub fn cases(default: u32, weight: u32) -> u32 {
    match std::env::var("A2A_FUZZ_CASES") {
        Ok(v) => {
            let n: u64 = v.trim().parse().unwrap_or_else(|_| panic!("A2A_FUZZ_CASES={v:?} is not a number"));
            (n * u64::from(weight) / 100).clamp(1, u64::from(u32::MAX)) as u32
        }
        Err(_) => default.max(1),
    }
}

/// The seed of this run: `A2A_FUZZ_SEED`, else one drawn from the clock.
pub fn seed() -> u64 {
    match std::env::var("A2A_FUZZ_SEED") {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| panic!("A2A_FUZZ_SEED={v:?} is not a u64")),
        Err(_) => {
            let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
            // Two runs started in the same nanosecond by two processes still differ.
            (t.as_nanos() as u64) ^ (u64::from(std::process::id()) << 40)
        }
    }
}

fn rng(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(i as u64).to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// Runs `test` on `cases` values of the strategy `strategy` builds; panics with the seed, the replay command and the
/// shrunk input on failure. Returns how many cases ran and how long they took.
pub fn run<S, F>(
    test_file: &str,
    name: &str,
    cases: u32,
    strategy: impl FnOnce() -> S + Send,
    test: F,
) -> (u32, Duration)
where
    S: Strategy,
    S::Value: Debug,
    F: Fn(S::Value) -> Result<(), TestCaseError> + Send,
{
    // Generating and shrinking the nested A2A values of a debug build needs more stack than a
    // test thread's 2 MiB.
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name(format!("fuzz {name}"))
            .stack_size(64 * 1024 * 1024)
            .spawn_scoped(scope, || run_here(test_file, name, cases, strategy(), test))
            .expect("the fuzz thread starts")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn run_here<S, F>(test_file: &str, name: &str, cases: u32, strategy: S, test: F) -> (u32, Duration)
where
    S: Strategy,
    S::Value: Debug,
    F: Fn(S::Value) -> Result<(), TestCaseError>,
{
    let seed = seed();
    eprintln!(
        "fuzz {test_file}::{name}: {cases} cases, seed {seed} (replay: A2A_FUZZ_SEED={seed} cargo test --test {test_file})"
    );
    let config = Config {
        cases,
        failure_persistence: None,
        // A failing case of a network property is shrunk for a bounded time, not indefinitely.
        max_shrink_time: 60_000,
        max_shrink_iters: 512,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(config, rng(seed));
    let started = Instant::now();
    match runner.run(&strategy, test) {
        Ok(()) => {
            let took = started.elapsed();
            eprintln!("fuzz {test_file}::{name}: {cases} cases passed in {took:.2?} (seed {seed})");
            (cases, took)
        }
        Err(TestError::Fail(why, input)) => panic!(
            "fuzz {test_file}::{name} failed with seed {seed} \
             (replay: A2A_FUZZ_SEED={seed} cargo test --test {test_file} {name}): {why}\nminimal input: {input:#?}"
        ),
        Err(TestError::Abort(why)) => panic!("fuzz {test_file}::{name} aborted with seed {seed}: {why}"),
    }
}

//! Every built-in check as a cargo test against an in-process mock peer: `cargo test --test suites`
//! lists them, `cargo test --test suites -- --exact CORE-GET-001` runs one. The checks run once
//! (concurrently, as `a2a-conform check` does); each trial then reports its check's outcome.
//! Skipped checks show as ignored, with the reason in the name list of `--include-ignored` runs.

use std::collections::HashMap;

use a2a_conform::client::http::ClientConfig;
use a2a_conform::commands::check::{self, CheckOptions};
use a2a_conform::engine::scheduler::WIRE_SCHEMA;
use a2a_conform::report::{CheckResult, Outcome};
use a2a_conform::suite::behaviors::Behaviors;
use a2a_conform::suite::loader;
use libtest_mimic::{Arguments, Failed, Trial};

fn run_checks(only: Vec<String>) -> HashMap<String, CheckResult> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let (server, access) = check::start_embedded_mock().await.expect("embedded mock starts");
        let mut opts = CheckOptions {
            only,
            behaviors: Behaviors::Acts,
            client: ClientConfig::default(),
            ..CheckOptions::new(server.url())
        };
        access.apply(&mut opts);
        let report = check::run(&opts, &mut ()).await.expect("the check run starts");
        server.shutdown().await;
        report.results.into_iter().map(|r| (r.result.id.clone(), r.result)).collect()
    })
}

fn verdict(r: &CheckResult) -> Result<(), Failed> {
    match r.outcome {
        Outcome::Pass | Outcome::Info | Outcome::Skip => Ok(()),
        Outcome::Warn | Outcome::Fail | Outcome::Error => {
            let f = r.failure.clone().unwrap_or_default();
            let mut msg = format!("{} (§{} {}): {}", r.outcome.as_str(), r.spec.section, r.level.as_str(), f.message);
            if let (Some(e), Some(a)) = (&f.expected, &f.actual) {
                msg.push_str(&format!("\n  expected: {e}\n  actual:   {a}"));
            }
            Err(msg.into())
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut suites = loader::builtin().expect("built-in suites load");
    suites.push(loader::kit().expect("the kit's synthetic checks load"));
    let ids: Vec<String> = suites
        .iter()
        .flat_map(|s| s.doc.suites.iter().flat_map(|suite| suite.tests.iter().map(|t| t.id.clone())))
        // The 0.3 detection only ever runs against a 0.3 card (tests/legacy.rs).
        .filter(|id| id != check::LEGACY_PEER)
        .collect();
    let results = if args.list {
        HashMap::new()
    } else {
        // With `--exact ID` only that check runs; otherwise all of them (filters only hide trials).
        let only = match (&args.filter, args.exact) {
            (Some(f), true) if f != WIRE_SCHEMA => vec![f.clone()],
            _ => vec![],
        };
        run_checks(only)
    };
    let trials = ids
        .into_iter()
        .map(|id| {
            let result = results.get(&id).cloned();
            let skipped = result.as_ref().is_some_and(|r| r.outcome == Outcome::Skip);
            let name = id.clone();
            Trial::test(name, move || match result {
                Some(r) => verdict(&r),
                None => Err(format!("check {id} produced no result").into()),
            })
            .with_ignored_flag(skipped)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

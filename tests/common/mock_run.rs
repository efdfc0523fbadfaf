//! One check run against a fresh mock committing given faults: the harness of the tests that judge
//! the kit's verdicts on a misbehaving agent run after run.

use std::time::Duration;

use a2a_conform::client::http::ClientConfig;
use a2a_conform::commands::check::{self, CheckOptions};
use a2a_conform::report::json::Report;
use a2a_conform::server::MockConfig;
use a2a_conform::server::faults::FaultCatalogue;

/// Runs the built-in checks against a mock at `sleep_percent` of its scripted pace committing
/// `faults`, with the embedded run's concurrency, 6 s of patience and 10 s per exchange; `tune`
/// sets the rest (behaviours, `--only`).
pub async fn run_against_mock(faults: &[&str], sleep_percent: u32, tune: impl FnOnce(&mut CheckOptions)) -> Report {
    let catalogue = FaultCatalogue::builtin().expect("the catalogue loads");
    let faults = faults.iter().map(|f| catalogue.get(f).expect("the fault exists")).collect();
    let base = MockConfig { sleep_percent, faults, ..MockConfig::default() };
    let (server, access) = check::start_mock_with(base).await.expect("the mock starts");
    let mut opts = CheckOptions {
        jobs: check::EMBEDDED_JOBS,
        patience: Duration::from_secs(6),
        client: ClientConfig { timeout: Duration::from_secs(10), ..ClientConfig::default() },
        ..CheckOptions::new(server.url())
    };
    tune(&mut opts);
    access.apply(&mut opts);
    let report = check::run(&opts, &mut ()).await.expect("the check run starts");
    server.shutdown().await;
    report
}

//! `check --targets` against `mock --fleet N` gives every agent the verdict a run of `check` on
//! that agent alone gives: the same status and the same findings, though the registry runs its
//! agents at once on a busy machine. N is 12 here; `A2A_FLEET_AGENTS=200` (as `.ci/run` sets it,
//! on a release build) measures it at the size the issue names.

use std::collections::BTreeSet;
use std::sync::Arc;

use a2a_conform::commands::check::{self, CheckOptions};
use a2a_conform::commands::registry::agent::Shared;
use a2a_conform::commands::registry::targets::BehaviorSource;
use a2a_conform::commands::registry::{self, FailOn, RegistryOptions};
use a2a_conform::report::files::Format;
use a2a_conform::report::index::AgentStatus;
use a2a_conform::report::{Outcome, Report};
use a2a_conform::server::fleet::{Fleet, FleetConfig};
use a2a_conform::server::{MockConfig, WebhookPolicy};
use a2a_conform::suite::behaviors::Behaviors;
use tokio::sync::Semaphore;

fn agents() -> usize {
    std::env::var("A2A_FLEET_AGENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
}

/// The scored checks that failed or warned.
fn findings(report: &Report) -> BTreeSet<String> {
    report
        .checks()
        .filter(|r| r.scored && matches!(r.outcome, Outcome::Fail | Outcome::Warn))
        .map(|r| r.id.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_agents_verdict_in_the_registry_is_the_verdict_of_its_own_run() {
    let n = agents();
    let base = MockConfig { webhooks: WebhookPolicy::AllowLoopback, sleep_percent: 33, ..MockConfig::default() };
    let fleet = Fleet::start(FleetConfig { base, ..FleetConfig::new(n, 7) }).await.unwrap();
    let dir = std::env::temp_dir().join(format!("a2a-fleet-registry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let targets = dir.join("targets.yaml");
    std::fs::write(&targets, fleet.targets_yaml()).unwrap();
    let opts = RegistryOptions {
        targets,
        shared: Shared {
            base: CheckOptions::new(""),
            behaviors: BehaviorSource::Unset,
            out: dir.join("registry"),
            formats: vec![Format::Json],
            repeat: 1,
        },
        parallel: registry::default_parallel(),
        per_host: 0,
        shard: None,
        resume: false,
        fail_on: FailOn::Any,
        progress: false,
        quiet: true,
    };
    let index = registry::run(&opts).await.unwrap();
    assert_eq!(index.agents.len(), n);
    for a in &index.agents {
        assert!(opts.shared.out.join(&a.name).join("report.json").is_file(), "{} has its report", a.name);
    }

    // Each agent alone, a few at a time so that the single runs are not a registry of their own.
    let gate = Arc::new(Semaphore::new(4));
    let mut runs = tokio::task::JoinSet::new();
    for agent in fleet.agents() {
        let (url, name, gate) = (agent.card_url(), agent.name.clone(), gate.clone());
        runs.spawn(async move {
            let _slot = gate.acquire_owned().await.unwrap();
            let opts = CheckOptions { behaviors: Behaviors::Acts, ..CheckOptions::new(url) };
            (name, check::run(&opts, &mut ()).await.unwrap())
        });
    }
    let mut differences = Vec::new();
    while let Some(joined) = runs.join_next().await {
        let (name, alone) = joined.unwrap();
        let line = index.agents.iter().find(|a| a.name == name).unwrap();
        let status = match alone.verdict.exit_code {
            0 => AgentStatus::Conformant,
            1 => AgentStatus::NonConformant,
            _ => AgentStatus::Inconclusive,
        };
        let registry: BTreeSet<String> = line.failing.iter().cloned().collect();
        if line.status != status || registry != findings(&alone) {
            differences.push(format!(
                "{name}: registry {:?} {registry:?}, alone {status:?} {:?}",
                line.status,
                findings(&alone)
            ));
        }
    }
    assert!(differences.is_empty(), "{} of {n} agents differ:\n{}", differences.len(), differences.join("\n"));
    // The fleet says what each agent is: faithful ones conformant, faulty ones not.
    for a in &index.agents {
        let faithful = fleet.agent(&a.name).unwrap().faults.is_empty();
        let want = if faithful { AgentStatus::Conformant } else { AgentStatus::NonConformant };
        assert_eq!(a.status, want, "{}: {:?}", a.name, a.failing);
    }
    fleet.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

//! `a2a-conform mock --fleet N`: N distinct agents on one listener, each under `/agents/aNNNN` with
//! its own card, tasks and faults drawn from (seed, k); the targets file that lists them; the rule
//! that keeps faults depending on timing or on settings out of a fleet; and `check` grading a
//! faithful agent conformant and a faulty one not. On 127.0.0.1, port 0, every wait bounded.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read as _};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use a2a_conform::commands::check::{self, CheckOptions, EMBEDDED_SLEEP_PERCENT};
use a2a_conform::report::{Level, Outcome, Report};
use a2a_conform::server::faults::{FaultCatalogue, FleetExclusions, MockVariant, Mutation};
use a2a_conform::server::fleet::{Fleet, FleetAgent, FleetConfig};
use a2a_conform::server::{MockConfig, WebhookPolicy};
use a2a_conform::suite::behaviors::Behaviors;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");

/// Bounds one HTTP exchange with the fleet.
const EXCHANGE: Duration = Duration::from_secs(10);
/// Bounds one check run of one agent (seconds in release; debug builds are slower).
const RUN_BOUND: Duration = Duration::from_secs(240);

fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(EXCHANGE).build().unwrap()
}

async fn get_json(url: &str) -> Value {
    let resp = client().get(url).send().await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
    assert_eq!(resp.status(), 200, "GET {url}");
    resp.json().await.unwrap()
}

/// One JSON-RPC call to the agent at `agent` (its base URL).
async fn rpc(agent: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let resp = client()
        .post(format!("{agent}/rpc"))
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} to {agent}: {e}"));
    resp.json().await.unwrap()
}

fn faithful(fleet: &Fleet) -> Vec<&FleetAgent> {
    fleet.agents().iter().filter(|a| a.faults.is_empty()).collect()
}

/// True when one of the agent's faults edits its card (every such fault is a `FAULT-CARD-*`).
fn edits_its_card(a: &FleetAgent) -> bool {
    a.faults.iter().any(|f| f.starts_with("FAULT-CARD"))
}

#[tokio::test]
async fn a_fleet_serves_n_distinct_cards_each_at_its_own_path() {
    let fleet = Fleet::start(FleetConfig::new(12, 3)).await.unwrap();
    assert_eq!(fleet.agents().len(), 12);
    let mut cards = BTreeSet::new();
    for (k, a) in fleet.agents().iter().enumerate() {
        assert_eq!(a.name, format!("a{:04}", k + 1));
        assert_eq!(a.url, format!("{}/agents/{}", fleet.url(), a.name));
        let card = get_json(&a.card_url()).await;
        if !edits_its_card(a) {
            assert_eq!(card["name"], format!("a2a-conform fleet agent {}", a.name));
            assert_eq!(card["supportedInterfaces"][0]["url"], format!("{}/rpc", a.url), "{}", a.name);
        }
        cards.insert(card.to_string());
    }
    assert_eq!(cards.len(), 12, "twelve distinct cards");
    assert!(fleet.agents().iter().filter(|a| !edits_its_card(a)).count() >= 6);
    fleet.shutdown().await;
}

#[tokio::test]
async fn a_task_of_one_agent_is_not_found_on_another() {
    let fleet = Fleet::start(FleetConfig::new(30, 3)).await.unwrap();
    let honest = faithful(&fleet);
    assert!(honest.len() >= 2, "two faithful agents among 30");
    let (a, b) = (&honest[0].url, &honest[1].url);
    let message = json!({"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "tck-complete-task"}]});
    let sent = rpc(a, "SendMessage", json!({"message": message})).await;
    let id = sent["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("a task from {a}: {sent}")).to_owned();
    let own = rpc(a, "GetTask", json!({"id": id})).await;
    assert_eq!(own["result"]["id"], id.as_str(), "{own}");
    let other = rpc(b, "GetTask", json!({"id": id})).await;
    assert_eq!(other["error"]["code"], -32001, "{b} must not know {a}'s task: {other}");
    let listed = rpc(b, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    fleet.shutdown().await;
}

#[tokio::test]
async fn the_same_seed_gives_the_same_faults_and_another_seed_others() {
    let faults = |f: &Fleet| f.agents().iter().map(|a| (a.name.clone(), a.faults.clone())).collect::<Vec<_>>();
    let one = Fleet::start(FleetConfig::new(60, 5)).await.unwrap();
    let again = Fleet::start(FleetConfig::new(60, 5)).await.unwrap();
    let other = Fleet::start(FleetConfig::new(60, 6)).await.unwrap();
    let fewer = Fleet::start(FleetConfig::new(10, 5)).await.unwrap();
    assert_eq!(faults(&one), faults(&again));
    assert_ne!(faults(&one), faults(&other));
    assert_eq!(faults(&fewer), faults(&one)[..10], "agent k's faults do not depend on the fleet's size");
    let honest = faithful(&one).len();
    assert!((10..=30).contains(&honest), "about a third of 60 faithful: {honest}");
    assert!(one.agents().iter().all(|a| a.faults.len() <= 2));
    for f in [one, again, other, fewer] {
        f.shutdown().await;
    }
}

/// Owns the child process and kills it when dropped, so that a failed assertion never leaves a
/// fleet running.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_targets_file_is_written_before_the_first_line_and_lists_every_agent() {
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fleet-targets-{}.yaml", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let mut child = KillOnDrop(
        Command::new(BIN)
            .args(["mock", "--port", "0", "--fleet", "7", "--fleet-seed", "2", "--targets-out"])
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts"),
    );
    let stdout = child.0.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = tx.send(lines.next());
        for _ in lines {}
    });
    let first = rx.recv_timeout(Duration::from_secs(30)).expect("a first line within 30 s").unwrap().unwrap();
    // Written before the line was printed.
    let text = std::fs::read_to_string(&file).expect("the targets file exists once the first line is out");
    let base = first.strip_prefix("listening on ").unwrap_or_else(|| panic!("first line: {first:?}")).to_owned();
    assert!(base.starts_with("http://127.0.0.1:") && !base.ends_with('/'), "{base}");
    assert_eq!(
        text.lines().next().unwrap(),
        "# a2a-conform targets: 7 agents of `a2a-conform mock --fleet 7 --fleet-seed 2`"
    );
    let parsed: Value = serde_norway::from_str(&text).expect("the targets file is YAML");
    let targets = parsed["targets"].as_array().expect("a list of targets");
    assert_eq!(targets.len(), 7);
    let same = Fleet::start(FleetConfig::new(7, 2)).await.unwrap();
    for (t, a) in targets.iter().zip(same.agents()) {
        let name = t["name"].as_str().unwrap();
        assert_eq!(name, a.name);
        assert_eq!(t["url"], format!("{base}/agents/{name}/.well-known/agent-card.json"));
        assert_eq!(t["behaviors"], "acts");
        assert_eq!(t["labels"].as_object().unwrap().len(), 1, "{t}");
        assert_eq!(t["labels"]["faults"], a.faults.join(","), "the CLI's fleet is the library's, seed for seed");
        let card = get_json(t["url"].as_str().unwrap()).await;
        if !edits_its_card(a) {
            assert_eq!(card["name"], format!("a2a-conform fleet agent {name}"));
        }
    }
    same.shutdown().await;
    let _ = child.0.kill();
    let _ = child.0.wait();
    let mut err = String::new();
    child.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(err.contains("fleet: 7 agents at "), "a one-line summary on stderr: {err}");
    let _ = std::fs::remove_file(&file);
}

#[test]
fn the_fault_filter_keeps_out_every_fault_that_waits_or_needs_settings() {
    let catalogue = FaultCatalogue::builtin().unwrap();
    let pool: BTreeSet<String> = catalogue.fleet_pool().iter().map(|f| f.id.clone()).collect();
    let timed = |m: &Mutation| {
        matches!(
            m,
            Mutation::Stall { .. }
                | Mutation::SseHoldBack { .. }
                | Mutation::SseKeepOpen { .. }
                | Mutation::RequestShiftTime { .. }
                | Mutation::DeferRun { .. }
                | Mutation::ForeignTask { .. }
        )
    };
    let mut timing = 0;
    for f in catalogue.all() {
        if f.mutations.iter().any(timed) {
            timing += 1;
            assert!(!pool.contains(&f.id), "{} depends on timing and is in the fleet", f.id);
        }
        if f.mutations.iter().any(|m| matches!(m, Mutation::SignCard { .. } | Mutation::AuthBypass { .. })) {
            assert!(!pool.contains(&f.id), "{} needs a signing key or callers and is in the fleet", f.id);
        }
        if f.conforming || f.mock != MockVariant::Full {
            assert!(!pool.contains(&f.id), "{} is conforming or needs another mock", f.id);
        }
    }
    assert!(timing >= 5, "the catalogue has faults that wait ({timing})");
    for id in ["FAULT-STREAM-KEEP-OPEN", "FAULT-STREAM-HELD-BACK", "FAULT-SEND-EARLY-ANSWER", "FAULT-TENANT-SLOW"] {
        assert!(!pool.contains(id), "{id}");
    }
}

async fn check_agent(card_url: &str) -> Report {
    let opts = CheckOptions {
        behaviors: Behaviors::Acts,
        jobs: 8,
        timeout: Duration::from_secs(30),
        patience: Duration::from_secs(10),
        ..CheckOptions::new(card_url)
    };
    tokio::time::timeout(RUN_BOUND, check::run(&opts, &mut ()))
        .await
        .unwrap_or_else(|_| panic!("the run of {card_url} ends within {RUN_BOUND:?}"))
        .unwrap_or_else(|e| panic!("the run of {card_url} happens: {e}"))
}

/// The fleet's promise, on one agent of each kind: `check URL --behaviors acts` (the kit's webhook
/// on loopback, so the fleet allows loopback webhooks) grades a faithful agent conformant and a
/// faulty one non-conformant. The faithful run also holds `mock-peer/fleet.json` to account: every
/// fault a fleet commits names a MUST check that run grades, and no fault listed for naming none
/// does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_finds_a_faithful_agent_conformant_and_a_faulty_one_not() {
    let base = MockConfig {
        webhooks: WebhookPolicy::AllowLoopback,
        sleep_percent: EMBEDDED_SLEEP_PERCENT,
        ..MockConfig::default()
    };
    let fleet = Fleet::start(FleetConfig { base, ..FleetConfig::new(12, 4) }).await.unwrap();
    let good = fleet.agents().iter().find(|a| a.faults.is_empty()).expect("a faithful agent");
    let bad = fleet.agents().iter().find(|a| !a.faults.is_empty()).expect("a faulty agent");
    let (good_url, bad_url) = (good.card_url(), bad.card_url());
    let (clean, faulty) = tokio::join!(check_agent(&good_url), check_agent(&bad_url));
    let failed =
        |r: &Report| r.checks().filter(|c| c.outcome == Outcome::Fail).map(|c| c.id.clone()).collect::<Vec<_>>();
    assert_eq!(clean.verdict.exit_code, 0, "{} (faithful) fails {:?}", good.name, failed(&clean));
    assert_eq!(
        faulty.verdict.exit_code, 1,
        "{} commits {:?}, and the run ends {:?}",
        bad.name, bad.faults, faulty.verdict
    );
    fleet.shutdown().await;

    let graded_must: BTreeSet<&str> = clean
        .checks()
        .filter(|c| c.level == Level::Must && c.scored && c.outcome != Outcome::Skip)
        .map(|c| c.id.as_str())
        .collect();
    assert!(graded_must.len() > 100, "{} MUST checks graded", graded_must.len());
    let catalogue = FaultCatalogue::builtin().unwrap();
    let names_one = |id: &str| catalogue.get(id).unwrap().kills.iter().any(|k| graded_must.contains(k.as_str()));
    for f in catalogue.fleet_pool() {
        assert!(
            names_one(&f.id),
            "{} is in the fleet, but none of its kills {:?} is a MUST check a run of a fleet agent grades: list it \
             under no_must_kill in mock-peer/fleet.json",
            f.id,
            f.kills
        );
    }
    for id in &FleetExclusions::builtin().no_must_kill.faults {
        assert!(
            !names_one(id),
            "{id} kills a graded MUST check after all: drop it from no_must_kill in mock-peer/fleet.json"
        );
    }
}

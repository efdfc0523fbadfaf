//! `check --targets`: a registry of agents from one process. Agents here are mocks started by the
//! test on 127.0.0.1 (faithful, faulty, flaky), an address nobody listens on, and one that accepts
//! connections and never answers; the checks are narrowed with `--only` so that each run is short.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use a2a_conform::commands::check::CheckOptions;
use a2a_conform::commands::registry::agent::Shared;
use a2a_conform::commands::registry::shard::ShardSpec;
use a2a_conform::commands::registry::targets::BehaviorSource;
use a2a_conform::commands::registry::{self, FailOn, RegistryOptions};
use a2a_conform::report::files::Format;
use a2a_conform::report::index::{self, AgentStatus, Index};
use a2a_conform::server::faults::FaultCatalogue;
use a2a_conform::server::{MockConfig, MockServer};
use serde_json::Value;

#[path = "common/schema.rs"]
mod schema;

/// Checks that grade a card and one exchange: a run takes about a second.
const ONLY: &[&str] = &["KIT-CARD-001", "CARD-DISC-003", "CORE-SEND-001", "CORE-GET-001"];

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("a2a-registry-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

async fn mock(faults: &[&str]) -> MockServer {
    let catalogue = FaultCatalogue::builtin().unwrap();
    let config = MockConfig {
        faults: faults.iter().map(|f| catalogue.get(f).unwrap_or_else(|| panic!("no fault {f}"))).collect(),
        ..MockConfig::default()
    };
    MockServer::start(config).await.unwrap()
}

fn options(dir: &Path, targets: &Path) -> RegistryOptions {
    let base = CheckOptions {
        only: ONLY.iter().map(|s| (*s).to_owned()).collect(),
        timeout: Duration::from_secs(10),
        patience: Duration::from_secs(3),
        deadline: Duration::from_secs(60),
        ..CheckOptions::new("")
    };
    RegistryOptions {
        targets: targets.to_path_buf(),
        shared: Shared {
            base,
            behaviors: BehaviorSource::Acts,
            out: dir.join("out"),
            formats: vec![Format::Json, Format::Junit],
            repeat: 1,
        },
        parallel: 4,
        per_host: 0,
        shard: None,
        resume: false,
        fail_on: FailOn::Any,
        progress: false,
        quiet: true,
    }
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

fn status_of(index: &Index) -> BTreeMap<String, AgentStatus> {
    index.agents.iter().map(|a| (a.name.clone(), a.status)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_agent_gets_its_report_and_its_line_in_the_index() {
    let dir = tempdir("index");
    let good = mock(&[]).await;
    let bad = mock(&["FAULT-CARD-NO-NAME"]).await;
    let text = format!(
        "targets:\n\
         - {{name: good, url: '{}', labels: {{team: blue}}}}\n\
         - {{name: bad, url: '{}'}}\n\
         - {{name: gone, url: 'http://127.0.0.1:1'}}\n\
         - {{name: secret, url: '{}', headers: {{Authorization: A2A_REGISTRY_TEST_UNSET_TOKEN}}}}\n",
        good.url(),
        bad.url(),
        good.url()
    );
    let opts = options(&dir, &write(&dir.join("targets.yaml"), &text));
    let index = registry::run(&opts).await.unwrap();
    let want: BTreeMap<String, AgentStatus> = [
        ("bad", AgentStatus::NonConformant),
        ("gone", AgentStatus::Inconclusive),
        ("good", AgentStatus::Conformant),
        ("secret", AgentStatus::Error),
    ]
    .into_iter()
    .map(|(n, s)| (n.to_owned(), s))
    .collect();
    assert_eq!(status_of(&index), want);
    let out = &opts.shared.out;
    for name in ["good", "bad", "gone"] {
        assert!(out.join(name).join("report.json").is_file(), "{name} has its report");
        assert!(out.join(name).join("junit.xml").is_file(), "{name} has its junit");
    }
    let bad_line = index.agents.iter().find(|a| a.name == "bad").unwrap();
    assert_eq!(bad_line.failing, ["KIT-CARD-001"], "one fault, one finding");
    assert!(!bad_line.causes.is_empty());
    let secret = index.agents.iter().find(|a| a.name == "secret").unwrap();
    assert!(secret.error.as_deref().unwrap().contains("A2A_REGISTRY_TEST_UNSET_TOKEN"), "{secret:?}");
    assert_eq!(index.agents.iter().find(|a| a.name == "good").unwrap().labels.get("team").unwrap(), "blue");
    // The index files, the JSON one valid against its schema.
    let written: Value = serde_json::from_str(&std::fs::read_to_string(out.join("index.json")).unwrap()).unwrap();
    let validator = schema::compile_file("reports/index.schema.json");
    assert_eq!(schema::violations_of(&validator, &written), Vec::<String>::new());
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testsuite ").count(), 4, "{junit}");
    assert!(std::fs::read_to_string(out.join("index.html")).unwrap().contains("bad"));
    // Any non-conformant agent fails the registry; majority of four does not; none never does.
    assert_eq!(registry::exit_code(&index, FailOn::Any), 1);
    assert_eq!(registry::exit_code(&index, FailOn::Majority), 0);
    assert_eq!(registry::exit_code(&index, FailOn::None), 0);
    good.shutdown().await;
    bad.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn shards_hold_every_target_once_and_merge_to_the_unsharded_index() {
    let dir = tempdir("shards");
    let good = mock(&[]).await;
    let bad = mock(&["FAULT-CARD-NO-CAPABILITIES"]).await;
    let mut text = String::from("targets:\n");
    for i in 0..10 {
        let url = if i % 3 == 0 { bad.url() } else { good.url() };
        text.push_str(&format!("  - {{name: agent-{i:02}, url: '{url}'}}\n"));
    }
    let targets = write(&dir.join("targets.yaml"), &text);
    let whole = registry::run(&options(&dir.join("whole"), &targets)).await.unwrap();
    let mut shard_dirs = Vec::new();
    let mut seen = 0;
    for k in 1..=4 {
        let mut o = options(&dir.join(format!("shard-{k}")), &targets);
        o.shard = Some(ShardSpec { index: k, count: 4 });
        let part = registry::run(&o).await.unwrap();
        seen += part.agents.len();
        shard_dirs.push(o.shared.out.clone());
    }
    assert_eq!(seen, 10, "every target in exactly one shard");
    let merged = index::merge(&shard_dirs, &dir.join("merged")).unwrap();
    assert_eq!(merged.comparable(), whole.comparable());
    for i in 0..10 {
        assert!(dir.join("merged").join(format!("agent-{i:02}")).join("report.json").is_file());
    }
    good.shutdown().await;
    bad.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_keeps_complete_reports_and_checks_the_rest() {
    let dir = tempdir("resume");
    let good = mock(&[]).await;
    let text = format!("targets:\n  - {{name: a, url: '{0}'}}\n  - {{name: b, url: '{0}'}}\n", good.url());
    let targets = write(&dir.join("targets.yaml"), &text);
    let opts = options(&dir, &targets);
    registry::run(&opts).await.unwrap();
    let a_report = opts.shared.out.join("a").join("report.json");
    let before = std::fs::read_to_string(&a_report).unwrap();
    // b's run was cut short: its folder holds no report.
    std::fs::remove_dir_all(opts.shared.out.join("b")).unwrap();
    let resumed = registry::run(&RegistryOptions { resume: true, ..opts.clone() }).await.unwrap();
    assert_eq!(std::fs::read_to_string(&a_report).unwrap(), before, "a was not checked again");
    assert!(opts.shared.out.join("b").join("report.json").is_file(), "b was");
    assert!(resumed.agents.iter().all(|a| a.status == AgentStatus::Conformant), "{:?}", status_of(&resumed));
    good.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// One agent that takes no less than its whole deadline (it accepts connections and never
/// answers) holds one slot for that long and no one else: the others finish in their own time.
#[tokio::test(flavor = "multi_thread")]
async fn a_silent_agent_delays_no_other_beyond_its_own_bounds() {
    let dir = tempdir("silent");
    let good = mock(&[]).await;
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let text = format!(
        "targets:\n  - {{name: silent, url: 'http://{silent_addr}'}}\n  - {{name: a, url: '{0}'}}\n  - {{name: b, url: '{0}'}}\n",
        good.url()
    );
    let mut opts = options(&dir, &write(&dir.join("targets.yaml"), &text));
    opts.parallel = 2;
    opts.shared.base.timeout = Duration::from_secs(4);
    opts.shared.base.deadline = Duration::from_secs(8);
    let started = Instant::now();
    let index = registry::run(&opts).await.unwrap();
    let took = started.elapsed();
    let line = |n: &str| index.agents.iter().find(|a| a.name == n).unwrap().clone();
    assert_eq!(line("silent").status, AgentStatus::Inconclusive);
    for n in ["a", "b"] {
        assert_eq!(line(n).status, AgentStatus::Conformant);
        assert!(line(n).duration_ms < 4_000, "{n} took {} ms", line(n).duration_ms);
    }
    assert!(took < Duration::from_secs(20), "the registry took {took:?}");
    hold.abort();
    good.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// An agent whose answers differ between identical runs (here: a front that sends each run to a
/// faithful and a faulty mock in turn) gets KIT-REPEAT-001, and the index names its flaky check
/// with the outcomes seen. A run is told apart by its card fetches: a first run through the front
/// counts how many one run makes.
#[tokio::test(flavor = "multi_thread")]
async fn an_agent_whose_verdicts_flip_between_identical_runs_is_reported_flaky() {
    let dir = tempdir("repeat");
    let good = mock(&[]).await;
    let bad = mock(&["FAULT-CARD-NO-NAME"]).await;
    let front = Alternating::start([good.url().to_owned(), bad.url().to_owned()]).await;
    let steady = mock(&[]).await;
    let text = format!(
        "targets:\n  - {{name: flaky, url: 'http://{}'}}\n  - {{name: steady, url: '{}'}}\n",
        front.addr,
        steady.url()
    );
    let targets = write(&dir.join("targets.yaml"), &text);
    let mut opts = options(&dir, &targets);
    opts.shared.base.only = vec!["KIT-CARD-001".into()];
    // One run with both sides faithful, to learn how many card fetches a run makes.
    front.period.store(usize::MAX, Ordering::SeqCst);
    registry::run(&options_for_calibration(&opts)).await.unwrap();
    let per_run = front.fetches.swap(0, Ordering::SeqCst);
    assert!(per_run >= 1);
    front.period.store(per_run, Ordering::SeqCst);
    opts.shared.repeat = 3;
    let index = registry::run(&opts).await.unwrap();
    let flaky = index.agents.iter().find(|a| a.name == "flaky").unwrap();
    assert_eq!(flaky.runs, 3);
    let ids: Vec<&str> = flaky.flaky.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["KIT-CARD-001"], "{:?}", flaky.flaky);
    let counts = &flaky.flaky[0].outcomes;
    assert_eq!((counts.get("pass"), counts.get("fail")), (Some(&2), Some(&1)), "{counts:?}");
    let steady_line = index.agents.iter().find(|a| a.name == "steady").unwrap();
    assert!(steady_line.flaky.is_empty(), "{:?}", steady_line.flaky);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(opts.shared.out.join("flaky").join("report.json")).unwrap())
            .unwrap();
    let finding = report["results"].as_array().unwrap().iter().find(|r| r["id"] == "KIT-REPEAT-001").unwrap();
    assert_eq!(finding["outcome"], "info");
    assert!(finding["failure"]["message"].as_str().unwrap().contains("KIT-CARD-001"), "{finding}");
    assert!(opts.shared.out.join("flaky").join("repeat.json").is_file());
    good.shutdown().await;
    bad.shutdown().await;
    steady.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same registry, once, into a folder of its own.
fn options_for_calibration(opts: &RegistryOptions) -> RegistryOptions {
    let mut o = opts.clone();
    o.shared.out = opts.shared.out.with_extension("calibration");
    o.shared.repeat = 1;
    o
}

/// A reverse proxy that sends each run to the next of its backends: runs are counted by card
/// fetches, `period` of them to a run, and every request goes to the backend of the run of the
/// last card fetch.
struct Alternating {
    addr: SocketAddr,
    period: Arc<AtomicUsize>,
    fetches: Arc<AtomicUsize>,
}

impl Alternating {
    async fn start(backends: [String; 2]) -> Alternating {
        use axum::body::Body;
        use axum::extract::{Request, State};
        use axum::response::Response;
        #[derive(Clone)]
        struct S {
            backends: Arc<[String; 2]>,
            period: Arc<AtomicUsize>,
            fetches: Arc<AtomicUsize>,
            http: reqwest::Client,
        }
        async fn forward(State(s): State<S>, req: Request) -> Response {
            let path = req.uri().path_and_query().map(|p| p.as_str().to_owned()).unwrap_or_default();
            let fetch = if req.method() == axum::http::Method::GET && path.ends_with("/.well-known/agent-card.json") {
                s.fetches.fetch_add(1, Ordering::SeqCst)
            } else {
                s.fetches.load(Ordering::SeqCst).saturating_sub(1)
            };
            let run = fetch / s.period.load(Ordering::SeqCst).max(1);
            let base = &s.backends[run % 2];
            let (parts, body) = req.into_parts();
            let bytes = axum::body::to_bytes(body, 16 << 20).await.unwrap_or_default();
            let mut out = s.http.request(parts.method.clone(), format!("{base}{path}")).body(bytes);
            for (k, v) in &parts.headers {
                if k != axum::http::header::HOST {
                    out = out.header(k, v);
                }
            }
            match out.send().await {
                Ok(r) => {
                    let mut b = Response::builder().status(r.status());
                    for (k, v) in r.headers() {
                        b = b.header(k, v);
                    }
                    b.body(Body::from_stream(r.bytes_stream())).unwrap()
                }
                Err(_) => Response::builder().status(502).body(Body::empty()).unwrap(),
            }
        }
        let (period, fetches) = (Arc::new(AtomicUsize::new(1)), Arc::new(AtomicUsize::new(0)));
        let state = S {
            backends: Arc::new(backends),
            period: period.clone(),
            fetches: fetches.clone(),
            http: reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap(),
        };
        let app = axum::Router::new().fallback(forward).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Alternating { addr, period, fetches }
    }
}

/// `check --repeat N` on one agent (here the embedded mock): the usual report, with
/// KIT-REPEAT-001 saying every check ended the same way in all N runs.
#[test]
fn repeat_on_one_agent_reports_that_the_runs_agreed() {
    let dir = tempdir("repeat-one");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-conform"))
        .args([
            "check",
            "--repeat",
            "2",
            "--only",
            "CORE-SEND-001",
            "--only",
            "KIT-CARD-001",
            "--format",
            "json",
            "-q",
            "--out",
        ])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out").join("report.json")).unwrap()).unwrap();
    let r = report["results"].as_array().unwrap().iter().find(|r| r["id"] == "KIT-REPEAT-001").unwrap();
    assert_eq!(r["outcome"], "pass", "{r}");
    assert!(r["measurement"].as_str().unwrap().contains("all 2 runs"), "{r}");
    let repeat: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out").join("repeat.json")).unwrap()).unwrap();
    assert_eq!(repeat["runs"], 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The targets file the README shows is one the kit reads.
#[test]
fn the_readmes_targets_file_loads() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = &readme[readme.find("## Vetting a registry").unwrap()..];
    let start = section.find("```yaml\n").unwrap() + "```yaml\n".len();
    let text = &section[start..start + section[start..].find("```").unwrap()];
    let targets = a2a_conform::commands::registry::targets::parse(text, Path::new("/registry")).unwrap();
    assert_eq!(targets.len(), 2);
    assert_eq!(targets[1].headers.get("Authorization").map(String::as_str), Some("TRAVEL_TOKEN"));
}

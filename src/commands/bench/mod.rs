//! `a2a-conform bench`: how fast the kit checks and how fast the mock serves, each figure also as
//! a ratio to two baselines measured in the same run (a bare axum handler returning a fixed JSON
//! body, and the mock's card endpoint), so that figures from different machines compare. Prints a
//! table and writes `bench.json`.
//!
//! Everything runs on 127.0.0.1 with OS-chosen ports; the load generator is in-process and every
//! measurement is bounded in requests and in time.

pub mod fleet;
pub mod load;
pub mod procs;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use axum::serve::ListenerExt as _;
use serde::Serialize;
use serde_json::json;

use self::load::{Read, Sample, Shape, Template, quantile};
use self::procs::Rss;
use super::check::{self, CheckOptions};
use crate::report::Outcome;
use crate::server::card::WELL_KNOWN_PATH;
use crate::server::{MockConfig, MockServer};
use crate::suite::behaviors::Behaviors;

/// The connection counts every load figure is measured at.
pub const CONNS: [usize; 3] = [1, 16, 64];

/// Events in the bench's long stream: a task snapshot, WORKING, this many artifact chunks, then
/// COMPLETED.
const STREAM_CHUNKS: usize = 256;

/// How long and how much: the defaults, or a quick pass that only shows the command works.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Where `bench.json` goes.
    pub out: PathBuf,
    /// Short, small measurements: every figure, none of them trustworthy.
    pub quick: bool,
    /// Measure `check --targets` against `mock --fleet` instead (see [`fleet`]).
    pub fleet: bool,
}

/// The bounds of one run.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    point_time: Duration,
    warmup: Duration,
    max_requests: u64,
    max_streams: u64,
    suite_runs: usize,
    startups: usize,
    first_events: u64,
    /// Trials of each load point; the fastest is kept.
    trials: usize,
}

impl Bounds {
    fn of(opts: &BenchOptions) -> Self {
        if opts.quick {
            Bounds {
                point_time: Duration::from_millis(150),
                warmup: Duration::from_millis(20),
                max_requests: 2_000,
                max_streams: 100,
                suite_runs: 1,
                startups: 1,
                first_events: 20,
                trials: 1,
            }
        } else {
            Bounds {
                point_time: Duration::from_millis(400),
                warmup: Duration::from_millis(150),
                max_requests: 200_000,
                max_streams: 1_000,
                suite_runs: 3,
                startups: 5,
                first_events: 300,
                trials: 3,
            }
        }
    }

    fn shape(&self, conns: usize, max_requests: u64) -> Shape {
        Shape { conns, max_requests, max_time: self.point_time, warmup: self.warmup, warmup_requests: u64::MAX }
    }

    /// A shape that sends at most `total` requests, warm-up included.
    fn shape_within(&self, conns: usize, total: u64) -> Shape {
        let warmup_requests = (total / 5).min(self.max_requests);
        Shape { warmup_requests, ..self.shape(conns, (total - warmup_requests).min(self.max_requests)) }
    }
}

/// One load measurement: a workload at a connection count.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// `bare`, `card`, `send`, `get` or `stream`.
    pub workload: String,
    /// `empty` or `full` for the workloads on tasks; absent for the baselines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    pub conns: usize,
    /// Requests per second, or events per second for the stream.
    pub rate: f64,
    pub rate_unit: String,
    /// Latency of one request (a whole stream for `stream`), in µs.
    pub p50_us: Option<u32>,
    pub p99_us: Option<u32>,
    /// Answered requests (streams) and failed ones.
    pub ok: u64,
    pub errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// The same figures over the bare handler's and the card endpoint's at this connection count.
    pub rate_vs_bare: Option<f64>,
    pub rate_vs_card: Option<f64>,
    pub p50_vs_bare: Option<f64>,
    pub p50_vs_card: Option<f64>,
    pub p99_vs_bare: Option<f64>,
    pub p99_vs_card: Option<f64>,
}

impl Point {
    fn new(workload: &str, store: Option<&str>, conns: usize, s: &Sample, events: bool) -> Self {
        let (rate, unit) = if events { (s.per_second(s.events), "events/s") } else { (s.per_second(s.ok), "req/s") };
        Point {
            workload: workload.into(),
            store: store.map(str::to_owned),
            conns,
            rate,
            rate_unit: unit.into(),
            p50_us: quantile(&s.latency_us, 0.5),
            p99_us: quantile(&s.latency_us, 0.99),
            ok: s.ok,
            errors: s.errors,
            first_error: s.first_error.clone(),
            rate_vs_bare: None,
            rate_vs_card: None,
            p50_vs_bare: None,
            p50_vs_card: None,
            p99_vs_bare: None,
            p99_vs_card: None,
        }
    }

    fn label(&self) -> String {
        let what = match self.workload.as_str() {
            "bare" => "bare axum handler".to_owned(),
            "card" => "mock: agent card".to_owned(),
            "send" => "SendMessage".to_owned(),
            "get" => "GetTask".to_owned(),
            "stream" => format!("SSE stream, {} events", STREAM_CHUNKS + 3),
            other => other.to_owned(),
        };
        match &self.store {
            Some(s) => format!("{what}, store {s}"),
            None => what,
        }
    }
}

/// A figure that is not a load point.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub id: String,
    pub label: String,
    /// `None` when it could not be measured (see `note`).
    pub value: Option<f64>,
    pub unit: String,
    pub vs_bare: Option<f64>,
    pub vs_card: Option<f64>,
    /// What the ratios compare with.
    pub ratio_basis: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A target of issue 11 and whether this run met it.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub what: String,
    pub bound: String,
    pub observed: String,
    /// `None` when the figure it needs was not measured.
    pub met: Option<bool>,
}

/// Everything one run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Bench {
    pub tool_version: String,
    pub quick: bool,
    pub cores: usize,
    pub release_build: bool,
    pub points: Vec<Point>,
    pub figures: Vec<Figure>,
    pub targets: Vec<Target>,
    pub duration_ms: u64,
}

impl Bench {
    fn point(&self, workload: &str, store: Option<&str>, conns: usize) -> Option<&Point> {
        self.points.iter().find(|p| p.workload == workload && p.store.as_deref() == store && p.conns == conns)
    }

    fn figure(&self, id: &str) -> Option<&Figure> {
        self.figures.iter().find(|f| f.id == id)
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => Some(a / b),
        _ => None,
    }
}

fn us(v: Option<u32>) -> Option<f64> {
    v.map(f64::from)
}

/// Fills every point's ratios from the baselines at its connection count.
fn add_ratios(points: &mut [Point]) {
    let base: Vec<Point> = points.iter().filter(|p| p.store.is_none()).cloned().collect();
    let find = |w: &str, c: usize| base.iter().find(|p| p.workload == w && p.conns == c);
    for p in points.iter_mut() {
        let (bare, card) = (find("bare", p.conns), find("card", p.conns));
        p.rate_vs_bare = ratio(Some(p.rate), bare.map(|b| b.rate));
        p.rate_vs_card = ratio(Some(p.rate), card.map(|b| b.rate));
        p.p50_vs_bare = ratio(us(p.p50_us), bare.and_then(|b| us(b.p50_us)));
        p.p50_vs_card = ratio(us(p.p50_us), card.and_then(|b| us(b.p50_us)));
        p.p99_vs_bare = ratio(us(p.p99_us), bare.and_then(|b| us(b.p99_us)));
        p.p99_vs_card = ratio(us(p.p99_us), card.and_then(|b| us(b.p99_us)));
    }
}

/// The baselines figures are compared with, by kind of figure.
#[derive(Debug, Clone, Copy, Default)]
struct Baselines {
    /// One round trip at one connection (p50), in µs: the unit of the duration figures.
    bare_round_trip_us: Option<f64>,
    card_round_trip_us: Option<f64>,
    /// Requests per second at 16 connections: the unit of the suite's checks per second.
    bare_rate_16: Option<f64>,
    card_rate_16: Option<f64>,
    /// Resident memory of a process serving only the bare handler (this one, before anything
    /// else ran), and of an idle `mock` process serving its card.
    bare_rss: Option<f64>,
    card_rss: Option<f64>,
}

impl Baselines {
    fn duration(&self, id: &str, label: &str, seconds: Option<f64>, unit: &str, note: Option<String>) -> Figure {
        let scale = match unit {
            "ms" => 1e3,
            "µs" => 1.0,
            _ => 1e6,
        };
        let as_us = seconds.map(|v| v * scale);
        Figure {
            id: id.into(),
            label: label.into(),
            value: seconds,
            unit: unit.into(),
            vs_bare: ratio(as_us, self.bare_round_trip_us),
            vs_card: ratio(as_us, self.card_round_trip_us),
            ratio_basis: "one round trip (p50, 1 connection)".into(),
            note,
        }
    }

    fn memory(&self, id: &str, label: &str, bytes: Option<f64>, note: Option<String>) -> Figure {
        Figure {
            id: id.into(),
            label: label.into(),
            value: bytes.map(|b| b / MIB),
            unit: "MiB".into(),
            vs_bare: ratio(bytes, self.bare_rss),
            vs_card: ratio(bytes, self.card_rss),
            ratio_basis: "resident memory of a process serving only the baseline".into(),
            note,
        }
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// The faster of two trials, keeping any failure: on a shared machine, noise only ever slows a
/// run down, so the fastest of a few short trials is the figure it disturbed least. A trial with
/// errors is reported rather than hidden behind a clean one.
fn faster(best: Option<Sample>, trial: Sample, events: bool) -> Option<Sample> {
    let rate = |s: &Sample| if events { s.per_second(s.events) } else { s.per_second(s.ok) };
    match best {
        Some(b) if b.errors > 0 => Some(b),
        Some(b) if trial.errors == 0 && rate(&b) >= rate(&trial) => Some(b),
        _ => Some(trial),
    }
}

/// A server answering `GET /` with a fixed JSON body, as cheap as axum gets: the floor every
/// other figure is measured against.
async fn bare_server() -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(|| async {
            ([(axum::http::header::CONTENT_TYPE, "application/json")], r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        }),
    );
    // The same socket settings as the mock's, so that the comparison is of the handlers.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let join = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((addr, join))
}

/// A scenario directory holding the long stream, removed when dropped.
struct ScenarioDir(PathBuf);

impl ScenarioDir {
    fn create() -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("a2a-conform-bench-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut steps = vec![json!({"status": {"state": "TASK_STATE_WORKING"}})];
        steps.extend((0..STREAM_CHUNKS).map(|i| {
            json!({"artifact": {"artifactId": "stream", "parts": [{"text": format!("chunk {i} ")}], "append": i > 0}})
        }));
        steps.push(json!({"status": {"state": "TASK_STATE_COMPLETED"}}));
        let scenario = json!({
            "name": "bench-long-stream",
            "description": "The bench's long stream: many small artifact chunks, as fast as the mock sends them.",
            "prefixes": ["bench-long-stream"],
            "steps": steps,
        });
        std::fs::write(dir.join("bench-long-stream.json"), scenario.to_string())?;
        Ok(ScenarioDir(dir))
    }
}

impl Drop for ScenarioDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn send_body(text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "bench", "role": "ROLE_USER", "parts": [{"text": text}]}}})
    .to_string()
}

fn send() -> Template {
    Template::rpc("/rpc", send_body("hello"), Read::Whole)
}

fn stream(text: &str) -> Template {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": {
        "messageId": "bench", "role": "ROLE_USER", "parts": [{"text": text}]}}});
    Template::rpc("/rpc", body.to_string(), Read::Events)
}

fn get_task(id: &str) -> Template {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": id}});
    Template::rpc("/rpc", body.to_string(), Read::Whole)
}

/// A task the mock stored, for GetTask.
async fn stored_task(addr: SocketAddr) -> anyhow::Result<String> {
    let body = load::once(addr, &send()).await.map_err(anyhow::Error::msg)?.1;
    let v: serde_json::Value = serde_json::from_slice(&body)?;
    v.pointer("/result/task/id")
        .and_then(|t| t.as_str())
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("SendMessage returned no task: {v}"))
}

fn note(msg: impl AsRef<str>) {
    eprintln!("bench: {}", msg.as_ref());
}

/// `a2a-conform bench`: runs every measurement, prints the table, writes `bench.json` into
/// `opts.out`. Exit 0 when every figure was measured, 1 when some could not be.
pub async fn run_command(opts: &BenchOptions) -> anyhow::Result<i32> {
    if opts.fleet {
        let exe = std::env::current_exe().context("locating the a2a-conform binary")?;
        let bench = fleet::run(&exe, opts.quick).await;
        print!("{}", fleet::table(&bench));
        std::fs::create_dir_all(&opts.out).with_context(|| format!("creating {}", opts.out.display()))?;
        let path = opts.out.join("fleet.json");
        std::fs::write(&path, serde_json::to_string_pretty(&bench)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        let complete = bench.points.iter().all(|p| p.agents_per_hour.is_some() && p.verdicts_as_built == Some(true));
        return Ok(if complete { 0 } else { 1 });
    }
    let bench = run(opts).await?;
    print!("{}", table(&bench));
    std::fs::create_dir_all(&opts.out).with_context(|| format!("creating {}", opts.out.display()))?;
    let path = opts.out.join("bench.json");
    std::fs::write(&path, serde_json::to_string_pretty(&bench)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    let complete =
        bench.figures.iter().all(|f| f.value.is_some()) && bench.points.iter().all(|p| p.errors == 0 && p.ok > 0);
    Ok(if complete { 0 } else { 1 })
}

/// Runs every measurement.
pub async fn run(opts: &BenchOptions) -> anyhow::Result<Bench> {
    let started = Instant::now();
    let b = Bounds::of(opts);
    let (bare_addr, bare_join) = bare_server().await?;
    // Before anything else grows the heap: the resident size of a process serving one handler.
    let bare_rss = procs::rss(None, Rss::Current).map(|v| v as f64);
    let scenarios = ScenarioDir::create()?;
    let config = || MockConfig { scenario_dir: Some(scenarios.0.clone()), ..MockConfig::default() };

    let mut points = Vec::new();
    let trials = b.trials;
    note(format!("baselines: the bare handler and the mock's card endpoint (best of {trials} trials each)"));
    let card_mock = MockServer::start(config()).await?;
    for conns in CONNS {
        let (mut bare, mut card) = (None, None);
        // Interleaved, so that a noisy moment of the machine does not land on one side only.
        for _ in 0..trials {
            bare = faster(bare, load::run(bare_addr, &Template::get("/"), b.shape(conns, b.max_requests)).await, false);
            let card_load = Template::get(WELL_KNOWN_PATH);
            card = faster(card, load::run(card_mock.addr(), &card_load, b.shape(conns, b.max_requests)).await, false);
        }
        points.push(Point::new("bare", None, conns, &bare.unwrap_or_default(), false));
        points.push(Point::new("card", None, conns, &card.unwrap_or_default(), false));
    }
    card_mock.shutdown().await;
    bare_join.abort();

    note("the mock with its store empty: SendMessage, GetTask, a long SSE stream");
    let max_tasks = MockConfig::default().limits.max_tasks as u64;
    for conns in CONNS {
        let (mut send_best, mut get_best, mut stream_best) = (None, None, None);
        for _ in 0..trials {
            // A fresh mock for each trial, held under half its task limit so that nothing is evicted.
            let m = MockServer::start(config()).await?;
            let s = load::run(m.addr(), &send(), b.shape_within(conns, max_tasks / 2)).await;
            send_best = faster(send_best, s, false);
            m.shutdown().await;
            let m = MockServer::start(config()).await?;
            let id = stored_task(m.addr()).await?;
            get_best =
                faster(get_best, load::run(m.addr(), &get_task(&id), b.shape(conns, b.max_requests)).await, false);
            m.shutdown().await;
            let m = MockServer::start(config()).await?;
            let s = load::run(m.addr(), &stream("bench-long-stream"), b.shape_within(conns, b.max_streams)).await;
            stream_best = faster(stream_best, s, true);
            m.shutdown().await;
        }
        points.push(Point::new("send", Some("empty"), conns, &send_best.unwrap_or_default(), false));
        points.push(Point::new("get", Some("empty"), conns, &get_best.unwrap_or_default(), false));
        points.push(Point::new("stream", Some("empty"), conns, &stream_best.unwrap_or_default(), true));
    }

    note(format!("the mock with its store full ({max_tasks} tasks)"));
    let full = MockServer::start(config()).await?;
    let fill = Shape {
        conns: 64,
        max_requests: max_tasks,
        max_time: Duration::from_secs(60),
        warmup: Duration::ZERO,
        warmup_requests: 0,
    };
    let filled = load::run(full.addr(), &send(), fill).await;
    if full.app().store.len() as u64 != max_tasks {
        note(format!("the store holds {} tasks, not {max_tasks}: {:?}", full.app().store.len(), filled.first_error));
    }
    for conns in CONNS {
        let (mut send_best, mut get_best, mut stream_best) = (None, None, None);
        for _ in 0..trials {
            let id = stored_task(full.addr()).await?;
            let s = load::run(full.addr(), &get_task(&id), b.shape(conns, b.max_requests)).await;
            get_best = faster(get_best, s, false);
            send_best = faster(send_best, load::run(full.addr(), &send(), b.shape(conns, b.max_requests)).await, false);
            let s = load::run(full.addr(), &stream("bench-long-stream"), b.shape(conns, b.max_streams)).await;
            stream_best = faster(stream_best, s, true);
        }
        points.push(Point::new("get", Some("full"), conns, &get_best.unwrap_or_default(), false));
        points.push(Point::new("send", Some("full"), conns, &send_best.unwrap_or_default(), false));
        points.push(Point::new("stream", Some("full"), conns, &stream_best.unwrap_or_default(), true));
    }
    full.shutdown().await;
    add_ratios(&mut points);

    let at = |w: &str, c: usize| points.iter().find(|p| p.workload == w && p.store.is_none() && p.conns == c);
    let baselines = Baselines {
        bare_round_trip_us: at("bare", 1).and_then(|p| us(p.p50_us)),
        card_round_trip_us: at("card", 1).and_then(|p| us(p.p50_us)),
        bare_rate_16: at("bare", 16).map(|p| p.rate),
        card_rate_16: at("card", 16).map(|p| p.rate),
        bare_rss,
        card_rss: None,
    };
    let mut figures = Vec::new();

    note("time to the first SSE event");
    let m = MockServer::start(config()).await?;
    let shape = Shape { max_requests: b.first_events, ..b.shape(1, 0) };
    let s = load::run(m.addr(), &stream("hello"), shape).await;
    m.shutdown().await;
    let first_note = s.first_error.clone().map(|e| format!("{} of {} streams failed: {e}", s.errors, s.ok + s.errors));
    for (q, name) in [(0.5, "p50"), (0.99, "p99")] {
        figures.push(baselines.duration(
            &format!("first_event.{name}"),
            &format!("first SSE event after the request, {name}"),
            quantile(&s.first_event_us, q).map(|v| f64::from(v) / 1e3),
            "ms",
            first_note.clone(),
        ));
    }

    note(format!("the full suite against the in-process mock ({} run(s))", b.suite_runs));
    let (wall, checks, problem) = suite(b.suite_runs).await;
    figures.push(baselines.duration("suite.wall", "full suite vs in-process mock, wall", wall, "s", problem.clone()));
    let rate = wall.zip(checks).map(|(w, c)| c as f64 / w);
    figures.push(Figure {
        id: "suite.checks_per_s".into(),
        label: format!("full suite, checks run per second ({} checks)", checks.unwrap_or(0)),
        value: rate,
        unit: "checks/s".into(),
        vs_bare: ratio(rate, baselines.bare_rate_16),
        vs_card: ratio(rate, baselines.card_rate_16),
        ratio_basis: "requests per second at 16 connections".into(),
        note: problem,
    });

    let exe = std::env::current_exe().context("locating the a2a-conform binary")?;
    note("child processes: mock start-up, the mock's memory per 10,000 tasks, the peak of check");
    let card_rss = idle_mock_rss(&exe).await;
    let baselines = Baselines { card_rss: card_rss.as_ref().ok().copied(), ..baselines };
    let (startup, startup_note) = match mock_startup(&exe, b.startups).await {
        Ok(d) => (Some(d), None),
        Err(e) => (None, Some(e)),
    };
    figures.push(baselines.duration(
        "mock.startup",
        &format!("`mock` start-up to its first answer (median of {})", b.startups),
        startup.map(|d| d.as_secs_f64() * 1e3),
        "ms",
        startup_note,
    ));
    let (per_10k, mem_note) = match memory_per_10k(&exe, max_tasks).await {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    };
    figures.push(baselines.memory("mock.memory_per_10k", "mock memory per 10,000 stored tasks", per_10k, mem_note));
    let (peak, peak_note) = match check_peak(&exe).await {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    };
    figures.push(baselines.memory("check.peak_rss", "peak RSS of `check` (embedded mock)", peak, peak_note));
    if let Err(e) = card_rss {
        for f in figures.iter_mut().filter(|f| f.unit == "MiB") {
            f.note.get_or_insert_with(|| format!("no card baseline: {e}"));
        }
    }
    drop(scenarios);
    let figures_done = started.elapsed();
    figures.push(baselines.duration("bench.wall", "this bench, wall", Some(figures_done.as_secs_f64()), "s", None));

    let mut bench = Bench {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        quick: opts.quick,
        cores: std::thread::available_parallelism().map_or(1, usize::from),
        release_build: !cfg!(debug_assertions),
        points,
        figures,
        targets: Vec::new(),
        duration_ms: started.elapsed().as_millis() as u64,
    };
    bench.targets = targets(&bench);
    Ok(bench)
}

/// Runs the built-in suites against the embedded mock `runs` times, as `check` does without a URL;
/// returns the median wall time in seconds, the number of checks that ran, and what went wrong.
async fn suite(runs: usize) -> (Option<f64>, Option<usize>, Option<String>) {
    let mut walls = Vec::new();
    let mut checks = None;
    let mut problem = None;
    for _ in 0..runs.max(1) {
        let (server, access) = match check::start_embedded_mock().await {
            Ok(x) => x,
            Err(e) => return (None, None, Some(format!("starting the embedded mock: {e}"))),
        };
        let mut opts =
            CheckOptions { behaviors: Behaviors::Acts, jobs: check::EMBEDDED_JOBS, ..CheckOptions::new(server.url()) };
        access.apply(&mut opts);
        let t = Instant::now();
        let report = check::run(&opts, &mut ()).await;
        walls.push(t.elapsed().as_secs_f64());
        server.shutdown().await;
        match report {
            Ok(r) => {
                let ran = r.results.iter().filter(|x| x.result.outcome != Outcome::Skip).count();
                checks = Some(ran);
                if r.verdict.exit_code != 0 {
                    problem = Some(format!("the clean mock was not conformant: {:?}", r.verdict.reasons));
                }
            }
            Err(e) => return (None, None, Some(format!("the run failed: {e}"))),
        }
    }
    walls.sort_by(f64::total_cmp);
    (walls.get(walls.len() / 2).copied(), checks, problem)
}

/// Resident memory of a `mock` that has served a few card requests and stored nothing.
async fn idle_mock_rss(exe: &Path) -> Result<f64, String> {
    let (child, url) = procs::start_mock(exe, &[], Duration::from_secs(10)).await?;
    let addr = addr_of(&url)?;
    warm_up(addr).await;
    procs::rss(Some(child.id()), Rss::Current).map(|v| v as f64).ok_or_else(|| "no /proc/PID/status".into())
}

/// A few card requests, so that connections, buffers and the first allocations exist before a
/// memory measurement starts.
async fn warm_up(addr: SocketAddr) {
    let warm = Shape {
        conns: 16,
        max_requests: 64,
        max_time: Duration::from_secs(10),
        warmup: Duration::ZERO,
        warmup_requests: 0,
    };
    load::run(addr, &Template::get(WELL_KNOWN_PATH), warm).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
}

fn addr_of(url: &str) -> Result<SocketAddr, String> {
    url.strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("not an http://IP:PORT URL: {url}"))
}

/// Median time from spawning `mock --port 0` to its first answered card request.
async fn mock_startup(exe: &Path, runs: usize) -> Result<Duration, String> {
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let (child, url) = procs::start_mock(exe, &[], Duration::from_secs(10)).await?;
        load::once(addr_of(&url)?, &Template::get(WELL_KNOWN_PATH)).await?;
        times.push(t.elapsed());
        drop(child);
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// Growth of a fresh `mock`'s resident memory while it stores `tasks` small echo tasks (its whole
/// default store), scaled to 10,000 tasks, in bytes.
async fn memory_per_10k(exe: &Path, tasks: u64) -> Result<f64, String> {
    let (child, url) = procs::start_mock(exe, &[], Duration::from_secs(10)).await?;
    let addr = addr_of(&url)?;
    warm_up(addr).await;
    let before = procs::rss(Some(child.id()), Rss::Current).ok_or("no /proc/PID/status")?;
    let fill = Shape {
        conns: 16,
        max_requests: tasks,
        max_time: Duration::from_secs(60),
        warmup: Duration::ZERO,
        warmup_requests: 0,
    };
    let s = load::run(addr, &send(), fill).await;
    if s.ok != tasks {
        return Err(format!("{} of {tasks} SendMessage answered: {:?}", s.ok, s.first_error));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let after = procs::rss(Some(child.id()), Rss::Current).ok_or("no /proc/PID/status")?;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 1}});
    let body = load::once(addr, &Template::rpc("/rpc", list.to_string(), Read::Whole)).await?.1;
    let stored = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.pointer("/result/totalSize").and_then(|n| n.as_u64()));
    if stored != Some(tasks) {
        return Err(format!("the mock stores {stored:?} tasks, not {tasks}"));
    }
    Ok(after.saturating_sub(before) as f64 * 10_000.0 / tasks as f64)
}

/// Peak resident memory of `check` against its embedded mock, as a user runs it.
async fn check_peak(exe: &Path) -> Result<f64, String> {
    let out = std::env::temp_dir().join(format!("a2a-conform-bench-check-{}", uuid::Uuid::new_v4().simple()));
    let out_str = out.display().to_string();
    let run = procs::run_check(exe, &["-q", "--format", "json", "--out", &out_str], Duration::from_secs(120)).await;
    let _ = std::fs::remove_dir_all(&out);
    let run = run?;
    if run.exit != Some(0) {
        return Err(format!("check exited with {:?}", run.exit));
    }
    run.peak_rss.map(|v| v as f64).ok_or_else(|| "no /proc/PID/status".into())
}

/// The targets of issue 11, judged on this run.
fn targets(b: &Bench) -> Vec<Target> {
    let mut out = Vec::new();
    let value = |id: &str| b.figure(id).and_then(|f| f.value);
    let mut below = |what: &str, bound: f64, strict: bool, unit: &str, v: Option<f64>| {
        out.push(Target {
            what: what.into(),
            bound: format!("{} {} {unit}", if strict { "<" } else { "≤" }, num(bound)),
            observed: v.map_or("not measured".into(), |v| format!("{} {unit}", num(v))),
            met: v.map(|v| if strict { v < bound } else { v <= bound }),
        });
    };
    below("full suite vs embedded mock, wall", 2.0, false, "s", value("suite.wall"));
    below("mock memory per 10,000 small tasks", 20.0, false, "MiB", value("mock.memory_per_10k"));
    below("first SSE event, p50", 1.0, true, "ms", value("first_event.p50"));
    below("this bench, wall", 120.0, true, "s", value("bench.wall"));
    let card16 = b.point("card", None, 16).map(|p| p.rate);
    for store in ["empty", "full"] {
        let send16 = b.point("send", Some(store), 16).map(|p| p.rate);
        let r = ratio(send16, card16);
        out.push(Target {
            what: format!("SendMessage at 16 connections, store {store}, over the card endpoint's rate"),
            bound: "≥ 0.50".into(),
            observed: r.map_or("not measured".into(), |r| format!("{r:.2}")),
            met: r.map(|r| r >= 0.5),
        });
    }
    let flat =
        ratio(b.point("send", Some("full"), 16).map(|p| p.rate), b.point("send", Some("empty"), 16).map(|p| p.rate));
    out.push(Target {
        what: "SendMessage at 16 connections, store full over store empty (flat as the store fills)".into(),
        bound: "≥ 0.80".into(),
        observed: flat.map_or("not measured".into(), |r| format!("{r:.2}")),
        met: flat.map(|r| r >= 0.8),
    });
    out
}

/// A number for people: thousands separated, three significant digits below 100.
fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.abs() >= 100.0 {
        let s = format!("{:.0}", v.abs());
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        return if v < 0.0 { format!("-{out}") } else { out };
    }
    if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else if v == 0.0 || v.abs() >= 0.1 {
        format!("{v:.2}")
    } else {
        // Three significant digits, however small: a ratio of 0.002 is not 0.
        let decimals = (2.0 - v.abs().log10().floor()) as usize;
        format!("{v:.decimals$}")
    }
}

fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), num)
}

/// The bench as a terminal table: load points, other figures, then the targets.
pub fn table(b: &Bench) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "a2a-conform bench{}: {} core(s), {} build, loopback; ratios are against the bare axum handler \
         (×bare) and the mock's card endpoint (×card) measured in this run\n\n",
        if b.quick { " --quick (figures not representative)" } else { "" },
        b.cores,
        if b.release_build { "release" } else { "debug" },
    ));
    s.push_str(&format!(
        "{:<36} {:>5} {:>16} {:>6} {:>6}  {:>8} {:>6} {:>6}  {:>8} {:>6} {:>6}\n",
        "load (same connection count)",
        "conns",
        "rate",
        "×bare",
        "×card",
        "p50 µs",
        "×bare",
        "×card",
        "p99 µs",
        "×bare",
        "×card"
    ));
    for p in &b.points {
        let mut label = p.label();
        if p.errors > 0 {
            label.push_str(&format!(" ({} errors)", p.errors));
        }
        s.push_str(&format!(
            "{:<36} {:>5} {:>16} {:>6} {:>6}  {:>8} {:>6} {:>6}  {:>8} {:>6} {:>6}\n",
            label,
            p.conns,
            format!("{} {}", num(p.rate), p.rate_unit),
            cell(p.rate_vs_bare),
            cell(p.rate_vs_card),
            cell(us(p.p50_us)),
            cell(p.p50_vs_bare),
            cell(p.p50_vs_card),
            cell(us(p.p99_us)),
            cell(p.p99_vs_bare),
            cell(p.p99_vs_card),
        ));
    }
    s.push_str(&format!("\n{:<50} {:>16} {:>10} {:>10}  ratio of\n", "figure", "value", "×bare", "×card"));
    for f in &b.figures {
        s.push_str(&format!(
            "{:<50} {:>16} {:>10} {:>10}  {}\n",
            f.label,
            f.value.map_or_else(|| "not measured".into(), |v| format!("{} {}", num(v), f.unit)),
            cell(f.vs_bare),
            cell(f.vs_card),
            f.ratio_basis,
        ));
        if let Some(n) = &f.note {
            s.push_str(&format!("    note: {n}\n"));
        }
    }
    s.push_str("\ntargets\n");
    for t in &b.targets {
        let mark = match t.met {
            Some(true) => "met",
            Some(false) => "NOT MET",
            None => "unknown",
        };
        s.push_str(&format!("  {:<8} {} {} (observed {})\n", mark, t.what, t.bound, t.observed));
    }
    s.push_str(&format!("\nbench took {:.1} s\n", b.duration_ms as f64 / 1000.0));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(workload: &str, store: Option<&str>, conns: usize, rate: f64, p50: u32) -> Point {
        let s = Sample { ok: 1, elapsed: Duration::from_secs(1), latency_us: vec![p50], ..Sample::default() };
        Point { rate, ..Point::new(workload, store, conns, &s, false) }
    }

    #[test]
    fn ratios_compare_with_the_baselines_at_the_same_connection_count() {
        let mut points = vec![
            point("bare", None, 1, 1000.0, 10),
            point("card", None, 1, 500.0, 20),
            point("bare", None, 16, 4000.0, 40),
            point("card", None, 16, 2000.0, 80),
            point("send", Some("full"), 16, 1000.0, 160),
        ];
        add_ratios(&mut points);
        let send = &points[4];
        assert_eq!(send.rate_vs_bare, Some(0.25));
        assert_eq!(send.rate_vs_card, Some(0.5));
        assert_eq!(send.p50_vs_bare, Some(4.0));
        assert_eq!(send.p50_vs_card, Some(2.0));
        assert_eq!(points[0].rate_vs_bare, Some(1.0));
        assert_eq!(points[0].rate_vs_card, Some(2.0));
    }

    #[test]
    fn a_missing_baseline_gives_no_ratio_rather_than_a_wrong_one() {
        assert_eq!(ratio(Some(1.0), None), None);
        assert_eq!(ratio(Some(1.0), Some(0.0)), None);
        assert_eq!(ratio(None, Some(2.0)), None);
        let b = Baselines { bare_round_trip_us: Some(50.0), ..Baselines::default() };
        let f = b.duration("x", "x", Some(2.0), "s", None);
        assert_eq!(f.vs_bare, Some(40_000.0), "2 s is 40,000 round trips of 50 µs");
        assert_eq!(f.vs_card, None);
        let f = b.duration("x", "x", Some(0.5), "ms", None);
        assert_eq!(f.vs_bare, Some(10.0));
    }

    #[test]
    fn the_fastest_clean_trial_is_kept_and_a_failing_one_is_not_hidden() {
        let trial = |ok: u64, errors: u64| Sample { ok, errors, elapsed: Duration::from_secs(1), ..Sample::default() };
        let best = faster(faster(None, trial(10, 0), false), trial(30, 0), false);
        assert_eq!(best.as_ref().map(|s| s.ok), Some(30));
        let best = faster(best, trial(20, 0), false);
        assert_eq!(best.as_ref().map(|s| s.ok), Some(30));
        let failed = faster(best, trial(5, 1), false);
        assert_eq!(failed.as_ref().map(|s| s.errors), Some(1));
        assert_eq!(faster(failed, trial(50, 0), false).map(|s| s.errors), Some(1));
    }

    #[test]
    fn numbers_read_easily() {
        assert_eq!(num(112_345.6), "112,346");
        assert_eq!(num(999.0), "999");
        assert_eq!(num(1000.0), "1,000");
        assert_eq!(num(12.345), "12.3");
        assert_eq!(num(0.456), "0.46");
        assert_eq!(num(-1234.0), "-1,234");
        assert_eq!(num(0.001_994), "0.00199");
        assert_eq!(num(0.0), "0.00");
    }

    #[test]
    fn targets_are_judged_and_unmeasured_ones_say_so() {
        let mut points = vec![
            point("card", None, 16, 2000.0, 80),
            point("send", Some("empty"), 16, 1500.0, 100),
            point("send", Some("full"), 16, 900.0, 100),
        ];
        add_ratios(&mut points);
        let b = Bench {
            tool_version: "0".into(),
            quick: false,
            cores: 2,
            release_build: true,
            points,
            figures: vec![Baselines::default().duration("suite.wall", "suite", Some(1.5), "s", None)],
            targets: Vec::new(),
            duration_ms: 1,
        };
        let t = targets(&b);
        let find = |what: &str| t.iter().find(|t| t.what.starts_with(what)).unwrap();
        assert_eq!(find("full suite").met, Some(true));
        assert_eq!(find("mock memory").met, None);
        assert_eq!(find("SendMessage at 16 connections, store empty").met, Some(true));
        assert_eq!(find("SendMessage at 16 connections, store full over").met, Some(false), "0.6 is not flat");
        let b = Bench { targets: t.clone(), ..b };
        assert!(table(&b).contains("NOT MET"));
    }
}

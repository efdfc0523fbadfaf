//! `a2a-conform client-check`: the mock as the judge of a client. It starts the mock on loopback
//! with every request recorded and the chosen scenarios in force, runs the client's command (or
//! waits for whatever client connects), then grades the recording with the client suites
//! (`suites/client/`) and reports through the same sinks, baselines and exit codes as `check`.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt as _};

use super::check::{Output, SPEC_COMMIT, interrupted};
use crate::engine::observe::{self, CommandEnd, Observation};
use crate::report::baseline::{self, Baseline, Overlay};
use crate::report::files::FileSink;
use crate::report::json::now_rfc3339;
use crate::report::lines::JsonLines;
use crate::report::terminal::TerminalSink;
use crate::report::{
    CheckResult, Collector, Outcome, Report, RunEvent, RunInfo, Sink, SkipReason, SuiteSource, TargetInfo, Verdict,
};
use crate::server::client_scenarios::ClientScenario;
use crate::server::record::RecordedRequest;
use crate::server::{ExtendedCard, MockConfig, MockServer, WebhookPolicy};
use crate::suite::loader::{self, LoadedSuite};
use crate::suite::plan::{Disposition, PlannedCheck};

/// Bytes of the client's output kept for the report and `client.log`, per stream.
const OUTPUT_TAIL: usize = 64 * 1024;
/// Characters of that output a finding quotes.
const FINDING_TAIL: usize = 1200;
/// How long a client stopped with SIGTERM has to end before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// Everything a client-check run needs.
#[derive(Debug, Clone)]
pub struct ClientCheckOptions {
    /// The client's command and its arguments (`{url}` is replaced); empty: wait for clients.
    pub command: Vec<String>,
    /// Client scenarios, by name.
    pub scenarios: Vec<String>,
    /// Bound on the command's run.
    pub timeout: Duration,
    /// How long to wait for clients when no command is given.
    pub duration: Duration,
    /// Where the mock listens (port 0: any free port).
    pub bind: SocketAddr,
    /// The extended card is served to `Authorization: Bearer <token>`.
    pub extended_card_token: Option<String>,
    pub strict: bool,
    pub baseline: Option<Baseline>,
    /// Id globs to keep (empty: all).
    pub only: Vec<String>,
}

impl ClientCheckOptions {
    pub fn new(command: Vec<String>) -> Self {
        ClientCheckOptions {
            command,
            scenarios: Vec::new(),
            timeout: Duration::from_secs(120),
            duration: Duration::from_secs(60),
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            extended_card_token: None,
            strict: false,
            baseline: None,
            only: Vec::new(),
        }
    }
}

/// `client-check --list`: the scenarios, then the checks.
pub fn list() -> anyhow::Result<i32> {
    println!("scenarios (--scenario NAME, repeatable):");
    for sc in ClientScenario::builtin()? {
        println!("  {:<22} {}", sc.name, sc.description);
    }
    println!("\nchecks (suites/client/):");
    for s in loader::client_builtin()? {
        for suite in &s.doc.suites {
            for t in &suite.tests {
                let needs = if t.requires_scenarios.is_empty() {
                    String::new()
                } else {
                    format!(" [needs --scenario {}]", t.requires_scenarios.join(", "))
                };
                println!(
                    "  {:<22} {:<6} §{:<7} {}{needs}",
                    t.id,
                    t.level.as_str(),
                    t.section.as_deref().unwrap_or(""),
                    t.name
                );
            }
        }
    }
    Ok(0)
}

/// Runs the client check, prints and writes the report; returns the exit status.
pub async fn run_command(opts: ClientCheckOptions, output: &Output) -> i32 {
    let mut files: Vec<FileSink> = output.formats.iter().map(|f| FileSink::new(*f, &output.dir)).collect();
    let mut view: Box<dyn Sink + Send> = if output.json_lines {
        Box::new(JsonLines::new(std::io::stdout()))
    } else {
        Box::new(TerminalSink::new(std::io::stdout(), output.color))
    };
    let outcome = {
        let mut sinks: Vec<&mut (dyn Sink + Send)> = vec![view.as_mut()];
        sinks.extend(files.iter_mut().map(|f| f as &mut (dyn Sink + Send)));
        run(&opts, output, &mut sinks).await
    };
    let mut code = match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    };
    for f in &files {
        match f.outcome() {
            Some(Ok(p)) if !output.quiet => eprintln!("wrote {}", p.display()),
            Some(Ok(_)) | None => {}
            Some(Err(e)) => {
                eprintln!("error: {e}");
                code = 2;
            }
        }
    }
    code
}

/// The mock a client is graded against: every request recorded, the scenarios in force.
pub fn mock_config(opts: &ClientCheckOptions, chosen: &[ClientScenario]) -> anyhow::Result<MockConfig> {
    let mut config = MockConfig {
        record_requests: true,
        webhooks: WebhookPolicy::AllowLoopback,
        extended_card: opts.extended_card_token.clone().map_or(ExtendedCard::Off, ExtendedCard::Bearer),
        ..MockConfig::default()
    };
    ClientScenario::apply_all(chosen, &mut config)?;
    Ok(config)
}

/// Starts the mock, lets the client talk to it, grades what it sent. The verdict's exit status.
pub async fn run(opts: &ClientCheckOptions, output: &Output, sink: &mut (dyn Sink + Send)) -> anyhow::Result<i32> {
    let report = session(opts, sink, |url, card_url| async move {
        if opts.command.is_empty() {
            println!("listening on {url}");
            println!("agent card: {card_url}");
            if !output.quiet {
                eprintln!("grading every client that connects for {} s (Ctrl-C ends sooner)", opts.duration.as_secs());
            }
            let why = tokio::select! {
                _ = tokio::time::sleep(opts.duration) => format!("listened for {} s", opts.duration.as_secs()),
                why = interrupted() => format!("{why}: the clients seen so far are graded"),
            };
            return Ok((None, vec![why]));
        }
        let end = run_client(&opts.command, &url, &card_url, opts.timeout, output).await?;
        std::fs::create_dir_all(&output.dir).ok();
        std::fs::write(output.dir.join("client.log"), &end.log).ok();
        let notes = vec![format!("command: {}", shown(&opts.command, &url)), end.summary()];
        Ok((Some(end.end), notes))
    })
    .await?;
    Ok(report.verdict.exit_code)
}

/// Grades a client written in Rust: `drive` gets the mock's base URL and talks to it; the report
/// says what the client checks made of it. For tests of clients, the kit's own among them.
pub async fn check_in_process<F, Fut>(opts: &ClientCheckOptions, drive: F) -> anyhow::Result<Report>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let mut quiet = Collector::new();
    session(opts, &mut quiet, |url, _| async move {
        drive(url).await;
        Ok((None, vec!["a client in the kit's own process".to_owned()]))
    })
    .await
}

/// One graded session: the mock up, `drive` run against it, the recording graded and every event
/// told to `sink`; the report a collector built from the same events.
async fn session<F, Fut>(opts: &ClientCheckOptions, sink: &mut (dyn Sink + Send), drive: F) -> anyhow::Result<Report>
where
    F: FnOnce(String, String) -> Fut,
    Fut: Future<Output = anyhow::Result<(Option<CommandEnd>, Vec<String>)>>,
{
    let started = Instant::now();
    let started_at = now_rfc3339();
    let chosen = ClientScenario::pick(&opts.scenarios)?;
    let suites = loader::client_builtin()?;
    let server = MockServer::bind(mock_config(opts, &chosen)?, opts.bind).await?;
    let url = server.url().to_owned();
    let driven = drive(url.clone(), server.card_url()).await;
    let requests = server.app().recorder.requests();
    let incidents = server.app().recorder.incidents();
    let card = server.app().card.card.clone();
    server.shutdown().await;
    let (command, notes) = driven?;
    let observation =
        Observation { requests: observed(&requests, &card), scenarios: opts.scenarios.clone(), incidents, command };
    let mut collector = Collector::new();
    {
        let mut both: Vec<&mut (dyn Sink + Send)> = vec![sink, &mut collector];
        let info = run_info(opts, &suites, started_at, &url, &card, &chosen, notes, observation.requests.len());
        match &opts.baseline {
            Some(b) => emit(
                &mut Overlay::new(&mut both, b.clone(), baseline::today()),
                info,
                &suites,
                &observation,
                opts,
                started,
            ),
            None => emit(&mut both, info, &suites, &observation, opts, started),
        }
    }
    Ok(collector.into_report().expect("a finished run has a report"))
}

/// Tells the sinks the run: started, each check graded, finished.
fn emit(
    sink: &mut (dyn Sink + Send),
    info: RunInfo,
    suites: &[LoadedSuite],
    obs: &Observation,
    opts: &ClientCheckOptions,
    started: Instant,
) {
    let planned = planned(suites, &opts.only);
    sink.event(&RunEvent::RunStarted {
        info: Box::new(info),
        planned: planned.iter().map(|c| c.test.id.clone()).collect(),
    });
    let mut results: Vec<CheckResult> = Vec::new();
    for c in &planned {
        let meta = c.meta();
        let mut r = match &c.disposition {
            Disposition::Skip(reason, why) => CheckResult::skipped(&meta, *reason, why.clone()),
            Disposition::Invalid(why) => CheckResult {
                failure: Some(crate::report::Failure { message: why.clone(), ..Default::default() }),
                ..CheckResult::new(&meta, Outcome::Error)
            },
            _ => observe::grade(&c.test, &meta, obs, opts.strict),
        };
        // One violation, one finding: a check built on one that found a violation waits.
        if !matches!(r.outcome, Outcome::Pass | Outcome::Skip)
            && let Some(cause) = c.test.depends_on.iter().find(|d| {
                results.iter().any(|p| {
                    &p.id == *d
                        && matches!(p.outcome, Outcome::Fail | Outcome::Warn | Outcome::Info)
                        && p.failure.is_some()
                })
            })
        {
            r = CheckResult {
                depends_on: Some(cause.clone()),
                ..CheckResult::skipped(
                    &meta,
                    SkipReason::DependsOnFailed,
                    format!("{cause} found the violation this check builds on"),
                )
            };
        }
        sink.event(&RunEvent::CheckFinished(Box::new(r.clone())));
        results.push(r);
    }
    let (verdict, reasons) = Verdict::decide(&results);
    sink.event(&RunEvent::RunFinished {
        verdict,
        reasons,
        duration_ms: started.elapsed().as_millis() as u64,
        finished_at: now_rfc3339(),
    });
}

/// Every client check, in file order; those `only` leaves out are skipped as filtered.
fn planned(suites: &[LoadedSuite], only: &[String]) -> Vec<PlannedCheck> {
    let keep = |id: &str| {
        only.is_empty()
            || only.iter().any(|g| globset::Glob::new(g).map(|g| g.compile_matcher().is_match(id)).unwrap_or(false))
    };
    let mut out = Vec::new();
    for s in suites {
        for (si, suite) in s.doc.suites.iter().enumerate() {
            for (ti, t) in suite.tests.iter().enumerate() {
                let disposition = if let Some(why) = s.invalid.get(&(si, ti)) {
                    Disposition::Invalid(why.clone())
                } else if !keep(&t.id) {
                    Disposition::Skip(SkipReason::Filtered, "left out by --only".into())
                } else {
                    Disposition::Run
                };
                let profile = t.profile.clone().or_else(|| suite.profile.clone()).unwrap_or_else(|| "client".into());
                out.push(PlannedCheck {
                    suite: s.name.clone(),
                    test: t.clone(),
                    scored: t.scored.unwrap_or(true),
                    profile,
                    disposition,
                    binding: crate::suite::binding::Binding::JsonRpc,
                });
            }
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn run_info(
    opts: &ClientCheckOptions,
    suites: &[LoadedSuite],
    started_at: String,
    url: &str,
    card: &Value,
    chosen: &[ClientScenario],
    mut notes: Vec<String>,
    requests: usize,
) -> RunInfo {
    if !chosen.is_empty() {
        let names: Vec<&str> = chosen.iter().map(|s| s.name.as_str()).collect();
        notes.push(format!("scenarios: {}", names.join(", ")));
    }
    notes.push(format!("{requests} request(s) recorded"));
    RunInfo {
        tool: "a2a-conform".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        spec_version: "1.0".into(),
        spec_commit: SPEC_COMMIT.into(),
        run_id: uuid::Uuid::new_v4().to_string(),
        mode: "client".into(),
        started_at,
        strict: opts.strict,
        profiles: Vec::new(),
        seed: None,
        suites: suites
            .iter()
            .map(|s| SuiteSource { name: s.name.clone(), origin: s.origin.to_owned(), sha256: s.sha256.clone() })
            .collect(),
        target: TargetInfo {
            url: url.to_owned(),
            card_sha256: None,
            capabilities: card.get("capabilities").cloned(),
            notes,
        },
    }
}

/// The card's first JSON-RPC interface: its URL and tenant.
fn interface(card: &Value) -> (String, Option<String>) {
    let first = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .and_then(|all| all.iter().find(|i| i.get("protocolBinding").and_then(Value::as_str) == Some("JSONRPC")));
    let url = first.and_then(|i| i.get("url")).and_then(Value::as_str).unwrap_or_default().to_owned();
    let tenant =
        first.and_then(|i| i.get("tenant")).and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_owned);
    (url, tenant)
}

/// The recording as the client checks read it (the shape is `$defs/observe` of the suite schema).
pub fn observed(requests: &[RecordedRequest], card: &Value) -> Vec<Value> {
    let (iface, tenant) = interface(card);
    let iface = reqwest::Url::parse(&iface).ok();
    let iface_origin = iface.as_ref().map(|u| u.origin().ascii_serialization()).unwrap_or_default();
    let iface_path = iface.as_ref().map(|u| u.path().to_owned()).unwrap_or_default();
    let iface_host = iface.as_ref().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default();
    requests
        .iter()
        .enumerate()
        .map(|(seq, r)| {
            let origin = r.header("host").map(|h| format!("http://{h}")).unwrap_or_default();
            let host = reqwest::Url::parse(&origin).ok().and_then(|u| u.host_str().map(str::to_owned));
            let same_path = r.path == iface_path || r.path.trim_end_matches('/') == iface_path.trim_end_matches('/');
            let kind = if r.http_method == "GET" && r.path.ends_with("/.well-known/agent-card.json") {
                "card"
            } else if r.http_method == "POST" && same_path && origin == iface_origin {
                "rpc"
            } else {
                "other"
            };
            let headers: Map<String, Value> =
                r.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), Value::String(v.clone()))).collect();
            let query: Map<String, Value> = r
                .query
                .as_deref()
                .map(|q| {
                    url_pairs(q).into_iter().map(|(k, v)| (k, Value::String(v))).collect::<BTreeMap<_, _>>().into_iter().collect()
                })
                .unwrap_or_default();
            let method = r.body.get("method").cloned().filter(Value::is_string).unwrap_or(Value::Null);
            json!({
                "seq": seq,
                "at_ms": r.at_ms,
                "http_method": r.http_method,
                "path": r.path,
                "query": query,
                "origin": origin,
                "at_interface_host": host.as_deref() == Some(iface_host.as_str()),
                "kind": kind,
                "headers": headers,
                "method": method,
                "body": r.body,
                "params": r.body.get("params").cloned().unwrap_or(Value::Null),
                "interface": {"tenant": tenant},
                "capabilities": card.get("capabilities").cloned().unwrap_or_else(|| json!({})),
                "answer": r.answer.as_ref().map(|a| json!({"status": a.status, "content_type": a.content_type, "body": a.body})),
            })
        })
        .collect()
}

fn url_pairs(q: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://x/?{q}"))
        .map(|u| u.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
        .unwrap_or_default()
}

/// The command with `{url}` in place.
fn shown(command: &[String], url: &str) -> String {
    command.iter().map(|a| a.replace("{url}", url)).collect::<Vec<_>>().join(" ")
}

/// How the client's command went.
struct ClientRun {
    end: CommandEnd,
    /// What it printed, bounded: for `client.log`.
    log: String,
    elapsed: Duration,
}

impl ClientRun {
    fn summary(&self) -> String {
        let how = match (self.end.status, self.end.timed_out) {
            (_, true) => "was stopped at --timeout".to_owned(),
            (Some(s), _) => format!("exited {s}"),
            (None, _) => "was ended by a signal".to_owned(),
        };
        format!("the client {how} after {} ms", self.elapsed.as_millis())
    }
}

/// Runs the client with `{url}` replaced and `A2A_URL` / `A2A_CARD_URL` set, in a process group
/// of its own so that a stop reaches its children too; bounded by `timeout`, and ended early
/// (SIGTERM, then SIGKILL) by a signal to the kit, whose report then still comes.
async fn run_client(
    command: &[String],
    url: &str,
    card_url: &str,
    timeout: Duration,
    output: &Output,
) -> anyhow::Result<ClientRun> {
    let args: Vec<String> = command.iter().map(|a| a.replace("{url}", url)).collect();
    let mut cmd = tokio::process::Command::new(&args[0]);
    cmd.args(&args[1..])
        .env("A2A_URL", url)
        .env("A2A_CARD_URL", card_url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| anyhow::anyhow!("starting the client {:?}: {e}", args[0]))?;
    let echo = !output.quiet && !output.json_lines;
    let out = tokio::spawn(tail(child.stdout.take(), echo));
    let err = tokio::spawn(tail(child.stderr.take(), echo));
    let (status, timed_out) = tokio::select! {
        s = child.wait() => (s.ok().and_then(|s| s.code()), false),
        _ = tokio::time::sleep(timeout) => {
            stop(&mut child).await;
            (None, true)
        }
        why = interrupted() => {
            eprintln!("{why}: stopping the client");
            stop(&mut child).await;
            (None, false)
        }
    };
    let elapsed = started.elapsed();
    let out = out.await.unwrap_or_default();
    let err = err.await.unwrap_or_default();
    let log = format!("$ {}\n--- stdout\n{out}\n--- stderr\n{err}\n", args.join(" "));
    let last = if err.trim().is_empty() { &out } else { &err };
    let chars: Vec<char> = last.chars().collect();
    let output_tail: String = chars[chars.len().saturating_sub(FINDING_TAIL)..].iter().collect();
    Ok(ClientRun { end: CommandEnd { status, timed_out, output_tail }, log, elapsed })
}

/// SIGTERM to the client's group, SIGKILL after [`GRACE`].
async fn stop(child: &mut tokio::process::Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) on the group the child leads; no memory is shared.
        unsafe {
            libc::kill(-(pid as i32), libc::SIGTERM);
        }
        if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
            return;
        }
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    }
    let _ = child.kill().await;
    let _ = child.wait().await;
}

/// Reads a pipe to its end, keeping the last [`OUTPUT_TAIL`] bytes; echoes it to stderr as it
/// comes when `echo`.
async fn tail(pipe: Option<impl AsyncRead + Unpin>, echo: bool) -> String {
    let Some(mut pipe) = pipe else { return String::new() };
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if echo {
                    use std::io::Write as _;
                    let _ = std::io::stderr().write_all(&buf[..n]);
                }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * OUTPUT_TAIL {
                    kept.drain(..kept.len() - OUTPUT_TAIL);
                }
            }
        }
    }
    if kept.len() > OUTPUT_TAIL {
        kept.drain(..kept.len() - OUTPUT_TAIL);
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Where the report files go by default.
pub fn default_out() -> PathBuf {
    PathBuf::from("a2a-client-report")
}

//! `client-check`: the kit's own reference client passes every client check under each scenario
//! that exercises it; a deliberately bad client (0.3 method names, no version header, lowercase
//! roles) fails exactly the checks it violates, each with its quote and the recorded request; the
//! observers (resubscription, continuation, retry storms) tell a good client from a bad one; and
//! the command's bounds hold (a client that hangs is stopped at --timeout and the report still
//! comes).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use a2a_conform::commands::client_check::{ClientCheckOptions, check_in_process};
use a2a_conform::report::files::Format;
use a2a_conform::report::{Outcome, Report};
use a2a_conform::server::client_scenarios::ClientScenario;
use a2a_conform::suite::model::Document;
use serde_json::{Value, json};

#[path = "common/schema.rs"]
mod schema;

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");

/// The client suites validate against the suite schema, their ids are unique (and none is a
/// server check's), an `info` check is `scored: false`, every scenario a check needs exists, and
/// every check observes something: none can pass without looking.
#[test]
fn the_client_suites_are_complete() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("suites");
    let validator = schema::compile_file("suites/suite.schema.json");
    let scenarios: Vec<String> = ClientScenario::builtin().unwrap().into_iter().map(|s| s.name).collect();
    let mut server_ids = std::collections::HashSet::new();
    for e in std::fs::read_dir(root.join("server")).unwrap() {
        let doc: Document = serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap();
        server_ids.extend(doc.suites.into_iter().flat_map(|s| s.tests).map(|t| t.id.clone()));
    }
    let mut ids = std::collections::HashSet::new();
    let mut problems = Vec::new();
    for e in std::fs::read_dir(root.join("client")).unwrap() {
        let path = e.unwrap().path();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        problems
            .extend(schema::violations_of(&validator, &value).into_iter().map(|v| format!("{}: {v}", path.display())));
        let doc: Document = serde_json::from_value(value).unwrap();
        for t in doc.suites.into_iter().flat_map(|s| s.tests) {
            if !ids.insert(t.id.clone()) || server_ids.contains(&t.id) {
                problems.push(format!("{}: id used twice", t.id));
            }
            if t.level == a2a_conform::report::Level::Info && t.scored != Some(false) {
                problems.push(format!("{}: info but not scored: false", t.id));
            }
            for s in t.requires_scenarios.iter().filter(|s| !scenarios.contains(s)) {
                problems.push(format!("{}: needs unknown scenario {s}", t.id));
            }
            let o = t.observe.as_ref();
            if o.is_none_or(|o| o.each.is_none() && o.some.is_none() && o.unique.is_none() && o.observer.is_none()) {
                problems.push(format!("{}: observes nothing", t.id));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(ids.len() >= 15, "{}", ids.len());
}

/// Runs `client-check` on the real binary with `args`, then the command after `--`; the exit
/// status and the report it wrote.
fn client_check(dir: &Path, args: &[&str], command: &[&str]) -> (i32, Value) {
    let out = Command::new(BIN)
        .arg("client-check")
        .args(["-q", "--no-color", "--out"])
        .arg(dir)
        .args(args)
        .arg("--")
        .args(command)
        .output()
        .expect("client-check runs");
    let report = std::fs::read_to_string(dir.join("report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), serde_json::from_str(&report).expect("report.json is JSON"))
}

fn outcomes(report: &Value) -> Vec<(String, String)> {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r["outcome"].as_str().unwrap().to_owned()))
        .collect()
}

fn not_passing(report: &Value) -> Vec<String> {
    outcomes(report)
        .into_iter()
        .filter(|(_, o)| o != "pass" && o != "skip")
        .map(|(id, o)| format!("{id} {o}"))
        .collect()
}

fn outcome(report: &Value, id: &str) -> String {
    outcomes(report).into_iter().find(|(i, _)| i == id).map(|(_, o)| o).unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn the_reference_client_passes_every_client_check_under_each_scenario() {
    let tmp = tempdir("reference");
    let cases: &[(&[&str], &str)] = &[
        (&[], "CLIENT-TENANT-001"),
        (&["--scenario", "tenant"], "CLIENT-TENANT-001"),
        (&["--scenario", "drop-stream"], "CLIENT-RESUB-001"),
        (&["--scenario", "unknown-fields"], "CLIENT-UNKNOWN-001"),
        (&["--scenario", "duplicate-event-ids"], "CLIENT-VERSION-001"),
        // The card declares no streaming: the reference client sends SendMessage instead.
        (&["--scenario", "core-only"], "CLIENT-VERSION-001"),
        (&["--scenario", "task-not-found"], "CLIENT-RETRY-001"),
    ];
    for (i, (scenario, exercised)) in cases.iter().enumerate() {
        let dir = tmp.join(i.to_string());
        let (code, report) = client_check(&dir, scenario, &[BIN, "client", "stream", "{url}", "hello"]);
        assert_eq!(not_passing(&report), Vec::<String>::new(), "{scenario:?}");
        assert_eq!(outcome(&report, exercised), "pass", "{scenario:?}");
        assert_eq!(code, 0, "{scenario:?}");
        assert_eq!(report["run"]["mode"], "client");
        let log = std::fs::read_to_string(dir.join("client.log")).unwrap();
        assert!(log.contains("TASK_STATE_COMPLETED"), "the client's output is kept: {log}");
    }
    // The issue's own acceptance command: a blocking send.
    let (code, report) = client_check(&tmp.join("send"), &[], &[BIN, "client", "send", "{url}", "hello"]);
    assert_eq!((code, not_passing(&report)), (0, Vec::new()));
}

/// 0.3 method names, no A2A-Version, lowercase roles, `kind` parts: what a 0.3 client sends.
async fn bad_client(url: String) {
    let http = reqwest::Client::new();
    let _ = http.get(format!("{url}/.well-known/agent-card.json")).send().await;
    for (i, method) in ["message/send", "message/stream"].iter().enumerate() {
        let body = json!({
            "jsonrpc": "2.0", "id": i, "method": method,
            "params": {"message": {"messageId": format!("m-{i}"), "role": "user", "kind": "message",
                                   "parts": [{"kind": "text", "text": "hello"}]}}
        });
        let _ = http.post(format!("{url}/rpc")).json(&body).send().await.map(|r| r.bytes());
    }
}

fn result<'a>(report: &'a Report, id: &str) -> &'a a2a_conform::report::CheckResult {
    report.results.iter().map(|r| &r.result).find(|r| r.id == id).unwrap_or_else(|| panic!("no {id}"))
}

fn failed(report: &Report) -> Vec<(String, Outcome)> {
    report
        .results
        .iter()
        .map(|r| &r.result)
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Warn | Outcome::Error) || r.failure.is_some())
        .map(|r| (r.id.clone(), r.outcome))
        .collect()
}

#[tokio::test]
async fn a_bad_client_fails_exactly_the_checks_it_violates_with_quote_and_request() {
    let report = check_in_process(&ClientCheckOptions::new(Vec::new()), bad_client).await.unwrap();
    assert_eq!(
        failed(&report),
        vec![
            ("CLIENT-VERSION-001".to_owned(), Outcome::Fail),
            ("CLIENT-METHOD-001".to_owned(), Outcome::Info),
            ("CLIENT-ENUM-001".to_owned(), Outcome::Fail),
        ]
    );
    let version = result(&report, "CLIENT-VERSION-001");
    assert!(version.spec.quotes[0].text.starts_with("Clients MUST send the A2A-Version header"));
    let ev = &version.evidence[0];
    assert!(ev.url.ends_with("/rpc"), "{ev:?}");
    assert!(ev.request_body.as_deref().unwrap().contains("message/send"), "{ev:?}");
    assert!(ev.status.is_some(), "the mock's answer is part of the evidence: {ev:?}");
    let role = result(&report, "CLIENT-ENUM-001").failure.as_ref().unwrap();
    assert_eq!(role.actual.as_deref(), Some("\"user\""), "{role:?}");
    assert!(role.message.contains("request #1 (message/send)"), "{role:?}");
    // Without a header nothing is graded for its format: that is CLIENT-VERSION-001's finding.
    assert_eq!(result(&report, "CLIENT-VERSION-002").outcome, Outcome::Skip);
    assert_eq!(report.verdict.exit_code, 1);
    // A client's run has scenarios, no behaviour map: no rendering speaks of one, strict or not.
    let strict =
        Report { run: a2a_conform::report::json::RunSection { strict: true, ..report.run.clone() }, ..report.clone() };
    for r in [&report, &strict] {
        for format in [Format::Html, Format::Markdown, Format::Sarif, Format::Junit, Format::Json] {
            let text = format.render(r);
            assert!(!text.contains("--behaviors") && !text.contains("behaviour map"), "{format:?}: {text}");
        }
        let text = a2a_conform::report::terminal::render(r, false);
        assert!(!text.contains("--behaviors") && !text.contains("behaviour map"), "{text}");
    }
    let text = a2a_conform::report::terminal::render(&strict, false);
    assert!(
        text.split_whitespace().collect::<Vec<_>>().join(" ").contains("need a scenario (--scenario)"),
        "what grades a skipped client check is a scenario: {} {text}",
        strict.run.mode
    );
}

/// A good 1.0 message, as the kit's reference client builds it.
fn message(id: &str, text: &str, task: Option<&str>) -> Value {
    let mut m = json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(t) = task {
        m["taskId"] = json!(t);
    }
    m
}

async fn call(http: &reqwest::Client, url: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = http.post(format!("{url}/rpc")).header("A2A-Version", "1.0").json(&body).send().await.unwrap();
    r.json().await.unwrap_or(Value::Null)
}

fn scenario(name: &str) -> ClientCheckOptions {
    ClientCheckOptions { scenarios: vec![name.to_owned()], ..ClientCheckOptions::new(Vec::new()) }
}

#[tokio::test]
async fn a_follow_up_that_continues_the_waiting_task_passes_and_one_that_starts_anew_is_reported() {
    let good = |url: String| async move {
        let http = reqwest::Client::new();
        let first = call(&http, &url, "SendMessage", json!({"message": message("m-1", "book a flight", None)})).await;
        let task = first.pointer("/result/task/id").and_then(Value::as_str).unwrap().to_owned();
        assert_eq!(first.pointer("/result/task/status/state").unwrap(), "TASK_STATE_INPUT_REQUIRED");
        call(&http, &url, "SendMessage", json!({"message": message("m-2", "to Lisbon", Some(&task))})).await;
    };
    let report = check_in_process(&scenario("input-required"), good).await.unwrap();
    assert_eq!(result(&report, "CLIENT-INPUT-001").outcome, Outcome::Pass);
    assert_eq!(failed(&report), Vec::new());

    let forgetful = |url: String| async move {
        let http = reqwest::Client::new();
        call(&http, &url, "SendMessage", json!({"message": message("m-1", "book a flight", None)})).await;
        call(&http, &url, "SendMessage", json!({"message": message("m-2", "to Lisbon", None)})).await;
    };
    let report = check_in_process(&scenario("input-required"), forgetful).await.unwrap();
    assert_eq!(failed(&report), vec![("CLIENT-INPUT-001".to_owned(), Outcome::Info)]);
    assert!(result(&report, "CLIENT-INPUT-001").failure.as_ref().unwrap().message.contains("carries no taskId"));
}

/// §3.3.4: a client that streams from a card declaring no streaming is warned, naming the call;
/// the same calls to the mock's usual card pass.
#[tokio::test]
async fn optional_operations_a_card_does_not_declare_are_reported() {
    let streams = |url: String| async move {
        let http = reqwest::Client::new();
        let _ = http.get(format!("{url}/.well-known/agent-card.json")).send().await;
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                          "params": {"message": message("m-1", "hello", None)}});
        let r = http.post(format!("{url}/rpc")).header("A2A-Version", "1.0").json(&body).send().await.unwrap();
        let _ = r.bytes().await;
    };
    let report = check_in_process(&scenario("core-only"), streams).await.unwrap();
    assert_eq!(failed(&report), vec![("CLIENT-CAPS-001".to_owned(), Outcome::Warn)]);
    assert!(result(&report, "CLIENT-CAPS-001").failure.as_ref().unwrap().message.contains("SendStreamingMessage"));
    let report = check_in_process(&ClientCheckOptions::new(Vec::new()), streams).await.unwrap();
    assert_eq!(result(&report, "CLIENT-CAPS-001").outcome, Outcome::Pass);
    assert_eq!(failed(&report), Vec::new());
}

/// A SubscribeToTask on a task that already completed is reported (CLIENT-TERMINAL-001); one the
/// mock refuses because its card declares no streaming is CLIENT-CAPS-001's alone, though both
/// answers are -32004.
#[tokio::test]
async fn a_subscription_to_a_finished_task_is_reported_and_a_refused_stream_is_not_mistaken_for_one() {
    let late = |url: String| async move {
        let http = reqwest::Client::new();
        let r = call(&http, &url, "SendMessage", json!({"message": message("m-1", "hello", None)})).await;
        let task = r.pointer("/result/task/id").and_then(Value::as_str).unwrap().to_owned();
        let answer = call(&http, &url, "SubscribeToTask", json!({"id": task})).await;
        assert_eq!(answer.pointer("/error/code"), Some(&json!(-32004)), "{answer}");
    };
    let report = check_in_process(&ClientCheckOptions::new(Vec::new()), late).await.unwrap();
    assert_eq!(failed(&report), vec![("CLIENT-TERMINAL-001".to_owned(), Outcome::Info)]);

    let report = check_in_process(&scenario("core-only"), late).await.unwrap();
    assert_eq!(failed(&report), vec![("CLIENT-CAPS-001".to_owned(), Outcome::Warn)]);
}

/// Only tasks the mock saw stop are judged: a client whose messages choose other behaviours (the
/// SDK clients of the interop corpus send `tck-complete-task ...`) has no waiting task to continue
/// or follow, and both checks skip instead of reporting a task that completed as waiting.
#[tokio::test]
async fn tasks_that_never_stopped_are_not_judged_as_waiting() {
    let steered = |url: String| async move {
        let http = reqwest::Client::new();
        for (id, text) in [("m-1", "tck-complete-task one"), ("m-2", "tck-complete-task two")] {
            let r = call(&http, &url, "SendMessage", json!({"message": message(id, text, None)})).await;
            assert_eq!(r.pointer("/result/task/status/state").unwrap(), "TASK_STATE_COMPLETED");
        }
    };
    for (name, id) in [("input-required", "CLIENT-INPUT-001"), ("auth-required", "CLIENT-AUTH-001")] {
        let report = check_in_process(&scenario(name), steered).await.unwrap();
        let r = result(&report, id);
        assert_eq!(r.outcome, Outcome::Skip, "{id}: {:?}", r.failure);
        assert!(r.skip_detail.as_deref().unwrap_or_default().contains("no task the client started"), "{r:?}");
        assert_eq!(failed(&report), Vec::new());
    }
}

#[tokio::test]
async fn a_task_that_asks_for_authorization_is_followed_or_the_client_is_warned() {
    let polls = |url: String| async move {
        let http = reqwest::Client::new();
        let first = call(&http, &url, "SendMessage", json!({"message": message("m-1", "pay the invoice", None)})).await;
        assert_eq!(first.pointer("/result/task/status/state").unwrap(), "TASK_STATE_AUTH_REQUIRED");
        let task = first.pointer("/result/task/id").and_then(Value::as_str).unwrap().to_owned();
        call(&http, &url, "GetTask", json!({"id": task})).await;
    };
    let report = check_in_process(&scenario("auth-required"), polls).await.unwrap();
    assert_eq!(result(&report, "CLIENT-AUTH-001").outcome, Outcome::Pass);
    assert_eq!(failed(&report), Vec::new());

    let walks_away = |url: String| async move {
        let http = reqwest::Client::new();
        call(&http, &url, "SendMessage", json!({"message": message("m-1", "pay the invoice", None)})).await;
    };
    let report = check_in_process(&scenario("auth-required"), walks_away).await.unwrap();
    assert_eq!(failed(&report), vec![("CLIENT-AUTH-001".to_owned(), Outcome::Warn)]);
    assert_eq!(report.verdict.exit_code, 0, "a SHOULD warns");
}

#[tokio::test]
async fn a_retry_storm_and_a_reused_message_id_are_reported_and_a_retry_is_not_a_reuse() {
    let storm = |url: String| async move {
        let http = reqwest::Client::new();
        for _ in 0..5 {
            call(&http, &url, "SendMessage", json!({"message": message("m-1", "hello", None)})).await;
        }
        call(&http, &url, "SendMessage", json!({"message": message("m-1", "another", None)})).await;
    };
    let report = check_in_process(&ClientCheckOptions::new(Vec::new()), storm).await.unwrap();
    assert_eq!(
        failed(&report),
        vec![("CLIENT-MSGID-001".to_owned(), Outcome::Info), ("CLIENT-RETRY-001".to_owned(), Outcome::Info)]
    );
    let reuse = result(&report, "CLIENT-MSGID-001").failure.as_ref().unwrap();
    assert!(reuse.message.contains("request #5") && reuse.message.contains("request #0"), "{reuse:?}");
    assert!(result(&report, "CLIENT-RETRY-001").failure.as_ref().unwrap().message.contains("5 times"));

    let careful = |url: String| async move {
        let http = reqwest::Client::new();
        for _ in 0..2 {
            call(&http, &url, "SendMessage", json!({"message": message("m-1", "hello", None)})).await;
        }
    };
    let report = check_in_process(&ClientCheckOptions::new(Vec::new()), careful).await.unwrap();
    assert_eq!(failed(&report), Vec::new());
}

#[tokio::test]
async fn a_client_that_sends_the_message_again_after_a_dropped_stream_is_told_so() {
    let resend = |url: String| async move {
        let http = reqwest::Client::new();
        for id in ["m-1", "m-2"] {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                              "params": {"message": message(id, "hello", None)}});
            let r = http.post(format!("{url}/rpc")).header("A2A-Version", "1.0").json(&body).send().await.unwrap();
            let _ = r.bytes().await;
        }
    };
    let report = check_in_process(&scenario("drop-stream"), resend).await.unwrap();
    assert_eq!(failed(&report), vec![("CLIENT-RESUB-001".to_owned(), Outcome::Info)]);
    let f = result(&report, "CLIENT-RESUB-001").failure.as_ref().unwrap();
    assert!(f.message.contains("sent the same message again"), "{f:?}");
}

#[test]
fn a_client_that_hangs_is_stopped_at_the_timeout_and_the_report_still_comes() {
    let dir = tempdir("hang");
    let started = Instant::now();
    let (code, report) = client_check(&dir, &["--timeout", "1"], &["sleep", "30"]);
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    let notes = report["target"]["notes"].to_string();
    assert!(notes.contains("stopped at --timeout"), "{notes}");
    // It sent nothing: nothing scored could be graded.
    assert_eq!(code, 2, "{report}");
}

#[test]
fn list_names_every_scenario_and_check() {
    let out = Command::new(BIN).args(["client-check", "--list"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for name in ["drop-stream", "unknown-fields", "input-required", "CLIENT-VERSION-001", "CLIENT-RESUB-001"] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    let out = Command::new(BIN).args(["client-check", "--scenario", "nope", "--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no client scenario is named \"nope\""));
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("a2a-client-check-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

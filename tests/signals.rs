//! A report in every ending (issue 19): `kill -TERM` or Ctrl-C in the middle of a run against an
//! agent that stalls every message ends the run at once, with the checks still running marked
//! `error` naming the signal, and every requested report file written and valid.

#[path = "common/schema.rs"]
mod schema;

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::header;
use axum::routing::{get, post};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");

/// An agent whose card and GetTask answer at once, and whose SendMessage and streams never answer.
async fn stalling_agent() -> String {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "stalling", "description": "answers no message", "version": "1.0.0",
        "supportedInterfaces": [{"url": format!("{base}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true, "pushNotifications": false},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}]
    })
    .to_string();
    let router = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || {
                let c = card.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], c) }
            }),
        )
        .route(
            "/rpc",
            post(|body: String| async move {
                let v: Value = serde_json::from_str(&body).unwrap_or_default();
                if v["method"] != "GetTask" {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                let id = v.get("id").cloned().unwrap_or(Value::Null);
                let answer =
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "Task not found"}});
                ([(header::CONTENT_TYPE, "application/json")], answer.to_string())
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    base
}

/// Starts a run, sends `signal` after `after`, and returns the exit status and how long the run
/// took from the signal on, with the report folder.
fn interrupted_run(url: &str, signal: &str, out: &std::path::Path) -> (Option<i32>, Duration) {
    let mut child = Command::new(BIN)
        .args(["check", url, "--timeout", "60", "--patience", "30", "--format", "json,junit", "-q", "--out"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    std::thread::sleep(Duration::from_secs(3));
    assert!(child.try_wait().unwrap().is_none(), "the run is still going when the signal comes");
    let sent = Instant::now();
    let killed = Command::new("kill").args([signal, &child.id().to_string()]).status().expect("kill runs");
    assert!(killed.success());
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), sent.elapsed());
        }
        if sent.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the run did not end within 30 s of {signal}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_in_the_middle_of_a_run_leaves_valid_report_files() {
    let url = stalling_agent().await;
    let validator = schema::compile_file("reports/report.schema.json");
    for (signal, name) in [("-TERM", "SIGTERM"), ("-INT", "SIGINT")] {
        let out = std::env::temp_dir().join(format!("a2a-conform-signal-{}", uuid::Uuid::new_v4().simple()));
        let (code, took) = tokio::task::spawn_blocking({
            let (url, out) = (url.clone(), out.clone());
            move || interrupted_run(&url, signal, &out)
        })
        .await
        .unwrap();
        println!("{name}: exit {code:?}, {:.1} s after the signal", took.as_secs_f64());
        assert_eq!(code, Some(3), "{name}: an interrupted run is inconclusive");
        let text = std::fs::read_to_string(out.join("report.json")).expect("report.json is written");
        let report: Value = serde_json::from_str(&text).expect("report.json is JSON");
        let problems = schema::violations_of(&validator, &report);
        assert!(problems.is_empty(), "{name}: report.json does not validate: {problems:?}");
        let stopped = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["outcome"] == "error" && r.to_string().contains(name))
            .count();
        assert!(stopped > 0, "{name}: no check says the signal stopped it");
        let junit = std::fs::read_to_string(out.join("junit.xml")).expect("junit.xml is written");
        assert!(
            junit.starts_with("<?xml") && junit.trim_end().ends_with("</testsuites>"),
            "{name}: junit.xml is whole"
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// A signal while the card is still being fetched (the agent never sends it) ends the run there,
/// not when the fetch times out, and the report says where the run was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_while_the_card_is_fetched_ends_the_run_at_once_with_a_report() {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let router = Router::new().route("/.well-known/agent-card.json", get(std::future::pending::<&'static str>));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let validator = schema::compile_file("reports/report.schema.json");
    let out = std::env::temp_dir().join(format!("a2a-conform-signal-{}", uuid::Uuid::new_v4().simple()));
    let (code, took) = tokio::task::spawn_blocking({
        let out = out.clone();
        move || interrupted_run(&url, "-TERM", &out)
    })
    .await
    .unwrap();
    assert_eq!(code, Some(3), "an interrupted run is inconclusive");
    assert!(took < Duration::from_secs(5), "the run ended {took:?} after the signal, not at the card's time-out");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).expect("report.json is written"))
            .unwrap();
    let problems = schema::violations_of(&validator, &report);
    assert!(problems.is_empty(), "report.json does not validate: {problems:?}");
    assert!(report.to_string().contains("SIGTERM) while the agent card was fetched"), "{report}");
    let _ = std::fs::remove_dir_all(&out);
}

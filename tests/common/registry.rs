// Include with `#[path = "common/registry.rs"] mod registry;` (and `#[path = "common/sample.rs"] mod
// sample;`) from a tests/*.rs file.
//! A small synthetic registry for the index: agents of every status, one the kit could not run, one
//! flaky over two runs, text hostile to HTML in a URL, a label and an error, and each agent's report
//! written into its folder as `check --targets` writes it.
#![allow(dead_code)]

use std::path::Path;

use a2a_conform::report::index::{AgentEntry, entry_failed, entry_from_report, flakiness, report_link};
use a2a_conform::report::json::{Report, build_report, to_json_string};
use a2a_conform::report::{Level, Outcome};

use super::sample;

/// Text no page may pass through unescaped.
pub const HOSTILE: &str = "</script><script>alert(1)</script><img src=x onerror=alert(2)>";

/// An agent of the registry: its name, URL and what its run left (a report, or why there was none).
pub struct Agent {
    pub name: &'static str,
    pub url: String,
    pub run: Result<Vec<Report>, String>,
    /// Whether its folder also gets a report.html.
    pub html: bool,
}

fn report(port: u16, checks: &[(&str, Level, Outcome)]) -> Report {
    let results: Vec<_> =
        checks.iter().map(|(id, level, outcome)| sample::check(id, "core", *level, *outcome)).collect();
    let mut r = build_report(&sample::info(port, "run"), &results, 700);
    r.generated_at = "2026-01-31T12:00:02Z".into();
    r
}

fn conformant(port: u16) -> Report {
    report(port, &[("CORE-CARD-001", Level::Must, Outcome::Pass), ("CORE-SEND-001", Level::Must, Outcome::Pass)])
}

/// The agents, by shard: shard 1 holds alpha, charlie, echo; shard 2 bravo, delta, foxtrot.
pub fn shards() -> [Vec<Agent>; 2] {
    let flaky_a = sample::report_on(41245, "run-e1", "task-e");
    let mut flaky_b = flaky_a.clone();
    let warned = flaky_b.results.iter_mut().find(|r| r.result.outcome == Outcome::Warn).expect("a warned check");
    warned.result.outcome = Outcome::Pass;
    warned.result.failure = None;
    let inconclusive = report(
        41243,
        &[("CORE-CARD-001", Level::Must, Outcome::Pass), ("STREAM-SUB-001", Level::Must, Outcome::Error)],
    );
    [
        vec![
            Agent {
                name: "alpha",
                url: "http://alpha.example".into(),
                run: Ok(vec![sample::report_on(41241, "run-a", "task-a")]),
                html: true,
            },
            Agent { name: "charlie", url: "http://charlie.example".into(), run: Ok(vec![inconclusive]), html: false },
            Agent {
                name: "echo",
                url: format!("http://echo.example/?{HOSTILE}"),
                run: Ok(vec![flaky_a, flaky_b]),
                html: true,
            },
        ],
        vec![
            Agent { name: "bravo", url: "http://bravo.example".into(), run: Ok(vec![conformant(41242)]), html: false },
            Agent {
                name: "delta",
                url: "${DELTA_URL}".into(),
                run: Err(format!("environment variable DELTA_URL is not set {HOSTILE}")),
                html: false,
            },
            Agent {
                name: "foxtrot",
                url: "http://foxtrot.example".into(),
                run: Ok(vec![conformant(41246)]),
                html: true,
            },
        ],
    ]
}

/// Writes each agent's files into `out/<name>/` and returns their entries.
pub fn write_agents(out: &Path, agents: &[Agent]) -> Vec<AgentEntry> {
    agents
        .iter()
        .map(|a| match &a.run {
            Err(e) => entry_failed(a.name, &a.url, e.clone(), 3),
            Ok(reports) => {
                let last = reports.last().expect("a run");
                let dir = out.join(a.name);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("report.json"), to_json_string(last)).unwrap();
                if a.html {
                    std::fs::write(dir.join("report.html"), a2a_conform::report::html::to_html(last)).unwrap();
                }
                let mut e = entry_from_report(a.name, &a.url, last, report_link(out, a.name));
                e.runs = reports.len() as u32;
                e.flaky = flakiness(reports);
                if a.name == "echo" {
                    e.labels.insert("team".into(), HOSTILE.into());
                }
                e
            }
        })
        .collect()
}

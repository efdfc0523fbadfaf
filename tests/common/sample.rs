// Include with `#[path = "common/sample.rs"] mod sample;` from a tests/*.rs file.
//! A synthetic report with something of everything the renderings must show: every outcome and
//! skip reason, a failure whose dependents were left undecided, errors with one message, evidence
//! with a curl reproducer, an unscored profile, a check with no keyword sentence, quotes from each of
//! the three normative texts (one too long for a terminal line) with the kit's reading of them, and
//! text that is hostile to HTML and Markdown.
#![allow(dead_code)]

use a2a_conform::report::json::{Report, build_report};
use a2a_conform::report::{
    CheckResult, Evidence, Failure, Level, Outcome, Quote, Reply, ReplyKind, RunInfo, SkipReason, SpecRef, SuiteSource,
    TargetInfo,
};
use serde_json::json;

/// A message no rendering may pass through unescaped.
pub const HOSTILE: &str = "</script><script>alert(1)</script> | `x` <b>";

/// The kit's reading behind CORE-SEND-001, hostile to HTML and Markdown as well.
pub const READING: &str = "an HTTP 500 is neither <b>task information</b> nor a response message | so the check fails";

/// The quotes behind CORE-SEND-001, in order: the first is longer than a terminal line.
pub fn send_quotes() -> Vec<Quote> {
    let quote = |text: &str, source: &str, section: &str| Quote {
        text: text.into(),
        source: source.into(),
        section: section.into(),
    };
    vec![
        quote(
            "The agent MAY create a new `Task` to process the provided message asynchronously or MAY return a \
             direct `Message` response for simple interactions. The operation MUST return immediately with either \
             task information or response message.",
            "a2a-spec",
            "3.1.1",
        ),
        quote("string id = 1 [(google.api.field_behavior) = REQUIRED];", "a2a-proto", "Task"),
        quote("When a rpc call is made, the Server MUST reply with a Response", "jsonrpc-2.0", "5"),
    ]
}

/// Their places, as every rendering names them.
pub const SEND_PLACES: [&str; 3] = ["A2A 1.0 §3.1.1", "A2A 1.0 a2a.proto Task", "JSON-RPC 2.0 §5"];

pub fn info(port: u16, run_id: &str) -> RunInfo {
    RunInfo {
        tool: "a2a-conform".into(),
        tool_version: "0.1.0".into(),
        spec_version: "1.0".into(),
        spec_commit: "0123456789abcdef0123456789abcdef01234567".into(),
        run_id: run_id.into(),
        mode: "server".into(),
        started_at: "2026-01-31T12:00:00Z".into(),
        strict: false,
        profiles: vec![],
        seed: None,
        suites: vec![SuiteSource { name: "core".into(), origin: "builtin".into(), sha256: "ab".repeat(32) }],
        target: TargetInfo {
            url: format!("http://127.0.0.1:{port}"),
            card_sha256: Some("cd".repeat(32)),
            capabilities: Some(json!({"streaming": true})),
            notes: vec![],
        },
    }
}

pub fn check(id: &str, profile: &str, level: Level, outcome: Outcome) -> CheckResult {
    CheckResult {
        id: id.into(),
        title: format!("title of {id}"),
        suite: format!("{profile}-suite"),
        profile: profile.into(),
        level,
        spec: SpecRef::quoted(
            "3.1.1",
            vec![Quote {
                text: format!("The server MUST do what {id} checks."),
                source: "a2a-spec".into(),
                section: "3.1.1".into(),
            }],
            None,
        ),
        outcome,
        skip_reason: None,
        skip_detail: None,
        depends_on: None,
        scored: profile != "resume",
        duration_ms: 20,
        failure: None,
        measurement: None,
        workaround: vec![],
        evidence: vec![],
        headline: None,
    }
}

pub fn evidence(port: u16, step: &str) -> Evidence {
    Evidence {
        step_id: Some(step.into()),
        method: "POST".into(),
        url: format!("http://127.0.0.1:{port}/"),
        request_headers: vec!["content-type: application/json".into(), "authorization: [REDACTED]".into()],
        request_body: Some(r#"{"jsonrpc":"2.0","id":"1","method":"SendMessage"}"#.into()),
        status: Some(500),
        response_headers: vec!["content-type: text/plain".into()],
        response_body: Some("internal error".into()),
        curl: Some(format!(
            "curl -X POST 'http://127.0.0.1:{port}/' -H 'authorization: [REDACTED]' -d '{{\"jsonrpc\":\"2.0\"}}'"
        )),
        elapsed_ms: 3,
        reply: Some(Reply {
            method: Some("SendMessage".into()),
            kind: ReplyKind::NotJsonrpc,
            code: None,
            message: None,
        }),
    }
}

/// Results of a run against an agent on `port`; `task` stands for the ids the agent made up.
/// The ids are borrowed to look real; their levels, profiles and texts are the sample's own (chosen to
/// cover every rendering), not those of the built-in checks of the same id.
pub fn results(port: u16, task: &str) -> Vec<CheckResult> {
    let mut v = vec![
        check("CORE-CARD-001", "core", Level::Must, Outcome::Pass),
        CheckResult {
            failure: Some(Failure {
                message: format!("SendMessage answered HTTP 500 for task {task}"),
                step_id: Some("send".into()),
                pointer: Some("/result".into()),
                expected: Some(r#"{"task":{"status":{"state":"TASK_STATE_COMPLETED"}}}"#.into()),
                actual: Some(r#"{"task":{"status":{"state":"TASK_STATE_WORKING"}}}"#.into()),
            }),
            evidence: vec![evidence(port, "send")],
            spec: SpecRef::quoted("3.1.1", send_quotes(), Some(READING.into())),
            ..check("CORE-SEND-001", "core", Level::Must, Outcome::Fail)
        },
        CheckResult {
            failure: Some(Failure {
                message: "content-type should be application/json".into(),
                expected: Some("application/json".into()),
                actual: Some("text/plain".into()),
                ..Failure::default()
            }),
            ..check("CORE-CT-002", "core", Level::Should, Outcome::Warn)
        },
        CheckResult {
            failure: Some(Failure { message: HOSTILE.into(), ..Failure::default() }),
            ..check("CORE-HOSTILE-001", "core", Level::Must, Outcome::Fail)
        },
        CheckResult {
            measurement: Some("max body 1048576 bytes".into()),
            ..check("KIT-CAPS-003", "caps", Level::May, Outcome::Info)
        },
        CheckResult {
            failure: Some(Failure { message: "MAY not honoured".into(), ..Failure::default() }),
            ..check("KIT-MAY-001", "core", Level::May, Outcome::Info)
        },
        CheckResult {
            failure: Some(Failure { message: "no ids".into(), ..Failure::default() }),
            ..check("EXT-RESUME-001", "resume", Level::Should, Outcome::Fail)
        },
        // No keyword sentence behind it: the closest words, and the kit's reading of what they leave open.
        CheckResult {
            failure: Some(Failure { message: "the artifact has no name".into(), ..Failure::default() }),
            spec: SpecRef::quoted(
                "4.1.7",
                vec![Quote {
                    text: "A human readable name for the artifact.".into(),
                    source: "a2a-proto".into(),
                    section: "Artifact".into(),
                }],
                Some("the spec sets no rule here; a name helps a person find the artifact".into()),
            ),
            scored: false,
            ..check("KIT-INFO-001", "core", Level::Info, Outcome::Info)
        },
    ];
    for id in ["STREAM-SUB-001", "STREAM-SUB-002", "STREAM-SUB-003"] {
        v.push(CheckResult {
            failure: Some(Failure {
                message: "the agent stopped answering: 3 requests in a row timed out".into(),
                ..Failure::default()
            }),
            ..check(id, "streaming", Level::Must, Outcome::Error)
        });
    }
    for (i, id) in ["CORE-GET-001", "CORE-LIST-001", "CORE-CANCEL-001"].into_iter().enumerate() {
        v.push(CheckResult {
            depends_on: Some("CORE-SEND-001".into()),
            ..CheckResult {
                skip_reason: Some(SkipReason::DependsOnFailed),
                skip_detail: Some(format!("its setup step {i} needs CORE-SEND-001, which failed")),
                ..check(id, "core", Level::Must, Outcome::Skip)
            }
        });
    }
    for reason in SkipReason::ALL.into_iter().filter(|r| *r != SkipReason::DependsOnFailed) {
        v.push(CheckResult {
            skip_reason: Some(reason),
            skip_detail: Some(format!("because {}", reason.as_str())),
            ..check(
                &format!("PUSH-SKIP-{}", reason.as_str().to_uppercase().replace('_', "-")),
                "push",
                Level::Must,
                Outcome::Skip,
            )
        });
    }
    v
}

/// The report of [`results`], with the times fixed.
pub fn report_on(port: u16, run_id: &str, task: &str) -> Report {
    let mut r = build_report(&info(port, run_id), &results(port, task), 1234);
    r.generated_at = "2026-01-31T12:00:02Z".into();
    r
}

pub fn report() -> Report {
    report_on(41241, "run-1", "task-1")
}

/// Panics unless each of `needles` stands in `haystack` after the one before it.
#[track_caller]
pub fn assert_in_order(haystack: &str, needles: &[String], what: &str) {
    let mut from = 0;
    for n in needles {
        match haystack[from..].find(n.as_str()) {
            Some(i) => from += i + n.len(),
            None => panic!("{what}: {n:?} is missing or out of order in:\n{haystack}"),
        }
    }
}

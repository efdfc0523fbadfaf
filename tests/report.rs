//! The report writers: JSON (against `reports/report.schema.json`), JUnit, terminal and the ACTS subset,
//! all fed from the same synthetic results covering every outcome and skip reason, each check with the
//! spec's words behind it (one finding with several quotes, one too long for a line, and the kit's
//! reading of them).

use std::time::Duration;

use a2a_conform::report::acts::{SdkInfo, to_acts};
use a2a_conform::report::files::{FileSink, Format};
use a2a_conform::report::json::{Collector, Report, SCHEMA_VERSION, build_report, to_json_string};
use a2a_conform::report::junit::to_junit;
use a2a_conform::report::lines::JsonLines;
use a2a_conform::report::terminal::render;
use a2a_conform::report::{
    CheckResult, Evidence, Failure, Level, Outcome, Quote, RunEvent, RunInfo, Sink, SkipReason, SpecRef, SuiteSource,
    TargetInfo, Verdict,
};
#[path = "common/schema.rs"]
mod schema;

use serde_json::{Value, json};

const SCHEMA_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/reports/report.schema.json");

fn report_schema() -> Value {
    let text = std::fs::read_to_string(SCHEMA_PATH).expect("schema readable");
    serde_json::from_str(&text).expect("schema is JSON")
}

fn validate(value: &Value) -> Result<(), String> {
    let errors = schema::violations_of(&schema::compile_file("reports/report.schema.json"), value);
    if errors.is_empty() { Ok(()) } else { Err(errors.join("\n")) }
}

fn info() -> RunInfo {
    RunInfo {
        tool: "a2a-conform".into(),
        tool_version: "0.1.0".into(),
        spec_version: "1.0".into(),
        spec_commit: "0123456789abcdef0123456789abcdef01234567".into(),
        run_id: "run-1".into(),
        mode: "server".into(),
        started_at: "2026-01-31T12:00:00Z".into(),
        strict: false,
        profiles: vec!["core".into(), "streaming".into(), "resume".into()],
        seed: Some(42),
        suites: vec![SuiteSource { name: "core".into(), origin: "builtin".into(), sha256: "ab".repeat(32) }],
        target: TargetInfo {
            url: "http://127.0.0.1:8080".into(),
            card_sha256: Some("cd".repeat(32)),
            capabilities: Some(json!({"streaming": true, "pushNotifications": false})),
            notes: vec!["served over HTTP/1.1".into()],
        },
    }
}

fn check(id: &str, profile: &str, level: Level, outcome: Outcome) -> CheckResult {
    CheckResult {
        id: id.into(),
        title: format!("title of {id}"),
        suite: format!("{profile}-suite"),
        profile: profile.into(),
        level,
        spec: SpecRef::quoted("3.1.4", vec![quote("The server MUST do it.", "a2a-spec", "3.1.4")], None),
        outcome,
        skip_reason: None,
        skip_detail: None,
        depends_on: None,
        scored: true,
        duration_ms: 250,
        failure: None,
        measurement: None,
        workaround: vec![],
        evidence: vec![],
        headline: None,
    }
}

fn quote(text: &str, source: &str, section: &str) -> Quote {
    Quote { text: text.into(), source: source.into(), section: section.into() }
}

/// The words behind CORE-GET-001: a quote longer than a terminal line, and one from another text.
fn get_quotes() -> Vec<Quote> {
    vec![
        quote(
            "The response MUST include the current state of the task, and when the client asked for a history \
             length the server MUST return at most that many of the most recent messages in the history field.",
            "a2a-spec",
            "3.1.4",
        ),
        quote("TaskState state = 1 [(google.api.field_behavior) = REQUIRED];", "a2a-proto", "TaskStatus"),
    ]
}

const GET_READING: &str = "the kit reads \"current\" as the state after the last update it was sent";

fn skip(id: &str, reason: SkipReason) -> CheckResult {
    CheckResult {
        skip_reason: Some(reason),
        skip_detail: Some(format!("because {}", reason.as_str())),
        ..check(id, "streaming", Level::Must, Outcome::Skip)
    }
}

/// Every outcome and every skip reason, one unscored profile, and a JSON expected/actual pair.
fn results() -> Vec<CheckResult> {
    let mut v = vec![
        check("CORE-SEND-001", "core", Level::Must, Outcome::Pass),
        CheckResult {
            failure: Some(Failure {
                message: "Expected state TASK_STATE_COMPLETED but got TASK_STATE_WORKING".into(),
                step_id: Some("verify".into()),
                pointer: Some("/status/state".into()),
                expected: Some(r#"{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"}}"#.into()),
                actual: Some(r#"{"id":"t1","status":{"state":"TASK_STATE_WORKING"}}"#.into()),
            }),
            evidence: vec![Evidence {
                step_id: Some("verify".into()),
                method: "POST".into(),
                url: "http://127.0.0.1:8080/".into(),
                request_headers: vec!["content-type: application/json".into()],
                request_body: Some("{}".into()),
                status: Some(200),
                response_headers: vec![],
                response_body: Some("{}".into()),
                curl: Some("curl -X POST http://127.0.0.1:8080/ -d '{}'".into()),
                elapsed_ms: 12,
                reply: None,
            }],
            spec: SpecRef::quoted("3.1.4", get_quotes(), Some(GET_READING.into())),
            ..check("CORE-GET-001", "core", Level::Must, Outcome::Fail)
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
            failure: Some(Failure { message: "connection refused".into(), ..Failure::default() }),
            ..check("STREAM-SUB-001", "streaming", Level::Must, Outcome::Error)
        },
        CheckResult {
            measurement: Some("max body 1048576 bytes".into()),
            ..check("KIT-CAPS-003", "core", Level::May, Outcome::Info)
        },
        CheckResult { scored: false, ..check("RESUME-001", "resume", Level::Should, Outcome::Fail) },
    ];
    for (i, reason) in SkipReason::ALL.into_iter().enumerate() {
        v.push(skip(&format!("STREAM-SKIP-00{i}"), reason));
    }
    v
}

fn report() -> Report {
    let mut r = build_report(&info(), &results(), 1234);
    // Fixed so renderings are reproducible.
    r.generated_at = "2026-01-31T12:00:02Z".into();
    r
}

fn report_json() -> Value {
    serde_json::to_value(report()).unwrap()
}

#[test]
fn report_matches_its_schema() {
    let value = report_json();
    validate(&value).unwrap_or_else(|e| panic!("{e}\n{}", serde_json::to_string_pretty(&value).unwrap()));
}

#[test]
fn schema_is_versioned_like_the_report() {
    let s = report_schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert!(s["$id"].as_str().unwrap().ends_with(SCHEMA_VERSION), "{}", s["$id"]);
    assert_eq!(s["properties"]["schema_version"]["const"], SCHEMA_VERSION);
    assert_eq!(report().schema_version, SCHEMA_VERSION);
}

#[test]
fn schema_rejects_what_we_never_write() {
    let mut unknown_top = report_json();
    unknown_top["extra"] = json!(1);
    assert!(validate(&unknown_top).is_err());

    let mut bad_outcome = report_json();
    bad_outcome["results"][0]["outcome"] = json!("passed");
    assert!(validate(&bad_outcome).is_err());

    let mut bad_reason = report_json();
    bad_reason["results"][6]["skip_reason"] = json!("tired");
    assert!(validate(&bad_reason).is_err());

    let mut skip_without_reason = report_json();
    skip_without_reason["results"][6].as_object_mut().unwrap().remove("skip_reason");
    assert!(validate(&skip_without_reason).is_err());

    let mut wrong_exit = report_json();
    wrong_exit["verdict"]["exit_code"] = json!(0);
    assert!(validate(&wrong_exit).is_err());

    let mut bad_status = report_json();
    bad_status["verdict"]["status"] = json!("ok");
    assert!(validate(&bad_status).is_err());

    let mut missing = report_json();
    missing.as_object_mut().unwrap().remove("summary");
    assert!(validate(&missing).is_err());

    let mut bad_source = report_json();
    bad_source["results"][1]["spec"]["quotes"][0]["source"] = json!("a blog");
    assert!(validate(&bad_source).is_err());

    let mut placeless = report_json();
    placeless["results"][1]["spec"]["quotes"][1].as_object_mut().unwrap().remove("section");
    assert!(validate(&placeless).is_err());
}

#[test]
fn every_verdict_validates() {
    let cases = [
        (vec![check("A", "core", Level::Must, Outcome::Pass)], Verdict::Conformant),
        (vec![check("A", "core", Level::Must, Outcome::Fail)], Verdict::NonConformant),
        (vec![check("A", "core", Level::Must, Outcome::Error)], Verdict::Inconclusive),
        (vec![], Verdict::UsageError),
    ];
    for (results, expected) in cases {
        let r = build_report(&info(), &results, 0);
        assert_eq!(r.verdict.status, expected);
        assert_eq!(r.verdict.exit_code, expected.exit_code());
        assert!(!r.verdict.reasons.is_empty());
        validate(&serde_json::to_value(&r).unwrap()).unwrap();
    }
}

#[test]
fn summary_arithmetic() {
    let r = report();
    let s = &r.summary;
    assert_eq!(s.total, 14);
    assert_eq!((s.passed, s.failed, s.warned, s.skipped, s.errors, s.info), (1, 2, 1, 8, 1, 1));
    assert_eq!(s.total, s.passed + s.failed + s.warned + s.skipped + s.errors + s.info);
    assert_eq!(s.not_scored, 1);
    assert_eq!(s.duration_ms, 1234);
    assert_eq!(r.run.duration_ms, 1234);
    let l = &s.by_level;
    assert_eq!(l.must.total + l.should.total + l.may.total, s.total);
    assert_eq!((l.must.total, l.must.passed, l.must.failed, l.must.skipped, l.must.errors), (11, 1, 1, 8, 1));
    assert_eq!((l.should.total, l.should.warned, l.should.failed), (2, 1, 1));
    assert_eq!((l.may.total, l.may.info), (1, 1));
    assert_eq!(s.by_profile.len(), 3);
    assert_eq!(s.by_profile["core"].total, 4);
    assert_eq!(s.by_profile["streaming"].total, 9);
    assert_eq!(s.by_profile["resume"].failed, 1);
    assert_eq!(s.by_profile.values().map(|c| c.total).sum::<u64>(), s.total);
    let o = &s.by_outcome;
    assert_eq!((o.pass, o.fail, o.warn, o.skip, o.error, o.info), (1, 2, 1, 8, 1, 1));
    // The unscored failure does not count; the scored one does.
    assert_eq!(r.verdict.status, Verdict::NonConformant);
    assert_eq!(r.verdict.exit_code, 1);
    assert!(r.verdict.reasons[0].contains("CORE-GET-001"));
    assert!(!r.verdict.reasons[0].contains("RESUME-001"));
}

#[test]
fn report_round_trips_and_keeps_results_as_they_are() {
    let r = report();
    let text = to_json_string(&r);
    assert!(text.ends_with("}\n"));
    let back: Report = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
    let originals = results();
    assert_eq!(r.checks().cloned().collect::<Vec<_>>(), originals);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["results"][0].get("baseline_status").is_none());
    // The spec's words as the check carried them: each quote placed, the reading apart.
    assert_eq!(
        v["results"][1]["spec"]["quotes"],
        json!([
            {"text": get_quotes()[0].text, "source": "a2a-spec", "section": "3.1.4"},
            {"text": get_quotes()[1].text, "source": "a2a-proto", "section": "TaskStatus"},
        ])
    );
    assert_eq!(v["results"][1]["spec"]["interpretation"], GET_READING);
    assert_eq!(v["results"][1]["spec"]["requirement"], format!("{} … {}", get_quotes()[0].text, get_quotes()[1].text));
    assert_eq!(v["results"][1]["failure"]["pointer"], "/status/state");
    assert_eq!(v["run"]["seed"], 42);
    assert_eq!(v["tool"], json!({"name": "a2a-conform", "version": "0.1.0"}));
}

/// The events of a run that ends in [`report`].
fn events() -> Vec<RunEvent> {
    let rs = results();
    let mut events =
        vec![RunEvent::RunStarted { info: Box::new(info()), planned: rs.iter().map(|r| r.id.clone()).collect() }];
    // Finish order differs from plan order: the report follows the plan.
    for r in rs.iter().rev() {
        events.push(RunEvent::CheckStarted { id: r.id.clone() });
        events.push(RunEvent::CheckFinished(Box::new(r.clone())));
    }
    events.push(RunEvent::RunFinished {
        verdict: Verdict::NonConformant,
        reasons: report().verdict.reasons,
        duration_ms: 1234,
        finished_at: "2026-01-31T12:00:02Z".into(),
    });
    events
}

#[test]
fn file_sinks_write_each_format_from_the_events() {
    let dir = std::env::temp_dir().join(format!("a2a-conform-files-{}", std::process::id()));
    let mut json = FileSink::new(Format::Json, &dir);
    let mut junit = FileSink::new(Format::Junit, &dir);
    for ev in events() {
        json.event(&ev);
        junit.event(&ev);
    }
    let json_path = json.outcome().unwrap().unwrap().to_path_buf();
    let text = std::fs::read_to_string(&json_path).unwrap();
    assert!(text.starts_with(&format!("{{\n  \"schema_version\": \"{SCHEMA_VERSION}\"")));
    assert!(text.ends_with("}\n"));
    assert_eq!(text, to_json_string(&report()));
    let xml = std::fs::read_to_string(junit.outcome().unwrap().unwrap()).unwrap();
    assert_eq!(xml, to_junit(&report()));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn collector_and_json_lines_consume_the_same_events() {
    let mut collector = Collector::new();
    let mut lines = JsonLines::new(Vec::new());
    let events = events();
    {
        // One event stream, two independent sinks.
        let mut sinks: Vec<&mut dyn Sink> = vec![&mut collector, &mut lines];
        for ev in &events {
            sinks.event(ev);
        }
    }
    assert_eq!(collector.report(), Some(&report()));
    let get = collector.report().unwrap().checks().find(|r| r.id == "CORE-GET-001").unwrap();
    assert_eq!((get.spec.quotes.clone(), get.spec.interpretation.as_deref()), (get_quotes(), Some(GET_READING)));

    let out = String::from_utf8(lines.finish().unwrap()).unwrap();
    let parsed: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(parsed.len(), events.len());
    assert_eq!(parsed[0]["event"], "run_started");
    assert_eq!(parsed[2]["event"], "check_finished");
    assert_eq!(parsed[2]["result"]["id"], results().last().unwrap().id);
    let get = parsed.iter().find(|e| e["result"]["id"] == "CORE-GET-001").unwrap();
    assert_eq!(get["result"]["spec"]["interpretation"], GET_READING);
    assert_eq!(parsed.last().unwrap()["verdict"], "non_conformant");
    assert_eq!(parsed.last().unwrap()["exit_code"], 1);
}

#[test]
fn junit_has_a_suite_per_profile_and_a_case_per_check() {
    let xml = to_junit(&report());
    assert!(xml.starts_with("<?xml"));
    assert_eq!(xml.matches("<testsuite ").count(), 3);
    assert_eq!(xml.matches("<testcase ").count(), 14);
    assert!(xml.contains(r#"name="CORE-GET-001: title of CORE-GET-001""#));
    assert!(xml.contains(r#"classname="core-suite""#));
    assert!(xml.contains("warning: content-type should be application/json"));
    assert!(xml.contains("info: max body 1048576 bytes"));
    assert!(!xml.contains('\u{1b}'));

    // quick-junit reads its own output back: the document is well-formed and means what we wrote.
    let parsed = quick_junit::Report::deserialize_from_str(&xml).expect("well-formed JUnit");
    assert_eq!(parsed.tests, 14);
    assert_eq!(parsed.failures, 2);
    assert_eq!(parsed.errors, 1);
    assert_eq!(parsed.time, Some(Duration::from_millis(1234)));
    let names: Vec<&str> = parsed.test_suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["core", "streaming", "resume"]);
    let streaming = &parsed.test_suites[1];
    assert_eq!((streaming.tests, streaming.errors, streaming.skipped), (9, 1, 8));
    let get = parsed.test_suites[0].test_cases.iter().find(|c| c.name.as_str().starts_with("CORE-GET-001")).unwrap();
    assert_eq!(get.time, Some(Duration::from_millis(250)));
    let properties: Vec<(&str, &str)> = get.properties.iter().map(|p| (p.name.as_str(), p.value.as_str())).collect();
    let first = format!("“{}” — A2A 1.0 §3.1.4", get_quotes()[0].text);
    let second = format!("“{}” — A2A 1.0 a2a.proto TaskStatus", get_quotes()[1].text);
    assert_eq!(
        properties[3..],
        [("spec_quote", first.as_str()), ("spec_quote", second.as_str()), ("interpretation", GET_READING)]
    );
    match &get.status {
        quick_junit::TestCaseStatus::NonSuccess { kind, message, description, .. } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Failure);
            assert!(message.as_ref().unwrap().as_str().starts_with("Expected state"));
            let d = description.as_ref().unwrap().as_str();
            assert!(d.contains("at: /status/state") && d.contains("expected: ") && d.contains("reproduce: curl"));
            // The quotes with their places, then the kit's reading, then what the agent did.
            let words = format!(
                "spec: §3.1.4 (MUST)\n“{}” — A2A 1.0 §3.1.4\n“{}” — A2A 1.0 a2a.proto TaskStatus\n\
                 kit's reading: {GET_READING}\nmessage: Expected state",
                get_quotes()[0].text,
                get_quotes()[1].text
            );
            assert!(d.starts_with(&words), "{d}");
        }
        other => panic!("CORE-GET-001 is {other:?}"),
    }
    let skipped = streaming.test_cases.iter().find(|c| c.name.as_str().starts_with("STREAM-SKIP-000")).unwrap();
    match &skipped.status {
        quick_junit::TestCaseStatus::Skipped { message, .. } => {
            assert_eq!(message.as_ref().unwrap().as_str(), "capability_not_declared: because capability_not_declared");
        }
        other => panic!("skip is {other:?}"),
    }
}

#[test]
fn terminal_rendering_without_color() {
    let text = render(&report(), false);
    assert!(!text.contains('\u{1b}'), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "too wide: {line:?}");
    }
    // Profiles with counts, unscored marked.
    assert!(text.contains("core"));
    assert!(text.contains("4 checks: 1 pass, 1 fail, 1 warn, 0 skip, 0 error, 1 info"), "{text}");
    assert!(text.lines().any(|l| l.contains("resume") && l.contains("(not scored)")), "{text}");
    // Findings: id, section, level, reason, and the JSON diff pretty-printed.
    assert!(text.contains("FAIL  CORE-GET-001  §3.1.4  MUST"), "{text}");
    assert!(text.contains("ERROR STREAM-SUB-001  §3.1.4  MUST"), "{text}");
    assert!(text.contains("WARN  CORE-CT-002  §3.1.4  SHOULD"), "{text}");
    assert!(text.contains("Expected state TASK_STATE_COMPLETED but got TASK_STATE_WORKING"));
    // The finding gives the spec's words first, wrapped to 100 columns with no word lost (the first
    // quote takes more than one line; a later line starts under its first word), each with its
    // place, then the kit's reading under its label, then what the agent did.
    let block = &text[text.find("FAIL  CORE-GET-001").unwrap()..text.find("ERROR STREAM-SUB-001").unwrap()];
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(
        lines[2],
        "      “The response MUST include the current state of the task, and when the client asked for a"
    );
    assert_eq!(
        lines[3],
        "       history length the server MUST return at most that many of the most recent messages in the"
    );
    assert_eq!(lines[4], "       history field.” — A2A 1.0 §3.1.4");
    // Quote and place just fill the 100 columns.
    assert_eq!(
        lines[5],
        "      “TaskState state = 1 [(google.api.field_behavior) = REQUIRED];” — A2A 1.0 a2a.proto TaskStatus"
    );
    assert_eq!(lines[6], format!("      kit's reading: {GET_READING}"));
    assert_eq!(lines[7], "      Expected state TASK_STATE_COMPLETED but got TASK_STATE_WORKING");
    let flat = block.split_whitespace().collect::<Vec<_>>().join(" ");
    for q in get_quotes() {
        assert!(flat.contains(&q.text), "{:?} lost words:\n{block}", q.text);
    }
    assert!(text.contains(r#"-     "state": "TASK_STATE_COMPLETED""#), "{text}");
    assert!(text.contains(r#"+     "state": "TASK_STATE_WORKING""#), "{text}");
    assert!(text.contains("- application/json"), "{text}");
    assert!(text.contains("+ text/plain"), "{text}");
    assert!(text.contains("step verify · at /status/state"), "{text}");
    // Fails are listed before errors and warnings.
    let fail = text.find("FAIL  CORE-GET-001").unwrap();
    let error = text.find("ERROR STREAM-SUB-001").unwrap();
    let warn = text.find("WARN  CORE-CT-002").unwrap();
    assert!(fail < error && error < warn);
    // Skips by reason, each counted once.
    assert!(text.contains("Skipped (8)"));
    for reason in SkipReason::ALL {
        assert!(text.lines().any(|l| l.trim_start().starts_with(reason.as_str()) && l.ends_with(" 1")), "{text}");
    }
    // The verdict says how much it rests on, wrapped, its exit code last.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "Verdict: NON-CONFORMANT over 2 of 7 MUST checks; 5 not graded: 1 needs a behaviour map (--behaviors), 1 \
             needs a mapped behaviour that happens (--behaviors), 1 needs credentials (--header, --header-b), 1 waits \
             on a failed check, 1 could not be decided (exit 1)"
        ),
        "{text}"
    );
    // Passing and skipped checks are not listed one by one.
    assert!(!text.contains("CORE-SEND-001"));
    assert!(!text.contains("STREAM-SKIP-000"));
}

#[test]
fn terminal_rendering_with_color() {
    let text = render(&report(), true);
    assert!(text.contains("\u{1b}[31m"));
    assert!(text.contains("\u{1b}[0m"));
    let conformant = build_report(&info(), &[check("A", "core", Level::Must, Outcome::Pass)], 5);
    let plain = render(&conformant, false);
    assert!(plain.contains("Verdict: CONFORMANT over the 1 MUST check (exit 0)"), "{plain}");
    assert!(!plain.contains("Findings"));
    assert!(!plain.contains("Skipped"));
}

#[test]
fn acts_subset_has_the_section_13_shape() {
    let acts = to_acts(&report(), None);
    let keys: Vec<&str> = acts.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["acts_version", "spec_version", "generated_at", "sdk", "transport", "environment", "summary", "suites"]
    );
    assert_eq!(acts["acts_version"], "1.0");
    assert_eq!(acts["spec_version"], "1.0");
    assert_eq!(acts["generated_at"], "2026-01-31T12:00:02Z");
    assert_eq!(acts["sdk"], json!({"name": "unknown", "version": "unknown", "language": "unknown"}));
    assert_eq!(acts["transport"], "jsonrpc");
    // warn and info count as passed.
    assert_eq!(
        acts["summary"],
        json!({
            "total": 14, "passed": 3, "failed": 2, "skipped": 8, "errors": 1, "duration_ms": 1234,
            "by_level": {
                "must": {"total": 11, "passed": 1, "failed": 1, "skipped": 8, "errors": 1},
                "should": {"total": 2, "passed": 1, "failed": 1, "skipped": 0, "errors": 0},
                "may": {"total": 1, "passed": 1, "failed": 0, "skipped": 0, "errors": 0}
            }
        })
    );
    // The strict subset has no place for the spec's words or the kit's reading.
    let text = acts.to_string();
    assert!(!text.contains("quotes") && !text.contains("as the state after the last update"), "{text}");
    let suites = acts["suites"].as_array().unwrap();
    let names: Vec<&str> = suites.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(names, ["core-suite", "streaming-suite", "resume-suite"]);
    let allowed_test_keys = ["id", "name", "level", "result", "duration_ms", "skip_reason", "failure"];
    let allowed_failure_keys = ["message", "step_id", "expected", "actual", "assertion_path"];
    for s in suites {
        assert_eq!(s.as_object().unwrap().len(), 3);
        for t in s["tests"].as_array().unwrap() {
            for k in t.as_object().unwrap().keys() {
                assert!(allowed_test_keys.contains(&k.as_str()), "unexpected key {k} in {t}");
            }
            assert!(["pass", "fail", "skip", "error"].contains(&t["result"].as_str().unwrap()));
            assert!(["must", "should", "may"].contains(&t["level"].as_str().unwrap()));
            if let Some(f) = t.get("failure") {
                for k in f.as_object().unwrap().keys() {
                    assert!(allowed_failure_keys.contains(&k.as_str()), "unexpected key {k} in {f}");
                }
            }
        }
    }
    let get = &suites[0]["tests"][1];
    assert_eq!(get["id"], "CORE-GET-001");
    assert_eq!(get["name"], "title of CORE-GET-001");
    assert_eq!(get["result"], "fail");
    assert_eq!(get["duration_ms"], 250);
    assert_eq!(get["failure"]["step_id"], "verify");
    assert_eq!(get["failure"]["assertion_path"], "/status/state");
    assert!(get["failure"]["expected"].as_str().unwrap().contains("TASK_STATE_COMPLETED"));
    let warn = &suites[0]["tests"][2];
    assert_eq!(warn["result"], "pass");
    assert!(warn.get("failure").is_none());
    let info = &suites[0]["tests"][3];
    assert_eq!(info["result"], "pass");
    let error = &suites[1]["tests"][0];
    assert_eq!(error["result"], "error");
    assert_eq!(error["failure"]["message"], "connection refused");
    let skipped = &suites[1]["tests"][1];
    assert_eq!(skipped["result"], "skip");
    assert_eq!(skipped["skip_reason"], "capability_not_declared: because capability_not_declared");

    let sdk = SdkInfo {
        name: "a2a-python".into(),
        version: "0.3.1".into(),
        language: "python".into(),
        repository: Some("https://github.com/a2aproject/a2a-python".into()),
    };
    let with_sdk = to_acts(&report(), Some(sdk));
    assert_eq!(with_sdk["sdk"]["language"], "python");
    assert_eq!(with_sdk["sdk"]["repository"], "https://github.com/a2aproject/a2a-python");
}

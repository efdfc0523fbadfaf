//! The compiled-in suites (`suites/server/*.json`): each validates against `suites/suite.schema.json`,
//! deserializes into the suite model, and carries what every finding needs (id, section, requirement,
//! a known profile). Ids are unique across files; only known probes are named; coverage stays ≥ 170.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use a2a_conform::suite::model::{Document, Test};
#[path = "common/schema.rs"]
mod schema;

use serde_json::Value;

const PROFILES: &[&str] =
    &["core", "streaming", "push", "extended-card", "signatures", "security", "caps", "resume", "legacy"];
const PROBES: &[&str] = &[
    "push_delivery",
    "resume_last_event_id",
    "concurrent_subscribers",
    "card_conditional_get",
    "card_signatures",
    "tenant_isolation",
    "non_blocking_send",
];
const OPERATIONS: &[&str] = &[
    "send_message",
    "send_streaming_message",
    "get_task",
    "list_tasks",
    "cancel_task",
    "subscribe_to_task",
    "create_push_config",
    "get_push_config",
    "list_push_configs",
    "delete_push_config",
    "get_extended_agent_card",
    "get_agent_card",
];
/// Profiles that never change the verdict: their checks must say `scored: false`.
const UNSCORED: &[&str] = &["caps", "resume"];
const MIN_TESTS: usize = 170;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("suites")
}

/// The built-in suites and the kit's synthetic checks: every file the binary compiles in.
fn suite_files() -> Vec<PathBuf> {
    let mut files = server_suite_files();
    files.push(root().join("kit.json"));
    files
}

fn server_suite_files() -> Vec<PathBuf> {
    let dir = root().join("server");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no suite files in {}", dir.display());
    files
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", p.display()))
}

fn validator() -> jsonschema::Validator {
    schema::compile_file("suites/suite.schema.json")
}

fn name(p: &Path) -> String {
    p.file_name().unwrap_or_default().to_string_lossy().into_owned()
}

/// Every (file, suite profile, test) of the compiled-in suites.
fn all_tests() -> Vec<(String, Option<String>, Test)> {
    let mut out = Vec::new();
    for p in suite_files() {
        let doc: Document = serde_json::from_value(read_json(&p))
            .unwrap_or_else(|e| panic!("{} does not deserialize into suite::model::Document: {e}", name(&p)));
        for s in doc.suites {
            for t in s.tests {
                out.push((name(&p), s.profile.clone(), std::sync::Arc::unwrap_or_clone(t)));
            }
        }
    }
    out
}

fn profile_of(suite_profile: &Option<String>, t: &Test) -> String {
    t.profile.clone().or_else(|| suite_profile.clone()).unwrap_or_else(|| "core".into())
}

#[test]
fn every_suite_file_validates_against_the_schema() {
    let v = validator();
    let mut failures = Vec::new();
    for p in suite_files() {
        let doc = read_json(&p);
        for e in v.iter_errors(&doc) {
            failures.push(format!("{}: at {}: {e}", name(&p), e.instance_path()));
        }
    }
    assert!(failures.is_empty(), "schema violations:\n  {}", failures.join("\n  "));
}

#[test]
fn the_schema_rejects_typos() {
    let v = validator();
    let good = serde_json::json!({
        "acts_version": "1.0", "spec_version": "1.0",
        "suites": [{"id": "x", "name": "x", "tests": [{
            "id": "KIT-X-001", "name": "x", "level": "must", "section": "3.1.3", "requirement": "The server MUST do it.",
            "steps": [{"id": "get", "operation": "get_task", "params": {"id": "t"}, "expect": {"body": {"id": "t"}}}]
        }]}]
    });
    assert!(v.is_valid(&good), "the minimal document must validate");
    let mutate = |f: &dyn Fn(&mut Value)| {
        let mut d = good.clone();
        f(&mut d);
        d
    };
    let bad = [
        ("unknown test key", mutate(&|d| d["suites"][0]["tests"][0]["levle"] = "must".into())),
        ("unknown step key", mutate(&|d| d["suites"][0]["tests"][0]["steps"][0]["expects"] = serde_json::json!({}))),
        ("unknown level", mutate(&|d| d["suites"][0]["tests"][0]["level"] = "required".into())),
        ("unknown profile", mutate(&|d| d["suites"][0]["tests"][0]["profile"] = "streamin".into())),
        ("unknown operation", mutate(&|d| d["suites"][0]["tests"][0]["steps"][0]["operation"] = "get_tasks".into())),
        ("unknown probe", mutate(&|d| d["suites"][0]["tests"][0]["probe"] = "timing".into())),
        (
            "unknown error_type",
            mutate(&|d| {
                d["suites"][0]["tests"][0]["steps"][0]["expect"] = Value::Null;
                d["suites"][0]["tests"][0]["steps"][0].as_object_mut().unwrap().remove("expect");
                d["suites"][0]["tests"][0]["steps"][0]["expect_error"] =
                    serde_json::json!({"error_type": "TaskNotFound"});
            }),
        ),
    ];
    for (what, d) in bad {
        assert!(!v.is_valid(&d), "the schema should reject a document with an {what}");
    }
}

#[test]
fn every_test_is_complete_and_ids_are_unique() {
    let tests = all_tests();
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut problems = Vec::new();
    for (file, sp, t) in &tests {
        if let Some(prev) = seen.insert(t.id.clone(), file.clone()) {
            problems.push(format!("{}: id {} also used in {prev}", file, t.id));
        }
        if t.section.as_deref().is_none_or(|s| s.trim().is_empty()) {
            problems.push(format!("{file}: {} has no section", t.id));
        }
        if t.quotes().iter().all(|q| q.text.trim().is_empty()) {
            problems.push(format!("{file}: {} has no requirement", t.id));
        }
        if t.level == a2a_conform::report::Level::Info && t.scored != Some(false) {
            problems.push(format!("{file}: {} is level info (no keyword sentence) but not `scored: false`", t.id));
        }
        for problem in house_rules(t) {
            problems.push(format!("{file}: {}: {problem}", t.id));
        }
        let profile = profile_of(sp, t);
        if !PROFILES.contains(&profile.as_str()) {
            problems.push(format!("{file}: {} has unknown profile {profile:?}", t.id));
        }
        if UNSCORED.contains(&profile.as_str()) && t.scored != Some(false) {
            problems.push(format!("{file}: {} is in the unscored profile {profile} but not `scored: false`", t.id));
        }
        match &t.probe {
            Some(p) if !PROBES.contains(&p.as_str()) => {
                problems.push(format!("{file}: {} names unknown probe {p:?}", t.id))
            }
            Some(_) => {}
            None if t.steps.is_empty() && !t.synthetic => {
                problems.push(format!("{file}: {} has neither steps nor a probe", t.id))
            }
            None => {}
        }
        if t.probe.as_deref() == Some("push_delivery") && !t.runner_requirements.iter().any(|r| r == "webhook_endpoint")
        {
            problems
                .push(format!("{file}: {} probes push delivery without runner_requirements webhook_endpoint", t.id));
        }
        let mut step_ids = Vec::new();
        for s in &t.steps {
            if step_ids.contains(&s.id) {
                problems.push(format!("{file}: {} repeats step id {}", t.id, s.id));
            }
            step_ids.push(s.id.clone());
            if let Some(op) = &s.operation
                && !OPERATIONS.contains(&op.as_str())
            {
                problems.push(format!("{file}: {}/{} uses unknown operation {op}", t.id, s.id));
            }
            // An operation step without expectations still asserts that the call succeeded.
            let asserts = s.operation.is_some()
                || s.expect.is_some()
                || s.expect_error.is_some()
                || s.expect_stream.is_some()
                || s.expect_refused.is_some()
                || s.assertion.is_some()
                || !s.assertions.is_empty()
                || s.repeat.is_some()
                || !s.capture.is_empty();
            if !asserts && s.description.is_none() {
                problems.push(format!("{file}: {}/{} asserts nothing and says not why", t.id, s.id));
            }
        }
        // A check must be able to fail: some step expects something specific, or a probe decides.
        let decisive = t.probe.is_some()
            || t.synthetic
            || !t.assertions.is_empty()
            || t.steps.iter().any(|s| {
                s.operation.is_some()
                    || s.expect.is_some()
                    || s.expect_error.is_some()
                    || s.expect_stream.is_some()
                    || s.expect_refused.is_some()
                    || s.assertion.is_some()
                    || !s.assertions.is_empty()
            });
        if !decisive {
            problems.push(format!("{file}: {} asserts nothing", t.id));
        }
        // Scripted behaviour is declared; black-box checks must not depend on it.
        let uses_tck = t.steps.iter().any(|s| {
            s.params.as_ref().is_some_and(|p| {
                p.pointer("/message/parts/0/text").and_then(Value::as_str).is_some_and(|x| x.starts_with("tck-"))
            })
        });
        if uses_tck && t.requires_behaviors.is_empty() {
            problems.push(format!("{file}: {} sends a tck-* prefix without requires_behaviors", t.id));
        }
    }
    assert!(problems.is_empty(), "suite problems:\n  {}", problems.join("\n  "));
}

/// Rules for the kit's own checks that ACTS (and so the schema) leaves open.
fn house_rules(t: &Test) -> Vec<String> {
    let id = regex::Regex::new(r"^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+$").unwrap();
    let step_id = regex::Regex::new(r"^[a-z0-9][a-z0-9_-]*$").unwrap();
    let behavior = regex::Regex::new(r"^tck-[a-z0-9-]+$").unwrap();
    let mut out = Vec::new();
    if !id.is_match(&t.id) {
        out.push("the id is not upper-case words joined by '-'".into());
    }
    if t.quotes().iter().any(|q| q.text.trim().len() < 10) {
        out.push("a quote of the requirement is not a sentence".into());
    }
    for b in &t.requires_behaviors {
        if !behavior.is_match(b) {
            out.push(format!("behaviour {b:?} is not a tck-* prefix"));
        }
    }
    for r in &t.runner_requirements {
        if !["webhook_endpoint", "concurrent_streams", "auth_credentials", "second_caller"].contains(&r.as_str()) {
            out.push(format!("runner requirement {r:?} is not one the kit provides"));
        }
    }
    for tr in &t.transport {
        if tr != "JSONRPC" && tr != "HTTP+JSON" {
            out.push(format!("transport {tr:?}: built-ins spell it JSONRPC or HTTP+JSON, the bindings the kit speaks"));
        }
    }
    if let Some(pre) = &t.preconditions {
        for cap in pre.capabilities.keys() {
            if !["streaming", "pushNotifications", "extendedAgentCard", "extensions"].contains(&cap.as_str()) {
                out.push(format!("precondition on capability {cap:?}, which A2A 1.0 does not define"));
            }
        }
    }
    for s in &t.steps {
        if !step_id.is_match(&s.id) {
            out.push(format!("step id {:?} is not lower case", s.id));
        }
        if let Some(raw) = &s.raw
            && raw.body.is_some()
            && raw.body_raw.is_some()
        {
            out.push(format!("step {}: raw body and body_raw both set (body_raw wins)", s.id));
        }
        if s.expect.is_some() && s.expect_stream.is_some() {
            out.push(format!("step {}: expect beside expect_stream is not read on a stream", s.id));
        }
        if s.repeat.as_ref().is_some_and(|r| r.max_attempts == Some(0)) {
            out.push(format!("step {}: repeat.max_attempts 0", s.id));
        }
    }
    out
}

#[test]
fn the_acts_draft_corpus_loads_and_only_its_grammar_slips_are_refused() {
    // Tests of fixtures/acts/ that do not follow ACTS Appendix A, each with what the draft wrote.
    const SLIPS: &[&str] = &[
        "CORE-ERR-007",    // expect_error: {data: …} (ACTS calls it details)
        "CORE-MULTI-006",  // expect: {error: …} instead of expect_error
        "STREAM-SUB-001",  // expect: {task: …} instead of expect: {body: {task: …}}
        "STREAM-SUB-003",  // the same, and expect: {error: …}
        "JSONRPC-SSE-001", // expect_stream on a raw step
    ];
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/acts");
    let loaded = a2a_conform::suite::loader::load_path(&dir).expect("the draft corpus loads");
    assert!(loaded.len() >= 14, "{} files loaded", loaded.len());
    let mut refused = Vec::new();
    let mut tests = 0;
    for file in &loaded {
        for (si, suite) in file.doc.suites.iter().enumerate() {
            for (ti, t) in suite.tests.iter().enumerate() {
                tests += 1;
                if let Some(why) = file.invalid.get(&(si, ti)) {
                    assert!(why.starts_with(&file.name) && why.contains("/suites/"), "{why}");
                    refused.push(t.id.clone());
                }
            }
        }
    }
    refused.sort();
    let mut want: Vec<String> = SLIPS.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(refused, want);
    assert!(tests > 100, "{tests} tests in the corpus");
}

/// A check waits on its step prerequisites and its `depends_on`; a cycle among them would make the
/// checks in it wait for each other until `--timeout`.
#[test]
fn prerequisites_name_existing_checks_without_cycles() {
    let tests = all_tests();
    let edges: HashMap<&str, Vec<&str>> = tests
        .iter()
        .map(|(_, _, t)| {
            let mut causes: Vec<&str> = t.steps.iter().flat_map(|s| s.prerequisite.iter()).collect();
            causes.extend(t.depends_on.iter().map(String::as_str));
            (t.id.as_str(), causes)
        })
        .collect();
    let mut problems = Vec::new();
    for (id, causes) in &edges {
        for c in causes {
            if !edges.contains_key(c) {
                problems.push(format!("{id} names {c} as a prerequisite or dependency, which is not a built-in check"));
            }
        }
    }
    // Depth-first search from every check: a path back to where it started is a cycle.
    for start in edges.keys() {
        let mut stack: Vec<Vec<&str>> = vec![vec![start]];
        let mut seen = std::collections::HashSet::new();
        while let Some(path) = stack.pop() {
            let last = *path.last().unwrap();
            for next in edges.get(last).into_iter().flatten() {
                if next == start {
                    problems.push(format!("cycle: {} → {start}", path.join(" → ")));
                } else if seen.insert(*next) {
                    let mut longer = path.clone();
                    longer.push(next);
                    stack.push(longer);
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn coverage_is_at_least_the_target() {
    let tests: Vec<_> = all_tests().into_iter().filter(|(_, _, t)| !t.synthetic).collect();
    let mut by_profile: BTreeMap<String, BTreeMap<&'static str, usize>> = BTreeMap::new();
    for (_, sp, t) in &tests {
        *by_profile.entry(profile_of(sp, t)).or_default().entry(t.level.as_str()).or_default() += 1;
    }
    println!("{} checks in suites/server:", tests.len());
    for (p, levels) in &by_profile {
        let total: usize = levels.values().sum();
        let detail: Vec<String> = levels.iter().map(|(l, n)| format!("{l} {n}")).collect();
        println!("  {p:<14} {total:>4}  ({})", detail.join(", "));
    }
    assert!(tests.len() >= MIN_TESTS, "{} checks, expected at least {MIN_TESTS}", tests.len());
    for p in ["core", "streaming", "push", "extended-card", "security", "caps", "resume", "legacy"] {
        assert!(by_profile.contains_key(p), "no check in profile {p}");
    }
}

/// The caps profile runs last, after the other checks (and its own 8 MiB message) have filled the
/// agent's store, in no fixed order: a ListTasks there answers with whatever is stored, which may
/// be larger than the kit reads. Its checks must ask for something whose answer is small and fixed.
#[test]
fn caps_checks_never_list_tasks() {
    let offenders: Vec<String> = all_tests()
        .into_iter()
        .filter(|(_, sp, t)| profile_of(sp, t) == "caps")
        .filter(|(_, _, t)| {
            let steps = serde_json::to_string(&t.steps).unwrap();
            steps.contains("\"ListTasks\"") || steps.contains("\"list_tasks\"")
        })
        .map(|(file, _, t)| format!("{file}: {}", t.id))
        .collect();
    assert!(offenders.is_empty(), "caps checks that call ListTasks: {offenders:?}");
}

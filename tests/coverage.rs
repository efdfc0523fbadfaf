//! Coverage from the checks' quotes stays honest: every entry and rule of `suites/coverage.json`
//! speaks for exactly what it means to (and a file that does not is caught), a check quoting a
//! sentence verbatim is found quoting it, the command prints the share line the lead quotes, and
//! the gaps are exactly the testable sentences no check quotes.

use std::process::Command;

use a2a_conform::commands::coverage::{Coverage, Reasons, Status, builtin, builtin_tests};
use a2a_conform::spec::Source;
use a2a_conform::suite::model::Test;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");

/// A check with nothing but an id, a section and its quotes.
fn check(id: &str, section: &str, requirement: Value) -> Test {
    serde_json::from_value(json!({
        "id": id, "name": id, "level": "must", "section": section, "requirement": requirement,
    }))
    .expect("a minimal check")
}

fn find<'a>(c: &'a Coverage, source: Source, start: &str) -> &'a a2a_conform::commands::coverage::Traced {
    c.sentences.iter().find(|t| t.id.0 == source && t.sentence.text.starts_with(start)).expect(start)
}

#[test]
fn every_entry_and_rule_of_the_reasons_file_speaks_for_what_it_means() {
    let reasons = Reasons::builtin().expect("suites/coverage.json parses");
    let (classes, problems) = reasons.classify();
    assert!(problems.is_empty(), "suites/coverage.json:\n  {}", problems.join("\n  "));
    assert_eq!(classes.len(), Source::ALL.iter().map(|s| s.text().sentences().len()).sum::<usize>());
}

#[test]
fn a_reasons_file_that_says_too_much_or_too_little_is_caught() {
    let bad = json!({
        "reasons": {"a": "one reason", "b": "another", "unused": "nobody's"},
        "rules": [
            {"reason": "a", "section": "10"},
            {"reason": "a", "section": "10.2"},
            {"reason": "b", "subject": "("}
        ],
        "sentences": [
            {"section": "3.3.2", "text": "Servers MUST validate every", "reason": "a"},
            {"section": "3.3.2", "text": "Servers SHOULD", "reason": "a"},
            {"section": "3.3.2", "text": "Servers MUST validate all input", "reason": "a"},
            {"section": "3.3.2", "text": "Servers MUST validate all", "reason": "b"},
            {"section": "10.6", "text": "For A2A-specific errors", "reason": "a"},
            {"section": "3.1.1", "text": "The operation MUST return immediately", "testable": "it is"},
            {"section": "13.4", "text": "Agents MUST validate all input", "restates": {"section": "3.3.2", "text": "Servers MUST validate all input"}},
            {"section": "3.1.1", "text": "Task processing MAY continue", "reason": "nope"}
        ]
    });
    let reasons = Reasons::parse(&bad.to_string()).unwrap();
    let problems = reasons.classify().1.join("\n");
    for want in [
        "entry a2a-spec §3.3.2 «Servers MUST validate every» matches no normative sentence",
        "entry a2a-spec §3.3.2 «Servers SHOULD» matches 8 sentences: give more of its text",
        "«Servers MUST validate all input parameters before processing» is spoken for with different reasons",
        "entry a2a-spec §10.6 «For A2A-specific errors» repeats rule 1",
        "entry a2a-spec §3.1.1 «The operation MUST return immediately» says testable, but no rule says otherwise",
        "§13.4 restates §3.3.2, which is not counted either",
        "names reason \"nope\", which \"reasons\" does not define",
        "rule 2 decides no sentence",
        "rule 3: subject is not a regular expression",
        "reason \"unused\" is named by no rule and no entry",
    ] {
        assert!(problems.contains(want), "missing «{want}» in:\n{problems}");
    }
    // The rule in error is not also reported as deciding nothing.
    assert!(!problems.contains("rule 3 decides no sentence"), "{problems}");
}

#[test]
fn a_check_quoting_a_sentence_verbatim_covers_it() {
    let reasons = Reasons::builtin().unwrap();
    let tests = [
        check("T-PART", "3.3.2", json!("Servers MUST validate all input parameters")),
        check(
            "T-TWO",
            "3.1.10",
            json!(
                "The operation MUST permanently remove the specified push notification configuration. No further \
                   notifications will be sent to the configured webhook after deletion. This operation MUST be \
                   idempotent - multiple deletions of the same config have the same effect."
            ),
        ),
        check(
            "T-PROTO",
            "3.1.3",
            json!([{"quote": "string id = 2 [(google.api.field_behavior) = REQUIRED];", "source": "a2a-proto"}]),
        ),
        check(
            "T-RPC",
            "5",
            json!([{"quote": "It MUST be the same as the value of the id member in the Request Object.", "source": "jsonrpc-2.0"}]),
        ),
        check("T-AGAIN", "13.4", json!("Agents MUST validate all input parameters before processing")),
    ];
    let c = Coverage::compute(&tests, &reasons);
    let validate = find(&c, Source::Spec, "Servers MUST validate all input parameters");
    assert_eq!(validate.quoted_by, ["T-PART"]);
    // §13.4 says §3.3.2 again: a check quoting it counts for §3.3.2, which is counted once.
    assert_eq!(validate.status, Status::Testable { checks: vec!["T-AGAIN".into(), "T-PART".into()], why: None });
    let again = find(&c, Source::Spec, "Agents MUST validate all input parameters");
    assert!(matches!(again.status, Status::Restates { .. }), "{:?}", again.status);
    for start in ["The operation MUST permanently remove", "This operation MUST be idempotent"] {
        assert!(find(&c, Source::Spec, start).is_covered(), "{start}");
    }
    let ids: Vec<&str> = c
        .sentences
        .iter()
        .filter(|t| t.quoted_by.iter().any(|id| id == "T-PROTO"))
        .filter_map(|t| t.sentence.field.as_deref())
        .collect();
    assert_eq!(ids, ["GetTaskRequest.id"], "the section picks one of the identical lines");
    assert!(find(&c, Source::JsonRpc, "It MUST be the same as the value of the id member").is_covered());
    assert_eq!(c.tally(None).covered, 5);
    assert!(c.share_line().starts_with("testable server sentences covered: 5 of "), "{}", c.share_line());
}

#[test]
fn each_sentence_quoted_where_it_stands_covers_itself_and_no_other() {
    // One check per normative sentence, quoting it whole from its place: the proto names the
    // definition, as a check does when several definitions hold the same line.
    let mut tests = Vec::new();
    for source in Source::ALL {
        for (i, s) in source.text().sentences().iter().enumerate() {
            let section = match source {
                Source::Proto => s.definition.clone().unwrap_or_default(),
                _ => s.section.clone().unwrap_or_default(),
            };
            let quote = json!([{"quote": s.text, "source": source.as_str()}]);
            tests.push(check(&format!("{}-{i}", source.as_str()), &section, quote));
        }
    }
    let c = Coverage::compute(&tests, &Reasons::builtin().unwrap());
    let t = c.tally(None);
    assert_eq!(t.covered, t.testable, "{}", c.share_line());
    for traced in &c.sentences {
        let s = traced.sentence;
        // Only a sentence written twice in one place (the deprecated OAuth flows' "This MUST be in the
        // form of a URL.") is quoted by both quotes.
        let twins = c
            .sentences
            .iter()
            .filter(|o| o.id.0 == s.source && o.sentence.text == s.text && o.sentence.definition == s.definition)
            .filter(|o| o.sentence.section == s.section)
            .count();
        assert_eq!(traced.quoted_by.len(), twins, "{} «{}»: {:?}", s.place(), s.text, traced.quoted_by);
    }
}

#[test]
fn the_command_prints_the_share_line_and_the_same_as_json() {
    let run = |args: &[&str]| {
        let out = Command::new(BIN).args(args).env("NO_COLOR", "1").output().expect("the binary runs");
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let text = run(&["coverage"]);
    let share = regex::Regex::new(r"(?m)^testable server sentences covered: (\d+) of (\d+) \((\d+\.\d)%\)$").unwrap();
    let caps = share.captures(&text).unwrap_or_else(|| panic!("no share line in:\n{text}"));
    for source in Source::ALL {
        assert!(text.contains(&format!("\n{}\n", source.title())), "no section for {}", source.title());
    }
    assert!(text.contains("untestable, grpc: "), "the reasons are printed");
    let v: Value = serde_json::from_str(&run(&["coverage", "--json"])).expect("JSON");
    assert_eq!(v["total"]["covered"].as_u64().unwrap().to_string(), caps[1]);
    assert_eq!(v["total"]["testable"].as_u64().unwrap().to_string(), caps[2]);
    assert_eq!(v["share"], caps[0]);
    assert_eq!(v["problems"], json!([]));
    let n: usize = Source::ALL.iter().map(|s| s.text().sentences().len()).sum();
    assert_eq!(v["sentences"].as_array().unwrap().len(), n);
    assert_eq!(v["sources"].as_array().unwrap().len(), 3);

    let gaps = run(&["coverage", "--gaps"]);
    assert!(gaps.starts_with("Gaps: "), "{gaps}");
    assert!(!gaps.contains("testable server sentences covered"), "--gaps prints only the gaps");
    let gaps_json: Value = serde_json::from_str(&run(&["coverage", "--json", "--gaps"])).unwrap();
    assert_eq!(gaps_json, v["gaps"]);
}

#[test]
fn the_gaps_are_the_testable_sentences_no_check_quotes() {
    let c = builtin().expect("the built-in coverage");
    let key = |t: &&a2a_conform::commands::coverage::Traced| (t.id.0, t.sentence.offset);
    let listed: Vec<_> = c.gaps().iter().flat_map(|g| g.sentences.clone()).collect();
    for t in &listed {
        assert!(t.quoted_by.is_empty() && t.is_testable(), "{} «{}»", t.sentence.place(), t.sentence.text);
    }
    let mut listed: Vec<_> = listed.iter().map(key).collect();
    let mut expected: Vec<_> = c
        .sentences
        .iter()
        .filter(|t| matches!(&t.status, Status::Testable { checks, .. } if checks.is_empty()))
        .map(|t| key(&t))
        .collect();
    listed.sort();
    expected.sort();
    assert_eq!(listed, expected, "every gap once, and nothing else");
    let text = a2a_conform::commands::coverage::gaps_text(&c);
    assert!(
        text.starts_with(&format!("Gaps: {} testable server sentences no check quotes\n", expected.len())),
        "{text}"
    );
    assert_eq!(c.checks, builtin_tests().unwrap().len());
}

#[test]
fn the_freedom_side_lists_what_no_freedom_shows_and_catches_a_wrong_member() {
    let out = Command::new(BIN).args(["coverage", "--freedoms"]).output().expect("the binary runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let first =
        regex::Regex::new(r"^(\d+) freedoms show (\d+) of (\d+) MAY sentences .*, and (\d+) of (\d+) optional members")
            .unwrap();
    let caps = first.captures(&text).unwrap_or_else(|| panic!("no summary in:\n{text}"));
    let out = Command::new(BIN).args(["coverage", "--freedoms", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["freedoms"].as_u64().unwrap().to_string(), caps[1]);
    let shown = |key: &str| v[key].as_array().unwrap().iter().filter(|m| m["freedoms"] != json!([])).count();
    assert_eq!(shown("sentences").to_string(), caps[2]);
    assert_eq!(v["sentences"].as_array().unwrap().len().to_string(), caps[3]);
    assert_eq!(shown("members").to_string(), caps[4]);
    assert_eq!(v["members"].as_array().unwrap().len().to_string(), caps[5]);
    // Every unshown member is printed, by its JSON name.
    for m in v["members"].as_array().unwrap().iter().filter(|m| m["freedoms"] == json!([])) {
        assert!(text.contains(m["json"].as_str().unwrap()), "{m} not printed");
    }

    use a2a_conform::commands::coverage::{FreedomCoverage, builtin};
    use a2a_conform::server::freedoms::FreedomCatalogue;
    let file = r#"[{"id": "FREEDOM-X", "section": "8.6.1",
        "allowed_by": ["Agent Card HTTP endpoints MAY include a `Last-Modified` response header"],
        "description": "x", "mock": {"no_push": true},
        "members": ["Task.metadata", "Task.bogus", "Task.id", "SendMessageRequest.metadata"]}]"#;
    let catalogue = FreedomCatalogue::from_texts(&[("x.json", file)]).expect("loads");
    let c = builtin().unwrap();
    let f = FreedomCoverage::compute(&c, &catalogue);
    assert_eq!(f.problems.len(), 3, "{:?}", f.problems);
    assert!(f.problems[0].contains("no member Task.bogus"), "{:?}", f.problems);
    assert!(f.problems[1].contains("Task.id is REQUIRED"), "{:?}", f.problems);
    assert!(f.problems[2].contains("a request"), "{:?}", f.problems);
    let metadata = f.members.iter().find(|m| m.choice.path() == "Task.metadata").unwrap();
    assert_eq!(metadata.freedoms, ["FREEDOM-X"]);
    let modified = f.sentences.iter().find(|s| s.choice.sentence.text.contains("MAY include a Last-Modified")).unwrap();
    assert_eq!(modified.freedoms, ["FREEDOM-X"]);
}

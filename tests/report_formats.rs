//! The renderings of one report, each validated: SARIF against the official SARIF 2.1.0 schema
//! (`fixtures/sarif/`), the HTML page for being self-contained and telling every story, the
//! Markdown summary for fitting a pull-request comment, and a report with a baseline against the
//! report schema. Every rendering of a finding gives the spec's words (each quote with its place),
//! then the kit's reading, then what the agent did, also for a report written before quotes
//! existed. (The page's script is exercised in a real browser by `tests/html_browser.rs`.)

use std::collections::BTreeSet;

use a2a_conform::report::baseline::{Baseline, parse_date};
use a2a_conform::report::files::{FileSink, Format};
use a2a_conform::report::html::{esc, to_html};
use a2a_conform::report::json::{Report, to_json_string};
use a2a_conform::report::markdown::{MAX_FINDINGS, to_markdown};
use a2a_conform::report::sarif::{FINGERPRINT_KEY, to_sarif};
use a2a_conform::report::terminal::render;
use a2a_conform::report::{Level, Outcome, RunEvent, Sink, Verdict, quotes};
use serde_json::Value;

#[path = "common/sample.rs"]
mod sample;
#[path = "common/schema.rs"]
mod schema;

fn sarif_validator() -> jsonschema::Validator {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sarif/sarif-schema-2.1.0.json");
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // The schema's `language` patterns have a stray `]`, a literal in ECMA-262 that the validator's
    // check of the meta-schema's `format: regex` refuses. Escaping it means the same.
    assert_eq!(escape_stray_bracket(&mut schema), 2, "the fixture changed");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

/// Rewrites each `"pattern": "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$"`; returns how many.
fn escape_stray_bracket(v: &mut Value) -> usize {
    const STRAY: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    match v {
        Value::Object(m) => {
            let mut n = 0;
            if m.get("pattern").and_then(Value::as_str) == Some(STRAY) {
                m.insert("pattern".into(), Value::from(r"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\]?$"));
                n += 1;
            }
            n + m.values_mut().map(escape_stray_bracket).sum::<usize>()
        }
        Value::Array(a) => a.iter_mut().map(escape_stray_bracket).sum(),
        _ => 0,
    }
}

fn assert_valid_sarif(v: &Value) {
    let errors = schema::violations_of(&sarif_validator(), v);
    assert!(
        errors.is_empty(),
        "not valid SARIF 2.1.0:\n{}\n{}",
        errors.join("\n"),
        serde_json::to_string_pretty(v).unwrap()
    );
}

#[test]
fn sarif_validates_against_the_official_schema() {
    let report = sample::report();
    let sarif = to_sarif(&report);
    assert_valid_sarif(&sarif);
    // The validator is not vacuous: a result without its message is refused.
    let mut broken = sarif.clone();
    broken["runs"][0]["results"][0].as_object_mut().unwrap().remove("message");
    assert!(!schema::violations_of(&sarif_validator(), &broken).is_empty());
    let mut bad_level = sarif.clone();
    bad_level["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!schema::violations_of(&sarif_validator(), &bad_level).is_empty());
}

#[test]
fn sarif_has_one_rule_per_check_and_one_result_per_finding() {
    let report = sample::report();
    let sarif = to_sarif(&report);
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let rule_ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let check_ids: Vec<&str> = report.checks().map(|r| r.id.as_str()).collect();
    assert_eq!(rule_ids, check_ids, "one rule per check id, in report order");
    let send = &rules[1];
    assert_eq!(send["defaultConfiguration"]["level"], "error");
    // The rule is the spec's words: each quote with its place, then the kit's reading, labelled.
    let mut words: Vec<String> = sample::send_quotes().iter().map(quotes::quoted).collect();
    words.push(format!("kit's reading: {}", sample::READING));
    assert_eq!(send["fullDescription"]["text"], words.join("\n"));
    assert_eq!(send["help"]["text"], format!("§3.1.1 (MUST)\n{}", words.join("\n")));
    assert_eq!(rules[0]["fullDescription"]["text"], "“The server MUST do what CORE-CARD-001 checks.” — A2A 1.0 §3.1.1");
    assert_eq!(send["properties"]["specSection"], "3.1.1");

    let results = run["results"].as_array().unwrap();
    let finding_ids: BTreeSet<&str> = report
        .checks()
        .filter(|r| {
            matches!(r.outcome, Outcome::Fail | Outcome::Warn | Outcome::Error)
                || (r.outcome == Outcome::Info && r.failure.is_some())
        })
        .map(|r| r.id.as_str())
        .collect();
    let result_ids: BTreeSet<&str> = results.iter().map(|r| r["ruleId"].as_str().unwrap()).collect();
    assert_eq!(result_ids, finding_ids);
    for r in results {
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rule_ids[idx], r["ruleId"], "ruleIndex points at the rule");
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
        assert!(!uri.contains("://") && !uri.is_empty(), "code scanning takes repository-relative locations: {uri}");
    }
    let by_id = |id: &str| results.iter().find(|r| r["ruleId"] == id).unwrap();
    assert_eq!(
        (by_id("CORE-SEND-001")["kind"].as_str(), by_id("CORE-SEND-001")["level"].as_str()),
        (Some("fail"), Some("error"))
    );
    assert_eq!(by_id("CORE-CT-002")["level"], "warning");
    assert_eq!(
        (by_id("STREAM-SUB-001")["kind"].as_str(), by_id("STREAM-SUB-001")["level"].as_str()),
        (Some("review"), Some("none"))
    );
    assert_eq!(by_id("KIT-MAY-001")["level"], "note");
    let send = by_id("CORE-SEND-001");
    // A result says what the agent did; the words it broke are its rule's.
    assert_eq!(send["message"]["text"], "SendMessage answered HTTP 500 for task task-1 (at /result)");
    assert!(send["properties"]["curl"].as_str().unwrap().starts_with("curl -X POST"));
    assert_eq!(
        send["properties"]["undecidedDependents"],
        serde_json::json!(["CORE-GET-001", "CORE-LIST-001", "CORE-CANCEL-001"])
    );
    assert_eq!(run["originalUriBaseIds"]["AGENT"]["uri"], "http://127.0.0.1:41241/");
    assert_eq!(run["invocations"][0]["exitCode"], 1);
}

#[test]
fn sarif_fingerprints_are_stable_across_runs() {
    let fingerprints = |r: &Value| -> Vec<(String, String)> {
        r["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["ruleId"].as_str().unwrap().to_owned(),
                    x["partialFingerprints"][FINGERPRINT_KEY].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    // Another run: another port, run id, task id in the messages.
    let a = fingerprints(&to_sarif(&sample::report_on(41241, "run-1", "task-1")));
    let b = fingerprints(&to_sarif(&sample::report_on(50123, "run-2", "task-9")));
    assert_eq!(a, b);
    let distinct: BTreeSet<&String> = a.iter().map(|(_, f)| f).collect();
    assert_eq!(distinct.len(), a.len(), "different findings have different fingerprints");
    // Locations do not depend on the port either.
    let loc = |r: &Value| r["runs"][0]["results"][0]["locations"].clone();
    assert_eq!(loc(&to_sarif(&sample::report_on(1, "a", "t"))), loc(&to_sarif(&sample::report_on(2, "b", "u"))));
}

fn with_baseline(text: &str) -> a2a_conform::report::json::Report {
    let b = Baseline::parse(text, "baseline.yaml").unwrap();
    let mut report = sample::report();
    let results: Vec<_> = report.checks().cloned().collect();
    let applied = b.judge(&results, parse_date("2026-01-31").unwrap());
    let (status, reasons) = a2a_conform::report::baseline::verdict(&results, &applied);
    report.overlay(&applied);
    report.verdict.status = status;
    report.verdict.exit_code = status.exit_code();
    report.verdict.reasons = reasons;
    report
}

const BASELINE: &str = "entries:
  - {id: CORE-SEND-001, reason: 'tracked in #12'}
  - {id: CORE-HOSTILE-001, reason: known, expires: 2027-01-01}
  - {id: CORE-CARD-001, reason: was broken}
  - {id: NO-SUCH-CHECK, reason: renamed}
  - {id: PUSH-SKIP-FILTERED, reason: optional}
";

#[test]
fn a_report_with_a_baseline_matches_the_report_schema() {
    let report = with_baseline(BASELINE);
    let value = serde_json::to_value(&report).unwrap();
    let errors = schema::violations_of(&schema::compile_file("reports/report.schema.json"), &value);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert_eq!(value["results"][1]["baseline_status"], "accepted");
    assert_eq!(value["results"][0]["baseline_status"], "stale");
    assert_eq!(value["baseline"]["entries"][3]["status"], "unknown");
    assert_eq!(value["baseline"]["entries"][4]["status"], "skipped");
    // Stale: the run fails although both failures are accepted.
    assert_eq!(report.verdict.status, Verdict::NonConformant);
    assert!(report.verdict.reasons[0].contains("CORE-CARD-001 now passes"), "{:?}", report.verdict.reasons);
    // Accepted failures are suppressed in SARIF, with the baseline's reason.
    let sarif = to_sarif(&report);
    assert_valid_sarif(&sarif);
    let send = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "CORE-SEND-001")
        .unwrap()
        .clone();
    assert_eq!(send["suppressions"][0]["status"], "accepted");
    assert_eq!(send["suppressions"][0]["justification"], "tracked in #12");
    // JUnit agrees with the verdict: the accepted failure is skipped with its reason, the stale
    // entry is a failure.
    let junit = quick_junit::Report::deserialize_from_str(&a2a_conform::report::junit::to_junit(&report)).unwrap();
    let case = |id: &str| {
        junit
            .test_suites
            .iter()
            .flat_map(|s| s.test_cases.iter())
            .find(|c| c.name.as_str().starts_with(id))
            .unwrap()
            .clone()
    };
    match case("CORE-SEND-001:").status {
        quick_junit::TestCaseStatus::Skipped { message, .. } => {
            assert_eq!(message.unwrap().as_str(), "accepted by the baseline: tracked in #12")
        }
        other => panic!("an accepted failure is {other:?}"),
    }
    match case("CORE-CARD-001:").status {
        quick_junit::TestCaseStatus::NonSuccess { kind, message, .. } => {
            assert_eq!(kind, quick_junit::NonSuccessKind::Failure);
            assert!(message.unwrap().as_str().starts_with("stale baseline entry"));
        }
        other => panic!("a stale entry is {other:?}"),
    }
    // And shown in the other renderings.
    assert!(to_html(&report).contains("baseline: accepted"));
    let md = to_markdown(&report);
    assert!(md.contains("**Baseline** `baseline.yaml`") && md.contains("1 stale (`CORE-CARD-001`)"), "{md}");
}

/// Elements of `html` that load something: none may point off the page.
fn external_references(html: &str) -> Vec<String> {
    let re = regex::Regex::new(r#"(?i)\b(src|href|action|data)\s*=\s*"([^"]*)""#).unwrap();
    re.captures_iter(html).map(|c| c[2].to_owned()).filter(|v| !v.starts_with('#')).collect()
}

#[test]
fn the_html_page_is_self_contained_and_tells_every_story() {
    let report = sample::report();
    let html = to_html(&report);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    assert_eq!(external_references(&html), Vec::<String>::new(), "the page loads nothing");
    assert!(!html.contains("<link") && !html.contains("@import") && !html.contains("url("));
    // The hostile message is text, never markup.
    assert!(!html.contains(sample::HOSTILE));
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_eq!(html.matches("<script>").count(), 1);
    // A bar per profile.
    for p in report.profiles_in_order() {
        assert!(html.contains(&format!("<div class=\"profile\" data-profile=\"{p}\">")), "no bar for {p}");
    }
    // Every check is a row of the table.
    for r in report.checks() {
        assert!(
            html.contains(&format!("<tr id=\"c-{}\" data-outcome=\"{}\"", r.id, r.outcome.as_str())),
            "no row for {}",
            r.id
        );
    }
    // Findings by root cause: the failed prerequisite names what it left undecided, and the three
    // identical errors are one story.
    let send = &html[html.find("id=\"f-CORE-SEND-001\"").unwrap()..];
    let send = &send[..send.find("</article>").unwrap()];
    assert!(send.contains("§3.1.1 · MUST"));
    assert!(
        send.contains("<span class=\"del\">-       &quot;state&quot;: &quot;TASK_STATE_COMPLETED&quot;</span>"),
        "{send}"
    );
    assert!(
        send.contains("<span class=\"ins\">+       &quot;state&quot;: &quot;TASK_STATE_WORKING&quot;</span>"),
        "{send}"
    );
    assert!(send.contains("<pre class=\"curl\">curl -X POST"));
    assert!(send.contains("authorization: [REDACTED]"));
    assert!(send.contains("3 check(s) depend on it and were not decided"), "{send}");
    // The three identical errors: one cause, its root in full, the other two folded under it.
    let told = &html[html.find("<section id=\"findings\">").unwrap()..];
    let errors = between(told, "<p class=\"evidence\">the agent stopped answering", "</section>");
    assert!(errors.contains("2 more check(s) ended the same way"), "{errors}");
    assert!(errors.contains("<details class=\"members\"><summary>The 2 other finding(s) of this cause</summary>"));
    assert_eq!(errors.matches("<article class=\"finding o-error\"").count(), 3);
    assert_eq!(html.matches("<section class=\"cause\"").count(), 7);
}

#[test]
fn markdown_fits_a_pull_request_comment() {
    let report = sample::report();
    let md = to_markdown(&report);
    assert!(md.starts_with("### ❌ A2A conformance: **non-conformant** over "), "{md}");
    assert!(md.lines().next().unwrap().ends_with("(exit 1)"), "{md}");
    assert!(md.contains("| core | "));
    // A cause is its headline, then its root's finding.
    assert!(
        md.contains(&format!(
            "- **MUST** Not met: title of CORE-SEND-001 (§3.1.1 MUST) (3 checks wait on it)\n  <br>CORE-SEND-001: \
             {SEND_MESSAGE}\n  **FAIL** `CORE-SEND-001` §3.1.1 MUST\n  {SEND_MESSAGE};"
        )),
        "{md}"
    );
    assert!(md.contains("**Findings**: 9 findings in 7 root causes ("), "{md}");
    assert!(md.contains("3 check(s) depend on it (`CORE-GET-001`, `CORE-LIST-001`, `CORE-CANCEL-001`)"), "{md}");
    assert!(md.contains("2 more ended the same way"));
    assert!(!md.contains("<script>") && !md.contains(" | `x` <b>"), "hostile text is neutralised: {md}");
    // Every table row has the table's columns, whatever the text.
    for line in md.lines().filter(|l| l.starts_with('|')) {
        assert_eq!(line.replace("\\|", "").matches('|').count(), 9, "{line}");
    }

    // A big run stays short: the causes are capped, the rest counted. Each finding here has three
    // quotes and a reading (ten lines); a comment is bounded in characters (GitHub: 65,536).
    // `distinct`: each added finding has a wrong value of its own, else all share the root's.
    let big = |n: usize, distinct: bool| {
        let mut big = sample::report();
        let template = big.results[1].clone();
        for i in 0..n {
            let mut r = template.clone();
            r.result.id = format!("GEN-{i:03}");
            let failure = r.result.failure.as_mut().unwrap();
            failure.message = format!("failure {i} {}", "x".repeat(400));
            if distinct {
                // Spelled in letters: digits in a value are what a run makes up, and causes blank them.
                let word: String = i.to_string().bytes().map(|d| char::from(b'a' + (d - b'0'))).collect();
                failure.actual = Some(format!("{{\"state\": \"wrong {word}\"}}"));
                // A defect of its own: another member, another title (the same member found wrong
                // by checks of one title is one cause, whatever the values).
                failure.pointer = Some(format!("/result/{word}"));
                r.result.title = format!("Generated check {word}");
            }
            big.results.push(r);
        }
        // The causes are derived from the results, as a run derives them.
        big.derive();
        big
    };
    let md = to_markdown(&big(300, true));
    // Headlines are never cut (here each holds its 400-character reason), so the bound is half a
    // GitHub comment.
    assert!(md.len() < 32_000, "{} bytes", md.len());
    assert_eq!(md.lines().count(), to_markdown(&big(600, true)).lines().count(), "more findings, no more lines");
    assert_eq!(md.lines().filter(|l| l.starts_with("- **")).count(), MAX_FINDINGS);
    assert!(md.contains("more root cause(s): see the HTML report"));

    // The honest count: 300 more findings that share the root's fingerprint are one more story of
    // it, not 300 root causes, in every rendering.
    let same = big(300, false);
    assert_eq!(same.causes.len(), 7);
    assert_eq!(same.causes[0].findings.len(), 301);
    assert!(to_markdown(&same).contains("**Findings**: 309 findings in 7 root causes ("));
    assert!(to_html(&same).contains("<small>309 findings in 7 root causes ("));
    assert!(render(&same, false).contains("Findings: 309 findings in 7 root causes ("));
    assert!(render(&same, false).contains("300 more check(s) ended the same way: GEN-000, GEN-001,"));
}

#[test]
fn every_format_is_a_rendering_of_the_same_events() {
    let report = sample::report();
    let dir = std::env::temp_dir().join(format!("a2a-conform-formats-{}", std::process::id()));
    let mut sinks: Vec<FileSink> = Format::ALL.iter().map(|f| FileSink::new(*f, &dir)).collect();
    let mut events = vec![RunEvent::RunStarted {
        info: Box::new(sample::info(41241, "run-1")),
        planned: report.checks().map(|r| r.id.clone()).collect(),
    }];
    for r in report.checks() {
        events.push(RunEvent::CheckFinished(Box::new(r.clone())));
    }
    events.push(RunEvent::RunFinished {
        verdict: report.verdict.status,
        reasons: report.verdict.reasons.clone(),
        duration_ms: 1234,
        finished_at: report.generated_at.clone(),
    });
    for ev in &events {
        sinks.event(ev);
    }
    let mut names = Vec::new();
    for (format, sink) in Format::ALL.iter().zip(&sinks) {
        let path = sink.outcome().unwrap().unwrap().to_path_buf();
        names.push(path.file_name().unwrap().to_string_lossy().into_owned());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format.render(&report), "{format:?}");
        assert_eq!(Format::from_name(format.name()), Some(*format));
    }
    assert_eq!(names, ["report.json", "junit.xml", "acts-report.json", "report.html", "report.sarif", "report.md"]);
    std::fs::remove_dir_all(&dir).ok();
    // Unused here, but the sample covers every level.
    assert!(report.checks().any(|r| r.level == Level::May));
}

/// The part of `text` from `start` to the next `end` after it (or to the end).
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("{start:?} not in:\n{text}"));
    let rest = &text[from..];
    rest[start.len()..].find(end).map_or(rest, |i| &rest[..start.len() + i])
}

/// `text` with every run of whitespace one space: a wrapped line reads as the words it holds.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

const SEND_MESSAGE: &str = "SendMessage answered HTTP 500 for task task-1";

#[test]
fn every_rendering_gives_the_spec_words_the_reading_and_what_the_agent_did() {
    let report = sample::report();
    let quotes = sample::send_quotes();
    let placed = || quotes.iter().zip(sample::SEND_PLACES);

    // Terminal: wrapped to 100 columns, and not a word of a quote, its place or the reading lost.
    let text = render(&report, false);
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let block = between(&text, "FAIL  CORE-SEND-001", "\nFAIL ");
    assert!(block.lines().filter(|l| l.starts_with("       ")).count() >= 3, "the long quote wraps:\n{block}");
    let mut words: Vec<String> = placed().map(|(q, place)| format!("“{}” — {place}", q.text)).collect();
    words.push(format!("kit's reading: {}", sample::READING));
    words.push(SEND_MESSAGE.into());
    sample::assert_in_order(&flat(block), &words, "terminal");

    // JUnit: the failure text in the same order, and a property per quote.
    let junit = quick_junit::Report::deserialize_from_str(&a2a_conform::report::junit::to_junit(&report)).unwrap();
    let case = junit.test_suites.iter().flat_map(|s| &s.test_cases).find(|c| c.name.starts_with("CORE-SEND-001"));
    let case = case.unwrap();
    let quick_junit::TestCaseStatus::NonSuccess { description, .. } = &case.status else { panic!("{case:?}") };
    let mut lines: Vec<String> = placed().map(|(q, place)| format!("“{}” — {place}\n", q.text)).collect();
    lines.push(format!("kit's reading: {}\n", sample::READING));
    lines.push(format!("message: {SEND_MESSAGE}"));
    sample::assert_in_order(description.as_ref().unwrap().as_str(), &lines, "junit");
    let property = |name: &str| -> Vec<String> {
        case.properties.iter().filter(|p| p.name.as_str() == name).map(|p| p.value.to_string()).collect()
    };
    let expected: Vec<String> = placed().map(|(q, place)| format!("“{}” — {place}", q.text)).collect();
    assert_eq!(property("spec_quote"), expected);
    assert_eq!(property("interpretation"), [sample::READING]);

    // SARIF: the rule carries the words (tested above); the result only what the agent did.
    let sarif = to_sarif(&report);
    let result = sarif["runs"][0]["results"].as_array().unwrap().iter().find(|r| r["ruleId"] == "CORE-SEND-001");
    let message = result.unwrap()["message"]["text"].as_str().unwrap();
    assert!(message.starts_with(SEND_MESSAGE) && !message.contains(&quotes[2].text), "{message}");

    // HTML: what the agent did first, then a <blockquote> per quote with a <cite> of its place (the
    // one whose keyword decides the finding first, the others folded with the reading), the reading
    // in its own labelled element (never a quote), all escaped.
    let html = to_html(&report);
    let article = between(&html, "id=\"f-CORE-SEND-001\"", "</article>");
    let mut parts = vec![format!("<p class=\"msg\">{SEND_MESSAGE}</p>")];
    parts.extend(
        placed().map(|(q, place)| format!("<blockquote>{}</blockquote><figcaption><cite>{place}</cite>", esc(&q.text))),
    );
    parts.insert(2, "<details class=\"words\"><summary>".into());
    parts
        .push(format!("<p class=\"reading\"><span class=\"label\">Kit's reading:</span> {}</p>", esc(sample::READING)));
    parts.push("</details>".into());
    sample::assert_in_order(article, &parts, "html");
    assert_eq!(article.matches("<blockquote>").count(), 3);
    assert!(!html.contains(sample::READING), "the reading is escaped");

    // Markdown: the reason, then `>` lines with the place (the deciding one first, the others
    // folded with the reading), the reading as a paragraph of its own (a blank line ends the quote).
    let md = to_markdown(&report);
    let item = between(&md, "**FAIL** `CORE-SEND-001`", "\n- **");
    let mut lines = vec![format!("  {SEND_MESSAGE};")];
    lines.extend(placed().map(|(q, place)| format!("\n  > “{}” — {place}\n", q.text)));
    lines.insert(2, "  <details><summary>".into());
    lines.push(
        "\n  *Kit's reading:* an HTTP 500 is neither &lt;b&gt;task information&lt;/b&gt; nor a response message \\| \
         so the check fails\n\n"
            .into(),
    );
    lines.push("  </details>".into());
    sample::assert_in_order(item, &lines, "markdown");
}

#[test]
fn a_check_with_no_keyword_sentence_is_told_with_its_words_and_reading() {
    let report = sample::report();
    let info = report.checks().find(|r| r.id == "KIT-INFO-001").unwrap();
    let place = "A2A 1.0 a2a.proto Artifact";
    // JUnit: a passing case whose note tells the finding as a warning's is told.
    let junit = quick_junit::Report::deserialize_from_str(&a2a_conform::report::junit::to_junit(&report)).unwrap();
    let case = junit.test_suites.iter().flat_map(|s| &s.test_cases).find(|c| c.name.starts_with("KIT-INFO-001"));
    let case = case.unwrap();
    assert!(matches!(case.status, quick_junit::TestCaseStatus::Success { .. }), "{case:?}");
    sample::assert_in_order(
        case.system_out.as_ref().unwrap().as_str(),
        &[
            "info: the artifact has no name\n".into(),
            format!("“A human readable name for the artifact.” — {place}\n"),
            format!("kit's reading: {}\n", info.spec.interpretation.as_deref().unwrap()),
            "message: the artifact has no name".into(),
        ],
        "junit",
    );
    let sarif = to_sarif(&report);
    let rule = sarif["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap().iter().find(|r| r["id"] == info.id);
    let text = rule.unwrap()["fullDescription"]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("“A human readable name for the artifact.” — {place}\nkit's reading: ")),
        "{text}"
    );
    assert_eq!(rule.unwrap()["defaultConfiguration"]["level"], "note");
}

#[test]
fn a_report_of_schema_1_2_0_renders_its_requirement_as_the_quote() {
    // What a 1.2.0 report says of a check: a section and the requirement on one line.
    let mut old = serde_json::to_value(sample::report()).unwrap();
    old["schema_version"] = "1.2.0".into();
    old["summary"]["by_level"].as_object_mut().unwrap().remove("info");
    let results = old["results"].as_array_mut().unwrap();
    results.retain(|r| r["level"] != "info");
    for r in results {
        let spec = r["spec"].as_object_mut().unwrap();
        assert!(spec.remove("quotes").is_some());
        spec.remove("interpretation");
    }
    let dir = std::env::temp_dir().join(format!("a2a-conform-old-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("report.json");
    std::fs::write(&path, serde_json::to_string_pretty(&old).unwrap()).unwrap();
    let report: Report = a2a_conform::commands::report::read_report(&path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(report.checks().all(|r| r.spec.quotes.is_empty() && r.spec.interpretation.is_none()));

    let requirement = &report.results[1].result.spec.requirement;
    assert!(requirement.starts_with("The agent MAY create") && requirement.contains(" … "), "{requirement}");
    let quoted = format!("“{requirement}” — A2A 1.0 §3.1.1");
    for format in Format::ALL {
        assert!(!format.render(&report).is_empty(), "{format:?}");
    }
    sample::assert_in_order(&flat(&render(&report, false)), &[quoted.clone(), SEND_MESSAGE.into()], "terminal");
    let junit = a2a_conform::report::junit::to_junit(&report);
    sample::assert_in_order(
        between(&junit, "name=\"CORE-SEND-001", "</testcase>"),
        std::slice::from_ref(&quoted),
        "junit",
    );
    let sarif = to_sarif(&report);
    assert_eq!(sarif["runs"][0]["tool"]["driver"]["rules"][1]["fullDescription"]["text"], quoted.as_str());
    let html = to_html(&report);
    sample::assert_in_order(
        between(&html, "id=\"f-CORE-SEND-001\"", "</article>"),
        &[format!("<blockquote>{}</blockquote><figcaption><cite>A2A 1.0 §3.1.1</cite>", esc(requirement))],
        "html",
    );
    sample::assert_in_order(&to_markdown(&report), &[format!("  > {quoted}\n")], "markdown");
    // The JSON report reads back as it was written: no quotes are made up.
    let back: Value = serde_json::from_str(&to_json_string(&report)).unwrap();
    assert!(back["results"][1]["spec"].get("quotes").is_none());
}

#[test]
fn two_runs_of_one_agent_give_the_same_causes() {
    // Another port, run and task ids: the same agent, the same stories under the same ids.
    let (a, b) = (sample::report_on(41241, "run-1", "task-1"), sample::report_on(50123, "run-2", "task-9f3a77c1"));
    let ids = |r: &Report| r.causes.iter().map(|c| (c.id.clone(), c.root.clone())).collect::<Vec<_>>();
    assert_eq!(ids(&a), ids(&b));
    assert!(a.causes.iter().all(|c| c.id.starts_with("C-") && c.id.len() == 14));
    // report.json carries them, and a report read back keeps them.
    let value: Value = serde_json::from_str(&to_json_string(&a)).unwrap();
    assert_eq!(value["causes"].as_array().unwrap().len(), a.causes.len());
    assert_eq!(value["causes"][0]["root"], "CORE-SEND-001");
    assert_eq!(value["verdict"]["graded"]["must"]["applicable"], 12);
    assert_eq!(value["verdict"]["graded"]["must"]["not_graded"]["depends_on_failed"], 3);
}

#[test]
fn a_hint_at_the_end_of_a_note_or_a_reason_is_never_cut() {
    let hint = "pass --rpc-url with http://";
    let why = format!(
        "the JSON-RPC interface https://agent.example:8443/a2a/v1/jsonrpc cannot be reached: cannot connect: tls \
         handshake eof (the card advertises https; if the agent speaks plain HTTP there, {hint})"
    );
    let mut report = sample::report();
    report.target.notes.push(why.clone());
    report.verdict.reasons.push(why.clone());
    let text = render(&report, false);
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert_eq!(flat(&text).matches(&why).count(), 2, "{text}");
    assert!(to_markdown(&report).contains(&why));
    assert!(to_html(&report).contains(&esc(&why)));
}

#[test]
fn every_rendering_states_the_same_counts() {
    let report = sample::report();
    let c = report.summary.causes;
    // The counts are the causes' own, counted once when the report was built.
    assert_eq!(c.causes as usize, report.causes.len());
    assert_eq!(c.findings as usize, report.causes.iter().map(|x| x.findings.len()).sum::<usize>());
    assert_eq!(c.waiting as usize, report.causes.iter().map(|x| x.waiting.len()).sum::<usize>());
    assert_eq!(c.by_level.must + c.by_level.should + c.by_level.may + c.by_level.info, c.causes);
    assert!(c.causes > c.failing && c.failing > 0, "the sample has causes beside the failing ones: {c:?}");
    let line = c.statement();
    assert!(line.contains(&format!("{} root causes", c.causes)), "{line}");
    // The verdict says of how many of those causes it rests on, in every rendering that gives it.
    let reason = format!("from {} of the {} root causes", c.failing, c.causes);
    assert!(report.verdict.reasons[0].contains(&reason), "{:?}", report.verdict.reasons);
    let sarif = to_sarif(&report);
    let props = &sarif["runs"][0]["properties"];
    assert_eq!(props["findingsLine"], line.as_str());
    assert_eq!(props["causes"]["findings"], c.findings);
    let renderings =
        [("terminal", render(&report, false)), ("markdown", to_markdown(&report)), ("html", to_html(&report))];
    for (name, text) in &renderings {
        let text = flat(text);
        assert!(text.contains(&flat(&line)), "{name} states the counts: {line}\n{text}");
        assert!(text.contains(&reason), "{name} gives the verdict's reason");
        // No other count of the causes.
        assert!(!text.contains("root cause(s)"), "{name} counts again");
    }
    let round: Report = serde_json::from_str(&to_json_string(&report)).unwrap();
    assert_eq!(round.summary.causes, c, "report.json carries them");
}

#[test]
fn every_rendering_opens_with_what_to_fix_first() {
    let report = sample::report();
    let (items, _) = a2a_conform::report::fix_first::of(&report);
    let musts: Vec<&str> =
        report.causes.iter().filter(|c| c.level == Level::Must).map(|c| c.headline.as_str()).collect();
    assert!(!musts.is_empty() && items.len() >= musts.len(), "the sample has MUST causes");
    // MUST before SHOULD, in the report's order, never an info or MAY cause.
    let listed: Vec<&str> = items.iter().map(|i| i.cause.headline.as_str()).collect();
    assert_eq!(&listed[..musts.len()], &musts[..]);
    assert!(items.iter().all(|i| matches!(i.cause.level, Level::Must | Level::Should)));
    let sentence = items[0].sentence.as_ref().expect("the root check quotes its sentence");
    assert!(sentence.text.contains("MUST") || sentence.text.contains("REQUIRED"), "{}", sentence.text);
    let renderings = [
        ("terminal", render(&report, false), "Findings:"),
        ("markdown", to_markdown(&report), "**Findings**"),
        ("html", to_html(&report), "<section id=\"findings\">"),
    ];
    for (name, text, findings) in &renderings {
        let text = flat(text);
        let at = text.find("Fix first").unwrap_or_else(|| panic!("{name} has no Fix first"));
        assert!(at < text.find(flat(findings).as_str()).unwrap(), "{name}: Fix first comes before the findings");
        // Each headline's words up to its first colon: the rest is the agent's text, escaped apart.
        let heads: Vec<String> =
            items.iter().map(|i| flat(i.cause.headline.split(':').next().unwrap_or_default())).collect();
        sample::assert_in_order(&text[at..], &heads, name);
        assert!(text.contains(&flat(&escaped(name, &sentence.text))), "{name} gives the deciding sentence");
    }
}

/// `s` as rendering `name` writes text: escaped in HTML.
fn escaped(name: &str, s: &str) -> String {
    if name == "html" { esc(s) } else { s.to_owned() }
}

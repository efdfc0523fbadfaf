//! `reports/examples/` holds the reports of the built-in suites against the clean mock and against
//! two faulty mocks (as `a2a-conform mock --fault ID` serves them), each rendered in every format,
//! and the `report diff` of clean against each faulty one. This test runs the three checks again
//! and fails when the committed reports no longer match them in structure and outcomes (times,
//! durations, run ids, ports and generated ids are normalized away), or when a committed rendering
//! is not what the committed report renders to.
//!
//! Regenerate them with one command:
//!
//! ```sh
//! A2A_CONFORM_BLESS=1 cargo test --test examples
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use a2a_conform::commands::check::{self, CheckOptions};
use a2a_conform::report::baseline::{self, Baseline, parse_date};
use a2a_conform::report::compare::{compare, to_text};
use a2a_conform::report::files::Format;
use a2a_conform::report::json::{Report, to_json_string};
use a2a_conform::report::{EntryStatus, Outcome, Verdict};
use a2a_conform::server::MockConfig;
use a2a_conform::server::faults::FaultCatalogue;
use a2a_conform::suite::behaviors::Behaviors;
use regex::Regex;
use sha2::{Digest, Sha256};

/// The faulty mocks of the examples: one that breaks SendMessage (a cascade of dependent checks)
/// and one that breaks a single method.
const FAULTS: [&str; 2] = ["FAULT-BARE-TASK", "FAULT-CANCEL-NOT-CANCELABLE-CODE"];

/// The address every example says the mock was on.
const EXAMPLE_HOST: &str = "127.0.0.1:41241";
/// The time every example says it ran at.
const EXAMPLE_TIME: &str = "2026-01-01T00:00:00Z";

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reports/examples")
}

fn dir_name(fault: Option<&str>) -> String {
    match fault {
        None => "clean".into(),
        Some(f) => format!("fault-{}", f.trim_start_matches("FAULT-").to_ascii_lowercase().replace('_', "-")),
    }
}

/// Checks the mock, clean or committing `fault`, as `check` does: every built-in check, the ACTS
/// behaviours, the extended card's token. One check at a time, so that the order of what the kit
/// sees (and so each message) is the same every run.
async fn run(fault: Option<&str>) -> (Report, String) {
    let faults = match fault {
        None => Vec::new(),
        Some(id) => vec![FaultCatalogue::builtin().expect("catalogue").get(id).expect("the fault exists")],
    };
    let (server, auth) =
        check::start_mock_with(MockConfig { faults, ..MockConfig::default() }).await.expect("mock starts");
    let url = server.url().to_owned();
    let mut opts = CheckOptions { behaviors: Behaviors::Acts, jobs: 1, ..CheckOptions::new(url.clone()) };
    auth.apply(&mut opts);
    let report = check::run(&opts, &mut ()).await.expect("the run starts");
    server.shutdown().await;
    (report, url)
}

/// The report as committed: fixed run id and times, no durations, the mock on [`EXAMPLE_HOST`],
/// other local ports, UUIDs, timestamps and HTTP dates replaced in order of first appearance, and
/// the card digest computed over the card as normalized.
fn normalize(report: &Report, name: &str, url: &str) -> Report {
    let mut r = report.clone();
    r.run.id = format!("example-{name}");
    r.run.started_at = EXAMPLE_TIME.into();
    r.generated_at = EXAMPLE_TIME.into();
    r.run.duration_ms = 0;
    r.summary.duration_ms = 0;
    for x in &mut r.results {
        x.result.duration_ms = 0;
        for e in &mut x.result.evidence {
            e.elapsed_ms = 0;
        }
    }
    let mut text = to_json_string(&r);
    let mock_port = url.rsplit(':').next().unwrap_or_default().trim_end_matches('/').to_owned();
    let mut ports: HashMap<String, String> = HashMap::new();
    ports.insert(mock_port, EXAMPLE_HOST.rsplit(':').next().unwrap().to_owned());
    text = replace_in_order(&text, r"127\.0\.0\.1:(\d+)", |caps, n| {
        let port = ports.entry(caps[1].to_owned()).or_insert_with(|| (41250 + n).to_string()).clone();
        format!("127.0.0.1:{port}")
    });
    text = Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
        .unwrap()
        .replace_all(&text, EXAMPLE_TIME)
        .into_owned();
    text = Regex::new(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT")
        .unwrap()
        .replace_all(&text, "Thu, 01 Jan 2026 00:00:00 GMT")
        .into_owned();
    // The card's validator depends on the bytes of the card, which name the port.
    text = Regex::new(r#"(?i)(etag|if-none-match): \\"[^"\\]*\\""#)
        .unwrap()
        .replace_all(&text, r#"$1: \"example\""#)
        .into_owned();
    let mut r: Report = serde_json::from_str(&text).expect("normalized report parses");
    // Generated ids are numbered per check, so that one check's extra request does not renumber the
    // ids of every check after it.
    for x in &mut r.results {
        let text = serde_json::to_string(&x.result).expect("result serializes");
        let uuid = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
        let text = replace_distinct(&text, uuid, |n| format!("00000000-0000-4000-8000-{n:012}"));
        let text = replace_distinct(&text, r"\b[0-9a-f]{32}\b", |n| format!("{n:032x}"));
        x.result = serde_json::from_str(&text).expect("normalized result parses");
    }
    // The causes quote the results (an agent's error message naming a task): told again from the
    // results as normalized.
    r.derive();
    let card = r
        .checks()
        .flat_map(|x| x.evidence.iter())
        .find(|e| e.url.ends_with("/.well-known/agent-card.json") && e.status == Some(200))
        .and_then(|e| e.response_body.clone());
    if let Some(body) = card {
        r.target.card_sha256 = Some(hex::encode(Sha256::digest(body.as_bytes())));
    }
    r
}

/// Replaces each match of `pattern`, numbering the matches (0, 1, ...).
fn replace_in_order(text: &str, pattern: &str, mut f: impl FnMut(&regex::Captures<'_>, usize) -> String) -> String {
    let mut n = 0;
    Regex::new(pattern)
        .unwrap()
        .replace_all(text, |c: &regex::Captures<'_>| {
            let s = f(c, n);
            n += 1;
            s
        })
        .into_owned()
}

/// Replaces each distinct match of `pattern` by `f(k)`, `k` counting distinct values in order of
/// first appearance: equal ids stay equal, different ids stay different.
fn replace_distinct(text: &str, pattern: &str, f: impl Fn(usize) -> String) -> String {
    let mut seen: HashMap<String, String> = HashMap::new();
    Regex::new(pattern)
        .unwrap()
        .replace_all(text, |c: &regex::Captures<'_>| {
            let k = seen.len();
            seen.entry(c[0].to_owned()).or_insert_with(|| f(k)).clone()
        })
        .into_owned()
}

/// What must stay the same between runs: the verdict, and per check its outcome and why.
fn shape(r: &Report) -> (Verdict, Vec<String>) {
    let rows = r
        .checks()
        .map(|x| {
            format!(
                "{} {} {} {} {} scored={} depends_on={} at={}",
                x.id,
                x.profile,
                x.level.as_str(),
                x.outcome.as_str(),
                x.skip_reason.map_or("-", |s| s.as_str()),
                x.scored,
                x.depends_on.as_deref().unwrap_or("-"),
                x.failure.as_ref().and_then(|f| f.pointer.as_deref()).unwrap_or("-"),
            )
        })
        .collect();
    (r.verdict.status, rows)
}

/// Every file of one example, rendered from its report.
fn files_of(report: &Report) -> BTreeMap<&'static str, String> {
    [Format::Json, Format::Html, Format::Sarif, Format::Markdown, Format::Junit]
        .into_iter()
        .map(|f| (f.file_name(), f.render(report)))
        .collect()
}

fn read_report(path: &Path) -> Report {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!("{}: {e} (regenerate: A2A_CONFORM_BLESS=1 cargo test --test examples)", path.display())
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn diff_file(fault: &str) -> PathBuf {
    examples_dir().join(dir_name(Some(fault))).join("diff-from-clean.txt")
}

fn diff_text(clean: &Report, faulty: &Report, fault: &str) -> String {
    let name = dir_name(Some(fault));
    to_text(&compare(clean, faulty), "clean/report.json", &format!("{name}/report.json"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_examples_are_current() {
    let bless = std::env::var_os("A2A_CONFORM_BLESS").is_some_and(|v| !v.is_empty());
    let (clean, a, b) = tokio::join!(run(None), run(Some(FAULTS[0])), run(Some(FAULTS[1])));
    let fresh: Vec<(Option<&str>, Report)> = [(None, clean), (Some(FAULTS[0]), a), (Some(FAULTS[1]), b)]
        .into_iter()
        .map(|(fault, (report, url))| {
            let name = dir_name(fault);
            (fault, normalize(&report, &name, &url))
        })
        .collect();
    let mut stale = Vec::new();
    for (fault, report) in &fresh {
        let dir = examples_dir().join(dir_name(*fault));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            for (file, text) in files_of(report) {
                std::fs::write(dir.join(file), text).unwrap();
            }
            continue;
        }
        let committed = read_report(&dir.join("report.json"));
        let (old, new) = (shape(&committed), shape(report));
        if old != new {
            let changed: Vec<String> = new.1.iter().filter(|row| !old.1.contains(row)).take(10).cloned().collect();
            stale.push(format!("{}: verdict {:?} → {:?}; now: {changed:#?}", dir.display(), old.0, new.0));
        }
    }
    if bless {
        for fault in FAULTS {
            let clean = &fresh[0].1;
            let faulty = &fresh.iter().find(|(f, _)| *f == Some(fault)).unwrap().1;
            std::fs::write(diff_file(fault), diff_text(clean, faulty, fault)).unwrap();
        }
        eprintln!("wrote {}", examples_dir().display());
        return;
    }
    assert!(
        stale.is_empty(),
        "reports/examples is not current (regenerate: A2A_CONFORM_BLESS=1 cargo test --test examples):\n{}",
        stale.join("\n")
    );
}

/// Every committed file of an example is what its committed report renders to.
#[test]
fn every_committed_rendering_is_the_committed_report() {
    for fault in [None, Some(FAULTS[0]), Some(FAULTS[1])] {
        let dir = examples_dir().join(dir_name(fault));
        let report = read_report(&dir.join("report.json"));
        for (file, text) in files_of(&report) {
            let committed = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            assert!(committed == text, "{}/{file} is not the rendering of its report.json", dir.display());
        }
    }
}

fn killed(r: &a2a_conform::report::CheckResult) -> bool {
    matches!(r.outcome, Outcome::Fail | Outcome::Warn) || (r.outcome == Outcome::Info && r.failure.is_some())
}

/// The diff of the clean report and a faulty one lists exactly what changed: every check whose
/// outcome differs, once; among them everything the fault killed, the kills it names included.
#[test]
fn a_diff_against_a_faulty_mock_lists_exactly_what_the_fault_changed() {
    let clean = read_report(&examples_dir().join("clean/report.json"));
    let catalogue = FaultCatalogue::builtin().unwrap();
    for fault in FAULTS {
        let faulty = read_report(&examples_dir().join(dir_name(Some(fault))).join("report.json"));
        let d = compare(&clean, &faulty);
        let before: HashMap<&str, Outcome> = clean.checks().map(|r| (r.id.as_str(), r.outcome)).collect();
        let expected: BTreeSet<&str> = faulty
            .checks()
            .filter(|r| before.get(r.id.as_str()).is_some_and(|o| *o != r.outcome))
            .map(|r| r.id.as_str())
            .collect();
        let listed: Vec<&str> = d.changed_ids();
        let unique: BTreeSet<&str> = listed.iter().copied().collect();
        assert_eq!(unique.len(), listed.len(), "{fault}: a check is listed twice");
        assert_eq!(unique, expected, "{fault}: the diff does not list exactly the changed checks");
        assert!(d.added.is_empty() && d.removed.is_empty(), "{fault}: the same checks ran");

        let kills: BTreeSet<&str> = faulty.checks().filter(|r| killed(r)).map(|r| r.id.as_str()).collect();
        assert!(!kills.is_empty(), "{fault} killed nothing");
        assert!(kills.is_subset(&unique), "{fault}: a killed check is missing from the diff");
        let intended = catalogue.get(fault).unwrap().kills.clone();
        for id in &intended {
            assert!(kills.contains(id.as_str()), "{fault} names {id} as a kill, but it survived");
        }
        let failed: BTreeSet<&str> =
            faulty.checks().filter(|r| r.outcome == Outcome::Fail && r.scored).map(|r| r.id.as_str()).collect();
        let regressions: BTreeSet<&str> = d.regressions.iter().map(String::as_str).collect();
        assert_eq!(regressions, failed, "{fault}: the regressions are the new scored failures");
        assert_eq!(d.exit_code(), 1);

        let committed = std::fs::read_to_string(diff_file(fault)).unwrap_or_default();
        assert_eq!(committed, diff_text(&clean, &faulty, fault), "{} is not current", diff_file(fault).display());
    }
}

/// `reports/examples/baseline.yaml` accepts what FAULT-CANCEL-NOT-CANCELABLE-CODE breaks: with it the red
/// run is green, and once the fault is gone (the clean mock) the entries are stale and the run red.
#[test]
fn the_example_baseline_turns_red_green_and_a_fix_red_as_stale() {
    let path = examples_dir().join("baseline.yaml");
    let b = Baseline::load(&path).expect("the example baseline loads");
    let today = parse_date("2026-06-01").unwrap();
    let faulty = read_report(&examples_dir().join(dir_name(Some(FAULTS[1]))).join("report.json"));
    let results: Vec<_> = faulty.checks().cloned().collect();
    assert_eq!(Verdict::decide(&results).0, Verdict::NonConformant);
    let applied = b.judge(&results, today);
    assert!(applied.entries.iter().all(|e| e.status == EntryStatus::Accepted), "{applied:?}");
    assert_eq!(baseline::verdict(&results, &applied).0, Verdict::Conformant);

    let clean = read_report(&examples_dir().join("clean/report.json"));
    let results: Vec<_> = clean.checks().cloned().collect();
    let applied = b.judge(&results, today);
    assert!(applied.entries.iter().any(|e| e.status == EntryStatus::Stale), "{applied:?}");
    assert_eq!(baseline::verdict(&results, &applied).0, Verdict::NonConformant);
}

/// The report of the corpus agent with the most defects (interop/peers/orxhestra, plain run), as
/// the kit wrote it: its HTML page and Markdown summary are what it renders to. The report itself
/// is a snapshot, replaced by hand from `interop/out/orxhestra/plain/report.json`; its page's
/// screenshot is `tests/html_browser.rs`'s.
#[test]
fn the_corpus_example_is_the_rendering_of_its_report() {
    let bless = std::env::var_os("A2A_CONFORM_BLESS").is_some_and(|v| !v.is_empty());
    let dir = examples_dir().join("corpus-orxhestra");
    let report = read_report(&dir.join("report.json"));
    assert!(report.summary.causes.causes >= 20, "the agent with the most defects: {:?}", report.summary.causes);
    for format in [Format::Html, Format::Markdown] {
        let path = dir.join(format.file_name());
        let text = format.render(&report);
        if bless {
            std::fs::write(&path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "{} is not the rendering of its report.json (regenerate: A2A_CONFORM_BLESS=1 cargo test --test examples)",
            path.display()
        );
    }
}

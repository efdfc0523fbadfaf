//! The report commands as a user runs them: `check --baseline` against the mock binary committing a
//! fault and against the clean one, `check --format` with every rendering, `report render`,
//! and `report diff` as a pull-request gate. (`coverage` is proved in tests/coverage.rs.)

use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "common/schema.rs"]
mod schema;

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");
const TOKEN: &str = "report-cli-token-123";

/// Kills the child when dropped, so that a failed assertion never leaves one running.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run_bin(args: &[&str]) -> Run {
    let started = Instant::now();
    let mut child = KillOnDrop(
        Command::new(BIN)
            .args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts"),
    );
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.0.stdout.take().unwrap()));
    let err = drain(Box::new(child.0.stderr.take().unwrap()));
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(started.elapsed() < Duration::from_secs(180), "`a2a-conform {}` took over 180 s", args.join(" "));
        std::thread::sleep(Duration::from_millis(50));
    };
    Run { code: status.code(), stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// `a2a-conform mock` committing `faults`, with the extended card and loopback webhooks the checks
/// need; returns it and its URL.
fn mock(faults: &[&str]) -> (KillOnDrop, String) {
    let mut args = vec!["mock", "--port", "0", "--allow-loopback-webhooks", "--extended-card-token", TOKEN];
    for f in faults {
        args.extend(["--fault", f]);
    }
    let mut child = KillOnDrop(
        Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = tx.send(lines.next());
        for _ in lines {}
    });
    let line = rx.recv_timeout(Duration::from_secs(30)).unwrap().unwrap().unwrap();
    let url = line.strip_prefix("listening on ").expect("listening on URL").to_owned();
    (child, url)
}

fn out_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("report-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The cancel checks of `url`, with the example baseline or without.
fn check_cancel(url: &str, out: &Path, baseline: bool) -> Run {
    let auth = format!("Authorization: Bearer {TOKEN}");
    let out = out.display().to_string();
    let mut args = vec![
        "check",
        url,
        "-H",
        &auth,
        "--behaviors",
        "acts",
        "--only",
        "CORE-CANCEL-*",
        "--only",
        "KIT-CANCEL-*",
        "--out",
        &out,
        "--format",
        "json,junit,html,sarif,md",
    ];
    let path = repo("reports/examples/baseline.yaml");
    if baseline {
        args.extend(["--baseline", &path]);
    }
    run_bin(&args)
}

/// DESIGN "Overlays": a baseline with the accepted failures turns the red run green; once the agent
/// is fixed the entries are stale and the run is red again.
#[test]
fn a_baseline_turns_a_red_run_green_and_a_fixed_failure_red_as_stale() {
    let (_faulty, url) = mock(&["FAULT-CANCEL-NOT-CANCELABLE-CODE"]);
    let red = check_cancel(&url, &out_dir("red"), false);
    assert_eq!(red.code, Some(1), "{}\n{}", red.stdout, red.stderr);
    assert!(red.stdout.contains("FAIL  CORE-CANCEL-002"), "{}", red.stdout);

    let dir = out_dir("green");
    let green = check_cancel(&url, &dir, true);
    assert_eq!(green.code, Some(0), "{}\n{}", green.stdout, green.stderr);
    assert!(
        green.stdout.contains("3 failure(s) accepted by the baseline: CORE-CANCEL-002, KIT-CANCEL-002, KIT-CANCEL-003"),
        "{}",
        green.stdout
    );
    let report = read_json(&dir.join("report.json"));
    let errors = schema::violations_of(&schema::compile_file("reports/report.schema.json"), &report);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert_eq!(report["verdict"]["status"], "conformant");
    let accepted: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["baseline_status"] == "accepted")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(accepted, ["CORE-CANCEL-002", "KIT-CANCEL-002", "KIT-CANCEL-003"]);
    assert_eq!(report["baseline"]["entries"][0]["status"], "accepted");
    // Every file tells the same story.
    let sarif = read_json(&dir.join("report.sarif"));
    let suppressed =
        sarif["runs"][0]["results"].as_array().unwrap().iter().filter(|r| r.get("suppressions").is_some()).count();
    assert_eq!(suppressed, 3);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let verdict = md.lines().next().unwrap_or_default();
    assert!(verdict.contains("**conformant** over") && verdict.ends_with("(exit 0)"), "{verdict}");
    assert!(std::fs::read_to_string(dir.join("report.html")).unwrap().contains("baseline: accepted"));

    let (_clean, url) = mock(&[]);
    let dir = out_dir("stale");
    let stale = check_cancel(&url, &dir, true);
    assert_eq!(stale.code, Some(1), "{}\n{}", stale.stdout, stale.stderr);
    assert!(
        stale.stdout.contains("3 baseline entries are stale: CORE-CANCEL-002, KIT-CANCEL-002, KIT-CANCEL-003 now pass"),
        "{}",
        stale.stdout
    );
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["verdict"]["status"], "non_conformant");
    assert_eq!(report["results"].as_array().unwrap().iter().filter(|r| r["baseline_status"] == "stale").count(), 3);
    // Not a terminal: no progress bar on stderr, no colour anywhere.
    assert!(!stale.stderr.contains('\r') && !stale.stderr.contains('\u{1b}'), "{}", stale.stderr);
    assert!(!stale.stdout.contains('\u{1b}'), "{}", stale.stdout);
}

#[test]
fn a_bad_baseline_is_a_usage_error() {
    let dir = out_dir("bad-baseline");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("baseline.yaml");
    std::fs::write(&file, "entries:\n  - id: CORE-SEND-001\n").unwrap();
    let run = run_bin(&["check", "http://127.0.0.1:9", "--baseline", file.to_str().unwrap()]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("--baseline") && run.stderr.contains("reason"), "{}", run.stderr);
}

#[test]
fn report_render_writes_each_format_of_a_saved_report() {
    let report = repo("reports/examples/fault-bare-task/report.json");
    for (format, file) in
        [("html", "report.html"), ("sarif", "report.sarif"), ("md", "report.md"), ("junit", "junit.xml")]
    {
        let run = run_bin(&["report", "render", &report, "--format", format]);
        assert_eq!(run.code, Some(0), "{format}: {}", run.stderr);
        let committed = std::fs::read_to_string(repo(&format!("reports/examples/fault-bare-task/{file}"))).unwrap();
        assert_eq!(run.stdout, committed, "{format}");
    }
    let dir = out_dir("render");
    let target = dir.join("sub/page.html");
    let run = run_bin(&["report", "render", &report, "--format", "html", "-o", target.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(std::fs::read_to_string(&target).unwrap().starts_with("<!DOCTYPE html>"));

    // A report of another major version is refused, as is something that is not a report.
    let mut other: Value = read_json(Path::new(&report));
    other["schema_version"] = "2.0.0".into();
    let path = dir.join("v2.json");
    std::fs::write(&path, other.to_string()).unwrap();
    let run = run_bin(&["report", "render", path.to_str().unwrap(), "--format", "md"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("not supported"), "{}", run.stderr);
    // A 1.1 report (before baselines) still reads.
    other["schema_version"] = "1.1.0".into();
    std::fs::write(&path, other.to_string()).unwrap();
    assert_eq!(run_bin(&["report", "render", path.to_str().unwrap(), "--format", "md"]).code, Some(0));
}

/// The faulty example is the one that breaks SendMessage's shape: its two MUST checks regress over both
/// bindings (the cancel example's findings are `info`, which changes no outcome a diff gates on).
#[test]
fn report_diff_gates_on_regressions() {
    let clean = repo("reports/examples/clean/report.json");
    let faulty = repo("reports/examples/fault-bare-task/report.json");
    let worse = run_bin(&["report", "diff", &clean, &faulty]);
    assert_eq!(worse.code, Some(1), "{}", worse.stderr);
    // Broken over both bindings: each grading regresses.
    assert!(worse.stdout.contains("New failures (4):\n  CORE-SEND-001             pass → fail"), "{}", worse.stdout);
    assert!(worse.stdout.contains("\n  KIT-SEND-001[http+json]   pass → fail"), "{}", worse.stdout);
    // The checks that set themselves up with SendMessage read the bare Task as `{"task": …}` (the
    // shape is KIT-SEND-001's finding), so they run as on the clean agent: the diagnosis is the one
    // other change.
    assert!(worse.stdout.contains("Other changed outcomes (1):\n  KIT-DIAG-001      pass → info"), "{}", worse.stdout);
    let better = run_bin(&["report", "diff", &faulty, &clean]);
    assert_eq!(better.code, Some(0), "{}", better.stdout);
    assert!(better.stdout.contains("Fixed (4):\n  CORE-SEND-001"), "{}", better.stdout);
    assert_eq!(run_bin(&["report", "diff", &clean, &clean]).code, Some(0));
    let json = run_bin(&["report", "diff", &clean, &faulty, "--json"]);
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        v["regressions"],
        serde_json::json!(["CORE-SEND-001", "CORE-SEND-001[http+json]", "KIT-SEND-001", "KIT-SEND-001[http+json]"])
    );
    assert_eq!(v["new_failures"][0]["new"], "fail");
}

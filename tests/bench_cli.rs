//! `a2a-conform bench --quick` as a user runs it: every figure and every load point is measured,
//! each with its ratios to the baselines of the same run, in the table and in bench.json. The
//! figures themselves are not judged here: performance claims live in the bench, not in tests.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");

/// Longest the quick bench may take before the test kills it and fails.
const DEADLINE: Duration = Duration::from_secs(300);

#[test]
fn the_quick_bench_measures_every_figure_with_its_ratios() {
    let out = std::env::temp_dir().join(format!("a2a-conform-bench-test-{}", std::process::id()));
    let mut child = Command::new(BIN)
        .args(["bench", "--quick", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).map(|_| s)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting works") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("bench --quick did not end within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let table = reader.join().expect("the reader ends").expect("stdout is UTF-8");
    let bench: Value = serde_json::from_slice(&std::fs::read(out.join("bench.json")).expect("bench.json is written"))
        .expect("bench.json is JSON");
    let _ = std::fs::remove_dir_all(&out);

    assert_eq!(status.code(), Some(0), "every figure measured, no load point failed:\n{table}");
    assert_eq!(bench["quick"], true);
    let points = bench["points"].as_array().expect("points");
    for workload in ["bare", "card"] {
        for conns in [1, 16, 64] {
            assert!(
                points.iter().any(|p| p["workload"] == workload && p["conns"] == conns && p.get("store").is_none()),
                "baseline {workload} at {conns} connections"
            );
        }
    }
    for workload in ["send", "get", "stream"] {
        for store in ["empty", "full"] {
            for conns in [1, 16, 64] {
                let p = points
                    .iter()
                    .find(|p| p["workload"] == workload && p["store"] == store && p["conns"] == conns)
                    .unwrap_or_else(|| panic!("{workload}, store {store}, {conns} connections is measured"));
                assert!(p["ok"].as_u64().unwrap() > 0 && p["errors"] == 0, "{p}");
                for ratio in
                    ["rate_vs_bare", "rate_vs_card", "p50_vs_bare", "p50_vs_card", "p99_vs_bare", "p99_vs_card"]
                {
                    assert!(p[ratio].as_f64().is_some_and(|r| r > 0.0), "{ratio} of {p}");
                }
            }
        }
    }
    let figures = bench["figures"].as_array().expect("figures");
    for id in [
        "first_event.p50",
        "first_event.p99",
        "suite.wall",
        "suite.checks_per_s",
        "mock.startup",
        "mock.memory_per_10k",
        "check.peak_rss",
        "bench.wall",
    ] {
        let f = figures.iter().find(|f| f["id"] == id).unwrap_or_else(|| panic!("figure {id}"));
        assert!(f["value"].as_f64().is_some(), "{f}");
        assert!(f["vs_bare"].as_f64().is_some() && f["vs_card"].as_f64().is_some(), "{f}");
        assert!(table.contains(f["label"].as_str().unwrap()), "the table shows {id}");
    }
    assert!(bench["targets"].as_array().is_some_and(|t| t.len() == 7));
    assert!(table.contains("targets"));
}

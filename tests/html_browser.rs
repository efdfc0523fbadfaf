//! The HTML report and the registry's index page in a real headless browser: the page's script runs,
//! filters the table from the address (`#outcome=fail`, `#status=non_conformant`), the index sorts
//! from it (`#sort=-fails`), and the pages render to a screenshot, all offline. Skipped (with a
//! note on stderr) when no Chromium is installed: `apt-get install -y chromium`, or point
//! `A2A_CONFORM_CHROMIUM` at a browser binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use a2a_conform::report::Outcome;
use a2a_conform::report::html::to_html;
use a2a_conform::report::index::{AgentStatus, Index, write_index};

#[path = "common/registry.rs"]
mod registry;
#[path = "common/sample.rs"]
mod sample;

fn browser() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("A2A_CONFORM_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// The browser, or `None` (the test skips, saying so) when none is installed; `.ci/run` installs
/// one and sets `A2A_CONFORM_REQUIRE_BROWSER`, so that in CI a missing browser fails the test
/// instead of passing it unseen.
fn browser_or_skip() -> Option<PathBuf> {
    let found = browser();
    if found.is_none() {
        assert!(
            std::env::var_os("A2A_CONFORM_REQUIRE_BROWSER").is_none(),
            "A2A_CONFORM_REQUIRE_BROWSER is set and no Chromium was found"
        );
        eprintln!("skipped: no Chromium found (apt-get install -y chromium, or set A2A_CONFORM_CHROMIUM)");
    }
    found
}

/// Runs the browser headless on `url` with `extra` arguments; returns stdout. Bounded: a browser that
/// hangs fails the test instead of stalling the suite.
fn headless(browser: &Path, profile: &Path, extra: &[String], url: &str) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the browser starts");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let started = Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the browser did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().expect("reader thread")
}

/// Draws the page at `url` to `png` in a window of `size` (width, height) and checks a picture
/// came out.
fn screenshot(browser: &Path, profile: &Path, url: &str, png: &Path, size: (u32, u32)) {
    let window = format!("--window-size={},{}", size.0, size.1);
    headless(browser, profile, &[format!("--screenshot={}", png.display()), window, "--hide-scrollbars".into()], url);
    let bytes = std::fs::read(png).expect("the browser wrote a screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(bytes.len() > 20_000, "a blank page? {} bytes", bytes.len());
    eprintln!("screenshot: {}", png.display());
}

/// The rows of the checks table in a DOM dump: (id, hidden).
fn rows(dom: &str) -> Vec<(String, bool)> {
    let re = regex::Regex::new(r#"<tr id="c-([^"]+)"([^>]*)>"#).unwrap();
    re.captures_iter(dom).map(|c| (c[1].to_owned(), c[2].contains("hidden"))).collect()
}

#[test]
fn the_page_filters_and_renders_in_a_headless_browser() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("html-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let report = sample::report();
    let page = dir.join("report.html");
    std::fs::write(&page, to_html(&report)).unwrap();
    let url = format!("file://{}", page.display());
    let profile = dir.join("profile");

    // Unfiltered: the script ran and shows every check.
    let dom = headless(&browser, &profile, &["--dump-dom".into()], &url);
    assert!(dom.contains("data-ready=\"true\""), "the page's script did not run:\n{dom}");
    let all = rows(&dom);
    assert_eq!(all.len(), report.results.len());
    assert!(all.iter().all(|(_, hidden)| !hidden));
    let total = report.results.len();
    assert!(dom.contains(&format!("{total} of {total} checks shown")));

    // Filtered from the address: only the failures remain.
    let dom = headless(&browser, &profile, &["--dump-dom".into()], &format!("{url}#outcome=fail"));
    let failing: Vec<String> = report.checks().filter(|r| r.outcome == Outcome::Fail).map(|r| r.id.clone()).collect();
    let shown: Vec<String> = rows(&dom).into_iter().filter(|(_, hidden)| !hidden).map(|(id, _)| id).collect();
    assert_eq!(shown, failing);
    assert!(dom.contains(&format!("{} of {total} checks shown", failing.len())), "{dom}");

    // Text and profile together.
    let dom = headless(&browser, &profile, &["--dump-dom".into()], &format!("{url}#q=sub&profile=streaming"));
    let shown: Vec<String> = rows(&dom).into_iter().filter(|(_, hidden)| !hidden).map(|(id, _)| id).collect();
    assert_eq!(shown, ["STREAM-SUB-001", "STREAM-SUB-002", "STREAM-SUB-003"]);

    // And it draws: a PNG of the page.
    let png = dir.join("report.png");
    screenshot(&browser, &profile, &url, &png, (1280, 1600));
}

/// The rows of the agents table in a DOM dump, in document order: (anchor, hidden).
fn agent_rows(dom: &str) -> Vec<(String, bool)> {
    let re = regex::Regex::new(r#"<tr id="a-([^"]+)"([^>]*)>"#).unwrap();
    re.captures_iter(dom).map(|c| (c[1].to_owned(), c[2].contains("hidden"))).collect()
}

fn shown(rows: &[(String, bool)]) -> Vec<&str> {
    rows.iter().filter(|(_, hidden)| !hidden).map(|(id, _)| id.as_str()).collect()
}

#[test]
fn the_index_page_filters_and_sorts_from_the_address_in_a_headless_browser() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("index-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("out");
    let mut entries = Vec::new();
    for shard in registry::shards() {
        entries.extend(registry::write_agents(&out, &shard));
    }
    let index = Index::build(entries, None);
    write_index(&out, &index).unwrap();
    let url = format!("file://{}", out.join("index.html").display());
    let profile = dir.join("profile");
    let dump = |fragment: &str| headless(&browser, &profile, &["--dump-dom".into()], &format!("{url}{fragment}"));

    // Unfiltered: the script ran, every agent shows, by name, and nothing an agent wrote became markup.
    let dom = dump("");
    assert!(dom.contains("data-ready=\"true\""), "the page's script did not run:\n{dom}");
    let rows = agent_rows(&dom);
    assert_eq!(shown(&rows), ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]);
    assert!(dom.contains("6 of 6 agents shown"), "{dom}");
    assert!(!dom.contains("<img"), "an agent's text became markup:\n{dom}");
    assert!(dom.contains("href=\"alpha/report.html\""), "{dom}");

    // Filtered by status from the address.
    let dom = dump("#status=non_conformant");
    let non_conformant: Vec<&str> =
        index.agents.iter().filter(|a| a.status == AgentStatus::NonConformant).map(|a| a.name.as_str()).collect();
    assert_eq!(shown(&agent_rows(&dom)), non_conformant);
    assert_eq!(non_conformant, ["alpha", "echo"]);
    assert!(dom.contains("2 of 6 agents shown"), "{dom}");

    // By text: a check id finds the agents it fails on; a URL finds its agent.
    assert_eq!(shown(&agent_rows(&dump("#q=core-hostile-001"))), ["alpha", "echo"]);
    assert_eq!(shown(&agent_rows(&dump("#q=charlie.example"))), ["charlie"]);
    assert_eq!(shown(&agent_rows(&dump("#status=conformant&q=foxtrot"))), ["foxtrot"]);

    // Sorted from the address: most fails first (ties by name), and the worst status first.
    assert_eq!(shown(&agent_rows(&dump("#sort=-fails"))), ["alpha", "echo", "bravo", "charlie", "delta", "foxtrot"]);
    assert_eq!(shown(&agent_rows(&dump("#sort=status"))), ["delta", "alpha", "echo", "charlie", "bravo", "foxtrot"]);

    // And it draws.
    let png = dir.join("index.png");
    screenshot(&browser, &profile, &url, &png, (1280, 1400));
}

/// The committed page of the corpus agent with the most defects opens with what to fix first: its
/// first screen (1280 × 1000) is drawn to `reports/examples/corpus-orxhestra/report.png` when
/// blessing (`A2A_CONFORM_BLESS=1`), to a scratch file otherwise.
#[test]
fn the_corpus_page_shows_what_to_fix_first_on_its_first_screen() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reports/examples/corpus-orxhestra");
    let page = example.join("report.html");
    let url = format!("file://{}", page.display());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("corpus-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let profile = dir.join("profile");
    let dom = headless(&browser, &profile, &["--dump-dom".into()], &url);
    let fix = dom.find("<section id=\"fix-first\">").expect("the page has a Fix first list");
    let profiles = dom.find("<section id=\"profiles\">").expect("the page has its profiles");
    assert!(fix < profiles && dom.find("id=\"findings\"").is_some_and(|f| fix < f), "Fix first comes first");
    let bless = std::env::var_os("A2A_CONFORM_BLESS").is_some_and(|v| !v.is_empty());
    let png = if bless { example.join("report.png") } else { dir.join("report.png") };
    screenshot(&browser, &profile, &url, &png, (1280, 1000));
}

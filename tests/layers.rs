//! The architecture as a test: which layer may import which (the checker never reads an answer
//! through the mock's types or the typed wire model), no two files import each other, the check
//! language does no networking, and only the commands start the mock.
//!
//! Imports are read from the source text: `use` items and `crate::` / `super::` paths anywhere in
//! the code, and, in a `mod.rs` or `lib.rs`, paths into its own submodules. Unit-test modules
//! (`#[cfg(test)]` to the end of the file) are left out: tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

/// Top-level modules and the ones each may import. A layer not listed imports nothing.
const ALLOWED: &[(&str, &[&str])] = &[
    ("sse", &[]),
    ("protocol", &[]),
    ("report", &[]),
    // The normative texts the checks quote, and the sentences `coverage` counts.
    ("spec", &[]),
    // Canonical JSON and ES256 on raw JSON: the checker and the mock both sign and verify with it.
    ("card", &[]),
    ("client", &["sse"]),
    ("server", &["protocol", "sse", "card"]),
    ("suite", &["report", "spec"]),
    ("engine", &["suite", "client", "report", "sse", "card"]),
    ("commands", &["engine", "suite", "client", "server", "protocol", "report", "sse", "card", "spec"]),
    ("cli", &["commands", "suite", "client", "server", "protocol", "report", "card"]),
    ("lib", &["card", "cli", "client", "commands", "engine", "protocol", "report", "server", "spec", "sse", "suite"]),
];

/// A source file and the module path it defines (`src/engine/probes.rs` → `engine::probes`).
struct File {
    path: PathBuf,
    module: Vec<String>,
    /// `mod.rs` / `lib.rs`: `super` means the parent of `module`, and bare paths may name children.
    is_root: bool,
    code: String,
}

fn files() -> Vec<File> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("src is readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    walk(&src, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "main.rs"))
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap().with_extension("");
            let mut module: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            let is_root = matches!(module.last().map(String::as_str), Some("mod" | "lib"));
            if is_root {
                module.pop();
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("").to_owned();
            File { path: p, module, is_root, code: strip_comments(&code) }
        })
        .collect()
}

/// Drops `//` comments and string literals, which may mention paths without importing them.
fn strip_comments(code: &str) -> String {
    let strings = Regex::new(r#""(\\.|[^"\\])*""#).unwrap();
    code.lines()
        .map(|l| {
            let l = strings.replace_all(l, "\"\"");
            match l.find("//") {
                Some(i) => l[..i].to_owned(),
                None => l.into_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Module paths a file refers to, resolved to absolute paths (without `crate`).
fn references(f: &File, known: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let path = Regex::new(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)").unwrap();
    let group = Regex::new(r"\buse\s+(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\};").unwrap();
    let child = Regex::new(r"(?:^|[^:\w])([a-z_][a-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)+)").unwrap();
    let parent = || {
        let mut m = f.module.clone();
        m.pop();
        m
    };
    let base = |kw: &str| if kw == "crate" { Vec::new() } else { parent() };
    let mut out = BTreeSet::new();
    let mut add = |mut at: Vec<String>, rest: &str| {
        at.extend(rest.split("::").filter(|s| !s.is_empty()).map(str::to_owned));
        out.insert(at);
    };
    for c in path.captures_iter(&f.code) {
        add(base(&c[1]), &c[2]);
    }
    // `use crate::a::{b, c::d}`: each member is a path below the group's prefix.
    for c in group.captures_iter(&f.code) {
        let mut prefix = base(&c[1]);
        prefix.extend(c[2].split("::").filter(|s| !s.is_empty()).map(str::to_owned));
        for member in c[3].split(',') {
            let member = member.trim().split(" as ").next().unwrap_or("").trim();
            let first = member.split("::").next().unwrap_or("");
            if !first.is_empty() && first != "self" && !first.starts_with('{') {
                add(prefix.clone(), member.trim_end_matches("::{"));
            }
        }
    }
    if f.is_root {
        for c in child.captures_iter(&f.code) {
            let mut m = f.module.clone();
            m.push(c[1].to_owned());
            if known.contains(&m) {
                add(m, &c[2]);
            }
        }
    }
    out
}

/// The longest known module that `reference` lies in.
fn owner(reference: &[String], known: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=reference.len()).rev().map(|n| reference[..n].to_vec()).find(|m| known.contains(m))
}

fn layer(module: &[String]) -> String {
    module.first().cloned().unwrap_or_else(|| "lib".into())
}

/// Module path → the modules it imports (itself excluded).
type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

fn graph() -> (Vec<File>, Graph) {
    let files = files();
    let known: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut g = BTreeMap::new();
    for f in &files {
        let targets: BTreeSet<Vec<String>> =
            references(f, &known).iter().filter_map(|r| owner(r, &known)).filter(|m| *m != f.module).collect();
        g.insert(f.module.clone(), targets);
    }
    (files, g)
}

fn name(m: &[String]) -> String {
    if m.is_empty() { "crate".into() } else { m.join("::") }
}

#[test]
fn layers_import_only_what_they_may() {
    let (_, g) = graph();
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut problems = Vec::new();
    for (from, tos) in &g {
        let l = layer(from);
        let Some(ok) = allowed.get(l.as_str()) else {
            problems.push(format!("{}: layer {l} is not in ALLOWED", name(from)));
            continue;
        };
        for to in tos {
            let t = layer(to);
            if t != l && !ok.contains(&t.as_str()) {
                problems.push(format!("{} imports {} ({l} may not import {t})", name(from), name(to)));
            }
        }
    }
    assert!(problems.is_empty(), "layering violations:\n  {}", problems.join("\n  "));
}

#[test]
fn the_checker_never_reads_through_the_mock_or_the_typed_wire_model() {
    let (_, g) = graph();
    let mut problems = Vec::new();
    for (from, tos) in &g {
        if !["suite", "engine", "client", "report"].contains(&layer(from).as_str()) {
            continue;
        }
        for to in tos.iter().filter(|t| ["server", "protocol"].contains(&layer(t).as_str())) {
            problems.push(format!("{} imports {}", name(from), name(to)));
        }
    }
    assert!(problems.is_empty(), "the checker depends on the mock's reading of the spec:\n  {}", problems.join("\n  "));
}

#[test]
fn no_two_files_import_each_other() {
    let (_, g) = graph();
    // Tarjan would name every cycle; a depth-first search that reports the first one is enough to act on.
    fn visit(
        m: &Vec<String>,
        g: &Graph,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let at = stack.iter().position(|s| s == m).unwrap();
                let mut cycle = stack[at..].to_vec();
                cycle.push(m.clone());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(m.clone(), 1);
        stack.push(m.clone());
        for next in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, g, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(m.clone(), 2);
        None
    }
    let mut mutual = Vec::new();
    for (a, tos) in &g {
        for b in tos.iter().filter(|b| a < *b && g.get(*b).is_some_and(|t| t.contains(a))) {
            mutual.push(format!("{} ⇄ {}", name(a), name(b)));
        }
    }
    assert!(mutual.is_empty(), "files that import each other:\n  {}", mutual.join("\n  "));
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if let Some(cycle) = visit(m, &g, &mut state, &mut Vec::new()) {
            panic!("import cycle: {}", cycle.iter().map(|m| name(m)).collect::<Vec<_>>().join(" → "));
        }
    }
}

#[test]
fn the_check_language_does_no_networking_and_only_commands_start_the_mock() {
    let net = Regex::new(r"\b(tokio|reqwest|axum|hyper)::").unwrap();
    let start = Regex::new(r"\bMockServer::(start|bind)\b").unwrap();
    let mut problems = Vec::new();
    for f in files() {
        let l = layer(&f.module);
        if l == "suite" && net.is_match(&f.code) {
            problems.push(format!("{} (check language) uses a network or runtime crate", f.path.display()));
        }
        if start.is_match(&f.code) && !["commands", "server"].contains(&l.as_str()) {
            problems.push(format!("{} starts the mock; only commands may", f.path.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_of_imports_sees_what_it_should() {
    // Guards the parsing above: a test that reads nothing would pass everything.
    let (_, g) = graph();
    let m = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<_>>();
    let edges = |from: &str| g.get(&m(from)).cloned().unwrap_or_default();
    assert!(edges("engine::runner").contains(&m("engine::context")), "{:?}", edges("engine::runner"));
    assert!(edges("engine::runner").contains(&m("suite::model")), "{:?}", edges("engine::runner"));
    assert!(edges("commands::check").contains(&m("engine::scheduler")));
    assert!(edges("server::faults::layer").contains(&m("sse")));
    assert!(edges("server").contains(&m("server::rpc")), "bare child paths in mod.rs count: {:?}", edges("server"));
    assert!(g.len() > 60, "{} files read", g.len());
}

//! Loads suites: the kit's synthetic checks and the built-in suites compiled from `suites/`, and
//! files or directories the user names (JSON or YAML, including an unmodified ACTS corpus with
//! `include`s). Every file is validated against `suites/suite.schema.json`: a problem inside a test
//! makes that test unrunnable (it ends as `error`, naming the file and JSON pointer), a problem
//! anywhere else refuses the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::model::Document;

/// Suite files compiled into the binary.
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_suites.rs"));

/// Client suite files (`suites/client/`), graded by `client-check` on what the mock recorded.
const CLIENT_BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_client_suites.rs"));

/// The checks the engine decides itself (WIRE-SCHEMA, the 0.3 peer detection): part of every run,
/// also with `--no-builtin`.
const KIT: (&str, &str) = ("kit.json", include_str!("../../suites/kit.json"));

const SUITE_SCHEMA: &str = include_str!("../../suites/suite.schema.json");

/// Most files one `--suite` argument may pull in through directories and includes.
const MAX_FILES: usize = 500;

/// Schema problems reported per file: the first few locate the trouble; hundreds would bury it.
const MAX_PROBLEMS: usize = 20;

/// Tests the schema rejects, by (suite index, test index): why, naming the file and pointer.
pub type InvalidTests = BTreeMap<(usize, usize), String>;

/// One loaded suite file.
#[derive(Debug, Clone)]
pub struct LoadedSuite {
    /// File name (built-in) or path.
    pub name: String,
    /// `builtin` or `path`.
    pub origin: &'static str,
    /// sha256 of the file's bytes, hex.
    pub sha256: String,
    pub doc: Document,
    pub invalid: InvalidTests,
}

/// A suite file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    /// Not a suite document; `reason` names the JSON pointer where it can.
    #[error("{path}: {reason}")]
    Parse { path: String, reason: String },
    /// Directories and includes pulled in too many files (or an include cycle).
    #[error("more than {MAX_FILES} suite files under {0}")]
    TooMany(String),
}

fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let schema: Value = serde_json::from_str(SUITE_SCHEMA).expect("the embedded suite schema is JSON");
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .expect("the embedded suite schema compiles")
    })
}

/// `(suite, test)` when `pointer` lies inside a test.
fn test_of(pointer: &str) -> Option<(usize, usize)> {
    let mut parts = pointer.strip_prefix('/')?.split('/');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("suites"), Some(s), Some("tests"), Some(t)) => Some((s.parse().ok()?, t.parse().ok()?)),
        _ => None,
    }
}

fn parse(name: &str, text: &str) -> Result<(Document, InvalidTests), LoadError> {
    let is_yaml = name.ends_with(".yaml") || name.ends_with(".yml");
    let parse_err = |reason: String| LoadError::Parse { path: name.to_owned(), reason };
    let value: Value = if is_yaml {
        serde_norway::from_str(text).map_err(|e| parse_err(e.to_string()))?
    } else {
        serde_json::from_str(text).map_err(|e| parse_err(e.to_string()))?
    };
    let mut invalid = InvalidTests::new();
    let mut outside = Vec::new();
    for e in validator().iter_errors(&value).take(MAX_PROBLEMS) {
        let pointer = e.instance_path().to_string();
        let line = format!("{name}: {}: {e}", if pointer.is_empty() { "(root)" } else { &pointer });
        match test_of(&pointer) {
            Some(key) => {
                invalid.entry(key).and_modify(|m| m.push_str(&format!("; {e}"))).or_insert(line);
            }
            None => outside.push(line),
        }
    }
    if !outside.is_empty() {
        return Err(parse_err(format!("not a valid suite file:\n  {}", outside.join("\n  "))));
    }
    let doc: Document =
        serde_path_to_error::deserialize(&value).map_err(|e| parse_err(format!("{}: {}", e.path(), e.inner())))?;
    Ok((doc, invalid))
}

fn digest(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn embedded((name, text): (&str, &str)) -> Result<LoadedSuite, LoadError> {
    let (doc, invalid) = parse(name, text)?;
    Ok(LoadedSuite { name: name.to_owned(), origin: "builtin", sha256: digest(text), doc, invalid })
}

/// Compiled-in suite files, parsed and hashed once per process (a fifth of the work of a check
/// run against a quick agent, and a registry runs thousands); each caller gets its own copy.
fn parsed_once(
    cell: &'static OnceLock<Vec<LoadedSuite>>,
    files: &[(&'static str, &'static str)],
) -> Result<Vec<LoadedSuite>, LoadError> {
    if let Some(done) = cell.get() {
        return Ok(done.clone());
    }
    let parsed: Vec<LoadedSuite> = files.iter().map(|f| embedded(*f)).collect::<Result<_, _>>()?;
    Ok(cell.get_or_init(|| parsed).clone())
}

/// The built-in suites, in file-name order.
pub fn builtin() -> Result<Vec<LoadedSuite>, LoadError> {
    static PARSED: OnceLock<Vec<LoadedSuite>> = OnceLock::new();
    parsed_once(&PARSED, BUILTIN)
}

/// The built-in client suites, in file-name order.
pub fn client_builtin() -> Result<Vec<LoadedSuite>, LoadError> {
    static PARSED: OnceLock<Vec<LoadedSuite>> = OnceLock::new();
    parsed_once(&PARSED, CLIENT_BUILTIN)
}

pub fn kit() -> Result<LoadedSuite, LoadError> {
    static PARSED: OnceLock<Vec<LoadedSuite>> = OnceLock::new();
    Ok(parsed_once(&PARSED, &[KIT])?.remove(0))
}

/// Loads a file, or every `*.json` / `*.yaml` / `*.yml` file under a directory (sorted), following
/// each document's `include`s relative to it.
pub fn load_path(path: &Path) -> Result<Vec<LoadedSuite>, LoadError> {
    let mut queue: Vec<PathBuf> = if path.is_dir() { suite_files_in(path)? } else { vec![path.to_path_buf()] };
    queue.reverse();
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    while let Some(file) = queue.pop() {
        let key = file.canonicalize().unwrap_or_else(|_| file.clone());
        if !seen.insert(key) {
            continue;
        }
        if seen.len() > MAX_FILES {
            return Err(LoadError::TooMany(path.display().to_string()));
        }
        let name = file.display().to_string();
        let text = std::fs::read_to_string(&file).map_err(|source| LoadError::Io { path: name.clone(), source })?;
        let (doc, invalid) = parse(&name, &text)?;
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for inc in doc.include.iter().rev() {
            queue.push(dir.join(inc));
        }
        out.push(LoadedSuite { name, origin: "path", sha256: digest(&text), doc, invalid });
    }
    Ok(out)
}

fn suite_files_in(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let io = |source| LoadError::Io { path: dir.display().to_string(), source };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_json_parse_to_the_same_model() {
        let yaml = "acts_version: '1.0'\nspec_version: '1.0'\nsuites:\n  - id: s\n    name: S\n    tests:\n      - id: T-1\n        name: t\n        level: must\n        steps: [{id: a, operation: get_agent_card, params: {}}]\n";
        let json = r#"{"acts_version":"1.0","spec_version":"1.0","suites":[{"id":"s","name":"S","tests":[{"id":"T-1","name":"t","level":"must","steps":[{"id":"a","operation":"get_agent_card","params":{}}]}]}]}"#;
        assert_eq!(parse("a.yaml", yaml).unwrap().0, parse("a.json", json).unwrap().0);
    }

    #[test]
    fn a_bad_file_names_itself() {
        let e = parse("bad.json", "{").unwrap_err().to_string();
        assert!(e.starts_with("bad.json:"), "{e}");
    }

    #[test]
    fn an_unknown_field_in_a_test_invalidates_that_test_only() {
        let json = r#"{"acts_version":"1.0","spec_version":"1.0","suites":[{"id":"s","name":"S","tests":[
            {"id":"T-1","name":"t","level":"must","steps":[{"id":"a","operation":"get_agent_card","params":{},"expect":{"task":{}}}]},
            {"id":"T-2","name":"t","level":"must","steps":[{"id":"a","operation":"get_agent_card","params":{}}]}]}]}"#;
        let (doc, invalid) = parse("x.json", json).unwrap();
        assert_eq!(doc.suites[0].tests.len(), 2);
        assert_eq!(invalid.keys().collect::<Vec<_>>(), [&(0, 0)]);
        let why = &invalid[&(0, 0)];
        assert!(why.starts_with("x.json: /suites/0/tests/0/steps/0/expect:") && why.contains("task"), "{why}");
    }

    #[test]
    fn an_unknown_field_outside_tests_refuses_the_file() {
        let json = r#"{"acts_version":"1.0","spec_version":"1.0","colour":"red","suites":[]}"#;
        let e = parse("y.json", json).unwrap_err().to_string();
        assert!(e.contains("y.json: (root)") && e.contains("colour"), "{e}");
    }
}

//! Loads suites: the built-in ones compiled from `suites/server/`, and files or directories the
//! user names (JSON or YAML, including an unmodified ACTS corpus with `include`s).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::model::Document;

/// Suite files compiled into the binary.
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_suites.rs"));

/// Most files one `--suite` argument may pull in through directories and includes.
const MAX_FILES: usize = 500;

/// One loaded suite file.
#[derive(Debug, Clone)]
pub struct LoadedSuite {
    /// File name (built-in) or path.
    pub name: String,
    /// `builtin` or `path`.
    pub origin: &'static str,
    /// sha256 of the file's bytes, hex.
    pub sha256: String,
    /// The parsed document.
    pub doc: Document,
}

/// A suite file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Unreadable.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Not a suite document.
    #[error("{path}: {reason}")]
    Parse {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// Directories and includes pulled in too many files (or an include cycle).
    #[error("more than {MAX_FILES} suite files under {0}")]
    TooMany(String),
}

fn parse(name: &str, text: &str) -> Result<Document, LoadError> {
    let is_yaml = name.ends_with(".yaml") || name.ends_with(".yml");
    let parsed = if is_yaml {
        serde_norway::from_str::<Document>(text).map_err(|e| e.to_string())
    } else {
        serde_json::from_str::<Document>(text).map_err(|e| e.to_string())
    };
    parsed.map_err(|reason| LoadError::Parse { path: name.to_owned(), reason })
}

fn digest(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The built-in suites, in file-name order.
pub fn builtin() -> Result<Vec<LoadedSuite>, LoadError> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            Ok(LoadedSuite {
                name: (*name).to_owned(),
                origin: "builtin",
                sha256: digest(text),
                doc: parse(name, text)?,
            })
        })
        .collect()
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
        let doc = parse(&name, &text)?;
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for inc in doc.include.iter().rev() {
            queue.push(dir.join(inc));
        }
        out.push(LoadedSuite { name, origin: "path", sha256: digest(&text), doc });
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
        let yaml = "acts_version: '1.0'\nspec_version: '1.0'\nsuites:\n  - id: s\n    name: S\n    tests:\n      - id: T-1\n        name: t\n        level: must\n        steps: []\n";
        let json = r#"{"acts_version":"1.0","spec_version":"1.0","suites":[{"id":"s","name":"S","tests":[{"id":"T-1","name":"t","level":"must","steps":[]}]}]}"#;
        assert_eq!(parse("a.yaml", yaml).unwrap(), parse("a.json", json).unwrap());
    }

    #[test]
    fn a_bad_file_names_itself() {
        let e = parse("bad.json", "{").unwrap_err().to_string();
        assert!(e.starts_with("bad.json:"), "{e}");
    }
}

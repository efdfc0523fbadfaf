//! The index's files in a folder: `index.json`, `index.html` and `junit.xml` written next to the
//! agents' own folders (`<name>/report.json` ...), and `index.json` read back.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use super::html::render_html;
use super::junit::{FOOTER, header, write_suites};
use super::model::{AgentStatus, INDEX_SCHEMA_VERSION, Index, valid_name};
use crate::report::json::{Report, parse_report};

/// The index document's file name.
pub const INDEX_JSON: &str = "index.json";
/// The page's file name.
pub const INDEX_HTML: &str = "index.html";
/// The JUnit file's name.
pub const INDEX_JUNIT: &str = "junit.xml";

/// What went wrong reading or merging indexes.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("{} is not an a2a-conform index: {message}", path.display())]
    NotAnIndex { path: PathBuf, message: String },
    #[error("{}: index schema version {found:?} is not supported (this kit reads version {INDEX_SCHEMA_VERSION})", path.display())]
    Version { path: PathBuf, found: String },
    #[error("{}: agent name {name:?} cannot be a folder name (empty, `.`, `..`, a path separator or a control character)", path.display())]
    BadName { path: PathBuf, name: String },
    #[error(
        "agent {name:?} is in two shards, {} and {}: every agent must be checked by exactly one shard",
        first.display(),
        second.display()
    )]
    Duplicate { name: String, first: PathBuf, second: PathBuf },
    #[error("no shard folder to merge")]
    NoShards,
}

/// Writes `index.json`, `index.html` and `junit.xml` into `out` (created if need be); the JUnit
/// file holds the checks of each agent's `out/<name>/report.json`, read one at a time. Returns the
/// paths written.
pub fn write_index(out: &Path, index: &Index) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out)?;
    let json = out.join(INDEX_JSON);
    // Plain data with string keys always serializes.
    let mut text = serde_json::to_string_pretty(index).expect("the index serializes");
    text.push('\n');
    std::fs::write(&json, text)?;
    let html = out.join(INDEX_HTML);
    std::fs::write(&html, render_html(index))?;
    let junit = out.join(INDEX_JUNIT);
    write_junit(out, index, &junit)?;
    Ok(vec![json, html, junit])
}

/// The JUnit file, streamed: the suites go to a scratch file first, since the root element that
/// opens the file carries their totals; no more than one agent's report is in memory at a time.
fn write_junit(out: &Path, index: &Index, path: &Path) -> io::Result<()> {
    let scratch = path.with_extension("xml.part");
    let totals = {
        let mut body = io::BufWriter::new(std::fs::File::create(&scratch)?);
        let totals = write_suites(index, |name| agent_report(out, index, name), &mut body)?;
        body.flush()?;
        totals
    };
    let mut file = io::BufWriter::new(std::fs::File::create(path)?);
    file.write_all(header(index, totals).as_bytes())?;
    io::copy(&mut std::fs::File::open(&scratch)?, &mut file)?;
    file.write_all(FOOTER.as_bytes())?;
    file.flush()?;
    std::fs::remove_file(&scratch)
}

/// Agent `name`'s `report.json` under `out`: none for an agent that has none, else the report or
/// why it could not be read.
fn agent_report(out: &Path, index: &Index, name: &str) -> Option<Result<Report, String>> {
    if index.agent(name).is_none_or(|a| a.status == AgentStatus::Error) {
        return None;
    }
    if !valid_name(name) {
        return Some(Err(format!("{name:?} is not a folder name")));
    }
    let path = out.join(name).join("report.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(parse_report(&text).map_err(|e| format!("{} {e}", path.display()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => Some(Err(format!("cannot read {}: {e}", path.display()))),
    }
}

/// Reads `dir/index.json`. An index of another major version is refused.
pub fn read_index(dir: &Path) -> Result<Index, IndexError> {
    let path = dir.join(INDEX_JSON);
    let text = std::fs::read_to_string(&path).map_err(|source| IndexError::Read { path: path.clone(), source })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| IndexError::NotAnIndex { path: path.clone(), message: format!("not JSON: {e}") })?;
    let found = value.get("schema_version").and_then(|v| v.as_str()).unwrap_or("").to_owned();
    let major = |v: &str| v.split('.').next().unwrap_or("").to_owned();
    if found.is_empty() || major(&found) != major(INDEX_SCHEMA_VERSION) {
        return Err(IndexError::Version { path, found });
    }
    serde_json::from_value(value).map_err(|e| IndexError::NotAnIndex { path, message: e.to_string() })
}

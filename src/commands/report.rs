//! `a2a-conform report`: a saved `report.json` rendered in another format, two reports compared,
//! and the outputs of registry shards merged. Every rendering is computed from the report, as
//! during a run.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::report::compare;
use crate::report::files::Format;
use crate::report::index;
use crate::report::json::{self, Report};

/// Reads a `report.json` ([`json::parse_report`]): reports of an older minor version of the format
/// read as well; another major version is refused.
pub fn read_report(path: &Path) -> anyhow::Result<Report> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    match json::parse_report(&text) {
        Ok(report) => Ok(report),
        Err(e @ json::ParseError::Version { .. }) => anyhow::bail!("{}: {e}", path.display()),
        Err(e) => anyhow::bail!("{} {e}", path.display()),
    }
}

/// `report render REPORT --format F [--output FILE]`: prints the rendering, or writes it.
pub fn render(report: &Path, format: Format, output: Option<&Path>) -> anyhow::Result<i32> {
    let report = read_report(report)?;
    let text = format.render(&report);
    match output {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print_stdout(&text)?,
    }
    Ok(0)
}

/// Writes `text` to stdout; a reader that went away (`| head`) is not an error.
pub fn print_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `report diff OLD NEW [--json]`: prints what changed; exit 1 on a regression.
pub fn diff(old: &Path, new: &Path, json: bool) -> anyhow::Result<i32> {
    let (a, b) = (read_report(old)?, read_report(new)?);
    let d = compare::compare(&a, &b);
    if json {
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(&d)?))?;
    } else {
        print_stdout(&compare::to_text(&d, &old.display().to_string(), &new.display().to_string()))?;
    }
    Ok(d.exit_code())
}

/// `report merge DIR... --out OUT`: the shard outputs in `dirs` merged into `out` (one index of
/// every agent, their folders copied). A shard set with a shard missing is merged, with a warning:
/// the index then lacks that shard's agents.
pub fn merge(dirs: &[PathBuf], out: &Path) -> anyhow::Result<i32> {
    let mut shards = Vec::new();
    for dir in dirs {
        shards.push(index::read_index(dir)?.shard);
    }
    if let Some((missing, count)) = index::missing_shards(&shards) {
        let missing: Vec<String> = missing.iter().map(u32::to_string).collect();
        eprintln!("warning: shard(s) {} of {count} not given: the merged index lacks their agents", missing.join(", "));
    }
    let merged = index::merge(dirs, out)?;
    let s = &merged.summary;
    eprintln!(
        "merged {} shard(s) into {}: {} agent(s), {} conformant, {} non-conformant, {} inconclusive, {} error",
        dirs.len(),
        out.join(index::files::INDEX_JSON).display(),
        s.agents,
        s.conformant,
        s.non_conformant,
        s.inconclusive,
        s.errored
    );
    Ok(0)
}

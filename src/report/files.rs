//! Report files as sinks: each format collects the run's events and writes its file when the run
//! finishes, so every file is a rendering of the same events.

use std::io;
use std::path::{Path, PathBuf};

use super::events::{RunEvent, Sink};
use super::json::{Collector, Report, to_json_string};
use super::{acts, html, junit, markdown, sarif};

/// The files `check --format` can write into `--out`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `report.json`: the kit's report, a superset of ACTS §13.
    Json,
    /// `junit.xml`.
    Junit,
    /// `acts-report.json`: the strict ACTS §13 subset.
    Acts,
    /// `report.html`: one self-contained page.
    Html,
    /// `report.sarif`: SARIF 2.1.0, for code-scanning views.
    Sarif,
    /// `report.md`: a summary short enough for a pull-request comment.
    Markdown,
}

impl Format {
    /// Every format, in the order their names are listed.
    pub const ALL: [Format; 6] =
        [Format::Json, Format::Junit, Format::Acts, Format::Html, Format::Sarif, Format::Markdown];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Junit => "junit",
            Format::Acts => "acts",
            Format::Html => "html",
            Format::Sarif => "sarif",
            Format::Markdown => "md",
        }
    }

    /// The format called `name` (`markdown` is `md` too).
    pub fn from_name(name: &str) -> Option<Format> {
        let name = name.trim().to_ascii_lowercase();
        if name == "markdown" {
            return Some(Format::Markdown);
        }
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    pub fn file_name(self) -> &'static str {
        match self {
            Format::Json => "report.json",
            Format::Junit => "junit.xml",
            Format::Acts => "acts-report.json",
            Format::Html => "report.html",
            Format::Sarif => "report.sarif",
            Format::Markdown => "report.md",
        }
    }

    pub fn render(self, report: &Report) -> String {
        match self {
            Format::Json => to_json_string(report),
            Format::Junit => junit::to_junit(report),
            Format::Acts => {
                let v = acts::to_acts(report, None);
                // Plain data with string keys always serializes.
                format!("{}\n", serde_json::to_string_pretty(&v).expect("ACTS report serializes"))
            }
            Format::Html => html::to_html(report),
            Format::Sarif => sarif::to_sarif_string(report),
            Format::Markdown => markdown::to_markdown(report),
        }
    }
}

/// Writes one format into a directory when the run finishes.
#[derive(Debug)]
pub struct FileSink {
    format: Format,
    dir: PathBuf,
    collector: Collector,
    outcome: Option<io::Result<PathBuf>>,
}

impl FileSink {
    pub fn new(format: Format, dir: &Path) -> Self {
        FileSink { format, dir: dir.to_path_buf(), collector: Collector::new(), outcome: None }
    }

    /// The path written, or why it could not be; `None` before the run finished.
    pub fn outcome(&self) -> Option<Result<&Path, String>> {
        self.outcome.as_ref().map(|o| match o {
            Ok(p) => Ok(p.as_path()),
            Err(e) => Err(format!("writing {}: {e}", self.dir.join(self.format.file_name()).display())),
        })
    }

    fn write(&self, report: &Report) -> io::Result<PathBuf> {
        std::fs::create_dir_all(&self.dir)?;
        let path = self.dir.join(self.format.file_name());
        std::fs::write(&path, self.format.render(report))?;
        Ok(path)
    }
}

impl Sink for FileSink {
    fn event(&mut self, ev: &RunEvent) {
        self.collector.event(ev);
        if matches!(ev, RunEvent::RunFinished { .. })
            && let Some(report) = self.collector.report()
        {
            self.outcome = Some(self.write(report));
        }
    }
}

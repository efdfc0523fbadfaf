//! Verdicts and reports: the verdict model, the run events every sink consumes, and the sinks and
//! renderings (JSON report, JUnit, terminal view, ACTS subset, JSON lines, HTML, SARIF, Markdown),
//! the findings by root cause (fingerprint, causes, headline) and what a verdict rests on (graded),
//! the spec's words as the text renderings show them (quotes), the baseline overlay, report diffs and
//! the progress bar; the index of a registry run (many agents, and shards merged).

pub mod acts;
pub mod baseline;
pub mod causes;
pub mod compare;
pub mod diagnosis;
pub mod errors;
pub mod events;
pub mod files;
pub mod fingerprint;
pub mod fix_first;
pub mod graded;
pub mod headline;
pub mod html;
pub mod index;
pub mod json;
pub mod junit;
pub mod lines;
pub mod markdown;
pub mod model;
pub mod progress;
pub mod quotes;
pub mod sarif;
pub mod terminal;
pub mod text;
pub mod textdiff;

pub use events::{RunEvent, Sink};
pub use json::{Collector, Report, build_report};
pub use model::*;

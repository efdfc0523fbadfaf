//! Verdicts and reports: the verdict model, the run events every sink consumes, and the sinks and
//! renderings (JSON report, JUnit, terminal view, ACTS subset, JSON lines).

pub mod acts;
pub mod events;
pub mod files;
pub mod json;
pub mod junit;
pub mod lines;
pub mod model;
pub mod terminal;

pub use events::{RunEvent, Sink};
pub use json::{Collector, Report, build_report};
pub use model::*;

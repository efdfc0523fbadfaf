//! The index of a registry run: many agents checked (`check --targets`), each with its own report
//! files in `OUT/<name>/`, summed up in `OUT/index.json` (schema `reports/index.schema.json`),
//! `OUT/index.html` and `OUT/junit.xml`; and the outputs of N shards merged into one.
//!
//! - [`model`]: the index document, its summary and the requirements failing most;
//! - [`entry`]: an agent's entry, from its report or for an agent the kit could not run; flakiness;
//! - [`html`], [`junit`]: the page and the JUnit file;
//! - [`files`]: the three files written, and `index.json` read back;
//! - [`merge`]: shard outputs made into one.

pub mod entry;
pub mod files;
pub mod html;
pub mod junit;
pub mod merge;
pub mod model;

pub use entry::{entry_failed, entry_from_report, flakiness, report_link};
pub use files::{IndexError, read_index, write_index};
pub use html::render_html;
pub use merge::{merge, missing_shards};
pub use model::*;

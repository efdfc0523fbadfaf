//! The normative texts every check quotes: the A2A 1.0 specification (prose), its proto (the data
//! model, §1.4) and JSON-RPC 2.0 (the envelope, §9.3), compiled in from `fixtures/spec/`. It finds a
//! quote in its text after the normalisation the kit allows (whitespace, markdown emphasis and
//! links, comment markers), names the section a quote stands in, reads the RFC 2119 keyword of a
//! sentence, splits a text into its normative sentences, lists the proto's fields, and says which of them a quote stands on
//! (for `coverage`).
//!
//! No other layer is imported: the checker and the tests both read the spec through here. This file
//! only names the parts; each part imports only those below it (rendered, source, normalize, sections, text,
//! sentences, then quoting, nearest and proto), which `tests/layers.rs` holds it to.

mod nearest;
mod normalize;
pub mod proto;
mod quoting;
mod rendered;
mod sections;
mod sentences;
mod source;
mod text;

pub use nearest::nearest;
pub use normalize::normalize;
pub use sentences::Sentence;
pub use source::{Source, Strength, keywords};
pub use text::{Location, Text, section_of_definition, stands_in};

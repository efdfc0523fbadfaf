//! Verdicts and reports: the event model every sink consumes, and the writers (JSON, JUnit, terminal).

pub mod model;

pub use model::*;

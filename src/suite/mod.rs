//! Data-driven checks in the ACTS grammar (with documented extensions): model, loader,
//! templating, assertions and the runner.

pub mod assert;
pub mod check;
pub mod expect;
pub mod loader;
pub mod model;
pub mod paths;
pub mod plan;
pub mod probes;
pub mod request;
pub mod runner;
pub mod schema;
pub mod selftest;
pub mod template;
pub mod webhook;

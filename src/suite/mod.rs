//! Data-driven checks in the ACTS grammar (with documented extensions): model, loader,
//! templating, assertions and the runner.

pub mod assert;
pub mod model;
pub mod paths;
pub mod template;

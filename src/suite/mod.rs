//! The check language: the case model (ACTS grammar with documented extensions), loading and
//! validation of suite files, planning, dot-paths, templating, assertions and the spec schema.
//! Pure data and functions: nothing here talks to a network or starts a runtime.

pub mod assert;
pub mod behaviors;
pub mod binding;
pub mod loader;
pub mod model;
pub mod paths;
pub mod plan;
pub mod schema;
pub mod template;

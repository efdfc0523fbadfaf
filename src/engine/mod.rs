//! Runs checks against a live agent: the per-check context, turning steps into requests, grading
//! answers, the Rust probes, the webhook receiver, evidence, and the scheduler. It reads answers
//! as raw JSON and through the spec schema, never through the mock's types.

pub mod behaviors;
pub mod context;
pub mod diagnose;
pub mod diagnosis;
pub mod discover;
pub mod error_details;
pub mod error_status;
pub mod evidence;
pub mod expect;
pub mod framing;
pub mod guard;
pub mod ids;
pub mod liveness;
pub mod non_blocking;
pub mod observe;
pub mod probes;
pub mod reach;
pub mod request;
pub mod runner;
pub mod scheduler;
pub mod security;
pub mod settle;
pub mod states;
pub mod webhook;
pub mod workaround;

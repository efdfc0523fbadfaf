//! a2a-conform: a conformance test kit and faithful mock peer for the A2A protocol 1.0.
//!
//! Layers, each depending only on those listed before it:
//! - [`sse`], [`protocol`], [`report`], [`spec`]: event-stream framing, the typed wire model, the
//!   verdict model and its renderings, the normative texts the checks quote;
//! - [`client`]: the bounded reference client; [`server`]: the mock peer;
//! - [`suite`]: the check language (no I/O beyond reading suite files);
//! - [`engine`]: runs checks against a live agent through the client, never through the mock's
//!   types;
//! - [`commands`]: `check`, `selftest`, `mock` and `client`, the only code that starts the mock;
//! - [`cli`]: flag parsing and wiring.

pub mod card;
pub mod cli;
pub mod client;
pub mod commands;
pub mod engine;
pub mod protocol;
pub mod report;
pub mod server;
pub mod spec;
pub mod sse;
pub mod suite;

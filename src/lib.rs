//! a2a-conform: a conformance test kit and faithful mock peer for the A2A protocol 1.0.

pub mod cli;
pub mod client;
pub mod protocol;
pub mod report;
pub mod server;
pub mod suite;

//! The commands behind the CLI: each takes parsed options and returns what to print or an exit
//! status. Only these start the mock peer.

pub mod bench;
pub mod card;
pub mod check;
pub mod client;
pub mod client_check;
pub mod coverage;
pub mod mock;
pub mod registry;
pub mod report;
pub mod selftest;

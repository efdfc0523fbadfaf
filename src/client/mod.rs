//! The reference client ("mock client"): bounded HTTP, JSON-RPC calls, SSE reading, card discovery
//! and redaction of user-supplied secrets.

pub mod discovery;
pub mod http;
pub mod redact;
pub mod rest;
pub mod rpc;

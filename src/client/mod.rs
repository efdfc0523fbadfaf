//! The reference client ("mock client"): bounded HTTP, JSON-RPC calls, SSE reading, card discovery
//! and redaction of user-supplied secrets.

pub mod sse;

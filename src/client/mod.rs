//! The reference client: the pieces the kit uses to talk to an agent under test.

pub mod sse;

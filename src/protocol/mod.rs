//! The A2A 1.0 wire model (ProtoJSON spelling), JSON-RPC envelope, error catalogue and limits.
//!
//! Shared by the mock peer and the reference client. It knows nothing of any HTTP stack: the server and
//! client modules adapt these types to axum and reqwest.

pub mod card;
pub mod errors;
pub mod events;
pub mod jsonrpc;
pub mod limits;
pub mod part;
pub mod push;
pub mod requests;
pub mod task;
pub mod timestamp;
pub mod version;
mod wire;

pub use card::*;
pub use errors::{ErrorCode, RpcError};
pub use events::*;
pub use jsonrpc::{Method, RequestId};
pub use part::{Part, PartContent};
pub use push::*;
pub use requests::*;
pub use task::*;
pub use timestamp::Timestamp;

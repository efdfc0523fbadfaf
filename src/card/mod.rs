//! Agent Card signing (§8.4): RFC 8785 canonicalization ([`jcs`]), the payload §8.4.1 signs
//! ([`presence`]), ES256 keys ([`keys`]) and detached JWS signing and verification ([`jws`]).
//!
//! It reads cards as raw JSON and imports no other layer, so that both the checker (which never
//! reads through the mock's typed model) and the mock can use it.

pub mod jcs;
pub mod jws;
pub mod keys;
pub mod presence;

pub use jws::{CardVerdict, Reading, SignOptions, sign, verify};
pub use keys::{KeyError, PrivateKey, PublicKey};

//! The protocol bindings the mock serves (§5): which one a call came over, and which ones a mock
//! declares and serves.

/// An A2A protocol binding (§5.1): how operations travel over HTTP. The mock serves JSON-RPC (§9)
/// and HTTP+JSON/REST (§11); in fault files and on the command line they are `jsonrpc` and
/// `http+json`. The checker names them with a type of its own (`suite::binding`): it never reads
/// the spec through the mock (tests/layers.rs), so that a misspelt `protocolBinding` here cannot
/// pass unnoticed there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize, serde::Serialize)]
pub enum Binding {
    #[serde(rename = "jsonrpc")]
    JsonRpc,
    #[serde(rename = "http+json")]
    HttpJson,
}

impl Binding {
    /// The name in fault files and flags.
    pub fn name(self) -> &'static str {
        match self {
            Binding::JsonRpc => "jsonrpc",
            Binding::HttpJson => "http+json",
        }
    }

    /// The card's `protocolBinding` value (§4.4.6).
    pub fn protocol_binding(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::HttpJson => "HTTP+JSON",
        }
    }
}

/// Which bindings the mock declares on its card and serves (`--binding`); a binding not declared
/// is not served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bindings {
    /// JSON-RPC first, then HTTP+JSON.
    #[default]
    Both,
    JsonRpc,
    HttpJson,
}

impl Bindings {
    pub fn serves(self, b: Binding) -> bool {
        match self {
            Bindings::Both => true,
            Bindings::JsonRpc => b == Binding::JsonRpc,
            Bindings::HttpJson => b == Binding::HttpJson,
        }
    }

    /// The served bindings in the card's order of preference (§8.3.2): JSON-RPC first.
    pub fn served(self) -> impl Iterator<Item = Binding> {
        [Binding::JsonRpc, Binding::HttpJson].into_iter().filter(move |b| self.serves(*b))
    }
}

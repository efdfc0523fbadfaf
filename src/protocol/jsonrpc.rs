//! The JSON-RPC 2.0 envelope (§9.3) and the 11 method names (§5.3).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::errors::RpcError;

/// A JSON-RPC request id: a string, a number, or null (JSON-RPC 2.0 §4: "MUST contain a String,
/// Number, or NULL value if included"; a null id is discouraged, and still a call).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(serde_json::Number),
    String(String),
    Null,
}

impl RequestId {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

macro_rules! methods {
    ($($(#[$m:meta])* $variant:ident => $name:literal, $section:literal, $streaming:literal;)+) => {
        /// The 11 A2A methods, by their 1.0 PascalCase names.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Method {
            $($(#[$m])* $variant,)+
        }

        impl Method {
            /// All methods in §5.3 order.
            pub const ALL: &'static [Method] = &[$(Method::$variant,)+];

            pub fn name(self) -> &'static str {
                match self { $(Method::$variant => $name,)+ }
            }

            /// The JSON-RPC section of the spec that defines it.
            pub fn section(self) -> &'static str {
                match self { $(Method::$variant => $section,)+ }
            }

            /// True for the two methods answered with SSE.
            pub fn is_streaming(self) -> bool {
                match self { $(Method::$variant => $streaming,)+ }
            }

            /// Looks a wire name up (exact, case-sensitive).
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($name => Some(Method::$variant),)+ _ => None }
            }

            /// Looks a 0.3 method name up (`message/send` is SendMessage; digest §16).
            pub fn from_legacy_name(s: &str) -> Option<Self> {
                LEGACY_NAMES.iter().find(|(legacy, _)| *legacy == s).map(|(_, m)| *m)
            }
        }
    };
}

methods! {
    /// Send a message, get a Task or Message.
    SendMessage => "SendMessage", "9.4.1", false;
    /// Send a message, get an SSE stream.
    SendStreamingMessage => "SendStreamingMessage", "9.4.2", true;
    GetTask => "GetTask", "9.4.3", false;
    ListTasks => "ListTasks", "9.4.4", false;
    CancelTask => "CancelTask", "9.4.5", false;
    SubscribeToTask => "SubscribeToTask", "9.4.6", true;
    /// Register a webhook.
    CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig", "9.4.7", false;
    /// Read a webhook.
    GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig", "9.4.7", false;
    /// List webhooks.
    ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs", "9.4.7", false;
    /// Remove a webhook.
    DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig", "9.4.7", false;
    /// Fetch the authenticated extended card.
    GetExtendedAgentCard => "GetExtendedAgentCard", "9.4.8", false;
}

/// The 0.3 names of the methods 0.3 had (ListTasks is new in 1.0).
pub const LEGACY_NAMES: &[(&str, Method)] = &[
    ("message/send", Method::SendMessage),
    ("message/stream", Method::SendStreamingMessage),
    ("tasks/get", Method::GetTask),
    ("tasks/cancel", Method::CancelTask),
    ("tasks/resubscribe", Method::SubscribeToTask),
    ("tasks/pushNotificationConfig/set", Method::CreateTaskPushNotificationConfig),
    ("tasks/pushNotificationConfig/get", Method::GetTaskPushNotificationConfig),
    ("tasks/pushNotificationConfig/list", Method::ListTaskPushNotificationConfigs),
    ("tasks/pushNotificationConfig/delete", Method::DeleteTaskPushNotificationConfig),
    ("agent/getAuthenticatedExtendedCard", Method::GetExtendedAgentCard),
];

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

pub fn success(id: &RequestId, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_json(), "result": result})
}

/// An error response envelope; `id` is null when the request's id could not be read.
pub fn failure(id: Option<&RequestId>, error: &RpcError) -> Value {
    failure_with(id, error, false)
}

/// [`failure`], with a `google.rpc.ErrorInfo` on every error code when `info_everywhere`.
pub fn failure_with(id: Option<&RequestId>, error: &RpcError, info_everywhere: bool) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id.map(RequestId::to_json).unwrap_or(Value::Null),
        "error": error.to_json_with(info_everywhere),
    })
}

/// A request envelope, as the reference client sends it.
pub fn request(id: &RequestId, method: Method, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_json(), "method": method.name(), "params": params})
}

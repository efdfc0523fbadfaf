//! The error catalogue: JSON-RPC standard codes (§9.5) and A2A codes (§3.3.2, §5.4).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The `domain` of every A2A ErrorInfo (§10.6, §11.6).
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
pub const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

macro_rules! error_codes {
    ($($(#[$m:meta])* $variant:ident = $code:literal, $reason:literal, $message:literal;)+) => {
        /// Every error code the protocol defines, plus the kit's authentication code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[$m])* $variant,)+
        }

        impl ErrorCode {
            /// All codes, in catalogue order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)+];

            pub fn code(self) -> i64 {
                match self { $(ErrorCode::$variant => $code,)+ }
            }

            /// The ErrorInfo `reason`: the UPPER_SNAKE error name without "Error".
            pub fn reason(self) -> &'static str {
                match self { $(ErrorCode::$variant => $reason,)+ }
            }

            /// The spec's standard message for this code.
            pub fn standard_message(self) -> &'static str {
                match self { $(ErrorCode::$variant => $message,)+ }
            }

            pub fn from_code(code: i64) -> Option<Self> {
                match code { $($code => Some(ErrorCode::$variant),)+ _ => None }
            }
        }
    };
}

error_codes! {
    /// The body is not JSON.
    ParseError = -32700, "PARSE_ERROR", "Invalid JSON payload";
    /// Not a valid JSON-RPC request.
    InvalidRequest = -32600, "INVALID_REQUEST", "Request payload validation error";
    /// Unknown method.
    MethodNotFound = -32601, "METHOD_NOT_FOUND", "Method not found";
    /// Params fail validation.
    InvalidParams = -32602, "INVALID_PARAMS", "Invalid parameters";
    /// Server fault.
    Internal = -32603, "INTERNAL", "Internal error";
    TaskNotFound = -32001, "TASK_NOT_FOUND", "Task not found";
    TaskNotCancelable = -32002, "TASK_NOT_CANCELABLE", "Task cannot be canceled";
    PushNotificationNotSupported = -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push Notification is not supported";
    UnsupportedOperation = -32004, "UNSUPPORTED_OPERATION", "This operation is not supported";
    ContentTypeNotSupported = -32005, "CONTENT_TYPE_NOT_SUPPORTED", "Incompatible content types";
    InvalidAgentResponse = -32006, "INVALID_AGENT_RESPONSE", "Invalid agent response";
    ExtendedAgentCardNotConfigured = -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "Extended Agent Card not configured";
    ExtensionSupportRequired = -32008, "EXTENSION_SUPPORT_REQUIRED", "Extension support required";
    VersionNotSupported = -32009, "VERSION_NOT_SUPPORTED", "Version not supported";
    /// The spec names authentication errors a "JSON-RPC custom error" without a code (digest §3); the
    /// kit uses the JSON-RPC server-error code just outside A2A's reserved range.
    Unauthenticated = -32000, "UNAUTHENTICATED", "Authentication required";
}

impl ErrorCode {
    /// The HTTP status of this error in the HTTP+JSON binding: §5.4's table (the 1.0.1 column,
    /// which moved TaskNotCancelable from 409, ContentTypeNotSupported from 415 and
    /// InvalidAgentResponse from 502 to 400, 400 and 500), and for the errors §5.4 does not list
    /// (JSON-RPC's own, and authentication) what HTTP says: a request the server cannot read or
    /// validate 400, an operation that does not exist 404, an internal error 500, no valid
    /// credential 401.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::TaskNotFound | ErrorCode::MethodNotFound => 404,
            ErrorCode::InvalidAgentResponse | ErrorCode::Internal => 500,
            ErrorCode::Unauthenticated => 401,
            ErrorCode::ParseError
            | ErrorCode::InvalidRequest
            | ErrorCode::InvalidParams
            | ErrorCode::TaskNotCancelable
            | ErrorCode::PushNotificationNotSupported
            | ErrorCode::UnsupportedOperation
            | ErrorCode::ContentTypeNotSupported
            | ErrorCode::ExtendedAgentCardNotConfigured
            | ErrorCode::ExtensionSupportRequired
            | ErrorCode::VersionNotSupported => 400,
        }
    }

    /// The `google.rpc.Code` name of this error (§5.4's gRPC column, 1.0.1): the `status` member of
    /// an HTTP+JSON error body (§11.6).
    pub fn rpc_status(self) -> &'static str {
        match self {
            ErrorCode::TaskNotFound | ErrorCode::MethodNotFound => "NOT_FOUND",
            ErrorCode::InvalidAgentResponse | ErrorCode::Internal => "INTERNAL",
            ErrorCode::Unauthenticated => "UNAUTHENTICATED",
            ErrorCode::ParseError
            | ErrorCode::InvalidRequest
            | ErrorCode::InvalidParams
            | ErrorCode::ContentTypeNotSupported => "INVALID_ARGUMENT",
            ErrorCode::TaskNotCancelable
            | ErrorCode::PushNotificationNotSupported
            | ErrorCode::UnsupportedOperation
            | ErrorCode::ExtendedAgentCardNotConfigured
            | ErrorCode::ExtensionSupportRequired
            | ErrorCode::VersionNotSupported => "FAILED_PRECONDITION",
        }
    }

    /// True for codes in the A2A range, which carry an ErrorInfo detail.
    pub fn is_a2a(self) -> bool {
        (-32099..=-32001).contains(&self.code())
    }
}

/// One `google.rpc.BadRequest` field violation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldViolation {
    /// Path of the offending field, e.g. `message.parts[0]`.
    pub field: String,
    pub description: String,
}

/// A JSON-RPC error as the mock sends it: code, message and `data` array of `@type` objects.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: ErrorCode,
    pub message: String,
    /// ErrorInfo metadata (string values only, as in `google.rpc.ErrorInfo`); boxed to keep
    /// `Result<_, RpcError>` small.
    pub metadata: Box<Map<String, Value>>,
    /// BadRequest field violations, for -32602.
    pub violations: Vec<FieldViolation>,
}

impl RpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RpcError { code, message: message.into(), metadata: Box::default(), violations: Vec::new() }
    }

    /// An error with the spec's standard message.
    pub fn standard(code: ErrorCode) -> Self {
        Self::new(code, code.standard_message())
    }

    /// -32602 naming the offending field.
    pub fn invalid_params(field: impl Into<String>, description: impl Into<String>) -> Self {
        let field = field.into();
        let description = description.into();
        let mut e = Self::new(ErrorCode::InvalidParams, format!("Invalid parameters: {field}: {description}"));
        e.violations.push(FieldViolation { field, description });
        e
    }

    pub fn task_not_found(task_id: &str) -> Self {
        Self::standard(ErrorCode::TaskNotFound).with_meta("taskId", task_id)
    }

    pub fn with_meta(mut self, key: &str, value: impl Into<String>) -> Self {
        self.metadata.insert(key.to_owned(), Value::String(value.into()));
        self
    }

    /// The JSON-RPC `error` object (§9.5): A2A codes carry a `google.rpc.ErrorInfo`, -32602 a
    /// `google.rpc.BadRequest`.
    pub fn to_json(&self) -> Value {
        self.to_json_with(false)
    }

    /// [`RpcError::to_json`], with a `google.rpc.ErrorInfo` on every code when `info_everywhere`
    /// (after the BadRequest of a -32602, which stays first).
    pub fn to_json_with(&self, info_everywhere: bool) -> Value {
        let mut data = Vec::new();
        let a2a = self.code.is_a2a() || self.code == ErrorCode::Unauthenticated;
        let info = || {
            let mut info = json!({
                "@type": ERROR_INFO_TYPE,
                "reason": self.code.reason(),
                "domain": ERROR_DOMAIN,
            });
            if !self.metadata.is_empty() {
                info["metadata"] = Value::Object((*self.metadata).clone());
            }
            info
        };
        if a2a {
            data.push(info());
        }
        if !self.violations.is_empty() {
            data.push(json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": self.violations}));
        }
        if info_everywhere && !a2a {
            data.push(info());
        }
        let mut err = json!({"code": self.code.code(), "message": self.message});
        if !data.is_empty() {
            err["data"] = Value::Array(data);
        }
        err
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code.code())
    }
}

impl std::error::Error for RpcError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a2a_errors_carry_error_info() {
        let e = RpcError::task_not_found("t-1").to_json();
        assert_eq!(e["code"], -32001);
        assert_eq!(e["data"][0]["@type"], ERROR_INFO_TYPE);
        assert_eq!(e["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(e["data"][0]["domain"], ERROR_DOMAIN);
        assert_eq!(e["data"][0]["metadata"]["taskId"], "t-1");
    }

    #[test]
    fn invalid_params_carry_bad_request() {
        let e = RpcError::invalid_params("message.parts", "must not be empty").to_json();
        assert_eq!(e["code"], -32602);
        assert_eq!(e["data"][0]["@type"], BAD_REQUEST_TYPE);
        assert_eq!(e["data"][0]["fieldViolations"][0]["field"], "message.parts");
    }

    #[test]
    fn error_info_everywhere_reaches_standard_codes() {
        let plain = RpcError::standard(ErrorCode::MethodNotFound);
        assert!(plain.to_json().get("data").is_none());
        let e = plain.to_json_with(true);
        assert_eq!(e["data"][0]["reason"], "METHOD_NOT_FOUND");
        let e = RpcError::invalid_params("x", "bad").to_json_with(true);
        assert_eq!(e["data"][0]["@type"], BAD_REQUEST_TYPE);
        assert_eq!(e["data"][1]["@type"], ERROR_INFO_TYPE);
        assert_eq!(RpcError::task_not_found("t").to_json_with(true), RpcError::task_not_found("t").to_json());
    }

    #[test]
    fn http_statuses_follow_section_5_4() {
        let table = [
            (ErrorCode::TaskNotFound, 404, "NOT_FOUND"),
            (ErrorCode::TaskNotCancelable, 400, "FAILED_PRECONDITION"),
            (ErrorCode::PushNotificationNotSupported, 400, "FAILED_PRECONDITION"),
            (ErrorCode::UnsupportedOperation, 400, "FAILED_PRECONDITION"),
            (ErrorCode::ContentTypeNotSupported, 400, "INVALID_ARGUMENT"),
            (ErrorCode::InvalidAgentResponse, 500, "INTERNAL"),
            (ErrorCode::ExtendedAgentCardNotConfigured, 400, "FAILED_PRECONDITION"),
            (ErrorCode::ExtensionSupportRequired, 400, "FAILED_PRECONDITION"),
            (ErrorCode::VersionNotSupported, 400, "FAILED_PRECONDITION"),
        ];
        for (code, status, name) in table {
            assert_eq!((code.http_status(), code.rpc_status()), (status, name), "{code:?}");
        }
        assert_eq!(ErrorCode::InvalidParams.http_status(), 400);
        assert_eq!(ErrorCode::Unauthenticated.http_status(), 401);
    }

    #[test]
    fn codes_round_trip() {
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(c.code()), Some(*c));
        }
    }
}

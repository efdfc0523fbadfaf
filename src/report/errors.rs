//! The names the spec gives its error codes (§5.4's table for JSON-RPC), as findings and headlines
//! say them: "TaskNotFoundError (-32001)" reads where "-32001" alone asks the reader to look it up.

/// Each JSON-RPC code the spec names, with the name of the error it maps.
pub const ERRORS: &[(i64, &str)] = &[
    (-32001, "TaskNotFoundError"),
    (-32002, "TaskNotCancelableError"),
    (-32003, "PushNotificationNotSupportedError"),
    (-32004, "UnsupportedOperationError"),
    (-32005, "ContentTypeNotSupportedError"),
    (-32006, "InvalidAgentResponseError"),
    (-32007, "ExtendedAgentCardNotConfiguredError"),
    (-32008, "ExtensionSupportRequiredError"),
    (-32009, "VersionNotSupportedError"),
    (-32700, "JSONParseError"),
    (-32600, "InvalidRequestError"),
    (-32601, "MethodNotFoundError"),
    (-32602, "InvalidParamsError"),
    (-32603, "InternalError"),
];

pub fn error_name(code: i64) -> Option<&'static str> {
    ERRORS.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The code of an error named as the spec names it (`TaskNotFoundError`, or without the
/// `Error` suffix).
pub fn error_code(name: &str) -> Option<i64> {
    let bare = name.trim_end_matches("Error");
    ERRORS.iter().find(|(_, n)| n.trim_end_matches("Error") == bare).map(|(c, _)| *c)
}

/// `TaskNotFoundError (-32001)`; a code the spec does not name is its number.
pub fn described(code: i64) -> String {
    error_name(code).map_or_else(|| code.to_string(), |n| format!("{n} ({code})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_agree() {
        for (code, name) in ERRORS {
            assert_eq!(error_code(name), Some(*code));
            assert_eq!(error_name(*code), Some(*name));
        }
        assert_eq!(error_code("VersionNotSupported"), Some(-32009));
        assert_eq!(described(-32009), "VersionNotSupportedError (-32009)");
        assert_eq!(described(-32000), "-32000");
    }
}

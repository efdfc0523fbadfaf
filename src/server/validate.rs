//! Input validation the mock applies before acting (§3.3.2 "MUST validate all input"): each failure
//! is a -32602 naming the field.

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::protocol::limits::Limits;
use crate::protocol::{ErrorCode, Message, PartContent, Role, RpcError};

/// A request's `params`: its raw text when the envelope was read the quick way, else a `Value`.
#[derive(Debug)]
pub enum Params<'a> {
    Raw(&'a RawValue),
    Value(Value),
}

impl Params<'_> {
    /// Absent or `null`.
    pub fn is_null(&self) -> bool {
        match self {
            Params::Raw(r) => r.get() == "null",
            Params::Value(v) => v.is_null(),
        }
    }

    pub fn into_value(self) -> Value {
        match self {
            // Raw text the envelope's reader accepted is valid JSON.
            Params::Raw(r) => serde_json::from_str(r.get()).unwrap_or(Value::Null),
            Params::Value(v) => v,
        }
    }

    /// Deserializes into a request type, straight from the text when it is at hand; a mismatch is
    /// -32602 naming the JSON path, exactly as [`parse_params`] names it.
    pub fn parse<T: DeserializeOwned>(self) -> Result<T, RpcError> {
        if let Params::Raw(r) = &self
            && let Ok(t) = serde_json::from_str::<T>(r.get())
        {
            return Ok(t);
        }
        // Also when the text reads differently (a repeated key, which the `Value` reading lets
        // the last one win): whatever fails, fails with the same words as before.
        parse_params(self.into_value())
    }
}

/// Deserializes `params` into a request type; a mismatch is -32602 naming the JSON path.
pub fn parse_params<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let description = e.inner().to_string();
        // serde reports a missing field at its parent's path; the violation names the field itself.
        let missing = description.strip_prefix("missing field `").and_then(|r| r.split('`').next());
        let field = match (path.as_str(), missing) {
            (".", Some(name)) => name.to_owned(),
            (_, Some(name)) => format!("{path}.{name}"),
            (".", None) => "params".to_owned(),
            (_, None) => path,
        };
        RpcError::invalid_params(field, description)
    })
}

/// Checks an id field against the length bound.
pub fn check_id(field: &str, value: &str, limits: &Limits) -> Result<(), RpcError> {
    if value.len() > limits.max_id_len {
        return Err(RpcError::invalid_params(field, format!("longer than {} bytes", limits.max_id_len)));
    }
    Ok(())
}

/// A required string must be present and non-empty.
pub fn require(field: &str, value: &str) -> Result<(), RpcError> {
    if value.is_empty() {
        return Err(RpcError::invalid_params(field, "is required"));
    }
    Ok(())
}

/// `historyLength` must not be negative (§6.5).
pub fn check_history_length(field: &str, n: Option<i32>) -> Result<(), RpcError> {
    match n {
        Some(n) if n < 0 => Err(RpcError::invalid_params(field, format!("must not be negative (got {n})"))),
        _ => Ok(()),
    }
}

/// Validates a client message: REQUIRED fields, role, part bounds and ids.
pub fn check_message(m: &Message, limits: &Limits) -> Result<(), RpcError> {
    require("message.messageId", &m.message_id)?;
    check_id("message.messageId", &m.message_id, limits)?;
    check_id("message.taskId", &m.task_id, limits)?;
    check_id("message.contextId", &m.context_id, limits)?;
    for (i, r) in m.reference_task_ids.iter().enumerate() {
        check_id(&format!("message.referenceTaskIds[{i}]"), r, limits)?;
    }
    if m.role != Role::User {
        return Err(RpcError::invalid_params(
            "message.role",
            format!("a client message must have role ROLE_USER, not {}", m.role),
        ));
    }
    if m.parts.is_empty() {
        return Err(RpcError::invalid_params("message.parts", "At least one part is required"));
    }
    if m.parts.len() > limits.max_parts {
        return Err(RpcError::invalid_params("message.parts", format!("more than {} parts", limits.max_parts)));
    }
    for (i, p) in m.parts.iter().enumerate() {
        if let PartContent::Url(u) = &p.content
            && reqwest::Url::parse(u).is_err()
        {
            return Err(RpcError::invalid_params(format!("message.parts[{i}].url"), "is not an absolute URL"));
        }
    }
    Ok(())
}

/// True if `offered` is acceptable under `accepted` (exact, `type/*` or `*/*`; parameters ignored).
pub fn media_type_matches(accepted: &str, offered: &str) -> bool {
    let base = |s: &str| s.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let (a, o) = (base(accepted), base(offered));
    if a == "*/*" || a == o {
        return true;
    }
    match a.strip_suffix("/*") {
        Some(prefix) => o.split('/').next() == Some(prefix),
        None => false,
    }
}

/// -32005 unless every part's media type is one the agent accepts (§3.1.1).
pub fn check_input_media_types(m: &Message, input_modes: &[String]) -> Result<(), RpcError> {
    for (i, p) in m.parts.iter().enumerate() {
        if !p.media_type.is_empty() && !input_modes.iter().any(|a| media_type_matches(a, &p.media_type)) {
            return Err(RpcError::new(
                ErrorCode::ContentTypeNotSupported,
                format!(
                    "message.parts[{i}] has media type {:?}; this agent accepts {}",
                    p.media_type,
                    input_modes.join(", ")
                ),
            )
            .with_meta("mediaType", p.media_type.clone()));
        }
    }
    Ok(())
}

/// -32005 when the client accepts none of the agent's output modes.
pub fn check_output_modes(accepted: &[String], output_modes: &[String]) -> Result<(), RpcError> {
    if accepted.is_empty() || accepted.iter().any(|a| output_modes.iter().any(|o| media_type_matches(a, o))) {
        return Ok(());
    }
    Err(RpcError::new(
        ErrorCode::ContentTypeNotSupported,
        format!(
            "configuration.acceptedOutputModes [{}] excludes everything this agent produces ({})",
            accepted.join(", "),
            output_modes.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_match_with_wildcards_and_parameters() {
        assert!(media_type_matches("text/*", "text/plain; charset=utf-8"));
        assert!(media_type_matches("*/*", "image/png"));
        assert!(media_type_matches("application/json", "Application/JSON"));
        assert!(!media_type_matches("text/plain", "text/html"));
        assert!(!media_type_matches("text/*", "textual/plain"));
    }
}

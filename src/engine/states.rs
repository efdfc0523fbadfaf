//! Task states as the wire spells them, read from raw JSON: the engine grades what a peer sent and
//! so keeps its own reading of the spec rather than the mock's enum.

use serde_json::Value;

/// §4.1.3: a task in one of these states never changes again.
pub const TERMINAL: [&str; 4] =
    ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"];

/// Whether `state` is terminal, in its 1.0 name or its 0.3 spelling: what a task's state means for
/// when to stop waiting does not depend on how it is spelled (that is the enum checks' finding).
pub fn is_terminal(state: &str) -> bool {
    TERMINAL.contains(&super::workaround::state_name(state).unwrap_or(state))
}

/// The task state a StreamResponse (or SendMessageResponse) carries, from its `task` snapshot or its
/// `statusUpdate`.
pub fn state_of(response: &Value) -> Option<&str> {
    response
        .pointer("/task/status/state")
        .or_else(|| response.pointer("/statusUpdate/status/state"))
        .and_then(Value::as_str)
}

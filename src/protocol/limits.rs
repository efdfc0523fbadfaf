//! Bounds on everything a peer can make the kit hold, with the mock's defaults.

/// The mock's resource bounds. Each one has a command-line flag of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body accepted, in bytes.
    pub max_request_bytes: usize,
    /// Deepest JSON nesting accepted in a request.
    pub max_json_depth: usize,
    /// Most parts in one message.
    pub max_parts: usize,
    /// Longest id (message, task, context, config, request) accepted, in bytes.
    pub max_id_len: usize,
    /// Most messages kept in a task's history; older ones are dropped first.
    pub max_history: usize,
    /// Most events kept in a task's replay log.
    pub max_task_events: usize,
    /// Most concurrent stream subscribers per task.
    pub max_subscribers: usize,
    /// Most push configs per task.
    pub max_push_configs: usize,
    /// Most tasks stored; the oldest finished ones are evicted first.
    pub max_tasks: usize,
    /// Longest time a blocking SendMessage waits before returning the task as it stands, in ms.
    pub max_blocking_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_request_bytes: 1024 * 1024,
            max_json_depth: 32,
            max_parts: 64,
            max_id_len: 256,
            max_history: 200,
            max_task_events: 1024,
            max_subscribers: 32,
            max_push_configs: 16,
            max_tasks: 10_000,
            max_blocking_ms: 30_000,
        }
    }
}

/// The page size bounds of ListTasks (§3.1.4): 1..=100, default 50.
pub const LIST_TASKS_MAX_PAGE_SIZE: i32 = 100;
pub const LIST_TASKS_DEFAULT_PAGE_SIZE: i32 = 50;

/// Returns the deepest nesting of arrays and objects in a JSON text, without parsing it, stopping
/// early once `limit` is exceeded (so a hostile body costs at most one pass and no allocation).
pub fn json_depth_exceeds(bytes: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_nesting_outside_strings() {
        assert!(!json_depth_exceeds(br#"{"a":[1,{"b":"[[[[["}]}"#, 3));
        assert!(json_depth_exceeds(br#"{"a":[1,{"b":[[]]}]}"#, 4));
        assert!(!json_depth_exceeds(br#"{"a":"\"[[[[["}"#, 1));
    }
}

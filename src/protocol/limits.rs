//! Bounds on everything a peer can make the kit hold, with the mock's defaults.

/// The mock's resource bounds. Each one has a command-line flag of the same name (`max_parts` is
/// `--max-parts`), and [`Limits::table`] describes them all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body accepted, in bytes.
    pub max_request_bytes: usize,
    /// Deepest JSON nesting accepted in a request.
    pub max_json_depth: usize,
    /// Largest non-streaming result sent, in bytes.
    pub max_response_bytes: usize,
    /// Largest single SSE event sent, in bytes.
    pub max_event_bytes: usize,
    /// Longest time one SSE stream stays open, in ms.
    pub max_stream_ms: u64,
    /// Most parts in one message.
    pub max_parts: usize,
    /// Longest id (message, task, context, config, request) accepted, in bytes.
    pub max_id_len: usize,
    /// Most message ids remembered by `--single-use-message-ids`; the oldest are forgotten first.
    pub max_message_ids: usize,
    /// Most messages kept in a task's history; older ones are dropped first.
    pub max_history: usize,
    /// Most events kept in a task's replay log.
    pub max_task_events: usize,
    /// Largest page a list method returns (a bigger `pageSize` is served with this many).
    pub max_page_size: usize,
    /// Longest `pageToken` accepted, in bytes.
    pub max_cursor_len: usize,
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
            max_response_bytes: 8 * 1024 * 1024,
            max_event_bytes: 1024 * 1024,
            max_stream_ms: 600_000,
            max_parts: 64,
            max_id_len: 256,
            max_message_ids: 10_000,
            max_history: 200,
            max_task_events: 1024,
            max_page_size: 100,
            max_cursor_len: 512,
            max_subscribers: 32,
            max_push_configs: 16,
            max_tasks: 10_000,
            max_blocking_ms: 30_000,
        }
    }
}

/// One row of the limits table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitRow {
    /// The flag that sets it, e.g. `--max-parts`.
    pub flag: &'static str,
    /// The value in force.
    pub value: String,
    /// The default value.
    pub default: String,
    /// What is bounded.
    pub what: &'static str,
    /// What happens beyond it.
    pub beyond: &'static str,
}

impl Limits {
    /// Every limit, with its flag, value, default and what exceeding it does.
    pub fn table(&self) -> Vec<LimitRow> {
        let d = Limits::default();
        let row = |flag, value: String, default: String, what, beyond| LimitRow { flag, value, default, what, beyond };
        vec![
            row(
                "--max-request-bytes",
                self.max_request_bytes.to_string(),
                d.max_request_bytes.to_string(),
                "request body, bytes",
                "-32600",
            ),
            row(
                "--max-json-depth",
                self.max_json_depth.to_string(),
                d.max_json_depth.to_string(),
                "JSON nesting of a request",
                "-32600",
            ),
            row(
                "--max-response-bytes",
                self.max_response_bytes.to_string(),
                d.max_response_bytes.to_string(),
                "non-streaming result, bytes",
                "-32603 naming the limit (ask for less history)",
            ),
            row(
                "--max-event-bytes",
                self.max_event_bytes.to_string(),
                d.max_event_bytes.to_string(),
                "one SSE event, bytes",
                "a -32603 error event, then the stream closes",
            ),
            row(
                "--max-stream-ms",
                self.max_stream_ms.to_string(),
                d.max_stream_ms.to_string(),
                "life of one SSE stream, ms",
                "the stream closes; resume with Last-Event-ID / afterEventId",
            ),
            row("--max-parts", self.max_parts.to_string(), d.max_parts.to_string(), "parts per message", "-32602"),
            row(
                "--max-id-len",
                self.max_id_len.to_string(),
                d.max_id_len.to_string(),
                "message, task, context, config and request ids, bytes",
                "-32602 / -32600",
            ),
            row(
                "--max-message-ids",
                self.max_message_ids.to_string(),
                d.max_message_ids.to_string(),
                "message ids remembered by --single-use-message-ids",
                "the oldest is forgotten",
            ),
            row(
                "--max-history",
                self.max_history.to_string(),
                d.max_history.to_string(),
                "messages per task history",
                "the oldest is dropped",
            ),
            row(
                "--max-task-events",
                self.max_task_events.to_string(),
                d.max_task_events.to_string(),
                "events per task replay log",
                "the oldest is dropped; a resume from it restarts from a snapshot",
            ),
            row(
                "--max-page-size",
                self.max_page_size.to_string(),
                d.max_page_size.to_string(),
                "items per list page",
                "a bigger pageSize gets this many (ListTasks pageSize outside 1..100 is -32602)",
            ),
            row(
                "--max-cursor-len",
                self.max_cursor_len.to_string(),
                d.max_cursor_len.to_string(),
                "pageToken, bytes",
                "-32602",
            ),
            row(
                "--max-subscribers",
                self.max_subscribers.to_string(),
                d.max_subscribers.to_string(),
                "concurrent streams per task",
                "-32004 naming the limit",
            ),
            row(
                "--max-push-configs",
                self.max_push_configs.to_string(),
                d.max_push_configs.to_string(),
                "push configs per task",
                "-32004 naming the limit",
            ),
            row(
                "--max-tasks",
                self.max_tasks.to_string(),
                d.max_tasks.to_string(),
                "stored tasks",
                "finished tasks evicted oldest first; if none is finished, -32004",
            ),
            row(
                "--max-blocking-ms",
                self.max_blocking_ms.to_string(),
                d.max_blocking_ms.to_string(),
                "wait of a blocking SendMessage, ms",
                "the task is returned as it stands",
            ),
        ]
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
    fn the_table_names_every_limit_once() {
        let t = Limits { max_parts: 3, ..Limits::default() }.table();
        let flags: std::collections::BTreeSet<_> = t.iter().map(|r| r.flag).collect();
        assert_eq!(flags.len(), t.len(), "a flag is listed twice");
        let parts = t.iter().find(|r| r.flag == "--max-parts").unwrap();
        assert_eq!((parts.value.as_str(), parts.default.as_str()), ("3", "64"));
    }

    #[test]
    fn depth_counts_nesting_outside_strings() {
        assert!(!json_depth_exceeds(br#"{"a":[1,{"b":"[[[[["}]}"#, 3));
        assert!(json_depth_exceeds(br#"{"a":[1,{"b":[[]]}]}"#, 4));
        assert!(!json_depth_exceeds(br#"{"a":"\"[[[[["}"#, 1));
    }
}

//! How a stored task is shown to a caller: history trimmed to `historyLength` (§3.2.4) and
//! artifacts kept or dropped.

use crate::protocol::Task;

/// Returns `task` with at most the last `history_length` messages (all when `None`; none, and the
/// field omitted, for 0) and without artifacts unless `include_artifacts`.
pub fn view(task: &Task, history_length: Option<i32>, include_artifacts: bool) -> Task {
    let mut t = task.clone();
    if let Some(n) = history_length {
        let n = usize::try_from(n).unwrap_or(0);
        let len = t.history.len();
        if n < len {
            t.history.drain(..len - n);
        }
    }
    if !include_artifacts {
        t.artifacts.clear();
    }
    t
}

//! Whether `returnImmediately` waits for the work (§3.2.2: "The operation MUST return immediately
//! after creating the task, even if processing is still in progress."). An answer holding a task
//! still SUBMITTED or WORKING returned before the end. An answer holding a finished task says
//! nothing by itself: the work may have been quick. So the kit streams the same message and lets
//! the agent's own stream show how long the work takes: when the task was reported early and
//! ended much later, and the non-blocking answer came only around that end, the answer waited.
//!
//! Every bound is a ratio between times of the same run (see [`judge`]), never an absolute time,
//! so a loaded machine moves both sides of each comparison alike.

use std::time::Duration;

use crate::suite::behaviors::{BehaviorMap, Behaviors, MapOrigin};

/// How many times later than its first event a streamed task must end for its work to count as
/// taking time.
const LONG: u32 = 4;
/// The share of that work's end by which an answer that waited has not yet come.
const WAITED: f64 = 0.5;

/// The message to try: the long-running behaviour's when there is one (the suite's prefix, which
/// the map rewrites), else the slowest prompt the kit found answered only once complete.
pub(super) fn prompt(behaviors: &Behaviors) -> Option<String> {
    if behaviors.provides("tck-long-running") {
        return Some("tck-long-running return".into());
    }
    match behaviors {
        Behaviors::Map(BehaviorMap { origin: MapOrigin::Found { slow, .. }, .. }) => slow.first().cloned(),
        _ => None,
    }
}

pub(super) const INTERRUPTED: [&str; 2] = ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"];

/// What the times say.
#[derive(Debug, PartialEq)]
pub(super) enum Times {
    Waited,
    /// The stream's first event came too late against its end to tell: on a loaded machine a
    /// second stream may well tell.
    TooQuick(String),
    CannotTell(String),
}

/// `answered_in`: the non-blocking answer (with a finished task); `first`, `last`: when the stream
/// of the same message brought its first and its last event.
pub(super) fn judge(answered_in: Duration, first: Duration, last: Duration) -> Times {
    if last < first * LONG {
        return Times::TooQuick(format!(
            "streamed, the same message's task ended {} ms after it was first reported ({} ms): too quick a \
             work to tell an answer that waited from one that did not",
            last.as_millis(),
            first.as_millis()
        ));
    }
    if answered_in.as_secs_f64() >= last.as_secs_f64() * WAITED {
        Times::Waited
    } else {
        Times::CannotTell(format!(
            "the non-blocking answer came after {} ms, well before the streamed task's end ({} ms): this time the \
             work was done sooner",
            answered_in.as_millis(),
            last.as_millis()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn an_answer_that_came_at_the_end_of_a_long_work_waited() {
        assert_eq!(judge(MS(3050), MS(20), MS(3010)), Times::Waited);
        // A loaded machine: everything ten times slower, same verdict.
        assert_eq!(judge(MS(30500), MS(200), MS(30100)), Times::Waited);
    }

    #[test]
    fn quick_work_or_an_early_answer_cannot_be_told() {
        assert!(matches!(judge(MS(30), MS(10), MS(30)), Times::TooQuick(_)));
        assert!(matches!(judge(MS(300), MS(20), MS(3000)), Times::CannotTell(_)));
    }

    #[test]
    fn the_long_running_behaviour_comes_first_then_the_slowest_prompt() {
        assert_eq!(prompt(&Behaviors::Acts).as_deref(), Some("tck-long-running return"));
        assert_eq!(prompt(&Behaviors::None), None);
        let found = |slow: Vec<String>| {
            Behaviors::Map(BehaviorMap {
                origin: MapOrigin::Found { seen: Vec::new(), slow, messages_only: false },
                ..BehaviorMap::default()
            })
        };
        assert_eq!(prompt(&found(vec!["please wait".into()])).as_deref(), Some("please wait"));
        assert_eq!(prompt(&found(Vec::new())), None);
    }
}

//! Whether a stream's updates came while the task ran (§3.1.2: "The operation MUST establish a
//! streaming connection for real-time updates."), or were held back and sent together at its end.
//!
//! Every bound is a ratio to the stream's own times, never an absolute time, so that a loaded
//! machine or a slow network moves both sides of each comparison alike:
//! - the stream is long enough to judge when its last event came at least [`LONG`] times later
//!   than the response head (the agent answered at once, then worked), or when the task's own
//!   status timestamps span at least half the time the kit waited for the last event;
//! - an update is on time when it came in the first half ([`EARLY`]) of that wait;
//! - the first event, and one non-final status or artifact update if there is any, must be on
//!   time; with only the timestamps to go by, the events must not all have come within a quarter
//!   of the span the agent's own clock gives the work.

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// How many times later than the response head the last event must come for a stream to be long.
const LONG: u32 = 4;
/// The share of the wait for the last event within which an update counts as sent while the task ran.
const EARLY: f64 = 0.5;

/// What the arrival times say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    Live,
    /// Held back: why, in plain words.
    HeldBack(String),
    /// Too short (or too few events) to tell: why.
    CannotTell(String),
}

/// Judges one stream: `head_at` and `arrivals` as the client measured them (from sending), and the
/// events' JSON-RPC `result`s in order.
pub fn judge(head_at: Duration, arrivals: &[Duration], results: &[Value]) -> Liveness {
    let (Some(&first), Some(&last)) = (arrivals.first(), arrivals.last()) else {
        return Liveness::CannotTell("the stream held no event".into());
    };
    if arrivals.len() < 2 {
        return Liveness::CannotTell(
            "the stream held one event only, so there is no update whose timing could show".into(),
        );
    }
    let ms = |d: Duration| d.as_millis();
    let on_time = |d: Duration| d.as_secs_f64() <= last.as_secs_f64() * EARLY;
    if last >= head_at * LONG {
        if !on_time(first) {
            return Liveness::HeldBack(format!(
                "the headers came after {} ms, then nothing until the first event at {} ms, and the last at {} ms: \
                 every event came in the second half of the stream",
                ms(head_at),
                ms(first),
                ms(last)
            ));
        }
        let updates: Vec<Duration> = results
            .iter()
            .zip(arrivals)
            .take(results.len().saturating_sub(1))
            .filter(|(r, _)| r.get("statusUpdate").is_some() || r.get("artifactUpdate").is_some())
            .map(|(_, &t)| t)
            .collect();
        if !updates.is_empty() && !updates.iter().any(|&t| on_time(t)) {
            return Liveness::HeldBack(format!(
                "the first event came at {} ms, but each of the {} status or artifact update(s) before the last \
                 event came after {} ms, in the second half of the {} ms stream",
                ms(first),
                updates.len(),
                ms(updates[0]),
                ms(last)
            ));
        }
        return Liveness::Live;
    }
    let Some(span) = timestamp_span(results) else {
        return Liveness::CannotTell(format!(
            "the headers came after {} ms and the last event at {} ms, and no status timestamps say how long the \
             task worked: a quick task and a held-back stream look alike",
            ms(head_at),
            ms(last)
        ));
    };
    if span.as_secs_f64() < last.as_secs_f64() * EARLY {
        return Liveness::CannotTell(format!(
            "the task's status timestamps span {} ms of the {} ms the stream took: too short to tell",
            ms(span),
            ms(last)
        ));
    }
    let spread = last - first;
    if spread.as_secs_f64() * 4.0 < span.as_secs_f64() {
        return Liveness::HeldBack(format!(
            "the task's status timestamps span {} ms of work, but its {} events came within {} ms, after {} ms",
            ms(span),
            arrivals.len(),
            ms(spread),
            ms(first)
        ));
    }
    Liveness::Live
}

/// How long the task worked by its own clock: from the earliest to the latest status timestamp
/// the events carry (a Task's, a status update's), when two or more parse.
fn timestamp_span(results: &[Value]) -> Option<Duration> {
    let stamps: Vec<OffsetDateTime> = results
        .iter()
        .filter_map(|r| {
            r.pointer("/task/status/timestamp")
                .or_else(|| r.pointer("/statusUpdate/status/timestamp"))
                .and_then(Value::as_str)
                .and_then(|s| OffsetDateTime::parse(s, &Rfc3339).ok())
        })
        .collect();
    let (min, max) = (stamps.iter().min()?, stamps.iter().max()?);
    (stamps.len() >= 2).then(|| Duration::try_from(*max - *min).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    fn stream(states: &[(&str, &str)]) -> Vec<Value> {
        states
            .iter()
            .enumerate()
            .map(|(i, (state, at))| {
                let status = json!({"state": state, "timestamp": at});
                if i == 0 {
                    json!({"task": {"id": "t", "status": status}})
                } else {
                    json!({"statusUpdate": {"status": status}})
                }
            })
            .collect()
    }

    const T0: &str = "2026-12-01T10:00:00Z";
    const T1: &str = "2026-12-01T10:00:01.500Z";

    #[test]
    fn updates_sent_as_the_task_runs_are_live() {
        let events = stream(&[("TASK_STATE_SUBMITTED", T0), ("TASK_STATE_WORKING", T0), ("TASK_STATE_COMPLETED", T1)]);
        assert_eq!(judge(Duration::from_millis(5), &ms(&[6, 7, 1507]), &events), Liveness::Live);
    }

    #[test]
    fn events_held_to_the_end_are_held_back() {
        let events = stream(&[("TASK_STATE_SUBMITTED", T0), ("TASK_STATE_WORKING", T0), ("TASK_STATE_COMPLETED", T1)]);
        // Headers at once, every event at the end.
        assert!(matches!(judge(Duration::from_millis(5), &ms(&[1505, 1505, 1506]), &events), Liveness::HeldBack(_)));
        // The Task at once, the updates at the end.
        assert!(matches!(judge(Duration::from_millis(5), &ms(&[6, 1505, 1506]), &events), Liveness::HeldBack(_)));
        // Headers held too: the task's own timestamps say it worked 1.5 s.
        let r = judge(Duration::from_millis(1500), &ms(&[1505, 1505, 1506]), &events);
        assert!(matches!(&r, Liveness::HeldBack(m) if m.contains("span 1500 ms")), "{r:?}");
    }

    #[test]
    fn a_quick_task_cannot_tell_either_way() {
        let quick = stream(&[("TASK_STATE_SUBMITTED", T0), ("TASK_STATE_COMPLETED", T0)]);
        // 5 ms of stream after 3 ms of headers: ratios on such times are noise.
        assert!(matches!(judge(Duration::from_millis(3), &ms(&[4, 5]), &quick), Liveness::CannotTell(_)));
        let no_stamps = vec![json!({"task": {"id": "t"}}), json!({"statusUpdate": {}})];
        assert!(matches!(judge(Duration::from_millis(900), &ms(&[1000, 1001]), &no_stamps), Liveness::CannotTell(_)));
        assert!(matches!(judge(Duration::ZERO, &ms(&[1]), &quick[..1]), Liveness::CannotTell(_)));
    }
}

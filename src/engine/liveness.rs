//! Whether a stream's updates came while the task ran (§3.1.2: "The operation MUST establish a
//! streaming connection for real-time updates."), or were held back and sent together at its end.
//!
//! Arrival times alone cannot tell: an agent with nothing to say while it works (§3.1.2: updates
//! after the Task are a MAY) sends its Task at once and everything else at the end, as a held-back
//! stream does. What tells them apart is when each event was *produced*, which only the agent's
//! own clock says: a status (the Task's, a status update's) carries its timestamp. So:
//! - an event produced long before the task's last status (by the task's clock) must come long
//!   before the stream's last event (by the kit's): an event produced in the first half of the
//!   task's life whose lead over the last event shrank to less than a tenth of its lead in
//!   production was held back;
//! - an event with no timestamp (an artifact update, a message) was produced at some time the
//!   stream does not show, so it is no evidence either way: the timestamped events around it are.
//!
//! The stream is judged only when the task's timestamps span a fair share of it ([`SPAN`]), and
//! only on events stamped in the first half of the task's life: leads shorter than that cannot be
//! told from the jitter of arrivals.
//!
//! Every bound is a ratio between durations on one clock each, never an absolute time, and never
//! a comparison of the agent's clock with the kit's, so that clock offset, a loaded machine or a
//! slow network do not decide the verdict. A timestamp written in whole seconds (§5.6.1 lets the
//! fraction be omitted or zero-filled) may be up to a second earlier than the status it stamps:
//! an event's lead is taken at its smallest.

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The share of the task's life (by its own clock) within which an event counts as produced
/// early.
const EARLY: f64 = 0.5;

/// The least share of its lead in production an early event's lead in arrival must keep. A
/// held-back stream keeps next to none (its events come together, milliseconds apart, after
/// seconds of work); a live one read by a loaded machine may lose much of it to the delay of its
/// first events, which must not decide the verdict.
const KEEP: f64 = 0.1;

/// The least share of the stream (to its last event) the task's timestamps must span for its
/// events' leads to be told from the jitter of their arrivals.
const SPAN: f64 = 0.25;

/// What the stream's timestamps and arrival times say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    Live,
    /// Held back: why, in plain words.
    HeldBack(String),
    /// Too short, or too little evidence of when its events were produced, to tell: why.
    CannotTell(String),
}

/// One event with a production time.
struct Stamped {
    what: String,
    at: OffsetDateTime,
    /// How much earlier than the timestamp the status may have been set: a whole second when the
    /// timestamp has no fraction (or a zero one), else nothing.
    slack: Duration,
    arrived: Duration,
}

/// Judges one stream: `arrivals` as the client measured them (from sending), and the events'
/// results (StreamResponses) in order.
pub fn judge(arrivals: &[Duration], results: &[Value]) -> Liveness {
    let Some(&last) = arrivals.last() else {
        return Liveness::CannotTell("the stream held no event".into());
    };
    if arrivals.len() < 2 {
        return Liveness::CannotTell(
            "the stream held one event only, so there is no update whose timing could show".into(),
        );
    }
    let ms = |d: Duration| d.as_millis();
    let stamped: Vec<Stamped> = results
        .iter()
        .zip(arrivals)
        .enumerate()
        .filter_map(|(index, (r, &arrived))| {
            let (what, status) = ["task", "statusUpdate"].iter().find_map(|k| Some((*k, r.get(*k)?.get("status")?)))?;
            let text = status.get("timestamp")?.as_str()?;
            let at = OffsetDateTime::parse(text, &Rfc3339).ok()?;
            let slack = if at.nanosecond() == 0 { Duration::from_secs(1) } else { Duration::ZERO };
            let state = status.get("state").and_then(Value::as_str).unwrap_or("no state");
            let what = format!("event {index} ({what} {state} at {text})");
            Some(Stamped { what, at, slack, arrived })
        })
        .collect();
    let (Some(first), Some(end)) = (stamped.iter().map(|s| s.at).min(), stamped.iter().map(|s| s.at).max()) else {
        return Liveness::CannotTell(
            "no event carries a status timestamp, so nothing says when the agent produced its updates: a task with \
             nothing to report until its end and a held-back stream look alike"
                .into(),
        );
    };
    let span = Duration::try_from(end - first).unwrap_or_default();
    if span.is_zero() {
        return Liveness::CannotTell(format!(
            "the task's status timestamps all read {first}: by its own clock it did its work at once, so there \
             is nothing its stream could have sent earlier",
            first = stamped[0].at.format(&Rfc3339).unwrap_or_default()
        ));
    }
    if span.as_secs_f64() < last.as_secs_f64() * SPAN {
        return Liveness::CannotTell(format!(
            "the task's status timestamps span {} ms of the {} ms the stream took to its last event: too short a \
             part of it to tell",
            ms(span),
            ms(last)
        ));
    }
    let mut judged = 0;
    for s in &stamped {
        // The event's lead over the task's last status, at its smallest.
        let lead = Duration::try_from(end - s.at).unwrap_or_default().saturating_sub(s.slack);
        if lead.as_secs_f64() < span.as_secs_f64() * EARLY {
            continue;
        }
        judged += 1;
        let ahead = last.saturating_sub(s.arrived);
        if ahead.as_secs_f64() < lead.as_secs_f64() * KEEP {
            return Liveness::HeldBack(format!(
                "{} was produced at least {} ms before the task's last status by the task's own clock, but came \
                 {} ms before the stream's last event (at {} ms of {} ms)",
                s.what,
                ms(lead),
                ms(ahead),
                ms(s.arrived),
                ms(last)
            ));
        }
    }
    if judged == 0 {
        return Liveness::CannotTell(format!(
            "no event was stamped early enough in the task's {} ms to tell (whole-second timestamps leave a \
             second's doubt)",
            ms(span)
        ));
    }
    Liveness::Live
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    /// A Task, then status updates, each `(state, timestamp)`; `None` is an artifact update.
    fn stream(events: &[Option<(&str, &str)>]) -> Vec<Value> {
        events
            .iter()
            .enumerate()
            .map(|(i, e)| match e {
                Some((state, at)) if i == 0 => json!({"task": {"id": "t", "status": {"state": state, "timestamp": at}}}),
                Some((state, at)) => json!({"statusUpdate": {"taskId": "t", "status": {"state": state, "timestamp": at}}}),
                None => json!({"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}),
            })
            .collect()
    }

    const T0: &str = "2026-12-01T10:00:00.120Z";
    const T1: &str = "2026-12-01T10:00:01.620Z";

    /// tck-long-running: SUBMITTED and WORKING at once, COMPLETED 1.5 s later.
    fn long_running() -> Vec<Value> {
        stream(&[
            Some(("TASK_STATE_SUBMITTED", T0)),
            Some(("TASK_STATE_WORKING", T0)),
            Some(("TASK_STATE_COMPLETED", T1)),
        ])
    }

    #[test]
    fn updates_sent_as_the_task_runs_are_live() {
        assert_eq!(judge(&ms(&[6, 7, 1507]), &long_running()), Liveness::Live);
        // However late the agent began: only leads count, never the time before the task.
        assert_eq!(judge(&ms(&[2006, 2007, 3507]), &long_running()), Liveness::Live);
    }

    #[test]
    fn events_held_to_the_end_are_held_back() {
        // Every event at the end.
        let r = judge(&ms(&[1505, 1505, 1506]), &long_running());
        assert!(matches!(&r, Liveness::HeldBack(m) if m.contains("event 0 (task TASK_STATE_SUBMITTED")), "{r:?}");
        // The Task at once, WORKING held to the end.
        let r = judge(&ms(&[6, 1505, 1506]), &long_running());
        assert!(matches!(&r, Liveness::HeldBack(m) if m.contains("event 1 (statusUpdate TASK_STATE_WORKING")), "{r:?}");
        // WORKING sent after the terminal state (held until the task ended): its lead is the
        // task's whole life, and it came last.
        let swapped = stream(&[
            Some(("TASK_STATE_SUBMITTED", T0)),
            Some(("TASK_STATE_COMPLETED", T1)),
            Some(("TASK_STATE_WORKING", T0)),
        ]);
        assert!(matches!(judge(&ms(&[6, 1505, 1506]), &swapped), Liveness::HeldBack(_)));
    }

    /// A machine busy with other work reads a live stream's first events late: that delay eats
    /// into their lead, never all of it, and must not make the stream held back.
    #[test]
    fn a_loaded_reader_does_not_make_a_live_stream_held_back() {
        assert_eq!(judge(&ms(&[1000, 1001, 1507]), &long_running()), Liveness::Live);
        assert!(matches!(judge(&ms(&[1400, 1401, 1507]), &long_running()), Liveness::HeldBack(_)));
    }

    /// §3.1.2: the updates after the Task are a MAY. A worker with nothing to say while it works
    /// sends its Task at once, and its artifact and terminal state when it has them.
    #[test]
    fn a_quiet_worker_is_live() {
        let quiet = stream(&[Some(("TASK_STATE_SUBMITTED", T0)), None, Some(("TASK_STATE_COMPLETED", T1))]);
        assert_eq!(judge(&ms(&[1, 1501, 1502]), &quiet), Liveness::Live);
        // With a final Task snapshot after the terminal update (§11.7).
        let mut snapshot = quiet.clone();
        snapshot.push(json!({"task": {"id": "t", "status": {"state": "TASK_STATE_COMPLETED", "timestamp": T1}}}));
        assert_eq!(judge(&ms(&[1, 1501, 1502, 1503]), &snapshot), Liveness::Live);
        // The same worker holding its Task back too is not.
        assert!(matches!(judge(&ms(&[1501, 1501, 1502]), &quiet), Liveness::HeldBack(_)));
    }

    /// §5.6.1 lets the fraction be omitted: a status set at 10:00:00.9 reads 10:00:00, so each
    /// lead may be a second shorter than it reads. Wherever the second boundaries fall, a live
    /// stream stays live; a held-back one is found when its leads still show it.
    #[test]
    fn whole_second_timestamps_never_make_a_live_stream_held_back() {
        for (t0, t1) in [
            ("2026-12-01T10:00:00Z", "2026-12-01T10:00:01Z"),
            ("2026-12-01T10:00:00Z", "2026-12-01T10:00:02Z"),
            ("2026-12-01T10:00:00.000Z", "2026-12-01T10:00:02.000Z"),
        ] {
            let long = stream(&[
                Some(("TASK_STATE_SUBMITTED", t0)),
                Some(("TASK_STATE_WORKING", t0)),
                Some(("TASK_STATE_COMPLETED", t1)),
            ]);
            let r = judge(&ms(&[6, 7, 1507]), &long);
            assert!(matches!(r, Liveness::Live | Liveness::CannotTell(_)), "{t0} {t1}: {r:?}");
            let quiet = stream(&[Some(("TASK_STATE_SUBMITTED", t0)), None, Some(("TASK_STATE_COMPLETED", t1))]);
            let r = judge(&ms(&[1, 1501, 1502]), &quiet);
            assert!(matches!(r, Liveness::Live | Liveness::CannotTell(_)), "{t0} {t1}: {r:?}");
        }
        let two_apart = stream(&[
            Some(("TASK_STATE_SUBMITTED", "2026-12-01T10:00:00Z")),
            Some(("TASK_STATE_WORKING", "2026-12-01T10:00:00Z")),
            Some(("TASK_STATE_COMPLETED", "2026-12-01T10:00:02Z")),
        ]);
        assert!(matches!(judge(&ms(&[1505, 1505, 1506]), &two_apart), Liveness::HeldBack(_)));
    }

    #[test]
    fn without_evidence_of_production_it_cannot_tell() {
        let quick = stream(&[Some(("TASK_STATE_SUBMITTED", T0)), Some(("TASK_STATE_COMPLETED", T0))]);
        assert!(matches!(judge(&ms(&[4, 5]), &quick), Liveness::CannotTell(_)));
        // No timestamps: an artifact and the terminal state at the end say nothing.
        let no_stamps = vec![json!({"task": {"id": "t"}}), json!({"artifactUpdate": {}}), json!({"statusUpdate": {}})];
        assert!(matches!(judge(&ms(&[1, 1500, 1501]), &no_stamps), Liveness::CannotTell(_)));
        // A task that worked 20 ms after the agent thought for 3 s: too small a part of the
        // stream for its leads to mean anything.
        let brief = stream(&[
            Some(("TASK_STATE_SUBMITTED", "2026-12-01T10:00:00.000Z")),
            Some(("TASK_STATE_COMPLETED", "2026-12-01T10:00:00.020Z")),
        ]);
        assert!(matches!(judge(&ms(&[3000, 3001]), &brief), Liveness::CannotTell(_)));
        assert!(matches!(judge(&ms(&[1]), &quick[..1]), Liveness::CannotTell(_)));
    }
}

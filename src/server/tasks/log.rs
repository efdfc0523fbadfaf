//! A task's bounded, sequenced event log: the single source for live broadcast, replay after
//! `Last-Event-ID`, blocking waits and push delivery, so every consumer sees one order.

use std::collections::VecDeque;

use crate::protocol::StreamResponse;

/// One event as generated, with its sequence number (its SSE `id:`).
#[derive(Debug, Clone)]
pub struct LoggedEvent {
    /// Position in the task's event sequence; unique per task, strictly increasing.
    pub seq: u64,
    pub event: StreamResponse,
    /// True when this event moves the task to a terminal or interrupted state, which ends a stream.
    pub closes_stream: bool,
}

impl LoggedEvent {
    /// True for a status update into a terminal state: nothing follows it.
    pub fn is_terminal(&self) -> bool {
        matches!(&self.event, StreamResponse::StatusUpdate(u) if u.status.state.is_terminal())
    }
}

/// The events a consumer asked for are no longer retained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lagged {
    /// The oldest sequence number still held.
    pub oldest_retained: u64,
}

/// A ring of the most recent events of one task.
#[derive(Debug)]
pub struct EventLog {
    events: VecDeque<LoggedEvent>,
    next_seq: u64,
    capacity: usize,
}

impl EventLog {
    /// An empty log keeping at most `capacity` events (at least one).
    pub fn new(capacity: usize) -> Self {
        EventLog { events: VecDeque::new(), next_seq: 0, capacity: capacity.max(1) }
    }

    /// Appends an event, dropping the oldest past capacity, and returns its sequence number.
    pub fn push(&mut self, event: StreamResponse, closes_stream: bool) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.events.len() == self.capacity {
            self.events.pop_front();
        }
        self.events.push_back(LoggedEvent { seq, event, closes_stream });
        seq
    }

    /// Takes the next sequence number without logging anything: for an event every consumer
    /// gets otherwise (the task as created, which streams and push workers send as a snapshot).
    pub fn skip(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    pub fn last_seq(&self) -> Option<u64> {
        self.next_seq.checked_sub(1)
    }

    /// True if `seq` names an event this log has generated (retained or not).
    pub fn has_generated(&self, seq: u64) -> bool {
        seq < self.next_seq
    }

    /// True if an event after `after` ends a stream, or if some of those events are gone.
    pub fn closes_after(&self, after: Option<u64>) -> bool {
        let first_wanted = after.map_or(0, |s| s + 1);
        let oldest = self.events.front().map_or(self.next_seq, |e| e.seq);
        first_wanted < oldest || self.events.iter().any(|e| e.seq >= first_wanted && e.closes_stream)
    }

    /// Drops every event; sequence numbers go on from where they were.
    pub fn forget(&mut self) {
        self.events = VecDeque::new();
    }

    /// Events strictly after `after` (all retained events when `None`). Fails if some of them were
    /// already dropped, so a consumer never silently skips events.
    pub fn after(&self, after: Option<u64>) -> Result<Vec<LoggedEvent>, Lagged> {
        let first_wanted = after.map_or(0, |s| s + 1);
        let oldest = self.events.front().map_or(self.next_seq, |e| e.seq);
        if first_wanted < oldest {
            return Err(Lagged { oldest_retained: oldest });
        }
        Ok(self.events.iter().filter(|e| e.seq >= first_wanted).cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Message, Part, Role};

    fn ev(n: u32) -> StreamResponse {
        StreamResponse::Message(Message {
            message_id: n.to_string(),
            context_id: String::new(),
            task_id: String::new(),
            role: Role::Agent,
            parts: vec![Part::text("x")],
            metadata: None,
            extensions: vec![],
            reference_task_ids: vec![],
        })
    }

    #[test]
    fn replays_after_a_sequence_number() {
        let mut log = EventLog::new(8);
        for i in 0..5 {
            log.push(ev(i), false);
        }
        let seqs: Vec<_> = log.after(Some(2)).unwrap().iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [3, 4]);
        assert_eq!(log.after(None).unwrap().len(), 5);
        assert!(log.after(Some(4)).unwrap().is_empty());
    }

    #[test]
    fn reports_lag_instead_of_skipping() {
        let mut log = EventLog::new(3);
        for i in 0..6 {
            log.push(ev(i), false);
        }
        assert_eq!(log.after(Some(1)).unwrap_err(), Lagged { oldest_retained: 3 });
        assert_eq!(log.after(Some(2)).unwrap().len(), 3);
    }
}

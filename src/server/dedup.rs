//! Single-use message ids (`--single-use-message-ids`): agents that deduplicate by `messageId`
//! (§3.3.1: "Agents may utilize the messageId to detect duplicate messages") refuse a repeat.
//! Bounded: the oldest ids are forgotten past `max_message_ids`.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

/// The message ids seen, per tenant.
#[derive(Debug)]
pub struct MessageIds {
    inner: Mutex<Seen>,
    capacity: usize,
}

#[derive(Debug, Default)]
struct Seen {
    set: HashSet<(String, String)>,
    order: VecDeque<(String, String)>,
}

impl MessageIds {
    /// Remembers at most `capacity` ids (at least one).
    pub fn new(capacity: usize) -> Self {
        MessageIds { inner: Mutex::new(Seen::default()), capacity: capacity.max(1) }
    }

    /// Claims `id` for `tenant`: false if it was already used.
    pub fn claim(&self, tenant: &str, id: &str) -> bool {
        let key = (tenant.to_owned(), id.to_owned());
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.set.contains(&key) {
            return false;
        }
        if g.order.len() >= self.capacity
            && let Some(old) = g.order.pop_front()
        {
            g.set.remove(&old);
        }
        g.set.insert(key.clone());
        g.order.push_back(key);
        true
    }

    /// Gives an id back (its message was refused for another reason, so it was never used).
    pub fn release(&self, tenant: &str, id: &str) {
        let key = (tenant.to_owned(), id.to_owned());
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.set.remove(&key) {
            g.order.retain(|k| k != &key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_refused_per_tenant_until_forgotten() {
        let ids = MessageIds::new(2);
        assert!(ids.claim("", "a"));
        assert!(!ids.claim("", "a"));
        assert!(ids.claim("other", "a"), "tenants do not share ids");
        assert!(ids.claim("", "b"));
        assert!(ids.claim("", "a"), "the oldest id was forgotten past the bound");
        ids.release("", "a");
        assert!(ids.claim("", "a"));
    }
}

//! What keeps a run against an untrusted agent bounded and honest, across all checks at once:
//! a circuit breaker (after a few consecutive requests to one endpoint that time out or lose their
//! connection, the agent is unresponsive and every remaining check ends at once), the run
//! deadline, and the canary credentials the kit sends and looks for in every answer.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

use crate::client::http::{ClientError, HttpExchange, StreamExchange};

/// Consecutive failed exchanges (time-outs, refused or reset connections) after which the agent
/// is taken for unresponsive.
pub const STRIKES: usize = 3;

/// Header that carries a canary in every request: an agent that echoes request headers, or
/// stores and reflects them, shows it here.
pub const CANARY_HEADER: &str = "X-A2A-Conform-Canary";

/// Most leaks kept for the report.
const MAX_LEAKS: usize = 50;

/// Most endpoints counted apart; any further ones share one count.
const MAX_ENDPOINTS: usize = 64;

/// One canary found in an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    /// The check and step that received it.
    pub origin: String,
    /// Where in the answer: a header name or `body`.
    pub place: String,
    /// Which canary (its header), never its value.
    pub canary: String,
}

#[derive(Debug)]
pub struct Guard {
    /// Consecutive failures per endpoint (URL without its query): a card that still answers says
    /// nothing about an interface that has gone silent, so its answers must not reset that count.
    strikes: Mutex<HashMap<String, usize>>,
    /// Set once: why every remaining check must stop (unresponsive agent, run deadline).
    stop: watch::Sender<Option<String>>,
    /// (where it was sent, value).
    canaries: Vec<(String, String)>,
    leaks: Mutex<Vec<Leak>>,
}

impl Guard {
    pub fn new(canaries: Vec<(String, String)>) -> Self {
        Guard {
            strikes: Mutex::new(HashMap::new()),
            stop: watch::channel(None).0,
            canaries,
            leaks: Mutex::new(Vec::new()),
        }
    }

    /// Why the run stopped, once it has.
    pub fn stopped(&self) -> Option<String> {
        self.stop.borrow().clone()
    }

    /// Resolves when the run stops (immediately if it already has), with the reason.
    pub async fn wait_stop(&self) -> String {
        let mut rx = self.stop.subscribe();
        let reason = rx.wait_for(Option::is_some).await.ok().map(|r| r.clone().unwrap_or_default());
        match reason {
            Some(r) => r,
            // The sender lives as long as the guard; this is only reached if it were dropped.
            None => std::future::pending().await,
        }
    }

    /// Stops every remaining check with `reason` (the first reason wins).
    pub fn stop(&self, reason: String) {
        self.stop.send_if_modified(|r| {
            if r.is_some() {
                return false;
            }
            *r = Some(reason);
            true
        });
    }

    /// Counts an exchange with `url`: a complete answer (whatever its status) resets that
    /// endpoint's count; a failure of the connection or a time-out is a strike, and the third in a
    /// row on one endpoint stops the run.
    pub fn record<T>(&self, url: &str, outcome: &Result<T, ClientError>) {
        let endpoint = url.split(['?', '#']).next().unwrap_or(url);
        let mut strikes = self.strikes.lock().unwrap_or_else(|p| p.into_inner());
        let key = if strikes.contains_key(endpoint) || strikes.len() < MAX_ENDPOINTS { endpoint } else { "" };
        match outcome {
            Ok(_) => {
                strikes.insert(key.to_owned(), 0);
            }
            Err(e @ (ClientError::Timeout { .. } | ClientError::Connect(_) | ClientError::Transport(_))) => {
                let n = strikes.entry(key.to_owned()).or_insert(0);
                *n += 1;
                if *n >= STRIKES {
                    let n = *n;
                    drop(strikes);
                    self.stop(format!("agent unresponsive: {n} requests in a row got no answer (last: {e})"));
                }
            }
            Err(_) => {}
        }
    }

    fn scan(&self, origin: &str, headers: &[(String, String)], bodies: &[&[u8]]) {
        for (label, canary) in &self.canaries {
            let mut places: Vec<String> = headers
                .iter()
                .filter(|(_, v)| v.contains(canary.as_str()))
                .map(|(n, _)| format!("header {n}"))
                .collect();
            if bodies.iter().any(|b| memmem(b, canary.as_bytes())) {
                places.push("body".into());
            }
            let mut leaks = self.leaks.lock().unwrap_or_else(|p| p.into_inner());
            for place in places {
                if leaks.len() < MAX_LEAKS {
                    leaks.push(Leak { origin: origin.to_owned(), place, canary: label.clone() });
                }
            }
        }
    }

    /// Looks for every canary in an answer.
    pub fn scan_exchange(&self, origin: &str, x: &HttpExchange) {
        self.scan(origin, &x.headers, &[&x.body]);
    }

    pub fn scan_stream(&self, origin: &str, x: &StreamExchange) {
        let data: Vec<&[u8]> = x.events.iter().map(|e| e.data.as_bytes()).chain([x.body.as_slice()]).collect();
        self.scan(origin, &x.headers, &data);
    }

    pub fn leaks(&self) -> Vec<Leak> {
        self.leaks.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Where canaries were sent, for the report.
    pub fn canary_places(&self) -> Vec<String> {
        self.canaries.iter().map(|(l, _)| l.clone()).collect()
    }
}

fn memmem(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn three_failures_in_a_row_stop_the_run_and_an_answer_resets_the_count() {
        let g = Guard::new(Vec::new());
        let rpc = "http://a.test/rpc";
        let timeout: Result<(), ClientError> = Err(ClientError::Timeout { limit: Duration::from_secs(1) });
        g.record(rpc, &timeout);
        g.record(rpc, &timeout);
        g.record(rpc, &Ok::<(), ClientError>(()));
        g.record(rpc, &timeout);
        assert_eq!(g.stopped(), None);
        g.record(&format!("{rpc}?v=1"), &Err::<(), _>(ClientError::Connect("refused".into())));
        g.record(rpc, &timeout);
        assert!(g.stopped().unwrap().starts_with("agent unresponsive: 3 requests"), "{:?}", g.stopped());
        g.stop("later".into());
        assert!(g.stopped().unwrap().starts_with("agent unresponsive"), "the first reason wins");
    }

    /// The interface goes silent while the card still answers: the card's answers, interleaved
    /// with the interface's time-outs, must not keep the run going.
    #[test]
    fn another_endpoint_answering_does_not_reset_a_silent_one() {
        let g = Guard::new(Vec::new());
        let timeout: Result<(), ClientError> = Err(ClientError::Timeout { limit: Duration::from_secs(1) });
        for _ in 0..2 {
            g.record("http://a.test/rpc", &timeout);
            g.record("http://a.test/.well-known/agent-card.json", &Ok::<(), ClientError>(()));
        }
        assert_eq!(g.stopped(), None);
        g.record("http://a.test/rpc", &timeout);
        assert!(g.stopped().is_some());
    }

    #[test]
    fn canaries_are_found_in_headers_and_bodies_and_reported_by_name() {
        let g = Guard::new(vec![("header X-A2A-Conform-Canary".into(), "kit-canary-123".into())]);
        g.scan("C-1 / s", &[("x-echo".into(), "kit-canary-123".into())], &[b"nothing"]);
        g.scan("C-2 / s", &[], &[b"{\"text\":\"you sent kit-canary-123\"}"]);
        g.scan("C-3 / s", &[], &[b"clean"]);
        let leaks = g.leaks();
        assert_eq!(leaks.len(), 2);
        assert_eq!(leaks[0].place, "header x-echo");
        assert_eq!(leaks[1].origin, "C-2 / s");
        assert!(leaks.iter().all(|l| !l.canary.contains("kit-canary-123")));
    }
}

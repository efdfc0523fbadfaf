//! Push notification delivery (§4.3.3, §13.2): a worker per task that POSTs each event, in order,
//! to every registered webhook, resolving and checking each destination first (`ssrf`).

use std::sync::Arc;
use std::time::Duration;

use super::config::WebhookPolicy;
use super::ssrf;
use super::tasks::{Lagged, LoggedEvent, TaskHandle};
use crate::protocol::{StreamResponse, TaskPushNotificationConfig};

/// Media type of push bodies (§4.3.3).
pub const PUSH_CONTENT_TYPE: &str = "application/a2a+json";
/// Header carrying the config's token; 1.0.0 and 0.3 examples use it (digest §11).
pub const TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// Sends push notifications with bounded time and retries.
#[derive(Debug, Clone)]
pub struct PushDispatcher {
    pub policy: WebhookPolicy,
    /// Per-attempt timeout.
    pub timeout: Duration,
    /// Extra attempts after a failure.
    pub retries: u32,
    /// Faults the mock commits in deliveries.
    pub faults: super::faults::ActiveFaults,
}

/// The outcome of delivering one event to one webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// The receiver answered 2xx.
    Delivered { status: u16, attempts: u32 },
    /// Every attempt failed.
    Failed {
        /// Last error.
        reason: String,
        /// 0 when nothing was sent.
        attempts: u32,
    },
}

impl PushDispatcher {
    /// Delivers one body to one webhook, re-checking the destination first.
    pub async fn deliver(&self, cfg: &TaskPushNotificationConfig, body: &[u8]) -> DeliveryOutcome {
        use super::faults::Mutation;
        let muts = || self.faults.mutations();
        if muts().any(|m| matches!(m, Mutation::PushSkip)) {
            return DeliveryOutcome::Failed { reason: "skipped (fault)".into(), attempts: 0 };
        }
        let faulted;
        let body = if self.faults.is_empty() {
            body
        } else {
            let mut v: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
            super::faults::apply::mutate_push(&self.faults, &mut v);
            faulted = serde_json::to_vec(&v).unwrap_or_default();
            &faulted
        };
        let content_type = muts()
            .find_map(|m| match m {
                Mutation::PushContentType { value } => Some(value.clone()),
                _ => None,
            })
            .unwrap_or_else(|| PUSH_CONTENT_TYPE.to_owned());
        let send_auth = !muts().any(|m| matches!(m, Mutation::PushDropAuth));
        let dest = match ssrf::resolve(&cfg.url, self.policy).await {
            Ok(d) => d,
            Err(reason) => return DeliveryOutcome::Failed { reason, attempts: 0 },
        };
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.timeout)
            .connect_timeout(self.timeout);
        if let Some(host) = dest.url.domain() {
            builder = builder.resolve(host, dest.addrs[0]);
        }
        let client = match builder.build() {
            Ok(c) => c,
            Err(e) => return DeliveryOutcome::Failed { reason: format!("HTTP client: {e}"), attempts: 0 },
        };
        let mut last = String::new();
        let attempts = self.retries + 1;
        for attempt in 1..=attempts {
            let mut req = client
                .post(dest.url.clone())
                .header(reqwest::header::CONTENT_TYPE, content_type.as_str())
                .body(body.to_vec());
            if let Some(auth) = cfg.authentication.as_ref().filter(|a| send_auth && !a.credentials.is_empty()) {
                req = req.header(reqwest::header::AUTHORIZATION, format!("{} {}", auth.scheme, auth.credentials));
            }
            if !cfg.token.is_empty() {
                req = req.header(TOKEN_HEADER, &cfg.token);
            }
            match req.send().await {
                Ok(resp) if resp.status().is_success() => {
                    return DeliveryOutcome::Delivered { status: resp.status().as_u16(), attempts: attempt };
                }
                Ok(resp) => last = format!("HTTP {}", resp.status()),
                Err(e) => last = e.to_string(),
            }
            if attempt < attempts {
                tokio::time::sleep(Duration::from_millis(200u64 << (attempt - 1).min(6))).await;
            }
        }
        DeliveryOutcome::Failed { reason: last, attempts }
    }
}

/// Starts the task's delivery worker unless one runs already. It delivers `first`, if any, then
/// the events after `after`, until the task ends or all configs are gone.
pub fn ensure_worker(
    handle: &Arc<TaskHandle>,
    dispatcher: Arc<PushDispatcher>,
    first: Option<LoggedEvent>,
    after: Option<u64>,
) {
    let start = handle.update(|t| !std::mem::replace(&mut t.push_worker_running, true));
    if !start {
        return;
    }
    let mut sub = handle.subscribe_after(after);
    let handle = handle.clone();
    let mut first = first;
    tokio::spawn(async move {
        loop {
            let next = match first.take() {
                Some(ev) => Ok(vec![ev]),
                None => sub.next_batch().await,
            };
            let batch = match next {
                Ok(b) => b,
                Err(Lagged { oldest_retained }) => {
                    // Events not yet delivered were evicted: skipping them silently would hide them
                    // from every webhook (§4.3.3), so send the task as it stands instead, as a
                    // resumed stream does, and go on after the position that snapshot reflects.
                    tracing::warn!(task = %handle.id, oldest_retained, "push worker fell behind the event log");
                    let (task, seq) = {
                        let g = handle.lock();
                        (g.task().into_owned(), g.log.last_seq().unwrap_or(0))
                    };
                    sub = handle.subscribe_after(Some(seq));
                    let closes_stream = task.status.state.is_terminal();
                    vec![LoggedEvent { seq, event: StreamResponse::Task(task), closes_stream }]
                }
            };
            let mut terminal_seen = false;
            let mut no_configs = false;
            for ev in batch {
                let configs: Vec<_> = handle.lock().push_configs.values().cloned().collect();
                let body = serde_json::to_vec(&ev.event).expect("StreamResponse serializes");
                for cfg in &configs {
                    match dispatcher.deliver(cfg, &body).await {
                        outcome @ DeliveryOutcome::Delivered { .. } => {
                            tracing::info!(task = %handle.id, config = %cfg.id, seq = ev.seq, ?outcome, "push delivery");
                        }
                        DeliveryOutcome::Failed { reason, attempts } => tracing::warn!(
                            task = %handle.id, config = %cfg.id, url = %cfg.url, seq = ev.seq, attempts,
                            "push delivery failed: {reason}"
                        ),
                    }
                }
                // A snapshot of a finished task (after a lag) ends the worker like a terminal update.
                terminal_seen |=
                    ev.is_terminal() || matches!(&ev.event, StreamResponse::Task(t) if t.status.state.is_terminal());
                no_configs = configs.is_empty();
            }
            if terminal_seen || no_configs {
                // Decide under the lock, so that a config created meanwhile is not left without a worker.
                let stop = handle.update(|t| {
                    let stop = terminal_seen || t.push_configs.is_empty();
                    if stop {
                        t.push_worker_running = false;
                    }
                    stop
                });
                if stop {
                    break;
                }
            }
        }
    });
}

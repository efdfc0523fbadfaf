//! Push notification delivery (§4.3.3, §13.2): an SSRF guard on webhook URLs and a worker per task
//! that POSTs each event, in order, to every registered webhook.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use super::config::WebhookPolicy;
use super::tasks::{Lagged, LoggedEvent, TaskHandle};
use crate::protocol::{StreamResponse, TaskPushNotificationConfig};

/// Media type of push bodies (§4.3.3).
pub const PUSH_CONTENT_TYPE: &str = "application/a2a+json";
/// Header carrying the config's token; 1.0.0 and 0.3 examples use it (digest §11).
pub const TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// What kind of network an address belongs to, for the SSRF guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// Globally routable.
    Public,
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// RFC 1918, link-local, CGNAT, unique-local IPv6.
    Private,
    /// Unspecified, multicast, broadcast, documentation: never a webhook.
    Forbidden,
}

/// Classifies an address (IPv4-mapped IPv6 is judged as IPv4).
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_loopback() {
                AddressClass::Loopback
            } else if v4.is_unspecified() || v4.is_multicast() || v4.is_broadcast() || v4.is_documentation() {
                AddressClass::Forbidden
            } else if v4.is_private() || v4.is_link_local() || (o[0] == 100 && (64..128).contains(&o[1])) || o[0] == 0 {
                AddressClass::Private
            } else {
                AddressClass::Public
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return classify(IpAddr::V4(v4));
            }
            if v6.is_loopback() {
                AddressClass::Loopback
            } else if v6.is_unspecified() || v6.is_multicast() {
                AddressClass::Forbidden
            } else if v6.is_unique_local() || v6.is_unicast_link_local() {
                AddressClass::Private
            } else {
                AddressClass::Public
            }
        }
    }
}

fn allowed(policy: WebhookPolicy, class: AddressClass) -> bool {
    match class {
        AddressClass::Public => true,
        AddressClass::Loopback => policy != WebhookPolicy::PublicOnly,
        AddressClass::Private => policy == WebhookPolicy::AllowPrivate,
        AddressClass::Forbidden => false,
    }
}

/// A webhook URL checked against the policy, with the addresses it resolved to.
#[derive(Debug, Clone)]
pub struct Destination {
    pub url: reqwest::Url,
    /// Resolved addresses, all allowed by the policy; requests are pinned to the first one so that
    /// a second DNS answer cannot redirect them (DNS rebinding).
    pub addrs: Vec<SocketAddr>,
}

/// Parses, resolves and checks a webhook URL. The error says why it is refused.
pub async fn check_destination(url: &str, policy: WebhookPolicy) -> Result<Destination, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("not an absolute URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("scheme {:?} is not http or https", parsed.scheme()));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("URLs with embedded credentials are refused; use `authentication`".into());
    }
    let host = parsed.host_str().ok_or("the URL has no host")?.to_owned();
    let port = parsed.port_or_known_default().ok_or("the URL has no port")?;
    let lookup_host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
    let addrs: Vec<SocketAddr> =
        tokio::time::timeout(Duration::from_secs(5), tokio::net::lookup_host((lookup_host, port)))
            .await
            .map_err(|_| format!("resolving {host} timed out"))?
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect();
    if addrs.is_empty() {
        return Err(format!("{host} resolves to no address"));
    }
    for a in &addrs {
        let class = classify(a.ip());
        if !allowed(policy, class) {
            let hint = match class {
                AddressClass::Loopback => " (start the mock with --allow-loopback-webhooks to permit it)",
                AddressClass::Private => " (start the mock with --allow-private-webhooks to permit it)",
                _ => "",
            };
            return Err(format!("{host} resolves to {} which is a {class:?} address{hint}", a.ip()));
        }
    }
    Ok(Destination { url: parsed, addrs })
}

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
        let dest = match check_destination(&cfg.url, self.policy).await {
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

/// Starts the task's delivery worker unless one runs already. It delivers events after `after`
/// (`None`: from the task's first event) until the task ends or all configs are gone.
pub fn ensure_worker(handle: &Arc<TaskHandle>, dispatcher: Arc<PushDispatcher>, after: Option<u64>) {
    let start = handle.update(|t| !std::mem::replace(&mut t.push_worker_running, true));
    if !start {
        return;
    }
    let mut sub = handle.subscribe_after(after);
    let handle = handle.clone();
    tokio::spawn(async move {
        loop {
            let batch = match sub.next_batch().await {
                Ok(b) => b,
                Err(Lagged { oldest_retained }) => {
                    // Events not yet delivered were evicted: skipping them silently would hide them
                    // from every webhook (§4.3.3), so send the task as it stands instead, as a
                    // resumed stream does, and go on after the position that snapshot reflects.
                    tracing::warn!(task = %handle.id, oldest_retained, "push worker fell behind the event log");
                    let (task, seq) = {
                        let g = handle.lock();
                        (g.task.clone(), g.log.last_seq().unwrap_or(0))
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
                    let outcome = dispatcher.deliver(cfg, &body).await;
                    tracing::info!(task = %handle.id, config = %cfg.id, seq = ev.seq, ?outcome, "push delivery");
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

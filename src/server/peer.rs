//! The mock as a library for other people's tests, in the manner of wiremock: start a faithful
//! A2A 1.0 agent on 127.0.0.1, point the client under test at its URL, then assert on what it
//! received. Expectations are verified when the peer is dropped, with a readable diff of what
//! arrived when one is not met.
//!
//! ```
//! use a2a_conform::server::MockPeer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let peer = MockPeer::builder().start().await.unwrap();
//! peer.expect("SendMessage").times(1);
//!
//! // The client under test talks to peer.url() (its card is at peer.card_url()).
//! let answer: serde_json::Value = reqwest::Client::new()
//!     .post(peer.rpc_url())
//!     .header("A2A-Version", "1.0")
//!     .json(&serde_json::json!({
//!         "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
//!         "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "tck-complete-task hi"}]}}
//!     }))
//!     .send().await.unwrap()
//!     .json().await.unwrap();
//! assert_eq!(answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED");
//! # }   // `peer` is dropped here: SendMessage was received exactly once, so nothing panics.
//! ```

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use similar::TextDiff;

use super::MockServer;
use super::app::MockError;
use super::config::{MockConfig, WebhookPolicy};
use super::faults::FaultCatalogue;
use super::record::RecordedRequest;

/// A running mock peer that records what it receives and checks expectations on drop.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let peer = a2a_conform::server::MockPeer::start().await;
/// assert!(peer.url().starts_with("http://127.0.0.1:"));
/// assert!(peer.received().is_empty());
/// # }
/// ```
#[derive(Debug)]
pub struct MockPeer {
    server: MockServer,
    rules: Arc<Mutex<Vec<Rule>>>,
}

/// How to start a [`MockPeer`]: the configuration, scenarios and faults.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use a2a_conform::server::MockPeer;
/// let peer = MockPeer::builder()
///     .configure(|c| c.name = "billing agent".into())
///     .path_prefix("/agents/billing")
///     .allow_loopback_webhooks()
///     .start()
///     .await
///     .unwrap();
/// assert!(peer.url().ends_with("/agents/billing"));
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MockPeerBuilder {
    config: MockConfig,
    faults: Vec<String>,
}

impl MockPeerBuilder {
    /// Replaces the whole configuration (recording stays on).
    ///
    /// ```
    /// use a2a_conform::server::{MockConfig, MockPeer};
    /// let builder = MockPeer::builder().config(MockConfig { streaming: false, ..MockConfig::default() });
    /// # drop(builder);
    /// ```
    pub fn config(mut self, config: MockConfig) -> Self {
        self.config = config;
        self
    }

    /// Changes the configuration in place.
    ///
    /// ```
    /// let builder = a2a_conform::server::MockPeer::builder().configure(|c| {
    ///     c.push_notifications = false;
    ///     c.single_use_message_ids = true;
    /// });
    /// # drop(builder);
    /// ```
    pub fn configure(mut self, f: impl FnOnce(&mut MockConfig)) -> Self {
        f(&mut self.config);
        self
    }

    /// Adds the scenario files (`*.json`) of `dir`, overriding built-ins of the same name (see
    /// `mock-peer/README.md` for the format).
    ///
    /// ```
    /// let builder = a2a_conform::server::MockPeer::builder().scenarios("tests/scenarios");
    /// # drop(builder);
    /// ```
    pub fn scenarios(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.scenario_dir = Some(dir.into());
        self
    }

    /// Makes the mock commit a named spec violation (`a2a-conform faults list`), to see how the
    /// client under test copes. An unknown id makes [`MockPeerBuilder::start`] fail.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::builder().fault("FAULT-ENUM-LOWERCASE").start().await;
    /// assert!(peer.is_ok());
    /// let unknown = a2a_conform::server::MockPeer::builder().fault("FAULT-NO-SUCH").start().await;
    /// assert!(unknown.unwrap_err().to_string().contains("FAULT-NO-SUCH"));
    /// # }
    /// ```
    pub fn fault(mut self, id: &str) -> Self {
        self.faults.push(id.to_owned());
        self
    }

    /// Serves the card at `{prefix}/.well-known/agent-card.json` and JSON-RPC under `prefix`.
    ///
    /// ```
    /// let builder = a2a_conform::server::MockPeer::builder().path_prefix("/agents/a");
    /// # drop(builder);
    /// ```
    pub fn path_prefix(mut self, prefix: &str) -> Self {
        self.config.path_prefix = prefix.to_owned();
        self
    }

    /// Lets push delivery reach webhooks on 127.0.0.1 (refused by default, as SSRF protection).
    ///
    /// ```
    /// let builder = a2a_conform::server::MockPeer::builder().allow_loopback_webhooks();
    /// # drop(builder);
    /// ```
    pub fn allow_loopback_webhooks(mut self) -> Self {
        if self.config.webhooks == WebhookPolicy::PublicOnly {
            self.config.webhooks = WebhookPolicy::AllowLoopback;
        }
        self
    }

    /// Starts the peer on 127.0.0.1, on a port the OS picks.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::builder().start().await.unwrap();
    /// assert!(peer.card_url().ends_with("/.well-known/agent-card.json"));
    /// # }
    /// ```
    pub async fn start(self) -> Result<MockPeer, MockError> {
        let catalogue = FaultCatalogue::builtin().map_err(|e| MockError::Config(e.to_string()))?;
        let mut config = self.config;
        for id in &self.faults {
            let fault = catalogue
                .get(id)
                .ok_or_else(|| MockError::Config(format!("unknown fault {id:?}; see `a2a-conform faults list`")))?;
            config.faults.push(fault);
        }
        config.record_requests = true;
        let server = MockServer::start(config).await?;
        Ok(MockPeer { server, rules: Arc::default() })
    }
}

/// What one expectation allows: a count range of requests with one method.
#[derive(Debug, Clone)]
struct Rule {
    method: String,
    min: usize,
    max: usize,
    /// The lower bound was given (not the "at least once" default).
    min_given: bool,
}

impl Rule {
    fn describe(&self) -> String {
        match (self.min, self.max) {
            (a, b) if a == b => format!("exactly {a}"),
            (0, b) => format!("at most {b}"),
            (a, usize::MAX) => format!("at least {a}"),
            (a, b) => format!("between {a} and {b}"),
        }
    }
}

/// An expectation on the requests of one method, made by [`MockPeer::expect`]. It starts as "at
/// least once"; the methods narrow it. It is checked by [`MockPeer::verify`] and when the peer is
/// dropped.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let peer = a2a_conform::server::MockPeer::start().await;
/// peer.expect("GetTask").never();
/// peer.expect("ListTasks").at_most(2);
/// assert!(peer.verify().is_ok());
/// # }
/// ```
#[derive(Debug)]
pub struct Expectation<'a> {
    peer: &'a MockPeer,
    index: usize,
}

impl Expectation<'_> {
    fn update(self, f: impl FnOnce(&mut Rule)) -> Self {
        if let Some(r) = self.peer.rules.lock().unwrap_or_else(|p| p.into_inner()).get_mut(self.index) {
            f(r);
        }
        self
    }

    /// Exactly `n` requests.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// peer.expect("SendMessage").times(0);
    /// # }
    /// ```
    pub fn times(self, n: usize) -> Self {
        self.update(|r| (r.min, r.max, r.min_given) = (n, n, true))
    }

    /// At least `n` requests.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// peer.expect("SendMessage").at_least(0);
    /// # }
    /// ```
    pub fn at_least(self, n: usize) -> Self {
        self.update(|r| (r.min, r.max, r.min_given) = (n, r.max.max(n), true))
    }

    /// At most `n` requests (and no lower bound unless one was given).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// peer.expect("CancelTask").at_most(1);
    /// # }
    /// ```
    pub fn at_most(self, n: usize) -> Self {
        self.update(|r| (r.min, r.max) = (if r.min_given { r.min.min(n) } else { 0 }, n))
    }

    /// No request at all.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// peer.expect("DeleteTaskPushNotificationConfig").never();
    /// # }
    /// ```
    pub fn never(self) -> Self {
        self.update(|r| (r.min, r.max, r.min_given) = (0, 0, true))
    }
}

/// Unmet expectations, with what was received. Its `Display` is the report a dropped peer panics
/// with: the unmet expectations, a diff of expected against received counts per method, and every
/// request received.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let peer = a2a_conform::server::MockPeer::start().await;
/// peer.expect("SendMessage").times(1);
/// let failure = peer.verify().unwrap_err();
/// assert_eq!(failure.unmet, ["SendMessage: expected exactly 1, received 0"]);
/// assert!(failure.to_string().contains("-SendMessage: exactly 1"));
/// # peer.reset();
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectationFailure {
    /// One line per unmet expectation.
    pub unmet: Vec<String>,
    /// Every request received, in order.
    pub received: Vec<RecordedRequest>,
    report: String,
}

impl std::fmt::Display for ExpectationFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.report)
    }
}

impl MockPeer {
    /// A builder; [`MockPeerBuilder::start`] runs the peer.
    ///
    /// ```
    /// let builder = a2a_conform::server::MockPeer::builder();
    /// # drop(builder);
    /// ```
    pub fn builder() -> MockPeerBuilder {
        MockPeerBuilder::default()
    }

    /// A peer with the default configuration (panics if no local port can be bound).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// # drop(peer);
    /// # }
    /// ```
    pub async fn start() -> MockPeer {
        Self::builder().start().await.expect("the mock peer starts on 127.0.0.1")
    }

    /// Base URL (`http://127.0.0.1:PORT`, with the path prefix if any): what a client discovers
    /// the agent from.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// assert_eq!(peer.card_url(), format!("{}/.well-known/agent-card.json", peer.url()));
    /// # }
    /// ```
    pub fn url(&self) -> &str {
        self.server.url()
    }

    /// The Agent Card URL.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// let card: serde_json::Value = reqwest::get(peer.card_url()).await.unwrap().json().await.unwrap();
    /// assert_eq!(card["supportedInterfaces"][0]["url"], peer.rpc_url());
    /// # }
    /// ```
    pub fn card_url(&self) -> String {
        self.server.card_url()
    }

    /// The JSON-RPC endpoint the card advertises.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// assert_eq!(peer.rpc_url(), format!("{}/rpc", peer.url()));
    /// # }
    /// ```
    pub fn rpc_url(&self) -> String {
        self.server.rpc_url()
    }

    /// The HTTP+JSON base URL the card advertises (the REST paths, `/message:send` and so on, are
    /// relative to it).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// assert_eq!(peer.rest_url(), format!("{}/", peer.url()));
    /// # }
    /// ```
    pub fn rest_url(&self) -> String {
        self.server.rest_url()
    }

    /// The underlying server (its shared state, for inspecting stored tasks).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// assert!(peer.server().app().store.is_empty());
    /// # }
    /// ```
    pub fn server(&self) -> &MockServer {
        &self.server
    }

    /// Every request received so far, in order: the JSON-RPC method (`GET` for a card fetch),
    /// path, headers with credentials redacted, and the body with push secrets redacted.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// reqwest::Client::new()
    ///     .get(peer.card_url())
    ///     .header("Authorization", "Bearer s3cret")
    ///     .send().await.unwrap();
    /// let got = peer.received();
    /// assert_eq!(got[0].method, "GET");
    /// assert_eq!(got[0].header("authorization"), Some("[REDACTED]"));
    /// # }
    /// ```
    pub fn received(&self) -> Vec<RecordedRequest> {
        self.server.app().recorder.requests()
    }

    /// The requests received for one method.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// assert!(peer.received_for("SendMessage").is_empty());
    /// # }
    /// ```
    pub fn received_for(&self, method: &str) -> Vec<RecordedRequest> {
        self.received().into_iter().filter(|r| r.method == method).collect()
    }

    /// Expects requests of `method` (a JSON-RPC method name as sent, or `GET` for card fetches):
    /// at least one unless narrowed with [`Expectation::times`] and the like.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// peer.expect("GET").times(1);
    /// reqwest::get(peer.card_url()).await.unwrap();
    /// # }
    /// ```
    pub fn expect(&self, method: &str) -> Expectation<'_> {
        let mut rules = self.rules.lock().unwrap_or_else(|p| p.into_inner());
        rules.push(Rule { method: method.to_owned(), min: 1, max: usize::MAX, min_given: false });
        Expectation { peer: self, index: rules.len() - 1 }
    }

    /// Forgets every expectation (a dropped peer then checks nothing).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// peer.expect("SendMessage");
    /// peer.reset();
    /// assert!(peer.verify().is_ok());
    /// # }
    /// ```
    pub fn reset(&self) {
        self.rules.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Checks every expectation now.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = a2a_conform::server::MockPeer::start().await;
    /// peer.expect("SendMessage").never();
    /// assert!(peer.verify().is_ok());
    /// # }
    /// ```
    pub fn verify(&self) -> Result<(), ExpectationFailure> {
        let received = self.received();
        let rules = self.rules.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let unmet: Vec<String> = rules
            .iter()
            .filter_map(|r| {
                let n = received.iter().filter(|q| q.method == r.method).count();
                (n < r.min || n > r.max).then(|| format!("{}: expected {}, received {n}", r.method, r.describe()))
            })
            .collect();
        if unmet.is_empty() {
            return Ok(());
        }
        let report = self.report(&rules, &unmet, &received);
        Err(ExpectationFailure { unmet, received, report })
    }

    /// The unmet expectations, a diff of expected against received counts per method, and every
    /// request received.
    fn report(&self, rules: &[Rule], unmet: &[String], received: &[RecordedRequest]) -> String {
        let mut methods: Vec<&str> = rules.iter().map(|r| r.method.as_str()).collect();
        methods.extend(received.iter().map(|r| r.method.as_str()));
        let mut seen = std::collections::BTreeSet::new();
        methods.retain(|m| seen.insert(*m));
        let (mut expected, mut actual) = (String::new(), String::new());
        for m in methods {
            let n = received.iter().filter(|r| r.method == m).count();
            match rules.iter().find(|r| r.method == m && (n < r.min || n > r.max)) {
                Some(r) => expected.push_str(&format!("{m}: {}\n", r.describe())),
                None => expected.push_str(&format!("{m}: {n}\n")),
            }
            actual.push_str(&format!("{m}: {n}\n"));
        }
        let diff = TextDiff::from_lines(&expected, &actual).unified_diff().header("expected", "received").to_string();
        let mut out = format!("MockPeer: {} expectation(s) not met\n", unmet.len());
        for u in unmet {
            out.push_str(&format!("  {u}\n"));
        }
        out.push_str(&format!("{diff}requests received ({}):\n", received.len()));
        for (i, r) in received.iter().enumerate() {
            out.push_str(&format!("  {}. {}\n", i + 1, r.summary()));
        }
        let dropped = self.server.app().recorder.dropped();
        if dropped > 0 {
            out.push_str(&format!("  … and {dropped} more not kept\n"));
        }
        out
    }
}

impl Drop for MockPeer {
    /// Verifies the expectations, panicking with the report when one is not met (unless the
    /// thread is already panicking).
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        if let Err(failure) = self.verify() {
            panic!("{failure}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unmet_expectation_panics_on_drop_with_a_diff() {
        let peer = MockPeer::start().await;
        peer.expect("SendMessage").times(1);
        peer.expect("GET").never();
        reqwest::get(peer.card_url()).await.unwrap();
        let failure = peer.verify().unwrap_err();
        assert_eq!(
            failure.unmet,
            ["SendMessage: expected exactly 1, received 0", "GET: expected exactly 0, received 1"]
        );
        let report = failure.to_string();
        assert!(report.contains("\n-SendMessage: exactly 1\n") && report.contains("\n+SendMessage: 0\n"), "{report}");
        assert!(report.contains("1. GET /.well-known/agent-card.json"), "{report}");
        let dropped = std::panic::AssertUnwindSafe(peer);
        let caught = std::panic::catch_unwind(move || drop(dropped)).unwrap_err();
        let text = caught.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(text.contains("2 expectation(s) not met"), "{text}");
    }

    #[tokio::test]
    async fn ranges_are_checked_both_ways() {
        let peer = MockPeer::start().await;
        peer.expect("GET").at_least(2).at_most(3);
        let client = reqwest::Client::new();
        client.get(peer.card_url()).send().await.unwrap();
        assert!(peer.verify().is_err());
        client.get(peer.card_url()).send().await.unwrap();
        assert!(peer.verify().is_ok());
        for _ in 0..2 {
            client.get(peer.card_url()).send().await.unwrap();
        }
        assert_eq!(peer.verify().unwrap_err().unmet, ["GET: expected between 2 and 3, received 4"]);
        peer.reset();
    }
}

//! A fleet: one listener serving many distinct mock agents, each under `/agents/aNNNN` with its own
//! card, task store and faults (`a2a-conform mock --fleet N`), to check a registry's worth of
//! agents against. Which faults agent k commits follows from the seed and k alone: the same seed
//! gives the same agent k in a fleet of any size. The root is the host's own faithful agent (the
//! well-known card at the origin, §8.2, which `check` asks of every agent's host).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tower::ServiceExt as _;

use super::app::{App, MockError};
use super::card::WELL_KNOWN_PATH;
use super::config::MockConfig;
use super::faults::{Fault, FaultCatalogue};

/// The path under which agents are served: `/agents/a0001`, ...
pub const AGENTS_PATH: &str = "/agents";

/// How many agents, the seed of their faults, and the settings every agent shares.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// Number of agents (at least one).
    pub agents: usize,
    /// Seed of the fault assignment.
    pub seed: u64,
    /// Every agent's settings, except the name, the path prefix and the faults, which the fleet
    /// sets (so these must be left at their defaults: empty prefix, no faults).
    pub base: MockConfig,
}

impl FleetConfig {
    /// `agents` agents with faults drawn from `seed`, otherwise default mocks.
    pub fn new(agents: usize, seed: u64) -> Self {
        FleetConfig { agents, seed, base: MockConfig::default() }
    }
}

/// One agent of a running fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetAgent {
    /// `a0001`, ...
    pub name: String,
    /// Base URL (its card at `URL/.well-known/agent-card.json`, JSON-RPC at `URL/rpc`).
    pub url: String,
    /// Ids of the faults it commits, in id order; empty for a faithful agent.
    pub faults: Vec<String>,
}

impl FleetAgent {
    /// Where its card is. `check` takes this URL as is; given the base URL it would look for the
    /// card at the origin (§8.2), where a fleet serves none.
    pub fn card_url(&self) -> String {
        format!("{}{WELL_KNOWN_PATH}", self.url)
    }
}

/// The name of agent `k` (1-based) of a fleet of `agents`: `a` and k zero-padded to four digits,
/// or to as many as `agents` has.
pub fn agent_name(k: usize, agents: usize) -> String {
    let width = agents.to_string().len().max(4);
    format!("a{k:0width$}")
}

/// SplitMix64's finaliser: a well-mixed 64-bit value of `z`.
fn mix(z: u64) -> u64 {
    let z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The `draw`th pseudo-random number of agent `k` under `seed`.
fn draw(seed: u64, k: usize, draw: u64) -> u64 {
    mix(mix(mix(seed) ^ k as u64) ^ draw)
}

/// The faults of agent `k` (1-based) under `seed`, from `pool` (in a fixed order): none for about a
/// third of the agents, else one or two distinct faults, in id order.
pub fn agent_faults(seed: u64, k: usize, pool: &[Arc<Fault>]) -> Vec<Arc<Fault>> {
    if pool.is_empty() || draw(seed, k, 0).is_multiple_of(3) {
        return Vec::new();
    }
    let n = pool.len() as u64;
    let first = draw(seed, k, 1) % n;
    let mut picked = vec![first];
    if n > 1 && draw(seed, k, 2) % 2 == 1 {
        picked.push((first + 1 + draw(seed, k, 3) % (n - 1)) % n);
    }
    let mut faults: Vec<Arc<Fault>> = picked.into_iter().map(|i| pool[i as usize].clone()).collect();
    faults.sort_by(|a, b| a.id.cmp(&b.id));
    faults
}

/// The `k`th mix of `min..=max` distinct faults under `seed`, drawn from `pool` (in a fixed order)
/// as a fleet draws an agent's, in id order: an agent with many defects at once, as real agents
/// have (the multi-fault matrix of `selftest`).
pub fn fault_mix(seed: u64, k: usize, pool: &[Arc<Fault>], min: usize, max: usize) -> Vec<Arc<Fault>> {
    let (min, max) = (min.min(pool.len()), max.min(pool.len()).max(min.min(pool.len())));
    if max == 0 {
        return Vec::new();
    }
    let size = min + (draw(seed, k, 0) % (max - min + 1) as u64) as usize;
    let mut picked: Vec<usize> = Vec::with_capacity(size);
    // Draws that cannot join (a fault already picked, or one touching a member a picked one
    // touches) are passed over; a bounded number of draws keeps a small pool from spinning.
    for n in 1..=(64 * pool.len() as u64) {
        if picked.len() == size {
            break;
        }
        let i = (draw(seed, k, n) % pool.len() as u64) as usize;
        if picked.iter().all(|&p| pool[p].combines_with(&pool[i])) {
            picked.push(i);
        }
    }
    let mut faults: Vec<Arc<Fault>> = picked.into_iter().map(|i| pool[i].clone()).collect();
    faults.sort_by(|a, b| a.id.cmp(&b.id));
    faults
}

/// A running fleet on a local port.
#[derive(Debug)]
pub struct Fleet {
    addr: SocketAddr,
    base_url: String,
    seed: u64,
    agents: Vec<FleetAgent>,
    shutdown: Option<oneshot::Sender<()>>,
    join: Option<JoinHandle<()>>,
}

/// What a fleet serves: the agents by name, and the host's own agent at the root.
struct Routes {
    agents: HashMap<String, Router>,
    host: Router,
}

/// Routes a request to the agent its path names, in one hash lookup whatever the fleet's size;
/// a path outside `/agents/` to the host's agent.
async fn dispatch(State(routes): State<Arc<Routes>>, req: Request) -> Response {
    let path = req.uri().path();
    let target = match path.strip_prefix(AGENTS_PATH).and_then(|p| p.strip_prefix('/')) {
        Some(rest) => routes.agents.get(rest.split('/').next().unwrap_or_default()),
        None => Some(&routes.host),
    };
    match target {
        Some(router) => router.clone().oneshot(req).await.into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

impl Fleet {
    /// Starts a fleet on 127.0.0.1 with an OS-chosen port.
    pub async fn start(config: FleetConfig) -> Result<Self, MockError> {
        Self::bind(config, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Starts a fleet on `addr` (port 0: any free port).
    pub async fn bind(config: FleetConfig, addr: SocketAddr) -> Result<Self, MockError> {
        let FleetConfig { agents: count, seed, base } = config;
        let refuse = |what: &str| Err(MockError::Config(format!("a fleet {what}")));
        if count == 0 {
            return refuse("needs at least one agent");
        }
        if !base.faults.is_empty() {
            return refuse("chooses each agent's faults itself (--fault cannot be given)");
        }
        if !base.path_prefix.trim_matches('/').is_empty() {
            return refuse("serves each agent under /agents/NAME (--path-prefix cannot be given)");
        }
        if base.interface_elsewhere {
            return refuse("has one listener (an interface on another host cannot be served)");
        }
        let pool = FaultCatalogue::builtin().map_err(|e| MockError::Config(e.to_string()))?.fleet_pool();
        let listener = TcpListener::bind(addr).await.map_err(|source| MockError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| MockError::Bind { addr, source })?;
        let base_url = match &base.public_url {
            Some(u) => u.trim_end_matches('/').to_owned(),
            None => format!("http://{addr}"),
        };
        // Built once and shared: what differs between agents is the card, the store and the faults.
        let scenarios = Arc::new(App::scenario_book(&base)?);
        let mut routes = HashMap::with_capacity(count);
        let mut agents = Vec::with_capacity(count);
        for k in 1..=count {
            let name = agent_name(k, count);
            let prefix = format!("{AGENTS_PATH}/{name}");
            let url = format!("{base_url}{prefix}");
            let faults = agent_faults(seed, k, &pool);
            let ids = faults.iter().map(|f| f.id.clone()).collect();
            let config = MockConfig {
                name: format!("a2a-conform fleet agent {name}"),
                path_prefix: prefix,
                faults,
                ..base.clone()
            };
            let app = Arc::new(App::with_scenarios(config, &url, scenarios.clone())?);
            routes.insert(name.clone(), super::router(app));
            agents.push(FleetAgent { name, url, faults: ids });
        }
        // The well-known card at the origin (§8.2), which `check` asks every agent's host for: a
        // faithful agent of the host's own, named for the fleet, its JSON-RPC at `/rpc`.
        let host = MockConfig { name: "a2a-conform fleet".into(), ..base };
        let host = super::router(Arc::new(App::with_scenarios(host, &base_url, scenarios)?));
        let service = Router::new().fallback(dispatch).with_state(Arc::new(Routes { agents: routes, host }));
        let (tx, join) = super::spawn_serving(vec![listener], service);
        Ok(Fleet { addr, base_url, seed, agents, shutdown: Some(tx), join: Some(join) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The fleet's base URL, `http://127.0.0.1:PORT` (or the public URL given); agents are under
    /// `URL/agents/`.
    pub fn url(&self) -> &str {
        &self.base_url
    }

    /// The seed the faults were drawn from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Every agent, in order (`a0001` first).
    pub fn agents(&self) -> &[FleetAgent] {
        &self.agents
    }

    /// The agent named `name`.
    pub fn agent(&self, name: &str) -> Option<&FleetAgent> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// A targets file (YAML) listing every agent, for `check --targets`: name, URL (the card's,
    /// which `check` reads as given), `behaviors: acts` and the label `faults` (comma-separated
    /// ids, empty for a faithful agent).
    pub fn targets_yaml(&self) -> String {
        #[derive(Serialize)]
        struct File<'a> {
            targets: Vec<Target<'a>>,
        }
        #[derive(Serialize)]
        struct Target<'a> {
            name: &'a str,
            url: &'a str,
            behaviors: &'a str,
            labels: std::collections::BTreeMap<&'a str, String>,
        }
        let cards: Vec<String> = self.agents.iter().map(FleetAgent::card_url).collect();
        let targets = self
            .agents
            .iter()
            .zip(&cards)
            .map(|(a, card)| Target {
                name: &a.name,
                url: card,
                behaviors: "acts",
                labels: [("faults", a.faults.join(","))].into(),
            })
            .collect();
        let n = self.agents.len();
        let body = serde_norway::to_string(&File { targets }).expect("a targets file serializes");
        let end = if body.ends_with('\n') { "" } else { "\n" };
        format!(
            "# a2a-conform targets: {n} agents of `a2a-conform mock --fleet {n} --fleet-seed {}`\n{body}{end}",
            self.seed
        )
    }

    /// Stops accepting connections. Open streams are dropped.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(j) = self.join.take() {
            j.abort();
            let _ = j.await;
        }
    }

    /// Serves until the process is interrupted (Ctrl-C).
    pub async fn run_until_ctrl_c(self) {
        let _ = tokio::signal::ctrl_c().await;
        self.shutdown().await;
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        if let Some(j) = self.join.take() {
            j.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> Vec<Arc<Fault>> {
        FaultCatalogue::builtin().unwrap().fleet_pool()
    }

    #[test]
    fn names_are_zero_padded_to_four_digits_or_more() {
        assert_eq!(agent_name(1, 10), "a0001");
        assert_eq!(agent_name(1000, 1000), "a1000");
        assert_eq!(agent_name(7, 12_000), "a00007");
    }

    #[test]
    fn a_third_of_the_agents_are_faithful_and_the_rest_commit_one_or_two_faults() {
        let pool = pool();
        let plan: Vec<Vec<Arc<Fault>>> = (1..=3000).map(|k| agent_faults(7, k, &pool)).collect();
        let with = |n: usize| plan.iter().filter(|f| f.len() == n).count();
        assert_eq!(with(0) + with(1) + with(2), 3000);
        for n in 0..=2 {
            assert!((800..1200).contains(&with(n)), "{} agents with {n} faults of 3000", with(n));
        }
        assert!(plan.iter().all(|f| f.windows(2).all(|w| w[0].id < w[1].id)), "distinct, in id order");
        assert_eq!(agent_faults(7, 42, &pool), plan[41], "agent k depends on the seed and k alone");
        let other: Vec<Vec<Arc<Fault>>> = (1..=3000).map(|k| agent_faults(8, k, &pool)).collect();
        assert_ne!(plan, other);
        assert!(agent_faults(7, 1, &[]).is_empty(), "no pool, no faults");
    }

    #[tokio::test]
    async fn requests_reach_the_agent_their_path_names_and_no_other() {
        let fleet = Fleet::start(FleetConfig::new(3, 1)).await.unwrap();
        let client = reqwest::Client::new();
        for a in fleet.agents() {
            let card: serde_json::Value = client
                .get(format!("{}/.well-known/agent-card.json", a.url))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(card["name"], format!("a2a-conform fleet agent {}", a.name));
        }
        for path in ["/", "/agents", "/agents/", "/agents/a0004/rpc", "/agents/a0001", "/agents/a0001x/rpc"] {
            let status = client.get(format!("{}{path}", fleet.url())).send().await.unwrap().status();
            assert_eq!(status, 404, "{path}");
        }
        let host: serde_json::Value =
            client.get(format!("{}{WELL_KNOWN_PATH}", fleet.url())).send().await.unwrap().json().await.unwrap();
        assert_eq!(host["name"], "a2a-conform fleet");
        assert_eq!(host["supportedInterfaces"][0]["url"], format!("{}/rpc", fleet.url()));
        fleet.shutdown().await;
    }

    #[tokio::test]
    async fn a_fleet_refuses_settings_it_sets_itself() {
        let base = MockConfig { path_prefix: "/x".into(), ..MockConfig::default() };
        let err = Fleet::start(FleetConfig { base, ..FleetConfig::new(2, 0) }).await.unwrap_err();
        assert!(err.to_string().contains("--path-prefix"), "{err}");
        assert!(Fleet::start(FleetConfig::new(0, 0)).await.is_err());
    }
}

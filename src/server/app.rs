//! The shared state of a running mock: its settings, cards, scenarios, tasks and push delivery.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::binding::Binding;
use super::card::{self, CardDocument};
use super::config::{ExtendedCard, MockConfig};
use super::dedup::MessageIds;
use super::faults::{self, Target};
use super::push::PushDispatcher;
use super::record::Recorder;
use super::scenario::{ScenarioBook, ScenarioError};
use super::tasks::{StateWatch, TaskStore};
use crate::protocol::TaskState;

/// Shared state of a running mock.
#[derive(Debug)]
pub struct App {
    pub config: MockConfig,
    /// The public card.
    pub card: CardDocument,
    pub extended_card: Option<CardDocument>,
    /// Immutable once built: agents of one fleet share it ([`App::with_scenarios`]).
    pub scenarios: Arc<ScenarioBook>,
    pub store: TaskStore,
    pub push: Arc<PushDispatcher>,
    /// Message ids already used (only consulted with `single_use_message_ids`).
    pub message_ids: MessageIds,
    /// Requests received (only filled with `record_requests`).
    pub recorder: Arc<Recorder>,
    /// Tasks whose first stream was cut (`cut_streams_after`): each is cut once.
    pub cut_tasks: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The faults the mock commits in its own behaviour (not in the middleware) on JSON-RPC calls.
    pub faults: faults::ActiveFaults,
    /// The same on HTTP+JSON calls.
    pub rest_faults: faults::ActiveFaults,
}

/// The mock could not start.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    /// A setting that cannot be served.
    #[error("{0}")]
    Config(String),
}

impl App {
    /// The faults committed in the mock's own behaviour on `binding`'s calls.
    pub fn faults_for(&self, binding: Binding) -> &faults::ActiveFaults {
        match binding {
            Binding::JsonRpc => &self.faults,
            Binding::HttpJson => &self.rest_faults,
        }
    }

    /// Builds the state for a server reachable at `base_url` (no trailing slash; the path prefix,
    /// if any, included).
    pub fn new(config: MockConfig, base_url: &str) -> Result<Self, MockError> {
        let scenarios = Arc::new(Self::scenario_book(&config)?);
        Self::with_scenarios(config, base_url, scenarios)
    }

    /// The scenarios a mock with `config` runs: the built-ins and `scenario_dir`'s, sleeps scaled,
    /// the default set.
    pub fn scenario_book(config: &MockConfig) -> Result<ScenarioBook, MockError> {
        let mut scenarios = ScenarioBook::builtin()?;
        if let Some(dir) = &config.scenario_dir {
            scenarios.add_dir(dir)?;
        }
        scenarios.scale_sleeps(config.sleep_percent);
        if let Some(name) = &config.default_scenario {
            scenarios.set_default(name)?;
        }
        Ok(scenarios)
    }

    /// [`App::new`] with the scenarios [`App::scenario_book`] built for the same settings, shared
    /// rather than built again (the agents of a fleet run one book).
    pub fn with_scenarios(config: MockConfig, base_url: &str, scenarios: Arc<ScenarioBook>) -> Result<Self, MockError> {
        let all = faults::ActiveFaults::new(config.faults.clone());
        // The cards, the task store and push delivery belong to no binding.
        let active = all.scoped(None);
        // The agent builds its cards (a card fault is a defect of that), then signs what it
        // serves: the signature covers the card as served. Edits after signing are the layer's.
        let typed = card::public_card(&config, base_url, &scenarios);
        let mut extended = matches!(config.extended_card, ExtendedCard::Bearer(_)).then(|| {
            let mut x = serde_json::to_value(card::extended_card(&typed)).expect("AgentCard serializes");
            faults::apply::mutate_card(&active, Target::ExtendedCard, &mut x);
            x
        });
        let mut public = serde_json::to_value(&typed).expect("AgentCard serializes");
        faults::apply::mutate_card(&active, Target::Card, &mut public);
        if let Some(signing) = &config.signing {
            card::sign(&mut public, signing, active.sign_card("public"));
            if let Some(x) = extended.as_mut() {
                card::sign(x, signing, active.sign_card("extended"));
            }
        }
        let extended_card = extended.map(CardDocument::new);
        let l = &config.limits;
        let recorder = Arc::new(Recorder::default());
        let mut store = TaskStore::new(l.max_tasks, l.max_task_events, l.max_history)
            .reuse_task_id(active.reused_task_id())
            .whole_seconds(config.whole_second_timestamps);
        if config.record_requests {
            let r = recorder.clone();
            store = store.watch_states(StateWatch(Arc::new(move |task: &str, state: TaskState| {
                r.incident(serde_json::json!({"kind": "task_state", "task": task, "state": state.as_str()}));
            })));
        }
        let push = Arc::new(PushDispatcher {
            policy: config.webhooks,
            timeout: Duration::from_millis(config.push_timeout_ms),
            retries: config.push_retries,
            faults: active.clone(),
        });
        let message_ids = MessageIds::new(l.max_message_ids);
        Ok(App {
            card: CardDocument::new(public),
            extended_card,
            scenarios,
            store,
            push,
            message_ids,
            recorder,
            cut_tasks: std::sync::Mutex::default(),
            faults: all.scoped(Some(Binding::JsonRpc)),
            rest_faults: all.scoped(Some(Binding::HttpJson)),
            config,
        })
    }
}

//! What the mock does to provoke a client under `client-check --scenario NAME`, as data
//! (`mock-peer/client-scenarios/*.json`): settings of the mock (the scenario every message runs, a
//! stream cut, a tenant) and mutations from the fault catalogue's vocabulary, committed as a
//! conforming fault (each is something an agent may do, not a violation).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::MockConfig;
use super::faults::{Fault, Mutation};
pub use super::settings::MockSettings;

/// Client scenario files compiled into the binary.
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_client_scenarios.rs"));

/// One way of provoking a client.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientScenario {
    /// kebab-case, as given to `--scenario`.
    pub name: String,
    /// What the mock does, in a sentence or two.
    pub description: String,
    #[serde(default)]
    pub mock: MockSettings,
    #[serde(default)]
    pub mutations: Vec<Mutation>,
}

/// A scenario file that cannot be used, or a name no scenario has.
#[derive(Debug, thiserror::Error)]
pub enum ClientScenarioError {
    #[error("mock-peer/client-scenarios/{file}: {reason}")]
    Invalid { file: String, reason: String },
    #[error("no client scenario is named {name:?}; `a2a-conform client-check --list` shows them")]
    Unknown { name: String },
    #[error("client scenarios {a:?} and {b:?} both set {what}; choose one")]
    Clash { a: String, b: String, what: &'static str },
}

impl ClientScenario {
    /// Every built-in scenario, by name.
    pub fn builtin() -> Result<Vec<ClientScenario>, ClientScenarioError> {
        let mut out: Vec<ClientScenario> = Vec::new();
        for (file, text) in BUILTIN {
            let invalid = |reason: String| ClientScenarioError::Invalid { file: (*file).to_owned(), reason };
            let value: Value = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
            let sc: ClientScenario = serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
            if format!("{}.json", sc.name) != *file {
                return Err(invalid(format!("is named {:?}: the file name must be the name", sc.name)));
            }
            out.push(sc);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The scenarios `names` names, in that order.
    pub fn pick(names: &[String]) -> Result<Vec<ClientScenario>, ClientScenarioError> {
        let all = Self::builtin()?;
        names
            .iter()
            .map(|n| {
                all.iter()
                    .find(|s| &s.name == n)
                    .cloned()
                    .ok_or_else(|| ClientScenarioError::Unknown { name: n.clone() })
            })
            .collect()
    }

    /// Sets `config` as every scenario in `chosen` says. Two that set one setting clash.
    pub fn apply_all(chosen: &[ClientScenario], config: &mut MockConfig) -> Result<(), ClientScenarioError> {
        MockSettings::apply_all(chosen.iter().map(|sc| (sc.name.as_str(), &sc.mock)), config)
            .map_err(|c| ClientScenarioError::Clash { a: c.a, b: c.b, what: c.what })?;
        for sc in chosen {
            if !sc.mutations.is_empty() {
                config.faults.push(Arc::new(Fault {
                    id: format!("CLIENT-SCENARIO-{}", sc.name.to_ascii_uppercase()),
                    section: String::new(),
                    description: sc.description.clone(),
                    mutations: sc.mutations.clone(),
                    kills: Vec::new(),
                    conforming: true,
                    mock: Default::default(),
                    bindings: Vec::new(),
                    awaiting_checks: false,
                    masks: None,
                }));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_scenario_loads_and_applies_alone() {
        let all = ClientScenario::builtin().unwrap();
        assert!(all.len() >= 5, "{}", all.len());
        for sc in &all {
            let mut c = MockConfig::default();
            ClientScenario::apply_all(std::slice::from_ref(sc), &mut c).unwrap();
            crate::server::App::new(c, "http://mock.test").unwrap_or_else(|e| panic!("{}: {e}", sc.name));
        }
    }

    #[test]
    fn two_scenarios_setting_one_thing_clash_and_unknown_names_are_refused() {
        let both = ClientScenario::pick(&["drop-stream".into(), "input-required".into()]).unwrap();
        let e = ClientScenario::apply_all(&both, &mut MockConfig::default()).unwrap_err();
        assert!(e.to_string().contains("both set the scenario every message runs"), "{e}");
        let e = ClientScenario::pick(&["nope".into()]).unwrap_err();
        assert!(e.to_string().contains("--list"), "{e}");
    }
}

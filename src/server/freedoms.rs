//! The spec's freedoms as data (`mock-peer/freedoms/*.json`): each a behaviour the spec leaves to an
//! agent (a MAY, an optional member left out, an allowed spelling or verb, a capability not
//! declared), with the sentence that allows it, which the mock can be told to show (`mock
//! --freedom ID`). No check may fail, warn or end in error on any of them, alone or together:
//! `selftest` proves it (a false verdict waiting for a real agent otherwise).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use super::binding::Binding;
use super::config::MockConfig;
use super::faults::{Fault, Mutation};
use super::settings::{Clash, MockSettings};

/// Freedom files compiled into the binary.
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_freedoms.rs"));

/// The sentence that allows a freedom, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Allowed {
    /// A sentence of the A2A 1.0 specification.
    Spec(String),
    /// A sentence of another text (`a2a-proto`: the proto's comments; `jsonrpc`: JSON-RPC 2.0), or
    /// of the specification (`a2a-spec`) in a `section` other than the freedom's.
    Quoted {
        quote: String,
        source: String,
        #[serde(default)]
        section: Option<String>,
    },
}

impl Allowed {
    /// The words quoted.
    pub fn text(&self) -> &str {
        match self {
            Allowed::Spec(t) | Allowed::Quoted { quote: t, .. } => t,
        }
    }

    /// The section they stand in, when not the freedom's own.
    pub fn section(&self) -> Option<&str> {
        match self {
            Allowed::Quoted { section: Some(s), .. } => Some(s),
            _ => None,
        }
    }

    /// Where they stand: `a2a-spec`, `a2a-proto` or `jsonrpc`.
    pub fn source(&self) -> &str {
        match self {
            Allowed::Spec(_) => "a2a-spec",
            Allowed::Quoted { source, .. } => source,
        }
    }
}

/// One behaviour the spec allows.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Freedom {
    /// `FREEDOM-<AREA>-<WHAT>`, unique across files.
    pub id: String,
    /// The section of the A2A 1.0 specification the sentence stands in.
    pub section: String,
    /// The sentence(s) that allow it, verbatim (`tests/freedoms.rs` finds each in its text).
    pub allowed_by: Vec<Allowed>,
    /// One line: what the agent does.
    pub description: String,
    /// Settings of the mock that show it.
    #[serde(default)]
    pub mock: MockSettings,
    /// Changes of what the mock sends or reads, in the fault vocabulary (committed as a conforming
    /// fault).
    #[serde(default)]
    pub mutations: Vec<Mutation>,
    /// The bindings on whose calls the mutations apply (empty: every one).
    #[serde(default)]
    pub bindings: Vec<Binding>,
    /// Members of what the agent sends that the proto leaves optional (`Task.context_id`, its proto
    /// name) and that this freedom sends where the mock leaves them out, or leaves out where the mock
    /// sends them (`coverage --freedoms` lists the ones no freedom varies).
    #[serde(default)]
    pub members: Vec<String>,
    /// Freedoms this one cannot be shown with although no setting clashes (an agent that serves
    /// only HTTP+JSON has no JSON-RPC errors to answer with 4xx, say): a combination leaves them
    /// apart.
    #[serde(default)]
    pub excludes: Vec<String>,
}

/// A freedom file that cannot be used, an id no freedom has, or two freedoms that cannot be shown
/// together.
#[derive(Debug, thiserror::Error)]
pub enum FreedomError {
    #[error("mock-peer/freedoms/{file}: {reason}")]
    Invalid { file: String, reason: String },
    #[error("no freedom is named {0:?}; `a2a-conform freedoms list` shows them")]
    Unknown(String),
    #[error("freedoms {0}")]
    Clash(#[from] Clash),
    #[error("freedom {a} excludes {b}: an agent cannot show both")]
    Excluded { a: String, b: String },
}

/// Every freedom, by id.
#[derive(Debug, Clone, Default)]
pub struct FreedomCatalogue {
    by_id: BTreeMap<String, Arc<Freedom>>,
}

impl FreedomCatalogue {
    /// The compiled-in catalogue.
    pub fn builtin() -> Result<Self, FreedomError> {
        Self::from_texts(BUILTIN)
    }

    /// A catalogue read from `(file name, JSON text)` pairs, checked as the built-in one is.
    pub fn from_texts(files: &[(&str, &str)]) -> Result<Self, FreedomError> {
        let mut c = FreedomCatalogue::default();
        for (file, text) in files {
            c.add(file, text)?;
        }
        c.validate()?;
        Ok(c)
    }

    fn add(&mut self, file: &str, text: &str) -> Result<(), FreedomError> {
        let invalid = |reason: String| FreedomError::Invalid { file: file.to_owned(), reason };
        let list: Vec<Freedom> = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        for f in list {
            if !f.id.starts_with("FREEDOM-") {
                return Err(invalid(format!("{}: a freedom's id starts with FREEDOM-", f.id)));
            }
            if f.allowed_by.is_empty() {
                return Err(invalid(format!("{} quotes no sentence that allows it", f.id)));
            }
            if f.mutations.is_empty() && f.mock == MockSettings::default() {
                return Err(invalid(format!("{} changes nothing (no `mock` setting, no mutation)", f.id)));
            }
            if self.by_id.insert(f.id.clone(), Arc::new(f.clone())).is_some() {
                return Err(invalid(format!("duplicate freedom id {}", f.id)));
            }
        }
        Ok(())
    }

    /// Every `excludes` names a freedom, and each freedom can be shown alone.
    fn validate(&self) -> Result<(), FreedomError> {
        for f in self.by_id.values() {
            if let Some(x) = f.excludes.iter().find(|x| !self.by_id.contains_key(*x)) {
                return Err(FreedomError::Invalid { file: f.id.clone(), reason: format!("excludes unknown {x}") });
            }
        }
        Ok(())
    }

    pub fn get(&self, id: &str) -> Option<Arc<Freedom>> {
        self.by_id.get(id).cloned()
    }

    /// In id order.
    pub fn all(&self) -> impl Iterator<Item = &Arc<Freedom>> {
        self.by_id.values()
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The freedoms named, in that order.
    pub fn pick(&self, ids: &[String]) -> Result<Vec<Arc<Freedom>>, FreedomError> {
        ids.iter().map(|id| self.get(id).ok_or_else(|| FreedomError::Unknown(id.clone()))).collect()
    }
}

/// Whether `a` and `b` can be shown by one agent: no setting both claim, neither excludes the other.
pub fn compatible(a: &Freedom, b: &Freedom) -> bool {
    let mut config = MockConfig::default();
    !a.excludes.contains(&b.id)
        && !b.excludes.contains(&a.id)
        && MockSettings::apply_all([(a.id.as_str(), &a.mock), (b.id.as_str(), &b.mock)], &mut config).is_ok()
}

/// Sets `config` to show every freedom of `chosen`: their settings, and their mutations as one
/// conforming fault each.
pub fn apply_all(chosen: &[Arc<Freedom>], config: &mut MockConfig) -> Result<(), FreedomError> {
    for (i, a) in chosen.iter().enumerate() {
        if let Some(b) = chosen[i + 1..].iter().find(|b| a.excludes.contains(&b.id) || b.excludes.contains(&a.id)) {
            return Err(FreedomError::Excluded { a: a.id.clone(), b: b.id.clone() });
        }
    }
    MockSettings::apply_all(chosen.iter().map(|f| (f.id.as_str(), &f.mock)), config)?;
    for f in chosen.iter().filter(|f| !f.mutations.is_empty()) {
        config.faults.push(Arc::new(Fault {
            id: f.id.clone(),
            section: f.section.clone(),
            description: f.description.clone(),
            mutations: f.mutations.clone(),
            kills: Vec::new(),
            conforming: true,
            mock: Default::default(),
            bindings: f.bindings.clone(),
            awaiting_checks: false,
            masks: None,
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_loads_and_each_freedom_starts_a_mock_alone() {
        let c = FreedomCatalogue::builtin().unwrap();
        assert!(c.len() >= 20, "only {} freedoms", c.len());
        for f in c.all() {
            let mut config = MockConfig::default();
            apply_all(std::slice::from_ref(f), &mut config).unwrap_or_else(|e| panic!("{}: {e}", f.id));
            crate::server::App::new(config, "http://mock.test").unwrap_or_else(|e| panic!("{}: {e}", f.id));
        }
    }

    #[test]
    fn freedoms_that_set_one_thing_are_not_compatible() {
        let c = FreedomCatalogue::builtin().unwrap();
        let rpc = c.get("FREEDOM-BINDING-JSONRPC-ONLY").unwrap();
        let rest = c.get("FREEDOM-BINDING-HTTP-JSON-ONLY").unwrap();
        assert!(!compatible(&rpc, &rest));
        let e = apply_all(&[rpc, rest], &mut MockConfig::default()).unwrap_err();
        assert!(e.to_string().contains("the binding served"), "{e}");
    }
}

//! Where the behaviours a check needs come from: nowhere (`--behaviors none`: only checks that grade
//! whatever the agent does run), the ACTS §11 prefix contract (`--behaviors acts`), or the user's
//! map (`--behaviors FILE`) naming the message that makes *their* agent do what a contract
//! behaviour names. The contract itself, with how a mapped behaviour is confirmed, is data:
//! `suites/behaviors.json`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

const CONTRACT: &str = include_str!("../../suites/behaviors.json");

/// Most entries a map may have: the contract has fewer; more is a mistake.
const MAX_ENTRIES: usize = 64;

/// Longest message text a map may give.
const MAX_TEXT: usize = 4096;

/// How the kit confirms that a mapped message does what the behaviour names.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Confirm {
    /// `send_message` (default) or `send_streaming_message`.
    #[serde(default)]
    pub operation: Option<String>,
    #[serde(default)]
    pub return_immediately: bool,
    /// Assertion on the SendMessage result.
    #[serde(default)]
    pub result: Option<Value>,
    /// Collection assertion (`path` with wildcards, `match`) on the SendMessage result.
    #[serde(default)]
    pub any: Option<Value>,
    /// Assertion one of the stream's events must satisfy.
    #[serde(default)]
    pub any_event: Option<Value>,
    /// Assertion on the stream's last event.
    #[serde(default)]
    pub final_event: Option<Value>,
    /// The task must be seen still running after the answer came back (GetTask for a few hundred
    /// milliseconds finds it SUBMITTED or WORKING): an answer that says SUBMITTED about a task that
    /// finishes a few milliseconds later is no long-running task.
    #[serde(default)]
    pub still_running: bool,
    /// What the task must do when the map's follow-up is sent to it.
    #[serde(default)]
    pub followup: Option<Box<Confirm>>,
}

/// One behaviour of the contract.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractBehavior {
    pub description: String,
    /// The contract's follow-up that ends an interruption (`done` for tck-multi-turn).
    #[serde(default)]
    pub followup: Option<String>,
    /// The contract's follow-up that keeps the task interrupted.
    #[serde(default)]
    pub again: Option<String>,
    pub confirm: Confirm,
}

#[derive(Debug, Deserialize)]
struct ContractFile {
    #[allow(dead_code)]
    description: String,
    behaviors: BTreeMap<String, ContractBehavior>,
}

/// The ACTS §11 behaviours the kit knows, by prefix (`tck-complete-task`, ...).
pub fn contract() -> &'static BTreeMap<String, ContractBehavior> {
    static C: OnceLock<BTreeMap<String, ContractBehavior>> = OnceLock::new();
    C.get_or_init(|| {
        serde_json::from_str::<ContractFile>(CONTRACT).expect("suites/behaviors.json is a valid contract").behaviors
    })
}

/// What makes the user's agent do one behaviour.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapped {
    /// The message text that starts it.
    pub text: String,
    /// A follow-up that ends the interruption (input or auth required, multi-turn).
    #[serde(default)]
    pub followup: Option<String>,
    /// A follow-up that keeps the task interrupted (multi-turn).
    #[serde(default)]
    pub again: Option<String>,
}

/// A behaviour map: the user's, as read from `--behaviors FILE`, or the one the kit found by
/// trying the neutral prompt and the card's skill examples.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BehaviorMap {
    /// The file it came from, for messages.
    pub source: String,
    pub entries: BTreeMap<String, Mapped>,
    pub origin: MapOrigin,
}

/// Who wrote a map: a map the user wrote is a promise the kit confirms before it relies on it; a
/// map the kit found holds only what it saw happen, and remembers what every message it tried did
/// so that a check still lacking a behaviour can say so.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MapOrigin {
    #[default]
    File,
    /// What each message the kit tried did, in plain words (`"hello": COMPLETED`), and the
    /// prompts whose `returnImmediately` answer came only when their task had completed, many
    /// times later than the quickest answer (slowest first): where to look for an agent that
    /// waits for the work. `messages_only`: every message tried was answered with a Message (the
    /// freedom of §3.1.1), so no task behaviour could show.
    Found { seen: Vec<String>, slow: Vec<String>, messages_only: bool },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MapFile {
    behaviors: BTreeMap<String, MapEntry>,
}

/// An entry is a text, or the full form with follow-ups.
#[derive(Deserialize)]
#[serde(untagged)]
enum MapEntry {
    Text(String),
    Full(Mapped),
}

impl BehaviorMap {
    /// Reads a map (YAML or JSON). Every entry must name a behaviour of the contract.
    pub fn load(path: &Path) -> Result<Self, String> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{source}: {e}"))?;
        Self::parse(&source, &text)
    }

    pub fn parse(source: &str, text: &str) -> Result<Self, String> {
        let file: MapFile = serde_norway::from_str(text).map_err(|e| format!("{source}: not a behaviour map: {e}"))?;
        if file.behaviors.len() > MAX_ENTRIES {
            return Err(format!("{source}: more than {MAX_ENTRIES} behaviours"));
        }
        let mut entries = BTreeMap::new();
        for (name, entry) in file.behaviors {
            if !contract().contains_key(&name) {
                let known: Vec<&str> = contract().keys().map(String::as_str).collect();
                return Err(format!("{source}: unknown behaviour {name:?}; the contract knows {}", known.join(", ")));
            }
            let mapped = match entry {
                MapEntry::Text(text) => Mapped { text, followup: None, again: None },
                MapEntry::Full(m) => m,
            };
            for t in [Some(&mapped.text), mapped.followup.as_ref(), mapped.again.as_ref()].into_iter().flatten() {
                if t.trim().is_empty() || t.len() > MAX_TEXT {
                    return Err(format!("{source}: {name}: a message text must be 1 to {MAX_TEXT} bytes"));
                }
            }
            entries.insert(name, mapped);
        }
        Ok(BehaviorMap { source: source.to_owned(), entries, origin: MapOrigin::File })
    }
}

/// Where the behaviours checks need come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Behaviors {
    /// None: only checks that grade whatever the agent does run.
    #[default]
    None,
    /// The agent implements the ACTS §11 prefixes.
    Acts,
    Map(BehaviorMap),
}

/// The follow-up texts a check may use (`{{followup}}`, `{{again}}`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FollowUps {
    pub followup: Option<String>,
    pub again: Option<String>,
}

impl Behaviors {
    /// True if a message can make the agent do `behavior`.
    pub fn provides(&self, behavior: &str) -> bool {
        match self {
            Behaviors::None => false,
            Behaviors::Acts => true,
            Behaviors::Map(m) => m.entries.contains_key(behavior),
        }
    }

    /// The follow-ups of the first behaviour in `required` that defines them.
    pub fn follow_ups(&self, required: &[String]) -> FollowUps {
        for b in required {
            let f = match self {
                Behaviors::None => FollowUps::default(),
                Behaviors::Acts => contract()
                    .get(b)
                    .map(|c| FollowUps { followup: c.followup.clone(), again: c.again.clone() })
                    .unwrap_or_default(),
                Behaviors::Map(m) => m
                    .entries
                    .get(b)
                    .map(|e| FollowUps { followup: e.followup.clone(), again: e.again.clone() })
                    .unwrap_or_default(),
            };
            if f.followup.is_some() || f.again.is_some() {
                return f;
            }
        }
        FollowUps::default()
    }

    /// The text the map gives for a message the suite wrote as `tck-<name> …`; `None` keeps the
    /// suite's text (no map, or a prefix the map does not name).
    pub fn rewrite(&self, text: &str) -> Option<&str> {
        let Behaviors::Map(m) = self else { return None };
        // The longest mapped prefix wins: tck-stream-chunked before a hypothetical tck-stream.
        m.entries
            .iter()
            .filter(|(name, _)| text == name.as_str() || text.starts_with(&format!("{name} ")))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, e)| e.text.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_loads_and_defines_the_multi_turn_follow_ups() {
        let mt = &contract()["tck-multi-turn"];
        assert_eq!(mt.followup.as_deref(), Some("done"));
        assert!(mt.confirm.followup.is_some());
        assert!(contract().len() >= 14);
    }

    #[test]
    fn a_map_takes_texts_or_full_entries_and_refuses_unknown_behaviours() {
        let m = BehaviorMap::parse(
            "m.yaml",
            "behaviors:\n  tck-complete-task: hello\n  tck-multi-turn: {text: ask me, followup: bye, again: more}\n",
        )
        .unwrap();
        assert_eq!(m.entries["tck-complete-task"].text, "hello");
        assert_eq!(m.entries["tck-multi-turn"].again.as_deref(), Some("more"));
        let e = BehaviorMap::parse("m.yaml", "behaviors:\n  tck-fly: up\n").unwrap_err();
        assert!(e.contains("unknown behaviour \"tck-fly\""), "{e}");
        assert!(BehaviorMap::parse("m.yaml", "behaviors:\n  tck-complete-task: ''\n").is_err());
    }

    #[test]
    fn texts_are_rewritten_by_the_longest_mapped_prefix() {
        let m = BehaviorMap::parse("m", "behaviors:\n  tck-stream-basic: a\n  tck-stream-chunked: b\n").unwrap();
        let b = Behaviors::Map(m);
        assert_eq!(b.rewrite("tck-stream-chunked go"), Some("b"));
        assert_eq!(b.rewrite("tck-stream-basic"), Some("a"));
        assert_eq!(b.rewrite("tck-cancel x"), None);
        assert_eq!(Behaviors::Acts.rewrite("tck-cancel x"), None);
        assert!(b.provides("tck-stream-basic") && !b.provides("tck-cancel"));
        assert!(Behaviors::Acts.provides("tck-cancel") && !Behaviors::None.provides("tck-cancel"));
    }

    #[test]
    fn follow_ups_come_from_the_contract_or_the_map() {
        let req = vec!["tck-multi-turn".to_owned()];
        assert_eq!(Behaviors::Acts.follow_ups(&req).again.as_deref(), Some("more detail"));
        let m = BehaviorMap::parse("m", "behaviors:\n  tck-multi-turn: {text: t, followup: f}\n").unwrap();
        let f = Behaviors::Map(m).follow_ups(&req);
        assert_eq!((f.followup.as_deref(), f.again), (Some("f"), None));
    }
}

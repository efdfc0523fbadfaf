//! The scripted agent's behaviour as data: scenarios loaded from `mock-peer/scenarios/*.json`
//! (built in) and from a user directory, selected by message prefix (ACTS §11, a2a-tck message ids).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use crate::protocol::{Message, Part, PartContent, TaskState};

/// Scenario files compiled into the binary.
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_scenarios.rs"));

/// Name of the scenario used when no prefix matches.
pub const DEFAULT_SCENARIO: &str = "echo";

/// One thing the scripted agent does.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Step {
    /// Move the task to `state`, optionally with an agent status message.
    Status {
        state: TaskState,
        /// Text of the agent's status message (templated).
        #[serde(default)]
        text: Option<String>,
    },
    /// Emit an artifact (or a chunk of one).
    #[serde(rename_all = "camelCase")]
    Artifact {
        /// Artifact id; chunks of one artifact share it. Defaults to a generated id.
        #[serde(default)]
        artifact_id: Option<String>,
        #[serde(default)]
        name: Option<String>,
        /// Parts (text is templated).
        parts: Vec<Part>,
        /// Append to the artifact with the same id.
        #[serde(default)]
        append: bool,
        #[serde(default)]
        last_chunk: bool,
    },
    /// Answer with a direct Message instead of a task; must be the only non-sleep step.
    Reply {
        /// Parts of the reply (text is templated).
        parts: Vec<Part>,
    },
    /// Wait before the next step (cancel interrupts the wait).
    Sleep { ms: u64 },
}

/// What to do with a follow-up message to a task this scenario left waiting for input.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Continuation {
    /// Applies when the follow-up's first text, trimmed, equals this (case-insensitive).
    #[serde(default)]
    pub when_text: Option<String>,
    pub steps: Vec<Step>,
}

/// A named behaviour of the scripted agent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// Unique name (usually the prefix itself).
    pub name: String,
    /// What the agent does, for people.
    pub description: String,
    /// Message text or messageId prefixes that select this scenario (longest match wins).
    #[serde(default)]
    pub prefixes: Vec<String>,
    /// Steps run for the first message.
    pub steps: Vec<Step>,
    /// Rules for follow-up messages while the task is interrupted; first match wins.
    #[serde(default)]
    pub continuations: Vec<Continuation>,
}

/// A scenario file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// Not JSON of the scenario shape.
    #[error("scenario {file}: {source}")]
    Parse { file: String, source: serde_json::Error },
    /// Parsed but inconsistent.
    #[error("scenario {file}: {reason}")]
    Invalid { file: String, reason: String },
    #[error("scenario directory {dir}: {source}")]
    Io { dir: String, source: std::io::Error },
}

impl Scenario {
    /// The reply parts, if this scenario answers with a Message rather than a task.
    pub fn message_reply(&self) -> Option<&[Part]> {
        self.steps.iter().find_map(|s| match s {
            Step::Reply { parts } => Some(parts.as_slice()),
            _ => None,
        })
    }

    /// Total sleep before a message reply, in ms.
    pub fn reply_delay_ms(&self) -> u64 {
        self.steps
            .iter()
            .map(|s| match s {
                Step::Sleep { ms } => *ms,
                _ => 0,
            })
            .sum()
    }

    /// The first continuation whose `whenText` equals the follow-up's first text (trimmed, without
    /// case); with `catch_all`, one without `whenText` also matches.
    pub fn continuation_for(&self, msg: &Message, catch_all: bool) -> Option<&Continuation> {
        let text = msg.first_text().unwrap_or("").trim();
        self.continuations.iter().find(|c| match &c.when_text {
            Some(w) => w.eq_ignore_ascii_case(text),
            None => catch_all,
        })
    }

    fn validate(&self, file: &str) -> Result<(), ScenarioError> {
        let invalid = |reason: String| ScenarioError::Invalid { file: file.to_owned(), reason };
        if self.name.trim().is_empty() {
            return Err(invalid("`name` is empty".into()));
        }
        let replies = self.steps.iter().filter(|s| matches!(s, Step::Reply { .. })).count();
        let task_steps = self.steps.iter().filter(|s| !matches!(s, Step::Reply { .. } | Step::Sleep { .. })).count();
        if replies > 1 || (replies == 1 && task_steps > 0) {
            return Err(invalid("a `reply` step must be the only step besides `sleep`".into()));
        }
        if replies == 0 && task_steps == 0 {
            return Err(invalid("`steps` must contain a status, artifact or reply step".into()));
        }
        for steps in std::iter::once(&self.steps).chain(self.continuations.iter().map(|c| &c.steps)) {
            let mut terminal_seen = false;
            for step in steps {
                if terminal_seen && !matches!(step, Step::Sleep { .. }) {
                    return Err(invalid("no step may follow a terminal state".into()));
                }
                match step {
                    Step::Status { state, .. } => {
                        if matches!(state, TaskState::Unspecified | TaskState::Submitted) {
                            return Err(invalid(format!(
                                "{state} cannot be a scripted step (SUBMITTED is only ever the initial state)"
                            )));
                        }
                        terminal_seen = state.is_terminal();
                    }
                    Step::Artifact { parts, .. } | Step::Reply { parts } if parts.is_empty() => {
                        return Err(invalid("artifact and reply steps need at least one part".into()));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

/// Fills `{{input}}`, `{{taskId}}` and `{{contextId}}` in text parts.
pub fn render_parts(parts: &[Part], vars: &TemplateVars<'_>) -> Vec<Part> {
    parts
        .iter()
        .map(|p| match &p.content {
            PartContent::Text(t) => Part { content: PartContent::Text(vars.render(t)), ..p.clone() },
            _ => p.clone(),
        })
        .collect()
}

/// Values available to scenario templates.
#[derive(Debug, Clone, Copy)]
pub struct TemplateVars<'a> {
    /// The first text part of the incoming message.
    pub input: &'a str,
    /// The task id (empty for message replies).
    pub task_id: &'a str,
    pub context_id: &'a str,
}

impl TemplateVars<'_> {
    /// `s` with `{{input}}`, `{{taskId}}` and `{{contextId}}` filled in, in one pass: a value that
    /// itself reads like a placeholder (an input of `{{taskId}}`) is echoed as it is.
    pub fn render(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len() + self.input.len());
        let mut rest = s;
        while let Some(at) = rest.find("{{") {
            out.push_str(&rest[..at]);
            rest = &rest[at..];
            let filled = [("{{input}}", self.input), ("{{taskId}}", self.task_id), ("{{contextId}}", self.context_id)]
                .into_iter()
                .find(|(name, _)| rest.starts_with(name));
            match filled {
                Some((name, value)) => {
                    out.push_str(value);
                    rest = &rest[name.len()..];
                }
                None => {
                    out.push_str("{{");
                    rest = &rest[2..];
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// All known scenarios, selected by prefix.
#[derive(Debug, Clone)]
pub struct ScenarioBook {
    by_name: BTreeMap<String, Arc<Scenario>>,
    /// What a message no prefix selects runs ([`DEFAULT_SCENARIO`] unless set).
    default: String,
}

impl ScenarioBook {
    pub fn builtin() -> Result<Self, ScenarioError> {
        let mut book = ScenarioBook { by_name: BTreeMap::new(), default: DEFAULT_SCENARIO.to_owned() };
        for (file, text) in BUILTIN {
            book.add_text(file, text)?;
        }
        if !book.by_name.contains_key(DEFAULT_SCENARIO) {
            return Err(ScenarioError::Invalid {
                file: "mock-peer/scenarios".into(),
                reason: format!("the default scenario {DEFAULT_SCENARIO:?} is missing"),
            });
        }
        Ok(book)
    }

    /// Adds (or replaces, by name) every `*.json` scenario in `dir`.
    pub fn add_dir(&mut self, dir: &Path) -> Result<usize, ScenarioError> {
        let io = |source| ScenarioError::Io { dir: dir.display().to_string(), source };
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(io)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for path in &files {
            let text = std::fs::read_to_string(path).map_err(io)?;
            self.add_text(&path.display().to_string(), &text)?;
        }
        Ok(files.len())
    }

    fn add_text(&mut self, file: &str, text: &str) -> Result<(), ScenarioError> {
        let sc: Scenario =
            serde_json::from_str(text).map_err(|source| ScenarioError::Parse { file: file.to_owned(), source })?;
        sc.validate(file)?;
        self.by_name.insert(sc.name.clone(), Arc::new(sc));
        Ok(())
    }

    /// Every scenario, by name.
    pub fn all(&self) -> impl Iterator<Item = &Arc<Scenario>> {
        self.by_name.values()
    }

    /// The scenario for an incoming message: the longest prefix matching its first text part or its
    /// messageId, else the default.
    pub fn select(&self, msg: &Message) -> Arc<Scenario> {
        self.select_prefixed(msg).unwrap_or_else(|| self.default_scenario())
    }

    /// The scenario whose prefix is the longest match of the message's first text part or its
    /// messageId, if any.
    pub fn select_prefixed(&self, msg: &Message) -> Option<Arc<Scenario>> {
        let text = msg.first_text().unwrap_or("").trim_start();
        let mut best: Option<(&Arc<Scenario>, usize)> = None;
        for sc in self.by_name.values() {
            for p in &sc.prefixes {
                let hit = text.starts_with(p.as_str()) || msg.message_id.starts_with(p.as_str());
                if hit && best.is_none_or(|(_, len)| p.len() > len) {
                    best = Some((sc, p.len()));
                }
            }
        }
        best.map(|(sc, _)| sc.clone())
    }

    /// What a follow-up message to a task that `current` left interrupted runs, and the scenario the
    /// task follows from then on. The follow-up steers the conversation:
    ///
    /// 1. a continuation of `current` whose `whenText` equals the follow-up's text;
    /// 2. with `steer`, the steps of the scenario the follow-up selects by prefix (text or
    ///    messageId), which the task follows from then on: a `tck-input-required…` follow-up keeps
    ///    the task INPUT_REQUIRED, a `tck-complete-task…` one completes it (scenarios that answer
    ///    with a Message cannot continue a task and are passed over);
    /// 3. the continuation of `current` without `whenText`;
    /// 4. the default scenario's steps.
    pub fn continuation(&self, current: &Arc<Scenario>, msg: &Message, steer: bool) -> (Arc<Scenario>, Vec<Step>) {
        if let Some(c) = current.continuation_for(msg, false) {
            return (current.clone(), c.steps.clone());
        }
        if let Some(sc) = self.select_prefixed(msg).filter(|sc| steer && sc.message_reply().is_none()) {
            let steps = sc.steps.clone();
            return (sc, steps);
        }
        match current.continuation_for(msg, true) {
            Some(c) => (current.clone(), c.steps.clone()),
            None => (current.clone(), self.default_scenario().steps.clone()),
        }
    }

    pub fn default_scenario(&self) -> Arc<Scenario> {
        self.by_name[&self.default].clone()
    }

    /// Makes `name` what a message no prefix selects runs (a client scenario's agent that always
    /// asks for input, say).
    pub fn set_default(&mut self, name: &str) -> Result<(), ScenarioError> {
        if !self.by_name.contains_key(name) {
            return Err(ScenarioError::Invalid {
                file: "--default-scenario".into(),
                reason: format!("no scenario is named {name:?}"),
            });
        }
        self.default = name.to_owned();
        Ok(())
    }

    /// Makes every `sleep` step, continuations included, last `percent` % of its scripted length.
    pub fn scale_sleeps(&mut self, percent: u32) {
        if percent == 100 {
            return;
        }
        let scale = |steps: &mut Vec<Step>| {
            for step in steps {
                if let Step::Sleep { ms } = step {
                    *ms = ms.saturating_mul(u64::from(percent)) / 100;
                }
            }
        };
        for sc in self.by_name.values_mut() {
            let sc = Arc::make_mut(sc);
            scale(&mut sc.steps);
            for c in &mut sc.continuations {
                scale(&mut c.steps);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Role;

    fn follow_up(message_id: &str, text: &str) -> Message {
        Message {
            message_id: message_id.into(),
            context_id: String::new(),
            task_id: "t".into(),
            role: Role::User,
            parts: vec![Part::text(text)],
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        }
    }

    #[test]
    fn templates_fill_each_placeholder_once() {
        let vars = TemplateVars { input: "{{taskId}} hi", task_id: "t-1", context_id: "c-1" };
        assert_eq!(vars.render("{{input}} / {{taskId}} / {{contextId}}"), "{{taskId}} hi / t-1 / c-1");
        assert_eq!(vars.render("no placeholder"), "no placeholder");
        assert_eq!(vars.render("{{unknown}} {{ {{input}}"), "{{unknown}} {{ {{taskId}} hi");
        assert_eq!(vars.render("tail {{"), "tail {{");
    }

    #[test]
    fn sleeps_scale_everywhere_and_nothing_else_does() {
        let mut book = ScenarioBook::builtin().unwrap();
        let sleeps = |b: &ScenarioBook| -> Vec<u64> {
            b.all()
                .flat_map(|sc| sc.steps.iter().chain(sc.continuations.iter().flat_map(|c| c.steps.iter())))
                .filter_map(|s| match s {
                    Step::Sleep { ms } => Some(*ms),
                    _ => None,
                })
                .collect()
        };
        let before = sleeps(&book);
        let steps_before: usize = book.all().map(|sc| sc.steps.len()).sum();
        assert!(before.contains(&1500), "tck-long-running sleeps 1.5 s: {before:?}");
        book.scale_sleeps(33);
        assert_eq!(sleeps(&book), before.iter().map(|ms| ms * 33 / 100).collect::<Vec<_>>());
        assert_eq!(book.all().map(|sc| sc.steps.len()).sum::<usize>(), steps_before);
        let mut same = ScenarioBook::builtin().unwrap();
        same.scale_sleeps(100);
        assert_eq!(sleeps(&same), before);
    }

    fn last_state(steps: &[Step]) -> Option<TaskState> {
        steps.iter().rev().find_map(|s| match s {
            Step::Status { state, .. } => Some(*state),
            _ => None,
        })
    }

    #[test]
    fn a_follow_up_is_steered_by_its_message_id_prefix() {
        let book = ScenarioBook::builtin().unwrap();
        let current = book.select(&follow_up("tck-input-required-0001", "start"));
        let (sc, steps) = book.continuation(&current, &follow_up("tck-input-required-0002", "more"), true);
        assert_eq!(sc.name, "tck-input-required");
        assert_eq!(last_state(&steps), Some(TaskState::InputRequired));
        let (sc, steps) = book.continuation(&current, &follow_up("tck-complete-task-0003", "end"), true);
        assert_eq!(sc.name, "tck-complete-task");
        assert_eq!(last_state(&steps), Some(TaskState::Completed));
    }

    #[test]
    fn scenario_data_still_decides_plain_follow_ups() {
        let book = ScenarioBook::builtin().unwrap();
        let multi = book.select(&follow_up("m-1", "tck-multi-turn start"));
        let (_, steps) = book.continuation(&multi, &follow_up("m-2", "DONE"), true);
        assert_eq!(last_state(&steps), Some(TaskState::Completed));
        let (sc, steps) = book.continuation(&multi, &follow_up("m-3", "more detail"), true);
        assert_eq!(sc.name, "tck-multi-turn");
        assert_eq!(last_state(&steps), Some(TaskState::InputRequired));
        // A whenText match wins over a prefix; a Message-reply scenario cannot continue a task.
        let (_, steps) = book.continuation(&multi, &follow_up("tck-input-required-1", "done"), true);
        assert_eq!(last_state(&steps), Some(TaskState::Completed));
        let (sc, _) = book.continuation(&multi, &follow_up("tck-message-response-1", "x"), true);
        assert_eq!(sc.name, "tck-multi-turn");
        // Without steering (no behaviours), the prefix is ignored.
        let (sc, _) = book.continuation(&multi, &follow_up("tck-complete-task-1", "x"), false);
        assert_eq!(sc.name, "tck-multi-turn");
    }
}

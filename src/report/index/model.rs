//! The index of a registry run (`index.json`, schema `reports/index.schema.json`): one entry per
//! agent with its verdict, its counts, its top root causes and a link to its own report; a summary;
//! and the requirements that fail on the most agents.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::report::json::now_rfc3339;
use crate::report::model::{Level, Outcome, Verdict};

/// Version of the index format (`schema_version`, and the last segment of the schema's `$id`).
pub const INDEX_SCHEMA_VERSION: &str = "1";

/// The levels `counts` is keyed by, in report order.
pub const LEVELS: [Level; 4] = [Level::Must, Level::Should, Level::May, Level::Info];

/// The index of a registry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// [`INDEX_SCHEMA_VERSION`].
    pub schema_version: String,
    /// `a2a-conform`.
    pub tool: String,
    pub tool_version: String,
    /// When the index was built, RFC 3339 UTC, whole seconds.
    pub generated_at: String,
    /// The slice of the registry this index covers; absent for the whole (or a merged) registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Sorted by name.
    pub agents: Vec<AgentEntry>,
    pub summary: IndexSummary,
    /// The scored checks that fail or warn on at least one agent: most agents first, then MUST
    /// before SHOULD before MAY, then by id.
    pub requirements: Vec<RequirementStat>,
}

/// Shard K of N of a registry split over N jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// K, 1-based.
    pub index: u32,
    /// N.
    pub count: u32,
}

/// How many agents ended how.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IndexSummary {
    pub agents: usize,
    pub conformant: usize,
    pub non_conformant: usize,
    pub inconclusive: usize,
    /// Agents the kit could not run at all ([`AgentStatus::Error`]).
    pub errored: usize,
    /// Agents with at least one check that ended differently across identical runs.
    pub flaky_agents: usize,
    /// The agents' run times added up (agents may run concurrently: this is not wall time).
    pub duration_ms: u64,
}

/// How one agent ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// Its run's verdict was conformant (exit 0).
    Conformant,
    /// A scored check failed (exit 1).
    NonConformant,
    /// Its run ended without a verdict on the agent: a scored check could not be decided, the agent
    /// was unreachable, or no scored check was graded (exit 3, or 2 for a run that graded nothing).
    Inconclusive,
    /// The kit could not run the agent at all (a bad target entry, a missing environment variable):
    /// there is no report.
    Error,
}

impl AgentStatus {
    /// Every status, in the order the page lists them.
    pub const ALL: [AgentStatus; 4] =
        [AgentStatus::Conformant, AgentStatus::NonConformant, AgentStatus::Inconclusive, AgentStatus::Error];

    /// Snake-case name, as in `index.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Conformant => "conformant",
            AgentStatus::NonConformant => "non_conformant",
            AgentStatus::Inconclusive => "inconclusive",
            AgentStatus::Error => "error",
        }
    }

    /// The status of an agent whose run ended with `verdict`. A run that graded no scored check
    /// (`usage_error`) says nothing about the agent either way: inconclusive.
    pub fn of(verdict: Verdict) -> AgentStatus {
        match verdict {
            Verdict::Conformant => AgentStatus::Conformant,
            Verdict::NonConformant => AgentStatus::NonConformant,
            Verdict::Inconclusive | Verdict::UsageError => AgentStatus::Inconclusive,
        }
    }
}

/// One agent of the registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentEntry {
    /// The agent's name in the registry; also its folder under the index (`<name>/report.json`).
    pub name: String,
    pub url: String,
    pub status: AgentStatus,
    /// The exit status of the agent's own run (2 for an agent the kit could not run).
    pub exit_code: i32,
    /// Outcomes of the agent's scored checks by level (`must`, `should`, `may`, `info`: every key
    /// always present): the results the verdict rests on.
    pub counts: BTreeMap<String, LevelCounts>,
    /// The top 3 root causes among scored findings, most severe first.
    pub causes: Vec<CauseEntry>,
    /// Ids of the scored checks that ended fail or warn, in run order.
    pub failing: Vec<String>,
    /// The same checks with their title, level and outcome.
    pub failing_checks: Vec<FailingCheck>,
    pub duration_ms: u64,
    /// The agent's report, relative to the index: `<name>/report.html` when there is one, else
    /// `<name>/report.json`; absent when neither was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// Why the kit could not run the agent ([`AgentStatus::Error`] only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Free-form labels from the registry (owner, team, tier ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// How many identical runs the entry stands for (1 unless the agent was run repeatedly).
    pub runs: u32,
    /// Checks that ended differently across those runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<FlakyCheck>,
}

/// Outcome counts of one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LevelCounts {
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub skip: usize,
    pub error: usize,
    pub info: usize,
}

impl LevelCounts {
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.pass += 1,
            Outcome::Fail => self.fail += 1,
            Outcome::Warn => self.warn += 1,
            Outcome::Skip => self.skip += 1,
            Outcome::Error => self.error += 1,
            Outcome::Info => self.info += 1,
        }
    }
}

/// One root cause of an agent's findings, as its report tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseEntry {
    /// The cause's id in the agent's report (`C-` and 12 hex digits).
    pub id: String,
    pub headline: String,
    pub level: Level,
    /// The check whose failure tells the story.
    pub root: String,
    /// How many checks it decides: its findings and the checks waiting on them.
    pub decides: usize,
}

/// A scored check that ended fail or warn on an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailingCheck {
    pub id: String,
    pub title: String,
    pub level: Level,
    /// `fail` or `warn`.
    pub outcome: Outcome,
}

/// A check that ended differently across identical runs of one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlakyCheck {
    pub id: String,
    /// Outcome name → how many runs ended so.
    pub outcomes: BTreeMap<String, u32>,
}

/// A scored check that fails or warns on at least one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequirementStat {
    pub id: String,
    pub title: String,
    /// The highest level it was graded at.
    pub level: Level,
    /// How many agents it fails or warns on (the length of `agents`).
    pub agent_count: usize,
    /// Of those, how many it failed on.
    pub fail: usize,
    /// And how many it warned on.
    pub warn: usize,
    /// Their names, sorted.
    pub agents: Vec<String>,
}

/// A name that is safe as one folder under the index: not empty, not `.` or `..`, no path
/// separator, no control character.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.chars().any(|c| c == '/' || c == '\\' || c.is_control())
}

/// Counts with every level present and zero.
pub fn empty_counts() -> BTreeMap<String, LevelCounts> {
    LEVELS.iter().map(|l| (l.as_str().to_owned(), LevelCounts::default())).collect()
}

impl AgentEntry {
    /// Scored fails over every level.
    pub fn fails(&self) -> usize {
        self.counts.values().map(|c| c.fail).sum()
    }

    /// Scored warnings over every level.
    pub fn warns(&self) -> usize {
        self.counts.values().map(|c| c.warn).sum()
    }
}

impl Index {
    /// The index of `agents` (sorted here by name), stamped now.
    pub fn build(mut agents: Vec<AgentEntry>, shard: Option<Shard>) -> Index {
        agents.sort_by(|a, b| a.name.cmp(&b.name));
        let mut summary = IndexSummary { agents: agents.len(), ..IndexSummary::default() };
        for a in &agents {
            match a.status {
                AgentStatus::Conformant => summary.conformant += 1,
                AgentStatus::NonConformant => summary.non_conformant += 1,
                AgentStatus::Inconclusive => summary.inconclusive += 1,
                AgentStatus::Error => summary.errored += 1,
            }
            summary.flaky_agents += usize::from(!a.flaky.is_empty());
            summary.duration_ms += a.duration_ms;
        }
        Index {
            schema_version: INDEX_SCHEMA_VERSION.into(),
            tool: "a2a-conform".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            generated_at: now_rfc3339(),
            shard,
            requirements: requirements(&agents),
            summary,
            agents,
        }
    }

    /// The index without what differs between two runs with the same verdicts: `generated_at`,
    /// every duration and the shard. Two shards merged compare equal to the whole run.
    pub fn comparable(&self) -> Value {
        // Plain data with string keys always serializes.
        let mut v = serde_json::to_value(self).expect("the index serializes");
        if let Some(o) = v.as_object_mut() {
            o.remove("generated_at");
            o.remove("shard");
        }
        if let Some(s) = v.get_mut("summary").and_then(Value::as_object_mut) {
            s.remove("duration_ms");
        }
        for a in v.get_mut("agents").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(a) = a.as_object_mut() {
                a.remove("duration_ms");
            }
        }
        v
    }

    /// The entry of agent `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentEntry> {
        self.agents.iter().find(|a| a.name == name)
    }
}

/// The scored checks failing or warning on some agent of `agents` (sorted by name).
fn requirements(agents: &[AgentEntry]) -> Vec<RequirementStat> {
    let mut by_id: BTreeMap<&str, RequirementStat> = BTreeMap::new();
    for a in agents {
        for c in &a.failing_checks {
            let stat = by_id.entry(c.id.as_str()).or_insert_with(|| RequirementStat {
                id: c.id.clone(),
                title: c.title.clone(),
                level: c.level,
                agent_count: 0,
                fail: 0,
                warn: 0,
                agents: Vec::new(),
            });
            if stat.agents.last() == Some(&a.name) {
                continue;
            }
            stat.level = stat.level.min(c.level);
            stat.agent_count += 1;
            match c.outcome {
                Outcome::Fail => stat.fail += 1,
                _ => stat.warn += 1,
            }
            stat.agents.push(a.name.clone());
        }
    }
    let mut out: Vec<RequirementStat> = by_id.into_values().collect();
    out.sort_by(|a, b| b.agent_count.cmp(&a.agent_count).then(a.level.cmp(&b.level)).then(a.id.cmp(&b.id)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::index::entry::entry_failed;

    fn failing(id: &str, level: Level, outcome: Outcome) -> FailingCheck {
        FailingCheck { id: id.into(), title: format!("title of {id}"), level, outcome }
    }

    fn agent(name: &str, status: AgentStatus, checks: Vec<FailingCheck>, ms: u64) -> AgentEntry {
        let mut e = entry_failed(name, &format!("http://{name}"), String::new(), ms);
        e.status = status;
        e.error = None;
        e.runs = 1;
        for c in &checks {
            e.counts.get_mut(c.level.as_str()).unwrap().add(c.outcome);
        }
        e.failing = checks.iter().map(|c| c.id.clone()).collect();
        e.failing_checks = checks;
        e
    }

    fn agents() -> Vec<AgentEntry> {
        let mut flaky =
            agent("delta", AgentStatus::Conformant, vec![failing("CT-001", Level::Should, Outcome::Warn)], 4);
        flaky.flaky = vec![FlakyCheck { id: "CT-001".into(), outcomes: BTreeMap::from([("pass".into(), 1)]) }];
        vec![
            agent(
                "charlie",
                AgentStatus::NonConformant,
                vec![failing("SEND-001", Level::Must, Outcome::Fail), failing("CT-001", Level::Should, Outcome::Warn)],
                3,
            ),
            flaky,
            agent("alpha", AgentStatus::NonConformant, vec![failing("SEND-001", Level::Must, Outcome::Fail)], 1),
            agent("bravo", AgentStatus::Inconclusive, vec![failing("LIST-001", Level::Must, Outcome::Fail)], 2),
            entry_failed("echo", "http://echo", "TOKEN is not set".into(), 0),
            agent("foxtrot", AgentStatus::Conformant, vec![failing("AAA-001", Level::Should, Outcome::Warn)], 5),
        ]
    }

    #[test]
    fn build_sorts_the_agents_and_sums_them_up() {
        let index = Index::build(agents(), Some(Shard { index: 2, count: 3 }));
        let names: Vec<&str> = index.agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]);
        assert_eq!(
            index.summary,
            IndexSummary {
                agents: 6,
                conformant: 2,
                non_conformant: 2,
                inconclusive: 1,
                errored: 1,
                flaky_agents: 1,
                duration_ms: 15
            }
        );
        assert_eq!(index.schema_version, INDEX_SCHEMA_VERSION);
        assert_eq!(index.shard, Some(Shard { index: 2, count: 3 }));
    }

    #[test]
    fn requirements_come_most_agents_first_then_by_level_then_by_id() {
        let index = Index::build(agents(), None);
        let ids: Vec<(&str, usize)> = index.requirements.iter().map(|r| (r.id.as_str(), r.agent_count)).collect();
        // SEND-001 and CT-001 fail or warn on two agents each: the MUST first. Of the ones on one
        // agent, the MUST before the SHOULD, though its id sorts later.
        assert_eq!(ids, [("SEND-001", 2), ("CT-001", 2), ("LIST-001", 1), ("AAA-001", 1)]);
        let send = &index.requirements[0];
        assert_eq!((send.fail, send.warn, send.level), (2, 0, Level::Must));
        assert_eq!(send.agents, ["alpha", "charlie"]);
        assert_eq!(send.title, "title of SEND-001");
        assert_eq!((index.requirements[1].fail, index.requirements[1].warn), (0, 2));
    }

    #[test]
    fn comparable_drops_the_times_and_the_shard_only() {
        let a = Index::build(agents(), Some(Shard { index: 1, count: 2 }));
        let mut slower = agents();
        for e in &mut slower {
            e.duration_ms += 1000;
        }
        let mut b = Index::build(slower, None);
        b.generated_at = "1999-01-01T00:00:00Z".into();
        assert_ne!(a, b);
        assert_eq!(a.comparable(), b.comparable());
        let c = a.comparable();
        assert!(c.get("generated_at").is_none() && c.get("shard").is_none());
        assert!(c["summary"].get("duration_ms").is_none());
        assert!(c["agents"].as_array().unwrap().iter().all(|e| e.get("duration_ms").is_none()));
        assert_eq!(c["summary"]["agents"], 6);
        // A verdict that differs still shows.
        let mut other = agents();
        other[0].status = AgentStatus::Conformant;
        assert_ne!(Index::build(other, None).comparable(), c);
    }

    #[test]
    fn names_that_are_not_one_folder_are_refused() {
        for bad in ["", ".", "..", "a/b", "a\\b", "../x", "a\nb"] {
            assert!(!valid_name(bad), "{bad:?}");
        }
        for good in ["alpha", "agent.example.com", "Team A (prod)", ".hidden", "ü"] {
            assert!(valid_name(good), "{good:?}");
        }
    }

    #[test]
    fn the_index_round_trips_through_json() {
        let index = Index::build(agents(), Some(Shard { index: 1, count: 1 }));
        let text = serde_json::to_string(&index).unwrap();
        assert_eq!(serde_json::from_str::<Index>(&text).unwrap(), index);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["agents"][4]["status"], "error");
        assert_eq!(v["agents"][0]["status"], "non_conformant");
    }
}

//! How much a verdict rests on: per level, how many scored checks applied to the agent and how many
//! of them got a verdict, and the rest by what would grade them. "Conformant over 136 of 206 MUST
//! checks; 70 not graded: 45 need a behaviour map (--behaviors), ..." is another statement than
//! "conformant" over all 206.

use serde::{Deserialize, Serialize};

use super::model::{CheckResult, Level, Outcome, SkipReason, Verdict};

/// Whose run the figures are of: what would grade a check differs (a behaviour map or credentials
/// for an agent, a scenario for a client).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Agent,
    Client,
}

impl Peer {
    /// The side of a run by its report's `run.mode` (`client` for client-check).
    pub fn of_mode(mode: &str) -> Peer {
        if mode == "client" { Peer::Client } else { Peer::Agent }
    }
}

/// The figures of every level (`report.json`'s `verdict.graded`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Graded {
    pub must: LevelGraded,
    pub should: LevelGraded,
    pub may: LevelGraded,
    pub info: LevelGraded,
}

/// The figures of one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LevelGraded {
    /// Scored checks that apply to this agent: selected, and about what its card declares.
    pub applicable: u64,
    /// Of those, the ones with a verdict: pass, fail, warn or info.
    pub graded: u64,
    /// The others, by what would grade them.
    pub not_graded: NotGraded,
}

/// Applicable checks that got no verdict, by why; each names what would grade it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NotGraded {
    /// A behaviour the agent was not shown to have: a behaviour map (`--behaviors`).
    pub behavior_not_available: u64,
    /// A mapped behaviour that did not happen: a map whose behaviours happen.
    pub precondition_failed: u64,
    /// Credentials, or a second caller's (`--header`, `--header-b`).
    pub credentials_not_supplied: u64,
    /// A check they build on failed: fixing it.
    pub depends_on_failed: u64,
    /// The kit could not decide (an agent that stopped answering, bad suite data).
    pub error: u64,
}

impl NotGraded {
    pub fn total(&self) -> u64 {
        self.behavior_not_available
            + self.precondition_failed
            + self.credentials_not_supplied
            + self.depends_on_failed
            + self.error
    }

    /// Each nonzero count with what it says: `45 need a behaviour map (--behaviors)` of an agent,
    /// `2 need a scenario (--scenario)` of a client, whose run has no behaviour map.
    pub fn phrases(&self, peer: Peer) -> Vec<String> {
        let (behaviour, mapped, credentials) = match peer {
            Peer::Agent => (
                "a behaviour map (--behaviors)",
                "a mapped behaviour that happens (--behaviors)",
                "credentials (--header, --header-b)",
            ),
            Peer::Client => ("a scenario (--scenario)", "a scenario the client follows (--scenario)", "credentials"),
        };
        [
            (self.behavior_not_available, "need", behaviour),
            (self.precondition_failed, "need", mapped),
            (self.credentials_not_supplied, "need", credentials),
            (self.depends_on_failed, "wait", "on a failed check"),
            (self.error, "could", "not be decided"),
        ]
        .into_iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, verb, what)| {
            // One check needs, many need; "could" is both.
            let verb = if n == 1 && verb != "could" { format!("{verb}s") } else { verb.to_owned() };
            format!("{n} {verb} {what}")
        })
        .collect()
    }

    fn add(&mut self, other: &NotGraded) {
        self.behavior_not_available += other.behavior_not_available;
        self.precondition_failed += other.precondition_failed;
        self.credentials_not_supplied += other.credentials_not_supplied;
        self.depends_on_failed += other.depends_on_failed;
        self.error += other.error;
    }
}

impl Graded {
    pub fn get(&self, level: Level) -> &LevelGraded {
        match level {
            Level::Must => &self.must,
            Level::Should => &self.should,
            Level::May => &self.may,
            Level::Info => &self.info,
        }
    }

    fn get_mut(&mut self, level: Level) -> &mut LevelGraded {
        match level {
            Level::Must => &mut self.must,
            Level::Should => &mut self.should,
            Level::May => &mut self.may,
            Level::Info => &mut self.info,
        }
    }

    /// The figures of `results`. Unscored checks never change the verdict and are not counted; a
    /// check whose capability the card does not declare, that a freedom the agent took leaves
    /// nothing to judge, whose profile was not selected or that was filtered out does not apply.
    pub fn of(results: &[CheckResult]) -> Graded {
        let mut g = Graded::default();
        for r in results.iter().filter(|r| r.scored) {
            let level = g.get_mut(r.level);
            let not = &mut level.not_graded;
            match (r.outcome, r.skip_reason) {
                (Outcome::Pass | Outcome::Fail | Outcome::Warn | Outcome::Info, _) => level.graded += 1,
                (Outcome::Error, _) => not.error += 1,
                (Outcome::Skip, Some(SkipReason::BehaviorNotAvailable)) => not.behavior_not_available += 1,
                (Outcome::Skip, Some(SkipReason::PreconditionFailed)) => not.precondition_failed += 1,
                (Outcome::Skip, Some(SkipReason::CredentialsNotSupplied)) => not.credentials_not_supplied += 1,
                (Outcome::Skip, Some(SkipReason::DependsOnFailed)) => not.depends_on_failed += 1,
                (Outcome::Skip, _) => continue,
            }
            level.applicable += 1;
        }
        g
    }

    /// What the verdict rests on, after its word: `over 136 of 206 MUST checks; 70 not graded: 45
    /// need a behaviour map (--behaviors), 20 need credentials (--header, --header-b), 5 wait on a
    /// failed check`. SHOULD counts too under `--strict`, where its violations fail. Empty when
    /// no scored check applied (a run that never got to its checks).
    pub fn statement(&self, strict: bool, peer: Peer) -> String {
        let levels: &[Level] = if strict { &[Level::Must, Level::Should] } else { &[Level::Must] };
        let counted: Vec<(Level, &LevelGraded)> =
            levels.iter().map(|l| (*l, self.get(*l))).filter(|(_, g)| g.applicable > 0).collect();
        if counted.is_empty() {
            return String::new();
        }
        let over: Vec<String> = counted
            .iter()
            .map(|(l, g)| {
                let name = l.as_str().to_uppercase();
                if g.graded == g.applicable && g.applicable == 1 {
                    format!("the 1 {name}")
                } else if g.graded == g.applicable {
                    format!("all {} {name}", g.applicable)
                } else {
                    format!("{} of {} {name}", g.graded, g.applicable)
                }
            })
            .collect();
        let mut not = NotGraded::default();
        for (_, g) in &counted {
            not.add(&g.not_graded);
        }
        let noun = if counted.len() == 1 && counted[0].1.applicable == 1 { "check" } else { "checks" };
        let mut s = format!("over {} {noun}", over.join(" and "));
        if not.total() > 0 {
            s.push_str(&format!("; {} not graded: {}", not.total(), not.phrases(peer).join(", ")));
        }
        s
    }
}

/// The verdict in words with what it rests on: `conformant over 136 of 206 MUST checks; ...`.
pub fn verdict_line(status: Verdict, graded: &Graded, strict: bool, peer: Peer) -> String {
    let word = match status {
        Verdict::Conformant => "conformant",
        Verdict::NonConformant => "non-conformant",
        Verdict::UsageError => "usage error",
        Verdict::Inconclusive => "inconclusive",
    };
    let over = graded.statement(strict, peer);
    if over.is_empty() { word.to_owned() } else { format!("{word} {over}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::CheckMeta;

    fn results() -> Vec<CheckResult> {
        let skip = |id: &str, reason| CheckResult::skipped(&CheckMeta::sample(id), reason, "why");
        let mut v = Vec::new();
        for i in 0..136 {
            v.push(CheckResult::new(&CheckMeta::sample(&format!("P{i}")), Outcome::Pass));
        }
        for i in 0..45 {
            v.push(skip(&format!("B{i}"), SkipReason::BehaviorNotAvailable));
        }
        for i in 0..20 {
            v.push(skip(&format!("C{i}"), SkipReason::CredentialsNotSupplied));
        }
        for i in 0..5 {
            v.push(skip(&format!("D{i}"), SkipReason::DependsOnFailed));
        }
        // Not applicable, and not scored: neither counts.
        v.push(skip("N", SkipReason::CapabilityNotDeclared));
        v.push(skip("T", SkipReason::FreedomTaken));
        v.push(skip("F", SkipReason::Filtered));
        v.push(CheckResult { scored: false, ..CheckResult::new(&CheckMeta::sample("U"), Outcome::Error) });
        v
    }

    #[test]
    fn the_verdict_says_how_much_was_graded() {
        let g = Graded::of(&results());
        assert_eq!((g.must.applicable, g.must.graded, g.must.not_graded.total()), (206, 136, 70));
        assert_eq!(
            verdict_line(Verdict::Conformant, &g, false, Peer::Agent),
            "conformant over 136 of 206 MUST checks; 70 not graded: 45 need a behaviour map (--behaviors), 20 need \
             credentials (--header, --header-b), 5 wait on a failed check"
        );
        let all = Graded::of(&results()[..136]);
        assert_eq!(verdict_line(Verdict::Conformant, &all, false, Peer::Agent), "conformant over all 136 MUST checks");
        assert_eq!(verdict_line(Verdict::UsageError, &Graded::default(), false, Peer::Agent), "usage error");
        // A client's run has no behaviour map: what grades its checks is a scenario.
        let client = verdict_line(Verdict::Conformant, &g, false, Peer::Client);
        assert!(client.contains("45 need a scenario (--scenario)") && !client.contains("behaviour"), "{client}");
    }

    #[test]
    fn strict_counts_should_too() {
        let mut v = results();
        v.push(CheckResult::new(&CheckMeta { level: Level::Should, ..CheckMeta::sample("S") }, Outcome::Warn));
        v.push(CheckResult {
            outcome: Outcome::Error,
            ..CheckResult::new(&CheckMeta { level: Level::Should, ..CheckMeta::sample("T") }, Outcome::Error)
        });
        let g = Graded::of(&v);
        assert_eq!(
            g.statement(true, Peer::Agent),
            "over 136 of 206 MUST and 1 of 2 SHOULD checks; 71 not graded: 45 need a behaviour map (--behaviors), \
             20 need credentials (--header, --header-b), 5 wait on a failed check, 1 could not be decided"
        );
    }
}

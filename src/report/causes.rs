//! Findings grouped by root cause (DESIGN "Verdicts": one broken prerequisite is one story, not forty
//! failures). A cause is a check whose failure explains others: the findings that share its
//! [`Fingerprint`] (the same error code and message, the same HTTP 500 text/plain, the same missing
//! field), and the checks left undecided (`depends_on_failed`) by any of them. Computed once, when the
//! report is built, and carried in `report.json`; the terminal view, the HTML page, the Markdown
//! summary and the verdict read them from there.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use super::diagnosis::{DIAGNOSED, DIAGNOSES, DIAGNOSIS, diagnosis, workaround_line};
use super::fingerprint::{Fingerprint, candidates, fingerprint, is_finding, same_story};
use super::headline;
use super::model::{CheckResult, Level, Outcome, SkipReason};

/// One root cause, as `report.json` carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    /// `C-` and 12 hex digits, derived from the root's id and the fingerprint: the same agent gives
    /// the same ids run after run.
    pub id: String,
    /// What the agent does wrong, in one line of plain words, with the keyword and section that
    /// make it wrong and how many checks it decides.
    pub headline: String,
    /// What one exchange showed, in one line (the code that came, the value that was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// The highest level among its findings.
    pub level: Level,
    /// The check whose failure tells the story.
    pub root: String,
    /// What its findings share; absent when the root's failure is its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// Every finding it explains, the root first, then in run order.
    pub findings: Vec<String>,
    /// The checks that wait on one of them (`depends_on_failed`), in run order.
    pub waiting: Vec<String>,
}

impl Cause {
    /// How many checks the cause decides: its findings and the checks waiting on them.
    pub fn decides(&self) -> usize {
        self.findings.len() + self.waiting.len()
    }
}

/// The root causes of `results` (in run order): MUST before SHOULD before MAY and info, then the
/// cause that decides the most checks, then run order of the roots.
pub fn of(results: &[CheckResult]) -> Vec<Cause> {
    let position: HashMap<&str, usize> = results.iter().enumerate().rev().map(|(i, r)| (r.id.as_str(), i)).collect();
    let is_diagnosis = |i: usize| DIAGNOSES.iter().any(|(d, _)| *d == results[i].id);

    // Findings by fingerprint; a diagnosis joins the cause of the check it explains.
    let findings: Vec<usize> = (0..results.len()).filter(|&i| is_finding(&results[i])).collect();
    // A check graded over a second binding (`ID[http+json]`) that fails as its JSON-RPC grading
    // does is the same requirement broken over both: one story, told by the first binding's cause.
    let twin_of = |i: usize| {
        let twin = binding_twin(&results[i].id)?;
        position.get(twin).copied().filter(|&t| is_finding(&results[t]) && same_story(&results[t], &results[i]))
    };
    let grouped: Vec<usize> = findings.iter().copied().filter(|&i| !is_diagnosis(i) && twin_of(i).is_none()).collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_print: Vec<Fingerprint> = Vec::new();
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    // A catch-all first seen in the exchanges of a check that waits on a finding was seen there
    // because of it: the finding links to every check that waits on it.
    let mut waited: HashMap<usize, Vec<Fingerprint>> = HashMap::new();
    for (j, r) in results.iter().enumerate() {
        if r.skip_reason == Some(SkipReason::DependsOnFailed)
            && let Some(cause) = waited_on(results, &position, j)
        {
            waited.entry(cause).or_default().push(Fingerprint::Waited { check: r.id.clone() });
        }
    }
    for (print, members) in shared(results, &grouped, &waited) {
        group_of.extend(members.iter().map(|&i| (i, groups.len())));
        groups.push(members);
        group_print.push(print);
    }
    for &i in &grouped {
        if group_of.contains_key(&i) {
            continue;
        }
        place(i, None, &mut groups, &mut group_of);
        group_print.push(fingerprint(&results[i]));
    }
    for &i in &findings {
        if let Some(g) = twin_of(i).and_then(|t| group_of.get(&t).copied())
            && !is_diagnosis(i)
        {
            place(i, Some(g), &mut groups, &mut group_of);
        }
    }
    for &i in findings.iter().filter(|&&i| is_diagnosis(i)) {
        let explained = DIAGNOSES.iter().find(|(d, _)| *d == results[i].id).map(|(_, t)| *t);
        let target = explained.and_then(|t| position.get(t)).and_then(|t| group_of.get(t)).copied();
        if target.is_none() {
            group_print.push(fingerprint(&results[i]));
        }
        place(i, target, &mut groups, &mut group_of);
    }

    // The checks that wait: each on the finding at the end of its chain of deferrals.
    let mut waiting: Vec<Vec<usize>> = vec![Vec::new(); groups.len()];
    let mut direct: HashMap<usize, usize> = HashMap::new();
    for (i, r) in results.iter().enumerate() {
        if r.skip_reason != Some(SkipReason::DependsOnFailed) {
            continue;
        }
        if let Some(cause) = waited_on(results, &position, i)
            && let Some(&g) = group_of.get(&cause)
        {
            waiting[g].push(i);
            *direct.entry(cause).or_default() += 1;
        }
    }

    // When a diagnosis found something, the cause it explains is told first: the workaround may
    // have left nothing waiting on it, yet it is why the agent fails its first call.
    let diagnosed: Vec<&str> = DIAGNOSES
        .iter()
        .filter(|(d, _)| results.iter().any(|r| r.id == *d && r.failure.is_some()))
        .map(|(_, t)| *t)
        .collect();
    let mut causes: Vec<(usize, Cause)> = groups
        .iter()
        .zip(waiting)
        .zip(&group_print)
        .map(|((members, waiting), print)| {
            // The root: the finding most checks wait on, then the highest level, then run order; a
            // diagnosis only when it stands alone.
            let candidates: Vec<usize> = members.iter().copied().filter(|&i| !is_diagnosis(i)).collect();
            let candidates = if candidates.is_empty() { members.clone() } else { candidates };
            // The check a diagnosis explains tells its story, however few wait on it.
            let root = candidates
                .iter()
                .copied()
                .min_by_key(|&i| {
                    let diagnosed = diagnosed.contains(&results[i].id.as_str());
                    (!diagnosed, std::cmp::Reverse(direct.get(&i).copied().unwrap_or(0)), results[i].level, i)
                })
                .expect("a group has a finding");
            let mut ordered: Vec<usize> = members.iter().copied().filter(|&i| i != root).collect();
            ordered.sort_unstable();
            ordered.insert(0, root);
            let members: Vec<&CheckResult> = ordered.iter().map(|&i| &results[i]).collect();
            let waiting: Vec<&CheckResult> = waiting.iter().map(|&i| &results[i]).collect();
            let told = headline::of(&members, &waiting, print);
            let cause = Cause {
                id: cause_id(&results[root].id, print),
                headline: told.title,
                evidence: told.evidence,
                level: members.iter().map(|r| r.level).min().unwrap_or(Level::Info),
                root: results[root].id.clone(),
                fingerprint: print.key().map(|_| print.to_string()),
                findings: members.iter().map(|r| r.id.clone()).collect(),
                waiting: waiting.iter().map(|r| r.id.clone()).collect(),
            };
            (root, cause)
        })
        .collect();
    causes.sort_by_key(|(root, c)| {
        (!diagnosed.contains(&c.root.as_str()), c.level, std::cmp::Reverse(c.decides()), *root)
    });
    causes.into_iter().map(|(_, c)| c).collect()
}

/// Checks written once per binding because their requests are raw (an HTTP+JSON path, a JSON-RPC
/// body), each the same requirement as its JSON-RPC twin: (HTTP+JSON check, JSON-RPC check).
const WRITTEN_TWICE: &[(&str, &str)] = &[("REST-VER-001", "KIT-VER-007")];

/// The id of the check graded over the first binding that `id` is the grading over another binding
/// of (`CORE-GET-001` for `CORE-GET-001[http+json]`).
fn binding_twin(id: &str) -> Option<&str> {
    if let Some((_, twin)) = WRITTEN_TWICE.iter().find(|(rest, _)| *rest == id) {
        return Some(twin);
    }
    let base = id.strip_suffix(']')?;
    base.rsplit_once('[').map(|(plain, _)| plain)
}

/// Puts finding `i` into `group`, or into a group of its own; returns the group.
fn place(i: usize, group: Option<usize>, groups: &mut Vec<Vec<usize>>, group_of: &mut HashMap<usize, usize>) -> usize {
    let g = group.unwrap_or_else(|| {
        groups.push(Vec::new());
        groups.len() - 1
    });
    groups[g].push(i);
    group_of.insert(i, g);
    g
}

/// The groups of `findings` that share a fingerprint, each with it: the fingerprint most of the
/// findings not yet grouped share is taken first (one agent answering -32000 to everything is one
/// story, whichever error each check wanted), then the next, while two or more share one; on a tie,
/// the fingerprint that is the better reading of its findings ([`candidates`] order), then run order.
/// Findings that share none are left out.
fn shared(
    results: &[CheckResult],
    findings: &[usize],
    waited: &HashMap<usize, Vec<Fingerprint>>,
) -> Vec<(Fingerprint, Vec<usize>)> {
    // Which group each finding went into (an index into `out`).
    let mut group: Vec<Option<usize>> = vec![None; findings.len()];
    let mut out: Vec<(Fingerprint, Vec<usize>)> = Vec::new();
    // The precise readings first: a coarse one shared by many must not take findings a precise
    // one tells apart. A finding a coarser reading links to one already grouped joins that group.
    for tier in 0..=2 {
        let keyed: Vec<Vec<(String, Fingerprint)>> = findings
            .iter()
            .map(|&i| {
                candidates(&results[i])
                    .into_iter()
                    .chain(waited.get(&i).into_iter().flatten().cloned())
                    .filter(|p| p.tier() == tier)
                    .filter_map(|p| p.key().map(|k| (k, p)))
                    .collect()
            })
            .collect();
        // A finding left out of a group shares one of its readings with a finding in it: the
        // group took another reading they share more widely (a wrong code said of five checks
        // also said, with the same code due, of a sixth whose message differs).
        let join = |group: &mut Vec<Option<usize>>, out: &mut Vec<(Fingerprint, Vec<usize>)>| {
            for n in 0..findings.len() {
                if group[n].is_some() {
                    continue;
                }
                // The error that did not come links only where the same code came (a reading
                // shared by the group): two wrong codes for one due error are two stories.
                let joined =
                    keyed[n].iter().filter(|(_, p)| !matches!(p, Fingerprint::ErrorDue { .. })).find_map(|(key, _)| {
                        (0..findings.len()).find_map(|m| group[m].filter(|_| keyed[m].iter().any(|(k, _)| k == key)))
                    });
                if let Some(g) = joined {
                    group[n] = Some(g);
                    out[g].1.push(findings[n]);
                }
            }
        };
        join(&mut group, &mut out);
        for (print, members) in shared_by(&keyed, &group) {
            for &n in &members {
                group[n] = Some(out.len());
            }
            out.push((print, members.iter().map(|&n| findings[n]).collect()));
        }
        join(&mut group, &mut out);
    }
    for (_, members) in out.iter_mut() {
        members.sort_unstable();
    }
    out
}

/// The groups of one tier of readings among the findings not in a group yet, as positions in
/// `keyed`: the reading most of them share first, while two or more share one.
fn shared_by(keyed: &[Vec<(String, Fingerprint)>], group: &[Option<usize>]) -> Vec<(Fingerprint, Vec<usize>)> {
    let mut taken: Vec<bool> = group.iter().map(Option::is_some).collect();
    let mut out = Vec::new();
    loop {
        // Per key: how many findings left share it, its best rank among them, its first finding.
        let mut tally: HashMap<&str, (usize, usize, usize)> = HashMap::new();
        for (n, keys) in keyed.iter().enumerate().filter(|(n, _)| !taken[*n]) {
            for (rank, (key, _)) in keys.iter().enumerate() {
                // Two readings of one finding may say the same (an error's code and message read
                // as answered and as the wrong error): the finding counts once.
                if keys[..rank].iter().any(|(k, _)| k == key) {
                    continue;
                }
                let t = tally.entry(key.as_str()).or_insert((0, rank, n));
                t.0 += 1;
                t.1 = t.1.min(rank);
            }
        }
        let best = tally
            .into_iter()
            .filter(|(_, (count, _, _))| *count >= 2)
            .min_by_key(|(key, (count, rank, first))| (std::cmp::Reverse(*count), *rank, *first, *key));
        let Some((key, _)) = best else { break };
        let key = key.to_owned();
        let mut members = Vec::new();
        let mut print = None;
        for (n, keys) in keyed.iter().enumerate() {
            if let Some((_, p)) = keys.iter().find(|(k, _)| *k == key).filter(|_| !taken[n]) {
                taken[n] = true;
                members.push(n);
                print.get_or_insert_with(|| p.clone());
            }
        }
        out.extend(print.map(|p| (p, members)));
    }
    out
}

/// The finding check `i` waits on: the one its `depends_on` names, followed through checks that
/// themselves wait (a cause that deferred passes its own on).
fn waited_on(results: &[CheckResult], position: &HashMap<&str, usize>, i: usize) -> Option<usize> {
    let mut at = i;
    // A chain visits each check at most once: a cycle in a hand-edited report ends here.
    for _ in 0..results.len() {
        let next = *position.get(results[at].depends_on.as_deref()?)?;
        if is_finding(&results[next]) {
            return Some(next);
        }
        if results[next].outcome != Outcome::Skip {
            return None;
        }
        at = next;
    }
    None
}

/// `C-` and the first 12 hex digits of the digest of the root's id and the fingerprint's key.
fn cause_id(root: &str, print: &Fingerprint) -> String {
    let key = format!("{root}\n{}", print.key().unwrap_or_default());
    format!("C-{}", hex::encode(&Sha256::digest(key.as_bytes())[..6]))
}

/// The figures every rendering states about the causes (`report.json` `summary.causes`): counted
/// once, when the report is built, so that no view counts again and none says another number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CauseCounts {
    /// Every root cause.
    pub causes: u64,
    /// The causes by their level, the highest among their findings.
    pub by_level: CauseLevels,
    /// The causes a scored check that failed belongs to: what a non-conformant verdict rests on.
    pub failing: u64,
    /// Every finding (a check that failed, warned or ended in error, an info with a failure), each
    /// in exactly one cause.
    pub findings: u64,
    /// The checks the findings leave undecided (`depends_on_failed`).
    pub waiting: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CauseLevels {
    pub must: u64,
    pub should: u64,
    pub may: u64,
    pub info: u64,
}

impl CauseCounts {
    pub fn of(causes: &[Cause], results: &[CheckResult]) -> CauseCounts {
        let mut by_level = CauseLevels::default();
        for c in causes {
            *match c.level {
                Level::Must => &mut by_level.must,
                Level::Should => &mut by_level.should,
                Level::May => &mut by_level.may,
                Level::Info => &mut by_level.info,
            } += 1;
        }
        CauseCounts {
            causes: causes.len() as u64,
            by_level,
            failing: failing(causes, results, Outcome::Fail).len() as u64,
            findings: causes.iter().map(|c| c.findings.len() as u64).sum(),
            waiting: causes.iter().map(|c| c.waiting.len() as u64).sum(),
        }
    }

    /// What every rendering says of the findings: `82 findings in 38 root causes (23 MUST, 10
    /// SHOULD, 5 info); 40 checks wait on them`. Empty when nothing was found.
    pub fn statement(&self) -> String {
        if self.causes == 0 {
            return String::new();
        }
        let levels: Vec<String> = [
            (self.by_level.must, "MUST"),
            (self.by_level.should, "SHOULD"),
            (self.by_level.may, "MAY"),
            (self.by_level.info, "info"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, l)| format!("{n} {l}"))
        .collect();
        let mut s = format!(
            "{} in {} ({})",
            plural(self.findings, "finding", "findings"),
            plural(self.causes, "root cause", "root causes"),
            levels.join(", ")
        );
        match self.waiting {
            0 => {}
            1 => s.push_str("; 1 check waits on them"),
            n => s.push_str(&format!("; {n} checks wait on them")),
        }
        s
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The causes some scored failure belongs to, in their order.
pub fn failing<'a>(causes: &'a [Cause], results: &[CheckResult], outcome: Outcome) -> Vec<&'a Cause> {
    let hit: Vec<&str> = results.iter().filter(|r| r.scored && r.outcome == outcome).map(|r| r.id.as_str()).collect();
    causes.iter().filter(|c| c.findings.iter().any(|id| hit.contains(&id.as_str()))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{CheckMeta, Evidence, Failure, Reply, ReplyKind};

    fn meta(id: &str, level: Level) -> CheckMeta {
        CheckMeta { level, ..CheckMeta::sample(id) }
    }

    /// A MUST check (a SHOULD one when it warned) that ended in `outcome` with `message`.
    fn with(id: &str, outcome: Outcome, message: &str) -> CheckResult {
        let level = if outcome == Outcome::Warn { Level::Should } else { Level::Must };
        CheckResult {
            failure: (!message.is_empty()).then(|| Failure { message: message.into(), ..Failure::default() }),
            ..CheckResult::new(&meta(id, level), outcome)
        }
    }

    /// A check whose GetTask was answered `code` where -32001 was due.
    fn wrong_code(id: &str, level: Level, code: i64, message: &str) -> CheckResult {
        wrong_code_for(id, level, -32001, code, message)
    }

    /// A check whose GetTask was answered `code` where `due` was.
    fn wrong_code_for(id: &str, level: Level, due: i64, code: i64, message: &str) -> CheckResult {
        let failure = Failure {
            message: format!("error code: expected {due}, got {code} '{message}' at /error/code"),
            step_id: Some("get".into()),
            pointer: Some("/error/code".into()),
            expected: Some(due.to_string()),
            actual: Some(code.to_string()),
        };
        let reply = Reply {
            method: Some("GetTask".into()),
            kind: ReplyKind::Error,
            code: Some(code),
            message: Some(message.into()),
        };
        let evidence = vec![Evidence {
            step_id: Some("get".into()),
            method: "POST".into(),
            reply: Some(reply),
            ..Evidence::default()
        }];
        let outcome = level.violation(false);
        CheckResult { failure: Some(failure), evidence, ..CheckResult::new(&meta(id, level), outcome) }
    }

    fn dependent(id: &str, cause: &str) -> CheckResult {
        CheckResult {
            depends_on: Some(cause.into()),
            ..CheckResult::skipped(&meta(id, Level::Must), SkipReason::DependsOnFailed, format!("{cause} failed"))
        }
    }

    fn ids(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }

    #[test]
    fn findings_that_share_a_fingerprint_are_one_cause() {
        let results = vec![
            wrong_code("A", Level::Must, -32000, "Server error"),
            wrong_code_for("B", Level::Should, -32602, -32000, "Server error"),
            wrong_code("C", Level::Must, -32603, "Internal error"),
            wrong_code_for("D", Level::May, -32004, -32000, "Server error"),
            with("P", Outcome::Pass, ""),
        ];
        let causes = of(&results);
        assert_eq!(causes.len(), 2, "{causes:#?}");
        // A and C share the error that did not come, but A, B and D the one that did: the larger
        // story wins, and C, left alone, is a cause of its own.
        assert_eq!(ids(&causes[0].findings), ["A", "B", "D"]);
        assert_eq!(causes[0].level, Level::Must);
        assert_eq!(causes[0].headline, "Errors carry the wrong code: -32000 where other errors are due (3 checks)");
        assert_eq!(
            causes[0].evidence.as_deref(),
            Some(
                "-32000 'Server error' where TaskNotFoundError (-32001), InvalidParamsError (-32602) and 1 other are due"
            )
        );
        assert_eq!(
            causes[1].headline,
            "GetTask answers the wrong error: -32603 where TaskNotFoundError (-32001) is due"
        );
        assert_eq!(
            causes[0].fingerprint.as_deref(),
            Some("JSON-RPC error -32000 'Server error' where another error is due")
        );
    }

    /// A check whose `method` call answered a result (or a stream) where `due` was.
    fn result_where_error(id: &str, method: &str, due: i64) -> CheckResult {
        let stream = method == "SendStreamingMessage";
        let failure = Failure {
            message: "expected an error, got a result".into(),
            step_id: Some("s".into()),
            pointer: (!stream).then(|| "/result".into()),
            expected: Some(format!("an error with code {due}")),
            actual: Some("{}".into()),
        };
        let kind = if stream { ReplyKind::Stream } else { ReplyKind::Result };
        let reply = Reply { method: Some(method.into()), kind, code: None, message: None };
        let evidence = vec![Evidence { step_id: Some("s".into()), reply: Some(reply), ..Evidence::default() }];
        CheckResult { failure: Some(failure), evidence, ..CheckResult::new(&meta(id, Level::Must), Outcome::Fail) }
    }

    /// A check that found `actual` at `pointer` where `expected` was due.
    fn value(id: &str, title: &str, pointer: &str, expected: &str, actual: &str) -> CheckResult {
        let failure = Failure {
            message: format!("body: does not match at {pointer}"),
            pointer: Some(pointer.into()),
            expected: Some(expected.into()),
            actual: Some(actual.into()),
            ..Failure::default()
        };
        let mut r = CheckResult { failure: Some(failure), ..CheckResult::new(&meta(id, Level::Must), Outcome::Fail) };
        r.title = title.into();
        r
    }

    #[test]
    fn what_an_error_lacks_and_the_status_it_came_with_are_not_a_wrong_error() {
        // The same answer (UnsupportedOperationError, no ErrorInfo, HTTP 501) breaks three
        // sentences: which error, its details, its status. Three defects, three causes.
        let mut details = wrong_code("D", Level::Must, -32004, "not supported");
        details.failure = Some(Failure {
            message: "error data: no element of 0 satisfies an ErrorInfo at /error/data".into(),
            step_id: Some("get".into()),
            pointer: Some("/error/data".into()),
            expected: Some("some: an ErrorInfo".into()),
            actual: Some("[]".into()),
        });
        let status = CheckResult {
            failure: Some(Failure {
                message: "2 of 2 HTTP+JSON A2A errors carry another HTTP status than §5.4 maps them to".into(),
                actual: Some("A / get: GET /tasks/x answered UnsupportedOperationError (-32004) with HTTP 501".into()),
                ..Failure::default()
            }),
            ..CheckResult::new(&meta("S", Level::Must), Outcome::Fail)
        };
        let results = vec![
            wrong_code("A", Level::Must, -32004, "not supported"),
            wrong_code("B", Level::Must, -32004, "not supported"),
            details,
            CheckResult { id: "KIT-ERR-022".into(), ..status },
        ];
        let causes = of(&results);
        let told: Vec<Vec<&str>> = causes.iter().map(|c| ids(&c.findings)).collect();
        assert_eq!(told, [vec!["A", "B"], vec!["D"], vec!["KIT-ERR-022"]], "{causes:#?}");
    }

    #[test]
    fn an_error_that_never_comes_is_one_cause_whatever_came_instead() {
        let results = vec![
            result_where_error("A", "SendMessage", -32001),
            result_where_error("B", "SendStreamingMessage", -32001),
            // The push-config methods are another handler: an unknown task they serve is another
            // story than a message's task id ignored.
            result_where_error("C", "ListTaskPushNotificationConfigs", -32001),
            // The version is refused before any method runs: one story across methods.
            result_where_error("V1", "SendMessage", -32009),
            wrong_code_for("V2", Level::Must, -32009, -32001, "Task not found"),
        ];
        let causes = of(&results);
        let told: Vec<(&str, &str)> = causes.iter().map(|c| (c.root.as_str(), c.headline.as_str())).collect();
        assert_eq!(
            told,
            [
                (
                    "A",
                    "SendMessage and SendStreamingMessage do not return TaskNotFoundError (-32001) where it is \
                     due (2 checks)"
                ),
                (
                    "V1",
                    "SendMessage and GetTask do not return VersionNotSupportedError (-32009) where it is due \
                     (2 checks)"
                ),
                ("C", "ListTaskPushNotificationConfigs does not return TaskNotFoundError (-32001) where it is due"),
            ]
        );
    }

    #[test]
    fn the_same_value_in_one_member_is_one_cause_wherever_the_member_stands() {
        let pattern = "matches: \"Z$\"";
        let results = vec![
            value(
                "T1",
                "Listed timestamps are UTC",
                "/tasks/0/status/timestamp",
                pattern,
                "\"2026-12-01T15:35:46.850946+00:00\"",
            ),
            value(
                "T2",
                "GetTask timestamps are UTC",
                "/status/timestamp",
                "any_of: […]",
                "\"2026-12-01T15:36:02.1+00:00\"",
            ),
            value("R", "Roles are ProtoJSON names", "/status/message/role", pattern, "\"agent\""),
        ];
        let causes = of(&results);
        assert_eq!(causes.len(), 2, "{causes:#?}");
        assert_eq!(ids(&causes[0].findings), ["T1", "T2"]);
        assert_eq!(causes[0].headline, "`timestamp` is wrong: Listed timestamps are UTC does not hold (2 checks)");
        // A value seen once is told by its check.
        assert_eq!(ids(&causes[1].findings), ["R"]);
    }

    #[test]
    fn the_checks_waiting_on_a_finding_are_its_cause_and_make_it_the_root() {
        let results = vec![
            with("W", Outcome::Warn, "soft"),
            with("E1", Outcome::Error, "the agent stopped answering"),
            with("F0", Outcome::Fail, "first, but nothing waits on it"),
            with("F", Outcome::Fail, "broken"),
            dependent("D1", "F"),
            with("E2", Outcome::Error, "the agent stopped answering"),
            with("E3", Outcome::Error, "something else"),
            dependent("D2", "E2"),
            // A check that waits on a check that waits: the chain ends at the finding.
            dependent("D3", "D2"),
            with("P", Outcome::Pass, ""),
        ];
        let causes = of(&results);
        let roots: Vec<&str> = causes.iter().map(|c| c.root.as_str()).collect();
        // MUST first (most decided first, then run order), the SHOULD last.
        assert_eq!(roots, ["E2", "F", "F0", "E3", "W"]);
        // E2 has a waiting check of its own: it tells the story of both identical errors.
        assert_eq!(ids(&causes[0].findings), ["E2", "E1"]);
        assert_eq!(ids(&causes[0].waiting), ["D2", "D3"]);
        assert_eq!(causes[0].headline, "Not decided: E2 (2 checks; 2 more wait on them)");
        assert_eq!(causes[0].evidence.as_deref(), Some("the agent stopped answering"));
        assert_eq!(ids(&causes[1].waiting), ["D1"]);
        assert_eq!(causes[1].headline, "Not met: F (1 check waits on it)");
        assert_eq!(causes[4].level, Level::Should);
    }

    #[test]
    fn a_check_failing_over_both_bindings_is_one_cause() {
        let results = vec![
            with("F", Outcome::Fail, "a bare Task"),
            dependent("D", "F"),
            with("F[http+json]", Outcome::Fail, "a bare Task"),
            dependent("D[http+json]", "F[http+json]"),
            // Over HTTP+JSON alone: a story of its own.
            with("G[http+json]", Outcome::Fail, "no ErrorInfo"),
            // Failing over both bindings, each for its own reason: two stories.
            with("H", Outcome::Fail, "-32602 'invalid params'"),
            with("H[http+json]", Outcome::Fail, "the answer lacks /id"),
        ];
        let causes = of(&results);
        let roots: Vec<&str> = causes.iter().map(|c| c.root.as_str()).collect();
        assert_eq!(roots, ["F", "G[http+json]", "H", "H[http+json]"], "{causes:#?}");
        assert_eq!(causes[0].root, "F");
        assert_eq!(ids(&causes[0].findings), ["F", "F[http+json]"]);
        assert_eq!(ids(&causes[0].waiting), ["D", "D[http+json]"]);
        assert_eq!(causes[1].root, "G[http+json]");
        assert_eq!(binding_twin("G[http+json]"), Some("G"));
        assert_eq!(binding_twin("G"), None);
        assert_eq!(binding_twin("REST-VER-001"), Some("KIT-VER-007"));
    }

    #[test]
    fn a_served_lookup_is_not_a_wrong_mapping_and_envelope_errors_are_one() {
        let results = vec![
            // A probe about a missing task answered TaskNotFoundError was served: the version
            // not checked and the envelope not checked are two stories, not one wrong code.
            wrong_code_for("V", Level::Must, -32009, -32001, "Task kit-missing-1 not found"),
            wrong_code_for("J", Level::Must, -32600, -32001, "Task kit-missing-2 not found"),
            // One code for every request the envelope refuses, whatever its message says.
            wrong_code_for("E1", Level::Must, -32600, -32602, "Invalid JSON-RPC Request."),
            wrong_code_for("E2", Level::Must, -32700, -32602, "Invalid request body type."),
        ];
        let told: Vec<Vec<String>> = of(&results).into_iter().map(|c| c.findings).collect();
        assert_eq!(told, [vec!["E1", "E2"], vec!["V"], vec!["J"]], "{told:?}");
    }

    #[test]
    fn a_catch_all_joins_the_finding_that_saw_its_value() {
        let schema = value(
            "WIRE-SCHEMA",
            "Every payload validates",
            "/task/status/message/role",
            "a valid SendMessageResponse",
            "KIT-ERR-002 / a: SendMessageResponse at /task/status/message/role: \"agent\" is not valid under any \
             of the schemas listed in the 'anyOf' keyword\nKIT-ERR-002 / a: SendMessageResponse at \
             /task/history/0/role: \"user\" is not valid",
        );
        let results = vec![
            value("DM", "Enum values are names", "/task/status/message/role", "matches", "\"agent\""),
            schema,
            // Two checks reading one stream event at its root: one value, one story.
            value("S1", "Events are StreamResponses", "/0", "any_of: [a]", "{\"taskId\":\"t-1\"}"),
            value("S2", "One member per event", "/0", "any_of: [b]", "{\"taskId\":\"t-1\"}"),
        ];
        let told: Vec<Vec<String>> = of(&results).into_iter().map(|c| c.findings).collect();
        assert_eq!(told, [vec!["DM", "WIRE-SCHEMA"], vec!["S1", "S2"]], "{told:?}");
    }

    #[test]
    fn ids_are_one_story_only_at_one_place() {
        let results = vec![
            value("A", "Listed tasks keep their ids", "/tasks/0/id", "\"t-1\"", "\"t-2\""),
            value("B", "Answers echo the request id", "/id", "1", "0"),
            value("C", "Error answers echo the request id", "/id", "null", "0.5"),
        ];
        let told: Vec<Vec<String>> = of(&results).into_iter().map(|c| c.findings).collect();
        // The envelope's id, wrong in two answers, is one story; a listed task's id is another.
        assert_eq!(told, [vec!["B", "C"], vec!["A"]], "{told:?}");
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        let run = || {
            vec![
                wrong_code("A", Level::Must, -32000, "Server error"),
                wrong_code("B", Level::Must, -32000, "Server error"),
                with("F", Outcome::Fail, "broken"),
            ]
        };
        let (a, b) = (of(&run()), of(&run()));
        assert_eq!(a.iter().map(|c| &c.id).collect::<Vec<_>>(), b.iter().map(|c| &c.id).collect::<Vec<_>>());
        assert_ne!(a[0].id, a[1].id);
        assert!(a.iter().all(|c| c.id.len() == 14 && c.id.starts_with("C-")), "{a:#?}");
        // Another story of the same root is another cause.
        let mut other = run();
        other[0] = wrong_code("A", Level::Must, -32603, "Internal error");
        assert_ne!(of(&other).iter().find(|c| c.root == "A").unwrap().id, a[0].id);
    }

    #[test]
    fn a_diagnosis_lends_its_words_to_the_cause_it_explains() {
        let diagnosis = CheckResult {
            scored: false,
            failure: Some(Failure {
                message: "SendMessage answers HTTP 500 to role ROLE_USER and succeeds with role user".into(),
                ..Failure::default()
            }),
            ..CheckResult::new(&meta("KIT-DIAG-001", Level::Info), Outcome::Info)
        };
        let results = vec![with("CORE-SEND-001", Outcome::Fail, "the answer is not JSON-RPC"), diagnosis.clone()];
        let causes = of(&results);
        assert_eq!(causes.len(), 1, "{causes:#?}");
        assert_eq!(causes[0].root, "CORE-SEND-001");
        assert_eq!(ids(&causes[0].findings), ["CORE-SEND-001", "KIT-DIAG-001"]);
        assert_eq!(causes[0].headline, "SendMessage answers HTTP 500 to role ROLE_USER and succeeds with role user");
        // The generic hook: a root's own headline comes first.
        let mut told = results.clone();
        told[0].headline = Some("in the root's words".into());
        assert_eq!(of(&told)[0].headline, "In the root's words");
        // Without the check it explains, a diagnosis is a cause of its own.
        assert_eq!(of(&[diagnosis])[0].root, "KIT-DIAG-001");
    }

    #[test]
    fn the_diagnosed_failure_is_told_first() {
        let results = vec![
            with("F", Outcome::Fail, "broken"),
            dependent("D1", "F"),
            with(DIAGNOSED, Outcome::Fail, "HTTP 500"),
            with(DIAGNOSIS, Outcome::Info, "SendMessage answers HTTP 500 to role ROLE_USER ..."),
        ];
        let roots: Vec<String> = of(&results).iter().map(|c| c.root.clone()).collect();
        assert_eq!(roots, [DIAGNOSED, "F"]);
        // Without a diagnosis that found something, the cause that decides most leads.
        let results = vec![results[0].clone(), results[1].clone(), results[2].clone()];
        assert_eq!(of(&results)[0].root, "F");
    }
}

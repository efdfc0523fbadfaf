//! SARIF 2.1.0 rendering of a [`Report`], for code-scanning views (GitHub, GitLab, IDEs).
//!
//! - One rule per check id of the report (`tool.driver.rules`), carrying the title, the spec section
//!   and the level (`must` → `error`, `should` → `warning`, `may` and `info` → `note`); its
//!   `fullDescription` and `help` give the quoted sentences, each with its place, and then the kit's
//!   reading of them, labelled as such: what the spec says is the rule, the same in every run.
//! - One result per finding: `fail` and `warn` (and a violated MAY) are `kind: fail`; `error` is
//!   `kind: review` (the kit could not decide); passes and skips are not results. A result's message
//!   is what the agent did.
//! - Each result has a stable fingerprint, `partialFingerprints["a2aConformFinding/v1"]`: a digest
//!   of the check id, the step and the JSON pointer, never of messages, URLs or times, so the same
//!   finding is the same alert in every run.
//! - Code scanning accepts repository-relative locations only, so a result's location is the path
//!   of the request that showed it, relative to the `AGENT` base (`originalUriBaseIds`), which
//!   holds the target's URL.
//! - A failure accepted by a baseline is a result with an `external`, `accepted` suppression
//!   carrying the baseline's reason.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::json::Report;
use super::model::{BaselineStatus, CheckResult, Level, Outcome};
use super::quotes;

/// The `$schema` a SARIF log names.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Key of the fingerprint in `partialFingerprints`; bump the version if its recipe changes.
pub const FINGERPRINT_KEY: &str = "a2aConformFinding/v1";

/// The SARIF log of `report`, pretty-printed with a trailing newline.
pub fn to_sarif_string(report: &Report) -> String {
    // Plain data with string keys always serializes.
    format!("{}\n", serde_json::to_string_pretty(&to_sarif(report)).expect("SARIF serializes"))
}

/// The SARIF log of `report`.
pub fn to_sarif(report: &Report) -> Value {
    let mut rule_ids: Vec<&str> = Vec::new();
    let mut rules = Vec::new();
    for r in report.checks() {
        if !rule_ids.contains(&r.id.as_str()) {
            rule_ids.push(&r.id);
            rules.push(rule(r));
        }
    }
    let results: Vec<Value> = report
        .results
        .iter()
        .filter(|rr| is_finding(&rr.result))
        .map(|rr| {
            let index = rule_ids.iter().position(|id| *id == rr.result.id).unwrap_or(0);
            result(report, &rr.result, index, rr.baseline_status)
        })
        .collect();
    let mut base = report.target.url.clone();
    if !base.ends_with('/') {
        base.push('/');
    }
    let mut run = json!({
        "tool": {"driver": {
            "name": report.tool.name,
            "version": report.tool.version,
            "semanticVersion": report.tool.version,
            "informationUri": "https://a2a-protocol.org",
            "rules": rules,
        }},
        "invocations": [{
            "executionSuccessful": report.verdict.exit_code != 2,
            "exitCode": report.verdict.exit_code,
            "startTimeUtc": report.run.started_at,
            "endTimeUtc": report.generated_at,
            "properties": {
                "verdict": report.verdict.status.as_str(),
                // The verdict line with what it rests on, as every rendering states it.
                "verdictLine": super::graded::verdict_line(
                    report.verdict.status,
                    &report.verdict.graded,
                    report.run.strict,
                    super::graded::Peer::of_mode(&report.run.mode),
                ),
                "reasons": report.verdict.reasons,
            },
        }],
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {
            "target": report.target.url,
            "runId": report.run.id,
            "specVersion": report.spec_version,
            "specCommit": report.spec.commit,
            "reportSchemaVersion": report.schema_version,
            // The counts report.json carries, and the sentence every rendering states them in.
            "causes": report.summary.causes,
            "findingsLine": report.summary.causes.statement(),
        },
    });
    // A target that is not a URL (a run that never reached one) gets no base to resolve against.
    if base.contains("://") {
        run["originalUriBaseIds"] = json!({"AGENT": {"uri": base}});
    }
    json!({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})
}

/// Whether a result is reported as a SARIF result.
fn is_finding(r: &CheckResult) -> bool {
    matches!(r.outcome, Outcome::Fail | Outcome::Warn | Outcome::Error)
        || (r.outcome == Outcome::Info && r.failure.is_some())
}

fn level_of(level: Level) -> &'static str {
    match level {
        Level::Must => "error",
        Level::Should => "warning",
        Level::May | Level::Info => "note",
    }
}

fn rule(r: &CheckResult) -> Value {
    let section = if r.spec.section.is_empty() { String::new() } else { format!("§{} ", r.spec.section) };
    let words = quotes::lines(&r.spec);
    // A check that quotes nothing (an external suite's) is described by its title.
    let requirement = if words.is_empty() { r.title.clone() } else { words.join("\n") };
    let help = format!("{section}({})\n{requirement}", r.level.as_str().to_uppercase());
    let mut tags = vec!["a2a".to_owned(), r.profile.clone(), r.level.as_str().to_owned()];
    if !r.scored {
        tags.push("not-scored".into());
    }
    json!({
        "id": r.id,
        "name": rule_name(&r.id),
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": requirement},
        "help": {"text": help},
        "defaultConfiguration": {"level": level_of(r.level)},
        "properties": {
            "tags": tags,
            "profile": r.profile,
            "level": r.level.as_str(),
            "specSection": r.spec.section,
            "scored": r.scored,
            "suite": r.suite,
        },
    })
}

/// `CORE-SEND-001` → `CoreSend001`: SARIF rule names are identifiers.
fn rule_name(id: &str) -> String {
    id.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let lower = w.to_ascii_lowercase();
            let mut chars = lower.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

/// The stable identity of a finding: what failed and where, never when or against which port.
pub fn fingerprint(r: &CheckResult) -> String {
    let f = r.failure.as_ref();
    let key = format!(
        "{}\n{}\n{}",
        r.id,
        f.and_then(|f| f.step_id.as_deref()).unwrap_or(""),
        f.and_then(|f| f.pointer.as_deref()).unwrap_or("")
    );
    hex::encode(&Sha256::digest(key.as_bytes())[..16])
}

fn result(report: &Report, r: &CheckResult, rule_index: usize, baseline: Option<BaselineStatus>) -> Value {
    let (kind, level) = match r.outcome {
        Outcome::Fail => ("fail", "error"),
        Outcome::Warn => ("fail", "warning"),
        Outcome::Info => ("fail", "note"),
        // The kit could not decide: a person has to look (SARIF: kind review, level none).
        _ => ("review", "none"),
    };
    let f = r.failure.as_ref();
    let mut text = f.map_or_else(|| r.title.clone(), |f| f.message.clone());
    if let Some(p) = f.and_then(|f| f.pointer.as_deref()) {
        text.push_str(&format!(" (at {})", if p.is_empty() { "(root)" } else { p }));
    }
    let mut props = Map::new();
    props.insert("outcome".into(), json!(r.outcome.as_str()));
    props.insert("profile".into(), json!(r.profile));
    props.insert("specSection".into(), json!(r.spec.section));
    props.insert("scored".into(), json!(r.scored));
    if let Some(f) = f {
        for (key, value) in
            [("stepId", &f.step_id), ("pointer", &f.pointer), ("expected", &f.expected), ("actual", &f.actual)]
        {
            if let Some(v) = value {
                props.insert(key.into(), json!(v));
            }
        }
    }
    let evidence = evidence_of(r);
    if let Some(curl) = evidence.and_then(|e| e.curl.as_deref()) {
        props.insert("curl".into(), json!(curl));
    }
    let dependents: Vec<&str> =
        report.checks().filter(|d| d.depends_on.as_deref() == Some(r.id.as_str())).map(|d| d.id.as_str()).collect();
    if !dependents.is_empty() {
        props.insert("undecidedDependents".into(), json!(dependents));
    }
    let mut out = json!({
        "ruleId": r.id,
        "ruleIndex": rule_index,
        "kind": kind,
        "level": level,
        "message": {"text": text},
        "locations": [location(report, r, evidence.map(|e| e.url.as_str()))],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(r)},
        "properties": props,
    });
    if baseline == Some(BaselineStatus::Accepted) {
        let reason = report
            .baseline
            .as_ref()
            .and_then(|b| b.entry(&r.id))
            .map_or("accepted by the baseline", |e| e.reason.as_str());
        out["suppressions"] = json!([{"kind": "external", "status": "accepted", "justification": reason}]);
    }
    out
}

/// The exchange that showed the finding: the one of its step, else the last.
fn evidence_of(r: &CheckResult) -> Option<&super::model::Evidence> {
    let step = r.failure.as_ref().and_then(|f| f.step_id.as_deref());
    step.and_then(|s| r.evidence.iter().rev().find(|e| e.step_id.as_deref() == Some(s))).or_else(|| r.evidence.last())
}

fn location(report: &Report, r: &CheckResult, url: Option<&str>) -> Value {
    json!({
        "physicalLocation": {"artifactLocation": {"uri": relative_uri(&report.target.url, url), "uriBaseId": "AGENT"}},
        "logicalLocations": [{"name": r.id, "fullyQualifiedName": format!("{}/{}", r.profile, r.id), "kind": "test"}],
    })
}

/// The path of `url` relative to the target's origin (`./` for the root): a repository-relative
/// URI that is the same whatever host and port the agent ran on.
fn relative_uri(target: &str, url: Option<&str>) -> String {
    let url = url.unwrap_or(target);
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme.find('/').map_or("", |i| &after_scheme[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("").trim_start_matches('/');
    if path.is_empty() { "./".to_owned() } else { path.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_are_identifiers() {
        assert_eq!(rule_name("CORE-SEND-001"), "CoreSend001");
        assert_eq!(rule_name("WIRE-SCHEMA"), "WireSchema");
    }

    #[test]
    fn locations_do_not_depend_on_host_or_port() {
        assert_eq!(relative_uri("http://127.0.0.1:4000", Some("http://127.0.0.1:4000/")), "./");
        assert_eq!(
            relative_uri("http://h:1", Some("http://h:1/.well-known/agent-card.json?x=1")),
            ".well-known/agent-card.json"
        );
        assert_eq!(relative_uri("http://h:2/a2a", None), "a2a");
        assert_eq!(relative_uri("embedded mock", None), "./");
    }
}

//! `a2a-conform coverage`: traceability from the spec to the checks. For every normative sentence
//! of the spec digest's MUST checklist (`suites/requirements.json`, §15 of the digest), the built-in
//! checks that test it, or why no check can; then the sentences no check tests.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::report::print_stdout;
use crate::suite::loader;

/// The checklist with its mapping to checks, reviewed like code.
pub const REQUIREMENTS: &str = include_str!("../../suites/requirements.json");

/// The checklist as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// Where the sentences come from.
    pub source: String,
    pub items: Vec<Requirement>,
}

/// One normative sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Its number in the checklist.
    pub number: u32,
    /// Who it binds: `S` (server/agent), `C` (client), or both.
    pub party: String,
    /// The sentence.
    pub text: String,
    /// Spec sections it cites.
    #[serde(default)]
    pub sections: Vec<String>,
    /// Ids of the built-in checks that test it.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Why no check of a server can test it (a client duty, a production concern); only when
    /// `checks` is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untestable: Option<String>,
    /// What of it the checks leave out, when they test only part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Requirements {
    /// The checklist compiled into the binary.
    pub fn builtin() -> Result<Requirements, String> {
        serde_json::from_str(REQUIREMENTS).map_err(|e| format!("suites/requirements.json: {e}"))
    }

    /// What is wrong with the mapping, given the ids of the built-in checks: ids no check has, a
    /// sentence both tested and marked untestable, numbers out of order. (A sentence with neither
    /// checks nor a reason is not wrong: it is a gap, and [`Requirements::untested`] lists it.)
    pub fn problems(&self, known: &BTreeSet<String>) -> Vec<String> {
        let mut out = Vec::new();
        for (i, item) in self.items.iter().enumerate() {
            let n = item.number;
            if n as usize != i + 1 {
                out.push(format!("item {n} is at position {}: numbers must run 1, 2, 3, ...", i + 1));
            }
            if item.text.trim().is_empty() {
                out.push(format!("item {n} has no text"));
            }
            if !item.checks.is_empty() && item.untestable.is_some() {
                out.push(format!("item {n} names checks and is also marked untestable"));
            }
            let mut seen = BTreeSet::new();
            for id in &item.checks {
                if !known.contains(id) {
                    out.push(format!("item {n} names {id}, which is not a built-in check"));
                }
                if !seen.insert(id) {
                    out.push(format!("item {n} names {id} twice"));
                }
            }
        }
        out
    }

    /// Numbers of the sentences that no check tests and that are not marked untestable.
    pub fn untested(&self) -> Vec<u32> {
        self.items.iter().filter(|i| i.checks.is_empty() && i.untestable.is_none()).map(|i| i.number).collect()
    }
}

/// Ids of every built-in check (the server suites and the kit's synthetic checks), with the
/// profile each belongs to.
pub fn builtin_checks() -> Result<BTreeMap<String, String>, String> {
    let mut suites = loader::builtin().map_err(|e| e.to_string())?;
    suites.push(loader::kit().map_err(|e| e.to_string())?);
    let mut out = BTreeMap::new();
    for s in &suites {
        for suite in &s.doc.suites {
            for t in &suite.tests {
                let profile = t.profile.clone().or_else(|| suite.profile.clone()).unwrap_or_else(|| "core".into());
                out.insert(t.id.clone(), profile);
            }
        }
    }
    Ok(out)
}

/// The coverage as text: every sentence with its checks or its reason, then the gaps.
pub fn to_text(req: &Requirements, checks: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let tested = req.items.iter().filter(|i| !i.checks.is_empty()).count();
    let untestable = req.items.iter().filter(|i| i.untestable.is_some()).count();
    let untested = req.untested();
    let traced: BTreeSet<&str> = req.items.iter().flat_map(|i| i.checks.iter().map(String::as_str)).collect();
    let _ = writeln!(out, "{}", req.source);
    let _ = writeln!(
        out,
        "{} sentences: {tested} tested, {untestable} untestable by a server check, {} not tested; \
         {} of {} built-in checks trace to a sentence\n",
        req.items.len(),
        untested.len(),
        traced.len(),
        checks.len()
    );
    for item in &req.items {
        let sections =
            if item.sections.is_empty() { String::new() } else { format!(" (§{})", item.sections.join(", §")) };
        let _ = writeln!(out, "{:>3}. {}: {}{sections}", item.number, item.party, item.text);
        if !item.checks.is_empty() {
            let _ = writeln!(out, "     tested by {}", item.checks.join(", "));
        }
        if let Some(why) = &item.untestable {
            let _ = writeln!(out, "     untestable: {why}");
        }
        if let Some(note) = &item.note {
            let _ = writeln!(out, "     note: {note}");
        }
        if item.checks.is_empty() && item.untestable.is_none() {
            let _ = writeln!(out, "     NOT TESTED");
        }
    }
    out.push('\n');
    if untested.is_empty() {
        let _ = writeln!(out, "Every testable sentence is tested by at least one check.");
    } else {
        let list: Vec<String> = untested.iter().map(u32::to_string).collect();
        let _ = writeln!(out, "Not tested by any check ({}): {}", untested.len(), list.join(", "));
    }
    out
}

/// `a2a-conform coverage [--json]`: exit 0, or 1 when the mapping names a check that does not exist
/// (the mapping must be fixed).
pub fn run_command(json: bool) -> anyhow::Result<i32> {
    let req = Requirements::builtin().map_err(|e| anyhow::anyhow!(e))?;
    let checks = builtin_checks().map_err(|e| anyhow::anyhow!(e))?;
    let known: BTreeSet<String> = checks.keys().cloned().collect();
    let problems = req.problems(&known);
    if json {
        let value = serde_json::json!({
            "source": req.source,
            "items": req.items,
            "untested": req.untested(),
            "problems": problems,
        });
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(&value)?))?;
    } else {
        print_stdout(&to_text(&req, &checks))?;
    }
    for p in &problems {
        eprintln!("error: suites/requirements.json: {p}");
    }
    Ok(i32::from(!problems.is_empty()))
}

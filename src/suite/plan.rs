//! Which checks run: profile selection, id filters, preconditions from the card and behaviour
//! requirements. A check that does not apply is reported as a skip with its reason, never dropped.

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;

use super::behaviors::{BehaviorMap, Behaviors, MapOrigin};
use super::binding::{Binding, bindings_of, for_binding, step_bindings};
use super::loader::LoadedSuite;
use super::model::Test;
use crate::report::{CheckMeta, Quote, SkipReason, SpecRef};

/// Profiles whose checks are shown but never change the verdict (DESIGN "Profiles").
pub const UNSCORED_PROFILES: &[&str] = &["caps", "resume"];
pub const PROFILES: &[&str] =
    &["core", "streaming", "push", "extended-card", "signatures", "security", "caps", "resume", "legacy"];

/// One check, ready to run, to be reported as skipped, or unreadable.
#[derive(Debug, Clone)]
pub struct PlannedCheck {
    /// Suite file name.
    pub suite: String,
    /// The test as written.
    pub test: std::sync::Arc<Test>,
    /// Resolved profile.
    pub profile: String,
    /// Counts toward the verdict.
    pub scored: bool,
    pub disposition: Disposition,
    /// The binding its requests go over (a check about the card alone: JSON-RPC's, as a check
    /// graded once).
    pub binding: Binding,
}

/// Whether a planned check runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disposition {
    Run,
    /// It does not apply, for this reason.
    Skip(SkipReason, String),
    /// Its suite data cannot be read as written (file, JSON pointer, why): it cannot be decided.
    Invalid(String),
    /// It needs what another check found broken (`cause`), so it cannot be decided.
    Blocked {
        cause: String,
        detail: String,
    },
}

/// True when the check talks to the agent's JSON-RPC interface (anything but the card).
pub fn uses_interface(test: &Test) -> bool {
    if let Some(p) = &test.probe {
        let extended =
            test.probe_params.as_ref().and_then(|v| v.get("card")).and_then(Value::as_str) == Some("extended");
        return p != "card_conditional_get" && (p != "card_signatures" || extended);
    }
    test.steps.iter().any(|s| {
        let to_card = s.operation.as_deref() == Some("get_agent_card")
            || s.raw.as_ref().is_some_and(|r| r.path.starts_with("/.well-known/") || r.path.starts_with("http"));
        (s.operation.is_some() || s.raw.is_some()) && !to_card
    })
}

impl PlannedCheck {
    /// What the check's result will carry, whatever its outcome.
    pub fn meta(&self) -> CheckMeta {
        let t = &self.test;
        CheckMeta {
            id: t.id.clone(),
            title: t.name.clone(),
            suite: self.suite.clone(),
            profile: self.profile.clone(),
            level: t.level,
            spec: spec_ref(t),
            scored: self.scored,
        }
    }
}

/// The check's quotes as a report carries them; an ACTS test without quotes shows its description.
fn spec_ref(t: &Test) -> SpecRef {
    let section = t.section.clone().or_else(|| t.spec_ref.clone()).unwrap_or_default();
    let quotes: Vec<Quote> = t
        .quotes()
        .into_iter()
        .map(|q| Quote { text: q.text, source: q.source.as_str().to_owned(), section: q.section })
        .collect();
    if quotes.is_empty() {
        let requirement = t.description.clone().unwrap_or_default();
        return SpecRef { section, requirement, quotes, interpretation: t.interpretation.clone() };
    }
    SpecRef::quoted(section, quotes, t.interpretation.clone())
}

/// How to choose checks.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Profiles to run; empty means all.
    pub profiles: Vec<String>,
    /// Id globs to keep (empty: all).
    pub only: Vec<String>,
    /// Id globs to drop.
    pub exclude: Vec<String>,
    /// The agent implements the ACTS §11 behaviour contract.
    pub behaviors: Behaviors,
    /// The user supplied credentials (`--header`).
    pub credentials: bool,
    /// The user supplied a second caller's credentials (`--header-b`).
    pub second_caller: bool,
    /// The bindings graded (empty: JSON-RPC alone): each binding-neutral check once for each.
    pub bindings: Vec<Binding>,
    /// The bindings not graded because the card declares no interface of theirs (not because
    /// `--binding` left them out), with what the card declares instead: their checks skip as
    /// `capability_not_declared`, saying so.
    pub undeclared: Vec<(Binding, String)>,
}

fn globs(patterns: &[String]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).map_err(|e| format!("bad id glob {p:?}: {e}"))?);
    }
    b.build().map_err(|e| e.to_string())
}

/// The card's value at `capabilities.<name>` (booleans: absent means false, §3.3.4).
fn capability(card: &Value, name: &str) -> Value {
    card.get("capabilities").and_then(|c| c.get(name)).cloned().unwrap_or(Value::Bool(false))
}

/// Builds the plan: every test of every suite, in file order.
pub fn plan(suites: &[LoadedSuite], sel: &Selection, card: Option<&Value>) -> Result<Vec<PlannedCheck>, String> {
    for p in &sel.profiles {
        if !PROFILES.contains(&p.as_str()) {
            return Err(format!("unknown profile {p:?}; known: {}", PROFILES.join(", ")));
        }
    }
    let only = globs(&sel.only)?;
    let exclude = globs(&sel.exclude)?;
    let selected: Vec<Binding> = if sel.bindings.is_empty() { vec![Binding::JsonRpc] } else { sel.bindings.clone() };
    // The checks graded over more than JSON-RPC: a clone's prerequisites follow it to its binding.
    let neutral: std::collections::HashSet<&str> = suites
        .iter()
        .flat_map(|s| s.doc.suites.iter().flat_map(|x| x.tests.iter()))
        .filter(|t| uses_interface(t) && bindings_of(t).len() > 1)
        .map(|t| t.id.as_str())
        .collect();
    // Checks of the JSON-RPC binding's own answers (an event's envelope, an HTTP status of its
    // own): suite steps graded over JSON-RPC only. A probe graded once speaks for the agent, and
    // a check whose steps name their bindings compares them.
    let jsonrpc_own: std::collections::HashSet<&str> = suites
        .iter()
        .flat_map(|s| s.doc.suites.iter().flat_map(|x| x.tests.iter()))
        .filter(|t| {
            uses_interface(t)
                && t.probe.is_none()
                && !t.synthetic
                && step_bindings(t).is_empty()
                && bindings_of(t) == [Binding::JsonRpc]
        })
        .map(|t| t.id.as_str())
        .collect();
    let mut out = Vec::new();
    for s in suites {
        for (si, suite) in s.doc.suites.iter().enumerate() {
            for (ti, test) in suite.tests.iter().enumerate() {
                let profile = test.profile.clone().or_else(|| suite.profile.clone()).unwrap_or_else(|| "core".into());
                let scored = test.scored.unwrap_or(!UNSCORED_PROFILES.contains(&profile.as_str()));
                // A check of the card alone is the same over every binding: graded once.
                let over: Vec<Binding> = match bindings_of(test) {
                    // A transport the kit does not speak: skip_reason says so.
                    b if b.is_empty() => vec![Binding::JsonRpc],
                    b if uses_interface(test) || test.synthetic => b,
                    _ => vec![Binding::JsonRpc],
                };
                let graded: Vec<Binding> = over.iter().copied().filter(|b| selected.contains(b)).collect();
                let (bindings, unselected) = match graded.is_empty() {
                    // A check about a binding's own answers (a synthetic check naming its
                    // transport) has nothing to judge where that binding is not graded.
                    true if !uses_interface(test) && (!test.synthetic || test.transport.is_empty()) => {
                        (vec![Binding::JsonRpc], None)
                    }
                    true => (vec![over[0]], Some(over[0])),
                    false => (graded, None),
                };
                let missing = step_bindings(test).into_iter().find(|b| !selected.contains(b));
                for binding in bindings {
                    let test = for_binding(test, binding, &|id| neutral.contains(id), &|id| jsonrpc_own.contains(id));
                    // A filter or an unselected profile wins: the user asked not to hear about it.
                    // A binding not graded comes next: whatever else the check would need, it is
                    // not about this agent.
                    let skip = match skip_reason(&test, &profile, sel, &only, &exclude, card) {
                        s @ Some((SkipReason::Filtered | SkipReason::ProfileNotSelected, _)) => s,
                        s => unselected.map(|b| not_graded(sel, b)).or(s),
                    }
                    .or_else(|| {
                        missing.map(|b| {
                            let (reason, why) = not_graded(sel, b);
                            (reason, format!("it compares the bindings, and {} is not graded: {why}", b.as_str()))
                        })
                    });
                    let disposition = match (skip, s.invalid.get(&(si, ti))) {
                        (Some((r @ (SkipReason::Filtered | SkipReason::ProfileNotSelected), d)), _) => {
                            Disposition::Skip(r, d)
                        }
                        (_, Some(why)) => Disposition::Invalid(why.clone()),
                        (Some((r, d)), None) => Disposition::Skip(r, d),
                        (None, None) => Disposition::Run,
                    };
                    out.push(PlannedCheck {
                        suite: s.name.clone(),
                        test,
                        profile: profile.clone(),
                        scored,
                        disposition,
                        binding,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Why a check of binding `b` alone is not graded: the card declares no such interface (a fact of
/// the agent), or the user left the binding out.
fn not_graded(sel: &Selection, b: Binding) -> (SkipReason, String) {
    match sel.undeclared.iter().find(|(u, _)| *u == b) {
        Some((_, why)) => (SkipReason::CapabilityNotDeclared, why.clone()),
        None => (SkipReason::ProfileNotSelected, format!("binding {} not selected (--binding)", b.as_str())),
    }
}

fn skip_reason(
    test: &Test,
    profile: &str,
    sel: &Selection,
    only: &GlobSet,
    exclude: &GlobSet,
    card: Option<&Value>,
) -> Option<(SkipReason, String)> {
    if (!sel.only.is_empty() && !only.is_match(&test.id)) || exclude.is_match(&test.id) {
        return Some((SkipReason::Filtered, "excluded by --only / --exclude".into()));
    }
    if !sel.profiles.is_empty() && !sel.profiles.iter().any(|p| p == profile) {
        return Some((SkipReason::ProfileNotSelected, format!("profile {profile} not selected")));
    }
    let server_steps = test.steps.iter().any(|s| s.operation.is_some() || s.raw.is_some());
    if test.probe.is_none() && !server_steps && !test.synthetic {
        return Some((
            SkipReason::ProfileNotSelected,
            "a client-side test (ACTS §10): it grades clients, not agents".into(),
        ));
    }
    if !test.transport.is_empty() && test.transport.iter().all(|t| Binding::parse(t).is_none()) {
        return Some((
            SkipReason::ProfileNotSelected,
            format!("binding {} not tested (this kit checks JSON-RPC and HTTP+JSON)", test.transport.join(", ")),
        ));
    }
    if let (Some(pre), Some(card)) = (&test.preconditions, card) {
        for (name, want) in &pre.capabilities {
            let have = capability(card, name);
            if &have != want {
                return Some((
                    SkipReason::CapabilityNotDeclared,
                    format!("capabilities.{name} is {have}, needs {want}"),
                ));
            }
        }
        if pre.security == Some(true) && !declares_security(card) {
            return Some((
                SkipReason::CapabilityNotDeclared,
                "the card declares no securityRequirements, so no credential is required".into(),
            ));
        }
        for uri in &pre.extensions {
            let declared = card
                .pointer("/capabilities/extensions")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|e| e.get("uri").and_then(Value::as_str) == Some(uri)));
            if !declared {
                return Some((SkipReason::CapabilityNotDeclared, format!("extension {uri} not declared")));
            }
        }
    }
    let missing: Vec<&str> =
        test.requires_behaviors.iter().filter(|b| !sel.behaviors.provides(b)).map(String::as_str).collect();
    if !missing.is_empty() {
        let missing = missing.join(", ");
        // An agent that answered every message the kit tried with a Message took the freedom of
        // §3.1.1 on each: a task behaviour does not apply to what it was shown to do, as a check of
        // the neutral prompt's task does not apply to its Message answer.
        if let Behaviors::Map(BehaviorMap { origin: MapOrigin::Found { seen, messages_only: true, .. }, .. }) =
            &sel.behaviors
        {
            return Some((
                SkipReason::FreedomTaken,
                format!(
                    "needs an agent that does {missing}, and the agent answered every message the kit tried \
                     with a Message (§3.1.1: it MAY return a direct Message): {}; if one of its messages makes \
                     a task, map it with --behaviors FILE",
                    seen.join("; ")
                ),
            ));
        }
        let why = match &sel.behaviors {
            Behaviors::Map(BehaviorMap { origin: MapOrigin::Found { seen, .. }, .. }) => format!(
                "needs an agent that does {missing}, and no message the kit tried did: {}; map one that does \
                 with --behaviors FILE",
                seen.join("; ")
            ),
            Behaviors::Map(m) => format!("needs an agent that does {missing} ({} does not map it)", m.source),
            _ => format!(
                "needs an agent that does {missing} (pass --behaviors acts if the agent implements the ACTS \
                 contract, or map it with --behaviors FILE)"
            ),
        };
        return Some((SkipReason::BehaviorNotAvailable, why));
    }
    if let Some(why) = missing_follow_up(test, &sel.behaviors) {
        return Some((SkipReason::BehaviorNotAvailable, why));
    }
    if test.runner_requirements.iter().any(|r| r == "auth_credentials") && !sel.credentials {
        return Some((SkipReason::CredentialsNotSupplied, "needs credentials; pass --header".into()));
    }
    if test.runner_requirements.iter().any(|r| r == "second_caller") && !sel.second_caller {
        // With no security declared, callers are not told apart: there is nothing to isolate unless
        // the user says otherwise by passing a second caller.
        if card.is_some_and(|c| !declares_security(c)) {
            return Some((
                SkipReason::CapabilityNotDeclared,
                "the card declares no securityRequirements, so callers are not told apart (pass --header-b to \
                 test isolation anyway)"
                    .into(),
            ));
        }
        return Some((
            SkipReason::CredentialsNotSupplied,
            "needs a second caller's credentials; pass --header-b (the first caller's are --header)".into(),
        ));
    }
    None
}

fn declares_security(card: &Value) -> bool {
    card.get("securityRequirements").and_then(Value::as_array).is_some_and(|a| !a.is_empty())
}

/// A check that sends `{{followup}}` or `{{again}}` needs its behaviour to define that follow-up.
fn missing_follow_up(test: &Test, behaviors: &Behaviors) -> Option<String> {
    let text = serde_json::to_string(&test.steps).unwrap_or_default();
    let f = behaviors.follow_ups(&test.requires_behaviors);
    let lacks = |var: &str, have: &Option<String>| text.contains(&format!("{{{{{var}}}}}")) && have.is_none();
    let name = test.requires_behaviors.join(", ");
    let map = match behaviors {
        Behaviors::Map(BehaviorMap { origin: MapOrigin::Found { .. }, .. }) => {
            "the kit saw the behaviour but no follow-up it tried did that; give one as "
        }
        _ => "",
    };
    if lacks("followup", &f.followup) {
        return Some(format!("needs a follow-up that ends the interruption of {name} ({map}`followup` in the map)"));
    }
    if lacks("again", &f.again) {
        return Some(format!("needs a follow-up that keeps {name} interrupted ({map}`again` in the map)"));
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn disposition(id: &str, sel: &Selection, card: &Value) -> Disposition {
        let suites = super::super::loader::builtin().expect("built-in suites load");
        let planned = plan(&suites, sel, Some(card)).expect("plan");
        planned.into_iter().find(|p| p.test.id == id).expect("check exists").disposition
    }

    /// Isolation needs callers the agent tells apart: without declared security it does not apply,
    /// with it the missing second credential is the user's to supply.
    #[test]
    fn tenant_checks_skip_by_what_the_card_declares() {
        let sel = Selection::default();
        let open = json!({"capabilities": {}});
        let secured = json!({"capabilities": {}, "securityRequirements": [{"schemes": {"bearer": {}}}]});
        assert!(matches!(
            disposition("KIT-TENANT-001", &sel, &open),
            Disposition::Skip(SkipReason::CapabilityNotDeclared, _)
        ));
        assert!(matches!(
            disposition("KIT-TENANT-001", &sel, &secured),
            Disposition::Skip(SkipReason::CredentialsNotSupplied, _)
        ));
        let both = Selection { second_caller: true, ..Selection::default() };
        assert_eq!(disposition("KIT-TENANT-001", &both, &open), Disposition::Run);
    }

    /// A JSON-RPC check against an agent whose card declares HTTP+JSON alone does not apply (the
    /// card says so); against one the user narrowed to HTTP+JSON, it was not selected.
    #[test]
    fn a_binding_the_card_does_not_declare_skips_as_not_declared() {
        let card = json!({"capabilities": {}});
        let why = "the card declares no A2A 1.0 JSONRPC interface";
        let rest_only = Selection {
            bindings: vec![Binding::HttpJson],
            undeclared: vec![(Binding::JsonRpc, why.into())],
            ..Selection::default()
        };
        assert_eq!(
            disposition("KIT-ERR-004", &rest_only, &card),
            Disposition::Skip(SkipReason::CapabilityNotDeclared, why.into())
        );
        let narrowed = Selection { bindings: vec![Binding::HttpJson], ..Selection::default() };
        assert!(matches!(
            disposition("KIT-ERR-004", &narrowed, &card),
            Disposition::Skip(SkipReason::ProfileNotSelected, d) if d.contains("--binding")
        ));
    }

    /// A task behaviour no message showed: a freedom taken when every message got a Message, a map
    /// to write when some made a task.
    #[test]
    fn a_task_behaviour_of_an_agent_that_only_answers_with_messages_does_not_apply() {
        let card = json!({"capabilities": {}});
        let found = |messages_only: bool, seen: &str| Selection {
            behaviors: Behaviors::Map(BehaviorMap {
                origin: MapOrigin::Found { seen: vec![seen.into()], slow: Vec::new(), messages_only },
                ..BehaviorMap::default()
            }),
            ..Selection::default()
        };
        assert!(matches!(
            disposition("CORE-CANCEL-001", &found(true, "\"hello\": a Message"), &card),
            Disposition::Skip(SkipReason::FreedomTaken, d) if d.contains("every message the kit tried with a Message")
                && d.contains("\"hello\": a Message")
        ));
        assert!(matches!(
            disposition("CORE-CANCEL-001", &found(false, "\"hello\": COMPLETED"), &card),
            Disposition::Skip(SkipReason::BehaviorNotAvailable, d) if d.contains("no message the kit tried did")
        ));
    }
}

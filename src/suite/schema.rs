//! The spec's JSON Schema (copied in `fixtures/spec/`, Apache-2.0), compiled into the binary: every
//! payload the checker receives is validated against it, independently of the mock's typed model.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value, json};

const SCHEMA_TEXT: &str = include_str!("../../fixtures/spec/a2a.schema.json");

/// Most violations reported for one value.
const MAX_VIOLATIONS: usize = 8;

fn defs() -> &'static Map<String, Value> {
    static DEFS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFS.get_or_init(|| {
        let mut v: Value = serde_json::from_str(SCHEMA_TEXT).expect("the embedded schema is JSON");
        open_objects(&mut v);
        v.get("$defs").and_then(Value::as_object).cloned().expect("the embedded schema has $defs")
    })
}

/// Drops `additionalProperties: false` everywhere: "Implementations SHOULD ignore unrecognized
/// fields" (§5.7), so a member the schema does not name is no violation of the data model (the
/// checks for leftover 0.3 members say so at the level the spec gives them).
fn open_objects(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.get("additionalProperties") == Some(&Value::Bool(false)) {
                m.remove("additionalProperties");
            }
            m.values_mut().for_each(open_objects);
        }
        Value::Array(a) => a.iter_mut().for_each(open_objects),
        _ => {}
    }
}

fn validator(def: &str) -> Option<Arc<jsonschema::Validator>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(v) = cache.get(def) {
        return Some(v.clone());
    }
    if !defs().contains_key(def) {
        return None;
    }
    let wrapper = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/$defs/{def}"),
        "$defs": defs(),
    });
    let compiled = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&wrapper)
        .expect("every definition of the embedded schema compiles");
    let compiled = Arc::new(compiled);
    cache.insert(def.to_owned(), compiled.clone());
    Some(compiled)
}

/// Violations of `#/$defs/<def>` as `(JSON pointer, message)`, at most a handful. An unknown
/// definition is reported as a violation so that a typo in a suite cannot pass silently.
pub fn violations(def: &str, value: &Value) -> Vec<(String, String)> {
    let Some(v) = validator(def) else {
        return vec![(String::new(), format!("the spec schema has no definition {def:?}"))];
    };
    v.iter_errors(value).take(MAX_VIOLATIONS).map(|e| (e.instance_path().to_string(), e.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catches_a_wrong_enum_spelling() {
        let bad = json!({"id": "t", "status": {"state": "completed"}});
        let v = violations("Task", &bad);
        assert!(v.iter().any(|(p, _)| p == "/status/state"), "{v:?}");
        assert!(violations("Task", &json!({"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}})).is_empty());
    }

    #[test]
    fn unknown_members_are_not_violations() {
        let task = json!({"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}, "futureField": 1});
        assert!(violations("Task", &task).is_empty());
        let wrong = json!({"id": 5, "status": {"state": "TASK_STATE_COMPLETED"}, "futureField": 1});
        assert!(!violations("Task", &wrong).is_empty(), "known members are still checked");
    }

    #[test]
    fn unknown_definitions_are_violations() {
        assert_eq!(violations("NoSuchThing", &json!({})).len(), 1);
    }
}

// Include with `#[path = "common/schema.rs"] mod schema;` from a tests/*.rs file.
//! Validation helpers for tests: the A2A 1.0 JSON Schema (the copy in `fixtures/spec/`, compiled
//! into the kit as `a2a_conform::suite::schema`) and this repository's own schema files.
#![allow(dead_code)]

use serde_json::Value;

/// Validates `value` against `#/$defs/<def>` of the spec schema. The error lists the violations with
/// their instance paths (a JSON pointer; `(root)` for the value itself).
pub fn validate(def: &str, value: &Value) -> Result<(), String> {
    let errors: Vec<String> = a2a_conform::suite::schema::violations(def, value)
        .into_iter()
        .map(|(path, msg)| format!("at {}: {msg}", if path.is_empty() { "(root)" } else { &path }))
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(format!(
        "value does not match `#/$defs/{def}` ({} error(s) shown):\n  {}\nvalue: {}",
        errors.len(),
        errors.join("\n  "),
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    ))
}

/// Panics with the validation report unless `value` matches `#/$defs/<def>`.
#[track_caller]
pub fn assert_valid(def: &str, value: &Value) {
    if let Err(e) = validate(def, value) {
        panic!("{e}");
    }
}

/// Compiles one of this repository's own JSON Schema files (path relative to the crate root), with
/// formats asserted.
pub fn compile_file(relative: &str) -> jsonschema::Validator {
    let path = format!("{}/{relative}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"));
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{path} does not compile: {e}"))
}

/// Every violation of `value`, as `at <instance path>: <message>`.
pub fn violations_of(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator.iter_errors(value).map(|e| format!("at {}: {e}", e.instance_path())).collect()
}

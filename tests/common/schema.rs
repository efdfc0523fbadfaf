// Include with `#[path = "common/schema.rs"] mod schema;` from a tests/*.rs file, or `pub mod schema;` in tests/common/mod.rs.
//! Validation of JSON values against the A2A 1.0 JSON Schema copied at `fixtures/spec/a2a.schema.json`.
//!
//! Definitions live under `$defs`, keyed by proto message name (`Task`, `StreamResponse`, ...). Each
//! definition is compiled on first use into a validator for the wrapper schema
//! `{"$ref": "#/$defs/<def>", "$defs": <all defs>}` and cached for the rest of the test binary.
//! `format` keywords (`date-time` on `Timestamp`) are asserted, not just annotated.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value, json};

/// Where the schema is read from: the crate's own fixtures, never the shared spec directory.
pub const SCHEMA_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/spec/a2a.schema.json");

/// The whole schema document, loaded and parsed once.
pub fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let text = std::fs::read_to_string(SCHEMA_PATH).unwrap_or_else(|e| panic!("cannot read {SCHEMA_PATH}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{SCHEMA_PATH} is not JSON: {e}"))
    })
}

/// The `$defs` map of the schema.
pub fn defs() -> &'static Map<String, Value> {
    schema().get("$defs").and_then(Value::as_object).unwrap_or_else(|| panic!("{SCHEMA_PATH} has no `$defs` object"))
}

/// Whether the schema defines `#/$defs/<def>`.
pub fn has_def(def: &str) -> bool {
    defs().contains_key(def)
}

/// The compiled validator of one definition, built on first use.
fn validator(def: &str) -> Result<Arc<jsonschema::Validator>, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    // A panic while holding the lock (in another test thread) leaves the map itself intact.
    let mut cache = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(v) = cache.get(def) {
        return Ok(Arc::clone(v));
    }
    if !has_def(def) {
        return Err(format!("{SCHEMA_PATH} has no definition `#/$defs/{def}`"));
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
        .map_err(|e| format!("cannot compile `#/$defs/{def}`: {e}"))?;
    let compiled = Arc::new(compiled);
    cache.insert(def.to_owned(), Arc::clone(&compiled));
    Ok(compiled)
}

/// Validates `value` against `#/$defs/<def>`. The error lists every violation with its instance path
/// (a JSON pointer; `(root)` for the value itself).
pub fn validate(def: &str, value: &Value) -> Result<(), String> {
    let validator = validator(def)?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() { "(root)".to_owned() } else { path };
            format!("at {path}: {e}")
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "value does not match `#/$defs/{def}` ({} error(s)):\n  {}\nvalue: {}",
            errors.len(),
            errors.join("\n  "),
            serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
        ))
    }
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

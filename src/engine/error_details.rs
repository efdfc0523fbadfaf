//! §9.5 on every JSON-RPC error of a run, not on one probe: `error.data`, when present, is an
//! array of objects each carrying `@type`. An agent whose GetTask error is well formed and whose
//! validation or version errors carry a bare object shows it only here.

use serde_json::Value;

use crate::client::http::{HttpExchange, HttpRequest};

/// Most faulty errors kept for the finding.
const MAX_KEPT: usize = 16;

/// What is wrong with one error's details.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `data` is present and no array (CORE-ERR-007).
    NotAnArray,
    /// An element of the `data` array is no object with a string `@type` (CORE-ERR-008).
    Untyped,
}

/// One error answer whose details break §9.5.
#[derive(Debug, Clone)]
pub struct FaultyError {
    /// The check and step that received it.
    pub origin: String,
    pub code: Option<i64>,
    pub data: Value,
}

/// What the run's JSON-RPC errors showed of their details, per fault.
#[derive(Debug, Default)]
pub struct DetailsLedger {
    /// Errors with an array `data` (judged for `@type`).
    pub arrays: usize,
    /// Errors with any `data` (judged for being an array).
    pub with_data: usize,
    pub not_array: Vec<FaultyError>,
    pub not_array_total: usize,
    pub untyped: Vec<FaultyError>,
    pub untyped_total: usize,
}

impl DetailsLedger {
    /// Judges one exchange when it is a JSON-RPC call that asked for A2A 1.0 and got a JSON-RPC
    /// error: a request naming another version, or none (§3.6.2: read as 0.3), may be answered by
    /// that version's rules.
    pub fn note(&mut self, origin: &str, x: &HttpExchange) {
        if !asks_for_1_0(&x.request) {
            return;
        }
        let Ok(Value::Object(answer)) = serde_json::from_slice::<Value>(&x.body) else { return };
        if answer.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return;
        }
        let Some(error) = answer.get("error").and_then(Value::as_object) else { return };
        let Some(data) = error.get("data") else { return };
        let kept = || FaultyError {
            origin: origin.to_owned(),
            code: error.get("code").and_then(Value::as_i64),
            data: data.clone(),
        };
        self.with_data += 1;
        match judge(data) {
            None => {}
            Some(Fault::NotAnArray) => {
                self.not_array_total += 1;
                if self.not_array.len() < MAX_KEPT {
                    self.not_array.push(kept());
                }
            }
            Some(Fault::Untyped) => {
                self.untyped_total += 1;
                if self.untyped.len() < MAX_KEPT {
                    self.untyped.push(kept());
                }
            }
        }
        if data.is_array() {
            self.arrays += 1;
        }
    }
}

/// Whether a request names A2A 1.0, in the `A2A-Version` header or request parameter (§3.6.1): a
/// request naming another version, or none (§3.6.2: read as 0.3), may be answered by that
/// version's rules.
pub fn asks_for_1_0(request: &HttpRequest) -> bool {
    let is_1_0 = |v: &str| v.trim() == "1.0" || v.trim().starts_with("1.0.");
    let header = request.headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("a2a-version") && is_1_0(v));
    header
        || reqwest::Url::parse(&request.url)
            .is_ok_and(|u| u.query_pairs().any(|(k, v)| k.eq_ignore_ascii_case("a2a-version") && is_1_0(&v)))
}

/// What breaks §9.5 in an error's `data`, if anything: "array of objects, each containing a `@type`
/// key".
pub fn judge(data: &Value) -> Option<Fault> {
    let Some(items) = data.as_array() else { return Some(Fault::NotAnArray) };
    let typed = |d: &Value| d.get("@type").is_some_and(Value::is_string);
    (!items.iter().all(typed)).then_some(Fault::Untyped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exchange(version: Option<&str>, answer: Value) -> HttpExchange {
        let mut request = HttpRequest::get("http://127.0.0.1:1/");
        request.headers.push(("content-type".into(), "application/json".into()));
        if let Some(v) = version {
            request.headers.push(("A2A-Version".into(), v.into()));
        }
        HttpExchange::answered(request, answer.to_string().into_bytes())
    }

    #[test]
    fn every_error_asking_for_1_0_is_judged_by_its_data() {
        let mut l = DetailsLedger::default();
        let err =
            |data: Value| json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "m", "data": data}});
        l.note("A / s", &exchange(Some("1.0"), err(json!([{"@type": "type.googleapis.com/google.rpc.BadRequest"}]))));
        l.note(
            "A / s",
            &exchange(Some("1.0"), json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "m"}})),
        );
        assert_eq!((l.with_data, l.not_array_total, l.untyped_total), (1, 0, 0), "no data: nothing to judge");
        l.note("B / s", &exchange(Some("1.0"), err(json!({"field": "x"}))));
        l.note("C / s", &exchange(Some("1.0"), err(json!([{"reason": "X"}]))));
        assert_eq!((l.with_data, l.arrays, l.not_array_total, l.untyped_total), (3, 2, 1, 1));
        assert_eq!(l.not_array[0].origin, "B / s");
        assert_eq!(l.untyped[0].code, Some(-32602));
        l.note("D / s", &exchange(Some("0.3"), err(json!({"field": "x"}))));
        l.note("D / s", &exchange(None, err(json!({"field": "x"}))));
        assert_eq!(l.with_data, 3, "a request for another version, or none, is that version's");
    }
}

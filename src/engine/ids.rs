//! JSON-RPC 2.0 §5 on every answer of a run, not on one probe: the response's `id` is the
//! request's. An agent that echoes the id on the path one check probes and answers `"id": null`
//! on every other error path shows it only here.

use serde_json::Value;

use crate::client::http::HttpExchange;

/// Largest request body an agent is assumed to read before answering (bigger ones are the caps
/// probes', which an agent may refuse unread).
const MAX_READ_BODY: usize = 1024 * 1024;

/// Longest string id judged.
const MAX_ID_LEN: usize = 256;

/// Most mismatches kept for the finding.
const MAX_KEPT: usize = 16;

/// What the run's JSON-RPC answers showed about their ids.
#[derive(Debug, Default)]
pub struct IdLedger {
    /// Answers whose id the kit could judge.
    pub judged: usize,
    /// The ones that did not echo the request's id (the first few).
    pub wrong: Vec<WrongId>,
    /// How many did not, all told.
    pub wrong_total: usize,
}

/// One answer whose id is not the request's.
#[derive(Debug, Clone)]
pub struct WrongId {
    /// The check and step that received it.
    pub origin: String,
    pub sent: Value,
    /// `None`: the answer had no `id` member.
    pub got: Option<Value>,
    /// The answer's error code, when it was an error.
    pub code: Option<i64>,
}

impl IdLedger {
    /// Judges one exchange when it is a JSON-RPC call and a JSON-RPC answer.
    pub fn note(&mut self, origin: &str, x: &HttpExchange) {
        // A request the agent may refuse before reading its body (another content type, a body
        // over a size limit) may be answered without its id: the id was never detected.
        let json = x.request.headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("content-type") && v.to_ascii_lowercase().starts_with("application/json")
        });
        if !json || x.request.body.as_ref().is_none_or(|b| b.len() > MAX_READ_BODY) {
            return;
        }
        let Some(sent) = request_id(x.request.body.as_deref()) else { return };
        let Ok(Value::Object(answer)) = serde_json::from_slice::<Value>(&x.body) else { return };
        if !answer.contains_key("result") && !answer.contains_key("error") {
            return;
        }
        let code = answer.get("error").and_then(|e| e.get("code")).and_then(Value::as_i64);
        let got = answer.get("id");
        // "If there was an error in detecting the id in the Request object (e.g. Parse
        // error/Invalid Request), it MUST be Null": for those two codes null is also right.
        let null_allowed = matches!(code, Some(-32700 | -32600)) && got == Some(&Value::Null);
        self.judged += 1;
        if got.is_some_and(|g| same_id(g, &sent)) || null_allowed {
            return;
        }
        self.wrong_total += 1;
        if self.wrong.len() < MAX_KEPT {
            self.wrong.push(WrongId { origin: origin.to_owned(), sent, got: got.cloned(), code });
        }
    }
}

/// The id of a request body that is one JSON-RPC call with a well-formed id (a string, a number or
/// null); `None` for a notification, a batch, or a body the kit made unreadable on purpose.
fn request_id(body: Option<&[u8]>) -> Option<Value> {
    let Ok(Value::Object(req)) = serde_json::from_slice::<Value>(body?) else { return None };
    if req.get("jsonrpc") != Some(&Value::String("2.0".into())) || !req.get("method").is_some_and(Value::is_string) {
        return None;
    }
    match req.get("id")? {
        // An id of the caps probes' length may be refused as such, unread.
        Value::String(s) if s.len() > MAX_ID_LEN => None,
        id @ (Value::String(_) | Value::Number(_) | Value::Null) => Some(id.clone()),
        _ => None,
    }
}

/// Numbers compare by value (1 and 1.0 are one id).
fn same_id(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::http::HttpRequest;
    use serde_json::json;

    fn exchange(req: Value, answer: Value) -> HttpExchange {
        let mut request = HttpRequest::get("http://127.0.0.1:1/");
        request.headers.push(("content-type".into(), "application/json".into()));
        request.body = Some(req.to_string().into_bytes().into());
        HttpExchange::answered(request, answer.to_string().into_bytes())
    }

    fn call(id: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "GetTask", "params": {}})
    }

    #[test]
    fn every_answer_must_echo_its_request_id() {
        let mut l = IdLedger::default();
        l.note("a", &exchange(call(json!("x")), json!({"jsonrpc": "2.0", "id": "x", "result": {}})));
        l.note("b", &exchange(call(json!(7)), json!({"jsonrpc": "2.0", "id": 7.0, "error": {"code": -32001}})));
        assert_eq!((l.judged, l.wrong_total), (2, 0));
        l.note("c", &exchange(call(json!("y")), json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001}})));
        l.note("d", &exchange(call(json!("z")), json!({"jsonrpc": "2.0", "error": {"code": -32602}})));
        assert_eq!((l.judged, l.wrong_total), (4, 2));
        assert_eq!(l.wrong[1].got, None);
    }

    #[test]
    fn null_is_right_where_the_id_could_not_be_detected_and_odd_requests_are_not_judged() {
        let mut l = IdLedger::default();
        l.note("a", &exchange(call(json!("x")), json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600}})));
        l.note(
            "b",
            &exchange(json!({"jsonrpc": "2.0", "id": {"o": 1}, "method": "GetTask"}), json!({"id": null, "error": {}})),
        );
        l.note("c", &exchange(json!([call(json!(1))]), json!([{"id": 1, "result": {}}])));
        l.note("d", &exchange(json!({"jsonrpc": "2.0", "method": "GetTask"}), json!({"id": 3, "result": {}})));
        let mut plain = exchange(call(json!(1)), json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603}}));
        plain.request.headers = vec![("Content-Type".into(), "text/plain".into())];
        l.note("e", &plain);
        assert_eq!((l.judged, l.wrong_total), (1, 0));
    }
}

//! §5.4 on every HTTP+JSON error of a run: an answer that names an A2A error carries the HTTP
//! status §5.4 maps that error to. REST-ERR-002 probes one error (a missing task, 404); an agent
//! that answers a stream it does not offer with 501, or a version it refuses with 500, shows it
//! only on the paths the other checks took.

use serde_json::Value;

use super::error_details::asks_for_1_0;
use crate::client::http::HttpExchange;
use crate::client::rest::{a2a_error, is_error, statuses_in_1_0};

/// Most faulty errors kept for the finding.
const MAX_KEPT: usize = 16;

/// One A2A error answered with a status §5.4 does not give it.
#[derive(Debug, Clone)]
pub struct MisStatused {
    /// The check and step that received it.
    pub origin: String,
    /// `POST /message:stream`: the request, without host or query.
    pub request: String,
    pub status: u16,
    /// The JSON-RPC code of the A2A error the answer names.
    pub code: i64,
}

/// What the run's HTTP+JSON A2A errors showed of their status.
#[derive(Debug, Default)]
pub struct StatusLedger {
    /// Answers that named an A2A error (each judged).
    pub judged: usize,
    pub faulty: Vec<MisStatused>,
    /// How many were answered with a wrong status, by JSON-RPC code (the kept ones and the rest).
    pub faulty_by_code: std::collections::BTreeMap<i64, usize>,
}

impl StatusLedger {
    /// Judges one exchange when it is an HTTP+JSON request that asked for A2A 1.0 and got an
    /// error body that names an A2A error ([`a2a_error`]: its ErrorInfo reason, or a status name
    /// that spells one). A JSON-RPC call or answer is not this binding's (its HTTP status is
    /// unspecified, digest §14); a request for another version, or none, may be answered by
    /// that version's rules.
    pub fn note(&mut self, origin: &str, x: &HttpExchange) {
        if !asks_for_1_0(&x.request) || is_json_rpc(x.request.body.as_deref()) {
            return;
        }
        let Ok(body) = serde_json::from_slice::<Value>(&x.body) else { return };
        if body.get("jsonrpc").is_some() {
            return;
        }
        let Some(code) = a2a_error(x.status, &body).filter(|_| is_error(x.status, &body)) else { return };
        let due = statuses_in_1_0(code);
        if due.is_empty() {
            return;
        }
        self.judged += 1;
        if due.contains(&x.status) {
            return;
        }
        *self.faulty_by_code.entry(code).or_default() += 1;
        if self.faulty.len() < MAX_KEPT {
            let path =
                reqwest::Url::parse(&x.request.url).map_or_else(|_| x.request.url.clone(), |u| u.path().to_owned());
            self.faulty.push(MisStatused {
                origin: origin.to_owned(),
                request: format!("{} {path}", x.request.method),
                status: x.status,
                code,
            });
        }
    }
}

/// Whether a request body is a JSON-RPC call (or batch of them).
fn is_json_rpc(body: Option<&[u8]>) -> bool {
    let Some(Ok(v)) = body.map(serde_json::from_slice::<Value>) else { return false };
    let call = |v: &Value| v.get("jsonrpc").is_some();
    call(&v) || v.as_array().is_some_and(|a| a.iter().any(call))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::http::HttpRequest;
    use serde_json::json;

    fn exchange(url: &str, version: Option<&str>, status: u16, answer: Value) -> HttpExchange {
        let mut request = HttpRequest::get(url);
        if let Some(v) = version {
            request.headers.push(("A2A-Version".into(), v.into()));
        }
        HttpExchange { status, ..HttpExchange::answered(request, answer.to_string().into_bytes()) }
    }

    fn named(reason: &str) -> Value {
        json!({"error": {"code": 400, "message": "m", "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"}]}})
    }

    #[test]
    fn every_named_error_is_judged_by_the_statuses_of_1_0() {
        let mut l = StatusLedger::default();
        let u = "http://127.0.0.1:1/tasks/t-1";
        l.note("A / s", &exchange(u, Some("1.0"), 404, named("TASK_NOT_FOUND")));
        l.note("A / s", &exchange(u, Some("1.0"), 409, named("TASK_NOT_CANCELABLE")));
        l.note("A / s", &exchange(u, Some("1.0"), 400, named("TASK_NOT_CANCELABLE")));
        l.note("A / s", &exchange(u, Some("1.0"), 415, named("CONTENT_TYPE_NOT_SUPPORTED")));
        assert_eq!((l.judged, l.faulty_by_code.values().sum::<usize>()), (4, 0), "either revision's column conforms");
        let nodus = json!({"error": {"code": "UNSUPPORTED_OPERATION", "message": "m", "details": []}});
        l.note("B / s", &exchange("http://127.0.0.1:1/message:stream?x=1", Some("1.0"), 501, nodus));
        l.note("C / s", &exchange(u, Some("1.0"), 200, named("TASK_NOT_FOUND")));
        assert_eq!((l.judged, l.faulty_by_code.values().sum::<usize>()), (6, 2));
        assert_eq!(l.faulty[0].request, "GET /message:stream");
        assert_eq!((l.faulty[0].status, l.faulty[0].code), (501, -32004));
        assert_eq!((l.faulty[1].status, l.faulty[1].code), (200, -32001));
    }

    #[test]
    fn other_answers_and_other_versions_are_not_judged() {
        let mut l = StatusLedger::default();
        let u = "http://127.0.0.1:1/tasks/t-1";
        l.note("A / s", &exchange(u, Some("0.3"), 501, named("UNSUPPORTED_OPERATION")));
        l.note("A / s", &exchange(u, None, 501, named("UNSUPPORTED_OPERATION")));
        l.note("A / s", &exchange(&format!("{u}?A2A-Version=1.0"), None, 501, named("UNSUPPORTED_OPERATION")));
        assert_eq!(
            (l.judged, l.faulty_by_code.values().sum::<usize>()),
            (1, 1),
            "the request parameter names a version too"
        );
        let bare = json!({"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "m"}});
        l.note("B / s", &exchange(u, Some("1.0"), 422, bare));
        l.note(
            "B / s",
            &exchange(u, Some("1.0"), 200, json!({"id": "t-1", "status": {"state": "TASK_STATE_WORKING"}})),
        );
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "m"}});
        l.note("B / s", &exchange(u, Some("1.0"), 500, rpc));
        let mut call = exchange(u, Some("1.0"), 500, named("TASK_NOT_FOUND"));
        call.request.body = Some(br#"{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}"#.to_vec().into());
        l.note("B / s", &call);
        assert_eq!(
            (l.judged, l.faulty_by_code.values().sum::<usize>()),
            (1, 1),
            "no A2A error named, a result, JSON-RPC: none judged"
        );
    }
}

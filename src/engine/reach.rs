//! Where the kit may send requests, and whether the interface it chose answers at all: the kit
//! talks only to the host the user named (a card may point anywhere), and an interface that cannot
//! be reached is one finding rather than a hundred identical errors.

use serde_json::json;

use crate::client::http::{HttpClient, HttpExchange};
use crate::client::rpc::rpc_request;

/// The host of a URL (lower case), if it has one.
pub fn host_of(url: &str) -> Option<String> {
    reqwest::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_ascii_lowercase))
}

/// Why the kit will not send to `url`, or `None` when its host is one of `allowed`.
pub fn refused_host(url: &str, allowed: &[String]) -> Option<String> {
    let Some(host) = host_of(url) else {
        return Some(format!("the interface URL {url:?} names no host"));
    };
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(&host)) {
        return None;
    }
    Some(format!(
        "the card's JSON-RPC interface is on another host ({host}) than the one you named; the kit sends \
         requests only where you point it. Pass --allow-host {host} to check it there, or --rpc-url URL to name the \
         endpoint yourself"
    ))
}

/// One harmless call (GetTask of an id no agent has) to see whether the interface answers at all.
/// Any HTTP answer will do; what it says is for the checks to judge. Returns the exchange when it
/// answered, or why it could not be reached (with a hint for an `https` URL served as plain HTTP).
pub async fn probe(client: &HttpClient, rpc_url: &str) -> Result<HttpExchange, String> {
    let id = json!("kit-reach");
    let params = json!({"id": format!("kit-reach-{}", uuid::Uuid::new_v4().simple())});
    match client.send(rpc_request(rpc_url, &id, "GetTask", Some(params))).await {
        // An agent whose answer to the smallest call outgrows what the kit reads cannot be judged.
        Ok(x) if x.truncated => Err(format!(
            "the JSON-RPC interface {rpc_url} answered a GetTask with more than the kit reads (max_body_bytes = {} \
             bytes)",
            client.config().max_body_bytes
        )),
        Ok(x) => Ok(x),
        Err(e) => {
            let text = e.to_string();
            let tls = ["tls", "ssl", "certificate", "handshake", "InvalidContentType", "corrupt message"]
                .iter()
                .any(|w| text.to_ascii_lowercase().contains(&w.to_ascii_lowercase()));
            let hint = if rpc_url.starts_with("https://") && tls {
                " (the card advertises https; if the agent speaks plain HTTP there, pass --rpc-url with http://)"
            } else {
                ""
            };
            Err(format!("the JSON-RPC interface {rpc_url} cannot be reached: {text}{hint}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_hosts_are_talked_to() {
        let allowed = vec!["agent.example".to_owned()];
        assert_eq!(refused_host("https://Agent.Example/rpc", &allowed), None);
        let why = refused_host("https://elsewhere.example/rpc", &allowed).unwrap();
        assert!(why.contains("--allow-host elsewhere.example"), "{why}");
        assert!(refused_host("not a url", &allowed).is_some());
    }
}

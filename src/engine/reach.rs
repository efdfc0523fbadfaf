//! Where the kit may send requests, and whether the interface it chose answers at all: the kit
//! talks only to the host the user named (a card may point anywhere), and an interface that cannot
//! be reached is one finding rather than a hundred identical errors.

use serde_json::json;

use crate::client::http::{HttpClient, HttpExchange, HttpRequest};
use crate::client::rest::rest_request;
use crate::client::rpc::rpc_request;
use crate::suite::binding::Binding;

/// The host of a URL (lower case), if it has one.
pub fn host_of(url: &str) -> Option<String> {
    reqwest::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_ascii_lowercase))
}

/// Why the kit will not send to `url`, the card's interface of `binding`, or `None` when its host is
/// one of `allowed`.
pub fn refused_host(url: &str, allowed: &[String], binding: Binding) -> Option<String> {
    let Some(host) = host_of(url) else {
        return Some(format!("the interface URL {url:?} names no host"));
    };
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(&host)) {
        return None;
    }
    Some(format!(
        "the card's {} interface is on another host ({host}) than the one you named; the kit sends requests only \
         where you point it. Pass --allow-host {host} to check it there{}",
        name(binding),
        match binding {
            Binding::JsonRpc => ", or --rpc-url URL to name the endpoint yourself",
            Binding::HttpJson => ", or --binding jsonrpc to grade JSON-RPC alone",
        }
    ))
}

/// The binding as findings name it.
fn name(binding: Binding) -> &'static str {
    match binding {
        Binding::JsonRpc => "JSON-RPC",
        Binding::HttpJson => "HTTP+JSON",
    }
}

/// One harmless call (GetTask of an id no agent has) to see whether the interface of `binding` at
/// `url` (with its `tenant`, "" for none) answers at all. Any HTTP answer will do; what it says is
/// for the checks to judge. Returns the exchange when it answered, or why it could not be reached
/// (with a hint for an `https` URL served as plain HTTP).
pub async fn probe(client: &HttpClient, binding: Binding, url: &str, tenant: &str) -> Result<HttpExchange, String> {
    let mut params = json!({"id": format!("kit-reach-{}", uuid::Uuid::new_v4().simple())});
    if !tenant.is_empty() {
        params["tenant"] = json!(tenant);
    }
    let req: HttpRequest = match binding {
        Binding::JsonRpc => rpc_request(url, &json!("kit-reach"), "GetTask", Some(params)),
        Binding::HttpJson => rest_request(url, "GetTask", &params)?,
    };
    let label = name(binding);
    match client.send(req).await {
        // An agent whose answer to the smallest call outgrows what the kit reads cannot be judged.
        Ok(x) if x.truncated => Err(format!(
            "the {label} interface {url} answered a GetTask with more than the kit reads (max_body_bytes = {} bytes)",
            client.config().max_body_bytes
        )),
        Ok(x) => Ok(x),
        Err(e) => {
            let text = e.to_string();
            let tls = ["tls", "ssl", "certificate", "handshake", "InvalidContentType", "corrupt message"]
                .iter()
                .any(|w| text.to_ascii_lowercase().contains(&w.to_ascii_lowercase()));
            let hint = match binding {
                Binding::JsonRpc if url.starts_with("https://") && tls => {
                    " (the card advertises https; if the agent speaks plain HTTP there, pass --rpc-url with http://)"
                }
                Binding::HttpJson if url.starts_with("https://") && tls => {
                    " (the card advertises https, and the agent does not speak TLS there)"
                }
                _ => "",
            };
            Err(format!("the {label} interface {url} cannot be reached: {text}{hint}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_hosts_are_talked_to() {
        let allowed = vec!["agent.example".to_owned()];
        assert_eq!(refused_host("https://Agent.Example/rpc", &allowed, Binding::JsonRpc), None);
        let why = refused_host("https://elsewhere.example/rpc", &allowed, Binding::JsonRpc).unwrap();
        assert!(why.contains("--allow-host elsewhere.example") && why.contains("JSON-RPC"), "{why}");
        let why = refused_host("https://elsewhere.example/api", &allowed, Binding::HttpJson).unwrap();
        assert!(why.contains("HTTP+JSON interface"), "{why}");
        assert!(refused_host("not a url", &allowed, Binding::JsonRpc).is_some());
    }
}

//! Agent Card discovery (§8.2) and JSON-RPC interface selection (§8.3.2), on raw JSON.

use serde_json::Value;

use super::http::{ClientError, HttpClient, HttpExchange, HttpRequest};
use super::rpc::{A2A_VERSION, kind};

/// The well-known path of the public card (§8.2).
pub const WELL_KNOWN_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The interface the client will talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedInterface {
    /// Endpoint URL, used as is (§9: no path suffix).
    pub url: String,
    /// `protocolBinding` (always `JSONRPC` here).
    pub binding: String,
    /// `protocolVersion` as declared, e.g. `1.0`.
    pub version: String,
    /// `tenant` to echo in every request, when the entry has a non-empty one.
    pub tenant: Option<String>,
    /// Position in `supportedInterfaces`.
    pub index: usize,
}

/// A fetched card and the interface chosen from it.
#[derive(Debug, Clone)]
pub struct Discovery {
    pub card_url: String,
    pub exchange: HttpExchange,
    pub card: Value,
    /// The first JSON-RPC 1.x interface, if any.
    pub interface: Option<SelectedInterface>,
    /// Observations for the user (skipped entries, 0.3 fields, ...).
    pub notes: Vec<String>,
}

/// Why no card could be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DiscoveryError {
    /// The target is not an absolute http(s) URL.
    #[error("invalid target {target:?}: {reason}")]
    InvalidTarget {
        /// Redacted.
        target: String,
        reason: String,
    },
    #[error("fetching the agent card failed: {0}")]
    Client(#[from] ClientError),
    /// The card URL answered with a status other than 2xx.
    #[error("agent card at {card_url} answered HTTP {status}")]
    Status {
        card_url: String,
        status: u16,
        /// The exchange, for evidence.
        exchange: Box<HttpExchange>,
    },
    /// The body is not JSON.
    #[error("agent card at {card_url} is not JSON: {detail}")]
    NotJson {
        card_url: String,
        /// Why, with a redacted excerpt.
        detail: String,
        /// The exchange, for evidence.
        exchange: Box<HttpExchange>,
    },
    /// The body is JSON but not an object.
    #[error("agent card at {card_url} is a JSON {kind}, not an object")]
    NotObject {
        card_url: String,
        kind: &'static str,
        /// The exchange, for evidence.
        exchange: Box<HttpExchange>,
    },
}

impl DiscoveryError {
    /// The exchange behind the error, when a response arrived.
    pub fn exchange(&self) -> Option<&HttpExchange> {
        match self {
            DiscoveryError::Status { exchange, .. }
            | DiscoveryError::NotJson { exchange, .. }
            | DiscoveryError::NotObject { exchange, .. } => Some(exchange),
            _ => None,
        }
    }
}

/// Where the card of `target` lives: `target` itself when its path ends in `.json`, else the
/// well-known path at its origin. The second value is a note when a base path was ignored.
pub fn card_url_for(target: &str) -> Result<(String, Option<String>), String> {
    let url = reqwest::Url::parse(target.trim()).map_err(|e| e.to_string())?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err("not an absolute http(s) URL".into());
    }
    if url.path().ends_with(".json") {
        return Ok((url.to_string(), None));
    }
    let mut card = url.clone();
    card.set_path(WELL_KNOWN_CARD_PATH);
    card.set_query(None);
    card.set_fragment(None);
    let note = (url.path() != "/" && !url.path().is_empty()).then(|| {
        format!("the path {:?} of the target was ignored: the well-known card lives at the origin", url.path())
    });
    Ok((card.to_string(), note))
}

fn major(version: &str) -> Option<u64> {
    version.trim().split('.').next()?.parse().ok()
}

/// Picks the first `supportedInterfaces` entry with `protocolBinding: "JSONRPC"` and a
/// `protocolVersion` of major 1 (§8.3.2: earlier entries are preferred), noting what was skipped.
pub fn select_interface(card: &Value, notes: &mut Vec<String>) -> Option<SelectedInterface> {
    let Some(list) = card.get("supportedInterfaces") else {
        notes.push("the card has no `supportedInterfaces`".into());
        return None;
    };
    let Some(list) = list.as_array() else {
        notes.push(format!("`supportedInterfaces` is a JSON {}, not an array", kind(list)));
        return None;
    };
    for (i, entry) in list.iter().enumerate() {
        let binding = entry.get("protocolBinding").and_then(Value::as_str).unwrap_or("");
        let version = entry.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
        if binding != "JSONRPC" {
            if binding.eq_ignore_ascii_case("jsonrpc") || binding.eq_ignore_ascii_case("json-rpc") {
                notes.push(format!(
                    "supportedInterfaces[{i}] has protocolBinding {binding:?}; the 1.0 value is exactly \"JSONRPC\", skipped"
                ));
            } else {
                notes.push(format!("supportedInterfaces[{i}] skipped: protocolBinding {binding:?} is not JSONRPC"));
            }
            continue;
        }
        if version.is_empty() {
            notes.push(format!(
                "supportedInterfaces[{i}] has no protocolVersion (REQUIRED); read as a 1.0 interface, as the \
                 card's supportedInterfaces are 1.0's"
            ));
        } else if major(version) != Some(1) {
            notes.push(format!("supportedInterfaces[{i}] skipped: protocolVersion {version:?} is not 1.x"));
            continue;
        }
        let Some(url) = entry.get("url").and_then(Value::as_str).filter(|u| !u.is_empty()) else {
            notes.push(format!("supportedInterfaces[{i}] skipped: no `url` string"));
            continue;
        };
        match reqwest::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {}
            _ => {
                notes.push(format!("supportedInterfaces[{i}] skipped: url {url:?} is not an absolute http(s) URL"));
                continue;
            }
        }
        let tenant = entry.get("tenant").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_owned);
        return Some(SelectedInterface {
            url: url.to_owned(),
            binding: binding.to_owned(),
            version: version.to_owned(),
            tenant,
            index: i,
        });
    }
    None
}

/// The first `supportedInterfaces` entry of `protocol_binding` exactly (e.g. `HTTP+JSON`) with a
/// `protocolVersion` of major 1 (or none: the REQUIRED member missing does not make the interface
/// another version's) and an absolute http(s) `url`.
pub fn select_binding(card: &Value, protocol_binding: &str) -> Option<SelectedInterface> {
    let list = card.get("supportedInterfaces")?.as_array()?;
    list.iter().enumerate().find_map(|(i, entry)| {
        let binding = entry.get("protocolBinding").and_then(Value::as_str)?;
        let version = entry.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
        let url = entry.get("url").and_then(Value::as_str)?;
        let usable =
            reqwest::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
        let one = version.is_empty() || major(version) == Some(1);
        (binding == protocol_binding && one && usable).then(|| SelectedInterface {
            url: url.to_owned(),
            binding: binding.to_owned(),
            version: version.to_owned(),
            tenant: entry.get("tenant").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_owned),
            index: i,
        })
    })
}

/// Top-level fields that only a 0.3 card has (digest §16).
pub const V03_FIELDS: [&str; 4] = ["url", "protocolVersion", "preferredTransport", "additionalInterfaces"];

/// The 0.3-only top-level fields present on `card`.
pub fn v03_fields(card: &Value) -> Vec<&'static str> {
    V03_FIELDS.iter().copied().filter(|f| card.get(f).is_some()).collect()
}

/// Fetches the card of `target` and selects the JSON-RPC 1.x interface.
pub async fn discover(client: &HttpClient, target: &str) -> Result<Discovery, DiscoveryError> {
    let redactor = client.redactor();
    let (card_url, note) = card_url_for(target)
        .map_err(|reason| DiscoveryError::InvalidTarget { target: redactor.redact(target), reason })?;
    let req =
        HttpRequest::get(card_url.clone()).header("Accept", "application/json").header("A2A-Version", A2A_VERSION);
    let exchange = client.send(req).await?;
    if !exchange.is_success() {
        return Err(DiscoveryError::Status { card_url, status: exchange.status, exchange: Box::new(exchange) });
    }
    let card = match exchange.json() {
        Ok(v) => v,
        Err(detail) => {
            return Err(DiscoveryError::NotJson {
                card_url,
                detail: redactor.redact(&detail),
                exchange: Box::new(exchange),
            });
        }
    };
    if !card.is_object() {
        return Err(DiscoveryError::NotObject { card_url, kind: kind(&card), exchange: Box::new(exchange) });
    }
    let mut notes: Vec<String> = note.into_iter().collect();
    let interface = select_interface(&card, &mut notes);
    let old = v03_fields(&card);
    match (&interface, old.is_empty()) {
        (None, false) => notes.push(format!(
            "this looks like an A2A 0.3 card: it has no JSON-RPC 1.0 interface but has the 0.3 top-level field(s) {}",
            old.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
        )),
        (None, true) => notes.push("the card declares no JSON-RPC interface with protocolVersion 1.x".into()),
        (Some(_), false) => notes.push(format!(
            "the card also carries the 0.3 top-level field(s) {}, which 1.0 removed",
            old.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
        )),
        (Some(_), true) => {}
    }
    if let (Some(sel), Ok(card_u)) = (&interface, reqwest::Url::parse(&card_url))
        && let Ok(iface_u) = reqwest::Url::parse(&sel.url)
        && (iface_u.scheme(), iface_u.host_str(), iface_u.port_or_known_default())
            != (card_u.scheme(), card_u.host_str(), card_u.port_or_known_default())
    {
        notes.push(format!("the interface URL {} is on another origin than the card", redactor.redact(&sel.url)));
    }
    Ok(Discovery { card_url, exchange, card, interface, notes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn card_url_from_base_or_card() {
        assert_eq!(card_url_for("http://a.test").unwrap().0, "http://a.test/.well-known/agent-card.json");
        let (u, note) = card_url_for("http://a.test:81/x/y?q=1").unwrap();
        assert_eq!(u, "http://a.test:81/.well-known/agent-card.json");
        assert!(note.is_some());
        assert_eq!(card_url_for("https://a.test/cards/me.json").unwrap().0, "https://a.test/cards/me.json");
        assert!(card_url_for("ftp://a.test").is_err());
        assert!(card_url_for("a.test").is_err());
    }

    #[test]
    fn selects_first_jsonrpc_1x() {
        let card = json!({"supportedInterfaces": [
            {"url": "a.test:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://a.test/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://a.test/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "acme"},
            {"url": "http://a.test/v1b", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]});
        let mut notes = Vec::new();
        let s = select_interface(&card, &mut notes).unwrap();
        assert_eq!(s.url, "http://a.test/v1");
        assert_eq!(s.tenant.as_deref(), Some("acme"));
        assert_eq!(s.index, 2);
        assert_eq!(notes.len(), 2);
    }

    #[test]
    fn empty_tenant_is_none_and_bad_entries_skipped() {
        let card = json!({"supportedInterfaces": [
            {"protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "/rel", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "http://a.test/", "protocolBinding": "JSONRPC", "protocolVersion": "1.1", "tenant": ""}
        ]});
        let mut notes = Vec::new();
        let s = select_interface(&card, &mut notes).unwrap();
        assert_eq!((s.index, s.tenant), (2, None));
        assert!(select_interface(&json!({"supportedInterfaces": {}}), &mut notes).is_none());
    }

    #[test]
    fn an_interface_without_its_version_is_still_the_interface_it_names() {
        let card = json!({"supportedInterfaces": [
            {"url": "http://a.test/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://a.test/rpc", "protocolBinding": "JSONRPC"},
            {"url": "http://a.test/rest", "protocolBinding": "HTTP+JSON"}
        ]});
        let mut notes = Vec::new();
        assert_eq!(select_interface(&card, &mut notes).unwrap().index, 1);
        assert!(notes[1].contains("no protocolVersion"), "{notes:?}");
        assert_eq!(select_binding(&card, "HTTP+JSON").unwrap().url, "http://a.test/rest");
        assert_eq!(select_binding(&card, "JSONRPC").unwrap().index, 1, "a 0.3 interface is never read as 1.0");
    }

    #[test]
    fn finds_03_fields() {
        let card = json!({"url": "http://a.test", "protocolVersion": "0.3.0", "name": "x"});
        assert_eq!(v03_fields(&card), vec!["url", "protocolVersion"]);
    }
}

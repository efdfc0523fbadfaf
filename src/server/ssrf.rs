//! The SSRF guard on webhook URLs (§13.2: "Reject private IP ranges", "Reject localhost and
//! link-local addresses"), in two stages:
//!
//! - when a config is registered, [`check_url`] judges what the URL itself says: its syntax, and the
//!   host when it is a literal address or `localhost`. It never resolves a name, so registering
//!   `https://example.com/hook` works on a machine without DNS;
//! - before each delivery, [`resolve`] resolves the name and judges every address it gets; a name
//!   that does not resolve fails that delivery (the push worker logs it).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::config::WebhookPolicy;

/// Longest webhook URL accepted, in bytes.
pub const MAX_URL_LEN: usize = 2048;

/// How long resolving a webhook host may take.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// What kind of network an address belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// Globally routable.
    Public,
    /// 127.0.0.0/8, ::1, `localhost`.
    Loopback,
    /// RFC 1918, link-local, CGNAT, unique-local IPv6.
    Private,
    /// Unspecified, multicast, broadcast, documentation: never a webhook.
    Forbidden,
}

/// Classifies an address (IPv4-mapped IPv6 is judged as IPv4).
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_loopback() {
                AddressClass::Loopback
            } else if v4.is_unspecified() || v4.is_multicast() || v4.is_broadcast() || v4.is_documentation() {
                AddressClass::Forbidden
            } else if v4.is_private() || v4.is_link_local() || (o[0] == 100 && (64..128).contains(&o[1])) || o[0] == 0 {
                AddressClass::Private
            } else {
                AddressClass::Public
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return classify(IpAddr::V4(v4));
            }
            if v6.is_loopback() {
                AddressClass::Loopback
            } else if v6.is_unspecified() || v6.is_multicast() {
                AddressClass::Forbidden
            } else if v6.is_unique_local() || v6.is_unicast_link_local() {
                AddressClass::Private
            } else {
                AddressClass::Public
            }
        }
    }
}

fn allowed(policy: WebhookPolicy, class: AddressClass) -> bool {
    match class {
        AddressClass::Public => true,
        AddressClass::Loopback => policy != WebhookPolicy::PublicOnly,
        AddressClass::Private => policy == WebhookPolicy::AllowPrivate,
        AddressClass::Forbidden => false,
    }
}

fn refusal(host: &str, what: &str, class: AddressClass) -> String {
    let hint = match class {
        AddressClass::Loopback => " (start the mock with --allow-loopback-webhooks to permit it)",
        AddressClass::Private => " (start the mock with --allow-private-webhooks to permit it)",
        _ => "",
    };
    let class = match class {
        AddressClass::Public => "public",
        AddressClass::Loopback => "loopback",
        AddressClass::Private => "private",
        AddressClass::Forbidden => "forbidden",
    };
    format!("{host} {what} a {class} address{hint}")
}

/// A webhook URL whose syntax the guard accepted.
#[derive(Debug, Clone)]
pub struct WebhookUrl {
    pub url: reqwest::Url,
    /// The host as written (IPv6 without brackets).
    pub host: String,
    pub port: u16,
}

/// Create-time check: an absolute http(s) URL without embedded credentials, at most
/// [`MAX_URL_LEN`] bytes, whose host, when it is a literal address or `localhost` (RFC 6761: a
/// name that only ever means loopback), the policy allows. Names are not resolved here.
pub fn check_url(url: &str, policy: WebhookPolicy) -> Result<WebhookUrl, String> {
    if url.len() > MAX_URL_LEN {
        return Err(format!("longer than {MAX_URL_LEN} bytes"));
    }
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("not an absolute URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("scheme {:?} is not http or https", parsed.scheme()));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("URLs with embedded credentials are refused; use `authentication`".into());
    }
    let host = parsed.host_str().ok_or("the URL has no host")?.trim_start_matches('[').trim_end_matches(']').to_owned();
    let port = parsed.port_or_known_default().ok_or("the URL has no port")?;
    let literal = match host.parse::<IpAddr>() {
        Ok(ip) => Some(classify(ip)),
        Err(_) => {
            let lower = host.trim_end_matches('.').to_ascii_lowercase();
            (lower == "localhost" || lower.ends_with(".localhost")).then_some(AddressClass::Loopback)
        }
    };
    if let Some(class) = literal.filter(|c| !allowed(policy, *c)) {
        return Err(refusal(&host, "is", class));
    }
    Ok(WebhookUrl { url: parsed, host, port })
}

/// A webhook URL checked against the policy, with the addresses it resolved to.
#[derive(Debug, Clone)]
pub struct Destination {
    pub url: reqwest::Url,
    /// Resolved addresses, all allowed by the policy; requests are pinned to the first one so that
    /// a second DNS answer cannot redirect them (DNS rebinding).
    pub addrs: Vec<SocketAddr>,
}

/// Delivery-time check: [`check_url`], then resolve the host and refuse it if any address it
/// resolves to is one the policy does not allow. The error says why.
pub async fn resolve(url: &str, policy: WebhookPolicy) -> Result<Destination, String> {
    let checked = check_url(url, policy)?;
    let lookup = tokio::net::lookup_host((checked.host.clone(), checked.port));
    let addrs: Vec<SocketAddr> = tokio::time::timeout(RESOLVE_TIMEOUT, lookup)
        .await
        .map_err(|_| format!("resolving {} timed out", checked.host))?
        .map_err(|e| format!("cannot resolve {}: {e}", checked.host))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("{} resolves to no address", checked.host));
    }
    for a in &addrs {
        let class = classify(a.ip());
        if !allowed(policy, class) {
            return Err(refusal(&checked.host, &format!("resolves to {} which is", a.ip()), class));
        }
    }
    Ok(Destination { url: checked.url, addrs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_accepted_without_resolving() {
        let w = check_url("https://no-such-host.invalid/hook", WebhookPolicy::PublicOnly).unwrap();
        assert_eq!(w.host, "no-such-host.invalid");
        assert_eq!(w.port, 443);
    }

    #[test]
    fn literal_addresses_and_localhost_are_judged_at_once() {
        for url in ["http://127.0.0.1:9/h", "http://[::1]/h", "http://localhost:8080/h", "http://api.localhost/h"] {
            let e = check_url(url, WebhookPolicy::PublicOnly).unwrap_err();
            assert!(e.contains("loopback"), "{url}: {e}");
            assert!(check_url(url, WebhookPolicy::AllowLoopback).is_ok(), "{url}");
        }
        let e = check_url("http://10.1.2.3/h", WebhookPolicy::AllowLoopback).unwrap_err();
        assert!(e.contains("private"), "{e}");
        assert!(check_url("http://0.0.0.0/h", WebhookPolicy::AllowPrivate).is_err());
    }

    #[test]
    fn syntax_is_checked() {
        assert!(check_url("ftp://example.com/h", WebhookPolicy::PublicOnly).unwrap_err().contains("scheme"));
        assert!(check_url("https://u:p@example.com/h", WebhookPolicy::PublicOnly).unwrap_err().contains("credentials"));
        assert!(check_url("/relative", WebhookPolicy::PublicOnly).is_err());
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert!(check_url(&long, WebhookPolicy::PublicOnly).unwrap_err().contains("longer"));
    }

    #[tokio::test]
    async fn resolution_refuses_loopback_names_at_delivery() {
        let e = resolve("http://localhost:9/h", WebhookPolicy::PublicOnly).await.unwrap_err();
        assert!(e.contains("loopback"), "{e}");
        let d = resolve("http://127.0.0.1:9/h", WebhookPolicy::AllowLoopback).await.unwrap();
        assert_eq!(d.addrs[0].port(), 9);
    }
}

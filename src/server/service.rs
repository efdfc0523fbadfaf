//! What both HTTP adapters (JSON-RPC in `rpc`, HTTP+JSON in `rest`) read the same way: the
//! service parameters (`A2A-Version`, `A2A-Extensions`, §3.2.6, carried as headers in both, §9.2 and
//! §11.2), the bearer credential, the media type and a bounded body. Each failure is an A2A error,
//! which each adapter renders in its own binding.

use axum::body::Body;
use axum::http::{HeaderMap, Uri, header};

use super::app::App;
use super::config::{MissingVersion, RESUME_EXTENSION_URI};
use super::faults::ActiveFaults;
use super::methods;
use crate::protocol::version::{EXTENSIONS_HEADER, ProtocolVersion, VERSION_HEADER, split_list};
use crate::protocol::{ErrorCode, RpcError};

pub(super) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// True for `application/json` and any `+json` media type, ignoring parameters.
pub(super) fn is_json_content_type(value: &str) -> bool {
    let base = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    base == "application/json" || (base.starts_with("application/") && base.ends_with("+json"))
}

/// The version the request asks for: the header, else the `A2A-Version` query parameter (§3.6.1).
pub(super) fn requested_version(headers: &HeaderMap, uri: &Uri) -> Option<String> {
    if let Some(v) = header_str(headers, VERSION_HEADER) {
        return Some(v.to_owned());
    }
    uri.query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        k.eq_ignore_ascii_case(VERSION_HEADER).then(|| v.to_owned())
    })
}

/// The caller the request authenticates as (§7.4): "" when the mock knows no callers, else the
/// number of the bearer token presented. A missing or unknown token is refused (-32000, HTTP 401),
/// unless a fault lets it through as the first caller.
pub(super) fn authenticate(
    app: &App,
    faults: &ActiveFaults,
    headers: &HeaderMap,
    method: &str,
) -> Result<String, RpcError> {
    let callers = &app.config.callers;
    if callers.is_empty() {
        return Ok(String::new());
    }
    let presented = header_str(headers, header::AUTHORIZATION.as_str())
        .and_then(|h| h.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim());
    let Some(token) = presented else {
        if faults.auth_bypass(method, true) {
            return Ok("caller-1".into());
        }
        return Err(RpcError::new(
            ErrorCode::Unauthenticated,
            "this agent requires a bearer token (scheme \"bearer\" on the card): none was presented",
        ));
    };
    match callers.iter().position(|c| methods::constant_time_eq(c.as_bytes(), token.as_bytes())) {
        Some(i) => Ok(format!("caller-{}", i + 1)),
        None if faults.auth_bypass(method, false) => Ok("caller-1".into()),
        None => {
            Err(RpcError::new(ErrorCode::Unauthenticated, "the bearer token presented is not valid for this agent"))
        }
    }
}

pub(super) fn check_version(app: &App, raw: Option<String>) -> Result<(), RpcError> {
    let raw = raw.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let version = match raw {
        None if app.config.missing_version == MissingVersion::AssumeCurrent => return Ok(()),
        None => ProtocolVersion::V0_3,
        Some(s) => match ProtocolVersion::parse(&s) {
            Some(v) => v,
            None => {
                return Err(RpcError::new(
                    ErrorCode::VersionNotSupported,
                    format!("A2A-Version {s:?} is not Major.Minor; this agent supports 1.0"),
                )
                .with_meta("requestedVersion", s)
                .with_meta("supportedVersions", "1.0"));
            }
        },
    };
    if version == ProtocolVersion::V1_0 {
        return Ok(());
    }
    Err(RpcError::new(
        ErrorCode::VersionNotSupported,
        format!("A2A-Version {version} is not supported; this agent supports 1.0"),
    )
    .with_meta("requestedVersion", version.to_string())
    .with_meta("supportedVersions", "1.0"))
}

/// Required extensions the request did not activate give -32008; returns the activated ones to echo.
pub(super) fn check_extensions(app: &App, headers: &HeaderMap) -> Result<Option<String>, RpcError> {
    let requested: Vec<&str> =
        headers.get_all(EXTENSIONS_HEADER).iter().filter_map(|v| v.to_str().ok()).flat_map(split_list).collect();
    if let Some(missing) = app.config.required_extensions.iter().find(|r| !requested.contains(&r.as_str())) {
        return Err(RpcError::new(
            ErrorCode::ExtensionSupportRequired,
            format!("this agent requires extension {missing}; activate it with the A2A-Extensions header"),
        )
        .with_meta("extension", missing.clone()));
    }
    let resume = (app.config.resume_extension && app.config.streaming).then_some(RESUME_EXTENSION_URI);
    let declared = app.config.extensions.iter().chain(&app.config.required_extensions).map(String::as_str);
    let active: Vec<&str> = declared.chain(resume).filter(|d| requested.contains(d)).collect();
    Ok((!active.is_empty()).then(|| active.join(", ")))
}

/// Most bytes read and thrown away after a body went over the limit, and for how long: draining
/// lets the client finish writing and read the error instead of a broken pipe.
const DRAIN_BYTES: usize = 64 * 1024 * 1024;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// The body if it fits in `limit`; `None` (after a bounded drain) if it does not.
/// The error for an answer of `len` bytes when it is over the agent's response limit
/// (`--max-response-bytes`): the same over either binding.
pub(super) fn over_response_limit(app: &App, len: usize) -> Option<RpcError> {
    let limit = app.config.limits.max_response_bytes;
    (len > limit).then(|| {
        RpcError::new(
            ErrorCode::Internal,
            format!(
                "the result is {len} bytes, over this agent's limit of {limit} (--max-response-bytes); ask for less \
                 history (historyLength) or a smaller page"
            ),
        )
    })
}

/// The request body, or the error for one over `limit` bytes (or cut off): the same over either
/// binding.
pub(super) async fn read_request_body(body: Body, limit: usize) -> Result<bytes::Bytes, RpcError> {
    read_bounded(body, limit).await.ok_or_else(|| {
        RpcError::new(
            ErrorCode::InvalidRequest,
            format!("Request payload validation error: the body exceeds {limit} bytes"),
        )
    })
}

async fn read_bounded(body: Body, limit: usize) -> Option<bytes::Bytes> {
    use futures::StreamExt as _;
    let mut stream = body.into_data_stream();
    let mut buf = bytes::BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.ok()?;
        if buf.len() + chunk.len() > limit {
            let mut drained = buf.len() + chunk.len();
            let drain = async {
                while let Some(Ok(c)) = stream.next().await {
                    drained += c.len();
                    if drained > DRAIN_BYTES {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(DRAIN_TIME, drain).await;
            return None;
        }
        buf.extend_from_slice(&chunk);
    }
    Some(buf.freeze())
}

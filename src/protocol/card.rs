//! Agent Card and discovery objects (§4.4) and security schemes (§4.5).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::wire::{is_false, null_default, oneof_deserialize};

/// The self-describing manifest of an agent (§4.4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    pub name: String,
    /// May be empty.
    pub description: String,
    /// Ordered; the first is the preferred one.
    #[serde(alias = "supported_interfaces")]
    pub supported_interfaces: Vec<AgentInterface>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    pub version: String,
    #[serde(default, alias = "documentation_url", skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    pub capabilities: AgentCapabilities,
    /// Keyed by the names that security requirements refer to.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "security_schemes",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Apply to every interaction; a skill may add its own.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "security_requirements",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types.
    #[serde(alias = "default_input_modes")]
    pub default_input_modes: Vec<String>,
    /// Media types.
    #[serde(alias = "default_output_modes")]
    pub default_output_modes: Vec<String>,
    /// May be empty (digest §14 item 9).
    pub skills: Vec<AgentSkill>,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    #[serde(default, alias = "icon_url", skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
}

/// A URL and binding at which the agent is reachable (§4.4.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON` or a URI.
    #[serde(alias = "protocol_binding")]
    pub protocol_binding: String,
    /// Tenant the client must echo.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// `Major.Minor`.
    #[serde(alias = "protocol_version")]
    pub protocol_version: String,
}

/// The organisation behind the agent (§4.4.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentProvider {
    pub url: String,
    pub organization: String,
}

/// Optional features (§4.4.3). Absent or false means unsupported (§3.3.4).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    #[serde(default, alias = "push_notifications", skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
    #[serde(default, alias = "extended_agent_card", skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
}

/// A protocol extension the agent supports (§4.4.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentExtension {
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub uri: String,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The client must activate it (else -32008).
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// A capability of the agent (§4.4.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    pub id: String,
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Input media types, overriding the card's defaults.
    #[serde(default, deserialize_with = "null_default", alias = "input_modes", skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    /// Output media types, overriding the card's defaults.
    #[serde(default, deserialize_with = "null_default", alias = "output_modes", skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "security_requirements",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
}

/// A JWS signature over the card (§4.4.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentCardSignature {
    /// Base64url-encoded JWS protected header.
    pub protected: String,
    /// Base64url-encoded.
    pub signature: String,
    /// JWS unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Map<String, Value>>,
}

/// `StringList` wrapper used by security requirements.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StringList {
    /// The scopes.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<String>,
}

/// Scheme name → scopes (§4.5).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SecurityRequirement {
    /// Scheme name → required scopes.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "BTreeMap::is_empty")]
    pub schemes: BTreeMap<String, StringList>,
}

/// One of the five security scheme kinds (§4.5.1).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SecurityScheme {
    /// API key in a header, query or cookie.
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// HTTP authentication (Bearer, Basic, ...).
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

oneof_deserialize!(SecurityScheme {
    ApiKeySecurityScheme => "apiKeySecurityScheme",
    HttpAuthSecurityScheme => "httpAuthSecurityScheme",
    Oauth2SecurityScheme => "oauth2SecurityScheme",
    OpenIdConnectSecurityScheme => "openIdConnectSecurityScheme",
    MtlsSecurityScheme => "mtlsSecurityScheme",
});

/// §4.5.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiKeySecurityScheme {
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// `query`, `header` or `cookie`.
    pub location: String,
    /// Name of the header, query parameter or cookie.
    pub name: String,
}

/// §4.5.3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// e.g. `Bearer`.
    pub scheme: String,
    /// Hint about the bearer token format.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "bearer_format",
        skip_serializing_if = "String::is_empty"
    )]
    pub bearer_format: String,
}

/// §4.5.4.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub flows: OAuthFlows,
    /// RFC 8414 metadata URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "oauth2_metadata_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub oauth2_metadata_url: String,
}

/// §4.5.5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(alias = "open_id_connect_url")]
    pub open_id_connect_url: String,
}

/// §4.5.6.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MutualTlsSecurityScheme {
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// One OAuth 2.0 flow (§4.5.7).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum OAuthFlows {
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// Deprecated.
    Implicit(ImplicitOAuthFlow),
    /// Deprecated.
    Password(PasswordOAuthFlow),
    DeviceCode(DeviceCodeOAuthFlow),
}

oneof_deserialize!(OAuthFlows {
    AuthorizationCode => "authorizationCode",
    ClientCredentials => "clientCredentials",
    Implicit => "implicit",
    Password => "password",
    DeviceCode => "deviceCode",
});

/// §4.5.8.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    #[serde(alias = "authorization_url")]
    pub authorization_url: String,
    #[serde(alias = "token_url")]
    pub token_url: String,
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Scope → description.
    pub scopes: BTreeMap<String, String>,
    #[serde(default, alias = "pkce_required", skip_serializing_if = "is_false")]
    pub pkce_required: bool,
}

/// §4.5.9.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    #[serde(alias = "token_url")]
    pub token_url: String,
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Scope → description.
    pub scopes: BTreeMap<String, String>,
}

/// §4.5.10.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceCodeOAuthFlow {
    #[serde(alias = "device_authorization_url")]
    pub device_authorization_url: String,
    #[serde(alias = "token_url")]
    pub token_url: String,
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Scope → description.
    pub scopes: BTreeMap<String, String>,
}

/// Deprecated implicit flow (§4.5.7): kept in the proto, all fields optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "authorization_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub authorization_url: String,
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Scope → description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, String>,
}

/// Deprecated password flow (§4.5.7): kept in the proto, all fields optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    #[serde(default, deserialize_with = "null_default", alias = "token_url", skip_serializing_if = "String::is_empty")]
    pub token_url: String,
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Scope → description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, String>,
}

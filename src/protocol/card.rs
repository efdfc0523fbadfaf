//! Agent Card and discovery objects (§4.4) and security schemes (§4.5).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::wire::{is_false, null_default, oneof_deserialize};

/// The self-describing manifest of an agent (§4.4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// REQUIRED.
    pub name: String,
    /// REQUIRED (may be empty).
    pub description: String,
    /// REQUIRED, ordered, first = preferred.
    #[serde(alias = "supported_interfaces")]
    pub supported_interfaces: Vec<AgentInterface>,
    /// The organisation behind the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// REQUIRED agent version.
    pub version: String,
    /// `optional` documentation URL.
    #[serde(default, alias = "documentation_url", skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// REQUIRED.
    pub capabilities: AgentCapabilities,
    /// Named security schemes.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "security_schemes",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Requirements for all interactions.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "security_requirements",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// REQUIRED input media types.
    #[serde(alias = "default_input_modes")]
    pub default_input_modes: Vec<String>,
    /// REQUIRED output media types.
    #[serde(alias = "default_output_modes")]
    pub default_output_modes: Vec<String>,
    /// REQUIRED (may be empty, digest §14 item 9).
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the card.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    /// `optional` icon URL.
    #[serde(default, alias = "icon_url", skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
}

/// A URL and binding at which the agent is reachable (§4.4.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// REQUIRED endpoint URL.
    pub url: String,
    /// REQUIRED: `JSONRPC`, `GRPC`, `HTTP+JSON` or a URI.
    #[serde(alias = "protocol_binding")]
    pub protocol_binding: String,
    /// Tenant the client must echo.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// REQUIRED `Major.Minor`.
    #[serde(alias = "protocol_version")]
    pub protocol_version: String,
}

/// The organisation behind the agent (§4.4.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentProvider {
    /// REQUIRED.
    pub url: String,
    /// REQUIRED.
    pub organization: String,
}

/// Optional features (§4.4.3). Absent or false means unsupported (§3.3.4).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// `optional` streaming support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// `optional` push notification support.
    #[serde(default, alias = "push_notifications", skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Declared extensions.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
    /// `optional` extended card support.
    #[serde(default, alias = "extended_agent_card", skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
}

/// A protocol extension the agent supports (§4.4.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentExtension {
    /// Extension URI.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub uri: String,
    /// What the extension does.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The client must activate it (else -32008).
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// Extension parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// A capability of the agent (§4.4.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// REQUIRED.
    pub id: String,
    /// REQUIRED.
    pub name: String,
    /// REQUIRED.
    pub description: String,
    /// REQUIRED.
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Input media types, overriding the card's defaults.
    #[serde(default, deserialize_with = "null_default", alias = "input_modes", skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    /// Output media types, overriding the card's defaults.
    #[serde(default, deserialize_with = "null_default", alias = "output_modes", skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    /// Security requirements of this skill.
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
    /// REQUIRED base64url protected header.
    pub protected: String,
    /// REQUIRED base64url signature.
    pub signature: String,
    /// Unprotected header.
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
    /// OAuth 2.0.
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    /// OpenID Connect.
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// Mutual TLS.
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
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// REQUIRED: `query`, `header` or `cookie`.
    pub location: String,
    /// REQUIRED parameter name.
    pub name: String,
}

/// §4.5.3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// REQUIRED scheme, e.g. `Bearer`.
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
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// REQUIRED flow.
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
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// REQUIRED discovery URL.
    #[serde(alias = "open_id_connect_url")]
    pub open_id_connect_url: String,
}

/// §4.5.6.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// One OAuth 2.0 flow (§4.5.7).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum OAuthFlows {
    /// Authorization code flow.
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// Client credentials flow.
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// Deprecated implicit flow.
    Implicit(ImplicitOAuthFlow),
    /// Deprecated password flow.
    Password(PasswordOAuthFlow),
    /// Device code flow.
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
    /// REQUIRED.
    #[serde(alias = "authorization_url")]
    pub authorization_url: String,
    /// REQUIRED.
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// REQUIRED scope → description.
    pub scopes: BTreeMap<String, String>,
    /// PKCE is required.
    #[serde(default, alias = "pkce_required", skip_serializing_if = "is_false")]
    pub pkce_required: bool,
}

/// §4.5.9.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// REQUIRED.
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// REQUIRED scope → description.
    pub scopes: BTreeMap<String, String>,
}

/// §4.5.10.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceCodeOAuthFlow {
    /// REQUIRED.
    #[serde(alias = "device_authorization_url")]
    pub device_authorization_url: String,
    /// REQUIRED.
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "refresh_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// REQUIRED scope → description.
    pub scopes: BTreeMap<String, String>,
}

/// Deprecated implicit flow (§4.5.7): kept in the proto, all fields optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// Authorization URL.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "authorization_url",
        skip_serializing_if = "String::is_empty"
    )]
    pub authorization_url: String,
    /// Refresh URL.
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
    /// Token URL.
    #[serde(default, deserialize_with = "null_default", alias = "token_url", skip_serializing_if = "String::is_empty")]
    pub token_url: String,
    /// Refresh URL.
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

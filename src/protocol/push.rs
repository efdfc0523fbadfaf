//! Push notification configuration objects (§4.3).

use serde::{Deserialize, Serialize};

use super::wire::null_default;

/// How the agent authenticates to the webhook (§4.3.2): `Authorization: <scheme> <credentials>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthenticationInfo {
    /// IANA HTTP auth scheme, e.g. `Bearer`.
    pub scheme: String,
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub credentials: String,
}

/// A webhook registered for a task: the Create request and every config result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Tenant, echoed from the selected interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// Config id; server-assigned if empty.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The task this config belongs to (empty inside SendMessage).
    #[serde(default, deserialize_with = "null_default", alias = "task_id", skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    pub url: String,
    /// Token unique to this task or session.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

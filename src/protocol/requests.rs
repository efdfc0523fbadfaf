//! Request and response messages of the 11 methods (§3.1, §9.4).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::push::TaskPushNotificationConfig;
use super::task::{Message, Task, TaskState, is_unspecified_state};
use super::timestamp::Timestamp;
use super::wire::{int32, is_false, is_zero, null_default, opt_int32};

/// How the server should handle a SendMessage (§3.2.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "accepted_output_modes",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub accepted_output_modes: Vec<String>,
    /// A webhook to register for the new task.
    #[serde(default, alias = "task_push_notification_config", skip_serializing_if = "Option::is_none")]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// Most recent messages to include in the returned task.
    #[serde(
        default,
        alias = "history_length",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Return right after creating the task instead of waiting (default: wait).
    #[serde(default, alias = "return_immediately", skip_serializing_if = "is_false")]
    pub return_immediately: bool,
}

/// Params of SendMessage and SendStreamingMessage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Tenant of the selected interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    pub message: Message,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// Params of GetTask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Tenant of the selected interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    pub id: String,
    /// Most recent messages to include.
    #[serde(
        default,
        alias = "history_length",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
}

/// Params of ListTasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Tenant of the selected interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// Only tasks in this context.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "context_id",
        skip_serializing_if = "String::is_empty"
    )]
    pub context_id: String,
    /// Only tasks in this state.
    #[serde(default, skip_serializing_if = "is_unspecified_state")]
    pub status: TaskState,
    /// Page size, 1..=100, default 50.
    #[serde(default, alias = "page_size", deserialize_with = "opt_int32", skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i32>,
    /// A previous response's `nextPageToken`; empty for the first page.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "page_token",
        skip_serializing_if = "String::is_empty"
    )]
    pub page_token: String,
    /// Most recent messages per task.
    #[serde(
        default,
        alias = "history_length",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status timestamp is at or after this instant.
    #[serde(default, alias = "status_timestamp_after", skip_serializing_if = "Option::is_none")]
    pub status_timestamp_after: Option<Timestamp>,
    /// Include artifacts (default false: omitted).
    #[serde(default, alias = "include_artifacts", skip_serializing_if = "Option::is_none")]
    pub include_artifacts: Option<bool>,
}

/// Result of ListTasks. Every field is REQUIRED, so all are always emitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    pub tasks: Vec<Task>,
    /// Cursor of the next page, `""` on the last page.
    #[serde(alias = "next_page_token")]
    pub next_page_token: String,
    /// The page size used.
    #[serde(alias = "page_size", deserialize_with = "int32")]
    pub page_size: i32,
    /// Matching tasks before pagination.
    #[serde(alias = "total_size", deserialize_with = "int32")]
    pub total_size: i32,
}

/// Params of CancelTask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelTaskRequest {
    /// Tenant of the selected interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// Params of SubscribeToTask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscribeToTaskRequest {
    /// Tenant of the selected interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    pub id: String,
}

/// Params of GetTaskPushNotificationConfig and DeleteTaskPushNotificationConfig.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfigRef {
    /// Tenant of the selected interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Config id.
    pub id: String,
}

/// Params of GetTaskPushNotificationConfig.
pub type GetTaskPushNotificationConfigRequest = TaskPushNotificationConfigRef;
/// Params of DeleteTaskPushNotificationConfig.
pub type DeleteTaskPushNotificationConfigRequest = TaskPushNotificationConfigRef;

/// Params of ListTaskPushNotificationConfigs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Tenant of the selected interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Page size (0 = server default).
    #[serde(default, alias = "page_size", deserialize_with = "int32", skip_serializing_if = "is_zero")]
    pub page_size: i32,
    /// A previous response's `nextPageToken`; empty for the first page.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "page_token",
        skip_serializing_if = "String::is_empty"
    )]
    pub page_token: String,
}

/// Result of ListTaskPushNotificationConfigs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs of this page; emitted as `[]` when empty, which every ProtoJSON parser accepts and
    /// naive clients need.
    #[serde(default)]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Cursor of the next page; omitted on the last page.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "next_page_token",
        skip_serializing_if = "String::is_empty"
    )]
    pub next_page_token: String,
}

/// Params of GetExtendedAgentCard (may be omitted entirely).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetExtendedAgentCardRequest {
    /// Tenant of the selected interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
}

//! Core objects (§4.1): Task, TaskStatus, TaskState, Message, Role, Artifact.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::part::Part;
use super::timestamp::Timestamp;
use super::wire::{null_default, proto_enum};

proto_enum! {
    /// The lifecycle state of a task (§4.1.3).
    TaskState {
        Unspecified = 0 => "TASK_STATE_UNSPECIFIED",
        Submitted = 1 => "TASK_STATE_SUBMITTED",
        Working = 2 => "TASK_STATE_WORKING",
        Completed = 3 => "TASK_STATE_COMPLETED",
        Failed = 4 => "TASK_STATE_FAILED",
        Canceled = 5 => "TASK_STATE_CANCELED",
        InputRequired = 6 => "TASK_STATE_INPUT_REQUIRED",
        Rejected = 7 => "TASK_STATE_REJECTED",
        AuthRequired = 8 => "TASK_STATE_AUTH_REQUIRED",
    }
}

impl TaskState {
    /// COMPLETED, FAILED, CANCELED and REJECTED: nothing follows them (§3.1.1).
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected)
    }

    /// INPUT_REQUIRED and AUTH_REQUIRED: the task waits for the client (§3.2.2).
    pub fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }
}

proto_enum! {
    /// Who sent a message (§4.1.5).
    Role {
        Unspecified = 0 => "ROLE_UNSPECIFIED",
        User = 1 => "ROLE_USER",
        Agent = 2 => "ROLE_AGENT",
    }
}

/// `skip_serializing_if` for implicit-presence TaskState fields.
pub(crate) fn is_unspecified_state(s: &TaskState) -> bool {
    *s == TaskState::Unspecified
}

/// A unit of communication between client and agent (§4.1.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// REQUIRED, creator-generated id.
    #[serde(alias = "message_id")]
    pub message_id: String,
    /// Conversation context.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "context_id",
        skip_serializing_if = "String::is_empty"
    )]
    pub context_id: String,
    /// Task this message belongs to.
    #[serde(default, deserialize_with = "null_default", alias = "task_id", skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// REQUIRED sender role.
    pub role: Role,
    /// REQUIRED, at least one part.
    pub parts: Vec<Part>,
    /// Optional metadata struct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs used by this message.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Related task ids (advisory).
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "reference_task_ids",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// The first text part's content, which steers the scripted agent (ACTS §11).
    pub fn first_text(&self) -> Option<&str> {
        self.parts.iter().find_map(Part::as_text)
    }
}

/// A task's current state (§4.1.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    /// REQUIRED.
    pub state: TaskState,
    /// The agent's status message, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When this status was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

/// An output of a task (§4.1.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// REQUIRED, unique within the task.
    #[serde(alias = "artifact_id")]
    pub artifact_id: String,
    /// Human-readable name.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Human-readable description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// REQUIRED, at least one part.
    pub parts: Vec<Part>,
    /// Optional metadata struct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs used by this artifact.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

/// The unit of work (§4.1.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// REQUIRED, server-generated.
    pub id: String,
    /// Conversation context.
    #[serde(
        default,
        deserialize_with = "null_default",
        alias = "context_id",
        skip_serializing_if = "String::is_empty"
    )]
    pub context_id: String,
    /// REQUIRED.
    pub status: TaskStatus,
    /// Outputs so far.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// Messages exchanged so far.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Optional metadata struct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

//! Streaming events (§4.2) and the two response oneofs: SendMessageResponse and StreamResponse (§3.2.3).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::task::{Artifact, Message, Task, TaskStatus};
use super::wire::{is_false, oneof_deserialize};

/// A change of a task's status (§4.2.1). There is no `final` field in 1.0: closure ends a stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    #[serde(alias = "task_id")]
    pub task_id: String,
    #[serde(alias = "context_id")]
    pub context_id: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A new or appended artifact chunk (§4.2.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    #[serde(alias = "task_id")]
    pub task_id: String,
    #[serde(alias = "context_id")]
    pub context_id: String,
    pub artifact: Artifact,
    /// Append these parts to the artifact with the same id sent before.
    #[serde(default, skip_serializing_if = "is_false")]
    pub append: bool,
    #[serde(default, alias = "last_chunk", skip_serializing_if = "is_false")]
    pub last_chunk: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// The result of SendMessage: a Task or a direct Message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// `{"task": …}`
    Task(Task),
    /// `{"message": …}`
    Message(Message),
}

oneof_deserialize!(SendMessageResponse {
    Task => "task",
    Message => "message",
});

/// One event of a stream, and the body of a push notification.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// A task snapshot.
    Task(Task),
    Message(Message),
    StatusUpdate(TaskStatusUpdateEvent),
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

oneof_deserialize!(StreamResponse {
    Task => "task",
    Message => "message",
    StatusUpdate => "statusUpdate",
    ArtifactUpdate => "artifactUpdate",
});

impl StreamResponse {
    /// The ProtoJSON member name of this event.
    pub fn member(&self) -> &'static str {
        match self {
            StreamResponse::Task(_) => "task",
            StreamResponse::Message(_) => "message",
            StreamResponse::StatusUpdate(_) => "statusUpdate",
            StreamResponse::ArtifactUpdate(_) => "artifactUpdate",
        }
    }
}

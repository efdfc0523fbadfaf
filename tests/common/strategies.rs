// Include with `#[path = "common/strategies.rs"] mod strategies;` from a tests/*.rs file.
//! proptest strategies for A2A 1.0 objects as the mock's typed wire model spells them: shared by
//! the wire-model round trips and the fuzzing of the mock and of the kit's client, so that every
//! one of them draws from the same awkward strings, values and shapes.
#![allow(dead_code)]

use a2a_conform::protocol::{
    Artifact, AuthenticationInfo, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest,
    ListTasksResponse, Message, Part, PartContent, Role, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskArtifactUpdateEvent,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value};

/// Strings: mostly ordinary, sometimes arbitrary printable Unicode, sometimes characters JSON must
/// escape.
pub fn text() -> impl Strategy<Value = String> {
    let awkward =
        vec(select(vec!['\0', '\n', '\t', '\u{1f}', '"', '\\', '/', '\u{7f}', '\u{2028}', 'é', '€', '😀', '_']), 0..5)
            .prop_map(String::from_iter);
    prop_oneof![
        6 => "[a-zA-Z0-9 ._:/+-]{0,12}",
        2 => "\\PC{0,8}",
        1 => awkward,
    ]
}

/// Keys of free-form maps, including underscores and the names banned from protocol objects.
pub fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z][a-z0-9_]{0,8}",
        1 => text(),
        1 => select(vec!["kind", "final", "context_id", "_", ""]).prop_map(str::to_owned),
    ]
}

pub fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        // Dyadic fractions with few digits: exactly representable and exactly re-parsed.
        (-1_000_000i32..1_000_000).prop_map(|n| Value::from(f64::from(n) / 8.0)),
        text().prop_map(Value::String),
    ]
}

/// Any JSON value (`google.protobuf.Value`), nested at most three levels.
pub fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(key(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A `google.protobuf.Struct`.
pub fn json_struct() -> impl Strategy<Value = Map<String, Value>> {
    btree_map(key(), json_value(), 0..4).prop_map(|m| m.into_iter().collect())
}

pub fn metadata() -> impl Strategy<Value = Option<Map<String, Value>>> {
    option::of(json_struct())
}

pub fn strings() -> impl Strategy<Value = Vec<String>> {
    vec(text(), 0..3)
}

/// 0001-01-01T00:00:00.000Z, the first instant ProtoJSON can spell.
pub const MIN_MS: i64 = -62_135_596_800_000;
/// 9999-12-31T23:59:59.999Z, the last one.
pub const MAX_MS: i64 = 253_402_300_799_999;

pub fn timestamp() -> impl Strategy<Value = Timestamp> {
    prop_oneof![MIN_MS..=MAX_MS, 1_500_000_000_000i64..2_000_000_000_000, Just(MIN_MS), Just(MAX_MS), Just(0i64),]
        .prop_map(|ms| Timestamp::from_unix_millis(i128::from(ms)).expect("within ProtoJSON range"))
}

pub fn task_state() -> impl Strategy<Value = TaskState> {
    select(TaskState::ALL)
}

pub fn role() -> impl Strategy<Value = Role> {
    select(Role::ALL)
}

pub fn part_content() -> impl Strategy<Value = PartContent> {
    prop_oneof![
        text().prop_map(PartContent::Text),
        vec(any::<u8>(), 0..24).prop_map(PartContent::Raw),
        text().prop_map(PartContent::Url),
        prop_oneof![1 => Just(Value::Null), 4 => json_value()].prop_map(PartContent::Data),
    ]
}

pub fn part() -> impl Strategy<Value = Part> {
    (part_content(), metadata(), text(), text()).prop_map(|(content, metadata, filename, media_type)| Part {
        content,
        metadata,
        filename,
        media_type,
    })
}

pub fn parts() -> impl Strategy<Value = Vec<Part>> {
    vec(part(), 0..3)
}

pub fn message() -> impl Strategy<Value = Message> {
    (text(), text(), text(), role(), parts(), metadata(), strings(), strings()).prop_map(
        |(message_id, context_id, task_id, role, parts, metadata, extensions, reference_task_ids)| Message {
            message_id,
            context_id,
            task_id,
            role,
            parts,
            metadata,
            extensions,
            reference_task_ids,
        },
    )
}

pub fn task_status() -> impl Strategy<Value = TaskStatus> {
    (task_state(), option::of(message()), option::of(timestamp())).prop_map(|(state, message, timestamp)| TaskStatus {
        state,
        message,
        timestamp,
    })
}

pub fn artifact() -> impl Strategy<Value = Artifact> {
    (text(), text(), text(), parts(), metadata(), strings()).prop_map(
        |(artifact_id, name, description, parts, metadata, extensions)| Artifact {
            artifact_id,
            name,
            description,
            parts,
            metadata,
            extensions,
        },
    )
}

pub fn task() -> impl Strategy<Value = Task> {
    (text(), text(), task_status(), vec(artifact(), 0..3), vec(message(), 0..3), metadata()).prop_map(
        |(id, context_id, status, artifacts, history, metadata)| Task {
            id,
            context_id,
            status,
            artifacts,
            history,
            metadata,
        },
    )
}

pub fn status_update() -> impl Strategy<Value = TaskStatusUpdateEvent> {
    (text(), text(), task_status(), metadata()).prop_map(|(task_id, context_id, status, metadata)| {
        TaskStatusUpdateEvent { task_id, context_id, status, metadata }
    })
}

pub fn artifact_update() -> impl Strategy<Value = TaskArtifactUpdateEvent> {
    (text(), text(), artifact(), any::<bool>(), any::<bool>(), metadata()).prop_map(
        |(task_id, context_id, artifact, append, last_chunk, metadata)| TaskArtifactUpdateEvent {
            task_id,
            context_id,
            artifact,
            append,
            last_chunk,
            metadata,
        },
    )
}

pub fn send_message_response() -> impl Strategy<Value = SendMessageResponse> {
    prop_oneof![task().prop_map(SendMessageResponse::Task), message().prop_map(SendMessageResponse::Message)]
}

pub fn stream_response() -> impl Strategy<Value = StreamResponse> {
    prop_oneof![
        task().prop_map(StreamResponse::Task),
        message().prop_map(StreamResponse::Message),
        status_update().prop_map(StreamResponse::StatusUpdate),
        artifact_update().prop_map(StreamResponse::ArtifactUpdate),
    ]
}

pub fn authentication_info() -> impl Strategy<Value = AuthenticationInfo> {
    (text(), text()).prop_map(|(scheme, credentials)| AuthenticationInfo { scheme, credentials })
}

pub fn push_config() -> impl Strategy<Value = TaskPushNotificationConfig> {
    (text(), text(), text(), text(), text(), option::of(authentication_info())).prop_map(
        |(tenant, id, task_id, url, token, authentication)| TaskPushNotificationConfig {
            tenant,
            id,
            task_id,
            url,
            token,
            authentication,
        },
    )
}

pub fn opt_i32() -> impl Strategy<Value = Option<i32>> {
    option::of(prop_oneof![any::<i32>(), 0i32..200, Just(i32::MIN), Just(i32::MAX)])
}

pub fn send_configuration() -> impl Strategy<Value = SendMessageConfiguration> {
    (strings(), option::of(push_config()), opt_i32(), any::<bool>()).prop_map(
        |(accepted_output_modes, task_push_notification_config, history_length, return_immediately)| {
            SendMessageConfiguration {
                accepted_output_modes,
                task_push_notification_config,
                history_length,
                return_immediately,
            }
        },
    )
}

pub fn send_request() -> impl Strategy<Value = SendMessageRequest> {
    (text(), message(), option::of(send_configuration()), metadata()).prop_map(
        |(tenant, message, configuration, metadata)| SendMessageRequest { tenant, message, configuration, metadata },
    )
}

pub fn get_task_request() -> impl Strategy<Value = GetTaskRequest> {
    (text(), text(), opt_i32()).prop_map(|(tenant, id, history_length)| GetTaskRequest { tenant, id, history_length })
}

pub fn list_tasks_request() -> impl Strategy<Value = ListTasksRequest> {
    (text(), text(), task_state(), opt_i32(), text(), opt_i32(), option::of(timestamp()), option::of(any::<bool>()))
        .prop_map(
            |(
                tenant,
                context_id,
                status,
                page_size,
                page_token,
                history_length,
                status_timestamp_after,
                include_artifacts,
            )| ListTasksRequest {
                tenant,
                context_id,
                status,
                page_size,
                page_token,
                history_length,
                status_timestamp_after,
                include_artifacts,
            },
        )
}

pub fn list_tasks_response() -> impl Strategy<Value = ListTasksResponse> {
    (vec(task(), 0..3), text(), any::<i32>(), any::<i32>()).prop_map(
        |(tasks, next_page_token, page_size, total_size)| ListTasksResponse {
            tasks,
            next_page_token,
            page_size,
            total_size,
        },
    )
}

pub fn cancel_request() -> impl Strategy<Value = CancelTaskRequest> {
    (text(), text(), metadata()).prop_map(|(tenant, id, metadata)| CancelTaskRequest { tenant, id, metadata })
}

pub fn subscribe_request() -> impl Strategy<Value = SubscribeToTaskRequest> {
    (text(), text()).prop_map(|(tenant, id)| SubscribeToTaskRequest { tenant, id })
}

pub fn config_ref() -> impl Strategy<Value = TaskPushNotificationConfigRef> {
    (text(), text(), text()).prop_map(|(tenant, task_id, id)| TaskPushNotificationConfigRef { tenant, task_id, id })
}

pub fn list_configs_request() -> impl Strategy<Value = ListTaskPushNotificationConfigsRequest> {
    (text(), text(), any::<i32>(), text()).prop_map(|(tenant, task_id, page_size, page_token)| {
        ListTaskPushNotificationConfigsRequest { tenant, task_id, page_size, page_token }
    })
}

pub fn list_configs_response() -> impl Strategy<Value = ListTaskPushNotificationConfigsResponse> {
    (vec(push_config(), 0..3), text())
        .prop_map(|(configs, next_page_token)| ListTaskPushNotificationConfigsResponse { configs, next_page_token })
}

pub fn extended_card_request() -> impl Strategy<Value = GetExtendedAgentCardRequest> {
    text().prop_map(|tenant| GetExtendedAgentCardRequest { tenant })
}

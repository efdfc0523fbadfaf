//! Property and edge-case tests of the A2A 1.0 wire model (`a2a_conform::protocol`).
//!
//! For every public protocol type, arbitrary values must (a) survive serialize → deserialize unchanged,
//! (b) serialize to JSON that matches the schema definition of the same proto name in
//! `fixtures/spec/a2a.schema.json`, and (c) use ProtoJSON spelling: camelCase keys only (no `_`
//! outside free-form maps), no 0.3-era `kind` / `final` keys, REQUIRED fields always present and
//! timestamps in the canonical `YYYY-MM-DDTHH:mm:ss.sssZ` form. The targeted tests at the end pin the
//! parser's edge rules (oneof cardinality, `data: null`, snake_case and integer-enum input, int32
//! strings and range, timestamp offsets, unknown fields).

#[path = "common/schema.rs"]
mod schema;
#[path = "common/strategies.rs"]
mod strategies;

use std::collections::BTreeMap;
use std::fmt::Debug;

use a2a_conform::protocol::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface, AgentProvider, AgentSkill,
    ApiKeySecurityScheme, AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow, DeviceCodeOAuthFlow, GetTaskRequest,
    HttpAuthSecurityScheme, ImplicitOAuthFlow, ListTaskPushNotificationConfigsRequest, ListTasksRequest,
    ListTasksResponse, Message, MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme,
    Part, PartContent, PasswordOAuthFlow, Role, SecurityRequirement, SecurityScheme, SendMessageConfiguration,
    SendMessageResponse, StreamResponse, StringList, Task, TaskState, TaskStatus, Timestamp,
};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};
use strategies::*;

// ---------------------------------------------------------------------------------------------------
// Checks shared by every property
// ---------------------------------------------------------------------------------------------------

/// Keys whose value is free-form JSON (`google.protobuf.Struct` / `Value`) or a `map<string, string>`:
/// neither their keys nor anything below them is ProtoJSON field spelling.
const OPAQUE: &[&str] = &["metadata", "params", "header", "data", "scopes"];

/// `map<string, Message>` fields: the keys are user-chosen names, the values are protocol objects.
const NAMED_MAPS: &[&str] = &["securitySchemes", "schemes"];

/// Keys holding a `google.protobuf.Timestamp`.
const TIMESTAMP_KEYS: &[&str] = &["timestamp", "statusTimestampAfter"];

/// REQUIRED fields (by proto `field_behavior`) in ProtoJSON spelling, per schema definition: they are
/// emitted even at their default value.
const REQUIRED: &[(&str, &[&str])] = &[
    ("Task", &["id", "status"]),
    ("TaskStatus", &["state"]),
    ("Message", &["messageId", "role", "parts"]),
    ("Artifact", &["artifactId", "parts"]),
    ("TaskStatusUpdateEvent", &["taskId", "contextId", "status"]),
    ("TaskArtifactUpdateEvent", &["taskId", "contextId", "artifact"]),
    ("AuthenticationInfo", &["scheme"]),
    ("TaskPushNotificationConfig", &["url"]),
    ("AgentInterface", &["url", "protocolBinding", "protocolVersion"]),
    (
        "AgentCard",
        &[
            "name",
            "description",
            "supportedInterfaces",
            "version",
            "capabilities",
            "defaultInputModes",
            "defaultOutputModes",
            "skills",
        ],
    ),
    ("AgentProvider", &["url", "organization"]),
    ("AgentSkill", &["id", "name", "description", "tags"]),
    ("AgentCardSignature", &["protected", "signature"]),
    ("APIKeySecurityScheme", &["location", "name"]),
    ("HTTPAuthSecurityScheme", &["scheme"]),
    ("OAuth2SecurityScheme", &["flows"]),
    ("OpenIdConnectSecurityScheme", &["openIdConnectUrl"]),
    ("AuthorizationCodeOAuthFlow", &["authorizationUrl", "tokenUrl", "scopes"]),
    ("ClientCredentialsOAuthFlow", &["tokenUrl", "scopes"]),
    ("DeviceCodeOAuthFlow", &["deviceAuthorizationUrl", "tokenUrl", "scopes"]),
    ("SendMessageRequest", &["message"]),
    ("GetTaskRequest", &["id"]),
    ("ListTasksResponse", &["tasks", "nextPageToken", "pageSize", "totalSize"]),
    ("CancelTaskRequest", &["id"]),
    ("SubscribeToTaskRequest", &["id"]),
    ("GetTaskPushNotificationConfigRequest", &["taskId", "id"]),
    ("DeleteTaskPushNotificationConfigRequest", &["taskId", "id"]),
    ("ListTaskPushNotificationConfigsRequest", &["taskId"]),
];

/// `YYYY-MM-DDTHH:mm:ss.sssZ`, the only timestamp spelling an A2A 1.0 emitter may produce.
fn is_canonical_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            23 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// Collects every ProtoJSON spelling violation below `v` into `bad` (as `path: problem`).
fn spelling(v: &Value, path: &str, bad: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let here = format!("{path}/{k}");
                if k.contains('_') {
                    bad.push(format!("{here}: key is not lowerCamelCase"));
                }
                if k == "kind" || k == "final" {
                    bad.push(format!("{here}: `{k}` does not exist in A2A 1.0"));
                }
                if TIMESTAMP_KEYS.contains(&k.as_str()) {
                    match child.as_str() {
                        Some(s) if is_canonical_timestamp(s) => {}
                        _ => bad.push(format!("{here}: {child} is not YYYY-MM-DDTHH:mm:ss.sssZ")),
                    }
                }
                if OPAQUE.contains(&k.as_str()) {
                    continue;
                }
                match (NAMED_MAPS.contains(&k.as_str()), child) {
                    (true, Value::Object(named)) => {
                        for (name, value) in named {
                            spelling(value, &format!("{here}/{name}"), bad);
                        }
                    }
                    _ => spelling(child, &here, bad),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                spelling(item, &format!("{path}/{i}"), bad);
            }
        }
        _ => {}
    }
}

/// The proto field name of a ProtoJSON (lowerCamelCase) key: `contextId` → `context_id`.
fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Respells every protocol key below `v` with its proto field name, which ProtoJSON parsers must
/// also accept; free-form maps and the names in named maps are left alone.
fn to_proto_names(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, child)| {
                    let child = if OPAQUE.contains(&k.as_str()) {
                        child.clone()
                    } else if let (true, Value::Object(named)) = (NAMED_MAPS.contains(&k.as_str()), child) {
                        Value::Object(named.iter().map(|(name, value)| (name.clone(), to_proto_names(value))).collect())
                    } else {
                        to_proto_names(child)
                    };
                    (snake_case(k), child)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(to_proto_names).collect()),
        other => other.clone(),
    }
}

fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

/// The three properties: lossless round trip (through text, through `Value`, and from the same JSON
/// respelled with proto field names), schema validity against each of `defs`, ProtoJSON spelling and
/// REQUIRED-field presence.
fn check<T>(value: &T, defs: &[&str]) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let text = serde_json::to_string(value).map_err(|e| fail(format!("cannot serialize {value:?}: {e}")))?;
    let back: T = serde_json::from_str(&text).map_err(|e| fail(format!("cannot re-parse {text}: {e}")))?;
    prop_assert_eq!(&back, value, "round trip through {}", text);

    let json: Value = serde_json::from_str(&text).map_err(|e| fail(format!("emitted invalid JSON {text}: {e}")))?;
    let back: T =
        serde_json::from_value(json.clone()).map_err(|e| fail(format!("cannot re-parse Value {json}: {e}")))?;
    prop_assert_eq!(&back, value, "round trip through Value {}", json);

    let proto_names = to_proto_names(&json);
    let back: T = serde_json::from_value(proto_names.clone())
        .map_err(|e| fail(format!("cannot parse proto field names {proto_names}: {e}")))?;
    prop_assert_eq!(&back, value, "round trip through proto field names {}", proto_names);

    for def in defs {
        schema::validate(def, &json).map_err(fail)?;
        // The schema also lists the proto field names (as patternProperties): the respelled form
        // must be accepted too, which keeps `to_proto_names` honest.
        schema::validate(def, &proto_names).map_err(|e| fail(format!("proto field names: {e}")))?;
        if let Some((_, required)) = REQUIRED.iter().find(|(d, _)| d == def) {
            for key in *required {
                prop_assert!(json.get(key).is_some(), "REQUIRED `{}` missing from {} {}", key, def, json);
            }
        }
    }

    let mut bad = Vec::new();
    spelling(&json, "", &mut bad);
    prop_assert!(bad.is_empty(), "non-ProtoJSON spelling {:?} in {}", bad, json);
    Ok(())
}

// ---------------------------------------------------------------------------------------------------
// Strategies (those of messages, tasks and requests are shared: tests/common/strategies.rs)
// ---------------------------------------------------------------------------------------------------

fn agent_interface() -> impl Strategy<Value = AgentInterface> {
    let binding = prop_oneof![select(vec!["JSONRPC", "GRPC", "HTTP+JSON"]).prop_map(str::to_owned), text(),];
    (text(), binding, text(), text()).prop_map(|(url, protocol_binding, tenant, protocol_version)| AgentInterface {
        url,
        protocol_binding,
        tenant,
        protocol_version,
    })
}

fn agent_provider() -> impl Strategy<Value = AgentProvider> {
    (text(), text()).prop_map(|(url, organization)| AgentProvider { url, organization })
}

fn agent_extension() -> impl Strategy<Value = AgentExtension> {
    (text(), text(), any::<bool>(), metadata()).prop_map(|(uri, description, required, params)| AgentExtension {
        uri,
        description,
        required,
        params,
    })
}

fn agent_capabilities() -> impl Strategy<Value = AgentCapabilities> {
    (option::of(any::<bool>()), option::of(any::<bool>()), vec(agent_extension(), 0..3), option::of(any::<bool>()))
        .prop_map(|(streaming, push_notifications, extensions, extended_agent_card)| AgentCapabilities {
            streaming,
            push_notifications,
            extensions,
            extended_agent_card,
        })
}

fn string_list() -> impl Strategy<Value = StringList> {
    strings().prop_map(|list| StringList { list })
}

fn security_requirement() -> impl Strategy<Value = SecurityRequirement> {
    btree_map(key(), string_list(), 0..3).prop_map(|schemes| SecurityRequirement { schemes })
}

fn agent_skill() -> impl Strategy<Value = AgentSkill> {
    (text(), text(), text(), strings(), strings(), strings(), strings(), vec(security_requirement(), 0..2)).prop_map(
        |(id, name, description, tags, examples, input_modes, output_modes, security_requirements)| AgentSkill {
            id,
            name,
            description,
            tags,
            examples,
            input_modes,
            output_modes,
            security_requirements,
        },
    )
}

fn card_signature() -> impl Strategy<Value = AgentCardSignature> {
    (text(), text(), metadata()).prop_map(|(protected, signature, header)| AgentCardSignature {
        protected,
        signature,
        header,
    })
}

fn scopes() -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map(key(), text(), 0..3)
}

fn authorization_code_flow() -> impl Strategy<Value = AuthorizationCodeOAuthFlow> {
    (text(), text(), text(), scopes(), any::<bool>()).prop_map(
        |(authorization_url, token_url, refresh_url, scopes, pkce_required)| AuthorizationCodeOAuthFlow {
            authorization_url,
            token_url,
            refresh_url,
            scopes,
            pkce_required,
        },
    )
}

fn client_credentials_flow() -> impl Strategy<Value = ClientCredentialsOAuthFlow> {
    (text(), text(), scopes()).prop_map(|(token_url, refresh_url, scopes)| ClientCredentialsOAuthFlow {
        token_url,
        refresh_url,
        scopes,
    })
}

fn device_code_flow() -> impl Strategy<Value = DeviceCodeOAuthFlow> {
    (text(), text(), text(), scopes()).prop_map(|(device_authorization_url, token_url, refresh_url, scopes)| {
        DeviceCodeOAuthFlow { device_authorization_url, token_url, refresh_url, scopes }
    })
}

fn implicit_flow() -> impl Strategy<Value = ImplicitOAuthFlow> {
    (text(), text(), scopes()).prop_map(|(authorization_url, refresh_url, scopes)| ImplicitOAuthFlow {
        authorization_url,
        refresh_url,
        scopes,
    })
}

fn password_flow() -> impl Strategy<Value = PasswordOAuthFlow> {
    (text(), text(), scopes()).prop_map(|(token_url, refresh_url, scopes)| PasswordOAuthFlow {
        token_url,
        refresh_url,
        scopes,
    })
}

fn oauth_flows() -> impl Strategy<Value = OAuthFlows> {
    prop_oneof![
        authorization_code_flow().prop_map(OAuthFlows::AuthorizationCode),
        client_credentials_flow().prop_map(OAuthFlows::ClientCredentials),
        implicit_flow().prop_map(OAuthFlows::Implicit),
        password_flow().prop_map(OAuthFlows::Password),
        device_code_flow().prop_map(OAuthFlows::DeviceCode),
    ]
}

fn api_key_scheme() -> impl Strategy<Value = ApiKeySecurityScheme> {
    let location = prop_oneof![select(vec!["query", "header", "cookie"]).prop_map(str::to_owned), text()];
    (text(), location, text()).prop_map(|(description, location, name)| ApiKeySecurityScheme {
        description,
        location,
        name,
    })
}

fn http_auth_scheme() -> impl Strategy<Value = HttpAuthSecurityScheme> {
    (text(), text(), text()).prop_map(|(description, scheme, bearer_format)| HttpAuthSecurityScheme {
        description,
        scheme,
        bearer_format,
    })
}

fn oauth2_scheme() -> impl Strategy<Value = OAuth2SecurityScheme> {
    (text(), oauth_flows(), text()).prop_map(|(description, flows, oauth2_metadata_url)| OAuth2SecurityScheme {
        description,
        flows,
        oauth2_metadata_url,
    })
}

fn oidc_scheme() -> impl Strategy<Value = OpenIdConnectSecurityScheme> {
    (text(), text())
        .prop_map(|(description, open_id_connect_url)| OpenIdConnectSecurityScheme { description, open_id_connect_url })
}

fn mtls_scheme() -> impl Strategy<Value = MutualTlsSecurityScheme> {
    text().prop_map(|description| MutualTlsSecurityScheme { description })
}

fn security_scheme() -> impl Strategy<Value = SecurityScheme> {
    prop_oneof![
        api_key_scheme().prop_map(SecurityScheme::ApiKeySecurityScheme),
        http_auth_scheme().prop_map(SecurityScheme::HttpAuthSecurityScheme),
        oauth2_scheme().prop_map(SecurityScheme::Oauth2SecurityScheme),
        oidc_scheme().prop_map(SecurityScheme::OpenIdConnectSecurityScheme),
        mtls_scheme().prop_map(SecurityScheme::MtlsSecurityScheme),
    ]
}

fn agent_card() -> impl Strategy<Value = AgentCard> {
    let head = (
        text(),
        text(),
        vec(agent_interface(), 0..3),
        option::of(agent_provider()),
        text(),
        option::of(text()),
        agent_capabilities(),
    );
    let tail = (
        btree_map(key(), security_scheme(), 0..3),
        vec(security_requirement(), 0..2),
        strings(),
        strings(),
        vec(agent_skill(), 0..3),
        vec(card_signature(), 0..2),
        option::of(text()),
    );
    (head, tail).prop_map(
        |(
            (name, description, supported_interfaces, provider, version, documentation_url, capabilities),
            (
                security_schemes,
                security_requirements,
                default_input_modes,
                default_output_modes,
                skills,
                signatures,
                icon_url,
            ),
        )| AgentCard {
            name,
            description,
            supported_interfaces,
            provider,
            version,
            documentation_url,
            capabilities,
            security_schemes,
            security_requirements,
            default_input_modes,
            default_output_modes,
            skills,
            signatures,
            icon_url,
        },
    )
}

// ---------------------------------------------------------------------------------------------------
// Property tests: one per type
// ---------------------------------------------------------------------------------------------------

/// 64 cases per property (fast in debug builds); `PROPTEST_CASES=N` asks for a deeper run.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(64);
    // No regression files: a failure prints its minimal case, and the test tree stays clean.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    // Core objects (§4.1).

    #[test]
    fn task_round_trips(v in task()) { check(&v, &["Task"])?; }

    #[test]
    fn task_status_round_trips(v in task_status()) { check(&v, &["TaskStatus"])?; }

    #[test]
    fn task_state_round_trips(v in task_state()) {
        // No schema definition of its own (it is validated inside TaskStatus and ListTasksRequest).
        check(&v, &[])?;
        prop_assert_eq!(serde_json::to_value(v).unwrap(), json!(v.as_str()));
        prop_assert_eq!(serde_json::from_value::<TaskState>(json!(v.number())).unwrap(), v);
    }

    #[test]
    fn message_round_trips(v in message()) { check(&v, &["Message"])?; }

    #[test]
    fn role_round_trips(v in role()) {
        check(&v, &[])?;
        prop_assert_eq!(serde_json::to_value(v).unwrap(), json!(v.as_str()));
        prop_assert_eq!(serde_json::from_value::<Role>(json!(v.number())).unwrap(), v);
    }

    #[test]
    fn part_round_trips(v in part()) {
        check(&v, &["Part"])?;
        // Exactly one content member is emitted, and it is the one held.
        let json = serde_json::to_value(&v).unwrap();
        let members: Vec<&str> =
            ["text", "raw", "url", "data"].into_iter().filter(|m| json.get(m).is_some()).collect();
        prop_assert_eq!(members, vec![v.content.member()]);
    }

    #[test]
    fn artifact_round_trips(v in artifact()) { check(&v, &["Artifact"])?; }

    #[test]
    fn timestamp_round_trips(v in timestamp()) {
        check(&v, &["Timestamp"])?;
        let s = v.to_string();
        prop_assert!(is_canonical_timestamp(&s), "{} is not canonical", s);
        prop_assert_eq!(Timestamp::from_unix_millis(v.unix_millis()), Some(v));
    }

    #[test]
    fn timestamp_parses_any_offset_and_precision(
        ms in (MIN_MS + 86_400_000)..(MAX_MS - 86_400_000),
        sub_ms_nanos in 0i128..1_000_000,
        offset_minutes in -(23 * 60 + 59)..=(23 * 60 + 59),
    ) {
        use time::{OffsetDateTime, UtcOffset, format_description::well_known::Rfc3339};
        let instant = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000 + sub_ms_nanos).unwrap();
        let offset = UtcOffset::from_whole_seconds(offset_minutes * 60).unwrap();
        let spelled = instant.to_offset(offset).format(&Rfc3339).unwrap();
        let parsed = Timestamp::parse(&spelled).map_err(fail)?;
        // Held in UTC, truncated to the millisecond.
        prop_assert_eq!(Some(parsed), Timestamp::from_unix_millis(i128::from(ms)), "parsing {}", spelled);
        prop_assert!(is_canonical_timestamp(&parsed.to_string()));
    }

    // Streaming (§4.2) and the response oneofs.

    #[test]
    fn status_update_round_trips(v in status_update()) { check(&v, &["TaskStatusUpdateEvent"])?; }

    #[test]
    fn artifact_update_round_trips(v in artifact_update()) { check(&v, &["TaskArtifactUpdateEvent"])?; }

    #[test]
    fn send_message_response_round_trips(v in send_message_response()) {
        check(&v, &["SendMessageResponse"])?;
        let json = serde_json::to_value(&v).unwrap();
        prop_assert_eq!(json.as_object().map(Map::len), Some(1), "oneof emits one member: {}", json);
    }

    #[test]
    fn stream_response_round_trips(v in stream_response()) {
        check(&v, &["StreamResponse"])?;
        let json = serde_json::to_value(&v).unwrap();
        let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        prop_assert_eq!(keys, vec![v.member()]);
    }

    // Requests and responses of the 11 methods.

    #[test]
    fn send_message_configuration_round_trips(v in send_configuration()) {
        check(&v, &["SendMessageConfiguration"])?;
    }

    #[test]
    fn send_message_request_round_trips(v in send_request()) { check(&v, &["SendMessageRequest"])?; }

    #[test]
    fn get_task_request_round_trips(v in get_task_request()) { check(&v, &["GetTaskRequest"])?; }

    #[test]
    fn list_tasks_request_round_trips(v in list_tasks_request()) { check(&v, &["ListTasksRequest"])?; }

    #[test]
    fn list_tasks_response_round_trips(v in list_tasks_response()) { check(&v, &["ListTasksResponse"])?; }

    #[test]
    fn cancel_task_request_round_trips(v in cancel_request()) { check(&v, &["CancelTaskRequest"])?; }

    #[test]
    fn subscribe_to_task_request_round_trips(v in subscribe_request()) {
        check(&v, &["SubscribeToTaskRequest"])?;
    }

    #[test]
    fn push_config_ref_round_trips(v in config_ref()) {
        check(&v, &["GetTaskPushNotificationConfigRequest", "DeleteTaskPushNotificationConfigRequest"])?;
    }

    #[test]
    fn list_push_configs_request_round_trips(v in list_configs_request()) {
        check(&v, &["ListTaskPushNotificationConfigsRequest"])?;
    }

    #[test]
    fn list_push_configs_response_round_trips(v in list_configs_response()) {
        check(&v, &["ListTaskPushNotificationConfigsResponse"])?;
    }

    #[test]
    fn get_extended_card_request_round_trips(v in extended_card_request()) {
        check(&v, &["GetExtendedAgentCardRequest"])?;
    }

    // Push notification objects (§4.3).

    #[test]
    fn push_config_round_trips(v in push_config()) { check(&v, &["TaskPushNotificationConfig"])?; }

    #[test]
    fn authentication_info_round_trips(v in authentication_info()) { check(&v, &["AuthenticationInfo"])?; }

    // Agent Card (§4.4) and security (§4.5).

    #[test]
    fn agent_card_round_trips(v in agent_card()) { check(&v, &["AgentCard"])?; }

    #[test]
    fn agent_interface_round_trips(v in agent_interface()) { check(&v, &["AgentInterface"])?; }

    #[test]
    fn agent_provider_round_trips(v in agent_provider()) { check(&v, &["AgentProvider"])?; }

    #[test]
    fn agent_capabilities_round_trips(v in agent_capabilities()) { check(&v, &["AgentCapabilities"])?; }

    #[test]
    fn agent_extension_round_trips(v in agent_extension()) { check(&v, &["AgentExtension"])?; }

    #[test]
    fn agent_skill_round_trips(v in agent_skill()) { check(&v, &["AgentSkill"])?; }

    #[test]
    fn agent_card_signature_round_trips(v in card_signature()) { check(&v, &["AgentCardSignature"])?; }

    #[test]
    fn security_requirement_round_trips(v in security_requirement()) { check(&v, &["SecurityRequirement"])?; }

    #[test]
    fn string_list_round_trips(v in string_list()) { check(&v, &["StringList"])?; }

    #[test]
    fn security_scheme_round_trips(v in security_scheme()) {
        check(&v, &["SecurityScheme"])?;
        let json = serde_json::to_value(&v).unwrap();
        prop_assert_eq!(json.as_object().map(Map::len), Some(1), "oneof emits one member: {}", json);
    }

    #[test]
    fn api_key_scheme_round_trips(v in api_key_scheme()) { check(&v, &["APIKeySecurityScheme"])?; }

    #[test]
    fn http_auth_scheme_round_trips(v in http_auth_scheme()) { check(&v, &["HTTPAuthSecurityScheme"])?; }

    #[test]
    fn oauth2_scheme_round_trips(v in oauth2_scheme()) { check(&v, &["OAuth2SecurityScheme"])?; }

    #[test]
    fn oidc_scheme_round_trips(v in oidc_scheme()) { check(&v, &["OpenIdConnectSecurityScheme"])?; }

    #[test]
    fn mtls_scheme_round_trips(v in mtls_scheme()) { check(&v, &["MutualTlsSecurityScheme"])?; }

    #[test]
    fn oauth_flows_round_trips(v in oauth_flows()) {
        check(&v, &["OAuthFlows"])?;
        let json = serde_json::to_value(&v).unwrap();
        prop_assert_eq!(json.as_object().map(Map::len), Some(1), "oneof emits one member: {}", json);
    }

    #[test]
    fn authorization_code_flow_round_trips(v in authorization_code_flow()) {
        check(&v, &["AuthorizationCodeOAuthFlow"])?;
    }

    #[test]
    fn client_credentials_flow_round_trips(v in client_credentials_flow()) {
        check(&v, &["ClientCredentialsOAuthFlow"])?;
    }

    #[test]
    fn device_code_flow_round_trips(v in device_code_flow()) { check(&v, &["DeviceCodeOAuthFlow"])?; }

    #[test]
    fn implicit_flow_round_trips(v in implicit_flow()) { check(&v, &["ImplicitOAuthFlow"])?; }

    #[test]
    fn password_flow_round_trips(v in password_flow()) { check(&v, &["PasswordOAuthFlow"])?; }
}

// ---------------------------------------------------------------------------------------------------
// Targeted tests of the edge rules
// ---------------------------------------------------------------------------------------------------

fn parse<T: DeserializeOwned>(v: Value) -> Result<T, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

#[test]
fn part_with_two_members_is_rejected_naming_both() {
    let err = parse::<Part>(json!({"raw": "AAE=", "data": {"a": 1}})).unwrap_err();
    assert!(err.contains("found 2: [raw, data]"), "{err}");
    let err = parse::<Part>(json!({"text": "hi", "url": "https://example.com/x"})).unwrap_err();
    assert!(err.contains("found 2: [text, url]"), "{err}");
    // `data: null` still counts as set.
    let err = parse::<Part>(json!({"text": "hi", "data": null})).unwrap_err();
    assert!(err.contains("found 2: [text, data]"), "{err}");
}

#[test]
fn part_with_no_member_is_rejected() {
    let err = parse::<Part>(json!({"metadata": {"a": 1}, "mediaType": "text/plain"})).unwrap_err();
    assert!(err.contains("found 0"), "{err}");
    assert!(parse::<Part>(json!({})).is_err());
}

#[test]
fn part_data_null_is_data_null() {
    let part = parse::<Part>(json!({"data": null})).unwrap();
    assert_eq!(part.content, PartContent::Data(Value::Null));
    let emitted = serde_json::to_value(&part).unwrap();
    assert_eq!(emitted, json!({"data": null}));
    schema::assert_valid("Part", &emitted);
}

#[test]
fn snake_case_input_parses() {
    let msg = parse::<Message>(json!({
        "message_id": "m-1",
        "context_id": "ctx-1",
        "task_id": "t-1",
        "role": "ROLE_USER",
        "parts": [{"text": "hi", "media_type": "text/plain"}],
        "reference_task_ids": ["t-0"],
    }))
    .unwrap();
    assert_eq!(msg.message_id, "m-1");
    assert_eq!(msg.context_id, "ctx-1");
    assert_eq!(msg.task_id, "t-1");
    assert_eq!(msg.parts[0].media_type, "text/plain");
    assert_eq!(msg.reference_task_ids, ["t-0"]);
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        json!({
            "messageId": "m-1",
            "contextId": "ctx-1",
            "taskId": "t-1",
            "role": "ROLE_USER",
            "parts": [{"text": "hi", "mediaType": "text/plain"}],
            "referenceTaskIds": ["t-0"],
        })
    );

    // The camelCase spelling of the same field parses too (it once fell through as unknown).
    let part = parse::<Part>(json!({"text": "hi", "mediaType": "text/plain"})).unwrap();
    assert_eq!(part.media_type, "text/plain");

    let event = parse::<StreamResponse>(json!({
        "status_update": {"task_id": "t", "context_id": "c", "status": {"state": "TASK_STATE_WORKING"}},
    }))
    .unwrap();
    let StreamResponse::StatusUpdate(event) = event else { panic!("not a status update: {event:?}") };
    assert_eq!((event.task_id.as_str(), event.context_id.as_str()), ("t", "c"));
}

#[test]
fn integer_enums_parse_and_reemit_as_names() {
    let status = parse::<TaskStatus>(json!({"state": 3})).unwrap();
    assert_eq!(status.state, TaskState::Completed);
    assert_eq!(serde_json::to_value(&status).unwrap(), json!({"state": "TASK_STATE_COMPLETED"}));

    let msg = parse::<Message>(json!({"messageId": "m", "role": 2, "parts": []})).unwrap();
    assert_eq!(msg.role, Role::Agent);
    assert_eq!(serde_json::to_value(&msg).unwrap()["role"], "ROLE_AGENT");

    let req = parse::<ListTasksRequest>(json!({"status": 6})).unwrap();
    assert_eq!(serde_json::to_value(&req).unwrap(), json!({"status": "TASK_STATE_INPUT_REQUIRED"}));

    for bad in [json!(9), json!(-1), json!("TASK_STATE_DONE"), json!("completed"), json!(true)] {
        assert!(parse::<TaskStatus>(json!({ "state": bad })).is_err(), "state {bad} accepted");
    }
}

#[test]
fn empty_list_tasks_page_emits_every_required_field() {
    let page = ListTasksResponse { tasks: vec![], next_page_token: String::new(), page_size: 0, total_size: 0 };
    let json = serde_json::to_value(&page).unwrap();
    assert_eq!(json, json!({"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}));
    schema::assert_valid("ListTasksResponse", &json);
    assert_eq!(parse::<ListTasksResponse>(json).unwrap(), page);
}

#[test]
fn timestamp_with_offset_is_reemitted_in_utc() {
    let status = parse::<TaskStatus>(json!({
        "state": "TASK_STATE_WORKING",
        "timestamp": "2025-11-09T12:30:00+02:00",
    }))
    .unwrap();
    let json = serde_json::to_value(&status).unwrap();
    assert_eq!(json["timestamp"], "2025-11-09T10:30:00.000Z");
    schema::assert_valid("TaskStatus", &json);

    let cases = [
        ("2025-11-09T12:30:00.5+02:00", "2025-11-09T10:30:00.500Z"),
        ("2025-11-09T12:30:00.123456789+02:00", "2025-11-09T10:30:00.123Z"),
        ("2025-01-01T00:30:00.25-01:00", "2025-01-01T01:30:00.250Z"),
        ("2025-01-01T00:30:00+01:00", "2024-12-31T23:30:00.000Z"),
        ("2025-11-09T10:30:00Z", "2025-11-09T10:30:00.000Z"),
    ];
    for (input, expected) in cases {
        let ts = parse::<Timestamp>(json!(input)).unwrap();
        assert_eq!(serde_json::to_value(ts).unwrap(), json!(expected), "from {input}");
    }
    assert!(parse::<Timestamp>(json!("2025-11-09 10:30:00")).is_err());
    assert!(parse::<Timestamp>(json!(1_762_684_200)).is_err());
}

#[test]
fn stream_response_with_two_members_is_rejected() {
    let err = parse::<StreamResponse>(json!({
        "task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}},
        "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": []},
    }))
    .unwrap_err();
    assert!(err.contains("found 2"), "{err}");
    assert!(err.contains("task") && err.contains("message"), "{err}");
    let err = parse::<StreamResponse>(json!({})).unwrap_err();
    assert!(err.contains("found 0"), "{err}");
    let err = parse::<SendMessageResponse>(json!({
        "task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}},
        "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": []},
    }))
    .unwrap_err();
    assert!(err.contains("found 2"), "{err}");
}

#[test]
fn unknown_fields_are_ignored() {
    let task = parse::<Task>(json!({
        "kind": "task",
        "id": "t",
        "status": {"state": "TASK_STATE_SUBMITTED", "futureField": 1},
        "history": [{"kind": "message", "messageId": "m", "role": "ROLE_USER",
                     "parts": [{"kind": "text", "text": "hi", "somethingNew": [1, 2]}]}],
        "brandNew": {"nested": true},
    }))
    .unwrap();
    assert_eq!(task.id, "t");
    assert_eq!(task.history[0].parts[0].as_text(), Some("hi"));
    let json = serde_json::to_value(&task).unwrap();
    assert_eq!(
        json,
        json!({
            "id": "t",
            "status": {"state": "TASK_STATE_SUBMITTED"},
            "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}],
        })
    );
    schema::assert_valid("Task", &json);

    // An unknown oneof member next to a known one does not count towards the oneof.
    let event =
        parse::<StreamResponse>(json!({"message": {"messageId": "m", "role": 1, "parts": []}, "future": {}})).unwrap();
    assert_eq!(event.member(), "message");
}

#[test]
fn int32_fields_accept_strings_and_reject_out_of_range() {
    let get = parse::<GetTaskRequest>(json!({"id": "t", "historyLength": "5"})).unwrap();
    assert_eq!(get.history_length, Some(5));
    let list = parse::<ListTasksRequest>(json!({"pageSize": "5", "history_length": 7})).unwrap();
    assert_eq!((list.page_size, list.history_length), (Some(5), Some(7)));
    let page =
        parse::<ListTasksResponse>(json!({"tasks": [], "nextPageToken": "", "pageSize": "5", "totalSize": "-3"}))
            .unwrap();
    assert_eq!((page.page_size, page.total_size), (5, -3));
    let configs = parse::<ListTaskPushNotificationConfigsRequest>(json!({"taskId": "t", "pageSize": "5"})).unwrap();
    assert_eq!(configs.page_size, 5);
    let send = parse::<SendMessageConfiguration>(json!({"historyLength": "5"})).unwrap();
    assert_eq!(send.history_length, Some(5));
    // Re-emitted as numbers.
    assert_eq!(serde_json::to_value(&get).unwrap()["historyLength"], json!(5));

    let too_big = 1_i64 << 40;
    for bad in [json!(too_big), json!(too_big.to_string()), json!(-too_big), json!("five"), json!(1.5)] {
        let err = parse::<GetTaskRequest>(json!({"id": "t", "historyLength": bad})).unwrap_err();
        assert!(err.contains("int32"), "historyLength {bad}: {err}");
        assert!(
            parse::<ListTasksResponse>(json!({"tasks": [], "nextPageToken": "", "pageSize": bad, "totalSize": 0}))
                .is_err(),
            "pageSize {bad} accepted"
        );
        assert!(
            parse::<ListTaskPushNotificationConfigsRequest>(json!({"taskId": "t", "pageSize": bad})).is_err(),
            "pageSize {bad} accepted"
        );
    }
    let err = parse::<GetTaskRequest>(json!({"id": "t", "historyLength": too_big})).unwrap_err();
    assert!(err.contains("out of the int32 range"), "{err}");
}

#[test]
fn schema_helper_reports_instance_paths() {
    let err = schema::validate("Task", &json!({"id": 5, "status": {"state": "DONE"}, "kind": "task"})).unwrap_err();
    assert!(err.contains("at /id:"), "{err}");
    assert!(err.contains("at /status/state:"), "{err}");
    assert!(err.contains("kind"), "{err}");
    let err = schema::validate("NoSuchMessage", &json!({})).unwrap_err();
    assert!(err.contains("NoSuchMessage"), "{err}");
    // `format: date-time` is asserted.
    assert!(schema::validate("Timestamp", &json!("yesterday")).is_err());
    schema::assert_valid("Timestamp", &json!("2025-11-09T10:30:00.000Z"));
}

#[test]
fn proto_name_respelling_skips_free_form_maps() {
    let emitted = json!({
        "contextId": "c",
        "metadata": {"someKey": {"innerKey": 1}},
        "parts": [{"mediaType": "x", "data": {"camelKey": null}}],
        "securitySchemes": {"myScheme": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
            "authorizationUrl": "a", "tokenUrl": "t", "scopes": {"readAll": "r"}}}}}},
    });
    assert_eq!(
        to_proto_names(&emitted),
        json!({
            "context_id": "c",
            "metadata": {"someKey": {"innerKey": 1}},
            "parts": [{"media_type": "x", "data": {"camelKey": null}}],
            "security_schemes": {"myScheme": {"oauth2_security_scheme": {"flows": {"authorization_code": {
                "authorization_url": "a", "token_url": "t", "scopes": {"readAll": "r"}}}}}},
        })
    );
    let mut bad = Vec::new();
    spelling(&to_proto_names(&emitted), "", &mut bad);
    assert!(bad.iter().any(|b| b.starts_with("/context_id")), "{bad:?}");
    assert!(bad.iter().any(|b| b.ends_with("/authorization_code/token_url: key is not lowerCamelCase")), "{bad:?}");
    assert!(!bad.iter().any(|b| b.starts_with("/metadata") || b.contains("/data/")), "{bad:?}");
}

/// ProtoJSON parsers accept URL-safe and unpadded base64 in `bytes` fields; emitters use standard
/// padded base64.
#[test]
fn raw_accepts_url_safe_and_unpadded_base64() {
    let want = vec![0xfbu8, 0xff, 0xfe];
    for encoded in ["+//+", "-__-"] {
        let p: Part = serde_json::from_value(serde_json::json!({"raw": encoded})).unwrap();
        assert_eq!(p.content, PartContent::Raw(want.clone()), "{encoded}");
    }
    let p: Part = serde_json::from_value(serde_json::json!({"raw": "aGk"})).unwrap();
    assert_eq!(p.content, PartContent::Raw(b"hi".to_vec()));
    assert_eq!(serde_json::to_value(&p).unwrap()["raw"], "aGk=");
    assert!(serde_json::from_value::<Part>(serde_json::json!({"raw": "not base64!"})).is_err());
}

/// ProtoJSON reads `null` for a plain or repeated field as its default value.
#[test]
fn null_reads_as_the_default_value() {
    let m: Message = serde_json::from_value(serde_json::json!({
        "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}],
        "contextId": null, "taskId": null, "extensions": null, "referenceTaskIds": null
    }))
    .unwrap();
    assert!(m.context_id.is_empty() && m.task_id.is_empty() && m.extensions.is_empty());
    assert!(
        serde_json::from_value::<Message>(serde_json::json!({"messageId": null, "role": "ROLE_USER", "parts": []}))
            .is_err()
    );
}

//! Payload preparation (§8.4.1 rule 1 and rule 3): which members of a received card the signature
//! covers, read from the proto's field presence. A REQUIRED field stays even at its default, a field
//! with the `optional` keyword stays when set, a singular message (and a `oneof` member) stays when
//! set, and any other field is dropped at its default (`""`, `0`, `false`, `[]`, `{}`). Presence is
//! judged on the JSON as received ("served scope"): an absent field stays absent, `null` is unset, and
//! a member the proto does not define is kept as it came.
//!
//! The table below is the proto's `AgentCard` and everything it contains, written out by hand so that
//! the checker reads no typed model (it must not import `protocol/`).

use serde_json::{Map, Value};

/// What a field holds, for the presence rules.
#[derive(Clone, Copy)]
enum Kind {
    /// A scalar with implicit presence: dropped at its default.
    Scalar,
    /// A singular message: kept when set, its fields prepared by this table.
    Message(&'static [Field]),
    /// `google.protobuf.Struct`: kept when set, as it came.
    Struct,
    /// A `repeated` scalar: dropped when empty.
    Repeated,
    /// A `repeated` message: dropped when empty, each element prepared.
    RepeatedMessage(&'static [Field]),
    /// A `map` to scalars: dropped when empty.
    Map,
    /// A `map` to messages: dropped when empty, each value prepared.
    MapMessage(&'static [Field]),
}

/// How a field is declared.
#[derive(Clone, Copy)]
enum Presence {
    /// `[(google.api.field_behavior) = REQUIRED]`: always kept.
    Required,
    /// The `optional` keyword, or a `oneof` member: kept when set, even at its default.
    Explicit,
    /// Neither: dropped at its default.
    Implicit,
}

#[derive(Clone, Copy)]
struct Field {
    /// The ProtoJSON (lowerCamelCase) name.
    json: &'static str,
    kind: Kind,
    presence: Presence,
}

const fn f(json: &'static str, kind: Kind, presence: Presence) -> Field {
    Field { json, kind, presence }
}

use Kind::*;
use Presence::*;

const AGENT_CARD: &[Field] = &[
    f("name", Scalar, Required),
    f("description", Scalar, Required),
    f("supportedInterfaces", RepeatedMessage(AGENT_INTERFACE), Required),
    f("provider", Message(AGENT_PROVIDER), Implicit),
    f("version", Scalar, Required),
    f("documentationUrl", Scalar, Explicit),
    f("capabilities", Message(AGENT_CAPABILITIES), Required),
    f("securitySchemes", MapMessage(SECURITY_SCHEME), Implicit),
    f("securityRequirements", RepeatedMessage(SECURITY_REQUIREMENT), Implicit),
    f("defaultInputModes", Repeated, Required),
    f("defaultOutputModes", Repeated, Required),
    f("skills", RepeatedMessage(AGENT_SKILL), Required),
    f("signatures", RepeatedMessage(AGENT_CARD_SIGNATURE), Implicit),
    f("iconUrl", Scalar, Explicit),
];
const AGENT_INTERFACE: &[Field] = &[
    f("url", Scalar, Required),
    f("protocolBinding", Scalar, Required),
    f("tenant", Scalar, Implicit),
    f("protocolVersion", Scalar, Required),
];
const AGENT_PROVIDER: &[Field] = &[f("url", Scalar, Required), f("organization", Scalar, Required)];
const AGENT_CAPABILITIES: &[Field] = &[
    f("streaming", Scalar, Explicit),
    f("pushNotifications", Scalar, Explicit),
    f("extensions", RepeatedMessage(AGENT_EXTENSION), Implicit),
    f("extendedAgentCard", Scalar, Explicit),
];
const AGENT_EXTENSION: &[Field] = &[
    f("uri", Scalar, Implicit),
    f("description", Scalar, Implicit),
    f("required", Scalar, Implicit),
    f("params", Struct, Implicit),
];
const AGENT_SKILL: &[Field] = &[
    f("id", Scalar, Required),
    f("name", Scalar, Required),
    f("description", Scalar, Required),
    f("tags", Repeated, Required),
    f("examples", Repeated, Implicit),
    f("inputModes", Repeated, Implicit),
    f("outputModes", Repeated, Implicit),
    f("securityRequirements", RepeatedMessage(SECURITY_REQUIREMENT), Implicit),
];
const AGENT_CARD_SIGNATURE: &[Field] =
    &[f("protected", Scalar, Required), f("signature", Scalar, Required), f("header", Struct, Implicit)];
const SECURITY_REQUIREMENT: &[Field] = &[f("schemes", MapMessage(STRING_LIST), Implicit)];
const STRING_LIST: &[Field] = &[f("list", Repeated, Implicit)];
/// `oneof scheme`: each member has presence.
const SECURITY_SCHEME: &[Field] = &[
    f("apiKeySecurityScheme", Message(API_KEY_SCHEME), Explicit),
    f("httpAuthSecurityScheme", Message(HTTP_AUTH_SCHEME), Explicit),
    f("oauth2SecurityScheme", Message(OAUTH2_SCHEME), Explicit),
    f("openIdConnectSecurityScheme", Message(OIDC_SCHEME), Explicit),
    f("mtlsSecurityScheme", Message(MTLS_SCHEME), Explicit),
];
const API_KEY_SCHEME: &[Field] =
    &[f("description", Scalar, Implicit), f("location", Scalar, Required), f("name", Scalar, Required)];
const HTTP_AUTH_SCHEME: &[Field] =
    &[f("description", Scalar, Implicit), f("scheme", Scalar, Required), f("bearerFormat", Scalar, Implicit)];
const OAUTH2_SCHEME: &[Field] = &[
    f("description", Scalar, Implicit),
    f("flows", Message(OAUTH_FLOWS), Required),
    f("oauth2MetadataUrl", Scalar, Implicit),
];
const OIDC_SCHEME: &[Field] = &[f("description", Scalar, Implicit), f("openIdConnectUrl", Scalar, Required)];
const MTLS_SCHEME: &[Field] = &[f("description", Scalar, Implicit)];
/// `oneof flow`.
const OAUTH_FLOWS: &[Field] = &[
    f("authorizationCode", Message(AUTHORIZATION_CODE_FLOW), Explicit),
    f("clientCredentials", Message(CLIENT_CREDENTIALS_FLOW), Explicit),
    f("implicit", Message(IMPLICIT_FLOW), Explicit),
    f("password", Message(PASSWORD_FLOW), Explicit),
    f("deviceCode", Message(DEVICE_CODE_FLOW), Explicit),
];
const AUTHORIZATION_CODE_FLOW: &[Field] = &[
    f("authorizationUrl", Scalar, Required),
    f("tokenUrl", Scalar, Required),
    f("refreshUrl", Scalar, Implicit),
    f("scopes", Map, Required),
    f("pkceRequired", Scalar, Implicit),
];
const CLIENT_CREDENTIALS_FLOW: &[Field] =
    &[f("tokenUrl", Scalar, Required), f("refreshUrl", Scalar, Implicit), f("scopes", Map, Required)];
const IMPLICIT_FLOW: &[Field] =
    &[f("authorizationUrl", Scalar, Implicit), f("refreshUrl", Scalar, Implicit), f("scopes", Map, Implicit)];
const PASSWORD_FLOW: &[Field] =
    &[f("tokenUrl", Scalar, Implicit), f("refreshUrl", Scalar, Implicit), f("scopes", Map, Implicit)];
const DEVICE_CODE_FLOW: &[Field] = &[
    f("deviceAuthorizationUrl", Scalar, Required),
    f("tokenUrl", Scalar, Required),
    f("refreshUrl", Scalar, Implicit),
    f("scopes", Map, Required),
];

/// True for a scalar's proto default as JSON: `""`, `0`, `false`.
fn is_default_scalar(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn prepare_message(obj: &Map<String, Value>, fields: &[Field]) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in obj {
        if v.is_null() {
            continue;
        }
        let Some(field) = fields.iter().find(|f| f.json == k) else {
            // Not in the proto: kept as it came (the served-scope reading).
            out.insert(k.clone(), v.clone());
            continue;
        };
        let prepared = match (field.kind, v) {
            (Message(inner), Value::Object(o)) => Value::Object(prepare_message(o, inner)),
            (RepeatedMessage(inner), Value::Array(a)) => Value::Array(
                a.iter()
                    .map(|e| match e {
                        Value::Object(o) => Value::Object(prepare_message(o, inner)),
                        other => other.clone(),
                    })
                    .collect(),
            ),
            (MapMessage(inner), Value::Object(m)) => Value::Object(
                m.iter()
                    .map(|(mk, mv)| {
                        let mv = match mv {
                            Value::Object(o) => Value::Object(prepare_message(o, inner)),
                            other => other.clone(),
                        };
                        (mk.clone(), mv)
                    })
                    .collect(),
            ),
            _ => v.clone(),
        };
        let keep = match field.presence {
            Required | Explicit => true,
            Implicit => match field.kind {
                Scalar => !is_default_scalar(&prepared),
                Repeated | RepeatedMessage(_) | Map | MapMessage(_) => !is_empty_container(&prepared),
                // A singular message has presence of its own.
                Message(_) | Struct => true,
            },
        };
        if keep {
            out.insert(k.clone(), prepared);
        }
    }
    out
}

/// The payload §8.4.1 signs, before RFC 8785: the card without `signatures`, with field presence
/// applied. A value that is not an object is returned unchanged.
pub fn prepare(card: &Value) -> Value {
    match card {
        Value::Object(o) => {
            let mut o = o.clone();
            o.remove("signatures");
            Value::Object(prepare_message(&o, AGENT_CARD))
        }
        other => other.clone(),
    }
}

fn default_of(field: &Field) -> Option<Value> {
    Some(match field.kind {
        Scalar => return None,
        Repeated | RepeatedMessage(_) => Value::Array(Vec::new()),
        Map | MapMessage(_) => Value::Object(Map::new()),
        Message(_) | Struct => return None,
    })
}

fn fill_message(obj: &mut Map<String, Value>, fields: &[Field]) {
    for field in fields {
        match (obj.get_mut(field.json), field.kind) {
            (Some(Value::Object(o)), Message(inner)) => fill_message(o, inner),
            (Some(Value::Array(a)), RepeatedMessage(inner)) => {
                for e in a.iter_mut() {
                    if let Value::Object(o) = e {
                        fill_message(o, inner);
                    }
                }
            }
            (Some(Value::Object(m)), MapMessage(inner)) => {
                for v in m.values_mut() {
                    if let Value::Object(o) = v {
                        fill_message(o, inner);
                    }
                }
            }
            (None, _) if matches!(field.presence, Implicit) && field.json != "signatures" => {
                if let Some(d) = default_of(field) {
                    obj.insert(field.json.into(), d);
                }
            }
            _ => {}
        }
    }
}

/// The card as a serializer that emits every implicit-presence list and map at its default would
/// produce it (`"extensions": []`, `"securityRequirements": []`, ...): the reading of a signer that
/// did not apply rule 1. Used to name that defect, and by the mock to commit it.
pub fn fill_defaults(card: &Value) -> Value {
    let mut card = card.clone();
    if let Value::Object(o) = &mut card {
        o.remove("signatures");
        fill_message(o, AGENT_CARD);
    }
    card
}

/// Empty strings, lists and objects removed at every depth, REQUIRED or not: the reading some SDKs
/// sign (a2a-sdk 1.2.1, @a2a-js/sdk 1.3.0), which drops `description: ""` and `skills: []`.
pub fn prune_empty(card: &Value) -> Value {
    fn prune(v: &Value) -> Option<Value> {
        match v {
            Value::Null => None,
            Value::String(s) if s.is_empty() => None,
            Value::Array(a) => {
                let a: Vec<Value> = a.iter().filter_map(prune).collect();
                (!a.is_empty()).then_some(Value::Array(a))
            }
            Value::Object(o) => {
                let o: Map<String, Value> = o.iter().filter_map(|(k, v)| prune(v).map(|v| (k.clone(), v))).collect();
                (!o.is_empty()).then_some(Value::Object(o))
            }
            other => Some(other.clone()),
        }
    }
    let mut card = card.clone();
    if let Value::Object(o) = &mut card {
        o.remove("signatures");
    }
    prune(&card).unwrap_or(Value::Object(Map::new()))
}

/// The card with the `oneof` member of every security scheme (and OAuth flow) dropped, as a
/// serializer that does not know the oneof writes it: `{"bearer": {}}`.
pub fn drop_oneofs(card: &Value) -> Value {
    let mut card = prepare(card);
    if let Some(Value::Object(schemes)) = card.get_mut("securitySchemes") {
        for scheme in schemes.values_mut() {
            if let Value::Object(o) = scheme {
                o.retain(|k, _| !SECURITY_SCHEME.iter().any(|f| f.json == k));
            }
        }
    }
    card
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_section_8_4_1_example_drops_only_what_rule_1_drops() {
        let card = json!({
            "name": "Example Agent",
            "description": "",
            "capabilities": {"streaming": false, "pushNotifications": false, "extensions": []},
            "skills": []
        });
        assert_eq!(
            crate::card::jcs::canonicalize(&prepare(&card)).unwrap(),
            r#"{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}"#
        );
    }

    #[test]
    fn implicit_defaults_go_explicit_and_required_ones_stay() {
        let card = json!({
            "name": "a", "version": "", "provider": {"url": "", "organization": ""},
            "supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": ""}],
            "capabilities": {}, "documentationUrl": "", "iconUrl": null,
            "securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "", "description": ""}}},
            "securityRequirements": [{"schemes": {}}],
            "skills": [{"id": "s", "name": "s", "description": "", "tags": [], "examples": [], "inputModes": []}],
            "capabilities2": [], "signatures": [{"protected": "x", "signature": "y"}]
        });
        assert_eq!(
            prepare(&card),
            json!({
                "name": "a", "version": "", "provider": {"url": "", "organization": ""},
                "supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {}, "documentationUrl": "",
                "securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
                "securityRequirements": [{}],
                "skills": [{"id": "s", "name": "s", "description": "", "tags": []}],
                "capabilities2": []
            })
        );
    }

    #[test]
    fn the_defect_readings_differ_from_rule_1() {
        let card = json!({
            "name": "a", "description": "", "version": "1", "capabilities": {"streaming": true},
            "securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "skills": [], "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
        });
        let filled = fill_defaults(&card);
        assert_eq!(filled["capabilities"]["extensions"], json!([]));
        assert_eq!(filled["securityRequirements"], json!([]));
        assert_eq!(filled["supportedInterfaces"][0].get("tenant"), None, "scalars are not filled");
        assert!(filled["securitySchemes"]["b"].get("apiKeySecurityScheme").is_none(), "oneof members are not filled");
        assert_eq!(prepare(&filled), prepare(&card), "rule 1 removes what filling adds");
        let pruned = prune_empty(&card);
        assert!(pruned.get("description").is_none() && pruned.get("skills").is_none());
        assert_eq!(drop_oneofs(&card)["securitySchemes"]["b"], json!({}));
    }
}

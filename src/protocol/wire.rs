//! Serde helpers for ProtoJSON details that plain derives get wrong.

use serde::{Deserialize, Deserializer, de::Error as _};
use serde_json::Value;

/// Deserializes a field whose mere presence matters (a `oneof` member or `google.protobuf.Value`):
/// `null` becomes `Some(Value::Null)` rather than `None`.
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// ProtoJSON int32: a JSON number or a decimal string, within the int32 range.
pub(crate) fn int32<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    let v = Value::deserialize(d)?;
    let n = match &v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    let n = n.ok_or_else(|| D::Error::custom(format!("expected an int32, got {v}")))?;
    i32::try_from(n).map_err(|_| D::Error::custom(format!("{n} is out of the int32 range")))
}

/// ProtoJSON `optional int32`.
pub(crate) fn opt_int32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => int32(v).map(Some).map_err(D::Error::custom),
    }
}

/// `skip_serializing_if` for implicit-presence booleans.
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// `skip_serializing_if` for implicit-presence int32 fields.
pub(crate) fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// Defines a ProtoJSON enum: emitted as its string name, parsed from the name or its integer value
/// (ProtoJSON parsers accept both; emitters must produce the name).
macro_rules! proto_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $num:literal => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum $name {
            #[default]
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }

            pub fn number(self) -> i32 {
                match self { $($name::$variant => $num,)+ }
            }

            /// Parses the string name (exact spelling).
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }

            pub fn from_number(n: i64) -> Option<Self> {
                match n { $($num => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::Error as _;
                let v = serde_json::Value::deserialize(d)?;
                let parsed = match &v {
                    serde_json::Value::String(s) => $name::from_name(s),
                    serde_json::Value::Number(n) => n.as_i64().and_then($name::from_number),
                    _ => None,
                };
                parsed.ok_or_else(|| D::Error::custom(format!(
                    concat!("unknown ", stringify!($name), " {}; expected one of: {}"),
                    v,
                    $name::ALL.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")
                )))
            }
        }
    };
}
pub(crate) use proto_enum;

/// Picks the single member of a proto `oneof` out of a JSON object. Unknown members are ignored
/// (§5.7); zero or several known members are an error naming what was found.
pub(crate) fn one_of(
    obj: serde_json::Map<String, Value>,
    type_name: &str,
    members: &[&'static str],
) -> Result<(&'static str, Value), String> {
    let mut found: Vec<(&'static str, Value)> = Vec::new();
    for (k, v) in obj {
        if let Some(m) = members.iter().find(|m| **m == k || snake(m) == k) {
            found.push((m, v));
        }
    }
    if found.len() != 1 {
        let names: Vec<_> = found.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "{type_name} must set exactly one of {} (found {}: [{}])",
            members.join(", "),
            found.len(),
            names.join(", ")
        ));
    }
    Ok(found.remove(0))
}

/// The proto field name for a camelCase JSON name, which ProtoJSON parsers also accept.
fn snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Implements `Deserialize` for an externally tagged enum that models a proto `oneof` whose members
/// are newtype variants.
macro_rules! oneof_deserialize {
    ($name:ident { $($variant:ident => $member:literal,)+ }) => {
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::Error as _;
                let obj = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
                let (member, value) = $crate::protocol::wire::one_of(obj, stringify!($name), &[$($member,)+])
                    .map_err(D::Error::custom)?;
                match member {
                    $($member => serde_json::from_value(value)
                        .map($name::$variant)
                        .map_err(|e| D::Error::custom(format!(concat!($member, ": {}"), e))),)+
                    _ => unreachable!("one_of returns only listed members"),
                }
            }
        }
    };
}
pub(crate) use oneof_deserialize;

/// ProtoJSON reads `null` for a singular or repeated field as the field's default value.
pub(crate) fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

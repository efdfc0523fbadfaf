//! The JSON Canonicalization Scheme (RFC 8785) over `serde_json` values: a strict parse (duplicate
//! keys, unpaired surrogates, NaN and the infinities are refused), and the canonical form, which is
//! `serde_jcs`'s (keys sorted by UTF-16 code units, numbers as ECMAScript prints them, strings
//! escaped only where JSON must).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a text has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JcsError {
    /// Not JSON as RFC 8259 and RFC 8785 §3.1 require (I-JSON: no duplicate keys, no unpaired
    /// surrogates, no NaN or infinity).
    #[error("not canonicalizable JSON: {0}")]
    Parse(String),
    /// A value RFC 8785 cannot serialize.
    #[error("cannot canonicalize: {0}")]
    Value(String),
    /// A claimed canonical payload carries the `signatures` member §8.4.1 rule 3 excludes.
    #[error("the payload still carries `signatures`, which §8.4.1 rule 3 excludes from what is signed")]
    SignaturesPresent,
    /// A claimed canonical payload is not byte for byte its own canonical form.
    #[error("the payload is not in RFC 8785 canonical form (expected {expected})")]
    NotCanonical { expected: String },
}

/// A JSON value parsed with duplicate keys refused.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom(format!("{v} is not a JSON number")))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if out.contains_key(&k) {
                return Err(de::Error::custom(format!("duplicate member {k:?} (RFC 8785 §3.1: I-JSON)")));
            }
            let Strict(v) = map.next_value()?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// Parses JSON text as RFC 8785 requires of its input: well-formed UTF-8 JSON without duplicate
/// member names, unpaired surrogates, NaN or infinities (serde_json refuses the last three).
pub fn parse_strict(text: &str) -> Result<Value, JcsError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let Strict(v) = Strict::deserialize(&mut de).map_err(|e| JcsError::Parse(e.to_string()))?;
    de.end().map_err(|e| JcsError::Parse(e.to_string()))?;
    Ok(v)
}

/// [`parse_strict`] of bytes, which must be UTF-8.
pub fn parse_strict_bytes(bytes: &[u8]) -> Result<Value, JcsError> {
    let text = std::str::from_utf8(bytes).map_err(|e| JcsError::Parse(format!("not UTF-8: {e}")))?;
    parse_strict(text)
}

/// The RFC 8785 canonical form of `v`.
pub fn canonicalize(v: &Value) -> Result<String, JcsError> {
    serde_jcs::to_string(v).map_err(|e| JcsError::Value(e.to_string()))
}

/// Checks bytes offered as a signed card's canonical payload: canonical JSON, byte for byte, with
/// no `signatures` member (§8.4.1 rule 3).
pub fn check_payload(bytes: &[u8]) -> Result<(), JcsError> {
    let v = parse_strict_bytes(bytes)?;
    if v.get("signatures").is_some() {
        return Err(JcsError::SignaturesPresent);
    }
    let canonical = canonicalize(&v)?;
    if canonical.as_bytes() != bytes {
        return Err(JcsError::NotCanonical { expected: canonical });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jcs(text: &str) -> String {
        canonicalize(&parse_strict(text).unwrap()).unwrap()
    }

    #[test]
    fn numbers_print_as_ecmascript_does() {
        // RFC 8785 §3.2.2.3 and Appendix B.
        assert_eq!(
            jcs("[0.000001, 1e-7, 1e21, 1e20, -0.0, 1E1, 1.0, 333333333.33333329]"),
            "[0.000001,1e-7,1e+21,100000000000000000000,0,10,1,333333333.3333333]"
        );
        assert_eq!(jcs("[4.50, 2e-3, 0.000000000000000000000000001]"), "[4.5,0.002,1e-27]");
        assert_eq!(jcs("[9007199254740993]"), "[9007199254740992]");
        assert_eq!(jcs("[1.7976931348623157e308, 5e-324, -1.5]"), "[1.7976931348623157e+308,5e-324,-1.5]");
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // RFC 8785 §3.2.3: U+1F600 (D83D DE00) sorts before U+FF01.
        assert_eq!(jcs("{\"b\u{ff01}\":1,\"b\u{1f600}\":2,\"a\":3}"), "{\"a\":3,\"b\u{1f600}\":2,\"b\u{ff01}\":1}");
    }

    #[test]
    fn strings_escape_only_what_json_must() {
        assert_eq!(jcs(r#"{"s":"\u00e9\u20ac/\u007f\u001f\n\"\\"}"#), "{\"s\":\"é€/\u{7f}\\u001f\\n\\\"\\\\\"}");
    }

    #[test]
    fn the_rfc_8785_example_canonicalizes() {
        // RFC 8785 §3.2.4.
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        assert_eq!(
            jcs(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn what_has_no_canonical_form_is_refused() {
        for bad in
            [r#"{"a":1,"a":2}"#, r#"{"a":NaN}"#, r#"{"a":Infinity}"#, r#"{"a":"\ud800"}"#, r#"{"\udc00":1}"#, "[1,]"]
        {
            assert!(matches!(parse_strict(bad), Err(JcsError::Parse(_))), "{bad} was accepted");
        }
        assert!(parse_strict_bytes(b"{\"a\":\"\xff\"}").is_err());
    }

    #[test]
    fn a_claimed_payload_must_be_canonical_and_unsigned() {
        assert_eq!(check_payload(br#"{"a":1}"#), Ok(()));
        assert!(matches!(check_payload(br#"{"b":1,"a":2}"#), Err(JcsError::NotCanonical { .. })));
        assert_eq!(check_payload(br#"{"name":"x","signatures":[]}"#), Err(JcsError::SignaturesPresent));
    }
}

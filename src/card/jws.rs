//! Detached JWS (RFC 7515, Appendix F) over a card's canonical payload (§8.4.2): signing with ES256,
//! and verification that says, for each signature, why it does not hold, naming the canonical
//! reading the signer used where one of the known wrong ones explains it.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::Signature;
use p256::ecdsa::signature::{Signer as _, Verifier as _};
use serde_json::{Map, Value, json};

use super::jcs::{self, JcsError};
use super::keys::{PrivateKey, PublicKey};
use super::presence;

/// The only algorithm this kit signs and verifies.
pub const ES256: &str = "ES256";

/// Which bytes a signature covers. [`Reading::Rule1`] is §8.4.1; the others are defects seen in
/// signers, which the verifier tries to name a mismatch and the mock commits on request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// §8.4.1: `signatures` excluded, field presence applied, RFC 8785.
    Rule1,
    /// The JSON as served, `signatures` excluded, nothing else: defaults that were sent are covered.
    ServedAsIs,
    /// Every implicit-presence list and map emitted at its default (`"extensions": []`).
    DefaultsFilled,
    /// Empty strings, lists and objects pruned, REQUIRED or not.
    EmptyPruned,
    /// The `oneof` member of each security scheme dropped.
    OneofDropped,
    /// `signatures` not excluded: the payload carries `"signatures": []`.
    SignaturesIncluded,
}

impl Reading {
    /// The defect a signature over this reading shows, for a finding.
    pub fn defect(self) -> &'static str {
        match self {
            Reading::Rule1 => "none",
            Reading::ServedAsIs => {
                "the signature covers the card as served, default-valued fields included: §8.4.1 rule 1 omits fields at their default unless they are REQUIRED or `optional`"
            }
            Reading::DefaultsFilled => {
                "the signature covers default-valued fields the card omits (e.g. `\"extensions\": []`): the signer did not apply §8.4.1 rule 1 (field presence)"
            }
            Reading::EmptyPruned => {
                "the signature covers the card with empty values pruned, REQUIRED fields included: §8.4.1 rule 1 keeps REQUIRED fields even at their default"
            }
            Reading::OneofDropped => {
                "the signature covers the card with the `oneof` member of its securitySchemes dropped: the signer lost a field that has presence"
            }
            Reading::SignaturesIncluded => {
                "the signature covers a `signatures` member: §8.4.1 rule 3 excludes it from what is signed"
            }
        }
    }

    /// True for the defects of field presence (§8.4.1 rule 1).
    pub fn is_presence_defect(self) -> bool {
        matches!(self, Reading::ServedAsIs | Reading::DefaultsFilled | Reading::EmptyPruned | Reading::OneofDropped)
    }
}

/// The payload bytes a signer using `reading` signs for `card`.
pub fn payload(card: &Value, reading: Reading) -> Result<Vec<u8>, JcsError> {
    let v = match reading {
        Reading::Rule1 => presence::prepare(card),
        Reading::ServedAsIs => {
            let mut c = card.clone();
            if let Value::Object(o) = &mut c {
                o.remove("signatures");
            }
            c
        }
        Reading::DefaultsFilled => presence::fill_defaults(card),
        Reading::EmptyPruned => presence::prune_empty(card),
        Reading::OneofDropped => presence::drop_oneofs(card),
        Reading::SignaturesIncluded => {
            let mut c = presence::prepare(card);
            if let Value::Object(o) = &mut c {
                o.insert("signatures".into(), json!([]));
            }
            c
        }
    };
    Ok(jcs::canonicalize(&v)?.into_bytes())
}

/// How to sign. The defaults are what §8.4.2 asks for; the rest exist so that the mock can commit,
/// and the tests can build, each signing defect.
#[derive(Debug, Clone)]
pub struct SignOptions {
    /// `kid`; `None` leaves it out of the header (a defect).
    pub kid: Option<String>,
    /// `jku`, when the agent publishes its keys.
    pub jku: Option<String>,
    /// `alg` as written in the header (the signature is ES256 whatever it says).
    pub alg: String,
    /// Write `typ: "JOSE"` (§8.4.2 SHOULD).
    pub typ: bool,
    /// Which bytes to sign.
    pub reading: Reading,
}

impl SignOptions {
    pub fn new(kid: impl Into<String>) -> Self {
        SignOptions { kid: Some(kid.into()), jku: None, alg: ES256.into(), typ: true, reading: Reading::Rule1 }
    }
}

/// The protected header, serialized in the order of §8.4.2's example (`alg`, `typ`, `kid`, `jku`)
/// and base64url-encoded.
pub fn protected_header(opts: &SignOptions) -> String {
    let mut h = Map::new();
    h.insert("alg".into(), json!(opts.alg));
    if opts.typ {
        h.insert("typ".into(), json!("JOSE"));
    }
    if let Some(kid) = &opts.kid {
        h.insert("kid".into(), json!(kid));
    }
    if let Some(jku) = &opts.jku {
        h.insert("jku".into(), json!(jku));
    }
    URL_SAFE_NO_PAD.encode(Value::Object(h).to_string())
}

fn signing_input(protected: &str, payload: &[u8]) -> Vec<u8> {
    format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload)).into_bytes()
}

/// Signs `card` and returns it with the new signature appended to `signatures` (earlier ones kept:
/// several signatures support key rotation, §8.4.3).
pub fn sign(card: &Value, key: &PrivateKey, opts: &SignOptions) -> Result<Value, JcsError> {
    if !card.is_object() {
        return Err(JcsError::Value("an agent card is a JSON object".into()));
    }
    let protected = protected_header(opts);
    let body = payload(card, opts.reading)?;
    let sig: Signature = key.key.sign(&signing_input(&protected, &body));
    let entry = json!({"protected": protected, "signature": URL_SAFE_NO_PAD.encode(sig.to_bytes())});
    let mut card = card.clone();
    let obj = card.as_object_mut().expect("checked above");
    match obj.get_mut("signatures") {
        Some(Value::Array(a)) => a.push(entry),
        _ => {
            obj.insert("signatures".into(), json!([entry]));
        }
    }
    Ok(card)
}

/// What became of one signature.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It verifies against this trusted key (its source).
    Valid { key: String },
    /// It names a trusted key but does not hold; the reason names what is wrong.
    Invalid { reason: String, reading: Option<Reading> },
    /// It is not a JWS this kit can read (the reason says what is missing).
    Malformed { reason: String },
    /// No trusted key has its `kid`: it cannot be checked.
    UnknownKey,
}

/// One signature of a card, as checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// Position in `signatures`.
    pub index: usize,
    /// The decoded protected header, when it decodes to a JSON object.
    pub header: Option<Map<String, Value>>,
    pub outcome: Outcome,
}

impl Checked {
    pub fn kid(&self) -> Option<&str> {
        self.header.as_ref()?.get("kid")?.as_str()
    }

    pub fn alg(&self) -> Option<&str> {
        self.header.as_ref()?.get("alg")?.as_str()
    }

    /// One line for a person.
    pub fn describe(&self) -> String {
        let who =
            format!("signature {} (kid {})", self.index, self.kid().map(|k| format!("{k:?}")).unwrap_or("none".into()));
        match &self.outcome {
            Outcome::Valid { key } => format!("{who}: valid, verified with {key}"),
            Outcome::Invalid { reason, .. } | Outcome::Malformed { reason } => format!("{who}: {reason}"),
            Outcome::UnknownKey => format!("{who}: no trusted key has this kid, so it was not checked"),
        }
    }
}

/// Decodes a protected header: base64url of a JSON object (§8.4.2).
pub fn decode_header(protected: &str) -> Result<Map<String, Value>, String> {
    let bytes = URL_SAFE_NO_PAD
        .decode(protected.trim_end_matches('='))
        .map_err(|e| format!("`protected` is not base64url: {e}"))?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err("`protected` does not decode to a JSON object".into()),
        Err(e) => Err(format!("`protected` does not decode to JSON: {e}")),
    }
}

/// What §8.4.2 requires of a protected header: non-empty string `alg` and `kid`, never `none`.
/// Returns the problems found (empty: none).
pub fn header_problems(h: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for name in ["alg", "kid"] {
        match h.get(name) {
            None => out.push(format!("the protected header has no `{name}` (§8.4.2 MUST)")),
            Some(Value::String(s)) if s.is_empty() => out.push(format!("the protected header's `{name}` is empty")),
            Some(Value::String(_)) => {}
            Some(other) => out.push(format!("the protected header's `{name}` is {other}, not a string")),
        }
    }
    if h.get("alg").and_then(Value::as_str).is_some_and(|a| a.eq_ignore_ascii_case("none")) {
        out.push("the protected header says `alg: none`: an unsigned JWS is never acceptable".into());
    }
    out
}

fn verify_one(card: &Value, index: usize, entry: &Value, keys: &[PublicKey]) -> Checked {
    let malformed = |header, reason: String| Checked { index, header, outcome: Outcome::Malformed { reason } };
    let (Some(protected), Some(sig_b64)) =
        (entry.get("protected").and_then(Value::as_str), entry.get("signature").and_then(Value::as_str))
    else {
        return malformed(None, "lacks the REQUIRED `protected` or `signature` string (§4.4.7)".into());
    };
    let header = match decode_header(protected) {
        Ok(h) => h,
        Err(e) => return malformed(None, e),
    };
    if let Some(first) = header_problems(&header).into_iter().next() {
        return malformed(Some(header), first);
    }
    let kid = header.get("kid").and_then(Value::as_str).unwrap_or_default().to_owned();
    let alg = header.get("alg").and_then(Value::as_str).unwrap_or_default().to_owned();
    let candidates: Vec<&PublicKey> = keys.iter().filter(|k| k.matches(&kid)).collect();
    if candidates.is_empty() {
        return Checked { index, header: Some(header), outcome: Outcome::UnknownKey };
    }
    let invalid =
        |header, reason: String, reading| Checked { index, header, outcome: Outcome::Invalid { reason, reading } };
    if alg != ES256 {
        return invalid(
            Some(header),
            format!("`alg` is {alg:?}, but the trusted key for kid {kid:?} is a P-256 key, which signs ES256 only"),
            None,
        );
    }
    let Ok(sig) = URL_SAFE_NO_PAD
        .decode(sig_b64.trim_end_matches('='))
        .map_err(|_| ())
        .and_then(|b| Signature::from_slice(&b).map_err(|_| ()))
    else {
        return invalid(
            Some(header),
            "`signature` is not a base64url ES256 signature (64 bytes, R || S, RFC 7518 §3.4)".into(),
            None,
        );
    };
    let holds = |reading: Reading| -> Option<&PublicKey> {
        let body = payload(card, reading).ok()?;
        let input = signing_input(protected, &body);
        candidates.iter().copied().find(|k| k.key.verify(&input, &sig).is_ok())
    };
    if let Some(k) = holds(Reading::Rule1) {
        return Checked { index, header: Some(header), outcome: Outcome::Valid { key: k.source.clone() } };
    }
    let wrong = [
        Reading::SignaturesIncluded,
        Reading::ServedAsIs,
        Reading::DefaultsFilled,
        Reading::EmptyPruned,
        Reading::OneofDropped,
    ];
    for reading in wrong {
        if holds(reading).is_some() {
            return invalid(Some(header), reading.defect().into(), Some(reading));
        }
    }
    invalid(
        Some(header),
        "the signature does not match the card's §8.4.1 payload under any known reading: the card was changed after signing, or it was signed with another key".into(),
        None,
    )
}

/// The verdict on a card's signatures against trusted keys.
#[derive(Debug, Clone, PartialEq)]
pub struct CardVerdict {
    pub signatures: Vec<Checked>,
}

impl CardVerdict {
    pub fn is_signed(&self) -> bool {
        !self.signatures.is_empty()
    }

    /// Trustworthy: at least one signature verifies and none that names a trusted key fails or is
    /// malformed.
    pub fn holds(&self) -> bool {
        self.signatures.iter().any(|c| matches!(c.outcome, Outcome::Valid { .. }))
            && !self.signatures.iter().any(|c| matches!(c.outcome, Outcome::Invalid { .. } | Outcome::Malformed { .. }))
    }

    /// Why the card cannot be trusted, for a person; `None` when it can.
    pub fn reason(&self) -> Option<String> {
        if self.holds() {
            return None;
        }
        if !self.is_signed() {
            return Some("the card carries no signature (`signatures` is absent or empty)".into());
        }
        if let Some(bad) =
            self.signatures.iter().find(|c| !matches!(c.outcome, Outcome::Valid { .. } | Outcome::UnknownKey))
        {
            return Some(bad.describe());
        }
        let kids: Vec<String> =
            self.signatures.iter().map(|c| c.kid().map(|k| format!("{k:?}")).unwrap_or("none".into())).collect();
        Some(format!("no signature is by a trusted key (kids on the card: {})", kids.join(", ")))
    }

    /// The first wrong reading a failed signature matched.
    pub fn reading(&self) -> Option<Reading> {
        self.signatures.iter().find_map(|c| match c.outcome {
            Outcome::Invalid { reading, .. } => reading,
            _ => None,
        })
    }
}

/// Checks every signature of `card` against the trusted keys (§8.4.3).
pub fn verify(card: &Value, keys: &[PublicKey]) -> CardVerdict {
    let entries: Vec<Value> = match card.get("signatures") {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => {
            return CardVerdict {
                signatures: vec![Checked {
                    index: 0,
                    header: None,
                    outcome: Outcome::Malformed { reason: format!("`signatures` is {other}, not an array") },
                }],
            };
        }
    };
    CardVerdict { signatures: entries.iter().enumerate().map(|(i, e)| verify_one(card, i, e, keys)).collect() }
}

//! ES256 keys (P-256) from the files people have: a JWK, a JWK Set, or PEM (SPKI public keys,
//! PKCS #8 or SEC1 private keys). A key of another curve or type is refused with a reason that names
//! it, since an ES256 signature can only be checked with a P-256 key.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::{SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// A key file that cannot be used for ES256.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {reason}")]
pub struct KeyError {
    /// The file (or other origin) the key came from.
    pub source_name: String,
    pub reason: String,
}

fn err(source: &str, reason: impl Into<String>) -> KeyError {
    KeyError { source_name: source.to_owned(), reason: reason.into() }
}

/// A public key the verifier trusts, with the `kid` it is known by (none: it matches any `kid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    pub kid: Option<String>,
    /// Where it came from, for messages.
    pub source: String,
    pub key: VerifyingKey,
}

impl PublicKey {
    /// The key as a public JWK (with its `kid` when it has one).
    pub fn to_jwk(&self) -> Value {
        let point = self.key.to_encoded_point(false);
        let mut jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(point.x().expect("uncompressed point")),
            "y": URL_SAFE_NO_PAD.encode(point.y().expect("uncompressed point")),
            "alg": "ES256",
            "use": "sig",
        });
        if let Some(kid) = &self.kid {
            jwk["kid"] = json!(kid);
        }
        jwk
    }

    /// The RFC 7638 JWK thumbprint (SHA-256, base64url): a stable `kid` for a key that has none.
    pub fn thumbprint(&self) -> String {
        let jwk = self.to_jwk();
        let members = format!(
            r#"{{"crv":"P-256","kty":"EC","x":{},"y":{}}}"#,
            jwk["x"], // already JSON strings
            jwk["y"]
        );
        URL_SAFE_NO_PAD.encode(Sha256::digest(members.as_bytes()))
    }

    /// True if this key may have made a signature whose protected header names `kid`.
    pub fn matches(&self, kid: &str) -> bool {
        self.kid.as_deref().is_none_or(|k| k == kid)
    }
}

/// A signing key with the `kid` its signatures carry.
#[derive(Debug, Clone)]
pub struct PrivateKey {
    pub kid: Option<String>,
    pub source: String,
    pub key: SigningKey,
}

impl PrivateKey {
    /// A fresh random key (the mock's, when it is given none).
    pub fn generate() -> Self {
        loop {
            let mut bytes = [0u8; 32];
            bytes[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
            bytes[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
            if let Ok(key) = SigningKey::from_slice(&bytes) {
                return PrivateKey { kid: None, source: "generated".into(), key };
            }
        }
    }

    pub fn public(&self) -> PublicKey {
        PublicKey { kid: self.kid.clone(), source: self.source.clone(), key: *self.key.verifying_key() }
    }

    /// The `kid` to sign with: the key's own, else its thumbprint.
    pub fn kid_or_thumbprint(&self) -> String {
        self.kid.clone().unwrap_or_else(|| self.public().thumbprint())
    }
}

/// Curve or key type named by an object identifier inside DER, for refusing a key with a reason.
fn other_key_type(der: &[u8]) -> Option<&'static str> {
    const OIDS: &[(&[u8], &str)] = &[
        (&[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22], "an EC key on curve P-384 (secp384r1)"),
        (&[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23], "an EC key on curve P-521 (secp521r1)"),
        (&[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a], "an EC key on curve secp256k1"),
        (&[0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01], "an RSA key"),
        (&[0x06, 0x03, 0x2b, 0x65, 0x70], "an Ed25519 key"),
    ];
    OIDS.iter().find(|(oid, _)| der.windows(oid.len()).any(|w| w == *oid)).map(|(_, name)| *name)
}

/// The DER inside the first PEM block labelled `label`.
fn pem_block(text: &str, label: &str) -> Option<Vec<u8>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text.find(&begin)? + begin.len();
    let stop = start + text[start..].find(&end)?;
    let b64: String = text[start..stop].chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(b64).ok()
}

fn wrong_type(source: &str, der: Option<Vec<u8>>, fallback: String) -> KeyError {
    match der.as_deref().and_then(other_key_type) {
        Some(what) => err(source, format!("{what}; ES256 needs a P-256 key")),
        None => err(source, fallback),
    }
}

fn b64_coord(source: &str, jwk: &Value, name: &str) -> Result<Vec<u8>, KeyError> {
    let s = jwk.get(name).and_then(Value::as_str).ok_or_else(|| err(source, format!("the JWK has no `{name}`")))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .map_err(|e| err(source, format!("JWK `{name}` is not base64url: {e}")))?;
    if bytes.len() != 32 {
        return Err(err(source, format!("JWK `{name}` is {} bytes; a P-256 coordinate is 32", bytes.len())));
    }
    Ok(bytes)
}

/// Checks that a JWK is an EC P-256 key usable for ES256.
fn check_jwk_type(source: &str, jwk: &Value) -> Result<(), KeyError> {
    let kty = jwk.get("kty").and_then(Value::as_str).unwrap_or("");
    if kty != "EC" {
        let what = if kty.is_empty() { "a JWK without `kty`".to_owned() } else { format!("a JWK of kty {kty:?}") };
        return Err(err(source, format!("{what}; ES256 needs an EC key on curve P-256")));
    }
    let crv = jwk.get("crv").and_then(Value::as_str).unwrap_or("");
    if crv != "P-256" {
        return Err(err(source, format!("an EC key on curve {crv:?}; ES256 needs a P-256 key")));
    }
    if let Some(alg) = jwk.get("alg").and_then(Value::as_str)
        && alg != "ES256"
    {
        return Err(err(source, format!("the JWK is for alg {alg:?}, not ES256")));
    }
    Ok(())
}

fn public_from_jwk(source: &str, jwk: &Value) -> Result<PublicKey, KeyError> {
    check_jwk_type(source, jwk)?;
    let mut sec1 = vec![0x04];
    sec1.extend(b64_coord(source, jwk, "x")?);
    sec1.extend(b64_coord(source, jwk, "y")?);
    let key = VerifyingKey::from_sec1_bytes(&sec1).map_err(|_| err(source, "the JWK's x/y is not a point on P-256"))?;
    Ok(PublicKey { kid: jwk.get("kid").and_then(Value::as_str).map(str::to_owned), source: source.into(), key })
}

fn private_from_jwk(source: &str, jwk: &Value) -> Result<PrivateKey, KeyError> {
    check_jwk_type(source, jwk)?;
    let d = b64_coord(source, jwk, "d")
        .map_err(|_| err(source, "the JWK has no private part `d`: a public key cannot sign"))?;
    let key = SigningKey::from_slice(&d).map_err(|_| err(source, "the JWK's `d` is not a P-256 private scalar"))?;
    let private =
        PrivateKey { kid: jwk.get("kid").and_then(Value::as_str).map(str::to_owned), source: source.into(), key };
    if jwk.get("x").is_some() {
        let public = public_from_jwk(source, jwk)?;
        if public.key != private.public().key {
            return Err(err(source, "the JWK's x/y do not belong to its `d`"));
        }
    }
    Ok(private)
}

/// Every public key in a file's text: a JWK, a JWK Set (`{"keys": [...]}`; keys of other types in a
/// set are refused too, so a mistaken trust store is noticed), or PEM. A private key yields its
/// public half.
pub fn public_keys(text: &str, source: &str) -> Result<Vec<PublicKey>, KeyError> {
    let t = text.trim_start();
    if t.starts_with('{') {
        let v: Value = serde_json::from_str(t).map_err(|e| err(source, format!("not JSON: {e}")))?;
        return match v.get("keys") {
            Some(Value::Array(keys)) => {
                if keys.is_empty() {
                    return Err(err(source, "the JWK Set holds no key"));
                }
                keys.iter().map(|k| public_from_jwk(source, k)).collect()
            }
            Some(_) => Err(err(source, "`keys` is not an array")),
            None => Ok(vec![public_from_jwk(source, &v)?]),
        };
    }
    if t.contains("-----BEGIN PUBLIC KEY-----") {
        let key = p256::PublicKey::from_public_key_pem(t).map_err(|e| {
            wrong_type(source, pem_block(t, "PUBLIC KEY"), format!("not a P-256 SubjectPublicKeyInfo: {e}"))
        })?;
        return Ok(vec![PublicKey { kid: None, source: source.into(), key: VerifyingKey::from(key) }]);
    }
    Ok(vec![private_key(text, source)?.public()])
}

/// The private key in a file's text: a JWK with `d`, or PEM (`PRIVATE KEY` or `EC PRIVATE KEY`).
pub fn private_key(text: &str, source: &str) -> Result<PrivateKey, KeyError> {
    let t = text.trim_start();
    if t.starts_with('{') {
        let v: Value = serde_json::from_str(t).map_err(|e| err(source, format!("not JSON: {e}")))?;
        if v.get("keys").is_some() {
            return Err(err(source, "a JWK Set; give the one private JWK to sign with"));
        }
        return private_from_jwk(source, &v);
    }
    let secret = if t.contains("-----BEGIN PRIVATE KEY-----") {
        p256::SecretKey::from_pkcs8_pem(t).map_err(|e| {
            wrong_type(source, pem_block(t, "PRIVATE KEY"), format!("not a P-256 PKCS #8 private key: {e}"))
        })?
    } else if t.contains("-----BEGIN EC PRIVATE KEY-----") {
        p256::SecretKey::from_sec1_pem(t).map_err(|e| {
            wrong_type(source, pem_block(t, "EC PRIVATE KEY"), format!("not a P-256 SEC1 private key: {e}"))
        })?
    } else if t.contains("-----BEGIN PUBLIC KEY-----") {
        return Err(err(source, "a public key cannot sign; give the private key"));
    } else {
        return Err(err(source, "neither a JWK nor a PEM key (PRIVATE KEY, EC PRIVATE KEY or PUBLIC KEY)"));
    };
    Ok(PrivateKey { kid: None, source: source.into(), key: SigningKey::from(secret) })
}

/// Reads [`public_keys`] from a file.
pub fn read_public_keys(path: &std::path::Path) -> Result<Vec<PublicKey>, KeyError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| err(&name, format!("cannot read: {e}")))?;
    public_keys(&text, &name)
}

/// Reads [`private_key`] from a file.
pub fn read_private_key(path: &std::path::Path) -> Result<PrivateKey, KeyError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| err(&name, format!("cannot read: {e}")))?;
    private_key(&text, &name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_round_trips_through_its_jwk() {
        let k = PrivateKey::generate();
        let jwk = k.public().to_jwk();
        let back = public_keys(&jwk.to_string(), "jwk").unwrap();
        assert_eq!(back[0].key, k.public().key);
        assert_eq!(k.public().thumbprint().len(), 43);
    }

    #[test]
    fn the_rfc_7638_thumbprint_is_computed_over_the_required_members() {
        // The thumbprint does not depend on optional members such as kid.
        let mut k = PrivateKey::generate();
        let a = k.public().thumbprint();
        k.kid = Some("other".into());
        assert_eq!(k.public().thumbprint(), a);
    }

    #[test]
    fn keys_of_other_types_are_refused_by_name() {
        let e = public_keys(r#"{"kty":"EC","crv":"P-384","x":"a","y":"b"}"#, "k").unwrap_err();
        assert!(e.reason.contains("P-384"), "{e}");
        let e = public_keys(r#"{"kty":"RSA","n":"a","e":"AQAB"}"#, "k").unwrap_err();
        assert!(e.reason.contains("RSA"), "{e}");
        let e = private_key(&PrivateKey::generate().public().to_jwk().to_string(), "k").unwrap_err();
        assert!(e.reason.contains("cannot sign"), "{e}");
    }
}

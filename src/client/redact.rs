//! Keeps user-supplied secrets (header values, tokens) out of everything the kit prints or stores.

use base64::Engine as _;
use serde_json::Value;

pub const REDACTED: &str = "[REDACTED]";

/// Header names whose values are always hidden, whoever supplied them.
const ALWAYS_SECRET_HEADERS: [&str; 5] = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"];

/// Authorization schemes whose credential part is registered as a secret on its own.
const AUTH_SCHEMES: [&str; 6] = ["bearer", "basic", "token", "dpop", "apikey", "negotiate"];

/// Shortest trailing fragment of a secret masked at the end of text that was cut short.
const MIN_CUT_FRAGMENT: usize = 3;

/// Replaces known secret strings with [`REDACTED`].
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Secrets, longest first (ties: insertion order), without duplicates.
    secrets: Vec<String>,
    /// Lower-cased names of headers supplied by the user.
    header_names: Vec<String>,
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    /// A redactor hiding the values (and flagging the names) of user-supplied headers.
    pub fn from_headers(headers: &[(String, String)]) -> Self {
        let mut r = Self::new();
        for (name, value) in headers {
            r.add_header(name, value);
        }
        r
    }

    /// Adds a secret. Empty strings are ignored; any non-empty secret is redacted. Its
    /// JSON-escaped form is added too, so it is also caught inside raw JSON text.
    pub fn add(&mut self, secret: &str) {
        self.insert(secret);
        if let Ok(quoted) = serde_json::to_string(secret) {
            let escaped = &quoted[1..quoted.len() - 1];
            if escaped != secret {
                self.insert(escaped);
            }
        }
    }

    fn insert(&mut self, secret: &str) {
        if secret.is_empty() || self.secrets.iter().any(|s| s == secret) {
            return;
        }
        let at = self.secrets.iter().position(|s| s.len() < secret.len()).unwrap_or(self.secrets.len());
        self.secrets.insert(at, secret.to_owned());
    }

    /// Adds a user-supplied header: its value becomes a secret and its name is always rendered
    /// as redacted.
    pub fn add_header(&mut self, name: &str, value: &str) {
        let lower = name.trim().to_ascii_lowercase();
        if !lower.is_empty() && !self.header_names.contains(&lower) {
            self.header_names.push(lower);
        }
        self.add(value);
        let trimmed = value.trim();
        if trimmed != value {
            self.add(trimmed);
        }
        // `Bearer <token>` and friends: the credential alone is secret too, as is a decoded
        // Basic `user:password`.
        if let Some((scheme, credential)) = trimmed.split_once(char::is_whitespace) {
            let credential = credential.trim();
            if AUTH_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) && !credential.is_empty() {
                self.add(credential);
                if scheme.eq_ignore_ascii_case("basic")
                    && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(credential)
                    && let Ok(text) = String::from_utf8(bytes)
                {
                    self.add(&text);
                    if let Some((_, password)) = text.split_once(':') {
                        self.add(password);
                    }
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Length of the longest secret, in bytes (0 when there is none).
    pub fn longest_secret(&self) -> usize {
        self.secrets.first().map_or(0, String::len)
    }

    /// Whether a header of this name always renders its value as [`REDACTED`].
    pub fn is_secret_header(&self, name: &str) -> bool {
        let lower = name.trim().to_ascii_lowercase();
        ALWAYS_SECRET_HEADERS.contains(&lower.as_str()) || self.header_names.contains(&lower)
    }

    /// The value of a header as it may be shown.
    pub fn header_value(&self, name: &str, value: &str) -> String {
        if self.is_secret_header(name) { REDACTED.to_owned() } else { self.redact(value) }
    }

    /// `name: value` with the value hidden as needed.
    pub fn header_line(&self, name: &str, value: &str) -> String {
        format!("{}: {}", self.redact(name), self.header_value(name, value))
    }

    /// Replaces every occurrence of every secret (longest match first) with [`REDACTED`].
    pub fn redact(&self, s: &str) -> String {
        if self.secrets.is_empty() {
            return s.to_owned();
        }
        // Jump from match to match (`str::find` is a fast substring search) rather than testing
        // every secret at every character: evidence bodies are redacted on every exchange.
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        loop {
            let hit = self
                .secrets
                .iter()
                .filter_map(|secret| rest.find(secret.as_str()).map(|i| (i, secret.len())))
                .min_by_key(|(i, len)| (*i, std::cmp::Reverse(*len)));
            match hit {
                None => {
                    out.push_str(rest);
                    return out;
                }
                Some((i, len)) => {
                    out.push_str(&rest[..i]);
                    out.push_str(REDACTED);
                    rest = &rest[i + len..];
                }
            }
        }
    }

    /// Like [`Redactor::redact`], for text that was cut short: a trailing fragment (at least 3
    /// bytes) that starts a secret is masked too, since the rest of the secret was cut off.
    pub fn redact_cut(&self, s: &str) -> String {
        let mut out = self.redact(s);
        let mut longest = 0;
        for secret in &self.secrets {
            for (i, _) in secret.char_indices().skip(1) {
                let prefix = &secret[..i];
                if i >= MIN_CUT_FRAGMENT && i > longest && out.ends_with(prefix) {
                    longest = i;
                }
            }
        }
        if longest > 0 {
            out.truncate(out.len() - longest);
            out.push_str(REDACTED);
        }
        out
    }

    /// Redacts every string (and object key) inside a JSON value.
    pub fn redact_value(&self, v: &Value) -> Value {
        if self.secrets.is_empty() {
            return v.clone();
        }
        match v {
            Value::String(s) => Value::String(self.redact(s)),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.redact_value(i)).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (self.redact(k), self.redact_value(v))).collect())
            }
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replaces_every_occurrence_longest_first() {
        let mut r = Redactor::new();
        r.add("abc");
        r.add("abcdef");
        r.add("");
        assert_eq!(r.redact("x abcdef y abc z abcde"), "x [REDACTED] y [REDACTED] z [REDACTED]de");
        assert_eq!(r.redact("no secrets here"), "no secrets here");
    }

    #[test]
    fn empty_secret_is_not_added_and_short_ones_are_redacted() {
        let mut r = Redactor::new();
        r.add("");
        assert!(r.is_empty());
        r.add("k");
        assert_eq!(r.redact("kayak"), "[REDACTED]aya[REDACTED]");
    }

    #[test]
    fn json_escaped_form_is_redacted_too() {
        let mut r = Redactor::new();
        r.add("pa\"ss");
        let text = serde_json::to_string(&json!({"echo": "pa\"ss"})).unwrap();
        assert!(!r.redact(&text).contains("ss"), "{}", r.redact(&text));
    }

    #[test]
    fn redacts_values_and_keys() {
        let mut r = Redactor::new();
        r.add("s3cret");
        let v = json!({"a": ["x s3cret", 1, {"s3cret": true}], "b": null});
        assert_eq!(r.redact_value(&v), json!({"a": ["x [REDACTED]", 1, {"[REDACTED]": true}], "b": null}));
    }

    #[test]
    fn sensitive_headers_always_hidden() {
        let r = Redactor::from_headers(&[("X-Custom".into(), "value-1".into())]);
        assert_eq!(r.header_line("Authorization", "Bearer zzz"), "Authorization: [REDACTED]");
        assert_eq!(r.header_line("set-cookie", "a=b"), "set-cookie: [REDACTED]");
        assert_eq!(r.header_line("x-custom", "other"), "x-custom: [REDACTED]");
        assert_eq!(r.header_line("content-type", "value-1; x"), "content-type: [REDACTED]; x");
        assert_eq!(r.header_line("accept", "*/*"), "accept: */*");
    }

    #[test]
    fn credential_of_an_auth_scheme_is_secret_alone() {
        let r = Redactor::from_headers(&[
            ("Authorization".into(), "Bearer tok-abc".into()),
            ("Proxy-Authorization".into(), "Basic dXNlcjpwYXNzd29yZA==".into()),
        ]);
        assert_eq!(r.redact("token=tok-abc"), "token=[REDACTED]");
        assert_eq!(r.redact("dXNlcjpwYXNzd29yZA== user:password / password"), "[REDACTED] [REDACTED] / [REDACTED]");
        assert_eq!(r.redact("Bearer and Basic"), "Bearer and Basic");
    }

    #[test]
    fn cut_text_masks_a_trailing_fragment() {
        let mut r = Redactor::new();
        r.add("topsecret");
        assert_eq!(r.redact_cut("body ... tops"), "body ... [REDACTED]");
        assert_eq!(r.redact_cut("body ... to"), "body ... to");
    }

    #[test]
    fn unicode_is_preserved() {
        let mut r = Redactor::new();
        r.add("é");
        assert_eq!(r.redact("café ü"), "caf[REDACTED] ü");
    }

    #[test]
    fn is_send_sync_clone() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Redactor>();
    }
}

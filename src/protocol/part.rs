//! `Part` (§4.1.6): exactly one of `text`, `raw`, `url`, `data`, plus shared metadata.

use base64::Engine as _;
use serde::{Deserialize, Serialize, Serializer, ser::SerializeMap};
use serde_json::{Map, Value};

use super::wire::present;

/// The `content` oneof of a Part.
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    Text(String),
    /// `raw`: bytes, base64 on the wire.
    Raw(Vec<u8>),
    /// `url`: a reference to file content.
    Url(String),
    /// `data`: any JSON value (including `null`).
    Data(Value),
}

impl PartContent {
    /// The ProtoJSON member name of this oneof case.
    pub fn member(&self) -> &'static str {
        match self {
            PartContent::Text(_) => "text",
            PartContent::Raw(_) => "raw",
            PartContent::Url(_) => "url",
            PartContent::Data(_) => "data",
        }
    }
}

/// A unit of content in a Message or Artifact.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "PartWire")]
pub struct Part {
    pub content: PartContent,
    pub metadata: Option<Map<String, Value>>,
    /// `filename`; empty means unset.
    pub filename: String,
    /// `mediaType`; empty means unset.
    pub media_type: String,
}

impl Part {
    pub fn text(s: impl Into<String>) -> Self {
        Part::new(PartContent::Text(s.into()))
    }

    pub fn new(content: PartContent) -> Self {
        Part { content, metadata: None, filename: String::new(), media_type: String::new() }
    }

    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::Raw(b) => m.serialize_entry("raw", &base64::engine::general_purpose::STANDARD.encode(b))?,
            PartContent::Url(u) => m.serialize_entry("url", u)?,
            PartContent::Data(v) => m.serialize_entry("data", v)?,
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        if !self.filename.is_empty() {
            m.serialize_entry("filename", &self.filename)?;
        }
        if !self.media_type.is_empty() {
            m.serialize_entry("mediaType", &self.media_type)?;
        }
        m.end()
    }
}

#[derive(Deserialize)]
struct PartWire {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    raw: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default, deserialize_with = "present")]
    data: Option<Value>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    #[serde(default)]
    filename: Option<String>,
    #[serde(default, rename = "mediaType", alias = "media_type")]
    media_type: Option<String>,
}

impl TryFrom<PartWire> for Part {
    type Error = String;

    fn try_from(w: PartWire) -> Result<Self, String> {
        let mut set = Vec::new();
        if let Some(t) = w.text {
            set.push(PartContent::Text(t));
        }
        if let Some(r) = w.raw {
            let bytes = decode_base64(&r).map_err(|e| format!("`raw` is not valid base64: {e}"))?;
            set.push(PartContent::Raw(bytes));
        }
        if let Some(u) = w.url {
            set.push(PartContent::Url(u));
        }
        if let Some(d) = w.data {
            set.push(PartContent::Data(d));
        }
        if set.len() != 1 {
            let names: Vec<_> = set.iter().map(PartContent::member).collect();
            return Err(format!(
                "a Part must set exactly one of text, raw, url, data (found {}: [{}])",
                set.len(),
                names.join(", ")
            ));
        }
        Ok(Part {
            content: set.remove(0),
            metadata: w.metadata,
            filename: w.filename.unwrap_or_default(),
            media_type: w.media_type.unwrap_or_default(),
        })
    }
}

/// ProtoJSON parsers accept standard and URL-safe base64, padded or not; emitters use standard
/// padded base64 (which is what `Part` serializes).
fn decode_base64(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let unpadded = s.trim_end_matches('=');
    let engine = if unpadded.contains(['-', '_']) { &URL_SAFE_NO_PAD } else { &STANDARD_NO_PAD };
    engine.decode(unpadded)
}

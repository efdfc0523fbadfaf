//! `google.protobuf.Timestamp` in the spec's spelling (§5.6.1): UTC, `Z`, millisecond precision.

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};
use time::{OffsetDateTime, UtcOffset, format_description::well_known::Rfc3339, macros::format_description};

/// A point in time, always held in UTC and emitted as `YYYY-MM-DDTHH:mm:ss.sssZ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(OffsetDateTime);

impl Timestamp {
    /// The current time, truncated to milliseconds so that emitting and re-parsing is lossless.
    pub fn now() -> Self {
        Self::from_datetime(OffsetDateTime::now_utc())
    }

    /// Wraps a date-time, converting it to UTC and truncating to milliseconds.
    pub fn from_datetime(dt: OffsetDateTime) -> Self {
        let dt = dt.to_offset(UtcOffset::UTC);
        let ms = dt.millisecond();
        Timestamp(dt.replace_millisecond(ms).expect("millisecond taken from a valid time"))
    }

    /// The same time without its fraction of a second.
    pub fn whole_seconds(self) -> Self {
        Timestamp(self.0.replace_millisecond(0).expect("0 is a valid millisecond"))
    }

    pub fn unix_millis(&self) -> i128 {
        self.0.unix_timestamp_nanos() / 1_000_000
    }

    /// `None` outside the representable range.
    pub fn from_unix_millis(ms: i128) -> Option<Self> {
        OffsetDateTime::from_unix_timestamp_nanos(ms * 1_000_000).ok().map(Timestamp)
    }

    /// Always UTC.
    pub fn datetime(&self) -> OffsetDateTime {
        self.0
    }

    /// Parses RFC 3339. The spec says emitters use `Z` only; a parser accepts any offset, as
    /// ProtoJSON parsers do, and converts to UTC.
    pub fn parse(s: &str) -> Result<Self, String> {
        OffsetDateTime::parse(s, &Rfc3339)
            .map(Self::from_datetime)
            .map_err(|e| format!("invalid RFC 3339 timestamp {s:?}: {e}"))
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fmt = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
        let s = self.0.format(&fmt).map_err(|_| std::fmt::Error)?;
        f.write_str(&s)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse(&s).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emits_utc_millis_with_z() {
        let t = Timestamp::parse("2025-11-09T12:30:00.123456+02:00").unwrap();
        assert_eq!(t.to_string(), "2025-11-09T10:30:00.123Z");
    }

    #[test]
    fn round_trips() {
        let t = Timestamp::now();
        assert_eq!(Timestamp::parse(&t.to_string()).unwrap(), t);
    }

    #[test]
    fn rejects_garbage() {
        assert!(Timestamp::parse("yesterday").is_err());
        assert!(Timestamp::parse("2025-11-09 10:30:00").is_err());
    }
}

//! `A2A-Version` negotiation (§3.6).

/// The protocol version this kit implements.
pub const PROTOCOL_VERSION: &str = "1.0";
/// Name of the version service parameter (header or query parameter).
pub const VERSION_HEADER: &str = "A2A-Version";
pub const EXTENSIONS_HEADER: &str = "A2A-Extensions";

/// A `Major.Minor` protocol version; the patch component is parsed and ignored (§3.6 MUST NOT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtocolVersion {
    pub major: u32,
    pub minor: u32,
}

impl ProtocolVersion {
    pub const V1_0: ProtocolVersion = ProtocolVersion { major: 1, minor: 0 };
    /// 0.3, which an empty version header means (§3.6.2).
    pub const V0_3: ProtocolVersion = ProtocolVersion { major: 0, minor: 3 };

    /// Parses `Major.Minor` or `Major.Minor.Patch`; anything else is `None`.
    pub fn parse(s: &str) -> Option<Self> {
        let mut it = s.trim().split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        if let Some(patch) = it.next() {
            patch.parse::<u32>().ok()?;
        }
        if it.next().is_some() {
            return None;
        }
        Some(ProtocolVersion { major, minor })
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Splits a comma-separated service parameter value (§9.2), trimming blanks.
pub fn split_list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_is_ignored() {
        assert_eq!(ProtocolVersion::parse("1.0.7"), Some(ProtocolVersion::V1_0));
        assert_eq!(ProtocolVersion::parse(" 1.0 "), Some(ProtocolVersion::V1_0));
    }

    #[test]
    fn garbage_is_rejected() {
        for s in ["", "1", "one.zero", "1.0.0.0", "1.x", "1.0.beta"] {
            assert_eq!(ProtocolVersion::parse(s), None, "{s:?}");
        }
    }

    #[test]
    fn lists_split_on_commas() {
        assert_eq!(split_list(" a, b ,,c").collect::<Vec<_>>(), ["a", "b", "c"]);
    }
}

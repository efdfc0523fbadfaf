//! Expected-vs-actual as a line diff (via `similar`), the one diff every rendering shows: JSON on
//! both sides is pretty-printed first so that the diff is per field, not per blob.

use similar::{ChangeTag, TextDiff};

/// Which side a diff line is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Only in the expected value (`-`).
    Expected,
    /// Only in the actual value (`+`).
    Actual,
    /// In both (two spaces).
    Both,
}

impl Side {
    /// The sign a unified diff gives the line.
    pub fn sign(self) -> char {
        match self {
            Side::Expected => '-',
            Side::Actual => '+',
            Side::Both => ' ',
        }
    }
}

/// The lines of the diff between `expected` and `actual`, in order, without line ends.
pub fn lines(expected: &str, actual: &str) -> Vec<(Side, String)> {
    let (old, new) = match (
        serde_json::from_str::<serde_json::Value>(expected),
        serde_json::from_str::<serde_json::Value>(actual),
    ) {
        (Ok(a), Ok(b)) => (
            serde_json::to_string_pretty(&a).unwrap_or_else(|_| expected.to_owned()),
            serde_json::to_string_pretty(&b).unwrap_or_else(|_| actual.to_owned()),
        ),
        _ => (expected.to_owned(), actual.to_owned()),
    };
    let diff = TextDiff::from_lines(old.as_str(), new.as_str());
    diff.iter_all_changes()
        .map(|c| {
            let side = match c.tag() {
                ChangeTag::Delete => Side::Expected,
                ChangeTag::Insert => Side::Actual,
                ChangeTag::Equal => Side::Both,
            };
            (side, c.value().trim_end_matches(['\n', '\r']).to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_diffs_per_field() {
        let l = lines(r#"{"a":1,"b":2}"#, r#"{"a":1,"b":3}"#);
        assert!(l.contains(&(Side::Expected, r#"  "b": 2"#.to_owned())), "{l:?}");
        assert!(l.contains(&(Side::Actual, r#"  "b": 3"#.to_owned())), "{l:?}");
        assert!(l.contains(&(Side::Both, r#"  "a": 1,"#.to_owned())), "{l:?}");
    }
}

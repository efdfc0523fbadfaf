//! Text helpers shared by the human renderings.

/// `s` cut to `max` characters (not bytes), ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// `s` broken into lines of at most `width` characters at spaces, so that no id is cut in two; only
/// a word longer than a whole line (a JSON blob in a reason) is broken, and continues on the next
/// line. Nothing is dropped.
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in s.split(' ') {
        let len = word.chars().count();
        if !line.is_empty() && line.chars().count() + 1 + len > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        if len <= width {
            line.push_str(word);
            continue;
        }
        for piece in word.chars().collect::<Vec<_>>().chunks(width) {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            line.extend(piece);
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Each line of `s` wrapped to `width` ([`wrap`]): the line breaks it had are kept, an empty line
/// stays one.
pub fn wrap_lines(s: &str, width: usize) -> Vec<String> {
    s.lines().flat_map(|l| if l.is_empty() { vec![String::new()] } else { wrap(l, width) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_characters_not_bytes() {
        assert_eq!(truncate("héllo", 5), "héllo");
        assert_eq!(truncate("héllo wörld", 4), "hél…");
        assert_eq!(truncate("§§§§", 3), "§§…");
        assert_eq!(truncate("ab", 3), "ab");
    }

    #[test]
    fn wrapping_never_cuts_a_word() {
        let ids = "3 scored check(s) failed: CORE-SEND-001, KIT-LIST-010, STREAM-ORDER-004";
        let lines = wrap(ids, 30);
        assert!(lines.iter().all(|l| l.chars().count() <= 30), "{lines:?}");
        assert_eq!(lines.join(" "), ids);
        assert_eq!(wrap("averyveryverylongword x", 5), ["avery", "veryv", "erylo", "ngwor", "d x"]);
        assert_eq!(wrap("ab averyveryverylongword", 8), ["ab", "averyver", "yverylon", "gword"]);
        assert_eq!(wrap("§§ §§ §§", 5), ["§§ §§", "§§"]);
    }

    #[test]
    fn line_breaks_are_kept() {
        assert_eq!(wrap_lines("one two three\n\nfour", 7), ["one two", "three", "", "four"]);
        assert!(wrap_lines("", 7).is_empty());
    }
}

//! Dot-paths as ACTS uses them in `capture` values, `repeat.until` expressions and
//! `collection-match.path` (acts-specification.md §5.2): `task.id`, `task.artifacts[0].parts[0].text`,
//! `tasks[*].id`, `[0]` at the root.
//!
//! Extensions: a leading `$` (optionally followed by `.`) or an empty path means the root; keys may
//! be quoted in brackets (`["a.b"]`, `['x']`) for names that contain `.`/`[`; a purely numeric key
//! applied to an array indexes it (`parts.0.text`), since arrays have no named members to confuse it
//! with. A wildcard only fans out over arrays: ACTS uses it for "every element".
//!
//! Everything here works on `serde_json::Value`: the checker never reads a peer's answer through
//! typed models, so a malformed answer is reported, not rejected at deserialisation.

use serde_json::Value;

/// One step of a parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// An object member (`task`, `["a.b"]`).
    Key(String),
    /// An array element (`[0]`).
    Index(usize),
    /// Every element of an array (`[*]`).
    Wildcard,
}

/// A path that cannot be parsed or used where it appears.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The text is not a valid dot-path; `pos` is a 0-based byte offset into it.
    #[error("invalid path `{path}` at position {pos}: {message}")]
    Syntax { path: String, pos: usize, message: String },
    /// A wildcard in a path that must name exactly one value (capture, until, `get`).
    #[error("path `{path}` has a wildcard `[*]` at position {pos}, but only a single value can be addressed here")]
    Wildcard {
        path: String,
        /// Byte offset of the `[`.
        pos: usize,
    },
}

fn syntax(path: &str, pos: usize, message: impl Into<String>) -> PathError {
    PathError::Syntax { path: path.to_string(), pos, message: message.into() }
}

pub fn parse(path: &str) -> Result<Vec<Segment>, PathError> {
    parse_with_pos(path).map(|v| v.into_iter().map(|(s, _)| s).collect())
}

/// Parses and keeps each segment's byte offset, so later errors (wildcards) can point at it.
fn parse_with_pos(path: &str) -> Result<Vec<(Segment, usize)>, PathError> {
    let bytes = path.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // `$`, `$.x`, `$[0]` (JSONPath habit) all mean "from the root".
    // True right after a `.`: a key must follow (rejects `a..b`, `a.`, `a.[0]`).
    let mut need_key = false;
    // Only a `$` standing alone is the root, so a key such as `$ref` still works.
    if bytes.first() == Some(&b'$') && matches!(bytes.get(1), None | Some(b'.') | Some(b'[')) {
        i = 1;
        if bytes.get(1) == Some(&b'.') {
            i = 2;
            need_key = true;
            if i == bytes.len() {
                return Err(syntax(path, i - 1, "a `.` must be followed by a key"));
            }
        }
    }
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'[' => {
                if need_key {
                    return Err(syntax(path, i, "expected a key after `.`, found `[`"));
                }
                let start = i;
                i += 1;
                match bytes.get(i) {
                    Some(b'*') => {
                        i += 1;
                        expect_close(path, i)?;
                        out.push((Segment::Wildcard, start));
                    }
                    Some(q @ (b'"' | b'\'')) => {
                        let q = *q;
                        let rest = &path[i + 1..];
                        let Some(end) = rest.find(q as char) else {
                            return Err(syntax(path, i, "unterminated quoted key"));
                        };
                        out.push((Segment::Key(rest[..end].to_string()), start));
                        i = i + 1 + end + 1;
                        expect_close(path, i)?;
                    }
                    Some(d) if d.is_ascii_digit() => {
                        let digits_start = i;
                        while i < bytes.len() && bytes[i].is_ascii_digit() {
                            i += 1;
                        }
                        let n: usize = path[digits_start..i]
                            .parse()
                            .map_err(|_| syntax(path, digits_start, "array index is too large"))?;
                        expect_close(path, i)?;
                        out.push((Segment::Index(n), start));
                    }
                    Some(_) => {
                        return Err(syntax(path, i, "expected an index, `*` or a quoted key after `[`"));
                    }
                    None => return Err(syntax(path, i, "unterminated `[`")),
                }
                i += 1; // past `]`
                // After `]` only `.`, `[` or the end may follow.
                match bytes.get(i) {
                    None | Some(b'.') | Some(b'[') => {}
                    Some(_) => return Err(syntax(path, i, "expected `.` or `[` after `]`")),
                }
            }
            b'.' => {
                if out.is_empty() || need_key {
                    return Err(syntax(path, i, "empty key before `.`"));
                }
                need_key = true;
                i += 1;
                if i == bytes.len() {
                    return Err(syntax(path, i - 1, "a `.` must be followed by a key"));
                }
            }
            b']' => return Err(syntax(path, i, "unexpected `]`")),
            _ => {
                // A bare key runs until the next `.` or `[`; it may hold `-`, `_`, `$`, digits, any
                // Unicode, since A2A field names and captured ids are not restricted to identifiers.
                if !out.is_empty() && !need_key {
                    return Err(syntax(path, i, "expected `.` or `[` before a key"));
                }
                let start = i;
                while i < bytes.len() && !matches!(bytes[i], b'.' | b'[' | b']') {
                    i += 1;
                }
                let key = &path[start..i];
                if key.trim() != key {
                    return Err(syntax(path, start, "keys may not start or end with whitespace"));
                }
                if key == "*" {
                    // `tasks.*` is a common slip for `tasks[*]`: say so instead of looking up "*".
                    return Err(syntax(path, start, "use `[*]` for a wildcard, not `.*`"));
                }
                out.push((Segment::Key(key.to_string()), start));
                need_key = false;
            }
        }
    }
    Ok(out)
}

fn expect_close(path: &str, i: usize) -> Result<(), PathError> {
    match path.as_bytes().get(i) {
        Some(b']') => Ok(()),
        Some(_) => Err(syntax(path, i, "expected `]`")),
        None => Err(syntax(path, i, "unterminated `[`")),
    }
}

/// One step from `v` along a non-wildcard segment.
fn step<'a>(v: &'a Value, seg: &Segment) -> Option<&'a Value> {
    match (seg, v) {
        (Segment::Key(k), Value::Object(m)) => m.get(k),
        // ext: `parts.0` on an array; arrays have no named members, so this is unambiguous.
        (Segment::Key(k), Value::Array(a)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => {
            k.parse::<usize>().ok().and_then(|i| a.get(i))
        }
        (Segment::Index(i), Value::Array(a)) => a.get(*i),
        _ => None,
    }
}

/// Resolves a single-valued path; `Ok(None)` when nothing is there, an error for a bad path or a wildcard.
pub fn get<'a>(root: &'a Value, path: &str) -> Result<Option<&'a Value>, PathError> {
    let segs = parse_with_pos(path)?;
    if let Some((_, pos)) = segs.iter().find(|(s, _)| *s == Segment::Wildcard) {
        return Err(PathError::Wildcard { path: path.to_string(), pos: *pos });
    }
    let mut cur = root;
    for (seg, _) in &segs {
        match step(cur, seg) {
            Some(next) => cur = next,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// Every value the path (wildcards allowed) reaches, with its RFC 6901 JSON pointer, in document order.
pub fn select<'a>(root: &'a Value, path: &str) -> Result<Vec<(String, &'a Value)>, PathError> {
    let segs = parse(path)?;
    let mut cur: Vec<(String, &'a Value)> = vec![(String::new(), root)];
    for seg in &segs {
        let mut next = Vec::new();
        for (ptr, v) in cur {
            match seg {
                Segment::Wildcard => {
                    // Non-arrays yield nothing: "every element" of a non-array is the empty set,
                    // and the collection assertion (any/all/none) decides what that means.
                    if let Value::Array(a) = v {
                        next.extend(a.iter().enumerate().map(|(i, e)| (pointer_index(&ptr, i), e)));
                    }
                }
                Segment::Key(k) => {
                    if let Some(e) = step(v, seg) {
                        // The pointer names what was actually traversed: an index for arrays.
                        let p = if v.is_array() { format!("{ptr}/{k}") } else { pointer_join(&ptr, k) };
                        next.push((p, e));
                    }
                }
                Segment::Index(i) => {
                    if let Some(e) = step(v, seg) {
                        next.push((pointer_index(&ptr, *i), e));
                    }
                }
            }
        }
        cur = next;
    }
    Ok(cur)
}

/// Appends an object member to a JSON pointer, escaping `~` as `~0` and `/` as `~1` (RFC 6901 §3).
pub fn pointer_join(base: &str, key: &str) -> String {
    // Order matters: `~` first, or the `~` introduced for `/` would be escaped again.
    format!("{base}/{}", key.replace('~', "~0").replace('/', "~1"))
}

pub fn pointer_index(base: &str, i: usize) -> String {
    format!("{base}/{i}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn k(s: &str) -> Segment {
        Segment::Key(s.to_string())
    }

    #[test]
    fn parses_simple_and_nested() {
        assert_eq!(parse("task.id").unwrap(), vec![k("task"), k("id")]);
        assert_eq!(
            parse("task.artifacts[0].parts[12].text").unwrap(),
            vec![k("task"), k("artifacts"), Segment::Index(0), k("parts"), Segment::Index(12), k("text")]
        );
        assert_eq!(parse("tasks[*].id").unwrap(), vec![k("tasks"), Segment::Wildcard, k("id")]);
        assert_eq!(parse("a[0][1]").unwrap(), vec![k("a"), Segment::Index(0), Segment::Index(1)]);
    }

    #[test]
    fn parses_root_forms() {
        assert_eq!(parse("").unwrap(), vec![]);
        assert_eq!(parse("$").unwrap(), vec![]);
        assert_eq!(parse("$.task").unwrap(), vec![k("task")]);
        assert_eq!(parse("$[0]").unwrap(), vec![Segment::Index(0)]);
        assert_eq!(parse("[0]").unwrap(), vec![Segment::Index(0)]);
        assert_eq!(parse("[0].id").unwrap(), vec![Segment::Index(0), k("id")]);
        assert_eq!(parse("[*]").unwrap(), vec![Segment::Wildcard]);
        assert_eq!(parse("$ref").unwrap(), vec![k("$ref")]);
    }

    #[test]
    fn parses_odd_keys() {
        assert_eq!(parse("content-type").unwrap(), vec![k("content-type")]);
        assert_eq!(parse("a.x_y-z.$ref").unwrap(), vec![k("a"), k("x_y-z"), k("$ref")]);
        assert_eq!(parse(r#"a["b.c"]"#).unwrap(), vec![k("a"), k("b.c")]);
        assert_eq!(parse("a['b[0]'].c").unwrap(), vec![k("a"), k("b[0]"), k("c")]);
        assert_eq!(parse("métadonnées.clé").unwrap(), vec![k("métadonnées"), k("clé")]);
    }

    #[test]
    fn rejects_bad_paths_with_position() {
        let cases = [
            ("a..b", 2),
            ("a.", 1),
            (".a", 0),
            ("a[", 2),
            ("a[x]", 2),
            ("a[0", 3),
            ("a[0]b", 4),
            ("a]", 1),
            ("a.[0]", 2),
            ("a.*", 2),
            ("a[\"b]", 2),
            ("$.", 1),
            ("$.[0]", 2),
            ("a. b", 2),
        ];
        for (p, want) in cases {
            match parse(p) {
                Err(PathError::Syntax { pos, ref path, .. }) => {
                    assert_eq!(pos, want, "position for {p:?}");
                    assert_eq!(path, p);
                }
                other => panic!("{p:?}: expected a syntax error, got {other:?}"),
            }
        }
        let msg = parse("a..b").unwrap_err().to_string();
        assert!(msg.contains("position 2") && msg.contains("a..b"), "{msg}");
    }

    #[test]
    fn get_resolves_and_misses() {
        let v = json!({"task": {"id": "t1", "artifacts": [{"parts": [{"text": "hi"}]}], "n": null}});
        assert_eq!(get(&v, "task.id").unwrap(), Some(&json!("t1")));
        assert_eq!(get(&v, "task.artifacts[0].parts[0].text").unwrap(), Some(&json!("hi")));
        assert_eq!(get(&v, "task.artifacts.0.parts.0.text").unwrap(), Some(&json!("hi")));
        assert_eq!(get(&v, "task.n").unwrap(), Some(&Value::Null));
        assert_eq!(get(&v, "task.missing").unwrap(), None);
        assert_eq!(get(&v, "task.artifacts[3]").unwrap(), None);
        assert_eq!(get(&v, "task.id.deeper").unwrap(), None);
        assert_eq!(get(&v, "task[0]").unwrap(), None);
        assert_eq!(get(&v, "").unwrap(), Some(&v));
        assert_eq!(get(&v, "$").unwrap(), Some(&v));
        let arr = json!([{"id": 1}, {"id": 2}]);
        assert_eq!(get(&arr, "[1].id").unwrap(), Some(&json!(2)));
    }

    #[test]
    fn get_rejects_wildcards() {
        let v = json!({"tasks": []});
        let err = get(&v, "tasks[*].id").unwrap_err();
        assert_eq!(err, PathError::Wildcard { path: "tasks[*].id".into(), pos: 5 });
        assert!(err.to_string().contains("wildcard"));
        assert!(matches!(get(&v, "a..b"), Err(PathError::Syntax { .. })));
    }

    #[test]
    fn select_fans_out_with_pointers() {
        let v = json!({"tasks": [{"id": "a"}, {"id": "b"}, {"x": 1}]});
        let got = select(&v, "tasks[*].id").unwrap();
        assert_eq!(got, vec![("/tasks/0/id".to_string(), &json!("a")), ("/tasks/1/id".to_string(), &json!("b"))]);
        let nested = json!({"a": [{"p": [1, 2]}, {"p": [3]}]});
        let got: Vec<_> = select(&nested, "a[*].p[*]").unwrap().into_iter().map(|(p, _)| p).collect();
        assert_eq!(got, vec!["/a/0/p/0", "/a/0/p/1", "/a/1/p/0"]);
        assert_eq!(select(&v, "").unwrap(), vec![(String::new(), &v)]);
        assert!(select(&v, "tasks[*].nope").unwrap().is_empty());
        // A wildcard over a non-array selects nothing.
        assert!(select(&json!({"a": {"b": 1}}), "a[*]").unwrap().is_empty());
        assert_eq!(select(&v, "tasks.1.id").unwrap()[0].0, "/tasks/1/id");
        assert!(select(&v, "a[").is_err());
    }

    #[test]
    fn select_escapes_pointer_tokens() {
        let v = json!({"a/b": {"m~n": [true]}});
        let got = select(&v, r#"["a/b"]["m~n"][0]"#).unwrap();
        assert_eq!(got, vec![("/a~1b/m~0n/0".to_string(), &json!(true))]);
        // The pointers we produce are ones serde_json itself understands.
        assert_eq!(v.pointer(&got[0].0), Some(&json!(true)));
    }

    #[test]
    fn pointer_helpers() {
        assert_eq!(pointer_join("", "a"), "/a");
        assert_eq!(pointer_join("/x", "a/b"), "/x/a~1b");
        assert_eq!(pointer_join("", "~1"), "/~01");
        assert_eq!(pointer_join("", ""), "/");
        assert_eq!(pointer_index("/x", 3), "/x/3");
    }

    proptest! {
        #[test]
        fn wildcard_selects_every_element(items in proptest::collection::vec(any::<i64>(), 0..20)) {
            let root = json!({"a": items});
            let got = select(&root, "a[*]").unwrap();
            prop_assert_eq!(got.len(), items.len());
            for (i, (p, v)) in got.iter().enumerate() {
                prop_assert_eq!(p, &format!("/a/{i}"));
                prop_assert_eq!(*v, &json!(items[i]));
            }
        }

        #[test]
        fn parse_never_panics(s in ".{0,24}") {
            let _ = parse(&s);
        }
    }
}

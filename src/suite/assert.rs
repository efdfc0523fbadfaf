//! The ACTS assertion DSL (acts-specification.md §5.1–§5.4) and `repeat.until` expressions (§9.1),
//! evaluated on raw `serde_json::Value`.
//!
//! Shape of an assertion:
//! * a scalar is exact equality (numbers numerically: `42 == 42.0`);
//! * an object whose keys are *all* operator names is an operator map, ANDed;
//! * any other object is a field map mirroring the response (§5.2), including `{}` ("an object");
//! * an array addresses the leading elements of the actual array, position by position.
//!
//! Extensions (documented in `suites/README.md`): `type: integer` and a list of type names,
//! `contains` on arrays, `count*` on objects and strings, `exists/absent: false`, `equals`.
//!
//! Every mismatch is collected, in document order, so one run shows everything that is wrong.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::paths;

/// One failed expectation, located by an RFC 6901 pointer into the actual value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Where in the actual value (`""` is the root).
    pub pointer: String,
    /// What was expected, compact.
    pub expected: String,
    /// What was there, compact and truncated; `<absent>` when missing.
    pub actual: String,
    pub message: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() { "(root)" } else { &self.pointer };
        write!(f, "{at}: {} (expected {}, actual {})", self.message, self.expected, self.actual)
    }
}

/// Every operator name the DSL knows; an object made only of these is an operator map.
pub const OPERATORS: &[&str] = &[
    "type",
    "exists",
    "absent",
    "contains",
    "matches",
    "starts_with",
    "ends_with",
    "gte",
    "lte",
    "gt",
    "lt",
    "count",
    "count_gte",
    "count_lte",
    "one_of",
    "all_of",
    "any_of",
    "not",
    "equals",
    "items",
    "some",
    "equivalent",
];

/// `v` with every member that holds a ProtoJSON default left out, recursively.
fn without_defaults(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter().map(|(k, v)| (k.clone(), without_defaults(v))).filter(|(_, v)| !is_default(v)).collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_defaults).collect()),
        other => other.clone(),
    }
}

fn is_default(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

/// Where two values first differ, as a JSON pointer below `at`.
fn first_difference(a: &Value, b: &Value, at: &str) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) if json_eq(p, q) => {}
                    (Some(p), Some(q)) => return first_difference(p, q, &format!("{at}/{k}")),
                    _ => return format!("{at}/{k}"),
                }
            }
            at.to_owned()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find(|(_, (p, q))| !json_eq(p, q))
            .map_or_else(|| at.to_owned(), |(i, (p, q))| first_difference(p, q, &format!("{at}/{i}"))),
        _ => {
            if at.is_empty() {
                "(root)".into()
            } else {
                at.to_owned()
            }
        }
    }
}

/// Operators that may legitimately look at a missing value; all others fail with "missing".
const MISSING_OK: &[&str] = &["exists", "absent", "not", "any_of"];

/// Longest rendering of a value kept in a report, so a 1 MB body does not swamp it.
const MAX_RENDER: usize = 200;

/// Renders a value as compact JSON, truncated to about 200 characters.
pub fn render(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_else(|_| "<unrenderable>".into());
    truncate(s)
}

fn truncate(s: String) -> String {
    if s.chars().count() <= MAX_RENDER {
        return s;
    }
    let mut t: String = s.chars().take(MAX_RENDER).collect();
    t.push('…');
    t
}

fn render_opt(v: Option<&Value>) -> String {
    v.map_or_else(|| "<absent>".to_string(), render)
}

/// True when `expected` is an object of operators rather than a field map.
pub fn is_operator_map(expected: &Value) -> bool {
    // An empty map has no operators: it is a field map that asks for an object.
    matches!(expected, Value::Object(m) if !m.is_empty() && m.keys().all(|k| OPERATORS.contains(&k.as_str())))
}

/// Checks `actual` (None: missing) against an ACTS assertion; returns every mismatch in document order.
pub fn check(actual: Option<&Value>, expected: &Value, pointer: &str) -> Vec<Mismatch> {
    let mut out = Vec::new();
    check_into(actual, expected, pointer, &mut out);
    out
}

fn mm(out: &mut Vec<Mismatch>, pointer: &str, expected: String, actual: Option<&Value>, message: impl Into<String>) {
    out.push(Mismatch { pointer: pointer.to_string(), expected, actual: render_opt(actual), message: message.into() });
}

fn check_into(actual: Option<&Value>, expected: &Value, pointer: &str, out: &mut Vec<Mismatch>) {
    match expected {
        Value::Object(map) if is_operator_map(expected) => {
            for (op, arg) in map {
                check_op(actual, op, arg, pointer, out);
            }
        }
        Value::Object(map) => {
            let Some(actual) = actual else {
                return mm(out, pointer, render(expected), None, "missing (expected an object)");
            };
            let Value::Object(obj) = actual else {
                return mm(out, pointer, render(expected), Some(actual), "expected an object");
            };
            for (key, sub) in map {
                check_into(obj.get(key), sub, &paths::pointer_join(pointer, key), out);
            }
        }
        Value::Array(items) => {
            let Some(actual) = actual else {
                return mm(out, pointer, render(expected), None, "missing (expected an array)");
            };
            let Value::Array(arr) = actual else {
                return mm(out, pointer, render(expected), Some(actual), "expected an array");
            };
            if arr.len() < items.len() {
                // Still check the elements that exist, so their problems are reported too.
                mm(
                    out,
                    pointer,
                    render(expected),
                    Some(actual),
                    format!("expected an array of at least {} elements, found {}", items.len(), arr.len()),
                );
            }
            for (i, (sub, a)) in items.iter().zip(arr.iter()).enumerate() {
                check_into(Some(a), sub, &paths::pointer_index(pointer, i), out);
            }
        }
        scalar => match actual {
            None => mm(out, pointer, render(scalar), None, "missing"),
            Some(a) if json_eq(a, scalar) => {}
            Some(a) => mm(out, pointer, render(scalar), Some(a), "not equal"),
        },
    }
}

fn op_expected(op: &str, arg: &Value) -> String {
    truncate(format!("{op}: {}", render(arg)))
}

fn check_op(actual: Option<&Value>, op: &str, arg: &Value, pointer: &str, out: &mut Vec<Mismatch>) {
    let expected = op_expected(op, arg);
    let fail = |out: &mut Vec<Mismatch>, msg: String| mm(out, pointer, expected.clone(), actual, msg);
    let Some(a) = actual else {
        if !MISSING_OK.contains(&op) {
            fail(out, "missing".into());
            return;
        }
        // Falls through to the operators below that handle a missing value.
        return check_missing_ok(None, op, arg, pointer, out, &expected);
    };
    match op {
        "exists" | "absent" | "not" | "any_of" => check_missing_ok(Some(a), op, arg, pointer, out, &expected),
        "type" => {
            let names: Vec<&Value> = match arg {
                Value::Array(xs) => xs.iter().collect(),
                other => vec![other],
            };
            let mut any = false;
            for n in &names {
                match n.as_str().and_then(|s| has_type(a, s)) {
                    Some(true) => any = true,
                    Some(false) => {}
                    None => {
                        // Likely a field literally named `type` (e.g. `type: text`); say how to write that.
                        return fail(
                            out,
                            format!(
                                "unknown type name {} (string, number, integer, boolean, array, object, null); \
                                 to match a field named `type`, add another field or use `equals`",
                                render(n)
                            ),
                        );
                    }
                }
            }
            if !any {
                fail(out, format!("expected type {}, found {}", names_list(&names), type_name(a)));
            }
        }
        "contains" => match (a, arg) {
            (Value::String(s), Value::String(sub)) => {
                if !s.contains(sub.as_str()) {
                    fail(out, format!("does not contain {}", render(arg)));
                }
            }
            (Value::String(_), _) => fail(out, "`contains` on a string needs a string argument".into()),
            (Value::Array(xs), _) => {
                if !xs.iter().any(|x| json_eq(x, arg)) {
                    fail(out, format!("no element equals {}", render(arg)));
                }
            }
            _ => fail(out, format!("`contains` needs a string or an array, found {}", type_name(a))),
        },
        "matches" => {
            let Some(pat) = arg.as_str() else {
                return fail(out, "`matches` needs a regular expression string".into());
            };
            let re = match regex::Regex::new(pat) {
                Ok(re) => re,
                // A suite bug, not a peer bug, but it must not panic the runner: report it in place.
                Err(e) => return fail(out, format!("invalid regular expression: {e}")),
            };
            match a.as_str() {
                Some(s) if re.is_match(s) => {}
                Some(_) => fail(out, format!("does not match /{pat}/")),
                None => fail(out, format!("`matches` needs a string, found {}", type_name(a))),
            }
        }
        "starts_with" | "ends_with" => {
            let Some(affix) = arg.as_str() else {
                return fail(out, format!("`{op}` needs a string argument"));
            };
            match a.as_str() {
                Some(s) => {
                    let ok = if op == "starts_with" { s.starts_with(affix) } else { s.ends_with(affix) };
                    if !ok {
                        let what = if op == "starts_with" { "start" } else { "end" };
                        fail(out, format!("does not {what} with {}", render(arg)));
                    }
                }
                None => fail(out, format!("`{op}` needs a string, found {}", type_name(a))),
            }
        }
        "gte" | "lte" | "gt" | "lt" => {
            let Value::Number(limit) = arg else {
                return fail(out, format!("`{op}` needs a number argument"));
            };
            let Value::Number(n) = a else {
                return fail(out, format!("expected a number, found {}", type_name(a)));
            };
            let ord = num_cmp(n, limit);
            let ok = match op {
                "gte" => matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
                "lte" => matches!(ord, Some(Ordering::Less | Ordering::Equal)),
                "gt" => ord == Some(Ordering::Greater),
                _ => ord == Some(Ordering::Less),
            };
            if !ok {
                let sym = match op {
                    "gte" => ">=",
                    "lte" => "<=",
                    "gt" => ">",
                    _ => "<",
                };
                fail(out, format!("{n} is not {sym} {limit}"));
            }
        }
        "count" | "count_gte" | "count_lte" => {
            let Some(want) = arg.as_u64() else {
                return fail(out, format!("`{op}` needs a non-negative integer argument"));
            };
            let len = match a {
                Value::Array(x) => x.len(),
                Value::Object(m) => m.len(),
                // Characters, not bytes: the length a suite author sees.
                Value::String(s) => s.chars().count(),
                _ => return fail(out, format!("`{op}` needs an array, object or string, found {}", type_name(a))),
            } as u64;
            let (ok, sym) = match op {
                "count" => (len == want, "=="),
                "count_gte" => (len >= want, ">="),
                _ => (len <= want, "<="),
            };
            if !ok {
                fail(out, format!("length {len} is not {sym} {want}"));
            }
        }
        "one_of" => {
            let Value::Array(opts) = arg else {
                return fail(out, "`one_of` needs a list".into());
            };
            if !opts.iter().any(|o| json_eq(a, o)) {
                fail(out, "not one of the allowed values".into());
            }
        }
        "all_of" => {
            let Value::Array(subs) = arg else {
                return fail(out, "`all_of` needs a list of assertions".into());
            };
            for sub in subs {
                check_into(Some(a), sub, pointer, out);
            }
        }
        "equals" => {
            if !json_eq(a, arg) {
                fail(out, "not equal".into());
            }
        }
        // ext (used by the ACTS draft corpus): every element of an array satisfies the assertion,
        // or, given a list, the leading elements match it by position.
        "items" => {
            let Value::Array(elems) = a else {
                return fail(out, format!("`items` needs an array, got {}", type_name(a)));
            };
            if arg.is_array() {
                return check_into(Some(a), arg, pointer, out);
            }
            for (i, e) in elems.iter().enumerate() {
                check_into(Some(e), arg, &crate::suite::paths::pointer_index(pointer, i), out);
            }
        }
        // ext: the same message as the argument read as ProtoJSON reads it, where a member left
        // out and one holding its default (`null`, `""`, `0`, `false`, `[]`, `{}`) are one: what
        // "semantically equivalent results" of two bindings can be held to (§5.1).
        "equivalent" => {
            let (mine, theirs) = (without_defaults(a), without_defaults(arg));
            if !json_eq(&mine, &theirs) {
                let at = first_difference(&mine, &theirs, pointer);
                fail(out, format!("not the same message (first difference at {at})"));
            }
        }
        // ext: at least one element of an array satisfies the assertion (an `ErrorInfo` among the
        // `details` of an error, whatever else they hold).
        "some" => {
            let Value::Array(elems) = a else {
                return fail(out, format!("`some` needs an array, got {}", type_name(a)));
            };
            if !elems.iter().any(|e| check(Some(e), arg, "").is_empty()) {
                fail(out, format!("no element of {} satisfies {}", elems.len(), render(arg)));
            }
        }
        // Unreachable: only OPERATORS reach here; kept total so a new name fails loudly, not silently.
        other => fail(out, format!("unknown operator `{other}`")),
    }
}

/// The operators that give a missing value a meaning of its own.
fn check_missing_ok(
    actual: Option<&Value>,
    op: &str,
    arg: &Value,
    pointer: &str,
    out: &mut Vec<Mismatch>,
    expected: &str,
) {
    let mut fail = |msg: String| mm(out, pointer, expected.to_string(), actual, msg);
    match op {
        "exists" | "absent" => {
            let Some(flag) = arg.as_bool() else {
                return fail(format!("`{op}` needs true or false"));
            };
            // `exists: X` and `absent: !X` are the same question.
            let want_present = if op == "exists" { flag } else { !flag };
            match (want_present, actual.is_some()) {
                (true, false) => fail("missing".into()),
                (false, true) => fail("expected to be absent".into()),
                _ => {}
            }
        }
        "not" => {
            if check(actual, arg, pointer).is_empty() {
                fail("matched, but the assertion is negated".into());
            }
        }
        "any_of" => {
            let Value::Array(subs) = arg else {
                return fail("`any_of` needs a list of assertions".into());
            };
            let mut failed = Vec::new();
            for sub in subs {
                let m = check(actual, sub, pointer);
                if m.is_empty() {
                    return;
                }
                failed.push(m);
            }
            // The alternative that got furthest into the answer is almost always the one the
            // answer meant to be (a Task, not a Message): report its mismatches where they are.
            let depth = |m: &Vec<Mismatch>| m[0].pointer.matches('/').count();
            let deepest = failed.iter().map(depth).max().unwrap_or(0);
            let closest: Vec<&Vec<Mismatch>> = failed.iter().filter(|m| depth(m) == deepest).collect();
            if closest.len() == 1 && deepest > pointer.matches('/').count() {
                for m in closest[0] {
                    out.push(Mismatch {
                        message: format!("no alternative matched; the closest: {}", m.message),
                        ..m.clone()
                    });
                }
                return;
            }
            // First reason per branch, where it failed: enough to see why each alternative failed.
            let reasons: Vec<String> = failed
                .iter()
                .map(|m| {
                    let at = m[0].pointer.strip_prefix(pointer).filter(|p| !p.is_empty());
                    at.map_or_else(|| m[0].message.clone(), |p| format!("{p}: {}", m[0].message))
                })
                .collect();
            fail(format!("no alternative matched ({})", reasons.join("; ")));
        }
        _ => fail(format!("unknown operator `{op}`")),
    }
}

fn names_list(names: &[&Value]) -> String {
    names.iter().map(|n| n.as_str().unwrap_or("?")).collect::<Vec<_>>().join(" or ")
}

/// The JSON type name of a value (`number` for every number).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `v` has the named type; `None` for an unknown name.
fn has_type(v: &Value, name: &str) -> Option<bool> {
    Some(match name {
        "string" => v.is_string(),
        "number" => v.is_number(),
        // ext: `3.0` counts, as JSON does not distinguish it from `3`.
        "integer" => match v {
            Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
            _ => false,
        },
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => return None,
    })
}

/// Orders two JSON numbers, exactly for integers (an f64 would lose precision past 2^53).
fn num_cmp(a: &Number, b: &Number) -> Option<Ordering> {
    let int = |n: &Number| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    match (int(a), int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// Deep JSON equality where numbers compare numerically (`42 == 42.0`) and object order is ignored.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_cmp(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Evaluates an ACTS §9.1 `until` expression (`path == v`, `path != v`, `path in [a, b]`) against a response.
///
/// Values are bare words (strings), quoted strings, numbers, `true`/`false`/`null`. A bare word
/// that looks like a number also matches a string with the same text, since authors write
/// `id == 42` without knowing whether the peer sends `42` or `"42"`. A missing path equals nothing.
pub fn eval_until(expr: &str, root: &Value) -> Result<bool, String> {
    let expr = expr.trim();
    // The path ends at whitespace or at the operator, so `a.b==X` works too.
    let path_end = expr.find(|c: char| c.is_whitespace() || c == '=' || c == '!').unwrap_or(expr.len());
    let path = &expr[..path_end];
    if path.is_empty() {
        return Err(format!("until `{expr}`: expected a path before the operator"));
    }
    let rest = expr[path_end..].trim_start();
    let (op, rhs) = if let Some(r) = rest.strip_prefix("==") {
        ("==", r)
    } else if let Some(r) = rest.strip_prefix("!=") {
        ("!=", r)
    } else if let Some(r) = rest.strip_prefix("in").filter(|r| r.starts_with(|c: char| c.is_whitespace() || c == '[')) {
        ("in", r)
    } else {
        return Err(format!("until `{expr}`: expected `==`, `!=` or `in` after `{path}`"));
    };
    let rhs = rhs.trim();
    let actual = paths::get(root, path).map_err(|e| format!("until `{expr}`: {e}"))?;
    let values = if op == "in" {
        let inner = rhs
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .ok_or_else(|| format!("until `{expr}`: `in` needs a list like [A, B]"))?;
        split_list(inner).map_err(|e| format!("until `{expr}`: {e}"))?
    } else {
        if rhs.is_empty() {
            return Err(format!("until `{expr}`: expected a value after `{op}`"));
        }
        vec![parse_literal(rhs).map_err(|e| format!("until `{expr}`: {e}"))?]
    };
    let hit = actual.is_some_and(|a| values.iter().any(|lit| lit.matches(a)));
    Ok(if op == "!=" { !hit } else { hit })
}

/// A literal on the right of an `until` expression.
struct Literal {
    value: Value,
    /// The text as written when unquoted, for the lenient number-vs-string match.
    bare: Option<String>,
}

impl Literal {
    fn matches(&self, actual: &Value) -> bool {
        json_eq(actual, &self.value)
            || matches!((&self.bare, actual), (Some(b), Value::String(s)) if b == s && !self.value.is_string())
    }
}

fn parse_literal(s: &str) -> Result<Literal, String> {
    let s = s.trim();
    if let Some(q) = s.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let inner = s[1..].strip_suffix(q).ok_or_else(|| format!("unterminated quoted value {s}"))?;
        if q == '"' {
            // Double quotes follow JSON so `\"` and `\n` work; single quotes are verbatim.
            let v: Value = serde_json::from_str(s).map_err(|e| format!("bad quoted value {s}: {e}"))?;
            return Ok(Literal { value: v, bare: None });
        }
        return Ok(Literal { value: Value::String(inner.to_string()), bare: None });
    }
    if s.is_empty() {
        return Err("empty value".into());
    }
    let value = match s {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        _ => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Number(_)) => v,
            _ => Value::String(s.to_string()),
        },
    };
    Ok(Literal { value, bare: Some(s.to_string()) })
}

/// Splits `A, "b, c", 3` on top-level commas, honouring quotes.
fn split_list(inner: &str) -> Result<Vec<Literal>, String> {
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in inner.chars() {
        match quote {
            Some(q) => {
                cur.push(c);
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                cur.push(c);
            }
            None if c == ',' => items.push(parse_literal(&std::mem::take(&mut cur))?),
            None => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err("unterminated quote in list".into());
    }
    if !cur.trim().is_empty() || !items.is_empty() {
        items.push(parse_literal(&cur)?);
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn ok(actual: Value, expected: Value) {
        let m = check(Some(&actual), &expected, "");
        assert!(m.is_empty(), "expected pass: {expected} vs {actual}: {m:?}");
    }

    fn bad(actual: Option<Value>, expected: Value) -> Vec<Mismatch> {
        let m = check(actual.as_ref(), &expected, "");
        assert!(!m.is_empty(), "expected failure: {expected} vs {actual:?}");
        m
    }

    #[test]
    fn scalars_exact() {
        ok(json!("a"), json!("a"));
        ok(json!(42), json!(42.0));
        ok(json!(42.0), json!(42));
        ok(json!(true), json!(true));
        ok(json!(null), json!(null));
        ok(json!(-1), json!(-1));
        ok(json!(u64::MAX), json!(u64::MAX));
        bad(Some(json!("a")), json!("b"));
        bad(Some(json!(42)), json!("42"));
        bad(Some(json!(1)), json!(true));
        bad(Some(json!(null)), json!(false));
        bad(Some(json!(9007199254740993u64)), json!(9007199254740992u64));
        let m = bad(None, json!("x"));
        assert_eq!(m[0].message, "missing");
        assert_eq!(m[0].actual, "<absent>");
        assert_eq!(m[0].expected, "\"x\"");
    }

    #[test]
    fn type_operator() {
        for (v, t) in [
            (json!("s"), "string"),
            (json!(1.5), "number"),
            (json!(3), "integer"),
            (json!(3.0), "integer"),
            (json!(false), "boolean"),
            (json!([]), "array"),
            (json!({}), "object"),
            (json!(null), "null"),
        ] {
            ok(v.clone(), json!({ "type": t }));
        }
        bad(Some(json!(1.5)), json!({"type": "integer"}));
        bad(Some(json!("1")), json!({"type": "number"}));
        bad(Some(json!(null)), json!({"type": "object"}));
        ok(json!(null), json!({"type": ["string", "null"]}));
        bad(Some(json!(1)), json!({"type": ["string", "null"]}));
        let m = bad(Some(json!("x")), json!({"type": "text"}));
        assert!(m[0].message.contains("unknown type name"), "{}", m[0].message);
        let m = bad(None, json!({"type": "string"}));
        assert_eq!(m[0].message, "missing");
    }

    #[test]
    fn exists_and_absent() {
        ok(json!(null), json!({"exists": true}));
        ok(json!(1), json!({"absent": false}));
        assert!(check(None, &json!({"exists": false}), "").is_empty());
        assert!(check(None, &json!({"absent": true}), "").is_empty());
        assert_eq!(bad(None, json!({"exists": true}))[0].message, "missing");
        bad(None, json!({"absent": false}));
        bad(Some(json!(1)), json!({"absent": true}));
        bad(Some(json!(null)), json!({"exists": false}));
        bad(Some(json!(1)), json!({"exists": "yes"}));
        // In a field map: absent on a missing key passes, on a present key fails with its pointer.
        ok(json!({"a": 1}), json!({"b": {"absent": true}, "a": {"exists": true}}));
        let m = bad(Some(json!({"b": 2})), json!({"b": {"absent": true}, "c": 3}));
        assert_eq!(m[0].pointer, "/b");
        assert_eq!(m[0].actual, "2");
    }

    #[test]
    fn contains_operator() {
        ok(json!("hello world"), json!({"contains": "lo w"}));
        bad(Some(json!("hello")), json!({"contains": "xyz"}));
        ok(json!([1, "a", {"k": 2}]), json!({"contains": {"k": 2.0}}));
        ok(json!([1, 2]), json!({"contains": 2.0}));
        bad(Some(json!([1, 2])), json!({"contains": 3}));
        bad(Some(json!(12)), json!({"contains": "1"}));
        bad(Some(json!("12")), json!({"contains": 1}));
        assert_eq!(bad(None, json!({"contains": "x"}))[0].message, "missing");
    }

    #[test]
    fn matches_operator() {
        ok(json!("TASK_STATE_COMPLETED"), json!({"matches": "^TASK_STATE_[A-Z_]+$"}));
        ok(json!("abc-123"), json!({"matches": "\\d+"}));
        bad(Some(json!("abc")), json!({"matches": "^\\d+$"}));
        bad(Some(json!(123)), json!({"matches": "\\d+"}));
        let m = bad(Some(json!("abc")), json!({"matches": "(unclosed"}));
        assert!(m[0].message.contains("invalid regular expression"), "{}", m[0].message);
        bad(Some(json!("abc")), json!({"matches": 5}));
        assert_eq!(bad(None, json!({"matches": "x"}))[0].message, "missing");
    }

    #[test]
    fn affix_operators() {
        ok(json!("https://x"), json!({"starts_with": "https://"}));
        bad(Some(json!("http://x")), json!({"starts_with": "https://"}));
        ok(json!("file.json"), json!({"ends_with": ".json"}));
        bad(Some(json!("file.yaml")), json!({"ends_with": ".json"}));
        bad(Some(json!(5)), json!({"starts_with": "5"}));
        bad(Some(json!("x")), json!({"ends_with": 1}));
        bad(None, json!({"starts_with": "a"}));
    }

    #[test]
    fn numeric_comparisons() {
        ok(json!(5), json!({"gte": 5}));
        ok(json!(5.5), json!({"gte": 5}));
        bad(Some(json!(4)), json!({"gte": 5}));
        ok(json!(5), json!({"lte": 5.0}));
        bad(Some(json!(6)), json!({"lte": 5}));
        ok(json!(6), json!({"gt": 5}));
        bad(Some(json!(5)), json!({"gt": 5}));
        ok(json!(-1), json!({"lt": 0}));
        bad(Some(json!(0)), json!({"lt": 0}));
        ok(json!(3), json!({"gte": 1, "lte": 5}));
        let m = bad(Some(json!(7)), json!({"gte": 1, "lte": 5, "lt": 6}));
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].message, "7 is not <= 5");
        assert_eq!(m[0].expected, "lte: 5");
        bad(Some(json!("5")), json!({"gte": 1}));
        bad(Some(json!(5)), json!({"gte": "1"}));
        bad(None, json!({"lt": 1}));
        ok(json!(u64::MAX), json!({"gt": i64::MAX}));
    }

    #[test]
    fn count_operators() {
        ok(json!([1, 2, 3]), json!({"count": 3}));
        bad(Some(json!([1, 2])), json!({"count": 3}));
        ok(json!([1]), json!({"count_gte": 1}));
        bad(Some(json!([])), json!({"count_gte": 1}));
        ok(json!([1, 2]), json!({"count_lte": 2}));
        bad(Some(json!([1, 2, 3])), json!({"count_lte": 2}));
        ok(json!({"a": 1, "b": 2}), json!({"count": 2}));
        ok(json!("héllo"), json!({"count": 5}));
        bad(Some(json!(5)), json!({"count": 1}));
        bad(Some(json!([1])), json!({"count": -1}));
        bad(None, json!({"count_gte": 0}));
        ok(json!([1, 2]), json!({"type": "array", "count_gte": 1, "count_lte": 3}));
    }

    #[test]
    fn one_of_operator() {
        ok(json!("TASK_STATE_WORKING"), json!({"one_of": ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]}));
        bad(Some(json!("TASK_STATE_FAILED")), json!({"one_of": ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]}));
        ok(json!(-32602), json!({"one_of": [-32600, -32602.0]}));
        bad(Some(json!(1)), json!({"one_of": "1"}));
        bad(None, json!({"one_of": [null]}));
    }

    #[test]
    fn combinators() {
        ok(json!("abc"), json!({"all_of": [{"type": "string"}, {"starts_with": "a"}]}));
        let m = bad(Some(json!(5)), json!({"all_of": [{"type": "string"}, {"gt": 10}]}));
        assert_eq!(m.len(), 2);
        ok(json!(5), json!({"any_of": [{"type": "string"}, {"gt": 1}]}));
        let m = bad(Some(json!(0)), json!({"any_of": [{"type": "string"}, {"gt": 1}]}));
        assert_eq!(m.len(), 1);
        assert!(m[0].message.contains("no alternative"), "{}", m[0].message);
        ok(json!(5), json!({"not": {"type": "string"}}));
        bad(Some(json!("x")), json!({"not": {"type": "string"}}));
        // not / any_of may see a missing value.
        assert!(check(None, &json!({"not": {"exists": true}}), "").is_empty());
        assert!(check(None, &json!({"any_of": [{"absent": true}, {"type": "string"}]}), "").is_empty());
        bad(None, json!({"any_of": [{"type": "string"}]}));
        bad(None, json!({"all_of": [{"absent": true}]}));
        bad(Some(json!(1)), json!({"all_of": 1}));
        bad(Some(json!(1)), json!({"any_of": {}}));
        // Nested combinators and a field map inside one.
        ok(
            json!({"state": "A", "n": 2}),
            json!({"any_of": [{"state": "B"}, {"all_of": [{"state": "A"}, {"n": {"gte": 2}}]}]}),
        );
    }

    #[test]
    fn equals_operator() {
        ok(json!({"type": "text", "x": [1]}), json!({"equals": {"type": "text", "x": [1.0]}}));
        ok(json!({"type": "string"}), json!({"equals": {"type": "string"}}));
        bad(Some(json!({"type": "string", "more": 1})), json!({"equals": {"type": "string"}}));
        bad(Some(json!([1, 2])), json!({"equals": [1]}));
        bad(None, json!({"equals": null}));
    }

    #[test]
    fn field_maps_nest_and_report_all() {
        let actual = json!({"task": {"id": "t1", "status": {"state": "TASK_STATE_WORKING"}, "kind": "task"}});
        ok(actual.clone(), json!({"task": {"id": {"type": "string"}, "status": {"state": "TASK_STATE_WORKING"}}}));
        let m = check(
            Some(&actual),
            &json!({"task": {"id": {"type": "number"}, "status": {"state": "TASK_STATE_COMPLETED"}, "nope": 1}}),
            "",
        );
        let ptrs: Vec<_> = m.iter().map(|m| m.pointer.as_str()).collect();
        assert_eq!(ptrs, vec!["/task/id", "/task/status/state", "/task/nope"]);
        assert_eq!(m[1].actual, "\"TASK_STATE_WORKING\"");
        assert_eq!(m[2].actual, "<absent>");
        // A non-object where a map is expected: one mismatch, no descent.
        let m = bad(Some(json!({"task": "oops"})), json!({"task": {"id": 1, "x": 2}}));
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].message, "expected an object");
        assert_eq!(m[0].pointer, "/task");
        // Mixed keys make a field map: `type` is then an ordinary field.
        ok(json!({"type": "text", "text": "hi"}), json!({"type": "text", "text": {"type": "string"}}));
        // `{}` asks for an object.
        ok(json!({"a": 1}), json!({}));
        bad(Some(json!([])), json!({}));
        bad(None, json!({}));
    }

    #[test]
    fn pointers_escape_and_start_from_base() {
        let m = check(Some(&json!({"a/b": {"c~d": 1}})), &json!({"a/b": {"c~d": 2}}), "/body");
        assert_eq!(m[0].pointer, "/body/a~1b/c~0d");
    }

    #[test]
    fn arrays_are_positional_prefixes() {
        let actual = json!({"artifacts": [{"parts": [{"text": "hi"}, {"data": {}}]}, {"parts": []}]});
        ok(actual.clone(), json!({"artifacts": [{"parts": [{"text": {"type": "string"}}]}]}));
        ok(actual.clone(), json!({"artifacts": [{}, {"parts": {"count": 0}}]}));
        let m = bad(Some(actual.clone()), json!({"artifacts": [{"parts": [{"text": "bye"}]}]}));
        assert_eq!(m[0].pointer, "/artifacts/0/parts/0/text");
        let m = bad(Some(json!([1])), json!([1, 2]));
        assert!(m[0].message.contains("at least 2"), "{}", m[0].message);
        let m = bad(Some(json!([5])), json!([1, 2]));
        assert_eq!(m.len(), 2, "{m:?}");
        let m = bad(Some(json!({"a": 1})), json!([1]));
        assert_eq!(m[0].message, "expected an array");
        bad(None, json!([]));
        ok(json!([1, 2, 3]), json!([]));
        ok(json!([1, 2, 3]), json!([1.0, 2]));
    }

    #[test]
    fn actual_is_truncated() {
        let long = "x".repeat(1000);
        let m = bad(Some(json!(long)), json!("y"));
        assert!(m[0].actual.chars().count() <= MAX_RENDER + 1);
        assert!(m[0].actual.ends_with('…'));
        assert!(m[0].to_string().contains("(root)"));
    }

    #[test]
    fn until_expressions() {
        let r = json!({"status": {"state": "TASK_STATE_WORKING", "n": 3, "ok": true, "z": null, "s": "42"}});
        assert_eq!(eval_until("status.state == TASK_STATE_WORKING", &r), Ok(true));
        assert_eq!(eval_until("status.state==TASK_STATE_WORKING", &r), Ok(true));
        assert_eq!(eval_until("status.state == \"TASK_STATE_WORKING\"", &r), Ok(true));
        assert_eq!(eval_until("status.state == 'TASK_STATE_WORKING'", &r), Ok(true));
        assert_eq!(eval_until("status.state == TASK_STATE_COMPLETED", &r), Ok(false));
        assert_eq!(eval_until("status.state != TASK_STATE_COMPLETED", &r), Ok(true));
        assert_eq!(eval_until("status.state != TASK_STATE_WORKING", &r), Ok(false));
        assert_eq!(eval_until("status.state in [TASK_STATE_COMPLETED, TASK_STATE_FAILED]", &r), Ok(false));
        assert_eq!(eval_until("status.state in [TASK_STATE_COMPLETED, TASK_STATE_WORKING]", &r), Ok(true));
        assert_eq!(eval_until("status.state in [\"a, b\", 'TASK_STATE_WORKING']", &r), Ok(true));
        assert_eq!(eval_until("status.n == 3", &r), Ok(true));
        assert_eq!(eval_until("status.n == 3.0", &r), Ok(true));
        assert_eq!(eval_until("status.n in [1, 2]", &r), Ok(false));
        assert_eq!(eval_until("status.ok == true", &r), Ok(true));
        assert_eq!(eval_until("status.ok == \"true\"", &r), Ok(false));
        assert_eq!(eval_until("status.z == null", &r), Ok(true));
        assert_eq!(eval_until("status.s == 42", &r), Ok(true), "bare number matches numeric string");
        assert_eq!(eval_until("status.s == \"42\"", &r), Ok(true));
        assert_eq!(eval_until("status.n == \"3\"", &r), Ok(false), "quoted is strictly a string");
        assert_eq!(eval_until("status.missing == null", &r), Ok(false));
        assert_eq!(eval_until("status.missing != X", &r), Ok(true));
        assert_eq!(eval_until("status.missing in [X]", &r), Ok(false));
        assert_eq!(eval_until("status.state in []", &r), Ok(false));
        assert_eq!(eval_until("  status.state   in[TASK_STATE_WORKING]  ", &r), Ok(true));
    }

    #[test]
    fn until_errors() {
        let r = json!({});
        for e in [
            "",
            "== X",
            "status.state",
            "status.state = X",
            "status.state ==",
            "status.state in X",
            "status.state in [A, 'b]",
            "status.state == \"x",
            "tasks[*].id == X",
            "a..b == X",
            "status.state inside [A]",
        ] {
            assert!(eval_until(e, &r).is_err(), "{e:?} should be an error");
        }
        assert!(eval_until("tasks[*].id == X", &r).unwrap_err().contains("wildcard"));
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (-1e12f64..1e12).prop_map(|f| json!(f)),
            ".{0,8}".prop_map(Value::String),
            // Operator names as strings and keys, to exercise `equals` on lookalikes.
            prop::sample::select(OPERATORS).prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            let key = prop_oneof![".{0,6}", prop::sample::select(OPERATORS).prop_map(str::to_string)];
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key, inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn equals_self_never_mismatches(v in arb_json()) {
            let m = check(Some(&v), &json!({"equals": v.clone()}), "");
            prop_assert!(m.is_empty(), "{:?}", m);
        }

        #[test]
        fn not_equals_self_always_mismatches(v in arb_json()) {
            let negated = json!({"not": {"equals": v.clone()}});
            prop_assert!(!check(Some(&v), &negated, "").is_empty(), "negation of equals passed");
        }
    }
}

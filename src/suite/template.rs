//! ACTS §8 variables: `{{name}}`, `{{step.var}}`, `{{step.response}}`, `{{env.NAME}}`, `{{$uuid}}`.
//!
//! Resolution order follows §12.2: step captures, then document variables, then the environment,
//! then built-in generators. Extensions: `{{step.response.<dot-path>}}` (and a dot-path after any
//! variable) resolved with [`paths::get`]; whitespace inside the braces is ignored.
//!
//! A string that is exactly one `{{expr}}` keeps the variable's JSON type, so a captured number or
//! object is sent as such; anywhere else the value is interpolated as text. An object member whose
//! value is exactly `{{expr?}}` is left out when `expr` names nothing (ext: an optional capture the
//! agent did not give).

use std::collections::BTreeMap;

use serde_json::Value;

use super::paths::{self, PathError};

/// Why a template could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// No variable by that name; `similar` lists known names that look close (typo hints).
    #[error("unknown variable `{name}`{}", similar_hint(similar))]
    Unknown {
        /// The expression as written (trimmed).
        name: String,
        /// Known names that look similar, best first.
        similar: Vec<String>,
    },
    /// `{{env.NAME}}` with `NAME` unset (or not valid Unicode).
    #[error("environment variable `{name}` is not set (referenced as `{{{{env.{name}}}}}`)")]
    Env { name: String },
    /// A dot-path after a variable reaches nothing.
    #[error("`{var}` has no value at `{path}`")]
    NoValue {
        /// The variable (e.g. `send.response`).
        var: String,
        path: String,
    },
    /// A dot-path after a variable is malformed.
    #[error("in `{{{{{expr}}}}}`: {source}")]
    Path { expr: String, source: PathError },
    /// `{{` without a closing `}}`; `pos` is the byte offset of the `{{`.
    #[error("unterminated `{{{{` at position {pos} in {text:?}")]
    Unterminated { text: String, pos: usize },
    /// `{{}}` (or only whitespace inside).
    #[error("empty `{{{{}}}}` at position {pos} in {text:?}")]
    Empty { text: String, pos: usize },
}

fn similar_hint(similar: &[String]) -> String {
    if similar.is_empty() { String::new() } else { format!(" (did you mean {}?)", similar.join(", ")) }
}

/// Variables visible to a test: document variables and what earlier steps captured or returned.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    /// Document-level (and runner-provided) variables, e.g. `webhookUrl`.
    top: BTreeMap<String, Value>,
    /// Step id → variable → value; `response` holds the step's assertion root.
    steps: BTreeMap<String, BTreeMap<String, Value>>,
}

impl Vars {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a top-level variable (`{{name}}`).
    pub fn set(&mut self, name: &str, v: Value) {
        self.top.insert(name.to_string(), v);
    }

    /// Sets a step-scoped variable (`{{step.var}}`); use `var = "response"` for the step's response.
    pub fn set_step(&mut self, step: &str, var: &str, v: Value) {
        self.steps.entry(step.to_string()).or_default().insert(var.to_string(), v);
    }

    /// Resolves one expression (the text between the braces) to a value.
    pub fn lookup(&self, expr: &str) -> Result<Value, TemplateError> {
        let expr = expr.trim();
        if expr.is_empty() {
            return Err(TemplateError::Empty { text: String::new(), pos: 0 });
        }
        // 1. Step captures: `step.var`, then `step.var.<path>` / `step.var[0]`.
        if let Some((step, rest)) = expr.split_once('.')
            && let Some(vars) = self.steps.get(step)
        {
            if let Some(v) = vars.get(rest) {
                return Ok(v.clone());
            }
            let (var, path) = split_head(rest);
            if let Some(v) = vars.get(var) {
                return self.descend(&format!("{step}.{var}"), v, path, expr);
            }
        }
        // 2. Document variables: `name`, then `name.<path>`.
        if let Some(v) = self.top.get(expr) {
            return Ok(v.clone());
        }
        let (head, path) = split_head(expr);
        if !path.is_empty()
            && let Some(v) = self.top.get(head)
        {
            return self.descend(head, v, path, expr);
        }
        // 3. The environment. Read at render time so a runner can set it late (e.g. in CI).
        if let Some(name) = expr.strip_prefix("env.") {
            return std::env::var(name).map(Value::String).map_err(|_| TemplateError::Env { name: name.to_string() });
        }
        // 4. Generators: a new value at every occurrence, so two `{{$uuid}}` never collide.
        if expr == "$uuid" {
            return Ok(Value::String(uuid::Uuid::new_v4().to_string()));
        }
        Err(TemplateError::Unknown { name: expr.to_string(), similar: self.similar(expr) })
    }

    /// Looks `path` up inside variable `var`'s value.
    fn descend(&self, var: &str, v: &Value, path: &str, expr: &str) -> Result<Value, TemplateError> {
        // `a[0]` arrives as path `[0]`, `a.b` as `.b`; both are paths relative to `v`.
        let path = path.strip_prefix('.').unwrap_or(path);
        match paths::get(v, path) {
            Ok(Some(found)) => Ok(found.clone()),
            Ok(None) => Err(TemplateError::NoValue { var: var.to_string(), path: path.to_string() }),
            Err(source) => Err(TemplateError::Path { expr: expr.to_string(), source }),
        }
    }

    /// Every name an expression can currently resolve to, for typo hints.
    fn known_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.top.keys().cloned().collect();
        for (step, vars) in &self.steps {
            names.extend(vars.keys().map(|v| format!("{step}.{v}")));
        }
        names.push("$uuid".into());
        names
    }

    /// Known names close to `expr`: same name in another step, a small edit distance, or a shared prefix.
    fn similar(&self, expr: &str) -> Vec<String> {
        let lower = expr.to_lowercase();
        let last = lower.rsplit('.').next().unwrap_or(&lower).to_string();
        let mut scored: Vec<(usize, String)> = self
            .known_names()
            .into_iter()
            .filter_map(|n| {
                let nl = n.to_lowercase();
                let d = edit_distance(&lower, &nl);
                let tail = nl.rsplit('.').next().unwrap_or(&nl);
                let close = d <= 2.max(lower.chars().count() / 4);
                // `{{send.taskid}}` vs `create.taskId`: same variable captured in another step.
                let same_var = !last.is_empty() && tail == last;
                (close || same_var || nl.starts_with(&lower) || lower.starts_with(&nl)).then_some((d, n))
            })
            .collect();
        scored.sort();
        scored.into_iter().take(5).map(|(_, n)| n).collect()
    }
}

/// Splits `var.rest` / `var[0]...` into the first name and the remaining path (with its separator).
fn split_head(s: &str) -> (&str, &str) {
    match s.find(['.', '[']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// Levenshtein distance over characters; names are short, so the quadratic cost does not matter.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Renders every string in a JSON value; a string that is exactly `{{expr}}` takes the variable's type.
pub fn render(value: &Value, vars: &Vars) -> Result<Value, TemplateError> {
    Ok(match value {
        Value::String(s) => match whole_expr(s) {
            Some(expr) => {
                if expr.trim().is_empty() {
                    return Err(TemplateError::Empty { text: s.clone(), pos: 0 });
                }
                vars.lookup(expr)?
            }
            None => Value::String(render_str(s, vars)?),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| render(v, vars)).collect::<Result<_, _>>()?),
        // Keys are not templated: they are field names of the A2A data model, never data. A member
        // whose whole value is `{{expr?}}` is left out when the expression names nothing: a value
        // the agent did not give is never sent (nor expected) as anything else.
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                let optional = v.as_str().and_then(whole_expr).and_then(|e| e.trim().strip_suffix('?'));
                let rendered = match optional {
                    Some(expr) => match vars.lookup(expr) {
                        Ok(found) => found,
                        Err(TemplateError::Unknown { .. } | TemplateError::NoValue { .. }) => continue,
                        Err(e) => return Err(e),
                    },
                    None => render(v, vars)?,
                };
                out.insert(k.clone(), rendered);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// The inner expression when `s` is exactly one `{{expr}}` and nothing else.
fn whole_expr(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("{{")?.strip_suffix("}}")?;
    // `{{a}}-{{b}}` starts and ends with braces but is two expressions.
    (!inner.contains("}}") && !inner.contains("{{")).then_some(inner)
}

/// Interpolates every `{{expr}}` in a string: strings verbatim, other values as compact JSON.
pub fn render_str(s: &str, vars: &Vars) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut offset = 0;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            return Err(TemplateError::Unterminated { text: s.to_string(), pos: offset + open });
        };
        let expr = &after[..close];
        if expr.trim().is_empty() {
            return Err(TemplateError::Empty { text: s.to_string(), pos: offset + open });
        }
        match vars.lookup(expr)? {
            Value::String(v) => out.push_str(&v),
            other => out.push_str(&other.to_string()),
        }
        let consumed = open + 2 + close + 2;
        offset += consumed;
        rest = &rest[consumed..];
    }
    // A lone `}}` is left as written: only `{{` starts an expression.
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Vars {
        let mut v = Vars::new();
        v.set("webhookUrl", json!("http://127.0.0.1:9/hook"));
        v.set("limits", json!({"max": 3}));
        v.set_step("send", "taskId", json!("task-1"));
        v.set_step("send", "count", json!(7));
        v.set_step("send", "obj", json!({"a": [1, 2]}));
        v.set_step(
            "send",
            "response",
            json!({"task": {"id": "task-1", "artifacts": [{"parts": [{"text": "hi"}]}], "n": null}}),
        );
        v
    }

    #[test]
    fn lookup_forms() {
        let v = vars();
        assert_eq!(v.lookup("webhookUrl").unwrap(), json!("http://127.0.0.1:9/hook"));
        assert_eq!(v.lookup("send.taskId").unwrap(), json!("task-1"));
        assert_eq!(v.lookup("  send.count ").unwrap(), json!(7));
        assert_eq!(v.lookup("send.response").unwrap()["task"]["id"], json!("task-1"));
        assert_eq!(v.lookup("send.response.task.id").unwrap(), json!("task-1"));
        assert_eq!(v.lookup("send.response.task.artifacts[0].parts[0].text").unwrap(), json!("hi"));
        assert_eq!(v.lookup("send.response.task.n").unwrap(), Value::Null);
        assert_eq!(v.lookup("send.obj.a[1]").unwrap(), json!(2));
        assert_eq!(v.lookup("send.obj.a").unwrap(), json!([1, 2]));
        assert_eq!(v.lookup("limits.max").unwrap(), json!(3));
    }

    #[test]
    fn an_optional_member_that_names_nothing_is_left_out() {
        let v = vars();
        let t = json!({"contextId": "{{send.contextId?}}", "id": "{{ send.taskId? }}", "n": "{{send.count}}"});
        assert_eq!(render(&t, &v).unwrap(), json!({"id": "task-1", "n": 7}));
        assert!(render(&json!({"contextId": "{{send.contextId}}"}), &v).is_err(), "only `?` makes it optional");
        assert!(render(&json!(["{{send.contextId?}}"]), &v).is_err(), "only an object member can be left out");
    }

    #[test]
    fn step_captures_win_over_document_variables() {
        let mut v = Vars::new();
        v.set("s.x", json!("top"));
        v.set_step("s", "x", json!("step"));
        assert_eq!(v.lookup("s.x").unwrap(), json!("step"));
        // A step named `env` shadows the environment (§12.2: captures first).
        v.set_step("env", "HOME", json!("captured"));
        assert_eq!(v.lookup("env.HOME").unwrap(), json!("captured"));
    }

    #[test]
    fn missing_paths_and_bad_paths() {
        let v = vars();
        let e = v.lookup("send.response.task.nope").unwrap_err();
        assert_eq!(e, TemplateError::NoValue { var: "send.response".into(), path: "task.nope".into() });
        assert!(matches!(v.lookup("send.response.tasks[*].id"), Err(TemplateError::Path { .. })));
        assert!(matches!(v.lookup("send.response.a..b"), Err(TemplateError::Path { .. })));
        assert!(v.lookup("send.response.a..b").unwrap_err().to_string().contains("position"));
    }

    #[test]
    fn env_variables() {
        // Read a variable the process already has rather than calling the (unsafe, racy) `set_var`
        // while other tests run in parallel threads.
        let (name, value) = std::env::vars().find(|(k, _)| !k.contains('.')).expect("some environment variable");
        let v = Vars::new();
        assert_eq!(v.lookup(&format!("env.{name}")).unwrap(), json!(value));
        assert_eq!(render_str(&format!("x={{{{env.{name}}}}}"), &v).unwrap(), format!("x={value}"));
        let e = v.lookup("env.A2A_CONFORM_SURELY_UNSET_VAR").unwrap_err();
        assert_eq!(e, TemplateError::Env { name: "A2A_CONFORM_SURELY_UNSET_VAR".into() });
        assert!(e.to_string().contains("{{env.A2A_CONFORM_SURELY_UNSET_VAR}}"), "{e}");
    }

    #[test]
    fn uuid_is_fresh_each_time() {
        let v = Vars::new();
        let a = v.lookup("$uuid").unwrap();
        let b = v.lookup("$uuid").unwrap();
        assert_ne!(a, b);
        assert!(uuid::Uuid::parse_str(a.as_str().unwrap()).is_ok());
        let s = render_str("{{$uuid}}/{{ $uuid }}", &v).unwrap();
        let (x, y) = s.split_once('/').unwrap();
        assert_ne!(x, y);
        let rendered = render(&json!({"a": "{{$uuid}}", "b": "{{$uuid}}"}), &v).unwrap();
        assert_ne!(rendered["a"], rendered["b"]);
    }

    #[test]
    fn unknown_names_suggest_similar() {
        let v = vars();
        match v.lookup("send.taskid").unwrap_err() {
            TemplateError::Unknown { name, similar } => {
                assert_eq!(name, "send.taskid");
                assert_eq!(similar.first().map(String::as_str), Some("send.taskId"));
            }
            e => panic!("{e:?}"),
        }
        match v.lookup("create.taskId").unwrap_err() {
            TemplateError::Unknown { similar, .. } => assert!(similar.contains(&"send.taskId".to_string())),
            e => panic!("{e:?}"),
        }
        let e = v.lookup("webhookURL").unwrap_err();
        assert!(e.to_string().contains("did you mean webhookUrl"), "{e}");
        match v.lookup("zzzzzzzzzzzzzz").unwrap_err() {
            TemplateError::Unknown { similar, .. } => assert!(similar.is_empty(), "{similar:?}"),
            e => panic!("{e:?}"),
        }
        assert!(!v.lookup("zzzzzzzzzzzzzz").unwrap_err().to_string().contains("did you mean"));
        assert!(matches!(v.lookup("$nope"), Err(TemplateError::Unknown { .. })));
        assert!(matches!(Vars::new().lookup("send.taskId"), Err(TemplateError::Unknown { .. })));
    }

    #[test]
    fn render_preserves_type_for_whole_expressions() {
        let v = vars();
        assert_eq!(render(&json!("{{send.count}}"), &v).unwrap(), json!(7));
        assert_eq!(render(&json!("{{ send.obj }}"), &v).unwrap(), json!({"a": [1, 2]}));
        assert_eq!(render(&json!("{{send.response.task.n}}"), &v).unwrap(), Value::Null);
        assert_eq!(render(&json!("{{send.taskId}}"), &v).unwrap(), json!("task-1"));
        let doc = json!({
            "id": "{{send.taskId}}",
            "n": "{{send.count}}",
            "list": ["{{send.count}}", "x", 5, true, null],
            "nested": {"{{send.taskId}}": "url={{webhookUrl}}"}
        });
        let out = render(&doc, &v).unwrap();
        assert_eq!(
            out,
            json!({
                "id": "task-1",
                "n": 7,
                "list": [7, "x", 5, true, null],
                "nested": {"{{send.taskId}}": "url=http://127.0.0.1:9/hook"}
            })
        );
    }

    #[test]
    fn render_interpolates_inside_strings() {
        let v = vars();
        assert_eq!(render_str("tasks/{{send.taskId}}:cancel", &v).unwrap(), "tasks/task-1:cancel");
        assert_eq!(render_str("n={{send.count}}, o={{send.obj}}", &v).unwrap(), "n=7, o={\"a\":[1,2]}");
        assert_eq!(render_str("{{send.taskId}}-{{send.count}}", &v).unwrap(), "task-1-7");
        assert_eq!(render(&json!("{{send.taskId}}-{{send.count}}"), &v).unwrap(), json!("task-1-7"));
        assert_eq!(render(&json!(" {{send.count}}"), &v).unwrap(), json!(" 7"));
        assert_eq!(render_str("no braces", &v).unwrap(), "no braces");
        assert_eq!(render_str("a }} b { c", &v).unwrap(), "a }} b { c");
        assert_eq!(render_str("", &v).unwrap(), "");
        assert_eq!(render_str("ünï {{send.taskId}} ✓", &v).unwrap(), "ünï task-1 ✓");
    }

    #[test]
    fn render_errors() {
        let v = vars();
        assert_eq!(
            render_str("ab{{send.taskId", &v).unwrap_err(),
            TemplateError::Unterminated { text: "ab{{send.taskId".into(), pos: 2 }
        );
        assert!(matches!(render_str("{{send.taskId}} {{x", &v), Err(TemplateError::Unterminated { pos: 16, .. })));
        assert!(matches!(render_str("a{{ }}b", &v), Err(TemplateError::Empty { pos: 1, .. })));
        assert!(matches!(render(&json!("{{}}"), &v), Err(TemplateError::Empty { .. })));
        assert!(matches!(render(&json!({"a": ["{{nope}}"]}), &v), Err(TemplateError::Unknown { .. })));
        assert!(matches!(render(&json!("x {{nope}}"), &v), Err(TemplateError::Unknown { .. })));
        let msg = render_str("{{x", &v).unwrap_err().to_string();
        assert!(msg.contains("unterminated `{{`"), "{msg}");
    }

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("abc", "abd"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}

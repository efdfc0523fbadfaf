//! The sentences the published specification carries that `specification.md` holds only as a
//! macro. Upstream's site renders `{{ proto_to_table("Part") }}` as the field table of message
//! `Part` and, for each `oneof` of more than one field, the line "**Note:** A `Part` MUST contain
//! exactly one of the following: `text`, `raw`, `url`, `data`" (`.mkdocs/macros.py` of
//! a2aproject/A2A at the pinned commit). Those notes are normative MUSTs readers see in §4.1.6,
//! §3.2.3, §4.5.1, §4.5.7 and §9.4.1, so the kit renders them the same way, from the same proto,
//! right after each macro; the tables themselves restate the proto, which is quoted directly.

use std::sync::OnceLock;

use regex::Regex;

/// `spec` with each `proto_to_table` macro followed by the oneof notes of its message.
pub(super) fn with_oneof_notes(spec: &str, proto: &str) -> String {
    static MACRO: OnceLock<Regex> = OnceLock::new();
    let re = MACRO.get_or_init(|| Regex::new(r#"\{\{\s*proto_to_table\("(\w+)"\)\s*\}\}"#).expect("macro regex"));
    let mut out = String::with_capacity(spec.len() + 2048);
    let mut last = 0;
    for c in re.captures_iter(spec) {
        let m = c.get(0).expect("match");
        out.push_str(&spec[last..m.end()]);
        for fields in oneofs(proto, &c[1]) {
            if fields.len() > 1 {
                let list: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
                out.push_str(&format!(
                    "\n\n**Note:** A `{}` MUST contain exactly one of the following: {}",
                    &c[1],
                    list.join(", ")
                ));
            }
        }
        last = m.end();
    }
    out.push_str(&spec[last..]);
    out
}

/// The JSON names of the fields of each `oneof` of top-level message `name`, in order.
fn oneofs(proto: &str, name: &str) -> Vec<Vec<String>> {
    static FIELD: OnceLock<Regex> = OnceLock::new();
    let field = FIELD.get_or_init(|| {
        Regex::new(r#"^\s*[\w.]+\s+(\w+)\s*=\s*\d+\s*(\[[^\]]*json_name\s*=\s*"(\w+)"[^\]]*\])?"#).expect("field regex")
    });
    let header = format!("message {name} {{");
    let Some(start) = proto.lines().position(|l| l.trim_start() == header && !l.starts_with(' ')) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in proto.lines().skip(start + 1) {
        let code = line.split("//").next().unwrap_or("").trim();
        if code == "}" && current.is_none() {
            break;
        }
        if code.starts_with("oneof ") {
            current = Some(Vec::new());
        } else if code == "}" {
            out.extend(current.take());
        } else if let (Some(fields), Some(c)) = (current.as_mut(), field.captures(code)) {
            fields.push(c.get(3).map_or_else(|| camel(&c[1]), |j| j.as_str().to_owned()));
        }
    }
    out
}

fn camel(snake: &str) -> String {
    let mut parts = snake.split('_');
    let mut out = parts.next().unwrap_or("").to_owned();
    for p in parts {
        let mut chars = p.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_follow_the_macros_of_messages_with_a_oneof() {
        let proto = "message Part {\n  oneof content {\n    string text = 1;\n    bytes raw = 2;\n  }\n  string media_type = 7;\n}\nmessage Task {\n  string id = 1;\n}\n";
        let spec = "#### 4.1.6. Part\n\n{{ proto_to_table(\"Part\") }}\n\n{{ proto_to_table(\"Task\") }}\n";
        let got = with_oneof_notes(spec, proto);
        assert!(got.contains("{{ proto_to_table(\"Part\") }}\n\n**Note:** A `Part` MUST contain exactly one of the following: `text`, `raw`\n"), "{got}");
        assert_eq!(got.matches("**Note:**").count(), 1);
    }

    #[test]
    fn the_real_proto_gives_the_published_notes() {
        let proto = include_str!("../../fixtures/spec/a2a.proto");
        assert_eq!(oneofs(proto, "Part"), vec![vec!["text", "raw", "url", "data"]]);
        assert_eq!(oneofs(proto, "StreamResponse"), vec![vec!["task", "message", "statusUpdate", "artifactUpdate"]]);
        assert_eq!(oneofs(proto, "Task"), Vec::<Vec<String>>::new());
    }
}

//! Where a quote stands: the numbered headings of a markdown text and the top-level definitions of
//! the proto.

use std::sync::OnceLock;

use regex::Regex;

/// Numbered headings (`### 3.1.4. List Tasks`, `## Appendix A. …`, `### 5.1 Error object`) with
/// their byte offsets. Unnumbered headings do not start a section: they stay in the numbered one
/// above. Lines inside code fences are not headings.
pub(super) fn headings(raw: &str) -> Vec<(usize, String)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^#{1,6}[ \t]+(?:Appendix[ \t]+)?([0-9]+(?:\.[0-9]+)*|[A-Z](?:\.[0-9]+)*)\.?(?:[ \t]|$)")
            .expect("heading regex")
    });
    let mut out = Vec::new();
    let mut fenced = false;
    let mut offset = 0;
    for line in raw.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && let Some(c) = re.captures(line.trim_end()) {
            out.push((offset, c[1].to_owned()));
        }
        offset += line.len();
    }
    out
}

/// Top-level `message`, `enum` and `service` definitions of a proto file: (start, end, name). A
/// definition starts where the previous one ended, so that the comment above it is its own.
pub(super) fn proto_definitions(raw: &str) -> Vec<(usize, usize, String)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"^(?:message|enum|service)[ \t]+(\w+)").expect("definition regex"));
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut open: Option<(usize, String)> = None;
    let mut last_end = 0;
    let mut offset = 0;
    for line in raw.split_inclusive('\n') {
        let code = line.split("//").next().unwrap_or("");
        if depth == 0
            && let Some(c) = re.captures(line)
        {
            open = Some((last_end, c[1].to_owned()));
        }
        for ch in code.chars() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0
                        && let Some((start, name)) = open.take()
                    {
                        let end = offset + line.len();
                        out.push((start, end, name));
                        last_end = end;
                    }
                }
                _ => {}
            }
        }
        offset += line.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_headings_only_outside_fences() {
        let raw = "# Title\n## 1. Intro\ntext\n```\n# 9. not a heading\n```\n#### Request: x\n### 1.4 Normative\n## Appendix A. Migration\n### A.2.1 Break\n";
        let got: Vec<String> = headings(raw).into_iter().map(|(_, s)| s).collect();
        assert_eq!(got, ["1", "1.4", "A", "A.2.1"]);
    }

    #[test]
    fn proto_definitions_own_their_leading_comment() {
        let raw = "syntax = \"proto3\";\n// A task.\nmessage Task {\n  string id = 1;\n  oneof x {\n    string a = 2;\n  }\n}\n// The state.\nenum State {\n  A = 0;\n}\n";
        let defs = proto_definitions(raw);
        assert_eq!(defs.len(), 2);
        assert_eq!(defs[0].2, "Task");
        assert!(raw[defs[0].0..defs[0].1].contains("// A task."));
        assert!(raw[defs[1].0..defs[1].1].contains("// The state."));
    }
}

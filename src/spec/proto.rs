//! The proto's data model as far as `coverage` needs it: every field of every message (with its
//! presence: REQUIRED or not, in a `oneof` or not) and what each service method returns, so that
//! the members an agent sends and may leave out can be listed.

use std::collections::{BTreeSet, VecDeque};
use std::sync::OnceLock;

use regex::Regex;

use super::source::Source;
use super::text::section_of_definition;

/// One field of a proto message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The message that holds it (`Task`).
    pub message: String,
    /// Its proto name (`context_id`).
    pub name: String,
    /// Its type as written (`Message`, `google.protobuf.Struct`, `map<string, string>`).
    pub ty: String,
    /// Annotated `[(google.api.field_behavior) = REQUIRED]`.
    pub required: bool,
    /// The `oneof` it is one choice of.
    pub oneof: Option<String>,
}

impl Field {
    /// `Task.context_id`, the spelling of [`super::Sentence::field`].
    pub fn path(&self) -> String {
        format!("{}.{}", self.message, self.name)
    }

    /// The member's JSON name (proto3 JSON: lowerCamelCase).
    pub fn json_name(&self) -> String {
        let mut out = String::new();
        let mut upper = false;
        for c in self.name.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                out.extend(c.to_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    }

    /// The spec section that renders its message, when one does.
    pub fn section(&self) -> Option<String> {
        section_of_definition(&self.message)
    }

    /// The message types it holds (a map's value type included), by name.
    fn holds(&self) -> impl Iterator<Item = &str> {
        let ty = self.ty.trim_start_matches("map<").trim_end_matches('>');
        ty.split(',').map(str::trim).filter(|t| !t.is_empty())
    }
}

/// Every field of every message of the proto, in the order written.
pub fn fields() -> &'static [Field] {
    static ALL: OnceLock<Vec<Field>> = OnceLock::new();
    ALL.get_or_init(|| parse_fields(Source::Proto.text().raw))
}

/// The messages an agent sends: what its service methods return (streams included) and the
/// agent card, with every message they hold, in the order reached.
pub fn sent_by_agent() -> &'static [String] {
    static ALL: OnceLock<Vec<String>> = OnceLock::new();
    ALL.get_or_init(|| {
        let raw = Source::Proto.text().raw;
        let fields = fields();
        let messages: BTreeSet<&str> = fields.iter().map(|f| f.message.as_str()).collect();
        let mut queue: VecDeque<String> = returns(raw).into_iter().collect();
        queue.push_back("AgentCard".into());
        let mut seen: Vec<String> = Vec::new();
        while let Some(m) = queue.pop_front() {
            if !messages.contains(m.as_str()) || seen.contains(&m) {
                continue;
            }
            for f in fields.iter().filter(|f| f.message == m) {
                queue.extend(f.holds().map(str::to_owned));
            }
            seen.push(m);
        }
        seen
    })
}

/// Types the service's methods return (`stream` dropped).
fn returns(raw: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"\breturns\s*\(\s*(?:stream\s+)?([\w.]+)\s*\)").expect("returns regex"));
    raw.lines()
        .filter(|l| l.trim_start().starts_with("rpc "))
        .filter_map(|l| re.captures(l).map(|c| c[1].to_owned()))
        .collect()
}

fn parse_fields(raw: &str) -> Vec<Field> {
    static FIELD: OnceLock<Regex> = OnceLock::new();
    static OPEN: OnceLock<Regex> = OnceLock::new();
    let field = FIELD.get_or_init(|| {
        Regex::new(r"^\s*(?:repeated\s+|optional\s+)?((?:map<[^>]*>)|[\w.]+)\s+(\w+)\s*=\s*\d+\s*(\[[^\]]*\])?\s*;")
            .expect("field regex")
    });
    let open = OPEN.get_or_init(|| Regex::new(r"^\s*(message|enum|service|oneof)\s+(\w+)").expect("block regex"));
    let mut out = Vec::new();
    // The open blocks, innermost last: (kind, name).
    let mut stack: Vec<(String, String)> = Vec::new();
    for line in raw.lines() {
        let code = line.split("//").next().unwrap_or("");
        let named = open.captures(code);
        if named.is_none()
            && let Some(c) = field.captures(code)
            && let Some(message) = stack.iter().rev().find(|(k, _)| k == "message").map(|(_, n)| n.clone())
        {
            let oneof = stack.last().filter(|(k, _)| k == "oneof").map(|(_, n)| n.clone());
            out.push(Field {
                message,
                name: c[2].to_owned(),
                ty: c[1].to_owned(),
                required: c.get(3).is_some_and(|a| a.as_str().contains("REQUIRED")),
                oneof,
            });
        }
        // Every brace opens or closes a block (an rpc's, an option's too), so that a close
        // always ends the block it belongs to.
        let mut named = named.map(|c| (c[1].to_owned(), c[2].to_owned()));
        for ch in code.chars() {
            match ch {
                '{' => stack.push(named.take().unwrap_or_default()),
                '}' => {
                    stack.pop();
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_carry_their_presence() {
        let raw = "message Task {\n  string id = 1 [(google.api.field_behavior) = REQUIRED];\n  // c\n  string context_id = 2;\n  repeated Artifact artifacts = 4;\n}\nmessage Part {\n  oneof content {\n    string text = 1;\n  }\n  map<string, Artifact> m = 5;\n}\n";
        let f = parse_fields(raw);
        let names: Vec<String> = f.iter().map(Field::path).collect();
        assert_eq!(names, ["Task.id", "Task.context_id", "Task.artifacts", "Part.text", "Part.m"]);
        assert!(f[0].required && !f[1].required);
        assert_eq!(f[3].oneof.as_deref(), Some("content"));
        assert_eq!(f[4].oneof, None);
        assert_eq!(f[1].json_name(), "contextId");
        assert_eq!(f[4].holds().collect::<Vec<_>>(), ["string", "Artifact"]);
    }

    #[test]
    fn the_agent_sends_tasks_cards_and_stream_events_not_requests() {
        let sent = sent_by_agent();
        for m in ["Task", "TaskStatus", "Message", "Part", "Artifact", "AgentCard", "AgentSkill", "StreamResponse"] {
            assert!(sent.iter().any(|s| s == m), "{m} not reached");
        }
        assert!(!sent.iter().any(|s| s == "SendMessageRequest" || s == "ListTasksRequest"));
        let task_ids = fields().iter().filter(|f| f.path() == "Task.id").count();
        assert_eq!(task_ids, 1);
    }
}

//! The targets file of `check --targets`: the agents of a registry, each with its URL and what
//! its run needs. A targets file never holds a secret: a credential is the *name* of an
//! environment variable, read when the agent's run starts, so that one missing variable is that
//! agent's error and not the registry's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Most agents one targets file may list: a registry larger than this is sharded.
pub const MAX_TARGETS: usize = 100_000;
/// Longest agent name kept (it names a folder).
const MAX_NAME: usize = 80;

/// The file as written: `defaults` apply to every target that does not set the member itself.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetsFile {
    #[serde(default)]
    defaults: TargetFields,
    targets: Vec<TargetEntry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetEntry {
    url: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(flatten)]
    fields: TargetFields,
}

/// What a target (or the defaults) may set besides its URL and name.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetFields {
    #[serde(default)]
    profiles: Option<Vec<String>>,
    #[serde(default)]
    prompt: Option<String>,
    /// `acts`, `none`, `discover` or a behaviour map file (relative to the targets file).
    #[serde(default)]
    behaviors: Option<String>,
    #[serde(default)]
    rpc_url: Option<String>,
    #[serde(default)]
    allow_hosts: Option<Vec<String>>,
    /// Header name → the name of the environment variable holding its value.
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    /// The second caller's headers (tenant isolation checks), the same way.
    #[serde(default)]
    header_b: Option<BTreeMap<String, String>>,
    /// Free-form labels, copied to the index (a team, a tier, the faults a fleet agent commits).
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
}

impl TargetFields {
    fn or(self, d: &TargetFields) -> TargetFields {
        TargetFields {
            profiles: self.profiles.or_else(|| d.profiles.clone()),
            prompt: self.prompt.or_else(|| d.prompt.clone()),
            behaviors: self.behaviors.or_else(|| d.behaviors.clone()),
            rpc_url: self.rpc_url.or_else(|| d.rpc_url.clone()),
            allow_hosts: self.allow_hosts.or_else(|| d.allow_hosts.clone()),
            headers: self.headers.or_else(|| d.headers.clone()),
            header_b: self.header_b.or_else(|| d.header_b.clone()),
            labels: self.labels.or_else(|| d.labels.clone()),
        }
    }
}

/// Where the behaviours of a target's checks come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BehaviorSource {
    /// Not said: the command line's `--behaviors`, else discovery.
    Unset,
    Discover,
    Acts,
    None,
    Map(PathBuf),
}

/// One agent to check, as the file says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Unique within the file; safe as a folder name.
    pub name: String,
    pub url: String,
    pub profiles: Option<Vec<String>>,
    pub prompt: Option<String>,
    pub behaviors: BehaviorSource,
    pub rpc_url: Option<String>,
    pub allow_hosts: Vec<String>,
    /// Header name → environment variable name.
    pub headers: BTreeMap<String, String>,
    pub header_b: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
}

/// A targets file that cannot be used; the message names the file and the entry.
#[derive(Debug, thiserror::Error)]
pub enum TargetsError {
    #[error("--targets {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("--targets {path}: {reason}")]
    Invalid { path: String, reason: String },
}

/// A credential a target names that the environment does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the environment variable {var} (the value of {header} for this agent) is not set")]
pub struct MissingVariable {
    pub var: String,
    pub header: String,
}

impl Target {
    /// The headers with their values read from `env` (a missing variable is this target's error).
    pub fn resolve_headers(
        which: &BTreeMap<String, String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<(String, String)>, MissingVariable> {
        which
            .iter()
            .map(|(header, var)| match env(var).filter(|v| !v.is_empty()) {
                Some(v) => Ok((header.clone(), v)),
                None => Err(MissingVariable { var: var.clone(), header: header.clone() }),
            })
            .collect()
    }
}

/// Reads a targets file (YAML, or JSON, which YAML reads too).
pub fn load(path: &Path) -> Result<Vec<Target>, TargetsError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TargetsError::Read { path: shown.clone(), source })?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse(&text, base).map_err(|reason| TargetsError::Invalid { path: shown, reason })
}

/// Parses the text of a targets file; relative behaviour map paths are taken from `base`.
pub fn parse(text: &str, base: &Path) -> Result<Vec<Target>, String> {
    let file: TargetsFile = serde_norway::from_str(text).map_err(|e| e.to_string())?;
    if file.targets.is_empty() {
        return Err("lists no targets".into());
    }
    if file.targets.len() > MAX_TARGETS {
        return Err(format!(
            "lists {} targets, more than {MAX_TARGETS}: split it, or run it in shards",
            file.targets.len()
        ));
    }
    let mut used: BTreeSet<String> = BTreeSet::new();
    // Names given in the file are kept as they are; a name derived from a URL gives way to them.
    let given: BTreeSet<String> = file.targets.iter().filter_map(|t| t.name.clone()).collect();
    let mut out = Vec::with_capacity(file.targets.len());
    for (i, entry) in file.targets.into_iter().enumerate() {
        let at = |why: String| format!("target #{} ({}): {why}", i + 1, entry.url);
        let url = reqwest::Url::parse(&entry.url).map_err(|e| at(format!("not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(at("the URL must be http or https".into()));
        }
        let name = match &entry.name {
            Some(n) => {
                check_name(n).map_err(&at)?;
                if !used.insert(n.clone()) {
                    return Err(at(format!("the name {n:?} is used twice")));
                }
                n.clone()
            }
            None => {
                let stem = name_from_url(&url);
                let mut name = stem.clone();
                let mut k = 2;
                while given.contains(&name) || used.contains(&name) {
                    name = format!("{stem}-{k}");
                    k += 1;
                }
                used.insert(name.clone());
                name
            }
        };
        let f = entry.fields.or(&file.defaults);
        let behaviors = match f.behaviors.as_deref() {
            None => BehaviorSource::Unset,
            Some("discover") => BehaviorSource::Discover,
            Some("acts") => BehaviorSource::Acts,
            Some("none") => BehaviorSource::None,
            Some(file) => BehaviorSource::Map(base.join(file)),
        };
        for (h, var) in f.headers.iter().chain(f.header_b.iter()).flatten() {
            if reqwest::header::HeaderName::from_bytes(h.as_bytes()).is_err() {
                return Err(at(format!("{h:?} is not a header name")));
            }
            // A value where a variable name belongs is a secret written into the file.
            if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(at(format!(
                    "header {h}: give the name of an environment variable that holds the value, not the value"
                )));
            }
        }
        out.push(Target {
            name,
            url: entry.url,
            profiles: f.profiles,
            prompt: f.prompt,
            behaviors,
            rpc_url: f.rpc_url,
            allow_hosts: f.allow_hosts.unwrap_or_default(),
            headers: f.headers.unwrap_or_default(),
            header_b: f.header_b.unwrap_or_default(),
            labels: f.labels.unwrap_or_default(),
        });
    }
    Ok(out)
}

/// A name names a folder: letters, digits, `.`, `_` and `-`, not starting with `.`.
fn check_name(n: &str) -> Result<(), String> {
    let ok = !n.is_empty()
        && n.len() <= MAX_NAME
        && !n.starts_with('.')
        && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!("the name {n:?} must be 1 to {MAX_NAME} letters, digits, '.', '_' or '-', not starting with '.'"))
    }
}

/// `https://agents.example.com:8443/a/b/` → `agents.example.com-8443-a-b`.
fn name_from_url(url: &reqwest::Url) -> String {
    let mut raw = url.host_str().unwrap_or("agent").to_owned();
    if let Some(p) = url.port() {
        raw.push_str(&format!("-{p}"));
    }
    for seg in url.path().split('/').filter(|s| !s.is_empty() && *s != ".well-known" && *s != "agent-card.json") {
        raw.push('-');
        raw.push_str(seg);
    }
    let mut name: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect();
    name = name.trim_start_matches('.').chars().take(MAX_NAME).collect();
    if name.is_empty() { "agent".into() } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: BTreeMap<String, String> = vars.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        move |k| vars.get(k).cloned()
    }

    #[test]
    fn defaults_apply_where_a_target_is_silent_and_names_are_made_unique() {
        let text = r#"
defaults:
  behaviors: acts
  headers: {Authorization: REG_TOKEN}
targets:
  - url: http://127.0.0.1:8080/agents/a
  - url: http://127.0.0.1:8080/agents/a/
    behaviors: maps/a.yaml
  - name: 127.0.0.1-8080-agents-a
    url: https://other.example/x
    headers: {}
    labels: {team: blue}
"#;
        let t = parse(text, Path::new("/reg")).unwrap();
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["127.0.0.1-8080-agents-a-2", "127.0.0.1-8080-agents-a-3", "127.0.0.1-8080-agents-a"]);
        assert_eq!(t[0].behaviors, BehaviorSource::Acts);
        assert_eq!(t[1].behaviors, BehaviorSource::Map(PathBuf::from("/reg/maps/a.yaml")));
        assert_eq!(t[0].headers.get("Authorization").map(String::as_str), Some("REG_TOKEN"));
        assert!(t[2].headers.is_empty());
        assert_eq!(t[2].labels.get("team").map(String::as_str), Some("blue"));
    }

    #[test]
    fn a_secret_written_into_the_file_or_a_bad_entry_is_refused_with_its_place() {
        let secret = "targets:\n  - url: http://a.example\n    headers: {Authorization: 'Bearer abc.def'}\n";
        let e = parse(secret, Path::new(".")).unwrap_err();
        assert!(e.contains("target #1") && e.contains("environment variable"), "{e}");
        assert!(!e.contains("abc.def"), "the value is not echoed: {e}");
        for (text, want) in [
            ("targets: []\n", "lists no targets"),
            ("targets:\n  - url: ftp://a.example\n", "http or https"),
            ("targets:\n  - url: http://a.example\n    name: ../up\n", "must be 1 to"),
            ("targets:\n  - {url: 'http://a', name: x}\n  - {url: 'http://b', name: x}\n", "used twice"),
            ("targets:\n  - url: http://a.example\n    colour: red\n", "unknown field"),
        ] {
            let e = parse(text, Path::new(".")).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn a_missing_variable_is_the_targets_own_error_naming_it() {
        let which: BTreeMap<String, String> = [("Authorization".to_owned(), "TOK".to_owned())].into();
        assert_eq!(
            Target::resolve_headers(&which, env(&[("TOK", "Bearer s")])).unwrap(),
            [("Authorization".to_owned(), "Bearer s".to_owned())]
        );
        let e = Target::resolve_headers(&which, env(&[])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the environment variable TOK (the value of Authorization for this agent) is not set"
        );
    }
}

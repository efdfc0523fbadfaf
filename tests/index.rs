//! The index of a registry run: `index.json` against `reports/index.schema.json`, `junit.xml` with one
//! suite per agent, and `report merge` of two shard outputs giving the index of the whole registry.

use std::path::{Path, PathBuf};
use std::process::Command;

use a2a_conform::report::index::{
    AgentStatus, INDEX_SCHEMA_VERSION, Index, IndexError, Shard, merge, read_index, write_index,
};
use serde_json::{Value, json};

#[path = "common/registry.rs"]
mod registry;
#[path = "common/sample.rs"]
mod sample;
#[path = "common/schema.rs"]
mod schema;

const BIN: &str = env!("CARGO_BIN_EXE_a2a-conform");

fn temp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("index-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn validate(value: &Value) -> Result<(), String> {
    let errors = schema::violations_of(&schema::compile_file("reports/index.schema.json"), value);
    if errors.is_empty() { Ok(()) } else { Err(errors.join("\n")) }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The whole registry written into one folder, as one unsharded run would.
fn whole(out: &Path) -> Index {
    let [a, b] = registry::shards();
    let mut entries = registry::write_agents(out, &a);
    entries.extend(registry::write_agents(out, &b));
    let index = Index::build(entries, None);
    write_index(out, &index).unwrap();
    index
}

#[test]
fn a_written_index_matches_its_schema() {
    let out = temp("schema");
    let index = whole(&out);
    let value = read_json(&out.join("index.json"));
    validate(&value).unwrap_or_else(|e| panic!("{e}\n{}", serde_json::to_string_pretty(&value).unwrap()));
    assert_eq!(read_index(&out).unwrap(), index);
    let sharded = Index::build(index.agents.clone(), Some(Shard { index: 2, count: 3 }));
    validate(&serde_json::to_value(&sharded).unwrap()).unwrap();
    validate(&serde_json::to_value(Index::build(vec![], None)).unwrap()).unwrap();
}

#[test]
fn the_schema_is_versioned_like_the_index_and_rejects_what_we_never_write() {
    let s = read_json(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/reports/index.schema.json")));
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert!(s["$id"].as_str().unwrap().ends_with(&format!(":{INDEX_SCHEMA_VERSION}")), "{}", s["$id"]);
    assert_eq!(s["properties"]["schema_version"]["const"], INDEX_SCHEMA_VERSION);

    let out = temp("schema-rejects");
    let good = serde_json::to_value(whole(&out)).unwrap();
    let delta = good["agents"].as_array().unwrap().iter().position(|a| a["name"] == "delta").unwrap();
    let mut cases: Vec<(&str, Value)> = Vec::new();
    let mut edit = |what: &'static str, f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        cases.push((what, v));
    };
    edit("an unknown member", &|v| v["extra"] = json!(1));
    edit("an unknown status", &|v| v["agents"][0]["status"] = json!("ok"));
    edit("an exit code that is not the status's", &|v| v["agents"][0]["exit_code"] = json!(0));
    edit("an error agent without its error", &|v| {
        v["agents"][delta].as_object_mut().unwrap().remove("error");
    });
    edit("a path for a name", &|v| v["agents"][0]["name"] = json!("../alpha"));
    edit("a link that is no report", &|v| v["agents"][0]["report"] = json!("javascript:alert(1)"));
    edit("a level missing from the counts", &|v| {
        v["agents"][0]["counts"].as_object_mut().unwrap().remove("info");
    });
    edit("another version", &|v| v["schema_version"] = json!("2"));
    edit("no summary", &|v| {
        v.as_object_mut().unwrap().remove("summary");
    });
    for (what, v) in cases {
        assert!(validate(&v).is_err(), "the schema accepts {what}");
    }
}

#[test]
fn entries_say_how_each_agent_ended() {
    let out = temp("entries");
    let index = whole(&out);
    let status = |name: &str| index.agent(name).unwrap().status;
    assert_eq!(status("alpha"), AgentStatus::NonConformant);
    assert_eq!(status("bravo"), AgentStatus::Conformant);
    assert_eq!(status("charlie"), AgentStatus::Inconclusive);
    assert_eq!(status("delta"), AgentStatus::Error);
    let alpha = index.agent("alpha").unwrap();
    assert_eq!(alpha.report.as_deref(), Some("alpha/report.html"));
    assert_eq!(index.agent("bravo").unwrap().report.as_deref(), Some("bravo/report.json"));
    assert_eq!(alpha.causes[0].root, "CORE-SEND-001");
    assert!(alpha.failing.contains(&"CORE-HOSTILE-001".to_owned()));
    assert!(!alpha.failing.contains(&"EXT-RESUME-001".to_owned()), "unscored");
    let echo = index.agent("echo").unwrap();
    assert_eq!((echo.runs, echo.flaky.len()), (2, 1));
    assert_eq!(echo.flaky[0].id, "CORE-CT-002");
    assert_eq!(index.summary.flaky_agents, 1);
    // The MUST checks failing on alpha and echo come first, by id; CORE-CT-002 warned on alpha
    // only (echo's last run passed it).
    let top: Vec<(&str, usize)> = index.requirements.iter().map(|r| (r.id.as_str(), r.agent_count)).collect();
    assert_eq!(top, [("CORE-HOSTILE-001", 2), ("CORE-SEND-001", 2), ("CORE-CT-002", 1)]);
    assert_eq!(index.requirements[1].agents, ["alpha", "echo"]);
}

#[test]
fn junit_has_a_suite_per_agent() {
    let out = temp("junit");
    let index = whole(&out);
    let xml = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    let suites: Vec<&str> = xml
        .match_indices("<testsuite name=\"")
        .map(|(i, m)| &xml[i + m.len()..])
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert_eq!(suites, ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]);
    // alpha's suite holds every check of its report, one case each.
    let alpha = sample::report_on(41241, "run-a", "task-a");
    let at = xml.find("<testsuite name=\"alpha\"").unwrap();
    let alpha_xml = &xml[at..at + xml[at..].find("</testsuite>").unwrap()];
    assert_eq!(alpha_xml.matches("<testcase ").count(), alpha.results.len());
    assert!(alpha_xml.contains(&format!("tests=\"{}\"", alpha.results.len())));
    // delta could not be run: one errored case that says why, escaped.
    let at = xml.find("<testsuite name=\"delta\"").unwrap();
    let delta_xml = &xml[at..at + xml[at..].find("</testsuite>").unwrap()];
    assert_eq!(delta_xml.matches("<testcase ").count(), 1);
    assert!(delta_xml.contains("errors=\"1\""), "{delta_xml}");
    assert!(delta_xml.contains("environment variable DELTA_URL is not set"), "{delta_xml}");
    assert!(!xml.contains("<script>"), "unescaped");
    assert_eq!(index.agents.len(), 6);
}

#[test]
fn merged_shards_give_the_index_of_the_whole_registry() {
    let whole_dir = temp("merge-whole");
    let all = whole(&whole_dir);

    let root = temp("merge");
    let [a, b] = registry::shards();
    let dirs = [root.join("shard-1"), root.join("shard-2")];
    for (k, (dir, agents)) in dirs.iter().zip([a, b]).enumerate() {
        let entries = registry::write_agents(dir, &agents);
        write_index(dir, &Index::build(entries, Some(Shard { index: k as u32 + 1, count: 2 }))).unwrap();
    }
    let out = root.join("merged");
    let run = Command::new(BIN)
        .args(["report", "merge"])
        .args(&dirs)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("6 agent(s)"), "{stderr}");

    let merged = read_index(&out).unwrap();
    assert_eq!(merged.shard, None);
    assert_eq!(merged.comparable(), all.comparable());
    validate(&read_json(&out.join("index.json"))).unwrap();
    for agent in &all.agents {
        let (from, to) = (whole_dir.join(&agent.name), out.join(&agent.name));
        for file in ["report.json", "report.html"] {
            assert_eq!(from.join(file).exists(), to.join(file).exists(), "{}/{file}", agent.name);
            if from.join(file).exists() {
                assert_eq!(std::fs::read(from.join(file)).unwrap(), std::fs::read(to.join(file)).unwrap());
            }
        }
        if let Some(link) = &agent.report {
            assert!(out.join(link).is_file(), "{link}");
        }
    }
    assert!(out.join("index.html").is_file() && out.join("junit.xml").is_file());
    let xml = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert_eq!(xml.matches("<testsuite ").count(), 6);

    // Merging into one of the shards leaves its folders where they are.
    let into = merge(&dirs, &dirs[0]).unwrap();
    assert_eq!(into.comparable(), all.comparable());
    assert!(dirs[0].join("bravo/report.json").is_file());
}

#[test]
fn an_agent_in_two_shards_is_refused() {
    let root = temp("merge-dup");
    let [a, _] = registry::shards();
    let dirs = [root.join("one"), root.join("two")];
    for dir in &dirs {
        let entries = registry::write_agents(dir, &a);
        write_index(dir, &Index::build(entries, None)).unwrap();
    }
    let out = root.join("merged");
    match merge(&dirs, &out) {
        Err(IndexError::Duplicate { name, .. }) => assert_eq!(name, "alpha"),
        other => panic!("{other:?}"),
    }
    assert!(!out.join("index.json").exists(), "nothing written");

    let run = Command::new(BIN).args(["report", "merge"]).args(&dirs).arg("--out").arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("agent \"alpha\" is in two shards"), "{stderr}");

    // A folder without an index is an error too, and says which.
    let run =
        Command::new(BIN).args(["report", "merge"]).arg(root.join("nowhere")).arg("--out").arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nowhere/index.json"), "{stderr}");
}

#[test]
fn a_missing_shard_is_warned_about() {
    let root = temp("merge-missing");
    let [a, _] = registry::shards();
    let dir = root.join("shard-1");
    let entries = registry::write_agents(&dir, &a);
    write_index(&dir, &Index::build(entries, Some(Shard { index: 1, count: 3 }))).unwrap();
    let run =
        Command::new(BIN).args(["report", "merge"]).arg(&dir).arg("--out").arg(root.join("out")).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("shard(s) 2, 3 of 3 not given"), "{stderr}");
}

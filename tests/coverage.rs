//! The traceability mapping stays honest: `suites/requirements.json` holds the 70 sentences of the
//! spec digest's MUST checklist in order, every check id it names is a built-in check
//! (`suites/server/*.json`, `suites/kit.json`), and a sentence is either tested or says why not.

use std::collections::BTreeSet;

use a2a_conform::commands::coverage::{Requirements, builtin_checks, to_text};

#[test]
fn every_id_named_is_a_built_in_check() {
    let req = Requirements::builtin().expect("suites/requirements.json parses");
    let checks = builtin_checks().expect("the built-in suites load");
    let known: BTreeSet<String> = checks.keys().cloned().collect();
    let problems = req.problems(&known);
    assert!(problems.is_empty(), "suites/requirements.json:\n  {}", problems.join("\n  "));
}

#[test]
fn the_checklist_has_its_seventy_sentences() {
    let req = Requirements::builtin().unwrap();
    let numbers: Vec<u32> = req.items.iter().map(|i| i.number).collect();
    assert_eq!(numbers, (1..=70).collect::<Vec<_>>());
    for item in &req.items {
        assert!(["S", "C", "C+S"].contains(&item.party.as_str()), "item {}: party {:?}", item.number, item.party);
        assert!(!item.text.trim().is_empty(), "item {} has no text", item.number);
    }
    // Client duties are the kit's own, so they are never graded against an agent.
    for item in req.items.iter().filter(|i| i.party == "C") {
        assert!(item.checks.is_empty() && item.untestable.is_some(), "client duty {} needs a reason", item.number);
    }
}

#[test]
fn the_mapping_catches_what_it_must() {
    let mut req = Requirements::builtin().unwrap();
    let known: BTreeSet<String> = builtin_checks().unwrap().keys().cloned().collect();
    req.items[0].checks.push("NO-SUCH-CHECK-001".into());
    req.items[1].untestable = Some("both".into());
    req.items.swap(2, 3);
    let problems = req.problems(&known).join("\n");
    assert!(problems.contains("item 1 names NO-SUCH-CHECK-001, which is not a built-in check"), "{problems}");
    assert!(problems.contains("item 2 names checks and is also marked untestable"), "{problems}");
    assert!(problems.contains("item 4 is at position 3"), "{problems}");
}

#[test]
fn the_text_lists_each_sentence_and_the_gaps() {
    let req = Requirements::builtin().unwrap();
    let checks = builtin_checks().unwrap();
    let text = to_text(&req, &checks);
    for item in &req.items {
        assert!(text.contains(&format!("{:>3}. {}: ", item.number, item.party)), "item {} missing", item.number);
    }
    let gaps: Vec<String> = req.untested().iter().map(u32::to_string).collect();
    assert!(text.contains(&format!("Not tested by any check ({}): {}", gaps.len(), gaps.join(", "))), "{text}");
}

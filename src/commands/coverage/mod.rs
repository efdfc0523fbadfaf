//! `a2a-conform coverage`: traceability from the spec's words to the checks. For every normative
//! sentence of the A2A 1.0 specification, its proto and JSON-RPC 2.0 (`crate::spec`), the built-in
//! checks that quote it; for every sentence no check quotes, whether a server check could test it
//! (a gap) or why not (`suites/coverage.json`); and the share of testable sentences covered. With
//! `--freedoms`, the other side: which choices the spec leaves to an agent the freedom catalogue
//! shows.

mod freedoms;
mod reasons;
mod render;
mod trace;

pub use freedoms::{FreedomCoverage, Shown};
pub use reasons::{BUILTIN, Class, Entry, FILE, Pointer, Reasons, Rule, SentenceId, all_sentences};
pub use render::{gaps_json, gaps_text, to_json, to_text};
pub use trace::{Coverage, GapGroup, Status, Tally, Traced};

use super::report::print_stdout;
use crate::suite::loader;
use crate::suite::model::Test;

/// Every built-in check: the server suites and the kit's synthetic checks.
pub fn builtin_tests() -> Result<Vec<Test>, String> {
    let mut suites = loader::builtin().map_err(|e| e.to_string())?;
    suites.push(loader::kit().map_err(|e| e.to_string())?);
    Ok(suites
        .into_iter()
        .flat_map(|s| s.doc.suites)
        .flat_map(|s| s.tests)
        .map(std::sync::Arc::unwrap_or_clone)
        .collect())
}

/// The coverage of the built-in checks under the built-in reasons file.
pub fn builtin() -> anyhow::Result<Coverage> {
    let reasons = Reasons::builtin().map_err(|e| anyhow::anyhow!(e))?;
    let tests = builtin_tests().map_err(|e| anyhow::anyhow!(e))?;
    Ok(Coverage::compute(&tests, &reasons))
}

/// `a2a-conform coverage [--json] [--gaps | --freedoms]`: exit 0, or 1 when the reasons file or the
/// freedom catalogue has problems (printed on stderr, and under `problems` in the JSON).
pub fn run_command(json: bool, gaps: bool, freedoms: bool) -> anyhow::Result<i32> {
    let c = builtin()?;
    if freedoms {
        let catalogue = crate::server::freedoms::FreedomCatalogue::builtin()?;
        let f = FreedomCoverage::compute(&c, &catalogue);
        let text = if json { format!("{}\n", serde_json::to_string_pretty(&f.to_json())?) } else { f.to_text() };
        print_stdout(&text)?;
        for p in &f.problems {
            eprintln!("error: mock-peer/freedoms: {p}");
        }
        return Ok(i32::from(!f.problems.is_empty()));
    }
    let text = match (json, gaps) {
        (true, true) => format!("{}\n", serde_json::to_string_pretty(&gaps_json(&c))?),
        (true, false) => format!("{}\n", serde_json::to_string_pretty(&to_json(&c))?),
        (false, true) => gaps_text(&c),
        (false, false) => to_text(&c),
    };
    print_stdout(&text)?;
    for p in &c.problems {
        eprintln!("error: {FILE}: {p}");
    }
    Ok(i32::from(!c.problems.is_empty()))
}

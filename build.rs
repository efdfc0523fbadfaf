//! Embeds the data directories (scenarios, suites, faults) so that an installed binary
//! needs no files: each becomes a `&[(name, contents)]` slice in OUT_DIR.

use std::{env, fs, path::Path};

fn embed(dir: &str, out_name: &str) {
    println!("cargo:rerun-if-changed={dir}");
    let root = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join(dir);
    let mut files: Vec<_> =
        fs::read_dir(&root).map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect()).unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    let mut code = String::from("&[\n");
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        code.push_str(&format!("    ({name:?}, include_str!({:?})),\n", path.display().to_string()));
    }
    code.push(']');
    fs::write(Path::new(&env::var("OUT_DIR").unwrap()).join(out_name), code).unwrap();
}

fn main() {
    embed("mock-peer/scenarios", "builtin_scenarios.rs");
    embed("suites/server", "builtin_suites.rs");
    embed("suites/client", "builtin_client_suites.rs");
    embed("mock-peer/faults", "builtin_faults.rs");
    embed("mock-peer/client-scenarios", "builtin_client_scenarios.rs");
    embed("mock-peer/freedoms", "builtin_freedoms.rs");
}

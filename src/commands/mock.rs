//! `a2a-conform mock` and `a2a-conform faults list`: serve the mock peer until interrupted, and
//! show the violations it can be told to commit.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context as _;

use crate::server::faults::FaultCatalogue;
use crate::server::fleet::{Fleet, FleetConfig};
use crate::server::freedoms::FreedomCatalogue;
use crate::server::{Binding, MockConfig, MockServer};

/// Serves until Ctrl-C. The first line printed, `listening on URL`, is the contract scripts rely on.
pub async fn serve(config: MockConfig, addr: SocketAddr) -> anyhow::Result<i32> {
    let server = MockServer::bind(config, addr).await.with_context(|| format!("starting the mock peer on {addr}"))?;
    // A reader that took the first line and left (`mock | head -1`) does not stop the mock.
    let bindings = server.app().config.bindings;
    let mut lines = format!("listening on {}\nagent card: {}", server.url(), server.card_url());
    if bindings.serves(Binding::JsonRpc) {
        lines.push_str(&format!("\nJSON-RPC:   {}", server.rpc_url()));
    }
    if bindings.serves(Binding::HttpJson) {
        lines.push_str(&format!("\nHTTP+JSON:  {}", server.rest_url()));
    }
    let _ = writeln!(std::io::stdout(), "{lines}");
    std::io::stdout().flush().ok();
    server.run_until_ctrl_c().await;
    Ok(0)
}

/// Serves a fleet until Ctrl-C: the targets file first (so that it names the real port), then the
/// same first line as a single mock, `listening on URL` (the fleet's base URL), and a one-line
/// summary on stderr.
pub async fn serve_fleet(config: FleetConfig, addr: SocketAddr, targets_out: Option<&Path>) -> anyhow::Result<i32> {
    let started = std::time::Instant::now();
    let fleet = Fleet::bind(config, addr).await.with_context(|| format!("starting the mock fleet on {addr}"))?;
    let elapsed = started.elapsed();
    if let Some(path) = targets_out {
        std::fs::write(path, fleet.targets_yaml()).with_context(|| format!("writing {}", path.display()))?;
    }
    let _ = writeln!(std::io::stdout(), "listening on {}", fleet.url());
    std::io::stdout().flush().ok();
    let agents = fleet.agents();
    let faithful = agents.iter().filter(|a| a.faults.is_empty()).count();
    let (first, last) = (&agents[0].name, &agents[agents.len() - 1].name);
    eprintln!(
        "fleet: {} agents at {}/agents/{first} .. {last} (seed {}): {faithful} faithful, {} with faults; up in {} ms{}",
        agents.len(),
        fleet.url(),
        fleet.seed(),
        agents.len() - faithful,
        elapsed.as_millis(),
        targets_out.map(|p| format!("; targets in {}", p.display())).unwrap_or_default(),
    );
    fleet.run_until_ctrl_c().await;
    Ok(0)
}

/// The limits table: flag, value in force, default, what is bounded, what happens beyond.
pub fn print_limits(config: &MockConfig) -> anyhow::Result<i32> {
    let rows = config.limits.table();
    let w = rows.iter().map(|r| r.flag.len()).max().unwrap_or(0);
    println!("{:<w$}  {:>10}  {:>10}  {:<52}  beyond it", "flag", "value", "default", "bounds");
    for r in rows {
        println!("{:<w$}  {:>10}  {:>10}  {:<52}  {}", r.flag, r.value, r.default, r.what, r.beyond);
    }
    Ok(0)
}

/// One line per fault: id, the section it violates, what the mock does wrong, and the bindings it
/// is committed on when not every one.
pub fn list_faults() -> anyhow::Result<i32> {
    let catalogue = FaultCatalogue::builtin()?;
    for f in catalogue.all() {
        let on = match f.bindings.as_slice() {
            [] => String::new(),
            some => format!(" [{}]", some.iter().map(|b| b.name()).collect::<Vec<_>>().join(", ")),
        };
        println!("{:<40} §{:<8} {}{on}", f.id, f.section, f.description);
    }
    println!("{} faults", catalogue.len());
    Ok(0)
}

/// One line per freedom: id, the section of the sentence that allows it, what the agent does.
pub fn list_freedoms() -> anyhow::Result<i32> {
    let catalogue = FreedomCatalogue::builtin()?;
    for f in catalogue.all() {
        let on = match f.bindings.as_slice() {
            [] => String::new(),
            some => format!(" [{}]", some.iter().map(|b| b.name()).collect::<Vec<_>>().join(", ")),
        };
        println!("{:<40} §{:<8} {}{on}", f.id, f.section, f.description);
    }
    println!("{} freedoms", catalogue.len());
    Ok(0)
}

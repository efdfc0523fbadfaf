//! The `a2a-conform` binary.

use clap::Parser as _;

#[tokio::main]
async fn main() {
    let cli = a2a_conform::cli::Cli::parse();
    // The mock logs what it does; a check run keeps stderr for findings unless RUST_LOG says otherwise;
    // the selftest's mocks commit faults on purpose, so their warnings are expected noise there.
    let default_filter = match cli.command {
        a2a_conform::cli::Command::Mock(_) => "a2a_conform=info",
        a2a_conform::cli::Command::Selftest(_) => "a2a_conform=error",
        _ => "a2a_conform=warn",
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default_filter.into()),
        )
        .init();
    match a2a_conform::cli::run(cli).await {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(2);
        }
    }
}

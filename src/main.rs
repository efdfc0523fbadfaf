//! The `a2a-conform` binary.

use clap::Parser as _;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "a2a_conform=info".into()),
        )
        .init();
    let cli = a2a_conform::cli::Cli::parse();
    match a2a_conform::cli::run(cli).await {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(2);
        }
    }
}

//! `a2a-conform card`: fetch, lint, sign and verify agent cards (§8, §8.4).
//!
//! `fetch` prints a card; `lint` grades its 1.0 structure (and names a 0.3 card); `sign` adds an
//! ES256 signature over the §8.4.1 payload; `verify` checks every signature against the keys given.
//! Exit status: 0 (fine), 1 (the card has a problem, printed with its reason), 2 (usage or I/O).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::card::jws::{self, Outcome, SignOptions};
use crate::card::{jcs, keys};
use crate::client::discovery::{discover, v03_fields};
use crate::client::http::{ClientConfig, HttpClient};
use crate::commands::client::parse_headers;
use crate::suite::schema;

#[derive(Debug, Clone, clap::Subcommand)]
pub enum CardCommand {
    /// Fetch an agent card (base URL or card URL) and print it.
    Fetch {
        /// Agent base URL or card URL.
        url: String,
    },
    /// Check a card's A2A 1.0 structure against the spec's JSON Schema; a 0.3 card is named as such.
    Lint {
        /// Card file, or agent base URL / card URL.
        target: String,
    },
    /// Sign a card file (ES256 over the §8.4.1 payload) and print the signed card. Earlier
    /// signatures are kept, so signing twice with two keys supports key rotation.
    Sign {
        /// Card file (JSON).
        file: PathBuf,
        /// Private key: PEM (PKCS #8 or SEC1) or a JWK with `d`, on curve P-256.
        #[arg(long)]
        key: PathBuf,
        /// Key id written to the protected header.
        #[arg(long)]
        kid: String,
        /// JWK Set URL written to the protected header (`jku`).
        #[arg(long)]
        jku: Option<String>,
        /// Write the signed card here instead of stdout.
        #[arg(long, short = 'o')]
        out: Option<PathBuf>,
    },
    /// Verify a card's signatures (§8.4.3) against a public key or a JWK Set.
    Verify {
        /// Card file, or agent base URL / card URL.
        target: String,
        /// A public or private key: PEM or JWK (a JWK's `kid` must match the signature's).
        #[arg(long, required_unless_present = "jwks", conflicts_with = "jwks")]
        key: Option<PathBuf>,
        /// A JWK Set: each signature is checked with the key of its `kid`.
        #[arg(long)]
        jwks: Option<PathBuf>,
    },
}

/// Options shared by the card commands that fetch.
#[derive(Debug, Clone, clap::Args)]
pub struct CardOptions {
    /// Request header `Name: value` for fetching (repeatable); values are never printed.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
}

/// A failure with its exit status.
struct Stop(i32, String);

/// A card from a file or a URL.
async fn load(target: &str, opts: &CardOptions) -> Result<Value, Stop> {
    if target.starts_with("http://") || target.starts_with("https://") {
        let headers = parse_headers(&opts.headers).map_err(|e| Stop(2, e))?;
        let config =
            ClientConfig { timeout: Duration::from_secs(opts.timeout.max(1)), headers, ..ClientConfig::default() };
        let client = HttpClient::new(config).map_err(|e| Stop(2, e.to_string()))?;
        let redactor = client.redactor().clone();
        let d = discover(&client, target).await.map_err(|e| Stop(2, redactor.redact(&e.to_string())))?;
        // What the agent served, parsed strictly (a duplicate member has no canonical form).
        let text = String::from_utf8_lossy(&d.exchange.body).into_owned();
        return jcs::parse_strict(&text).map_err(|e| Stop(1, format!("{}: {e}", d.card_url)));
    }
    let text = std::fs::read_to_string(target).map_err(|e| Stop(2, format!("{target}: {e}")))?;
    jcs::parse_strict(&text).map_err(|e| Stop(1, format!("{target}: {e}")))
}

/// Runs a card command; prints to the process's stdout and stderr.
pub async fn run(cmd: CardCommand, opts: CardOptions) -> i32 {
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    run_with_output(cmd, opts, &mut out, &mut err).await
}

/// [`run`] writing to the given sinks.
pub async fn run_with_output(
    cmd: CardCommand,
    opts: CardOptions,
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
) -> i32 {
    let r = match cmd {
        CardCommand::Fetch { url } => fetch(&url, &opts, out).await,
        CardCommand::Lint { target } => lint(&target, &opts, out).await,
        CardCommand::Sign { file, key, kid, jku, out: dest } => sign(&file, &key, kid, jku, dest.as_deref(), out),
        CardCommand::Verify { target, key, jwks } => verify(&target, key.or(jwks).as_deref(), &opts, out).await,
    };
    match r {
        Ok(code) => code,
        Err(Stop(code, why)) => {
            let _ = writeln!(err, "{}: {why}", if code == 1 { "fail" } else { "error" });
            code
        }
    }
}

fn print(out: &mut (dyn Write + Send), s: &str) -> Result<(), Stop> {
    writeln!(out, "{s}").map_err(|e| Stop(2, e.to_string()))
}

async fn fetch(url: &str, opts: &CardOptions, out: &mut (dyn Write + Send)) -> Result<i32, Stop> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(Stop(2, format!("{url} is not an http(s) URL")));
    }
    let card = load(url, opts).await?;
    print(out, &serde_json::to_string_pretty(&card).unwrap_or_default())?;
    Ok(0)
}

/// The structural problems of a card: a 0.3 card is named as such (and not graded as 1.0);
/// otherwise each schema violation and each malformed signature header.
pub fn lint_problems(card: &Value) -> Vec<String> {
    let legacy = v03_fields(card);
    let has_interfaces = card.get("supportedInterfaces").is_some();
    if !legacy.is_empty() && !has_interfaces {
        return vec![format!(
            "this is an A2A 0.3 card (top-level {}; no supportedInterfaces): A2A 1.0 moved them into supportedInterfaces[]",
            legacy.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
        )];
    }
    let mut problems: Vec<String> = schema::violations("AgentCard", card)
        .into_iter()
        .map(|(at, why)| format!("{}: {why}", if at.is_empty() { "(root)" } else { &at }))
        .collect();
    for f in legacy {
        problems.push(format!("/{f}: a 0.3 top-level field, removed in 1.0"));
    }
    for c in jws::verify(card, &[]).signatures {
        if let Outcome::Malformed { reason } = &c.outcome {
            problems.push(format!("/signatures/{}: {reason}", c.index));
        }
    }
    problems
}

async fn lint(target: &str, opts: &CardOptions, out: &mut (dyn Write + Send)) -> Result<i32, Stop> {
    let card = load(target, opts).await?;
    let problems = lint_problems(&card);
    if problems.is_empty() {
        print(out, "ok: an A2A 1.0 agent card")?;
        return Ok(0);
    }
    for p in &problems {
        print(out, &format!("problem: {p}"))?;
    }
    Err(Stop(1, format!("{} problem(s)", problems.len())))
}

fn sign(
    file: &Path,
    key: &Path,
    kid: String,
    jku: Option<String>,
    dest: Option<&Path>,
    out: &mut (dyn Write + Send),
) -> Result<i32, Stop> {
    let text = std::fs::read_to_string(file).map_err(|e| Stop(2, format!("{}: {e}", file.display())))?;
    let card = jcs::parse_strict(&text).map_err(|e| Stop(2, format!("{}: {e}", file.display())))?;
    let key = keys::read_private_key(key).map_err(|e| Stop(2, e.to_string()))?;
    let signed =
        jws::sign(&card, &key, &SignOptions { jku, ..SignOptions::new(kid) }).map_err(|e| Stop(2, e.to_string()))?;
    let body = serde_json::to_string_pretty(&signed).unwrap_or_default();
    match dest {
        Some(p) => std::fs::write(p, body + "\n").map_err(|e| Stop(2, format!("{}: {e}", p.display())))?,
        None => print(out, &body)?,
    }
    Ok(0)
}

async fn verify(
    target: &str,
    key: Option<&Path>,
    opts: &CardOptions,
    out: &mut (dyn Write + Send),
) -> Result<i32, Stop> {
    let key = key.ok_or_else(|| Stop(2, "give --key or --jwks".into()))?;
    let trusted = keys::read_public_keys(key).map_err(|e| {
        // A key ES256 cannot use is a verdict on the verification, not a typo.
        if e.reason.starts_with("cannot read") { Stop(2, e.to_string()) } else { Stop(1, e.to_string()) }
    })?;
    let card = load(target, opts).await?;
    let verdict = jws::verify(&card, &trusted);
    for c in &verdict.signatures {
        print(out, &c.describe())?;
    }
    match verdict.reason() {
        None => {
            print(out, "ok: the card's signatures verify")?;
            Ok(0)
        }
        Some(why) => Err(Stop(1, why)),
    }
}

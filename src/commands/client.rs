//! The mock client on the command line: `a2a-conform client <command>`.
//!
//! Every command discovers the card from the URL, selects the JSON-RPC 1.x interface, echoes its
//! tenant and prints JSON on stdout: the JSON-RPC response, or one line per stream event (the
//! event's `data` JSON). Exit status: 0 on a result, 1 on a JSON-RPC error response (still
//! printed), 2 on usage and transport errors (message on stderr). User-supplied header values are
//! redacted from everything printed.

use std::io::Write;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::client::discovery::{Discovery, discover};
use crate::client::http::{ClientConfig, HttpClient, HttpRequest};
use crate::client::redact::Redactor;
use crate::client::rpc::{RpcOutcome, new_id, rpc_outcome, rpc_request, rpc_stream_request, text_message, with_tenant};

#[derive(Debug, Clone, clap::Subcommand)]
pub enum ClientCommand {
    /// Fetch and print the agent card (URL: base URL or card URL ending in .json).
    Card {
        /// Agent base URL or card URL.
        url: String,
    },
    /// SendMessage with one text part.
    Send {
        /// Agent base URL or card URL.
        url: String,
        /// Message text.
        text: String,
        /// Continue this task.
        #[arg(long)]
        task_id: Option<String>,
        /// Use this context.
        #[arg(long)]
        context_id: Option<String>,
        /// Ask for an immediate answer (`configuration.returnImmediately`).
        #[arg(long)]
        return_immediately: bool,
        /// `configuration.historyLength`.
        #[arg(long)]
        history_length: Option<i64>,
    },
    /// SendStreamingMessage with one text part; prints one line per event.
    Stream {
        /// Agent base URL or card URL.
        url: String,
        /// Message text.
        text: String,
        /// Continue this task.
        #[arg(long)]
        task_id: Option<String>,
        /// Use this context.
        #[arg(long)]
        context_id: Option<String>,
        /// `configuration.historyLength`.
        #[arg(long)]
        history_length: Option<i64>,
    },
    /// GetTask.
    Get {
        /// Agent base URL or card URL.
        url: String,
        /// Task id.
        id: String,
        /// `historyLength`.
        #[arg(long)]
        history_length: Option<i64>,
    },
    /// ListTasks.
    List {
        /// Agent base URL or card URL.
        url: String,
        /// Only tasks of this context.
        #[arg(long)]
        context_id: Option<String>,
        /// Only tasks in this state (`TASK_STATE_WORKING`, or short: `working`, `input-required`).
        #[arg(long)]
        status: Option<String>,
        /// Page size.
        #[arg(long)]
        page_size: Option<i64>,
        /// Page token from a previous answer.
        #[arg(long)]
        page_token: Option<String>,
    },
    /// CancelTask.
    Cancel {
        /// Agent base URL or card URL.
        url: String,
        /// Task id.
        id: String,
    },
    /// SubscribeToTask; prints one line per event.
    Subscribe {
        /// Agent base URL or card URL.
        url: String,
        /// Task id.
        id: String,
        /// Resume after this event id (`Last-Event-ID` header).
        #[arg(long)]
        last_event_id: Option<String>,
    },
}

#[derive(Debug, Clone, clap::Args)]
pub struct ClientOptions {
    /// Extra request header `Name: value`, sent on every request (repeatable). Values are
    /// treated as secrets and never printed.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
    /// Most response-body bytes read.
    #[arg(long, default_value_t = 4 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Call a streaming operation even when the card does not declare `capabilities.streaming`
    /// (by default `stream` then sends SendMessage and `subscribe` refuses, §3.3.4).
    #[arg(long)]
    pub force: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions { headers: Vec::new(), timeout: 10, max_body_bytes: 4 * 1024 * 1024, force: false }
    }
}

/// Parses `Name: value` header arguments. Errors never quote the value.
pub fn parse_headers(args: &[String]) -> Result<Vec<(String, String)>, String> {
    args.iter()
        .enumerate()
        .map(|(i, arg)| {
            let n = i + 1;
            let (name, value) =
                arg.split_once(':').ok_or_else(|| format!("--header #{n}: expected \"Name: value\" (no ':' found)"))?;
            let name = name.trim();
            if name.is_empty() || reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(format!("--header #{n}: invalid header name"));
            }
            let value = value.trim();
            if reqwest::header::HeaderValue::from_str(value).is_err() {
                return Err(format!("--header #{n} ({name}): invalid header value"));
            }
            Ok((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// `working` → `TASK_STATE_WORKING`; full names pass through.
fn task_state(s: &str) -> String {
    if s.starts_with("TASK_STATE_") {
        s.to_owned()
    } else {
        format!("TASK_STATE_{}", s.replace('-', "_").to_ascii_uppercase())
    }
}

fn target(cmd: &ClientCommand) -> &str {
    match cmd {
        ClientCommand::Card { url }
        | ClientCommand::Send { url, .. }
        | ClientCommand::Stream { url, .. }
        | ClientCommand::Get { url, .. }
        | ClientCommand::List { url, .. }
        | ClientCommand::Cancel { url, .. }
        | ClientCommand::Subscribe { url, .. } => url,
    }
}

/// Method, params and whether it streams.
fn call(cmd: &ClientCommand) -> Option<(&'static str, Value, bool)> {
    let opt = |m: &mut Map<String, Value>, k: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(k.to_owned(), v);
        }
    };
    let send_params = |text: &str, task: &Option<String>, ctx: &Option<String>, ri: bool, hl: Option<i64>| {
        let mut p = json!({ "message": text_message(text, task.as_deref(), ctx.as_deref()) });
        let mut conf = Map::new();
        if ri {
            conf.insert("returnImmediately".into(), Value::Bool(true));
        }
        opt(&mut conf, "historyLength", hl.map(Value::from));
        if !conf.is_empty() {
            p["configuration"] = Value::Object(conf);
        }
        p
    };
    Some(match cmd {
        ClientCommand::Card { .. } => return None,
        ClientCommand::Send { text, task_id, context_id, return_immediately, history_length, .. } => {
            ("SendMessage", send_params(text, task_id, context_id, *return_immediately, *history_length), false)
        }
        ClientCommand::Stream { text, task_id, context_id, history_length, .. } => {
            ("SendStreamingMessage", send_params(text, task_id, context_id, false, *history_length), true)
        }
        ClientCommand::Get { id, history_length, .. } => {
            let mut p = Map::new();
            p.insert("id".into(), Value::from(id.as_str()));
            opt(&mut p, "historyLength", history_length.map(Value::from));
            ("GetTask", Value::Object(p), false)
        }
        ClientCommand::List { context_id, status, page_size, page_token, .. } => {
            let mut p = Map::new();
            opt(&mut p, "contextId", context_id.as_deref().map(Value::from));
            opt(&mut p, "status", status.as_deref().map(|s| Value::from(task_state(s))));
            opt(&mut p, "pageSize", page_size.map(Value::from));
            opt(&mut p, "pageToken", page_token.as_deref().map(Value::from));
            ("ListTasks", Value::Object(p), false)
        }
        ClientCommand::Cancel { id, .. } => ("CancelTask", json!({ "id": id }), false),
        ClientCommand::Subscribe { id, .. } => ("SubscribeToTask", json!({ "id": id }), true),
    })
}

/// Runs a command, printing to the process's stdout and stderr. Returns the exit status.
pub async fn run(cmd: ClientCommand, opts: ClientOptions) -> anyhow::Result<i32> {
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    run_with_output(cmd, opts, &mut out, &mut err).await
}

/// Like [`run`], writing to the given sinks.
pub async fn run_with_output(
    cmd: ClientCommand,
    opts: ClientOptions,
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
) -> anyhow::Result<i32> {
    let headers = match parse_headers(&opts.headers) {
        Ok(h) => h,
        Err(e) => {
            writeln!(err, "error: {e}")?;
            return Ok(2);
        }
    };
    let config = ClientConfig {
        timeout: Duration::from_secs(opts.timeout.max(1)),
        max_body_bytes: opts.max_body_bytes.max(1),
        headers,
        ..ClientConfig::default()
    };
    let client = match HttpClient::new(config) {
        Ok(c) => c,
        Err(e) => {
            writeln!(err, "error: {e}")?;
            return Ok(2);
        }
    };
    let r = client.redactor().clone();
    let discovery = match discover(&client, target(&cmd)).await {
        Ok(d) => d,
        Err(e) => {
            writeln!(err, "error: {}", r.redact(&e.to_string()))?;
            return Ok(2);
        }
    };
    for note in &discovery.notes {
        writeln!(err, "note: {}", r.redact(note))?;
    }
    let Some((mut method, params, mut streaming)) = call(&cmd) else {
        if discovery.interface.is_some() {
            selected(&discovery, err, &r)?;
        }
        print_json(out, &r.redact_value(&discovery.card), true)?;
        return Ok(0);
    };
    let Some(iface) = selected(&discovery, err, &r)? else {
        return Ok(2);
    };
    // §3.3.4: "Clients SHOULD validate capability support by examining the Agent Card before
    // attempting operations that require optional capabilities."
    let declares_streaming = discovery.card.pointer("/capabilities/streaming") == Some(&Value::Bool(true));
    if streaming && !declares_streaming && !opts.force {
        if method != "SendStreamingMessage" {
            writeln!(
                err,
                "error: the card does not declare capabilities.streaming, so {method} is not offered (--force sends it anyway)"
            )?;
            return Ok(2);
        }
        writeln!(err, "note: the card does not declare capabilities.streaming: sending SendMessage instead")?;
        (method, streaming) = ("SendMessage", false);
    }
    let params = with_tenant(params, iface.0.as_deref().unwrap_or(""));
    let id = new_id();
    if streaming {
        let mut req = rpc_stream_request(&iface.1, &id, method, Some(params));
        if let ClientCommand::Subscribe { last_event_id: Some(last), .. } = &cmd {
            req = req.header("Last-Event-ID", last.as_str());
        }
        run_stream(&client, req, (&iface.1, iface.0.as_deref().unwrap_or("")), out, err, &r).await
    } else {
        let req = rpc_request(&iface.1, &id, method, Some(params));
        match client.send(req).await {
            Ok(x) => {
                if x.truncated {
                    writeln!(err, "warning: response cut at {} bytes", client.config().max_body_bytes)?;
                }
                print_response(x.status, x.json(), out, err, &r)
            }
            Err(e) => {
                writeln!(err, "error: {e}")?;
                Ok(2)
            }
        }
    }
}

/// Reports the selected interface on stderr: `(tenant, url)`.
fn selected(
    d: &Discovery,
    err: &mut (dyn Write + Send),
    r: &Redactor,
) -> anyhow::Result<Option<(Option<String>, String)>> {
    let Some(i) = &d.interface else {
        writeln!(err, "error: no usable JSON-RPC 1.x interface on the card at {}", r.redact(&d.card_url))?;
        return Ok(None);
    };
    let tenant = match &i.tenant {
        Some(t) => format!(", tenant {}", r.redact(t)),
        None => String::new(),
    };
    writeln!(err, "interface: {} ({} {}){tenant}", r.redact(&i.url), i.binding, i.version)?;
    Ok(Some((i.tenant.clone(), i.url.clone())))
}

fn print_json(out: &mut (dyn Write + Send), v: &Value, pretty: bool) -> anyhow::Result<()> {
    let text = if pretty { serde_json::to_string_pretty(v)? } else { serde_json::to_string(v)? };
    writeln!(out, "{text}")?;
    Ok(())
}

/// Prints a JSON-RPC response and maps it to an exit status.
fn print_response(
    status: u16,
    body: Result<Value, String>,
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
    r: &Redactor,
) -> anyhow::Result<i32> {
    let v = match body {
        Ok(v) => v,
        Err(e) => {
            writeln!(err, "error: HTTP {status}: {}", r.redact(&e))?;
            return Ok(2);
        }
    };
    print_json(out, &r.redact_value(&v), true)?;
    Ok(match rpc_outcome(&v) {
        RpcOutcome::Result(_) => 0,
        RpcOutcome::Error { .. } => 1,
        RpcOutcome::Malformed(m) => {
            writeln!(err, "error: malformed JSON-RPC response: {m}")?;
            2
        }
    })
}

async fn run_stream(
    client: &HttpClient,
    req: HttpRequest,
    (rpc_url, tenant): (&str, &str),
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
    r: &Redactor,
) -> anyhow::Result<i32> {
    let mut req = req;
    let mut code = 0;
    let mut resumes = 0;
    loop {
        let x = match client.send_streaming(req).await {
            Ok(x) => x,
            Err(e) => {
                writeln!(err, "error: {e}")?;
                return Ok(2);
            }
        };
        if !x.is_sse() {
            return print_response(x.status, x.as_exchange().json(), out, err, r);
        }
        let mut seen = Seen::default();
        for ev in &x.events {
            if ev.id.is_some() {
                seen.last_id = ev.id.clone();
            }
            match serde_json::from_str::<Value>(&ev.data) {
                Ok(v) => {
                    print_json(out, &r.redact_value(&v), false)?;
                    match rpc_outcome(&v) {
                        RpcOutcome::Result(result) => seen.saw(&result),
                        RpcOutcome::Error { .. } => code = code.max(1),
                        RpcOutcome::Malformed(m) => {
                            writeln!(err, "warning: malformed JSON-RPC event: {m}")?;
                            code = 2;
                        }
                    }
                }
                Err(e) => {
                    print_json(out, &Value::from(r.redact(&ev.data)), false)?;
                    writeln!(err, "warning: event data is not JSON: {e}")?;
                    code = 2;
                }
            }
        }
        if let Err(e) = &x.end {
            writeln!(err, "error: stream ended abnormally: {e}")?;
            return Ok(2);
        }
        // A stream that closed while its task still works was dropped on the way: the task runs
        // on, and SubscribeToTask (from the last event id, when the agent gave ids) picks it up
        // rather than a second send starting the work again.
        let (Some(task), Some(state)) = (&seen.task, &seen.state) else { return Ok(code) };
        if !matches!(state.as_str(), "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING") || resumes >= MAX_RESUMES {
            return Ok(code);
        }
        resumes += 1;
        let after = seen.last_id.as_deref().map(|id| format!(" after event {id}")).unwrap_or_default();
        writeln!(err, "note: the stream closed while task {task} was {state}; subscribing to it again{after}")?;
        let params = with_tenant(json!({ "id": task }), tenant);
        req = rpc_stream_request(rpc_url, &new_id(), "SubscribeToTask", Some(params));
        if let Some(id) = &seen.last_id {
            req = req.header("Last-Event-ID", id.as_str());
        }
    }
}

/// How many times `client stream` subscribes again to a task whose stream closed while it worked.
const MAX_RESUMES: usize = 3;

/// What a stream said of its task: its id, the last state it reported, the last SSE id.
#[derive(Debug, Default)]
struct Seen {
    task: Option<String>,
    state: Option<String>,
    last_id: Option<String>,
}

impl Seen {
    fn saw(&mut self, result: &Value) {
        let (task, state) = if let Some(t) = result.get("task") {
            (t.get("id"), t.pointer("/status/state"))
        } else if let Some(u) = result.get("statusUpdate") {
            (u.get("taskId"), u.pointer("/status/state"))
        } else {
            (result.pointer("/artifactUpdate/taskId"), None)
        };
        if let Some(t) = task.and_then(Value::as_str) {
            self.task = Some(t.to_owned());
        }
        if let Some(s) = state.and_then(Value::as_str) {
            self.state = Some(s.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn run_is_send() {
        fn check<T: Send>(_: &T) {}
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let fut = run_with_output(
            ClientCommand::Card { url: "http://a.test".into() },
            ClientOptions::default(),
            &mut o,
            &mut e,
        );
        check(&fut);
        let fut = run(ClientCommand::Card { url: "http://a.test".into() }, ClientOptions::default());
        check(&fut);
    }

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: ClientCommand,
        #[command(flatten)]
        opts: ClientOptions,
    }

    #[test]
    fn parses_commands_and_options() {
        let cli = Cli::try_parse_from([
            "x",
            "-H",
            "Authorization: Bearer abc",
            "--timeout",
            "3",
            "send",
            "http://a.test",
            "hello",
            "--task-id",
            "t1",
            "--return-immediately",
        ])
        .unwrap();
        assert_eq!(cli.opts.timeout, 3);
        assert_eq!(cli.opts.headers, vec!["Authorization: Bearer abc".to_owned()]);
        let (m, p, s) = call(&cli.cmd).unwrap();
        assert_eq!((m, s), ("SendMessage", false));
        assert_eq!(p["message"]["taskId"], "t1");
        assert_eq!(p["configuration"], json!({"returnImmediately": true}));
        let cli = Cli::try_parse_from(["x", "list", "http://a.test", "--status", "input-required", "--page-size", "5"])
            .unwrap();
        let (m, p, _) = call(&cli.cmd).unwrap();
        assert_eq!(m, "ListTasks");
        assert_eq!(p, json!({"status": "TASK_STATE_INPUT_REQUIRED", "pageSize": 5}));
        let cli = Cli::try_parse_from(["x", "subscribe", "http://a.test", "t", "--last-event-id", "4"]).unwrap();
        assert_eq!(call(&cli.cmd).unwrap().0, "SubscribeToTask");
    }

    #[test]
    fn header_errors_never_quote_values() {
        let e = parse_headers(&["Bearer-secret-without-colon".into()]).unwrap_err();
        assert!(!e.contains("secret"), "{e}");
        let e = parse_headers(&["Bad Name: s3cret".into()]).unwrap_err();
        assert!(!e.contains("s3cret"), "{e}");
        assert_eq!(parse_headers(&["X-Key:  v ".into()]).unwrap(), vec![("X-Key".into(), "v".into())]);
    }
}

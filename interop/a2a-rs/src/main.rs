//! An echo agent served by a2a-rs-server 1.0.26 (pinned in Cargo.toml), for the interop corpus.
//!
//! a2a-rs-server is a Rust A2A server framework: `A2aServer::new(handler)` serves the card at
//! `/.well-known/agent-card.json`, JSON-RPC at `POST /v1/rpc` and the HTTP+JSON binding under
//! `/v1`, with its own in-memory task store, push-config store and webhook delivery. An agent is a
//! `MessageHandler`: `handle_message` answers a message with a Task or a Message; the server
//! stores the Task and streams it. Later progress is the agent's to publish: it updates the task
//! store and broadcasts the event on the server's channel (the pattern of the crate's own
//! streaming example). This file is only that: a handler, its card, and a main. The wire format,
//! routing, stores and delivery are the framework's, used as they come; nothing here speaks A2A
//! by hand, and nothing works around what the framework does (interop/README.md, "The echo
//! agents", says which rows of the corpus's table exist here and why).
//!
//! Keywords in the user's text (whole words, case-insensitive, first match in this order):
//!
//!   please wait  Task WORKING; about 3 s later a text artifact and COMPLETED. CancelTask
//!                meanwhile ends it CANCELED (the framework's own cancel; nothing overwrites it)
//!   need input   Task INPUT_REQUIRED with an agent message; the next message on the task gets a
//!                text artifact echoing it and COMPLETED
//!   just reply   a Message ("You said: ..."), no Task
//!   chunks       Task SUBMITTED, then WORKING, one text artifact (`chunked`) in two chunks
//!                (append false / lastChunk false, then append true / lastChunk true), COMPLETED
//!   reject       Task REJECTED with an agent message
//!   fail         Task FAILED with an agent message
//!   data         Task SUBMITTED, WORKING, a data artifact {"echo": <text>}, COMPLETED
//!   file         Task SUBMITTED, WORKING, a raw artifact echo.txt (text/plain), COMPLETED
//!   (otherwise)  Task SUBMITTED, WORKING, a text artifact echoing the text, COMPLETED with the
//!                agent message "Done."
//!
//! Usage: a2a-rs-echo --port PORT (0 picks a free port). The first line on stdout is
//! `listening on http://127.0.0.1:PORT` once the server accepts connections. Stops on SIGTERM
//! (the framework's graceful shutdown, cut short after a second: it would wait for open streams).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use a2a_rs_core::{
    now_iso8601, AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill, Artifact,
    Message, Part, Role, SendMessageResponse, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent, PROTOCOL_VERSION,
};
use a2a_rs_server::{A2aServer, AuthContext, HandlerResult, MessageHandler, TaskStore};
use async_trait::async_trait;
use base64::Engine as _;
use tokio::sync::broadcast;
use uuid::Uuid;

const HOST: &str = "127.0.0.1";
const LONG_RUN: Duration = Duration::from_secs(3);

/// The server's event channel, known only once the server is built (after the handler).
type Events = Arc<OnceLock<broadcast::Sender<StreamResponse>>>;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Behaviour {
    Long,
    Input,
    Reply,
    Chunks,
    Reject,
    Fail,
    Data,
    File,
    Echo,
}

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn has_phrase(words: &[String], phrase: &str) -> bool {
    let want: Vec<&str> = phrase.split(' ').collect();
    words.windows(want.len()).any(|w| w.iter().zip(&want).all(|(a, b)| a == b))
}

fn behaviour_for(text: &str) -> Behaviour {
    let w = words(text);
    let table = [
        ("please wait", Behaviour::Long),
        ("need input", Behaviour::Input),
        ("just reply", Behaviour::Reply),
        ("chunks", Behaviour::Chunks),
        ("reject", Behaviour::Reject),
        ("fail", Behaviour::Fail),
        ("data", Behaviour::Data),
        ("file", Behaviour::File),
    ];
    table
        .iter()
        .find(|(phrase, _)| has_phrase(&w, phrase))
        .map(|(_, b)| *b)
        .unwrap_or(Behaviour::Echo)
}

fn agent_message(text: &str, task_id: Option<&str>, context_id: &str) -> Message {
    Message {
        kind: "message".to_owned(),
        message_id: Uuid::new_v4().to_string(),
        context_id: Some(context_id.to_owned()),
        task_id: task_id.map(str::to_owned),
        role: Role::Agent,
        parts: vec![Part::text(text)],
        metadata: None,
        extensions: vec![],
        reference_task_ids: None,
    }
}

fn status(state: TaskState, message: Option<Message>) -> TaskStatus {
    TaskStatus { state, message, timestamp: Some(now_iso8601()) }
}

fn text_artifact(id: &str, text: &str) -> Artifact {
    Artifact {
        artifact_id: id.to_owned(),
        name: Some("echo".to_owned()),
        description: None,
        parts: vec![Part::text(text)],
        metadata: None,
        extensions: vec![],
    }
}

struct EchoAgent {
    port: u16,
    store: TaskStore,
    events: Events,
}

/// The background half of a task: each step updates the stored task (unless it already ended,
/// e.g. canceled) and broadcasts the matching event, as the framework's streaming example does.
#[derive(Clone)]
struct Work {
    store: TaskStore,
    events: broadcast::Sender<StreamResponse>,
    task_id: String,
    context_id: String,
}

impl Work {
    /// Waits until the server has stored the task the handler returned (it does so after
    /// `handle_message` returns, and only then opens its stream), so that no step is lost.
    async fn started(&self) -> bool {
        for _ in 0..500 {
            if self.store.get(&self.task_id).await.is_some() {
                tokio::time::sleep(Duration::from_millis(30)).await;
                return true;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        false
    }

    async fn set_status(&self, state: TaskState, message: Option<Message>) -> bool {
        let new = status(state, message);
        let done = self
            .store
            .update_flexible(&self.task_id, |t| {
                if t.status.state.is_terminal() {
                    return Err(());
                }
                if let Some(m) = &new.message {
                    t.history.get_or_insert_with(Vec::new).push(m.clone());
                }
                t.status = new.clone();
                Ok(())
            })
            .await;
        if !matches!(done, Some(Ok(_))) {
            return false;
        }
        let _ = self.events.send(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            kind: "status-update".to_owned(),
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status: new,
            metadata: None,
        }));
        true
    }

    async fn artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) -> bool {
        let event = artifact.clone();
        let done = self
            .store
            .update_flexible(&self.task_id, |t| {
                if t.status.state.is_terminal() {
                    return Err(());
                }
                let list = t.artifacts.get_or_insert_with(Vec::new);
                match list.iter_mut().find(|a| a.artifact_id == artifact.artifact_id) {
                    Some(a) if append => a.parts.extend(artifact.parts.clone()),
                    Some(a) => *a = artifact.clone(),
                    None => list.push(artifact.clone()),
                }
                Ok(())
            })
            .await;
        if !matches!(done, Some(Ok(_))) {
            return false;
        }
        let _ = self.events.send(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            kind: "artifact-update".to_owned(),
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            artifact: event,
            append: Some(append),
            last_chunk: Some(last_chunk),
            metadata: None,
        }));
        true
    }

    fn done_message(&self) -> Message {
        agent_message("Done.", Some(&self.task_id), &self.context_id)
    }

    async fn run(self, behaviour: Behaviour, text: String) {
        if !self.started().await {
            return;
        }
        if behaviour == Behaviour::Long {
            tokio::time::sleep(LONG_RUN).await;
        } else if !self.set_status(TaskState::Working, None).await {
            return;
        }
        let artifact = match behaviour {
            Behaviour::Chunks => {
                let first = text_artifact("chunked", "chunk-1 ");
                if !self.artifact(first, false, false).await {
                    return;
                }
                text_artifact("chunked", "chunk-2")
            }
            Behaviour::Data => Artifact {
                parts: vec![Part::data(serde_json::json!({ "echo": text }))],
                ..text_artifact(&Uuid::new_v4().to_string(), "")
            },
            Behaviour::File => Artifact {
                parts: vec![Part::file_bytes_named(
                    base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
                    "text/plain",
                    "echo.txt",
                )],
                ..text_artifact(&Uuid::new_v4().to_string(), "")
            },
            _ => text_artifact(&Uuid::new_v4().to_string(), &text),
        };
        let append = behaviour == Behaviour::Chunks;
        if !self.artifact(artifact, append, true).await {
            return;
        }
        let done = self.done_message();
        self.set_status(TaskState::Completed, Some(done)).await;
    }
}

impl EchoAgent {
    fn events(&self) -> broadcast::Sender<StreamResponse> {
        self.events.get().expect("the event channel is set before the server runs").clone()
    }

    /// A message on an existing task (the framework has checked that it exists and has not
    /// ended): a task waiting for input gets the echo and completes; a running one takes the
    /// message into its history and runs on.
    async fn follow_up(&self, mut message: Message, text: &str, task_id: &str) -> SendMessageResponse {
        let mut task = self.store.get(task_id).await.expect("the framework checked that the task exists");
        message.context_id = Some(task.context_id.clone());
        message.task_id = Some(task.id.clone());
        task.history.get_or_insert_with(Vec::new).push(message);
        if task.status.state == TaskState::InputRequired {
            let artifact = text_artifact(&Uuid::new_v4().to_string(), text);
            task.artifacts.get_or_insert_with(Vec::new).push(artifact);
            let done = agent_message("Done.", Some(&task.id), &task.context_id);
            task.history.get_or_insert_with(Vec::new).push(done.clone());
            task.status = status(TaskState::Completed, Some(done));
        }
        SendMessageResponse::Task(task)
    }
}

#[async_trait]
impl MessageHandler for EchoAgent {
    async fn handle_message(
        &self,
        message: Message,
        _auth: Option<AuthContext>,
    ) -> HandlerResult<SendMessageResponse> {
        let text = message.parts.iter().filter_map(|p| p.as_text()).collect::<Vec<_>>().join(" ");
        if let Some(task_id) = message.task_id.clone() {
            if self.store.get_flexible(&task_id).await.is_some() {
                return Ok(self.follow_up(message, &text, &task_id).await);
            }
        }
        let behaviour = behaviour_for(&text);
        let context_id = message.context_id.clone().unwrap_or_else(|| Uuid::new_v4().to_string());
        if behaviour == Behaviour::Reply {
            return Ok(SendMessageResponse::Message(agent_message(
                &format!("You said: {text}"),
                None,
                &context_id,
            )));
        }
        let task_id = Uuid::new_v4().to_string();
        let mut user = message;
        user.task_id = Some(task_id.clone());
        user.context_id = Some(context_id.clone());
        let mut history = vec![user];
        let said = |t: &str| agent_message(t, Some(&task_id), &context_id);
        let state = match behaviour {
            Behaviour::Input => {
                let ask = said("I need more input: what should I echo?");
                history.push(ask.clone());
                status(TaskState::InputRequired, Some(ask))
            }
            Behaviour::Reject => {
                let no = said(&format!("Rejected: {text}"));
                history.push(no.clone());
                status(TaskState::Rejected, Some(no))
            }
            Behaviour::Fail => {
                let failed = said(&format!("Failed: {text}"));
                history.push(failed.clone());
                status(TaskState::Failed, Some(failed))
            }
            Behaviour::Long => status(TaskState::Working, None),
            _ => status(TaskState::Submitted, None),
        };
        let running = !state.state.is_terminal() && state.state != TaskState::InputRequired;
        let task = Task {
            kind: "task".to_owned(),
            id: task_id.clone(),
            context_id: context_id.clone(),
            status: state,
            artifacts: None,
            history: Some(history),
            metadata: None,
        };
        if running {
            let work = Work { store: self.store.clone(), events: self.events(), task_id, context_id };
            tokio::spawn(work.run(behaviour, text));
        }
        Ok(SendMessageResponse::Task(task))
    }

    fn agent_card(&self, _base_url: &str) -> AgentCard {
        // The framework would fill empty interface URLs with `localhost`; the card names the
        // address the agent listens on, and both bindings the framework serves.
        let base = format!("http://{HOST}:{}", self.port);
        let interface = |url: String, binding: &str| AgentInterface {
            url,
            protocol_binding: binding.to_owned(),
            protocol_version: PROTOCOL_VERSION.to_owned(),
            tenant: None,
        };
        AgentCard {
            name: "interop echo agent (a2a-rs-server)".to_owned(),
            description: "Echoes what it is told; keywords in the text choose other behaviours \
                          (see the skill's examples)."
                .to_owned(),
            supported_interfaces: vec![
                interface(format!("{base}/v1/rpc"), "JSONRPC"),
                interface(format!("{base}/v1"), "HTTP+JSON"),
            ],
            provider: Some(AgentProvider {
                organization: "a2a-conform interop corpus".to_owned(),
                url: "https://example.com/a2a-conform".to_owned(),
            }),
            version: "1.0.0".to_owned(),
            capabilities: AgentCapabilities {
                streaming: Some(true),
                push_notifications: Some(true),
                extended_agent_card: Some(false),
                ..Default::default()
            },
            default_input_modes: vec!["text/plain".to_owned()],
            default_output_modes: vec!["text/plain".to_owned(), "application/json".to_owned()],
            skills: vec![AgentSkill {
                id: "echo".to_owned(),
                name: "Echo".to_owned(),
                description: "Echoes the text back as an artifact; \"please wait\", \"need input\", \
                              \"just reply\", \"chunks\", \"reject\", \"fail\", \"data\" and \"file\" \
                              choose other behaviours."
                    .to_owned(),
                tags: vec!["echo".to_owned(), "test".to_owned()],
                examples: ["hello", "please wait", "need input", "just reply", "chunks", "reject", "fail", "data", "file"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn supports_streaming(&self) -> bool {
        true
    }
}

fn port_from_args() -> Result<u16, String> {
    let mut args = std::env::args().skip(1);
    let mut port = 0u16;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a value")?;
                port = value.parse().map_err(|_| format!("--port: not a port: {value}"))?;
            }
            "-h" | "--help" => {
                println!("usage: a2a-rs-echo [--port PORT]   (0, the default, picks a free port)");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if port == 0 {
        // The card carries the URL, and the framework binds inside `run()`: so the port is
        // chosen first (bound and released at once).
        let probe = std::net::TcpListener::bind((HOST, 0)).map_err(|e| e.to_string())?;
        port = probe.local_addr().map_err(|e| e.to_string())?.port();
    }
    Ok(port)
}

#[tokio::main]
async fn main() {
    let port = match port_from_args() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("a2a-rs-echo: {e}");
            std::process::exit(2);
        }
    };
    let store = TaskStore::new();
    let events: Events = Arc::new(OnceLock::new());
    let agent = EchoAgent { port, store: store.clone(), events: events.clone() };
    let server = A2aServer::new(agent)
        .task_store(store)
        .bind(&format!("{HOST}:{port}"))
        .expect("a valid address");
    let _ = events.set(server.get_event_sender());
    // The framework's graceful shutdown waits for every open connection, and a stream of a task that
    // waits for input never ends: on SIGTERM or Ctrl-C give it a second, then exit.
    tokio::spawn(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("a SIGTERM handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        std::process::exit(0);
    });
    tokio::spawn(async move {
        for _ in 0..1000 {
            if tokio::net::TcpStream::connect((HOST, port)).await.is_ok() {
                println!("listening on http://{HOST}:{port}");
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        eprintln!("a2a-rs-echo: the server did not accept connections within 10 s");
        std::process::exit(1);
    });
    if let Err(e) = server.run().await {
        eprintln!("a2a-rs-echo: {e:#}");
        std::process::exit(1);
    }
}

//! The webhook receiver the kit hosts for push checks: records every POST per path, bounded in
//! requests and bytes, and answers 200 so that a conformant agent's delivery succeeds.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::serve::ListenerExt as _;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// Most requests kept per path.
const MAX_PER_PATH: usize = 256;
/// Largest body kept; longer bodies are cut (and answered 413).
const MAX_BODY: usize = 1024 * 1024;

/// One delivery as received.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Request headers, names lower-case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Delivery {
    /// A header value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

type Inbox = Arc<Mutex<HashMap<String, Vec<Delivery>>>>;

#[derive(Debug)]
pub struct WebhookReceiver {
    public_base: String,
    inbox: Inbox,
    /// Dropped with the receiver, it ends the receiver's thread (and with its runtime every
    /// connection still open).
    _stop: oneshot::Sender<()>,
}

async fn receive(State(inbox): State<Inbox>, Path(id): Path<String>, headers: HeaderMap, body: Body) -> StatusCode {
    let (body, status) = match to_bytes(body, MAX_BODY).await {
        Ok(b) => (b.to_vec(), StatusCode::OK),
        Err(_) => (Vec::new(), StatusCode::PAYLOAD_TOO_LARGE),
    };
    let headers = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let mut map = inbox.lock().unwrap_or_else(|p| p.into_inner());
    let list = map.entry(id).or_default();
    if list.len() < MAX_PER_PATH {
        list.push(Delivery { headers, body });
    }
    status
}

impl WebhookReceiver {
    /// Listens on `bind`; `public_url` is the base URL agents should use (default: the bound address).
    ///
    /// The receiver runs on a thread and runtime of its own: an agent that gives up on a webhook
    /// that does not answer in time (the embedded mock after 2 s in the kill matrix) must find it
    /// answering however many checks keep the kit's own runtime busy, or the kit would blame the
    /// agent for a notification its receiver was too slow to take.
    pub async fn start(bind: SocketAddr, public_url: Option<String>) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(bind)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let inbox: Inbox = Arc::default();
        let app = Router::new().route("/hook/{id}", post(receive)).with_state(inbox.clone());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new().name("a2a-conform-webhook".into()).spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = TcpListener::from_std(listener) else { return };
                // An agent's small POSTs are answered at once, not after a delayed ACK (Nagle).
                let listener = listener.tap_io(|tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = stopped => {}
                }
            });
            // Dropping the runtime here drops every connection still open.
        })?;
        let public_base =
            public_url.map(|u| u.trim_end_matches('/').to_owned()).unwrap_or_else(|| format!("http://{addr}"));
        Ok(WebhookReceiver { public_base, inbox, _stop: stop })
    }

    /// A fresh receiving URL and its inbox key.
    pub fn new_endpoint(&self) -> (String, String) {
        let id = uuid::Uuid::new_v4().simple().to_string();
        (format!("{}/hook/{id}", self.public_base), id)
    }

    /// What arrived at an endpoint so far.
    pub fn deliveries(&self, id: &str) -> Vec<Delivery> {
        self.inbox.lock().unwrap_or_else(|p| p.into_inner()).get(id).cloned().unwrap_or_default()
    }
}

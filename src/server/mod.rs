//! The reference server ("mock peer"): a spec-exact A2A 1.0 agent over JSON-RPC and HTTP+JSON,
//! with SSE, whose behaviour is scripted by scenario files.

pub mod app;
pub mod binding;
pub mod card;
pub mod client_scenarios;
pub mod config;
pub mod dedup;
pub mod faults;
pub mod fleet;
pub mod freedoms;
pub mod ids;
pub mod methods;
pub mod peer;
pub mod push;
pub mod record;
pub mod rest;
pub mod rpc;
pub mod scenario;
mod service;
pub mod settings;
pub mod ssrf;
pub mod stream;
pub mod tasks;
pub mod validate;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::serve::ListenerExt as _;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use app::{App, MockError};
pub use binding::{Binding, Bindings};
pub use config::{ExtendedCard, MissingVersion, MockConfig, RESUME_EXTENSION_URI, WebhookPolicy};
pub use peer::{Expectation, ExpectationFailure, MockPeer, MockPeerBuilder};
pub use record::RecordedRequest;

use card::{REST_PATH, RPC_PATH, WELL_KNOWN_PATH};

async fn serve_card(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let doc = &app.card;
    let inm = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok());
    let not_modified = match inm {
        Some(tags) => doc.matches_if_none_match(tags),
        None => headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|d| doc.not_modified_since(d)),
    };
    let mut r = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = doc.body.clone().into_response();
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r
    };
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&format!("public, max-age={}", app.config.card_max_age_secs)) {
        h.insert(header::CACHE_CONTROL, v);
    }
    if let Ok(v) = HeaderValue::from_str(&doc.etag) {
        h.insert(header::ETAG, v);
    }
    if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(doc.last_modified)) {
        h.insert(header::LAST_MODIFIED, v);
    }
    r
}

/// The mock's routes, under the configured path prefix: the well-known card, the JSON-RPC endpoint
/// (with or without a trailing slash) and the HTTP+JSON operations (every other path, relative to
/// the prefix), each binding only when served. Usable without a socket through
/// `tower::ServiceExt::oneshot`. A prefix that cannot be served (see
/// [`MockConfig::normalized_prefix`]) is ignored here; [`MockServer::start`] refuses it.
pub fn router(app: Arc<App>) -> Router {
    let prefix = app.config.normalized_prefix().unwrap_or_default();
    let active = Arc::new(faults::layer::FaultLayer::new(
        faults::ActiveFaults(app.config.faults.clone(), app.faults.1.clone()),
        &prefix,
        app.config.bindings,
    ));
    let recording = app.config.record_requests.then(|| record::Recording {
        recorder: app.recorder.clone(),
        max_request_bytes: app.config.limits.max_request_bytes,
    });
    let bindings = app.config.bindings;
    let mut routes = Router::new().route(WELL_KNOWN_PATH, get(serve_card));
    if bindings.serves(Binding::JsonRpc) {
        routes = routes.route(RPC_PATH, post(rpc::endpoint)).route(&format!("{RPC_PATH}/"), post(rpc::endpoint));
    }
    if bindings.serves(Binding::HttpJson) {
        routes = routes.route("/{*operation}", any(rest::endpoint));
    }
    let mut routes = routes.with_state(app);
    if !prefix.is_empty() {
        routes = Router::new().nest(&prefix, routes);
    }
    // A faithful mock pays nothing for the fault machinery.
    if !active.is_empty() {
        routes = routes.layer(axum::middleware::from_fn_with_state(active, faults::layer::commit));
    }
    // Outermost, so that what is recorded is what the client sent, before a fault rewrites it,
    // and every request is, whatever its path (a 404 included).
    match recording {
        Some(rec) => routes.layer(axum::middleware::from_fn_with_state(rec, record::capture)),
        None => routes,
    }
}

/// Serves `service` on every listener until the returned sender fires (or is dropped), then stops
/// accepting connections.
fn spawn_serving(listeners: Vec<TcpListener>, service: Router) -> (oneshot::Sender<()>, JoinHandle<()>) {
    let (tx, rx) = oneshot::channel::<()>();
    let join = tokio::spawn(async move {
        let (stop, _) = tokio::sync::watch::channel(false);
        let servers = listeners.into_iter().map(|listener| {
            let mut stopped = stop.subscribe();
            // Without TCP_NODELAY an SSE event written right after the response head waits for the
            // client's delayed ACK: 40 ms before the first event on Linux loopback.
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let shutdown = async move {
                let _ = stopped.wait_for(|s| *s).await;
            };
            axum::serve(listener, service.clone()).with_graceful_shutdown(shutdown).into_future()
        });
        let servers = futures::future::join_all(servers);
        let signal = async {
            let _ = rx.await;
            let _ = stop.send(true);
        };
        let (_, ended) = tokio::join!(signal, servers);
        for e in ended.into_iter().filter_map(Result::err) {
            tracing::error!("mock server stopped: {e}");
        }
    });
    (tx, join)
}

/// A running mock peer on a local port.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    base_url: String,
    app: Arc<App>,
    shutdown: Option<oneshot::Sender<()>>,
    join: Option<JoinHandle<()>>,
}

impl MockServer {
    /// The ids of the faults whose answer mutations have changed an answer so far.
    pub fn faults_shown(&self) -> std::collections::BTreeSet<String> {
        self.app.faults.1.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Starts a mock on 127.0.0.1 with an OS-chosen port.
    pub async fn start(config: MockConfig) -> Result<Self, MockError> {
        Self::bind(config, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Starts a mock on `addr` (port 0: any free port).
    pub async fn bind(config: MockConfig, addr: SocketAddr) -> Result<Self, MockError> {
        let listener = TcpListener::bind(addr).await.map_err(|source| MockError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| MockError::Bind { addr, source })?;
        let prefix = config.normalized_prefix().map_err(MockError::Config)?;
        let base_url = match &config.public_url {
            Some(u) => format!("{}{prefix}", u.trim_end_matches('/')),
            None => format!("http://{addr}{prefix}"),
        };
        // The interface on another host: 127.0.0.2 where loopback covers 127/8 (Linux), else
        // another port of the same address (another origin all the same).
        let elsewhere = match config.interface_elsewhere {
            false => None,
            true => {
                let alt = SocketAddr::from(([127, 0, 0, 2], 0));
                let l = match TcpListener::bind(alt).await {
                    Ok(l) => l,
                    Err(_) => TcpListener::bind(SocketAddr::new(addr.ip(), 0))
                        .await
                        .map_err(|source| MockError::Bind { addr, source })?,
                };
                Some(l)
            }
        };
        let interface_base = match &elsewhere {
            Some(l) => {
                let a = l.local_addr().map_err(|source| MockError::Bind { addr, source })?;
                format!("http://{a}{prefix}")
            }
            None => base_url.clone(),
        };
        let app = Arc::new(App::new(config, &interface_base)?);
        let listeners = std::iter::once(listener).chain(elsewhere).collect();
        let (tx, join) = spawn_serving(listeners, router(app.clone()));
        Ok(MockServer { addr, base_url, app, shutdown: Some(tx), join: Some(join) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Base URL, e.g. `http://127.0.0.1:PORT` (with the path prefix, if any).
    pub fn url(&self) -> &str {
        &self.base_url
    }

    /// The JSON-RPC endpoint URL advertised on the card.
    pub fn rpc_url(&self) -> String {
        format!("{}{RPC_PATH}", self.base_url)
    }

    /// The HTTP+JSON base URL advertised on the card (the REST paths are relative to it): the base
    /// URL with a trailing slash.
    pub fn rest_url(&self) -> String {
        format!("{}{REST_PATH}", self.base_url)
    }

    pub fn card_url(&self) -> String {
        format!("{}{WELL_KNOWN_PATH}", self.base_url)
    }

    /// The shared state (card, store), for tests and the CLI.
    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    /// Stops accepting connections. Open streams are dropped.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(j) = self.join.take() {
            j.abort();
            let _ = j.await;
        }
    }

    /// Serves until the process is interrupted (Ctrl-C).
    pub async fn run_until_ctrl_c(self) {
        let _ = tokio::signal::ctrl_c().await;
        self.shutdown().await;
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(j) = self.join.take() {
            j.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, to_bytes};
    use axum::http::Request;
    use tower::ServiceExt as _;

    fn app() -> Arc<App> {
        Arc::new(App::new(MockConfig::default(), "http://mock.test").unwrap())
    }

    async fn post_rpc(app: Arc<App>, body: &str) -> serde_json::Value {
        let req = Request::post(RPC_PATH)
            .header("content-type", "application/json")
            .header("a2a-version", "1.0")
            .body(Body::from(body.to_owned()))
            .unwrap();
        let resp = router(app).oneshot(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        serde_json::from_slice(&to_bytes(resp.into_body(), 1 << 20).await.unwrap()).unwrap()
    }

    #[tokio::test]
    async fn card_advertises_the_rpc_url_it_serves() {
        let req = Request::get(WELL_KNOWN_PATH).body(Body::empty()).unwrap();
        let resp = router(app()).oneshot(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let card: serde_json::Value =
            serde_json::from_slice(&to_bytes(resp.into_body(), 1 << 20).await.unwrap()).unwrap();
        assert_eq!(card["supportedInterfaces"][0]["url"], "http://mock.test/rpc");
        assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    }

    /// A mock signing its cards and committing the catalogued fault `id`, and the key to check with.
    fn signed_app(id: &str) -> (Arc<App>, crate::card::PublicKey) {
        let signing = config::CardSigning::new(crate::card::PrivateKey::generate());
        let key = signing.key.public();
        let fault = faults::FaultCatalogue::builtin().unwrap().get(id).unwrap();
        let config = MockConfig {
            signing: Some(signing),
            extended_card: ExtendedCard::Bearer("x".into()),
            faults: vec![fault],
            ..MockConfig::default()
        };
        (Arc::new(App::new(config, "http://mock.test").unwrap()), key)
    }

    async fn served_card(app: Arc<App>) -> serde_json::Value {
        let resp = router(app).oneshot(Request::get(WELL_KNOWN_PATH).body(Body::empty()).unwrap()).await.unwrap();
        serde_json::from_slice(&to_bytes(resp.into_body(), 1 << 20).await.unwrap()).unwrap()
    }

    #[tokio::test]
    async fn a_card_defect_is_signed_and_tampering_after_signing_is_not() {
        use crate::card::jws;
        let (app, key) = signed_app("FAULT-CARD-VERSION-NUMBER");
        let card = served_card(app.clone()).await;
        assert_eq!(card["version"], 1, "the defect is served");
        assert!(jws::verify(&card, std::slice::from_ref(&key)).holds(), "and signed as served");
        assert!(jws::verify(&app.extended_card.as_ref().unwrap().card, &[key]).holds());
        assert_eq!(app.extended_card.as_ref().unwrap().card["version"], env!("CARGO_PKG_VERSION"));

        let (app, key) = signed_app("FAULT-XCARD-LEGACY-SHAPE");
        let x = &app.extended_card.as_ref().unwrap().card;
        assert_eq!(x["url"], "http://127.0.0.1/rpc");
        assert!(jws::verify(x, std::slice::from_ref(&key)).holds());
        assert!(served_card(app.clone()).await.get("url").is_none(), "the public card is not the extended one");

        let (app, key) = signed_app("FAULT-SIG-TAMPERED");
        let card = served_card(app).await;
        assert_eq!(card["description"], "Edited after signing.");
        assert!(!jws::verify(&card, &[key]).holds());
    }

    #[tokio::test]
    async fn unknown_task_is_task_not_found_without_a_socket() {
        let v = post_rpc(app(), r#"{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"missing"}}"#).await;
        assert_eq!(v["id"], "a");
        assert_eq!(v["error"]["code"], -32001);
    }
}

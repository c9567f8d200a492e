//! Paige's localhost server: the only crate that knows HTTP and MCP.
//!
//! `app` builds the axum `Router` over a shared [`paige_core::Core`]:
//! - `GET /health` — open, for liveness checks;
//! - `/mcp` — rmcp Streamable HTTP (2025-11-25 sessions and 2026-07-28 stateless POSTs);
//! - `/ws` — the UI protocol over a WebSocket;
//! - `/api/session` — start, end and read the coaching session without a UI;
//! - `POST /api/token/rotate` — new tokens, kept and in force at once (`paige token rotate`);
//! - `POST /hooks/{event}` — Claude Code hook payloads to the hook engine;
//! - `/`, `/assets/*` — the bundled web UI, when [`Server::with_ui`] adds it;
//!
//! Everything but `/health` requires a per-launch bearer token: the UI token opens every
//! route; the agent token (the one Claude Code's environment holds) opens only `/hooks/*`
//! and `/mcp`, and is refused with 403 everywhere else (`guard.rs`).
//!
//! Every route sits behind the Host/Origin guard (loopback only). Tests drive the router
//! with `oneshot` or over a real socket.

mod blocking;
mod error;
mod guard;
mod health;
mod hooks;
mod instance;
mod listener;
mod mcp;
mod mcp_intents;
mod mcp_tools;
mod memory_api;
mod session_api;
mod token_api;
mod ui;
mod ws;

use std::sync::Arc;

use axum::Router;
use paige_core::Core;
use tokio_util::sync::CancellationToken;

pub use instance::Instance;
pub use listener::ConnectionLimits;
pub use mcp::{McpSessions, PaigeMcp};
pub use ui::{default_ui_dirs, is_ui_build};

/// What the routes share. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub core: Arc<Core>,
    /// The tokens in force; `paige token rotate` replaces them while the server runs.
    tokens: Arc<std::sync::RwLock<Tokens>>,
}

/// The tokens a server answers to.
#[derive(Clone)]
pub(crate) struct Tokens {
    /// Opens every private route.
    pub(crate) ui: Arc<str>,
    /// Opens only `/hooks/*`, `/mcp` and `paige claude`'s routes; `None`: no such token.
    pub(crate) agent: Option<Arc<str>>,
    /// Opens only the routes of `paige session` and `paige memory`; `None`: no such token.
    pub(crate) local: Option<Arc<str>>,
}

impl From<&paige_core::token::Tokens> for Tokens {
    fn from(tokens: &paige_core::token::Tokens) -> Tokens {
        Tokens {
            ui: Arc::from(tokens.ui.expose()),
            agent: Some(Arc::from(tokens.agent.expose())),
            local: Some(Arc::from(tokens.local.expose())),
        }
    }
}

impl AppState {
    pub(crate) fn tokens(&self) -> Tokens {
        self.tokens.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn replace_tokens(&self, tokens: Tokens) {
        *self.tokens.write().unwrap_or_else(|p| p.into_inner()) = tokens;
    }
}

/// The router plus a handle on the MCP sessions, which shutdown closes, and the rules its
/// connections live by.
pub struct Server {
    pub router: Router,
    pub mcp_sessions: McpSessions,
    pub limits: ConnectionLimits,
}

/// Builds the whole HTTP surface. `token` (the UI token) opens every private route; there is
/// no agent token (see [`app_with_agent_token`]).
pub fn app(core: Arc<Core>, token: &str) -> Server {
    build(core, Tokens { ui: Arc::from(token), agent: None, local: None })
}

/// [`app`] with a second, narrower token: `agent_token` opens only `POST /hooks/*`, `/mcp`
/// and `paige claude`'s routes — what Claude Code and its launcher need — and nothing else.
/// It must differ from `token`.
pub fn app_with_agent_token(core: Arc<Core>, token: &str, agent_token: &str) -> Server {
    build(core, Tokens { ui: Arc::from(token), agent: Some(Arc::from(agent_token)), local: None })
}

/// [`app`] with all three of a Paige's tokens: the UI's, the agent's, and the local tools'.
pub fn app_with_tokens(core: Arc<Core>, tokens: &paige_core::token::Tokens) -> Server {
    build(core, Tokens::from(tokens))
}

fn build(core: Arc<Core>, tokens: Tokens) -> Server {
    let state = AppState { core: core.clone(), tokens: Arc::new(std::sync::RwLock::new(tokens)) };
    let limits = ConnectionLimits::from(&core.config().limits);
    let mcp_cancel = core.shutdown_token().child_token();
    let (mcp_service, mcp_sessions) = mcp::service(core, mcp_cancel);
    let private = Router::new()
        .route("/ws", axum::routing::get(ws::upgrade))
        .route("/api/session", axum::routing::get(session_api::show))
        .route("/api/session/start", axum::routing::post(session_api::start))
        .route("/api/session/kickoff", axum::routing::get(session_api::kickoff))
        .route("/api/agent/claim", axum::routing::post(session_api::claim))
        .route("/api/agent/relaunch", axum::routing::post(session_api::relaunch))
        .route("/api/token/rotate", axum::routing::post(token_api::rotate))
        .route("/api/session/end", axum::routing::post(session_api::end))
        .route("/api/memory/add", axum::routing::post(memory_api::add))
        .route("/api/memory/query", axum::routing::post(memory_api::query))
        .route("/api/memory/stats", axum::routing::get(memory_api::stats))
        .route("/hooks/{event}", axum::routing::post(hooks::hook))
        .nest_service("/mcp", mcp_service)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::require_token));
    let router = Router::new()
        .route("/health", axum::routing::get(health::health))
        .merge(private)
        .fallback(guard::not_found)
        .layer(axum::middleware::from_fn(guard::loopback_only))
        .with_state(state);
    Server { router, mcp_sessions, limits }
}

/// Serves until `shutdown` is cancelled, then stops accepting, closes the MCP sessions so
/// their streams end, and waits for in-flight requests. Each step is logged. Connections
/// live by `server.limits`: timeouts and a connection cap (`listener.rs`).
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: Server,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let Server { router, mcp_sessions, limits } = server;
    let connections = CancellationToken::new();
    let drain = {
        let connections = connections.clone();
        async move {
            shutdown.cancelled().await;
            tracing::info!("shutdown: no longer accepting connections");
            let closed = mcp_sessions.close_all().await;
            tracing::info!("shutdown: closed {closed} MCP session(s)");
            connections.cancel();
        }
    };
    let (served, ()) = tokio::join!(listener::run(listener, router, limits, connections), drain);
    served?;
    tracing::info!("shutdown: HTTP server stopped");
    Ok(())
}

//! The MCP endpoint. The handler is rebuilt per request for stateless 2026-07-28 clients and
//! per session for 2025-11-25 ones, so it holds nothing but an `Arc<Core>`: all shared state
//! lives in the core. Tools arrive with the MCP tool-surface issue.

use std::sync::Arc;

use paige_core::Core;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool_handler, tool_router};
use tokio_util::sync::CancellationToken;

#[path = "mcp_intents.rs"]
mod intents;

/// Claude Code's view of Paige.
#[derive(Clone)]
pub struct PaigeMcp {
    #[allow(dead_code, reason = "tools read the core once they land")]
    core: Arc<Core>,
}

#[tool_router(allow_empty)]
impl PaigeMcp {
    pub fn new(core: Arc<Core>) -> PaigeMcp {
        PaigeMcp { core }
    }
}

#[tool_handler(router = (Self::tool_router() + Self::intent_router()))]
impl ServerHandler for PaigeMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("paige", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Paige is the learner's coding coach. Use these tools to read what the learner is doing \
                 and to guide them in the editor; never write the learner's code for them.",
            )
    }
}

/// The open MCP sessions (2025-11-25 clients), so shutdown can close them.
#[derive(Clone)]
pub struct McpSessions {
    manager: Arc<LocalSessionManager>,
    cancel: CancellationToken,
}

impl McpSessions {
    pub async fn count(&self) -> usize {
        self.manager.sessions.read().await.len()
    }

    /// Terminates every session and stream; returns how many sessions were open.
    pub async fn close_all(&self) -> usize {
        let open = self.count().await;
        self.cancel.cancel();
        open
    }
}

pub(crate) fn service(
    core: Arc<Core>,
    cancel: CancellationToken,
) -> (StreamableHttpService<PaigeMcp, LocalSessionManager>, McpSessions) {
    let manager = Arc::new(LocalSessionManager::default());
    // Host and Origin are checked for every route by `guard::loopback_only`; rmcp checks
    // them again here so the endpoint stays safe if it is ever mounted elsewhere.
    let config = StreamableHttpServerConfig::default()
        .with_allowed_origins([
            "http://localhost:*",
            "https://localhost:*",
            "http://127.0.0.1:*",
            "https://127.0.0.1:*",
            "http://[::1]:*",
            "https://[::1]:*",
        ])
        .with_cancellation_token(cancel.clone());
    let service = StreamableHttpService::new(move || Ok(PaigeMcp::new(core.clone())), manager.clone(), config);
    (service, McpSessions { manager, cancel })
}

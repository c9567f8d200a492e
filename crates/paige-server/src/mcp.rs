//! The MCP endpoint. The handler is rebuilt per request for stateless 2026-07-28 clients and
//! per session for 2025-11-25 ones, so it holds nothing but an `Arc<Core>`: all shared state
//! lives in the core. The tools are in `mcp_tools.rs`.

use std::sync::{Arc, LazyLock};

use paige_core::Core;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool_handler};
use tokio_util::sync::CancellationToken;

/// Claude Code's view of Paige. Holds nothing but the core: cheap to build per request.
#[derive(Clone)]
pub struct PaigeMcp {
    pub(crate) core: Arc<Core>,
    tool_router: Arc<ToolRouter<PaigeMcp>>,
}

/// The tools and their JSON Schemas, built once: stateless requests build a handler each.
/// Coach mode's Claude Code is offered Paige's coaching tools only; a governed project's also
/// the handshake (`select_active_intent`), which means nothing without intents.
static COACH_TOOLS: LazyLock<Arc<ToolRouter<PaigeMcp>>> = LazyLock::new(|| Arc::new(PaigeMcp::coach_tools()));
static GOVERNED_TOOLS: LazyLock<Arc<ToolRouter<PaigeMcp>>> =
    LazyLock::new(|| Arc::new(PaigeMcp::coach_tools() + PaigeMcp::intent_router()));

impl PaigeMcp {
    pub fn new(core: Arc<Core>) -> PaigeMcp {
        // Unreadable governance state offers the handshake: a governed agent must be able to
        // declare its intent, and the hooks still decide every call.
        let governed = core.governance_enabled().unwrap_or(true);
        let tool_router = if governed { GOVERNED_TOOLS.clone() } else { COACH_TOOLS.clone() };
        PaigeMcp { core, tool_router }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for PaigeMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("paige", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Paige is the learner's coding coach. Use these tools to read what the learner is doing \
                 and to guide them in the editor; never write the learner's code for them. When a session has \
                 no plan yet (paige_get_session_state says so): explore the code, write an implementation plan, \
                 call paige_run_coaching_pipeline once with it, then coach its phases one by one \
                 (paige_update_phase when a phase is done, paige_end_session when the work is).",
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
        // Stateless (2026-07-28) replies as plain JSON rather than a one-event SSE stream.
        .with_json_response(true)
        .with_cancellation_token(cancel.clone());
    let service = StreamableHttpService::new(move || Ok(PaigeMcp::new(core.clone())), manager.clone(), config);
    (service, McpSessions { manager, cancel })
}

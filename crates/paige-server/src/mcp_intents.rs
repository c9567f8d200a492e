//! The governance handshake tool, `select_active_intent`, as its own rmcp router (combined
//! with the main one in `mcp.rs`). The MCP request carries no Claude Code session id, so the
//! tool only validates and returns the intent's context; the PreToolUse/PostToolUse hooks
//! around `mcp__paige__select_active_intent` bind the intent to the hook's session.

use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;

use crate::mcp::PaigeMcp;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct SelectIntentParams {
    /// The id of an intent in .orchestration/active_intents.yaml, e.g. "INT-001".
    pub intent_id: String,
}

#[tool_router(router = intent_router, vis = "pub(crate)")]
impl PaigeMcp {
    #[tool(
        description = "Select the intent (from .orchestration/active_intents.yaml) your current request belongs to. \
                       Required before any other tool when Paige governs the project. Returns the intent's owned \
                       scope, constraints, acceptance criteria, recent history and Shared Brain lessons.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn select_active_intent(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(params): Parameters<SelectIntentParams>,
    ) -> CallToolResult {
        self.logged("select_active_intent", &parts);
        let core = self.core.clone();
        let id = params.intent_id;
        let result = tokio::task::spawn_blocking(move || core.select_active_intent(&id)).await;
        match result {
            Ok(Ok(context)) => CallToolResult::success(vec![ContentBlock::text(context.to_text())]),
            Ok(Err(err)) => CallToolResult::error(vec![ContentBlock::text(format!("Intent Validation Error: {err}"))]),
            Err(err) => CallToolResult::error(vec![ContentBlock::text(format!("select_active_intent failed: {err}"))]),
        }
    }
}

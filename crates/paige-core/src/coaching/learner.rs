//! What the coaching panel shows and does around Claude Code (issue 28): while a session
//! waits for its plan, each tool call Claude Code makes reaches the panel
//! (`coaching:agent_activity`), so the learner sees it reading the code; when no plan comes,
//! the learner asks for one again (`coaching:replan`: the kickoff, delivered again); and the
//! learner marks a phase done (`coaching:phase_done`) as Claude Code's `paige_update_phase`
//! would, logged the same way with who did it.

use std::sync::Arc;

use serde_json::{Value, json};

use super::AgentError;
use super::Coaching;
use crate::db::{ActionType, PhaseStatus};
use crate::hook_event::{HookEvent, HookInput};
use crate::protocol::{AgentActivity, CoachingMessage, MessageKind, ServerMessage};

/// The longest `detail` sent with an activity (characters).
const MAX_DETAIL_CHARS: usize = 120;

/// Why a replan could not be asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplanError {
    #[error("Start a coaching session first.")]
    NoActiveSession,
    #[error("This session already has a plan.")]
    HasPlan,
}

impl Coaching {
    /// After a PreToolUse hook: the tool call, to the panel while the session has no plan.
    pub(crate) fn hook_activity(&self, event: HookEvent, input: &HookInput) {
        if event != HookEvent::PreToolUse {
            return;
        }
        let Some(tool) = input.tool_name.as_deref().filter(|t| !t.is_empty()) else { return };
        // Paige's own tools are shown once, by the MCP handler (which also sees a Claude Code
        // with no hooks); ToolSearch is Claude Code loading its tools, not work on the task.
        if tool.starts_with("mcp__paige__") || tool == "ToolSearch" {
            return;
        }
        self.agent_activity(tool, &detail_of(input.tool_input.as_ref()));
    }

    /// Claude Code called one of Paige's MCP tools, or a tool it has: shown in the panel
    /// while the active session has no plan (afterwards the phases say what happens).
    pub fn agent_activity(&self, tool: &str, detail: &str) {
        let Some(session) = self.active_session() else { return };
        if self.db().plans_for_session(&session.id).is_ok_and(|plans| !plans.is_empty()) {
            return;
        }
        let detail: String = detail.chars().take(MAX_DETAIL_CHARS).collect();
        self.broadcast(ServerMessage::CoachingAgentActivity(AgentActivity {
            session_id: session.id,
            tool: tool.to_owned(),
            detail,
        }));
    }

    /// `coaching:replan`: Claude Code is asked again to plan the active session (the kickoff
    /// is delivered again, as at the start); logged. Without a terminal running Claude Code
    /// (the browser UI) the panel is told to run `paige claude`, which asks for it at start.
    pub fn request_replan(self: &Arc<Self>) -> Result<(), ReplanError> {
        let session = self.active_session().ok_or(ReplanError::NoActiveSession)?;
        if self.db().plans_for_session(&session.id).is_ok_and(|plans| !plans.is_empty()) {
            return Err(ReplanError::HasPlan);
        }
        let terminal = self.nudge_terminal().is_some();
        self.log_action(ActionType::CoachingMessage, json!({ "kind": "replan", "terminal": terminal }));
        let message = if terminal {
            "Asked Claude Code to plan again: it reads the code, then the phases appear here."
        } else {
            "No Claude Code runs in Paige's terminal: in your own terminal, start (or restart) `paige claude` in the project; it starts with the task."
        };
        self.broadcast(ServerMessage::CoachingMessage(CoachingMessage {
            message: message.to_owned(),
            kind: if terminal { MessageKind::Info } else { MessageKind::Warning },
            anchor: None,
        }));
        self.deliver_kickoff();
        Ok(())
    }

    /// `coaching:phase_done`: the learner marks phase `number` done; the next phase still to
    /// do becomes the one in progress (its hints shown). Logged as `paige_update_phase`'s
    /// update is, `by: learner`.
    /// Claude Code is told (typed in once it is quiet), since it would not hear of it until
    /// the learner typed.
    pub fn learner_completes_phase(self: &Arc<Self>, number: i64) -> Result<(), AgentError> {
        self.update_phase_by(number, PhaseStatus::Complete, "learner")?;
        let session = self.require_session()?;
        let plan = self.current_plan(&session.id)?.ok_or(AgentError::NoPlan)?;
        let phases = self.db().phases_for_plan(&plan.id)?;
        let current = phases.iter().find(|p| p.status == PhaseStatus::Active);
        let next = current.or_else(|| phases.iter().find(|p| p.status == PhaseStatus::Pending));
        if current.is_none()
            && let Some(next) = next
        {
            self.update_phase_by(next.number, PhaseStatus::Active, "learner")?;
        }
        self.deliver_phase_done(number, next);
        Ok(())
    }
}

/// A tool call's subject in a few words: its path, pattern, command, URL or query.
fn detail_of(input: Option<&Value>) -> String {
    let Some(input) = input else { return String::new() };
    ["file_path", "path", "pattern", "command", "url", "query", "description"]
        .iter()
        .find_map(|key| input.get(*key).and_then(Value::as_str).filter(|s| !s.trim().is_empty()))
        .map(|s| s.lines().next().unwrap_or_default().trim().to_owned())
        .unwrap_or_default()
}

//! Everything the core pushes to its adapters, as one closed enum.
//!
//! The server turns `Ui` into WebSocket frames, the Tauri shell into Tauri events;
//! `ActionLogged` and `Domain` feed the core's own features (the Observer, the learning
//! signals, the dashboard), which subscribe to what happened — never to UI frames.

use serde::Serialize;

use crate::db::ActionEntry;
use crate::protocol::ServerMessage;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum Event {
    /// A message for every connected UI client.
    Ui(ServerMessage),
    /// A message for one UI client only (e.g. the tree a newly connected UI asked for).
    UiTo { connection: crate::protocol::ConnectionId, message: ServerMessage },
    /// A row was written to the action log.
    ActionLogged(ActionEntry),
    /// The editor's buffer of `path` changed (not an action-log row: the Observer counts them).
    BufferEdited { path: String },
    /// Something happened in the learner's session; adapters ignore it.
    Domain(Domain),
    /// The core is stopping; adapters close their connections.
    ShuttingDown,
}

/// What happened, as the core's features need to know it (issue 40): each is emitted where
/// it happens, beside whatever the UIs are shown of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Domain {
    /// A session became the live one: started, resumed, or resumed after a restart.
    SessionStarted { session_id: String },
    /// A session ended (completed or abandoned).
    SessionEnded { session_id: String, status: crate::db::SessionStatus },
    /// A plan's phases were stored for the session.
    PlanReady { session_id: String },
    /// A phase of the session's plan was marked done (the panel or Claude Code).
    PhaseCompleted { session_id: String, phase: i64 },
    /// A step check ran, or started running.
    StepChecked(crate::protocol::StepCheck),
    /// The learner's prompts were classified again: the session's gauge, and the phase's.
    RelianceChanged { session_id: String, phase: Option<i64>, phase_reliance: Option<crate::protocol::RelianceGauge> },
    /// Files of the project changed on disk (added, changed, or renamed to these paths).
    FilesChanged { paths: Vec<String> },
    /// A Claude Code session began talking to Paige (its SessionStart hook).
    ClaudeCodeAttached,
    /// A Claude Code session ended (its SessionEnd hook).
    ClaudeCodeDetached,
}

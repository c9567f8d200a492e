//! Everything the core pushes to its adapters, as one closed enum.
//!
//! The server turns what every UI is shown ([`Event::into_ui_message`]: `Ui`, and the domain
//! events whose frame says just what they do) into WebSocket frames, the Tauri shell into
//! Tauri events; `ActionLogged` and `Domain` feed the core's own features (the Observer, the
//! learning signals, the dashboard), which subscribe to what happened — never to UI frames.

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
/// it happens. Those that carry what a UI frame says become that frame in the adapters
/// ([`Event::into_ui_message`]); for the others the UIs are shown more, beside them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Domain {
    /// A session became the live one: started, resumed, or resumed after a restart.
    SessionStarted { session_id: String },
    /// A session ended (completed or abandoned): how, how long it ran, phases done.
    SessionEnded(crate::protocol::SessionSummary),
    /// A plan's phases were stored for the session: the plan as the UIs show it.
    PlanReady { session_id: String, plan: crate::protocol::PlanReady },
    /// A phase of the session's plan changed status (marked done by the panel or Claude Code,
    /// or begun).
    PhaseChanged { session_id: String, update: crate::protocol::PhaseUpdate },
    /// A step check ran, or started running.
    StepChecked(crate::protocol::StepCheck),
    /// The learner's prompts were classified again: the session's gauge, and the phase's.
    RelianceChanged(crate::protocol::LearningSignals),
    /// Something in the project changed on disk (a file or folder added, changed, removed or
    /// renamed).
    FilesChanged(crate::files::FsChange),
    /// A Claude Code session began talking to Paige (its SessionStart hook).
    ClaudeCodeAttached,
    /// A Claude Code session ended (its SessionEnd hook).
    ClaudeCodeDetached,
}

impl Event {
    /// What every UI is shown of this event: a UI message as it is, and the domain events
    /// whose frame says just what they do — the one translation the adapters (`/ws`, the
    /// Tauri shell) share. `None` for the rest (`UiTo` is for one UI only).
    pub fn into_ui_message(self) -> Option<ServerMessage> {
        use crate::protocol::SessionEnded;
        match self {
            Event::Ui(message) => Some(message),
            Event::Domain(Domain::StepChecked(check)) => Some(ServerMessage::CoachingStepCheck(check)),
            Event::Domain(Domain::RelianceChanged(signals)) => Some(ServerMessage::LearningSignals(signals)),
            Event::Domain(Domain::SessionEnded(summary)) => Some(ServerMessage::SessionEnded(SessionEnded { summary })),
            Event::Domain(Domain::FilesChanged(change)) => Some(ServerMessage::FsTreeUpdate(change)),
            Event::Domain(Domain::PlanReady { plan, .. }) => Some(ServerMessage::CoachingPlanReady(plan)),
            Event::Domain(Domain::PhaseChanged { update, .. }) => Some(ServerMessage::CoachingPhaseUpdate(update)),
            _ => None,
        }
    }
}

impl crate::files::FsChange {
    /// The paths whose content may now differ: the one added or changed, or a rename's new one.
    pub fn changed_paths(&self) -> Vec<String> {
        match self.action {
            crate::files::FsChangeAction::Change | crate::files::FsChangeAction::Add => vec![self.path.clone()],
            crate::files::FsChangeAction::Rename => self.new_path.iter().cloned().collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{LearningSignals, RelianceGauge, SessionSummary, StepCheck};
    use crate::vocab::CheckStatus;

    /// The adapters show a domain event as the frame that says just what it does, once; the
    /// others (and `UiTo`, meant for one UI) are no frame for every UI.
    #[test]
    fn domain_events_that_are_frames_become_them_and_the_rest_none() {
        let check = StepCheck {
            phase: 1,
            status: CheckStatus::Passed,
            summary: "ok".into(),
            consecutive_failures: 0,
            duration_ms: Some(3),
            command: None,
        };
        let signals = LearningSignals {
            session_id: "s".into(),
            reliance: RelianceGauge::default(),
            solutions_shown: 0,
            phase: None,
            phase_reliance: None,
        };
        let summary = SessionSummary {
            session_id: "s".into(),
            status: crate::db::SessionStatus::Completed,
            duration_ms: 1,
            phases_completed: 2,
        };
        let change = crate::files::FsChange {
            action: crate::files::FsChangeAction::Rename,
            path: "a.rs".into(),
            new_path: Some("b.rs".into()),
        };
        assert_eq!(change.changed_paths(), ["b.rs"]);
        let shown =
            |event: Event| event.into_ui_message().map(|m| serde_json::to_value(m).expect("json")["type"].clone());
        assert_eq!(shown(Event::Domain(Domain::StepChecked(check))), Some("coaching:step_check".into()));
        assert_eq!(shown(Event::Domain(Domain::RelianceChanged(signals))), Some("learning:signals".into()));
        assert_eq!(shown(Event::Domain(Domain::SessionEnded(summary))), Some("session:ended".into()));
        assert_eq!(shown(Event::Domain(Domain::FilesChanged(change))), Some("fs:tree_update".into()));
        for none in [
            Event::Domain(Domain::SessionStarted { session_id: "s".into() }),
            Event::Domain(Domain::ClaudeCodeAttached),
            Event::BufferEdited { path: "a.rs".into() },
            Event::ShuttingDown,
        ] {
            assert_eq!(shown(none), None);
        }
    }
}

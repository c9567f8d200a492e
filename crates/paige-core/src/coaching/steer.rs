//! What Claude Code steers in the coaching UI (spec Story 6): highlights, file hints, phase
//! status, messages and the issue panel. Nothing here writes a file.

use serde_json::json;

use super::Coaching;
use crate::db::{ActionType, DbError, PhaseStatus, Plan};
use crate::live::ProjectError;
use crate::protocol::{
    CoachingMessage, FileHint, HighlightLines, HintFiles, IssueContext, OptionalPath, PhaseUpdate, ServerMessage,
};
use serde::Serialize;

/// Why an agent operation failed, in words the agent can act on.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("No active session")]
    NoActiveSession,
    #[error("phase {0} not found in the current plan")]
    UnknownPhase(i64),
    #[error("the active session has no plan yet")]
    NoPlan,
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Db(#[from] DbError),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseView {
    pub id: String,
    pub number: i64,
    pub title: String,
    pub status: PhaseStatus,
    pub hint_level: crate::db::HintLevel,
}

impl Coaching {
    /// The active session's id, or the error every session-scoped tool returns.
    pub fn require_session(&self) -> Result<crate::db::Session, AgentError> {
        self.active_session().ok_or(AgentError::NoActiveSession)
    }

    /// Adds a line highlight (highlights accumulate; they are not stored).
    pub fn highlight_lines(&self, highlight: HighlightLines) -> Result<HighlightLines, AgentError> {
        if highlight.start < 1 || highlight.end < highlight.start {
            return Err(AgentError::Invalid(format!(
                "lines {}–{} are not a range: start must be ≥ 1 and end ≥ start",
                highlight.start, highlight.end
            )));
        }
        let path = self.resolve_path(&highlight.path).map_err(ProjectError::from)?;
        let highlight = HighlightLines { path: path.rel().to_owned(), ..highlight };
        self.log_action(ActionType::DecorationsApplied, json!({ "path": highlight.path, "count": 1 }));
        self.broadcast(ServerMessage::EditorHighlightLines(highlight.clone()));
        Ok(highlight)
    }

    /// Clears highlights in one file, or everywhere.
    pub fn clear_highlights(&self, path: Option<&str>) -> Result<Option<String>, AgentError> {
        let path = match path {
            Some(p) => Some(self.resolve_path(p).map_err(ProjectError::from)?.rel().to_owned()),
            None => None,
        };
        self.broadcast(ServerMessage::EditorClearHighlights(OptionalPath { path: path.clone() }));
        Ok(path)
    }

    /// Makes files glow in the explorer.
    pub fn hint_files(&self, hints: Vec<FileHint>) -> Result<Vec<FileHint>, AgentError> {
        if hints.is_empty() {
            return Err(AgentError::Invalid("hints is empty: give at least one {path, style}".into()));
        }
        let hints = hints
            .into_iter()
            .map(|h| {
                let path = self.resolve_path(&h.path).map_err(ProjectError::from)?.rel().to_owned();
                // Directories reach the UI too, so they pass the same guard.
                let directories = h
                    .directories
                    .map(|dirs| {
                        dirs.iter()
                            .map(|d| Ok(self.resolve_path(d).map_err(ProjectError::from)?.rel().to_owned()))
                            .collect::<Result<Vec<_>, AgentError>>()
                    })
                    .transpose()?;
                Ok(FileHint { path, directories, ..h })
            })
            .collect::<Result<Vec<_>, AgentError>>()?;
        let paths: Vec<&str> = hints.iter().map(|h| h.path.as_str()).collect();
        self.log_action(ActionType::FileHintsApplied, json!({ "paths": paths }));
        self.broadcast(ServerMessage::ExplorerHintFiles(HintFiles { hints: hints.clone() }));
        Ok(hints)
    }

    pub fn clear_hints(&self) {
        self.broadcast(ServerMessage::ExplorerClearHints(Default::default()));
    }

    /// Moves a phase of the current plan to `status`: SQLite (with timestamps), the action log
    /// (`phase_started` / `phase_completed`), `coaching:phase_update`, and for a phase that
    /// becomes active its hints in place of the last ones. Already in that
    /// status → success, no change (EC-32).
    pub fn update_phase(&self, number: i64, status: PhaseStatus) -> Result<PhaseView, AgentError> {
        self.update_phase_by(number, status, "claude_code")
    }

    /// [`Coaching::update_phase`], logged with who moved the phase (`by`: `claude_code`, `learner`).
    pub(crate) fn update_phase_by(&self, number: i64, status: PhaseStatus, by: &str) -> Result<PhaseView, AgentError> {
        let session = self.require_session()?;
        let plan = self.current_plan(&session.id)?.ok_or(AgentError::NoPlan)?;
        let phase = self
            .db()
            .phases_for_plan(&plan.id)?
            .into_iter()
            .find(|p| p.number == number)
            .ok_or(AgentError::UnknownPhase(number))?;
        let phase = if phase.status == status {
            phase
        } else {
            let updated = self.db().set_phase_status(&phase.id, status)?;
            let data =
                json!({ "phaseId": updated.id, "phaseNumber": updated.number, "title": updated.title, "by": by });
            match status {
                PhaseStatus::Active => {
                    self.log_action(ActionType::PhaseStarted, data);
                    // The phase now in progress shows its hints, at its level.
                    let hints = self.db().phase_hints(&updated.id, None)?;
                    let _ = self.clear_highlights(None);
                    self.clear_hints();
                    self.show_phase_hints(&updated, &hints);
                }
                PhaseStatus::Complete => {
                    self.log_action(ActionType::PhaseCompleted, data);
                    // Does the learner understand what they wrote? Asked in the background.
                    self.check_comprehension(&session.id, &updated);
                }
                PhaseStatus::Pending => {}
            }
            // Every UI is shown it as `coaching:phase_update` (`Event::into_ui_message`).
            let update = PhaseUpdate::of(&updated);
            self.ctx().publish(crate::event::Domain::PhaseChanged { session_id: session.id.clone(), update });
            updated
        };
        Ok(PhaseView {
            id: phase.id,
            number: phase.number,
            title: phase.title,
            status: phase.status,
            hint_level: phase.hint_level,
        })
    }

    /// Shows a coaching message (toast, or a balloon anchored in a file).
    pub fn show_message(&self, mut message: CoachingMessage) -> Result<(), AgentError> {
        self.require_session()?;
        if message.message.trim().is_empty() {
            return Err(AgentError::Invalid("message is empty".into()));
        }
        if let Some(anchor) = &mut message.anchor {
            anchor.path = self.resolve_path(&anchor.path).map_err(ProjectError::from)?.rel().to_owned();
        }
        self.log_action(ActionType::CoachingMessage, json!({ "messageType": message.kind }));
        self.broadcast(ServerMessage::CoachingMessage(message));
        Ok(())
    }

    /// Fills the issue panel.
    pub fn show_issue_context(&self, issue: IssueContext) -> Result<(), AgentError> {
        self.require_session()?;
        self.broadcast(ServerMessage::CoachingIssueContext(issue));
        Ok(())
    }

    /// The session's latest plan.
    pub(crate) fn current_plan(&self, session_id: &str) -> Result<Option<Plan>, DbError> {
        self.db().current_plan(session_id)
    }
}

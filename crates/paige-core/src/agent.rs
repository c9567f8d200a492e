//! What the coding agent (Claude Code, over MCP) may do: read the learner's state and steer
//! the UI (spec Story 6). Nothing here writes a file — by construction the agent surface has
//! no path to [`Core::write_file`].

use serde::Serialize;
use serde_json::json;

use crate::core::Core;
use crate::db::{ActionType, DbError, HintSpan, PhaseStatus, Plan};
use crate::files::FileContent;
use crate::project::{FileDiff, ProjectError};
use crate::protocol::{
    CoachingMessage, CursorPosition, FileHint, HighlightLines, HintFiles, IssueContext, OptionalPath, PhaseUpdate,
    ServerMessage,
};

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

/// The nine items of `paige_get_session_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StateItem {
    OpenFiles,
    Buffers,
    Diffs,
    Phase,
    Plan,
    Progress,
    Hints,
    Session,
    Dreyfus,
}

impl StateItem {
    pub const ALL: [StateItem; 9] = [
        StateItem::OpenFiles,
        StateItem::Buffers,
        StateItem::Diffs,
        StateItem::Phase,
        StateItem::Plan,
        StateItem::Progress,
        StateItem::Hints,
        StateItem::Session,
        StateItem::Dreyfus,
    ];
}

/// A buffer as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BufferView {
    pub path: String,
    pub content: String,
    pub cursor_position: CursorPosition,
    pub dirty: bool,
    pub last_updated: String,
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

impl Core {
    /// The active session's id, or the error every session-scoped tool returns.
    pub fn require_session(&self) -> Result<crate::db::Session, AgentError> {
        self.active_session().ok_or(AgentError::NoActiveSession)
    }

    /// A buffer by path; `None` when the editor holds none for it.
    pub fn buffer_view(&self, path: &str) -> Result<Option<BufferView>, AgentError> {
        let resolved = self.resolve_path(path).map_err(ProjectError::from)?;
        Ok(self.buffer(path).map_err(ProjectError::from)?.map(|entry| BufferView {
            path: resolved.rel().to_owned(),
            content: entry.content,
            cursor_position: entry.cursor_position,
            dirty: entry.dirty,
            last_updated: crate::db::iso(entry.last_updated),
        }))
    }

    /// The diff of one file (as a one-element list, empty when clean) or of every dirty file.
    pub fn diffs(&self, path: Option<&str>) -> Result<Vec<FileDiff>, AgentError> {
        match path {
            None => Ok(self.dirty_diffs()),
            Some(path) => {
                let rel = self.resolve_path(path).map_err(ProjectError::from)?.rel().to_owned();
                let diff = self.diff(path)?;
                Ok(if diff.is_empty() { Vec::new() } else { vec![FileDiff { path: rel, diff }] })
            }
        }
    }

    /// Opens a file in the learner's editor (`editor:open_file`) and adds it to the open set.
    /// A file that cannot be read is an error and nothing is broadcast.
    pub fn open_file_for_agent(&self, path: &str) -> Result<FileContent, AgentError> {
        let content = self.read_file(path)?;
        self.live().opened(&content.path, (!content.binary).then_some(content.content.as_str()));
        self.broadcast(ServerMessage::EditorOpenFile(content.clone()));
        Ok(content)
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

    /// [`Core::update_phase`], logged with who moved the phase (`by`: `claude_code`, `learner`).
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
                    let completed =
                        crate::event::Domain::PhaseCompleted { session_id: session.id.clone(), phase: number };
                    self.ctx().publish(completed);
                    // Does the learner understand what they wrote? Asked in the background.
                    self.check_comprehension(&session.id, &updated);
                }
                PhaseStatus::Pending => {}
            }
            self.broadcast(ServerMessage::CoachingPhaseUpdate(PhaseUpdate::of(&updated)));
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

    /// The requested items of the session state (all nine when `include` is empty).
    pub fn session_state(
        &self,
        include: &[StateItem],
    ) -> Result<serde_json::Map<String, serde_json::Value>, AgentError> {
        let session = self.require_session()?;
        let items: &[StateItem] = if include.is_empty() { &StateItem::ALL } else { include };
        let plan = self.current_plan(&session.id)?;
        let phases = match &plan {
            Some(plan) => self.db().phases_for_plan(&plan.id)?,
            None => Vec::new(),
        };
        let current = phases.iter().find(|p| p.status == PhaseStatus::Active).cloned();
        let mut out = serde_json::Map::new();
        for item in items {
            let value = match item {
                StateItem::OpenFiles => json!(self.open_files()),
                StateItem::Buffers => {
                    let paths = self.live().buffer_paths();
                    let views: Vec<BufferView> = paths.iter().filter_map(|p| self.buffer_view(p).ok().flatten()).collect();
                    json!(views)
                }
                StateItem::Diffs => json!(self.dirty_diffs()),
                StateItem::Phase => json!(current.as_ref().map(|p| PhaseView {
                    id: p.id.clone(),
                    number: p.number,
                    title: p.title.clone(),
                    status: p.status,
                    hint_level: p.hint_level,
                })),
                StateItem::Plan => json!(plan.as_ref().map(|plan| json!({
                    "id": plan.id,
                    "phases": phases.iter().map(|p| json!({"number": p.number, "title": p.title, "status": p.status})).collect::<Vec<_>>(),
                }))),
                StateItem::Progress => match &current {
                    Some(p) => json!(self.db().progress_for_phase(&p.id)?.into_iter().map(|e| json!({
                        "eventType": e.event_type, "data": e.data, "createdAt": crate::db::iso(e.created_at),
                    })).collect::<Vec<_>>()),
                    None => json!([]),
                },
                StateItem::Hints => {
                    let hints = match &current {
                        Some(p) => self.db().phase_hints(&p.id, None)?,
                        None => Vec::new(),
                    };
                    let (files, lines): (Vec<_>, Vec<_>) = hints.into_iter().partition(|h| h.span == HintSpan::File);
                    json!({
                        "fileHints": files.iter().map(|h| json!({"path": h.path, "style": h.style})).collect::<Vec<_>>(),
                        "lineHints": lines.iter().map(|h| match h.span {
                            HintSpan::Line { start_line, end_line } => json!({"path": h.path, "start": start_line, "end": end_line, "style": h.style, "hoverText": h.hover_text}),
                            HintSpan::File => json!(null),
                        }).collect::<Vec<_>>(),
                    })
                }
                StateItem::Session => json!({
                    "id": session.id,
                    "projectDir": session.project_dir,
                    "issueNumber": session.issue_number,
                    "issueTitle": session.issue_title,
                    "startedAt": crate::db::iso(session.started_at),
                }),
                StateItem::Dreyfus => json!(self.db().dreyfus_assessments()?.into_iter().map(|d| json!({
                    "skillArea": d.skill_area, "stage": d.stage, "confidence": d.confidence,
                })).collect::<Vec<_>>()),
            };
            let key = serde_json::to_value(item).ok().and_then(|k| k.as_str().map(str::to_owned)).unwrap_or_default();
            out.insert(key, value);
        }
        Ok(out)
    }

    /// The session's latest plan.
    pub(crate) fn current_plan(&self, session_id: &str) -> Result<Option<Plan>, DbError> {
        self.db().current_plan(session_id)
    }
}

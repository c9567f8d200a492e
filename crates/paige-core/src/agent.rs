//! What the coding agent (Claude Code, over MCP) may do: read the learner's state and steer
//! the UI (spec Story 6). Nothing here writes a file — by construction the agent surface has
//! no path to [`Core::write_file`].

use serde::Serialize;
use serde_json::json;

pub use crate::coaching::{AgentError, PhaseView};
use crate::core::Core;
use crate::db::{HintSpan, PhaseStatus};
use crate::files::FileContent;
use crate::project::{FileDiff, ProjectError};
use crate::protocol::{CursorPosition, ServerMessage};

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

impl Core {
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

    /// The requested items of the session state (all nine when `include` is empty).
    pub fn session_state(
        &self,
        include: &[StateItem],
    ) -> Result<serde_json::Map<String, serde_json::Value>, AgentError> {
        let session = self.coaching().require_session()?;
        let items: &[StateItem] = if include.is_empty() { &StateItem::ALL } else { include };
        let plan = self.coaching().current_plan(&session.id)?;
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
}

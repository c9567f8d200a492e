//! The MCP tools Claude Code calls (spec Story 6, Story 9 entry points). Each tool is a thin
//! adapter: parse, call the core, render. None writes a file, and their annotations say so to
//! clients: the reads are read-only, the rest steer the UI or the session and are never
//! destructive (MCP assumes a tool without annotations may be).

use paige_core::db::{ActionType, HintStyle, PhaseStatus};
use paige_core::protocol::{Anchor, CoachingMessage, FileHint, HighlightLines, IssueContext, MessageKind};
use paige_core::{AgentError, StateItem};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::schemars::JsonSchema;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::mcp::PaigeMcp;

/// Text longer than this is cut (with a marker saying so) to stay far below Claude Code's
/// tool-output limit (25,000 tokens by default).
pub const MAX_TEXT_CHARS: usize = 40_000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PathParam {
    /// File path relative to the project root (e.g. "src/auth.ts"); absolute paths inside the project also work.
    pub path: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct OptionalPathParam {
    /// File path relative to the project root. Omit it to mean every file.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct NoParams {}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct SessionStateParams {
    /// Which parts of the state to return. Omit or pass [] for all nine.
    #[serde(default)]
    pub include: Vec<StateItem>,
}

/// How a line highlight looks.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LineStyle {
    /// A gentle pointer: "look around here".
    Hint,
    /// The exact place to work on now.
    Focus,
    /// Something wrong or risky.
    Warning,
}

/// How a file glows in the explorer.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileStyle {
    Suggested,
    Important,
    Critical,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HighlightParams {
    /// File path relative to the project root.
    pub path: String,
    /// First line to highlight, 1-based.
    pub start: i64,
    /// Last line to highlight, 1-based, inclusive (≥ start).
    pub end: i64,
    pub style: LineStyle,
    /// Shown when the learner hovers the highlight: a question or nudge, never the solution.
    #[serde(default)]
    pub hover_text: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FileHintParam {
    /// File path relative to the project root.
    pub path: String,
    pub style: FileStyle,
    /// Parent directories to glow as well (relative paths).
    #[serde(default)]
    pub directories: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct HintFilesParams {
    /// Files to make glow in the explorer, each with its own style.
    pub hints: Vec<FileHintParam>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PhaseStatusParam {
    Pending,
    Active,
    Complete,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdatePhaseParams {
    /// The phase number in the current plan (1, 2, ...).
    pub phase: i64,
    pub status: PhaseStatusParam,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MessageType {
    Info,
    Success,
    Warning,
    Error,
    Hint,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnchorParam {
    /// File path relative to the project root.
    pub path: String,
    /// 1-based line the balloon points at.
    pub line: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShowMessageParams {
    /// What to tell the learner. Guide and ask; do not hand over code.
    pub message: String,
    #[serde(rename = "type")]
    pub kind: MessageType,
    /// Pin the message to a line of a file as a comment balloon; omit for a toast.
    #[serde(default)]
    pub anchor: Option<AnchorParam>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct IssueContextParams {
    /// The GitHub issue number.
    pub number: i64,
    pub title: String,
    /// Two or three sentences in plain words.
    pub summary: String,
    #[serde(default)]
    pub labels: Vec<String>,
    /// Link to the issue.
    #[serde(default)]
    pub url: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoachingPipelineParams {
    /// The implementation plan in Markdown, as your planning step wrote it.
    pub plan_text: String,
    /// A brief description of the issue.
    pub issue_summary: String,
    /// The GitHub issue number, if there is one.
    #[serde(default)]
    pub issue_number: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndSessionParams {
    /// A condensed transcript of the session.
    pub session_transcript: String,
}

#[tool_router(router = coach_tools, vis = "pub(crate)")]
impl PaigeMcp {
    #[tool(
        description = "Read the learner's current editor buffer for one file: content, cursor position, whether it has unsaved edits (dirty) and when it last changed. Returns {\"buffer\": null} when the editor holds no buffer for that file.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn paige_get_buffer(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<PathParam>,
    ) -> CallToolResult {
        self.logged("paige_get_buffer", &parts);
        match self.core.buffer_view(&p.path) {
            Ok(Some(mut view)) => {
                let truncated = truncate(&mut view.content, MAX_TEXT_CHARS);
                let value = json!({ "buffer": view, "truncated": truncated });
                text_and_json(value["buffer"].to_string(), value)
            }
            Ok(None) => text_and_json("null".into(), json!({ "buffer": null })),
            Err(err) => tool_error(err),
        }
    }

    #[tool(
        description = "List the files open in the learner's editor (opened by the learner or by paige_open_file).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn paige_get_open_files(&self, parts: Extension<http::request::Parts>) -> CallToolResult {
        self.logged("paige_get_open_files", &parts);
        let files = self.core.open_files();
        text_and_json(files.join("\n"), json!({ "files": files }))
    }

    #[tool(
        description = "Unified diff of the learner's unsaved edits (editor buffer vs. file on disk). With a path: that file only (empty list when it has no unsaved edits). Without: every file with unsaved edits.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn paige_get_diff(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<OptionalPathParam>,
    ) -> CallToolResult {
        self.logged("paige_get_diff", &parts);
        // Diffs still valid in the cache answer at once (an fstat per file); otherwise files
        // are read and diffed on the blocking pool, never on the async runtime.
        if let Some(diffs) = self.core.diffs_from_cache(p.path.as_deref()) {
            return diff_result(Ok(diffs));
        }
        self.blocking(move |core| diff_result(core.diffs(p.path.as_deref()))).await
    }

    #[tool(
        description = "Snapshot of the coaching session: open_files, buffers, diffs, phase (the active phase), plan, progress (of the active phase), hints (of the active phase), session, dreyfus (skill assessments). Pass include to get only some items; omit it or pass [] for all nine. Needs an active session.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn paige_get_session_state(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<SessionStateParams>,
    ) -> CallToolResult {
        self.logged("paige_get_session_state", &parts);
        self.blocking(move |core| match core.session_state(&p.include) {
            Ok(mut state) => {
                let truncated = cap_value_strings(&mut state);
                if truncated {
                    state.insert("truncated".into(), json!(true));
                }
                json_result(Value::Object(state))
            }
            Err(err) => tool_error(err),
        })
        .await
    }

    #[tool(
        description = "Open (or focus) a file in the learner's editor so you can talk about it together. Reads the file; never changes it.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn paige_open_file(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<PathParam>,
    ) -> CallToolResult {
        self.logged("paige_open_file", &parts);
        self.blocking(move |core| {
            respond(core.open_file_for_agent(&p.path), |file| {
                json!({ "success": true, "path": file.path, "lineCount": file.line_count, "language": file.language })
            })
        })
        .await
    }

    #[tool(
        description = "Highlight a range of lines in the learner's editor, optionally with hover text. Highlights add up across calls until paige_clear_highlights.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn paige_highlight_lines(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<HighlightParams>,
    ) -> CallToolResult {
        self.logged("paige_highlight_lines", &parts);
        let (Ok(start), Ok(end)) = (u32::try_from(p.start), u32::try_from(p.end)) else {
            return tool_error(AgentError::Invalid(format!("lines {}–{} are out of range", p.start, p.end)));
        };
        let style = match p.style {
            LineStyle::Hint => HintStyle::Hint,
            LineStyle::Focus => HintStyle::Focus,
            LineStyle::Warning => HintStyle::Warning,
        };
        respond(
            self.core.coaching().highlight_lines(HighlightLines {
                path: p.path,
                start,
                end,
                style,
                hover_text: p.hover_text,
            }),
            |h| json!({ "success": true, "path": h.path, "start": h.start, "end": h.end }),
        )
    }

    #[tool(
        description = "Remove line highlights: in one file when path is given, else in every file.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn paige_clear_highlights(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<OptionalPathParam>,
    ) -> CallToolResult {
        self.logged("paige_clear_highlights", &parts);
        respond(
            self.core.coaching().clear_highlights(p.path.as_deref()),
            |path| json!({ "success": true, "path": path }),
        )
    }

    #[tool(
        description = "Make files glow in the learner's file explorer to suggest where to look, each with a style (suggested, important, critical).",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn paige_hint_files(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<HintFilesParams>,
    ) -> CallToolResult {
        self.logged("paige_hint_files", &parts);
        let hints = p
            .hints
            .into_iter()
            .map(|h| FileHint {
                path: h.path,
                style: match h.style {
                    FileStyle::Suggested => HintStyle::Suggested,
                    FileStyle::Important => HintStyle::Important,
                    FileStyle::Critical => HintStyle::Critical,
                },
                directories: h.directories,
            })
            .collect();
        respond(
            self.core.coaching().hint_files(hints),
            |hints| json!({ "success": true, "paths": hints.iter().map(|h| &h.path).collect::<Vec<_>>() }),
        )
    }

    #[tool(
        description = "Remove every file glow from the explorer.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn paige_clear_hints(
        &self,
        parts: Extension<http::request::Parts>,
        _: Parameters<NoParams>,
    ) -> CallToolResult {
        self.logged("paige_clear_hints", &parts);
        self.core.coaching().clear_hints();
        json_result(json!({ "success": true }))
    }

    #[tool(
        description = "Set the status of a phase of the current plan (pending, active, complete). Mark a phase active when the learner starts it and complete when they finish it. Needs an active session with a plan.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn paige_update_phase(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<UpdatePhaseParams>,
    ) -> CallToolResult {
        self.logged("paige_update_phase", &parts);
        let status = match p.status {
            PhaseStatusParam::Pending => PhaseStatus::Pending,
            PhaseStatusParam::Active => PhaseStatus::Active,
            PhaseStatusParam::Complete => PhaseStatus::Complete,
        };
        respond(
            self.core.coaching().update_phase(p.phase, status),
            |phase| json!({ "success": true, "phase": { "id": phase.id, "number": phase.number, "title": phase.title, "status": phase.status } }),
        )
    }

    #[tool(
        description = "Show the learner a coaching message: a toast, or a comment balloon anchored to a line when anchor is given. Needs an active session.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn paige_show_message(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<ShowMessageParams>,
    ) -> CallToolResult {
        self.logged("paige_show_message", &parts);
        let anchor = match p.anchor {
            Some(a) => match u32::try_from(a.line) {
                Ok(line) if line >= 1 => Some(Anchor { path: a.path, line }),
                _ => return tool_error(AgentError::Invalid(format!("anchor line {} must be ≥ 1", a.line))),
            },
            None => None,
        };
        let kind = match p.kind {
            MessageType::Info => MessageKind::Info,
            MessageType::Success => MessageKind::Success,
            MessageType::Warning => MessageKind::Warning,
            MessageType::Error => MessageKind::Error,
            MessageType::Hint => MessageKind::Hint,
        };
        respond(
            self.core.coaching().show_message(CoachingMessage { message: p.message, kind, anchor }),
            |()| json!({ "success": true }),
        )
    }

    #[tool(
        description = "Show the GitHub issue being worked on in the learner's issue panel. Needs an active session.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn paige_show_issue_context(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<IssueContextParams>,
    ) -> CallToolResult {
        self.logged("paige_show_issue_context", &parts);
        let issue = IssueContext { number: p.number, title: p.title, summary: p.summary, labels: p.labels, url: p.url };
        respond(self.core.coaching().show_issue_context(issue), |()| json!({ "success": true }))
    }

    #[tool(
        description = "Turn your implementation plan into phased coaching for the learner (phases, hints, difficulty). Call it once after planning. Needs an active session.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = true)
    )]
    async fn paige_run_coaching_pipeline(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<CoachingPipelineParams>,
    ) -> CallToolResult {
        self.logged("paige_run_coaching_pipeline", &parts);
        if p.plan_text.trim().is_empty() || p.issue_summary.trim().is_empty() {
            return tool_error(AgentError::Invalid("planText and issueSummary must not be empty".into()));
        }
        if let Some(n) = p.issue_number.filter(|n| *n < 1) {
            return tool_error(AgentError::Invalid(format!("issueNumber {n} is not an issue number")));
        }
        if let Err(err) = self.core.coaching().require_session() {
            return tool_error(err);
        }
        let input = paige_core::coaching::PipelineInput {
            plan_text: p.plan_text,
            issue_summary: p.issue_summary,
            issue_number: p.issue_number,
        };
        match self.core.coaching().run_coaching_pipeline(input).await {
            Ok(output) => json_result(serde_json::to_value(output).unwrap_or_default()),
            Err(err) => CallToolResult::error(vec![ContentBlock::text(err.to_string())]),
        }
    }

    #[tool(
        description = "Wrap up the coaching session: record knowledge gaps, practice katas and skill assessments from the transcript. Needs an active session.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = true)
    )]
    async fn paige_end_session(
        &self,
        parts: Extension<http::request::Parts>,
        Parameters(p): Parameters<EndSessionParams>,
    ) -> CallToolResult {
        self.logged("paige_end_session", &parts);
        if p.session_transcript.trim().is_empty() {
            return tool_error(AgentError::Invalid("sessionTranscript must not be empty".into()));
        }
        // Without an active session this is "No active session", unless the session was
        // just wrapped up: then the first wrap-up's result again (EC-62).
        match self.core.coaching().end_session_with_wrapup(&p.session_transcript).await {
            Ok(wrapup) => json_result(serde_json::to_value(wrapup).unwrap_or_default()),
            Err(paige_core::coaching::WrapUpError::NoActiveSession) => tool_error(AgentError::NoActiveSession),
            Err(err) => CallToolResult::error(vec![ContentBlock::text(err.to_string())]),
        }
    }
}

impl PaigeMcp {
    /// Logs `mcp_tool_call` in the active session (skipped quietly without one).
    pub(crate) fn logged(&self, tool: &str, parts: &Extension<http::request::Parts>) {
        if self.core.active_session().is_some() {
            let mcp_session = parts.0.headers.get("mcp-session-id").and_then(|v| v.to_str().ok());
            self.core.log_action(ActionType::McpToolCall, json!({ "toolName": tool, "sessionId": mcp_session }));
            self.core.coaching().agent_activity(tool, "");
        }
    }
}

/// A result whose text is its JSON.
fn json_result(value: Value) -> CallToolResult {
    CallToolResult::structured(value)
}

/// A result with a readable text rendering beside its structured content. (Built field by
/// field: `CallToolResult::structured` would serialize the whole value as text first.)
fn text_and_json(text: String, value: Value) -> CallToolResult {
    let mut result = CallToolResult::default();
    result.content = vec![ContentBlock::text(text)];
    result.structured_content = Some(value);
    result.is_error = Some(false);
    result
}

/// The usual ending of a tool: its JSON on success, the error's words on failure.
fn respond<T>(result: Result<T, AgentError>, render: impl FnOnce(T) -> Value) -> CallToolResult {
    match result {
        Ok(value) => json_result(render(value)),
        Err(err) => tool_error(err),
    }
}

impl PaigeMcp {
    /// Runs a tool's core work on the blocking pool: it reads files and SQLite and may diff
    /// large buffers, which must never stall the tasks serving every other request.
    async fn blocking(
        &self,
        work: impl FnOnce(&paige_core::Core) -> CallToolResult + Send + 'static,
    ) -> CallToolResult {
        let core = self.core.clone();
        crate::blocking::run(move || work(&core)).await.unwrap_or_else(|| {
            CallToolResult::error(vec![ContentBlock::text("internal error in Paige; the call was not completed")])
        })
    }
}

/// `paige_get_diff`'s answer: the diffs within the text budget, or the error.
fn diff_result(diffs: Result<Vec<paige_core::FileDiff>, AgentError>) -> CallToolResult {
    match diffs {
        Ok(mut diffs) => {
            let mut budget = MAX_TEXT_CHARS;
            let mut truncated = false;
            for d in &mut diffs {
                truncated |= truncate(&mut d.diff, budget);
                budget = budget.saturating_sub(d.diff.len());
            }
            let text = if diffs.is_empty() {
                "no unsaved edits".to_owned()
            } else {
                diffs.iter().map(|d| d.diff.as_str()).collect::<Vec<_>>().join("\n")
            };
            text_and_json(text, json!({ "diffs": diffs, "truncated": truncated }))
        }
        Err(err) => tool_error(err),
    }
}

fn tool_error(err: AgentError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(err.to_string())])
}

/// Cuts `s` to at most `max` bytes at a character boundary, appending a marker. Returns
/// whether it cut.
pub(crate) fn truncate(s: &mut String, max: usize) -> bool {
    if s.len() <= max {
        return false;
    }
    let cut = (0..=max).rev().find(|i| s.is_char_boundary(*i)).unwrap_or(0);
    let dropped = s.len() - cut;
    s.truncate(cut);
    s.push_str(&format!("\n… [truncated: {dropped} more bytes; ask for one file at a time]"));
    true
}

/// Caps every long string in a state snapshot; returns whether anything was cut.
fn cap_value_strings(map: &mut serde_json::Map<String, Value>) -> bool {
    fn walk(value: &mut Value, budget: &mut usize) -> bool {
        match value {
            Value::String(s) => {
                let cut = truncate(s, (*budget).max(200));
                *budget = budget.saturating_sub(s.len());
                cut
            }
            Value::Array(items) => items.iter_mut().fold(false, |acc, v| walk(v, budget) | acc),
            Value::Object(map) => map.values_mut().fold(false, |acc, v| walk(v, budget) | acc),
            _ => false,
        }
    }
    let mut budget = MAX_TEXT_CHARS;
    map.values_mut().fold(false, |acc, v| walk(v, &mut budget) | acc)
}

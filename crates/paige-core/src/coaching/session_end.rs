//! Ending a coaching session from outside the MCP tool: the UI's `session:end`. It answers at
//! once; the wrap-up (three model calls) runs as the core's own background work and
//! `session:completed` follows. The transcript is Claude Code's JSONL — the last one a hook of
//! this run named — condensed to the conversation's text and tool calls and cut to its end;
//! without one, the session's action log. Claude Code's `SessionEnd` is not an end of the
//! coaching session: Claude Code exits, the learner's session goes on.

use crate::sync::Locked;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::Coaching;
use super::{MAX_TRANSCRIPT_BYTES, last_bytes};
use crate::hook_event::HookInput;

/// How much of the transcript file is read: its end, where the session finished.
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

impl Coaching {
    /// After every hook: remembers its `transcript_path` (what a later end of the session
    /// wraps up from); shows a tool call in the panel while the session waits for its plan.
    /// Claude Code's `SessionEnd` does not end the coaching session (issue 40): the learner
    /// may restart Claude Code, or start it in another terminal, and go on; the session ends
    /// when they end it (the panel, `paige_end_session`) or is abandoned when left idle.
    /// `coach_mode`: the project is not governed, so the learner's prompts and Claude Code's
    /// replies count as the learner's learning signals.
    pub fn after_hook(self: &Arc<Coaching>, event: crate::hook_event::HookEvent, input: &HookInput, coach_mode: bool) {
        if let Some(path) = &input.transcript_path {
            *self.last_transcript().0.locked() = Some(path.clone());
        }
        self.hook_activity(event, input);
        if coach_mode {
            self.hook_learning(event, input);
        }
        match event {
            crate::hook_event::HookEvent::SessionStart => self.ctx().publish(crate::event::Domain::ClaudeCodeAttached),
            crate::hook_event::HookEvent::SessionEnd => self.ctx().publish(crate::event::Domain::ClaudeCodeDetached),
            _ => {}
        }
        if event == crate::hook_event::HookEvent::SessionEnd
            && input.reason.as_deref() != Some("clear")
            && self.active_session().is_some()
        {
            tracing::info!("Claude Code's session ended; the coaching session stays open");
            self.broadcast(crate::protocol::ServerMessage::notice(
                crate::protocol::MessageKind::Info,
                "Claude Code has exited. Your session is still open: start Claude Code again to go on, or end \
                 the session from the panel when you are done."
                    .to_owned(),
            ));
        }
    }

    /// The UI's `session:end`: the wrap-up starts in the background, from the transcript the
    /// last hook named (else the action log).
    pub fn end_session_from_ui(self: &Arc<Coaching>) -> Result<(), super::WrapUpError> {
        let path = self.last_transcript().0.locked().clone();
        self.begin_wrapup(&self.transcript_from(path.as_deref()))
    }

    /// The condensed transcript at `path`, or the action log when there is none to read.
    fn transcript_from(&self, path: Option<&Path>) -> String {
        let transcript = match path.map(|path| crate::transcript::read_end(path, MAX_READ_BYTES)) {
            Some(Ok(jsonl)) => condense(&jsonl),
            Some(Err(err)) => {
                tracing::warn!("cannot read Claude Code's transcript: {err}; wrapping up from the action log");
                String::new()
            }
            None => String::new(),
        };
        if transcript.trim().is_empty() { self.action_log_transcript() } else { transcript }
    }

    /// The session's own timeline as text, when Claude Code's transcript is not available.
    fn action_log_transcript(&self) -> String {
        let Some(session) = self.active_session() else { return String::new() };
        match self.db().recent_actions(&session.id, 500, None) {
            Ok(actions) => actions
                .iter()
                .rev()
                .map(|a| {
                    let data = a.data.as_ref().map(Value::to_string).unwrap_or_default();
                    format!("{} {} {data}", crate::db::iso(a.created_at), a.action_type.as_str())
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Err(err) => {
                tracing::warn!("cannot read the action log: {err}");
                String::new()
            }
        }
    }
}

/// Claude Code's JSONL transcript as a conversation: one line per user or assistant text,
/// and per tool call (its name and input, shortened). Other records are left out; so is a
/// line that is not JSON. Cut to its last [`MAX_TRANSCRIPT_BYTES`].
pub fn condense(jsonl: &str) -> String {
    let mut out = Vec::new();
    for record in jsonl.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()) {
        let who = match record["type"].as_str() {
            Some("user") => "Learner",
            Some("assistant") => "Claude",
            _ => continue,
        };
        match &record["message"]["content"] {
            Value::String(text) => out.push(format!("{who}: {text}")),
            Value::Array(blocks) => {
                for block in blocks {
                    match block["type"].as_str() {
                        Some("text") => {
                            if let Some(text) = block["text"].as_str().filter(|t| !t.trim().is_empty()) {
                                out.push(format!("{who}: {text}"));
                            }
                        }
                        Some("tool_use") => {
                            let input = block["input"].to_string();
                            let input: String = input.chars().take(200).collect();
                            out.push(format!("{who} used {}: {input}", block["name"].as_str().unwrap_or("a tool")));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    last_bytes(&out.join("\n"), MAX_TRANSCRIPT_BYTES)
}

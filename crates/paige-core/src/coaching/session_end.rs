//! Claude Code's `SessionEnd` hook starts the wrap-up: the hook answers at once and the
//! wrap-up (three model calls) runs as the core's own background work. The transcript is
//! Claude Code's JSONL at `transcript_path`, condensed to the conversation's text and tool
//! calls and cut to its end. A `/clear` (reason `clear`) is not an end: the coaching session
//! goes on.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{MAX_TRANSCRIPT_BYTES, last_bytes};
use crate::Core;
use crate::governance::HookInput;

/// How much of the transcript file is read: its end, where the session finished.
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

impl Core {
    /// After a `SessionEnd` hook: wraps up the active coaching session in the background.
    /// Does nothing without one, or when the reason is `clear`.
    pub fn on_session_end(self: &Arc<Core>, input: &HookInput) {
        if input.reason.as_deref() == Some("clear") || self.active_session().is_none() {
            return;
        }
        let transcript = match input.transcript_path.as_deref().map(read_end) {
            Some(Ok(jsonl)) => condense(&jsonl),
            Some(Err(err)) => {
                tracing::warn!("cannot read Claude Code's transcript: {err}; wrapping up from the action log");
                String::new()
            }
            None => String::new(),
        };
        let transcript = if transcript.trim().is_empty() { self.action_log_transcript() } else { transcript };
        match self.begin_wrapup(&transcript) {
            Ok(()) => tracing::info!("Claude Code's session ended: wrapping up the coaching session"),
            Err(err) => tracing::warn!("cannot wrap up after SessionEnd: {err}"),
        }
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

/// The last [`MAX_READ_BYTES`] of the file, from its first whole line.
fn read_end(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(MAX_READ_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(if start > 0 { text.split_once('\n').map(|(_, rest)| rest.to_owned()).unwrap_or_default() } else { text })
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

//! The Claude Code hook events Paige listens to, and how long Claude Code waits for each:
//! the vocabulary shared by the launcher (which wires them), `paige hook` and the engine.

/// The Claude Code hook events Paige listens to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    PreCompact,
    SessionEnd,
}

impl HookEvent {
    pub const ALL: [HookEvent; 8] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Stop,
        HookEvent::PreCompact,
        HookEvent::SessionEnd,
    ];

    /// Claude Code's name (`PreToolUse`).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The command-line and URL spelling (`pre-tool-use`).
    pub fn slug(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::PreToolUse => "pre-tool-use",
            HookEvent::PostToolUse => "post-tool-use",
            HookEvent::PostToolUseFailure => "post-tool-use-failure",
            HookEvent::Stop => "stop",
            HookEvent::PreCompact => "pre-compact",
            HookEvent::SessionEnd => "session-end",
        }
    }

    /// Accepts either spelling.
    pub fn parse(raw: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.slug() == raw || e.name() == raw)
    }
}

/// Claude Code's hook timeout for `paige hook`, in seconds. Longer than the command's own
/// wait for Paige (3 s), so the command answers — with a deny if need be — before Claude Code
/// gives up on it and fails open.
pub const HOOK_TIMEOUT_SECS: i64 = 5;

/// Claude Code's hook timeout for the events that may settle a watch window (the call's
/// PostToolUse, the turn's Stop, the next prompt, a new session): undoing what a call changed
/// takes time proportional to it — about 10 s for 90,000 new files here — and the model
/// waits for the report anyway. `paige hook` waits up to a second less.
pub const SETTLE_HOOK_TIMEOUT_SECS: i64 = 60;

impl HookEvent {
    /// Claude Code's timeout for this event's hook, in seconds.
    pub fn hook_timeout_secs(self) -> i64 {
        match self {
            HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::Stop
            | HookEvent::SessionEnd
            | HookEvent::UserPromptSubmit
            | HookEvent::SessionStart => SETTLE_HOOK_TIMEOUT_SECS,
            HookEvent::PreToolUse | HookEvent::PreCompact => HOOK_TIMEOUT_SECS,
        }
    }
}

/// Parses a hook payload. Claude Code's JSON can carry what a Rust string cannot: bytes that
/// are not UTF-8, or an unpaired surrogate escape (`\udc80`, which a JavaScript string holds
/// when a prompt was cut mid-character). Those become U+FFFD (`�`) instead of failing the
/// hook; anything else that is not JSON is still an error.
pub fn parse_payload<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(value),
        Err(first) => {
            serde_json::from_str(&without_lone_surrogates(&String::from_utf8_lossy(bytes))).map_err(|_| first)
        }
    }
}

/// `text` with every `\uXXXX` escape of an unpaired surrogate replaced by `\ufffd`.
fn without_lone_surrogates(text: &str) -> String {
    let unit = |s: &str| -> Option<u16> { s.get(2..6).and_then(|hex| u16::from_str_radix(hex, 16).ok()) };
    let is_escape = |s: &str| s.starts_with("\\u") && unit(s).is_some();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if !is_escape(rest) {
            // Another escape (`\\`, `\"`, `\n`…): both characters as they are.
            let len = rest[1..].chars().next().map_or(1, |c| 1 + c.len_utf8());
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        let code = unit(rest).unwrap_or_default();
        let high = (0xD800..0xDC00).contains(&code);
        let low_follows = is_escape(&rest[6..]) && unit(&rest[6..]).is_some_and(|c| (0xDC00..0xE000).contains(&c));
        if high && low_follows {
            out.push_str(&rest[..12]);
            rest = &rest[12..];
        } else if (0xD800..0xE000).contains(&code) {
            out.push_str("\\ufffd");
            rest = &rest[6..];
        } else {
            out.push_str(&rest[..6]);
            rest = &rest[6..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_payload_with_unpaired_surrogates_or_bytes_that_are_not_utf8_parses_with_replacement_characters() {
        let cases: &[(&[u8], &str)] = &[
            (br#"{"prompt": "cut \udc80 here"}"#, "cut \u{fffd} here"),
            (br#"{"prompt": "high \ud83d alone"}"#, "high \u{fffd} alone"),
            (br#"{"prompt": "pair \ud83d\ude00 kept"}"#, "pair \u{1f600} kept"),
            (br#"{"prompt": "escaped \\udc80 backslash"}"#, "escaped \\udc80 backslash"),
            (b"{\"prompt\": \"bytes \xff\xfe here\"}", "bytes \u{fffd}\u{fffd} here"),
        ];
        for (raw, expected) in cases {
            let value: Value = parse_payload(raw).unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(raw)));
            assert_eq!(value["prompt"], *expected);
        }
        assert!(parse_payload::<Value>(b"{\"prompt\": ").is_err(), "what is not JSON stays an error");
    }
}

/// A hook payload as Claude Code sends it (2.1.330). Unknown fields are ignored; every
/// field is optional so a payload from another version still decodes.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub transcript_path: Option<std::path::PathBuf>,
    #[serde(default)]
    pub cwd: Option<std::path::PathBuf>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<serde_json::Value>,
    /// Claude Code's id of the tool call; pairs a PreToolUse with its PostToolUse.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub tool_response: Option<serde_json::Value>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    /// SessionEnd: why the session ended (`clear`, `logout`, `prompt_input_exit`, `other`…).
    #[serde(default)]
    pub reason: Option<String>,
    /// Stop: the text of Claude Code's last message in the turn.
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// Not Claude Code's: when `paige hook` stops waiting for the answer (its
    /// `X-Paige-Answer-Within-Ms`), after which Claude Code has been told the call is denied.
    /// A PreToolUse decided later must not open a watch window for a call that never runs.
    #[serde(skip)]
    pub answer_by: Option<std::time::Instant>,
    /// Not Claude Code's: added by `paige hook` for a governed Claude Code started for an
    /// intent (`paige claude --intent`), from the environment its launcher gave it.
    #[serde(default)]
    pub paige_view: Option<PaigeView>,
}

/// Which launch a hook comes from, and the intent its view makes writable
/// (`launch::scope`): `PAIGE_LAUNCH` and `PAIGE_VIEW_INTENT` in Claude Code's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PaigeView {
    pub launch: String,
    pub intent: String,
}

/// The environment variables a view's launch sets for Claude Code and its hooks.
pub const LAUNCH_VAR: &str = "PAIGE_LAUNCH";
pub const VIEW_INTENT_VAR: &str = "PAIGE_VIEW_INTENT";

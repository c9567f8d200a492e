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

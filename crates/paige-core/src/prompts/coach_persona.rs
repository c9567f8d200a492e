//! The coach persona Claude Code runs with (`--append-system-prompt`): a coach who never
//! writes the learner's code.

/// From `prompts/coach-persona/system.md`.
pub const SYSTEM_PROMPT: &str = include_str!("../../../../prompts/coach-persona/system.md");

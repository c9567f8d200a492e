//! Paige's typed extensions of the catalog for coaching sessions (issues 15, 16): what the UI
//! needs to start or resume a session itself, the "just show me" worked example, and the
//! phase's live step check.
//! Additive: a spec client that never sends these never receives them.

use serde::{Deserialize, Serialize};

/// `session:options`: what the coaching panel offers to start from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionOptions {
    /// The project's open issues (`gh issue list`), newest first; empty when `gh` does not
    /// work in the project (`issuesError` says why).
    pub issues: Vec<IssueOption>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub issues_error: Option<String>,
    /// Sessions left `active` (a crash, a closed window) that can be resumed, newest first.
    pub resumable: Vec<ResumableSession>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueOption {
    pub number: i64,
    pub title: String,
    pub labels: Vec<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumableSession {
    pub session_id: String,
    pub issue_number: Option<i64>,
    pub title: Option<String>,
    /// ISO 8601.
    pub started_at: String,
    pub phases_completed: u32,
    pub phases_total: u32,
}

/// `coaching:worked_example`: an analogous worked example for the current phase — never the
/// learner's file, never written into the project.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkedExample {
    pub phase: i64,
    pub title: String,
    pub explanation: String,
    pub language: String,
    pub example_code: String,
    pub steps: Vec<String>,
}

/// `coaching:worked_example_error`: the example could not be made; the panel offers a retry.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkedExampleError {
    pub phase: Option<i64>,
    pub error: String,
}

/// `coaching:step_check`: the phase's check — the project's own test runner with the phase's
/// test filter, run when the learner saves one of its expected files — is running, or how it
/// ended. Shown beside the phase in the coaching panel.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepCheck {
    pub phase: i64,
    pub status: crate::vocab::CheckStatus,
    /// One line: what runs, which test fails and why, or why there is no check.
    pub summary: String,
    /// Failed checks of this phase in a row (0 after a pass).
    pub consecutive_failures: u32,
    /// How long the check ran (absent while running, or when nothing ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub duration_ms: Option<u64>,
    /// The command, as the learner would type it (absent when there is none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub command: Option<String>,
}

/// `coaching:agent_activity`: what Claude Code is doing while the session waits for its plan
/// (issue 28) — one tool call as its PreToolUse hook or MCP call reaches Paige, so the panel
/// shows progress instead of an open-ended wait. Sent only while the session has no plan.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentActivity {
    pub session_id: String,
    /// The tool's name as Claude Code calls it (`Read`, `Grep`, `paige_get_session_state`…).
    pub tool: String,
    /// What it works on, in a few words: a path, a pattern, a command (may be empty).
    pub detail: String,
}

/// `session:wrapping_up`: the session's wrap-up started — from the panel's End button, Claude
/// Code's `paige_end_session` or its SessionEnd — so every ending looks the same;
/// `session:ended` and `session:completed` follow.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WrappingUp {
    pub session_id: String,
}

/// `coaching:plan_failed`: Paige could not turn Claude Code's plan into phases (the coach
/// model failed or ran out of time). The panel shows `message` — what is wrong and what to
/// do, then the details — where the plan would be, with "Ask Claude Code to plan again".
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanFailed {
    pub session_id: String,
    pub message: String,
}

/// `coaching:phase_done`: the learner marks a phase of the current plan done.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseDone {
    pub phase: i64,
}

//! Observer triage (Story 10, Haiku): should Paige nudge the learner right now?

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::ModelTier;

super::prompt_module!("observer-triage", "observer_triage", ModelTier::Haiku, ObserverTriageResponse);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ObserverTriageResponse {
    pub should_nudge: bool,
    #[schemars(range(min = 0, max = 1))]
    pub confidence: f64,
    pub signal: Signal,
    /// Internal reasoning — logged, not shown to user
    pub reasoning: String,
    /// Context passed through to nudge prompt for Claude Code
    pub suggested_context: SuggestedContext,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    WrongFile,
    ScopeDrift,
    Idle,
    PhaseComplete,
    EditLoop,
    // Paige's extension (issue 30): the learner keeps asking the AI to write the code. (A
    // plain comment: a doc comment would turn the schema's enum into a `oneOf`.)
    Delegation,
    NoNudge,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuggestedContext {
    pub current_file: Option<String>,
    pub expected_file: Option<String>,
    pub time_in_file: Option<String>,
    pub phase_description: Option<String>,
}

/// The context snapshot the Observer assembles (Story 10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriageContext {
    pub current_phase: Option<TriagePhase>,
    /// The last 20 actions.
    pub recent_actions: Vec<RecentAction>,
    pub time_since_last_save: String,
    pub time_since_last_nudge: String,
    pub dreyfus_stage: String,
    pub user_idle: bool,
    /// Paige's extension: the latest step check of the phase in progress (its test), when
    /// one ran — a check that went green is a reason to congratulate and move on; the same
    /// failure over several saves, a reason to nudge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_check: Option<StepCheckContext>,
    /// Paige's extension (issue 30): how the learner asked Claude Code in the phase in
    /// progress, when they asked anything: prompts per reliance class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliance: Option<RelianceContext>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelianceContext {
    pub prompts: u32,
    /// "Write it / fix it for me."
    pub delegation: u32,
    pub conceptual_question: u32,
    pub debugging_help: u32,
    pub verification: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCheckContext {
    /// `running`, `passed`, `failed` or `error`.
    pub status: String,
    /// Failed checks in a row (0 after a pass).
    pub consecutive_failures: u32,
    /// One line on what happened.
    pub summary: String,
    /// Human-readable relative time, e.g. "40s ago".
    pub ago: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriagePhase {
    pub number: i64,
    pub title: String,
    pub description: String,
    pub expected_files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecentAction {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Human-readable relative time, e.g. "2m ago".
    pub ago: String,
}

pub fn assemble_user_message(context: &TriageContext) -> String {
    serde_json::json!(context).to_string()
}

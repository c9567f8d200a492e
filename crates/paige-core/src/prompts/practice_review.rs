//! Practice review (Story 11, Sonnet): a kata attempt judged, with feedback and a next step.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;
pub use crate::vocab::DreyfusSignal;

super::prompt_module!("practice-review", "practice_review", ModelTier::Sonnet, PracticeReviewResponse);

/// The system prompt with `{dreyfus_stage}` filled in.
pub fn system_prompt(dreyfus_stage: &str) -> String {
    super::with_dreyfus_stage(SYSTEM_PROMPT, dreyfus_stage)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PracticeReviewResponse {
    /// Whether the solution meets the kata requirements
    pub correct: bool,
    /// Pedagogically useful feedback on the solution
    pub feedback: String,
    /// Assessed skill level 1-10 for this kata
    #[schemars(range(min = 1, max = 10))]
    pub level: i64,
    /// Whether this attempt passes the kata requirements with active constraints
    pub passed: bool,
    /// Suggested next step, or null
    pub follow_up: Option<FollowUp>,
    /// Signal about user's skill trajectory
    pub dreyfus_signal: DreyfusSignal,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FollowUp {
    #[serde(rename = "type")]
    pub kind: FollowUpType,
    /// New constraint text if type is constraint_escalation
    pub constraint: Option<String>,
    /// Why this follow-up is suggested
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FollowUpType {
    ConstraintEscalation,
    RetryHint,
    Completed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActiveConstraint {
    pub title: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreviousAttempt {
    pub code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
}

pub fn assemble_user_message(
    kata_description: &str,
    instructor_notes: &str,
    active_constraints: &[ActiveConstraint],
    user_code: &str,
    previous_attempts: &[PreviousAttempt],
) -> String {
    json!({
        "kata_description": kata_description,
        "instructor_notes": instructor_notes,
        "active_constraints": active_constraints,
        "user_code": user_code,
        "previous_attempts": previous_attempts,
    })
    .to_string()
}

//! Knowledge-gap extraction (Story 9, Sonnet): gaps and practice katas from a finished session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api::ModelTier;

super::prompt_module!(
    "knowledge-gap-extraction",
    "knowledge_gap_extraction",
    ModelTier::Sonnet,
    KnowledgeGapExtractionResponse
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KnowledgeGapExtractionResponse {
    pub knowledge_gaps: Vec<KnowledgeGap>,
    pub kata_specs: Vec<KataSpec>,
    pub session_summary: SessionSummary,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KnowledgeGap {
    pub topic: String,
    /// Observable evidence from the session
    pub evidence: String,
    pub severity: Severity,
    pub related_concepts: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KataSpec {
    /// The topic of the knowledge gap this kata practises, exactly as in knowledge_gaps
    pub gap_topic: String,
    pub title: String,
    pub description: String,
    pub scaffolding_code: String,
    pub test_cases: Vec<String>,
    /// For the reviewer only, never shown to the learner: what a good solution does and the mistakes to look for
    pub instructor_notes: String,
    pub constraints: Vec<KataConstraint>,
    pub follow_up_constraint: Option<String>,
}

/// An extra rule the learner unlocks once their kata level reaches `min_level` (as
/// `kata_specs.constraints` stores it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KataConstraint {
    pub title: String,
    pub description: String,
    /// The kata level (1-10) from which the learner may switch this constraint on
    #[schemars(range(min = 1, max = 10))]
    pub min_level: u8,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionSummary {
    #[schemars(range(min = 0))]
    pub phases_completed: i64,
    #[schemars(range(min = 0))]
    pub total_time_minutes: f64,
    #[schemars(range(min = 0))]
    pub hints_used: i64,
    #[schemars(range(min = 0))]
    pub independent_completions: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionEntry {
    pub action_type: String,
    pub data: Value,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseOutcome {
    pub title: String,
    pub status: String,
    pub hint_level: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExistingGap {
    pub topic: String,
    pub frequency: i64,
}

pub fn assemble_user_message(
    action_log: &[ActionEntry],
    phases: &[PhaseOutcome],
    existing_gaps: &[ExistingGap],
) -> String {
    json!({ "action_log": action_log, "phases": phases, "existing_gaps": existing_gaps }).to_string()
}

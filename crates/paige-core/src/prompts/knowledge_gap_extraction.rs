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
    pub title: String,
    pub description: String,
    pub scaffolding_code: String,
    pub test_cases: Vec<String>,
    pub constraints: Vec<String>,
    pub follow_up_constraint: Option<String>,
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

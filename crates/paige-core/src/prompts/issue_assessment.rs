//! Issue assessment (Story 12, Sonnet): GitHub issues ranked by learning suitability.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api::ModelTier;
pub use crate::vocab::{Difficulty, Suitability, Urgency};

super::prompt_module!("issue-assessment", "issue_assessment", ModelTier::Sonnet, IssueAssessmentResponse);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IssueAssessmentResponse {
    #[schemars(length(max = 10))]
    pub issues: Vec<AssessedIssue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AssessedIssue {
    #[schemars(range(min = 1))]
    pub number: i64,
    pub title: String,
    /// Paige-voice digest of the issue
    pub summary: String,
    pub suitability: Suitability,
    pub suitability_reason: String,
    pub estimated_difficulty: Difficulty,
    pub relevant_skills: Vec<String>,
    #[schemars(range(min = 0, max = 1))]
    pub priority_score: f64,
    pub priority_factors: PriorityFactors,
    pub learning_opportunities: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PriorityFactors {
    pub user_tagged: bool,
    pub similar_to_recent_work: bool,
    pub addresses_knowledge_gap: bool,
    pub team_urgency: Urgency,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentSession {
    pub issue_title: Option<String>,
    pub completed_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapSummary {
    pub topic: String,
    pub severity: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelatedMemory {
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
}

/// `issues` are `gh issue list --json ...` objects and `dreyfus_assessments` the stored
/// assessments, both passed through as JSON.
pub fn assemble_user_message(
    issues: &[Value],
    dreyfus_assessments: &[Value],
    recent_sessions: &[RecentSession],
    knowledge_gaps: &[GapSummary],
    memories: &[RelatedMemory],
) -> String {
    json!({
        "github_issues": issues,
        "user_dreyfus_stages": dreyfus_assessments,
        "recent_sessions": recent_sessions,
        "knowledge_gaps": knowledge_gaps,
        "related_memories": memories,
    })
    .to_string()
}

/// The model's priority factors (snake_case, as the model answers) as the dashboard's
/// payload carries them (camelCase).
impl From<PriorityFactors> for crate::protocol::PriorityFactors {
    fn from(factors: PriorityFactors) -> Self {
        crate::protocol::PriorityFactors {
            user_tagged: factors.user_tagged,
            similar_to_recent_work: factors.similar_to_recent_work,
            addresses_knowledge_gap: factors.addresses_knowledge_gap,
            team_urgency: factors.team_urgency,
        }
    }
}

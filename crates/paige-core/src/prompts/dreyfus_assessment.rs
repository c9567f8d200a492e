//! Dreyfus assessment (Story 9, Sonnet): skill stages from evidence across sessions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;

super::prompt_module!("dreyfus-assessment", "dreyfus_assessment", ModelTier::Sonnet, DreyfusAssessmentResponse);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DreyfusAssessmentResponse {
    pub assessments: Vec<Assessment>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Assessment {
    pub skill_area: String,
    pub stage: DreyfusStage,
    pub previous_stage: Option<DreyfusStage>,
    #[schemars(range(min = 0, max = 1))]
    pub confidence: f64,
    /// Observable evidence supporting the assessment
    pub evidence: String,
    /// How to adjust coaching for this stage
    pub recommendation: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DreyfusStage {
    Novice,
    AdvancedBeginner,
    Competent,
    Proficient,
    Expert,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEvidence {
    pub skill_area: String,
    pub sessions: i64,
    pub hint_trend: String,
    pub completion_rate: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurrentAssessment {
    pub skill_area: String,
    pub stage: String,
    pub confidence: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecentSummary {
    pub phases_completed: i64,
    pub hints_used: i64,
    pub independent_completions: i64,
}

pub fn assemble_user_message(
    accumulated_evidence: &[SkillEvidence],
    current_assessments: &[CurrentAssessment],
    recent_summary: &RecentSummary,
) -> String {
    json!({
        "accumulated_evidence": accumulated_evidence,
        "current_assessments": current_assessments,
        "recent_session": recent_summary,
    })
    .to_string()
}

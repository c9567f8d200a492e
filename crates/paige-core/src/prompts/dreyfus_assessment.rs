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
    /// Paige's extension (issue 30): the area's comprehension answers this session, when it
    /// had phases — what the learner understood of their own code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comprehension: Option<ComprehensionEvidence>,
    /// Solutions Claude Code showed that the learner then typed, in the area's phases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solutions_typed: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComprehensionEvidence {
    pub correct: i64,
    pub partial: i64,
    pub incorrect: i64,
    /// Skipped, or never answered.
    pub skipped: i64,
    /// The concepts of the wrong or partial answers.
    pub concepts_missed: Vec<String>,
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

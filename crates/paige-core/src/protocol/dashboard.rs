//! The dashboard's payloads (spec Story 12): its state from SQLite, the ranked issues, the
//! learning materials.

use serde::{Deserialize, Serialize};

pub use crate::vocab::{Difficulty, Suitability, Urgency};

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DashboardDreyfus {
    pub skill_areas: Vec<SkillArea>,
    pub overall_stage: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillArea {
    pub name: String,
    pub stage: String,
    pub score: f64,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DashboardState {
    pub dreyfus: Vec<DreyfusItem>,
    pub stats: DashboardStats,
    pub in_progress_sessions: Vec<InProgressSession>,
    pub katas: Vec<KataSummary>,
    /// Paige's extension (issue 30): reliance on the AI, solutions shown, comprehension.
    #[serde(default)]
    pub learning: super::DashboardLearning,
    /// Paige's extension (issue 31): spaced reviews due now.
    #[serde(default)]
    pub reviews_due: u32,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DreyfusItem {
    pub skill_area: String,
    pub stage: String,
    pub confidence: f64,
    pub assessed_at: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DashboardStats {
    pub period: String,
    pub sessions_completed: u32,
    pub total_coaching_minutes: f64,
    pub issues_worked_on: u32,
    pub knowledge_gaps_identified: u32,
    pub knowledge_gaps_addressed: u32,
    pub hints_used: u32,
    pub api_cost_total: f64,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InProgressSession {
    pub id: String,
    pub issue_number: Option<i64>,
    pub issue_title: Option<String>,
    pub started_at: String,
    /// Paige's extension (issue 40): the session being coached now (the others wait to be
    /// resumed), its plan's phases done and in all, and what its model calls cost so far.
    #[serde(default)]
    pub live: bool,
    #[serde(default)]
    pub phases_completed: u32,
    #[serde(default)]
    pub phases_total: u32,
    #[serde(default)]
    pub cost_so_far: f64,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KataSummary {
    pub id: String,
    pub title: String,
    pub topic: String,
    pub attempts_count: u32,
    pub best_level: Option<u8>,
    pub constraint_count: u32,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DashboardIssues {
    pub issues: Vec<DashboardIssue>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DashboardIssue {
    pub number: i64,
    pub title: String,
    pub summary: String,
    pub suitability: Suitability,
    pub suitability_reason: String,
    pub estimated_difficulty: Difficulty,
    pub relevant_skills: Vec<String>,
    pub priority_score: f64,
    pub priority_factors: PriorityFactors,
    pub learning_opportunities: Vec<String>,
    /// Paige's extension: the issue's page, as `gh` gives it (opened in the system browser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub url: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriorityFactors {
    pub user_tagged: bool,
    pub similar_to_recent_work: bool,
    pub addresses_knowledge_gap: bool,
    pub team_urgency: Urgency,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DashboardMaterials {
    pub recommendations: Vec<MaterialRecommendation>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MaterialRecommendation {
    pub knowledge_gap: String,
    pub resources: Vec<LearningResource>,
    pub study_order: String,
    pub practice_connection: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceKind {
    Documentation,
    Article,
    Video,
    Tutorial,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relevance {
    Direct,
    DeepDive,
    Supplementary,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LearningResource {
    #[serde(rename = "type")]
    pub kind: ResourceKind,
    pub title: String,
    pub url: String,
    pub description: String,
    pub relevance: Relevance,
    pub estimated_time: String,
}

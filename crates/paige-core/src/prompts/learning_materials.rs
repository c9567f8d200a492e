//! Learning materials (Story 12, Sonnet + web search): resources for each knowledge gap.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::{ModelTier, ServerTool};

super::prompt_module!("learning-materials", "learning_materials", ModelTier::Sonnet, LearningMaterialsResponse);

/// The system prompt with `{dreyfus_stage}` filled in.
pub fn system_prompt(dreyfus_stage: &str) -> String {
    super::with_dreyfus_stage(SYSTEM_PROMPT, dreyfus_stage)
}

/// The server tool this call runs with (D83).
pub fn tools() -> Vec<ServerTool> {
    vec![ServerTool::web_search()]
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LearningMaterialsResponse {
    pub recommendations: Vec<Recommendation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Recommendation {
    pub knowledge_gap: String,
    pub resources: Vec<Resource>,
    /// Recommended order to consume resources
    pub study_order: String,
    /// Link to relevant kata, or null
    pub practice_connection: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Resource {
    #[serde(rename = "type")]
    pub kind: ResourceType,
    pub title: String,
    #[schemars(url)]
    pub url: String,
    pub description: String,
    pub relevance: ResourceRelevance,
    pub estimated_time: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResourceType {
    Documentation,
    Article,
    Video,
    Tutorial,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResourceRelevance {
    Direct,
    DeepDive,
    Supplementary,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GapInput {
    pub topic: String,
    pub severity: String,
    pub related_concepts: Vec<String>,
    pub frequency: i64,
}

pub fn assemble_user_message(gaps: &[GapInput], tech_stack: &str, existing_kata_titles: &[String]) -> String {
    json!({ "knowledge_gaps": gaps, "tech_stack": tech_stack, "available_katas": existing_kata_titles }).to_string()
}

//! Memory summarisation (Story 9, Haiku): a session condensed into searchable memories.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;
pub use crate::vocab::Importance;

super::prompt_module!("memory-summarisation", "memory_summarisation", ModelTier::Haiku, MemorySummarisationResponse);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemorySummarisationResponse {
    pub memories: Vec<Memory>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Memory {
    /// Concise memory text for embedding and future retrieval
    pub content: String,
    pub tags: Vec<String>,
    pub importance: Importance,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletedPhase {
    pub title: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapSummary {
    pub topic: String,
    pub severity: String,
}

pub fn assemble_user_message(
    session_transcript: &str,
    issue_title: &str,
    phases_completed: &[CompletedPhase],
    knowledge_gaps: &[GapSummary],
) -> String {
    json!({
        "transcript": session_transcript,
        "issue": issue_title,
        "phases": phases_completed,
        "gaps": knowledge_gaps,
    })
    .to_string()
}

//! Memory retrieval filter (Story 9, Haiku): keeps the memories that matter for this issue.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::api::ModelTier;

super::prompt_module!(
    "memory-retrieval-filter",
    "memory_retrieval_filter",
    ModelTier::Haiku,
    MemoryRetrievalFilterResponse
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryRetrievalFilterResponse {
    pub relevant_memories: Vec<RelevantMemory>,
    pub discarded: Vec<DiscardedMemory>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelevantMemory {
    /// The original memory text
    pub content: String,
    pub relevance: Relevance,
    /// How this memory connects to the current issue
    pub connection: String,
    /// How the coach should reference this memory
    pub use_in_coaching: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Relevance {
    Direct,
    Related,
    Contextual,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiscardedMemory {
    pub content: String,
    pub reason: String,
}

/// A memory as semantic search returned it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawMemory {
    pub content: String,
    pub metadata: Map<String, Value>,
}

pub fn assemble_user_message(issue_summary: &str, plan_text: &str, raw_memories: &[RawMemory]) -> String {
    json!({ "issue_summary": issue_summary, "plan_summary": plan_text, "candidate_memories": raw_memories }).to_string()
}

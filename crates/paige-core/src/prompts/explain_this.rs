//! Explain this (Story 11, Sonnet): an explanation of selected code at the learner's level.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;

super::prompt_module!("explain-this", "explain_this", ModelTier::Sonnet, ExplainThisResponse);

/// The system prompt with `{dreyfus_stage}` filled in.
pub fn system_prompt(dreyfus_stage: &str) -> String {
    super::with_dreyfus_stage(SYSTEM_PROMPT, dreyfus_stage)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExplainThisResponse {
    /// Clear explanation of the selected code
    pub explanation: String,
    /// Key concepts the code demonstrates
    pub key_concepts: Vec<String>,
    /// An analogy to aid understanding, or null if not useful
    pub analogy: Option<String>,
    /// Files related to this code based on visible imports/references, or null
    pub related_files: Option<Vec<String>>,
    /// How this code relates to the user's current coaching phase, or null
    pub phase_connection: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseContext {
    pub number: i64,
    pub title: String,
    pub description: String,
}

pub fn assemble_user_message(
    selected_text: &str,
    surrounding_context: &str,
    path: &str,
    language: &str,
    phase_context: Option<&PhaseContext>,
) -> String {
    json!({
        "selected_code": selected_text,
        "surrounding_context": surrounding_context,
        "file_path": path,
        "language": language,
        "current_phase": phase_context,
    })
    .to_string()
}

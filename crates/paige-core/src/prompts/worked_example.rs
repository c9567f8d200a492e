//! Worked example (Paige's own, Sonnet): "just show me" — an analogous example for the
//! phase the learner is stuck on, never their own code.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;

super::prompt_module!("worked-example", "worked_example", ModelTier::Sonnet, WorkedExampleResponse);

/// The system prompt with `{dreyfus_stage}` filled in.
pub fn system_prompt(dreyfus_stage: &str) -> String {
    super::with_dreyfus_stage(SYSTEM_PROMPT, dreyfus_stage)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkedExampleResponse {
    /// A short title naming the analogous problem
    pub title: String,
    /// The technique in plain words, at the learner's level
    pub explanation: String,
    /// The language of the example code (the learner's language)
    pub language: String,
    /// The example: an analogous problem, never the learner's own code
    pub example_code: String,
    /// The steps the example takes, in order, each one sentence
    pub steps: Vec<String>,
}

/// What the model is told: the phase, the issue, the language and the files it touches
/// (names only: the learner's code is never sent for a worked example).
pub fn assemble_user_message(
    phase_title: &str,
    phase_description: &str,
    issue_title: Option<&str>,
    language: &str,
) -> String {
    json!({
        "phase": { "title": phase_title, "description": phase_description },
        "issue_title": issue_title,
        "language": language,
    })
    .to_string()
}

//! Coach agent (Story 9, Sonnet): turns an implementation plan into phased, hinted coaching.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;
pub use crate::vocab::Difficulty;

super::prompt_module!("coach-agent", "coach_agent", ModelTier::Sonnet, CoachAgentResponse);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoachAgentResponse {
    pub phases: Vec<CoachPhase>,
    /// Cross-session connection, or null
    pub memory_connection: Option<String>,
    pub estimated_difficulty: Difficulty,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoachPhase {
    #[schemars(range(min = 1))]
    pub number: i64,
    pub title: String,
    /// Coaching message explaining what to do and why
    pub description: String,
    pub expected_files: Vec<String>,
    pub hint_level: HintLevel,
    pub hints: PhaseHints,
    pub knowledge_gap_opportunities: Vec<String>,
    /// The skill area the phase exercises, in a few lowercase words reused across phases
    /// and sessions (e.g. "error handling", "testing", "async"): how Paige tracks mastery
    pub skill_area: Option<String>,
    /// The name or pattern of the test that passes when this phase is done, or null: Paige
    /// runs the project's own test runner with it (e.g. `cargo test <it>`) when the learner
    /// saves an expected file
    pub test_filter: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HintLevel {
    None,
    File,
    Region,
    Line,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PhaseHints {
    pub file_hints: Vec<FileHint>,
    pub line_hints: Vec<LineHint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileHint {
    pub path: String,
    pub style: FileHintStyle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileHintStyle {
    Suggested,
    Important,
    Critical,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LineHint {
    pub path: String,
    #[schemars(range(min = 1))]
    pub start: i64,
    #[schemars(range(min = 1))]
    pub end: i64,
    pub style: LineHintStyle,
    pub hover_text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineHintStyle {
    Hint,
    Focus,
    Warning,
}

/// A memory the retrieval filter kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoachingMemory {
    pub content: String,
    pub connection: String,
    pub use_in_coaching: String,
}

pub fn assemble_user_message(plan_text: &str, dreyfus_stage: &str, relevant_memories: &[CoachingMemory]) -> String {
    json!({ "plan": plan_text, "dreyfus_stage": dreyfus_stage, "relevant_memories": relevant_memories }).to_string()
}

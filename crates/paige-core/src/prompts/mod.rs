//! Prompt modules (spec Stories 9–12): one per model call.
//!
//! Each module holds the call's system prompt and response JSON Schema — both checked in
//! under the top-level `prompts/<name>/` and compiled in with `include_str!` — plus the Rust
//! response type and the function that assembles the user message. The checked-in
//! `schema.json` is generated from the Rust type: `PAIGE_BLESS=1 cargo test -p paige-core
//! prompt` rewrites it, and the test fails while the two differ.
//!
//! `coach_persona` and `coach_kickoff` are the odd ones out: not model calls of Paige's, but
//! what Claude Code gets — its system prompt (`--append-system-prompt`) and the first
//! message of a session that has no plan yet. `intake_interviewer` is not in [`ALL`]
//! either: its replies stream as plain text, with no schema.

pub mod coach_agent;
pub mod coach_kickoff;
pub mod coach_persona;
pub mod comprehension_check;
pub mod comprehension_grade;
pub mod dreyfus_assessment;
pub mod explain_this;
pub mod intake_control;
pub mod intake_interviewer;
pub mod issue_assessment;
pub mod knowledge_gap_extraction;
pub mod learning_materials;
pub mod memory_retrieval_filter;
pub mod memory_summarisation;
pub mod observer_triage;
pub mod practice_review;
pub mod reliance_classification;
pub mod review_question;
pub mod worked_example;

use serde_json::Value;

use crate::api::ModelTier;

/// What every prompt module declares, for tests and tooling that go over all of them.
#[derive(Debug, Clone, Copy)]
pub struct PromptModule {
    /// The folder under `prompts/`.
    pub name: &'static str,
    /// Logged as `api_call_log.call_type`.
    pub call_type: &'static str,
    pub model: ModelTier,
    pub system_prompt: &'static str,
    /// The checked-in `prompts/<name>/schema.json`.
    pub schema_json: &'static str,
    /// The schema generated from the Rust response type right now.
    pub generated_schema: fn() -> Value,
    /// Parses an answer into the Rust response type.
    pub parse: fn(&str) -> Result<(), serde_json::Error>,
}

/// The ten model calls of the spec, Paige's own worked example, the intake's CONTROL scoring,
/// and the learning signals' calls (issue 30): the reliance classification fallback and the
/// comprehension check's questions and grades; spaced review's question (issue 31).
pub const ALL: &[PromptModule] = &[
    memory_retrieval_filter::MODULE,
    coach_agent::MODULE,
    knowledge_gap_extraction::MODULE,
    dreyfus_assessment::MODULE,
    memory_summarisation::MODULE,
    observer_triage::MODULE,
    explain_this::MODULE,
    practice_review::MODULE,
    issue_assessment::MODULE,
    learning_materials::MODULE,
    worked_example::MODULE,
    intake_control::MODULE,
    reliance_classification::MODULE,
    comprehension_check::MODULE,
    comprehension_grade::MODULE,
    review_question::MODULE,
];

/// Fills `{dreyfus_stage}` in a system prompt that has it.
fn with_dreyfus_stage(template: &str, dreyfus_stage: &str) -> String {
    template.replace("{dreyfus_stage}", dreyfus_stage)
}

/// Declares a module's [`PromptModule`] and makes its response type a
/// [`StructuredOutput`](crate::api::StructuredOutput) whose schema is generated once.
macro_rules! prompt_module {
    ($name:literal, $call_type:literal, $tier:expr, $response:ty) => {
        /// The system prompt, from `prompts/<name>/system.md`.
        pub const SYSTEM_PROMPT: &str = include_str!(concat!("../../../../prompts/", $name, "/system.md"));
        /// The response schema, from `prompts/<name>/schema.json` (generated from the Rust type).
        pub const SCHEMA_JSON: &str = include_str!(concat!("../../../../prompts/", $name, "/schema.json"));
        pub const CALL_TYPE: &str = $call_type;
        pub const MODEL: $crate::api::ModelTier = $tier;

        pub const MODULE: $crate::prompts::PromptModule = $crate::prompts::PromptModule {
            name: $name,
            call_type: CALL_TYPE,
            model: MODEL,
            system_prompt: SYSTEM_PROMPT,
            schema_json: SCHEMA_JSON,
            generated_schema: $crate::api::structured_schema::<$response>,
            parse: |text| serde_json::from_str::<$response>(text).map(|_| ()),
        };

        impl $crate::api::StructuredOutput for $response {
            fn output_schema() -> &'static serde_json::Value {
                static SCHEMA: std::sync::LazyLock<serde_json::Value> =
                    std::sync::LazyLock::new($crate::api::structured_schema::<$response>);
                &SCHEMA
            }
        }
    };
}
use prompt_module;

//! Reliance classification (issue 30, Haiku): how a prompt the learner typed to Claude Code
//! leans on the AI. The local rules in [`crate::learning::reliance`] decide most prompts; this
//! call decides the ones they leave unsure.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;

super::prompt_module!(
    "reliance-classification",
    "reliance_classification",
    ModelTier::Haiku,
    RelianceClassificationResponse
);

/// The model sees at most this many characters of a prompt.
pub const MAX_PROMPT_CHARS: usize = 4_000;

/// Appended to a prompt cut at [`MAX_PROMPT_CHARS`].
pub const CUT_MARKER: &str = "\n[… prompt cut: only its first 4000 characters are shown]";

/// How a prompt leans on the AI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelianceClass {
    /// The learner asks the AI to write, change or finish the code for them.
    Delegation,
    /// The learner brings an error, a failure or unexpected behaviour and asks for help with it.
    DebuggingHelp,
    /// The learner asks how or why something works, or what a concept means.
    ConceptualQuestion,
    /// The learner asks the AI to check work they did or an idea they have.
    Verification,
    /// Anything else: greetings, thanks, acknowledgements, "continue", slash-commands.
    Other,
}

impl RelianceClass {
    /// Every class, in the schema's order.
    pub const ALL: [RelianceClass; 5] = [
        RelianceClass::Delegation,
        RelianceClass::DebuggingHelp,
        RelianceClass::ConceptualQuestion,
        RelianceClass::Verification,
        RelianceClass::Other,
    ];

    /// The class's name, spelled as in the schema.
    pub fn as_str(self) -> &'static str {
        match self {
            RelianceClass::Delegation => "delegation",
            RelianceClass::DebuggingHelp => "debugging_help",
            RelianceClass::ConceptualQuestion => "conceptual_question",
            RelianceClass::Verification => "verification",
            RelianceClass::Other => "other",
        }
    }

    /// The class named `s` (the schema's spelling), if any.
    pub fn parse(s: &str) -> Option<RelianceClass> {
        RelianceClass::ALL.into_iter().find(|class| class.as_str() == s)
    }
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RelianceClassificationResponse {
    /// How the prompt leans on the AI
    pub class: RelianceClass,
    /// Why, in one short line (logged, not shown to the learner)
    pub reason: String,
}

/// The user message: the learner's prompt (its first [`MAX_PROMPT_CHARS`] characters, with
/// [`CUT_MARKER`] when cut) and the title of the phase in progress, as JSON so the prompt
/// cannot break out of its field.
pub fn assemble_user_message(prompt: &str, phase_title: Option<&str>) -> String {
    let prompt = match prompt.char_indices().nth(MAX_PROMPT_CHARS) {
        Some((cut, _)) => format!("{}{CUT_MARKER}", &prompt[..cut]),
        None => prompt.to_owned(),
    };
    json!({ "prompt": prompt, "current_phase": phase_title }).to_string()
}

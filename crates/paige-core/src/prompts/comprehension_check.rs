//! Comprehension check (issue 30, Haiku): one or two short questions about the learner's own
//! change in the phase just completed — predict an output, explain why a line is needed, say
//! what happens on an edge case. Each question quotes the lines of the diff it is about;
//! Paige drops a question whose quote is not in the diff (the model made it up).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;

super::prompt_module!("comprehension-check", "comprehension_check", ModelTier::Haiku, ComprehensionCheckResponse);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComprehensionCheckResponse {
    /// One or two questions; more are ignored.
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    pub kind: QuestionKind,
    /// The question, one or two sentences, addressed to the learner.
    pub question: String,
    /// The line or lines of the learner's diff the question is about, copied exactly
    /// (without the leading `+`/`-`).
    pub quote: String,
    /// The concept the question checks, in a few words (e.g. "early return on error").
    pub concept: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuestionKind {
    PredictOutput,
    ExplainLine,
    EdgeCase,
}

impl QuestionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionKind::PredictOutput => "predict_output",
            QuestionKind::ExplainLine => "explain_line",
            QuestionKind::EdgeCase => "edge_case",
        }
    }

    pub fn parse(s: &str) -> Option<QuestionKind> {
        [QuestionKind::PredictOutput, QuestionKind::ExplainLine, QuestionKind::EdgeCase]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// The phase and the learner's change in it (a unified diff per file, already capped).
pub fn assemble_user_message(
    phase_title: &str,
    phase_description: &str,
    skill_area: Option<&str>,
    dreyfus_stage: &str,
    diff: &str,
) -> String {
    json!({
        "phase": { "title": phase_title, "description": phase_description, "skill_area": skill_area },
        "dreyfus_stage": dreyfus_stage,
        "learner_diff": diff,
    })
    .to_string()
}

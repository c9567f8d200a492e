//! Comprehension grade (issue 30, Haiku): one answer of the learner's to a comprehension
//! question, graded `correct | partial | incorrect` with one line of why and the concept it
//! touched.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;

super::prompt_module!("comprehension-grade", "comprehension_grade", ModelTier::Haiku, ComprehensionGradeResponse);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComprehensionGradeResponse {
    pub grade: Grade,
    /// One line on why, addressed to the learner.
    pub why: String,
    /// The concept the answer touched, in a few words.
    pub concept: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    Correct,
    Partial,
    Incorrect,
}

impl Grade {
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Correct => "correct",
            Grade::Partial => "partial",
            Grade::Incorrect => "incorrect",
        }
    }

    pub fn parse(s: &str) -> Option<Grade> {
        [Grade::Correct, Grade::Partial, Grade::Incorrect].into_iter().find(|g| g.as_str() == s)
    }
}

/// The question (with the lines it quotes and the concept it checks) and the learner's answer.
pub fn assemble_user_message(question: &str, kind: &str, quote: &str, concept: &str, answer: &str) -> String {
    json!({
        "question": { "kind": kind, "text": question, "quoted_code": quote, "concept": concept },
        "learner_answer": answer,
    })
    .to_string()
}

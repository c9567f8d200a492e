//! Review question (issue 31, Haiku): one short question that brings back something the
//! learner found hard — a knowledge gap, a kata's idea, a concept they answered wrong — for a
//! spaced review. The answer is graded by the comprehension grader.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;

super::prompt_module!("review-question", "review_question", ModelTier::Haiku, ReviewQuestionResponse);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewQuestionResponse {
    /// The question, one or two sentences, answerable in a sentence or two without code.
    pub question: String,
    /// The concept it checks, in a few words.
    pub concept: String,
}

/// The item: its kind (`gap`, `kata`, `concept`), topic, skill area and what it came from.
pub fn assemble_user_message(
    kind: &str,
    topic: &str,
    skill_area: Option<&str>,
    context: &serde_json::Value,
    reviews_so_far: u32,
) -> String {
    json!({
        "item": { "kind": kind, "topic": topic, "skill_area": skill_area, "context": context },
        "reviews_so_far": reviews_so_far,
    })
    .to_string()
}

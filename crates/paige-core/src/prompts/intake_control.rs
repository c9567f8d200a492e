//! CONTROL scoring (intake interview, Haiku): one answer scored for adaptability, creativity
//! and reasoning, delta-only — the model sees the last question and answer and nothing else.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::ModelTier;

super::prompt_module!("intake-control", "intake_control", ModelTier::Haiku, IntakeControlResponse);

/// The highest pillar score.
pub const MAX_SCORE: i64 = 100;

/// A quote counts when it has at least this many consecutive words of the answer…
const QUOTE_MIN_WORDS: usize = 3;
/// …or at least this many characters of it (so a single long word can be quoted).
const QUOTE_MIN_CHARS: usize = 12;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IntakeControlResponse {
    /// Evidence of adaptability in the answer
    pub adaptability: PillarScore,
    /// Evidence of creativity in the answer
    pub creativity: PillarScore,
    /// Evidence of reasoning in the answer
    pub reasoning: PillarScore,
    /// Whether the answer is about a different project than the question asked about
    pub new_project: bool,
    /// A short name for the project the answer talks about, or null
    pub project_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PillarScore {
    /// Evidence of the trait in this answer, 0 (none) to 100
    #[schemars(range(min = 0, max = 100))]
    pub score: i64,
    /// Why: a verbatim quote from the answer, or that there is no evidence
    pub rationale: String,
}

/// The user message: the last question and the last answer, and nothing else. JSON, so an
/// answer that contains quotes, braces or the field names cannot break out of its field.
pub fn user_message(last_question: &str, last_answer: &str) -> String {
    json!({ "last_question": last_question, "last_answer": last_answer }).to_string()
}

impl IntakeControlResponse {
    /// The three pillars by name, in the schema's order.
    pub fn pillars(&self) -> [(&'static str, &PillarScore); 3] {
        [("adaptability", &self.adaptability), ("creativity", &self.creativity), ("reasoning", &self.reasoning)]
    }

    /// 0/0/0: the answer showed no evidence of any trait (the zero-run rule counts these).
    pub fn is_zero(&self) -> bool {
        self.pillars().iter().all(|(_, pillar)| pillar.score == 0)
    }

    /// Checks what the schema cannot: every score in 0..=100, and every non-zero score's
    /// rationale quotes `answer` (≥ 3 consecutive words or ≥ 12 characters of it, compared
    /// without case, whitespace, quotes or punctuation; an answer shorter than that counts
    /// when quoted whole). A zero score may say anything. The runner treats an error as a
    /// failed CONTROL call, so the message names each pillar that failed and why.
    pub fn validate(&self, answer: &str) -> Result<(), String> {
        let answer_words = words(answer);
        let mut problems = Vec::new();
        for (name, pillar) in self.pillars() {
            if !(0..=MAX_SCORE).contains(&pillar.score) {
                problems.push(format!("{name}: score {} is outside 0..={MAX_SCORE}", pillar.score));
            } else if pillar.score > 0 && !quotes_answer(&pillar.rationale, &answer_words) {
                problems.push(format!(
                    "{name}: score {} but the rationale quotes nothing from the answer \
                     (needs {QUOTE_MIN_WORDS} consecutive words or {QUOTE_MIN_CHARS} characters of it)",
                    pillar.score
                ));
            }
        }
        if problems.is_empty() { Ok(()) } else { Err(format!("invalid CONTROL answer: {}", problems.join("; "))) }
    }
}

impl IntakeControlResponse {
    /// The answer as the interview uses it (issue 41: the meter never moved with a real
    /// model, whose answers each had a pillar or two backed by a paraphrase rather than a quote,
    /// and one such pillar discarded the whole turn): a pillar whose rationale quotes nothing of
    /// `answer` counts as no evidence (0, the rationale saying why), and the others keep their
    /// scores. Only a score outside 0..=100 makes the answer unusable.
    pub fn verified(mut self, answer: &str) -> Result<IntakeControlResponse, String> {
        let out_of_range: Vec<String> = self
            .pillars()
            .iter()
            .filter(|(_, p)| !(0..=MAX_SCORE).contains(&p.score))
            .map(|(name, p)| format!("{name}: score {} is outside 0..={MAX_SCORE}", p.score))
            .collect();
        if !out_of_range.is_empty() {
            return Err(format!("invalid CONTROL answer: {}", out_of_range.join("; ")));
        }
        let answer_words = words(answer);
        for pillar in [&mut self.adaptability, &mut self.creativity, &mut self.reasoning] {
            if pillar.score > 0 && !quotes_answer(&pillar.rationale, &answer_words) {
                pillar.rationale = format!(
                    "Counted as no evidence: the score of {} came with no quote from the answer ({})",
                    pillar.score, pillar.rationale
                );
                pillar.score = 0;
            }
        }
        Ok(self)
    }
}

/// Lowercased words, with quotes, punctuation and whitespace as separators.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// Whether some run of the answer's words long enough to be a quote appears, as whole words,
/// in the rationale.
fn quotes_answer(rationale: &str, answer: &[String]) -> bool {
    if answer.is_empty() {
        return false;
    }
    let haystack = format!(" {} ", words(rationale).join(" "));
    let found = |run: &[String]| haystack.contains(&format!(" {} ", run.join(" ")));
    let whole_answer_is_short = answer.len() < QUOTE_MIN_WORDS && answer.join(" ").chars().count() < QUOTE_MIN_CHARS;
    if whole_answer_is_short {
        return found(answer);
    }
    (1..=QUOTE_MIN_WORDS).any(|len| {
        answer.windows(len).any(|run| {
            let long_enough = len == QUOTE_MIN_WORDS || run.join(" ").chars().count() >= QUOTE_MIN_CHARS;
            long_enough && found(run)
        })
    })
}

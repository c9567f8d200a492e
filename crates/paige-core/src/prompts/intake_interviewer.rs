//! The intake interviewer (Haiku, streamed plain text): Paige's side of the background
//! conversation before coding, plus the app-authored lines the interview falls back on.
//!
//! Not in [`super::ALL`]: its replies are plain text, so it has no response schema. Haiku,
//! not Sonnet: the interview is time-boxed to four minutes and every reply is one or two
//! short sentences, so time to first sentence matters more than depth; the coding-invitation
//! detector and the scripted fallbacks cover a reply that strays.

use crate::api::ModelTier;

/// From `prompts/intake-interviewer/system.md`.
pub const SYSTEM_PROMPT: &str = include_str!("../../../../prompts/intake-interviewer/system.md");
/// Logged as `api_call_log.call_type`.
pub const CALL_TYPE: &str = "intake_interviewer";
pub const MODEL: ModelTier = ModelTier::Haiku;

/// Appended to the system prompt when a reply is regenerated because the detector flagged
/// it: the model is told plainly what went wrong and what to do instead.
pub const STRONGER_INSTRUCTION: &str = "\n\nIMPORTANT: your previous reply was withheld because it \
offered or suggested coding. Do not mention writing, building or implementing anything now, and \
do not offer any exercise, task, challenge, kata, problem or live coding. Reply with exactly one \
short question about the project the learner is describing: what they did, why, or what changed.";

/// The spec's question after two consecutive 0/0/0 answers (user story 2), word for word.
pub const ANOTHER_PROJECT_QUESTION: &str = "Would you like to share another challenging project you worked on?";

/// Scripted background questions, app-authored: the first question of every interview, and
/// the reply shown when the model's reply is flagged twice. Each asks about one past project
/// and invites evidence of adaptability, creativity or reasoning.
pub const BACKGROUND_QUESTIONS: &[&str] = &[
    "Tell me about a challenging project you worked on recently. What made it hard?",
    "What was the trickiest problem you ran into on that project, and how did you approach it?",
    "Was there a moment when your first plan didn't work out? What did you change?",
    "Why did you choose the approach you ended up with over the alternatives?",
    "Was there a part of that project where you came up with an unusual idea or workaround?",
    "How did you figure out what was going wrong when something broke?",
    "If the requirements changed while you were working on it, how did you adapt?",
    "What would you do differently on that project if you started it again today?",
];

/// Where the scripted coding question at the transition comes from, in the issue's order of
/// preference: the configured one, else the session's issue, else a kata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodingTask<'a> {
    /// A question configured for this interview, shown as written.
    Configured(&'a str),
    /// The session's issue, by title.
    Issue(&'a str),
    /// Work the learner typed (no issue), as they put it.
    Typed(&'a str),
    /// A kata, by title.
    Kata(&'a str),
}

/// The scripted coding question the app presents at the transition (plain text, app-authored,
/// never the model's). A configured question is shown trimmed, a title on one line; a blank
/// one falls back to a generic task.
pub fn coding_question(task: CodingTask<'_>) -> String {
    const OPENING: &str = "Thanks, that gives me a good picture of how you work. Now let's switch to coding.";
    match task {
        CodingTask::Configured(text) if !text.trim().is_empty() => text.trim().to_owned(),
        CodingTask::Issue(title) if !one_line(title).is_empty() => format!(
            "{OPENING} Your task is the issue \u{201c}{}\u{201d}. Read it through, then tell me in a sentence \
             or two how you plan to start.",
            one_line(title)
        ),
        CodingTask::Typed(title) if !one_line(title).is_empty() => format!(
            "{OPENING} Your task: \u{201c}{}\u{201d}. Tell me in a sentence or two how you plan to start.",
            one_line(title)
        ),
        CodingTask::Kata(title) if !one_line(title).is_empty() => format!(
            "{OPENING} Your task is the kata \u{201c}{}\u{201d}. Read it through, then tell me in a sentence \
             or two how you plan to start.",
            one_line(title)
        ),
        _ => format!("{OPENING} Tell me in a sentence or two how you plan to start on this session's task."),
    }
}

/// `text` with runs of whitespace (newlines too) collapsed to one space, trimmed.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

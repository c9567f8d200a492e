//! Learning signals (issue 30): what Paige measures about the learner's understanding.
//!
//! - **Comprehension checks** (`comprehension.rs`): when a phase completes, one or two short
//!   questions about the learner's own change in it (the diff of the phase's files against
//!   their content when the plan arrived), written by Haiku; each answer graded by Haiku.
//!   Never blocks the next phase; a failure is a note with Retry; unanswered questions expire
//!   when the session ends.
//! - **Reliance** (`reliance.rs`, `prompts.rs`): every prompt the learner types to Claude
//!   Code (UserPromptSubmit), classified by local rules, by Haiku only where they cannot tell;
//!   kept on this machine; a gauge in the coaching panel and a chart on the dashboard.
//! - **Solutions shown** (`shingles.rs`, `solutions.rs`): after each turn of Claude Code's
//!   (Stop), its reply's code blocks are fingerprinted; when the learner's next edits
//!   reproduce one, "shown, then typed" is recorded. No model call.
//!
//! [`Learning`] owns its state and gets what it uses when `Core::open` builds it: the shared
//! [`Ctx`] and its limits. It knows nothing of `Core`; the handlers in `coaching/` join it to
//! the hint fading and the hooks.

mod comprehension;
mod prompts;
pub mod reliance;
pub mod shingles;
mod solutions;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::ctx::Ctx;
use crate::sync::Locked;

pub use comprehension::{CheckOutcome, FadingStep, MAX_ANSWER_CHARS, MAX_DIFF_BYTES, MAX_QUESTIONS};
pub use solutions::Shown;

/// Why a learning request was refused.
#[derive(Debug, thiserror::Error)]
pub enum LearningError {
    #[error("Start a coaching session first.")]
    NoActiveSession,
    #[error("There is no such question in this session.")]
    UnknownQuestion,
    #[error("This question was already answered, skipped or closed.")]
    NotOpen,
    #[error("Type an answer first (or skip the question).")]
    EmptyAnswer,
    #[error("There is no phase {0} in this session's plan.")]
    UnknownPhase(i64),
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
}

/// The learning signals of the live session; see the module docs.
pub struct Learning {
    ctx: Arc<Ctx>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Per phase id: a check with no questions yet — being prepared, failed (why), or with
    /// nothing to ask — which the database does not hold.
    pending: HashMap<String, (crate::protocol::CheckState, Option<String>)>,
    /// Per question id: why its grading failed (the answer is kept for a retry).
    grade_errors: HashMap<String, String>,
    /// Code blocks Claude Code showed in the live session, not yet typed.
    shown: Vec<Shown>,
}

impl Learning {
    /// The learning signals, with what they use: the shared context.
    pub(crate) fn new(ctx: Arc<Ctx>) -> Arc<Learning> {
        Arc::new(Learning { ctx, state: Mutex::new(State::default()) })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.locked()
    }

    /// The session ended (completed, abandoned, set aside): its open questions expire
    /// (counted as skipped, logged), and the blocks it was shown are forgotten.
    pub(crate) fn session_ended(&self, session_id: &str) {
        match self.ctx.db().expire_questions(session_id) {
            Ok(0) => {}
            Ok(expired) => {
                tracing::info!(session = session_id, expired, "unanswered comprehension questions expired");
                if let Err(err) = self.ctx.db().log_action(
                    session_id,
                    crate::db::ActionType::ComprehensionCheck,
                    Some(serde_json::json!({ "event": "expired", "questions": expired })),
                ) {
                    tracing::warn!("cannot log the expired questions: {err}");
                }
            }
            Err(err) => tracing::warn!("cannot expire the session's questions: {err}"),
        }
        let mut state = self.state();
        state.shown.retain(|s| s.session_id != session_id);
    }
}

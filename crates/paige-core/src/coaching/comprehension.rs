//! The comprehension check's entry points (issue 30): a completed phase starts its check, the
//! learner answers, skips or retries from the panel, and a graded check moves the next
//! phase's hints (`learning::FadingStep`): one rung more specific after a wrong answer, one
//! less after the last two answers in its skill area were right. The check itself lives in
//! `learning/comprehension.rs`.

use std::sync::Arc;

use super::Coaching;
use crate::db::{Phase, PhaseStatus};
use crate::learning::{CheckOutcome, FadingStep, LearningError};

impl Coaching {
    /// `phase` completed: its check is prepared in the background, on the session's token.
    pub(crate) fn check_comprehension(&self, session_id: &str, phase: &Phase) {
        let Some(cancel) = self.live().session().filter(|s| s.session.id == session_id).map(|s| s.cancel.clone())
        else {
            return;
        };
        self.learning().phase_completed(session_id, phase, cancel);
    }

    /// `learning:answer`: the answer is kept and graded in the background; `learning:check`
    /// follows for every UI, and a graded check moves the next phase's hints.
    pub fn answer_comprehension(self: &Arc<Self>, question_id: &str, answer: &str) -> Result<(), LearningError> {
        let session = self.active_session().ok_or(LearningError::NoActiveSession)?;
        let cancel = self.live().session().map(|s| s.cancel.clone()).ok_or(LearningError::NoActiveSession)?;
        let (question, phase) = self.learning().submit_answer(&session.id, question_id, answer)?;
        let core = self.clone();
        self.tasks().spawn(async move {
            let outcome = tokio::select! {
                _ = cancel.cancelled() => return,
                outcome = core.learning().grade(&question, &phase) => outcome,
            };
            if let Some(outcome) = outcome {
                core.apply_comprehension(&phase, outcome);
            }
        });
        Ok(())
    }

    /// `learning:skip`: the phase's open questions are skipped. The check may be settled now
    /// (a question answered wrong before, the rest skipped): the next phase's hints move then.
    pub fn skip_comprehension(&self, number: i64) -> Result<usize, LearningError> {
        let (session_id, phase) = self.phase_numbered(number)?;
        let skipped = self.learning().skip(&session_id, &phase)?;
        // Only when the skip settled it: a check already settled has moved the hints.
        if let Some(outcome) = self.learning().outcome(&phase).filter(|_| skipped > 0) {
            self.apply_comprehension(&phase, outcome);
        }
        Ok(skipped)
    }

    /// `learning:retry`: a check that failed is prepared again.
    pub fn retry_comprehension(&self, number: i64) -> Result<(), LearningError> {
        let (session_id, phase) = self.phase_numbered(number)?;
        let cancel = self.live().session().map(|s| s.cancel.clone()).ok_or(LearningError::NoActiveSession)?;
        self.learning().retry(&session_id, &phase, cancel);
        Ok(())
    }

    /// After a hook in coach mode (only there: `after_hook`): the learner's prompt is classified and kept
    /// (UserPromptSubmit); the code blocks of Claude Code's reply are kept to compare the
    /// learner's next edits with (Stop: the transcript's last turn, else the hook's
    /// `last_assistant_message`).
    pub(crate) fn hook_learning(&self, event: crate::hook_event::HookEvent, input: &crate::hook_event::HookInput) {
        use crate::hook_event::HookEvent;
        if !matches!(event, HookEvent::UserPromptSubmit | HookEvent::Stop) {
            return;
        }
        match event {
            HookEvent::UserPromptSubmit => {
                if let Some(prompt) = input.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
                    self.learning().prompt_submitted(prompt);
                }
            }
            _ => {
                let from_transcript = input.transcript_path.as_deref().and_then(crate::transcript::last_turn_text);
                let reply =
                    from_transcript.filter(|t| !t.trim().is_empty()).or_else(|| input.last_assistant_message.clone());
                if let Some(reply) = reply {
                    self.learning().turn_ended(&reply);
                }
            }
        }
    }

    /// What a UI connecting mid-session is shown: the session's checks not done yet and its
    /// gauge.
    pub(crate) fn learning_rejoin(&self) -> Vec<crate::protocol::ServerMessage> {
        let Some(session) = self.active_session() else { return Vec::new() };
        let phases = match self.current_plan(&session.id) {
            Ok(Some(plan)) => self.db().phases_for_plan(&plan.id).unwrap_or_default(),
            _ => Vec::new(),
        };
        let mut out = self.learning().checks_to_show(&session.id, &phases);
        out.push(crate::protocol::ServerMessage::LearningSignals(self.learning().signals(&session.id)));
        out
    }

    fn phase_numbered(&self, number: i64) -> Result<(String, Phase), LearningError> {
        let session = self.active_session().ok_or(LearningError::NoActiveSession)?;
        let plan = self.current_plan(&session.id)?.ok_or(LearningError::UnknownPhase(number))?;
        let phase = self
            .db()
            .phases_for_plan(&plan.id)?
            .into_iter()
            .find(|p| p.number == number)
            .ok_or(LearningError::UnknownPhase(number))?;
        Ok((session.id, phase))
    }

    /// Moves the hints of the phase after `checked` (the next one not complete; for a lower
    /// start, only one of the same skill area) as the check says.
    fn apply_comprehension(&self, checked: &Phase, outcome: CheckOutcome) {
        // A phase of a skill area understood addresses the open gaps about it (issue 31).
        if let (true, Some(area)) = (outcome.understood, checked.skill_area.as_deref()) {
            match self.reviews().gap_understood(area) {
                Ok(0) => {}
                Ok(n) => tracing::info!(area, gaps = n, "gaps addressed: a phase of their area was understood"),
                Err(err) => tracing::warn!("cannot address the gaps of {area}: {err}"),
            }
        }
        let Some(step) = outcome.step else { return };
        let phases = match self.db().phases_for_plan(&checked.plan_id) {
            Ok(phases) => phases,
            Err(err) => return tracing::warn!("cannot read the plan's phases: {err}"),
        };
        let Some(next) = phases
            .into_iter()
            .filter(|p| p.number > checked.number && p.status != PhaseStatus::Complete)
            .min_by_key(|p| p.number)
        else {
            return;
        };
        let (level, why) = match &step {
            FadingStep::MoreSpecific(why) => (super::fading::step(next.hint_level, true), why),
            FadingStep::LessSpecific(why) if next.skill_area == checked.skill_area => {
                (super::fading::step(next.hint_level, false), why)
            }
            FadingStep::LessSpecific(_) => return,
        };
        if level == next.hint_level {
            return;
        }
        let reason = format!("hints start at {} for phase {}: {why}", level.as_str(), next.number);
        self.set_phase_level(next, level, &reason);
    }
}

//! The comprehension check after each phase (issue 30). When the plan arrives, what each
//! phase's expected files hold is kept (`phase_baselines`, capped per file). When a phase
//! completes, the learner's change in it — a unified diff of those files, baseline → now
//! (the editor's buffer when it has unsaved edits), capped at [`MAX_DIFF_BYTES`] — goes to
//! Haiku (`comprehension-check`), which writes one or two questions that quote it; a question
//! whose quote is not in the diff is dropped. The learner answers in the coaching panel; each
//! answer is graded by Haiku (`comprehension-grade`). Nothing here blocks the phase: the
//! questions are prepared in the background, a failure is a note with Retry, a skip is
//! logged, and questions never answered expire when the session ends.
//!
//! Once every question of a check is graded, the check says how the hints of the next phase
//! should move ([`FadingStep`]): a wrong answer makes them one rung more specific; the last
//! two answers in the skill area correct, one rung less.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Learning, LearningError};
use crate::api::CallOptions;
use crate::db::{ActionType, ComprehensionQuestion, NewQuestion, Phase, QuestionStatus};
use crate::prompts::comprehension_check::{self as check, ComprehensionCheckResponse};
use crate::prompts::comprehension_grade::{self as grader, ComprehensionGradeResponse, Grade};
use crate::protocol::{CheckState, ComprehensionCheck, QuestionView, ServerMessage};

/// The most of the learner's diff the model sees; the rest is cut with a marker.
pub const MAX_DIFF_BYTES: usize = 12 * 1024;
/// The most of a file kept as a phase's baseline; a bigger file is kept cut (its diff then
/// shows its end as changed, which the quote check and the cap keep harmless).
const MAX_BASELINE_BYTES: usize = 256 * 1024;
/// Questions per check.
pub const MAX_QUESTIONS: usize = 2;
/// The longest answer graded; a longer one is cut.
pub const MAX_ANSWER_CHARS: usize = 2000;

/// How the next phase's hints move after a check (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FadingStep {
    MoreSpecific(String),
    LessSpecific(String),
}

/// A check whose questions are all graded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOutcome {
    pub phase_id: String,
    pub step: Option<FadingStep>,
    /// Every graded answer was right: the phase was understood.
    pub understood: bool,
}

impl Learning {
    /// The plan arrived: keep what each phase's expected files hold now (the first baseline
    /// of a file stays, so a re-plan does not move it).
    pub fn keep_baselines(&self, phases: &[Phase]) {
        for phase in phases {
            for path in &phase.expected_files {
                let content = self.current_text(path).map(|mut text| {
                    crate::limits::truncate_with_marker(&mut text, MAX_BASELINE_BYTES, "file");
                    text
                });
                if let Err(err) = self.ctx.db().save_phase_baseline(&phase.id, path, content.as_deref()) {
                    tracing::warn!(path, "cannot keep the phase's baseline: {err}");
                }
            }
        }
    }

    /// What the learner has of `path` now: the editor's buffer when it has unsaved edits,
    /// else the file (which their own editor may have changed); `None` when it does not
    /// exist or cannot be read as text.
    pub(super) fn current_text(&self, path: &str) -> Option<String> {
        let resolved = self.ctx.root().resolve(path).ok()?;
        if let Some(buffer) = self.ctx.live().buffer(resolved.rel()).filter(|b| b.dirty) {
            return Some(buffer.content.clone());
        }
        crate::files::read_file(&resolved).ok().filter(|f| !f.binary).map(|f| f.content)
    }

    /// The learner's change in `phase`: a unified diff of each expected file from its
    /// baseline to now, capped at [`MAX_DIFF_BYTES`]; empty when nothing changed.
    pub fn phase_diff(&self, phase: &Phase) -> String {
        let baselines = self.ctx.db().phase_baselines(&phase.id).unwrap_or_else(|err| {
            tracing::warn!("cannot read the phase's baselines: {err}");
            Vec::new()
        });
        let mut diff = String::new();
        for (path, before) in baselines {
            let now = self.current_text(&path).unwrap_or_default();
            diff.push_str(&crate::files::unified_diff(&path, before.as_deref().unwrap_or(""), &now));
            if diff.len() > MAX_DIFF_BYTES {
                break;
            }
        }
        crate::limits::truncate_with_marker(&mut diff, MAX_DIFF_BYTES, "diff");
        diff
    }

    /// `phase` completed: its check is prepared in the background (a model call on `cancel`,
    /// the session's token) and every UI sees it at each step. Returns at once. A phase
    /// already checked is not checked again.
    pub(crate) fn phase_completed(self: &Arc<Self>, session_id: &str, phase: &Phase, cancel: CancellationToken) {
        match self.ctx.db().questions_for_phase(&phase.id) {
            Ok(questions) if !questions.is_empty() => return,
            Ok(_) => {}
            Err(err) => tracing::warn!("cannot read the phase's questions: {err}"),
        }
        let diff = self.phase_diff(phase);
        if diff.trim().is_empty() {
            let note = "Nothing changed in this phase's files, so there is nothing to ask about.";
            self.set_pending(session_id, phase, CheckState::NothingToAsk, Some(note.into()));
            self.ctx.log_action(
                ActionType::ComprehensionCheck,
                json!({ "event": "nothing_to_ask", "phase": phase.number }),
            );
            return;
        }
        self.set_pending(session_id, phase, CheckState::Preparing, None);
        let (learning, session_id, phase) = (self.clone(), session_id.to_owned(), phase.clone());
        self.ctx.tasks().spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = learning.prepare(&session_id, &phase, &diff) => {}
            }
        });
    }

    /// Asks for the questions and stores those that quote the diff.
    async fn prepare(&self, session_id: &str, phase: &Phase, diff: &str) {
        let stage = self.stage_for(phase.skill_area.as_deref());
        let message =
            check::assemble_user_message(&phase.title, &phase.description, phase.skill_area.as_deref(), &stage, diff);
        let options = CallOptions {
            session_id: Some(session_id),
            ..CallOptions::new(check::CALL_TYPE, check::MODEL, check::SYSTEM_PROMPT, &message)
        };
        let answer = self.ctx.api().call_with_retry::<ComprehensionCheckResponse>(self.ctx.db(), &options).await;
        let questions = match answer {
            Ok(answer) => quoted_questions(answer, diff),
            Err(err) => {
                let note = err.readable("Paige could not write the questions for this phase");
                return self.fail(session_id, phase, note);
            }
        };
        if questions.is_empty() {
            let note = "Paige's model answered without a question about your change; try again.";
            return self.fail(session_id, phase, note.into());
        }
        let mut stored = 0;
        for q in questions {
            let new = NewQuestion {
                session_id: session_id.to_owned(),
                phase_id: phase.id.clone(),
                skill_area: phase.skill_area.clone(),
                kind: q.kind.as_str().to_owned(),
                question: q.question.trim().to_owned(),
                quote: q.quote.trim_end().to_owned(),
                concept: q.concept.trim().to_owned(),
            };
            match self.ctx.db().create_question(new) {
                Ok(_) => stored += 1,
                Err(err) => tracing::warn!("cannot store a comprehension question: {err}"),
            }
        }
        self.state().pending.remove(&phase.id);
        let data = json!({ "event": "asked", "phase": phase.number, "questions": stored });
        drop(self.ctx.db().log_action(session_id, ActionType::ComprehensionCheck, Some(data)));
        self.ctx.broadcast(ServerMessage::LearningCheck(self.check_view(session_id, phase)));
    }

    fn fail(&self, session_id: &str, phase: &Phase, note: String) {
        tracing::warn!(phase = phase.number, "comprehension check skipped: {note}");
        let data = json!({ "event": "failed", "phase": phase.number, "why": note.lines().next() });
        drop(self.ctx.db().log_action(session_id, ActionType::ComprehensionCheck, Some(data)));
        self.set_pending(session_id, phase, CheckState::Failed, Some(note));
    }

    fn set_pending(&self, session_id: &str, phase: &Phase, state: CheckState, note: Option<String>) {
        self.state().pending.insert(phase.id.clone(), (state, note));
        self.ctx.broadcast(ServerMessage::LearningCheck(self.check_view(session_id, phase)));
    }

    /// `learning:retry`: a check that failed is prepared again.
    pub(crate) fn retry(self: &Arc<Self>, session_id: &str, phase: &Phase, cancel: CancellationToken) {
        let failed = matches!(self.state().pending.get(&phase.id), Some((CheckState::Failed, _)));
        if failed {
            self.state().pending.remove(&phase.id);
            self.phase_completed(session_id, phase, cancel);
        }
    }

    /// `learning:skip`: the phase's open questions are skipped (logged).
    pub(crate) fn skip(&self, session_id: &str, phase: &Phase) -> Result<usize, LearningError> {
        let skipped = self.ctx.db().skip_questions(&phase.id)?;
        self.state().pending.remove(&phase.id);
        self.ctx.log_action(
            ActionType::ComprehensionCheck,
            json!({ "event": "skipped", "phase": phase.number, "questions": skipped }),
        );
        self.ctx.broadcast(ServerMessage::LearningCheck(self.check_view(session_id, phase)));
        Ok(skipped)
    }

    /// `learning:answer`: stores the answer of an open question of the live session (it moves
    /// to grading) and returns the question to grade.
    pub(crate) fn submit_answer(
        &self,
        session_id: &str,
        question_id: &str,
        answer: &str,
    ) -> Result<(ComprehensionQuestion, Phase), LearningError> {
        let answer: String = answer.trim().chars().take(MAX_ANSWER_CHARS).collect();
        let question = match self.ctx.db().question(question_id) {
            Ok(q) if q.session_id == session_id => q,
            Ok(_) | Err(crate::db::DbError::NotFound { .. }) => return Err(LearningError::UnknownQuestion),
            Err(err) => return Err(err.into()),
        };
        if question.status != QuestionStatus::Open {
            return Err(LearningError::NotOpen);
        }
        if answer.is_empty() {
            return Err(LearningError::EmptyAnswer);
        }
        if !self.ctx.db().answer_question(question_id, &answer)? {
            return Err(LearningError::NotOpen);
        }
        self.state().grade_errors.remove(question_id);
        let phase = self.ctx.db().phase(&question.phase_id)?;
        self.ctx.broadcast(ServerMessage::LearningCheck(self.check_view(session_id, &phase)));
        let question = self.ctx.db().question(question_id)?;
        Ok((question, phase))
    }

    /// Grades an answered question; when the check is then complete, how the next phase's
    /// hints move. A failed grading reopens the question with the answer kept and an error
    /// to show beside it.
    pub(crate) async fn grade(&self, question: &ComprehensionQuestion, phase: &Phase) -> Option<CheckOutcome> {
        let answer = question.answer.as_deref().unwrap_or_default();
        let message = grader::assemble_user_message(
            &question.question,
            &question.kind,
            &question.quote,
            &question.concept,
            answer,
        );
        let options = CallOptions {
            session_id: Some(&question.session_id),
            ..CallOptions::new(grader::CALL_TYPE, grader::MODEL, grader::SYSTEM_PROMPT, &message)
        };
        let graded = self.ctx.api().call_with_retry::<ComprehensionGradeResponse>(self.ctx.db(), &options).await;
        let db = self.ctx.db();
        match graded {
            Ok(grade) => {
                match db.grade_question(&question.id, grade.grade.as_str(), grade.why.trim(), &grade.concept) {
                    Ok(true) => {
                        let data = json!({ "event": "graded", "phase": phase.number, "grade": grade.grade.as_str() });
                        drop(db.log_action(&question.session_id, ActionType::ComprehensionCheck, Some(data)));
                    }
                    Ok(false) => {}
                    Err(err) => tracing::warn!("cannot store the grade: {err}"),
                }
            }
            Err(err) => {
                let error = err.readable("Paige could not grade this answer");
                if let Err(err) = db.reopen_question(&question.id) {
                    tracing::warn!("cannot reopen the question: {err}");
                }
                self.state().grade_errors.insert(question.id.clone(), error);
            }
        }
        self.ctx.broadcast(ServerMessage::LearningCheck(self.check_view(&question.session_id, phase)));
        self.outcome(phase)
    }

    /// How the next phase's hints move, once every question of `phase` is settled with at
    /// least one graded.
    pub(crate) fn outcome(&self, phase: &Phase) -> Option<CheckOutcome> {
        let questions = self.ctx.db().questions_for_phase(&phase.id).ok()?;
        if questions.iter().any(|q| matches!(q.status, QuestionStatus::Open | QuestionStatus::Grading)) {
            return None;
        }
        let graded: Vec<&ComprehensionQuestion> =
            questions.iter().filter(|q| q.status == QuestionStatus::Graded).collect();
        if graded.is_empty() {
            return None;
        }
        let wrong = graded.iter().find(|q| q.grade.as_deref() == Some(Grade::Incorrect.as_str()));
        let step = if let Some(wrong) = wrong {
            Some(FadingStep::MoreSpecific(format!(
                "your answer about {} in phase {} was not right",
                wrong.concept, phase.number
            )))
        } else {
            phase.skill_area.as_deref().and_then(|area| {
                let recent = self.ctx.db().recent_grades(area, 2).ok()?;
                (recent.len() == 2 && recent.iter().all(|g| g == Grade::Correct.as_str()))
                    .then(|| FadingStep::LessSpecific(format!("you answered the last 2 questions on {area} correctly")))
            })
        };
        let understood = graded.iter().all(|q| q.grade.as_deref() == Some(Grade::Correct.as_str()));
        Some(CheckOutcome { phase_id: phase.id.clone(), step, understood })
    }

    /// A phase's check as it stands now.
    pub fn check_view(&self, session_id: &str, phase: &Phase) -> ComprehensionCheck {
        let questions = self.ctx.db().questions_for_phase(&phase.id).unwrap_or_else(|err| {
            tracing::warn!("cannot read the phase's questions: {err}");
            Vec::new()
        });
        let state = self.state();
        let (check_state, note) = match state.pending.get(&phase.id) {
            Some((pending, note)) if questions.is_empty() => (*pending, note.clone()),
            _ if questions.iter().all(|q| !matches!(q.status, QuestionStatus::Open | QuestionStatus::Grading)) => {
                (CheckState::Done, None)
            }
            _ => (CheckState::Ready, None),
        };
        let questions = questions
            .into_iter()
            .map(|q| QuestionView {
                error: state.grade_errors.get(&q.id).cloned(),
                id: q.id,
                kind: q.kind,
                question: q.question,
                quote: q.quote,
                concept: q.concept,
                status: q.status.as_str().to_owned(),
                answer: q.answer,
                grade: q.grade,
                why: q.why,
            })
            .collect();
        ComprehensionCheck {
            session_id: session_id.to_owned(),
            phase: phase.number,
            phase_title: phase.title.clone(),
            state: check_state,
            note,
            questions,
        }
    }

    /// What a UI connecting mid-session is shown: the checks of `phases` it would have on
    /// screen (waiting, failed, to answer, or answered), as they stand.
    pub(crate) fn checks_to_show(&self, session_id: &str, phases: &[Phase]) -> Vec<ServerMessage> {
        phases
            .iter()
            .map(|phase| self.check_view(session_id, phase))
            // Answered ones too: a reload shows the learner's answers and grades as before it.
            .filter(|view| match view.state {
                CheckState::Preparing | CheckState::Failed | CheckState::Ready => true,
                CheckState::Done => !view.questions.is_empty(),
                CheckState::NothingToAsk => false,
            })
            .map(ServerMessage::LearningCheck)
            .collect()
    }

    /// The learner's stage in `skill_area` when assessed, else novice.
    fn stage_for(&self, skill_area: Option<&str>) -> String {
        let assessments = self.ctx.db().dreyfus_assessments().unwrap_or_default();
        skill_area
            .and_then(|area| assessments.iter().find(|a| a.skill_area.eq_ignore_ascii_case(area)))
            .map_or("novice", |a| a.stage.as_str())
            .to_owned()
    }
}

/// The model's questions that quote lines the learner added (whitespace aside), at most
/// [`MAX_QUESTIONS`].
fn quoted_questions(answer: ComprehensionCheckResponse, diff: &str) -> Vec<check::Question> {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    // The lines the learner added, without their `+`, as the model is told to quote them.
    let body: String = diff
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| &l[1..])
        .collect::<Vec<_>>()
        .join("\n");
    let body = squash(&body);
    answer
        .questions
        .into_iter()
        .filter(|q| !q.question.trim().is_empty())
        .filter(|q| {
            // A quote too short to point at anything (`}`, `x`) could match any diff.
            let quote = squash(&q.quote);
            quote.chars().filter(|c| c.is_alphanumeric()).count() >= 3 && body.contains(&quote)
        })
        .take(MAX_QUESTIONS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompts::comprehension_check::{Question, QuestionKind};

    fn question(quote: &str) -> Question {
        Question { kind: QuestionKind::ExplainLine, question: "Why?".into(), quote: quote.into(), concept: "c".into() }
    }

    #[test]
    fn only_questions_quoting_the_learners_added_lines_are_kept_whitespace_aside() {
        let diff =
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,2 +1,3 @@\n fn f() {\n+    if x.is_none() {  return; }\n }\n";
        let answer = ComprehensionCheckResponse {
            questions: vec![
                question("if x.is_none() { return; }"),
                question("let y = made_up();"),
                question(""),
                question("fn f() {"),
                question("}"),
            ],
        };
        let kept: Vec<String> = quoted_questions(answer, diff).into_iter().map(|q| q.quote).collect();
        // A quote of a line the learner did not touch (`fn f() {`) is not about their change,
        // and `}` is in every diff.
        assert_eq!(kept, ["if x.is_none() { return; }"]);
    }
}

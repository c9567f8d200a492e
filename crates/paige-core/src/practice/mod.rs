//! Practice katas (spec Story 11, Flow 2, FR-154…FR-167): the katas the wrap-up made from
//! knowledge gaps, listed and opened for the UI (Paige's `practice:list` and
//! `practice:kata_request`), and a submitted solution reviewed by Sonnet at the learner's
//! Dreyfus stage for the gap's topic, against the previous attempts made under the same
//! constraints, with one retry on a transient failure. A reviewed attempt is appended to the
//! kata (never a failed one); constraints unlock as the learner's best level rises. Practice
//! never touches the learner's project: the code travels in the messages only.
//!
//! `user:review` is answered with `review:response`, the spec's `practice:submit_solution`
//! (the same flow) with `practice:solution_review`; both fail with `review:error`.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;

use crate::core::Core;
use crate::db::{ActionType, DbError, GapFilter, KataAttempt, KataConstraint, KataSpec};
use crate::prompts::practice_review::{
    self as prompt, ActiveConstraint, FollowUpType, PracticeReviewResponse, PreviousAttempt,
};
use crate::protocol::{
    FollowUp, FollowUpKind, KataError, KataLoad, KataView, PracticeKata, PracticeKatas, PracticeSubmit, ReviewResponse,
    ServerMessage, SolutionReview, UserReview, error_text,
};

/// At most this many previous same-constraint attempts (the latest) go to the model, so a
/// kata practised for months does not outgrow the prompt.
pub const PREVIOUS_ATTEMPTS_SENT: usize = 10;

/// The reply a review request is answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyWith {
    /// `review:response` (for `user:review`).
    Review,
    /// `practice:solution_review` (for `practice:submit_solution`).
    SolutionReview,
}

/// A solution to review, from either request type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRequest {
    pub kata_id: String,
    pub code: String,
    pub constraint_titles: Vec<String>,
    pub reply: ReplyWith,
}

impl From<UserReview> for ReviewRequest {
    fn from(r: UserReview) -> Self {
        ReviewRequest {
            kata_id: r.kata_id,
            code: r.user_code,
            constraint_titles: r.active_constraint_titles,
            reply: ReplyWith::Review,
        }
    }
}

impl From<PracticeSubmit> for ReviewRequest {
    fn from(r: PracticeSubmit) -> Self {
        ReviewRequest {
            kata_id: r.kata_id,
            code: r.code,
            constraint_titles: r.active_constraints,
            reply: ReplyWith::SolutionReview,
        }
    }
}

impl Core {
    /// Every kata with the learner's progress on it, newest first (`practice:katas`).
    pub fn practice_katas(&self) -> Result<PracticeKatas, DbError> {
        let topics: HashMap<String, String> =
            self.db().knowledge_gaps(&GapFilter::default())?.into_iter().map(|gap| (gap.id, gap.topic)).collect();
        let katas = self
            .db()
            .katas()?
            .into_iter()
            .map(|kata| PracticeKata {
                gap_topic: topics.get(&kata.knowledge_gap_id).cloned(),
                best_level: kata.best_level(),
                attempts: count(kata.user_attempts.len()),
                constraints: count(kata.constraints.len()),
                unlocked_constraints: count(kata.unlocked_constraints().len()),
                id: kata.id,
                title: kata.title,
                description: kata.description,
            })
            .collect();
        Ok(PracticeKatas { katas })
    }

    /// One kata to practise (`practice:kata_load`): its scaffolding and the constraints the
    /// learner's best level unlocked. The instructor notes stay on the server.
    pub fn load_kata(&self, kata_id: &str) -> Result<KataLoad, KataError> {
        let kata = self.kata_or_error(kata_id)?;
        let constraints = kata.unlocked_constraints();
        Ok(KataLoad {
            kata: KataView {
                id: kata.id,
                title: kata.title,
                description: kata.description,
                scaffolding_code: kata.scaffolding_code,
            },
            constraints,
        })
    }

    /// Starts a review of `request`'s solution; the answer follows for every UI. Refused at
    /// once, without a model call, for an unknown kata (FR-166) or when Paige is shutting down.
    pub fn review_kata(self: &Arc<Self>, request: ReviewRequest) -> Result<(), KataError> {
        self.log_action(
            ActionType::ReviewRequested,
            json!({ "kataId": request.kata_id, "constraints": request.constraint_titles, "codeLength": request.code.chars().count() }),
        );
        let kata = self.kata_or_error(&request.kata_id)?;
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| KataError { kata_id: request.kata_id.clone(), error: "Paige is shutting down".into() })?;
        let core = self.clone();
        let cancel = self.shutdown_token();
        self.tasks().spawn_on(
            async move {
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    () = core.answer_review(request, kata) => {
                        // The kata's progress (attempts, best level) shows on the dashboard now,
                        // not at its next load.
                        let dashboard = core.dashboard().clone();
                        drop(tokio::task::spawn_blocking(move || dashboard.push_state()).await);
                    }
                }
            },
            &runtime,
        );
        Ok(())
    }

    fn kata_or_error(&self, kata_id: &str) -> Result<KataSpec, KataError> {
        self.db().kata(kata_id).map_err(|err| KataError {
            kata_id: kata_id.to_owned(),
            error: match err {
                DbError::NotFound { .. } => "Kata not found".to_owned(),
                other => format!("Cannot read the kata: {other}"),
            },
        })
    }

    async fn answer_review(&self, request: ReviewRequest, kata: KataSpec) {
        let topic = self.db().knowledge_gap(&kata.knowledge_gap_id).ok().map(|gap| gap.topic);
        let stage = self.review_stage(topic.as_deref());
        let active = resolve_constraints(&kata.constraints, &request.constraint_titles);
        let previous = same_constraint_attempts(&kata.user_attempts, &active);
        let active_for_model: Vec<ActiveConstraint> = active
            .iter()
            .map(|c| ActiveConstraint { title: c.title.clone(), description: c.description.clone() })
            .collect();
        let system = prompt::system_prompt(&stage);
        let message = prompt::assemble_user_message(
            &kata.description,
            &kata.instructor_notes,
            &active_for_model,
            &request.code,
            &previous,
        );
        let crate::timed_call::Timed { answer, latency_ms, model } =
            self.timed_call::<PracticeReviewResponse>(prompt::CALL_TYPE, prompt::MODEL, &system, &message).await;
        const FAILED: &str = "Paige could not review this solution";
        let reviewed = answer.map_err(|err| err.readable(FAILED)).and_then(|answer| {
            let level = valid_level(answer.level)
                .map_err(|why| error_text(&format!("{FAILED}: the model's answer made no sense — retry."), &why))?;
            let attempt = KataAttempt {
                code: request.code.clone(),
                review: Some(answer.feedback.clone()),
                level: Some(level),
                passed: Some(answer.passed),
                constraints: Some(active.clone()),
            };
            // FR-157, FR-167: appended only now, after a review that makes sense.
            let recorded = self.db().record_kata_attempt(&kata.id, &attempt).map_err(|err| {
                error_text(&format!("{FAILED}: the attempt could not be saved — retry."), &err.to_string())
            })?;
            Ok((answer, level, newly_unlocked(&recorded.kata.constraints, recorded.previous_best, level)))
        });
        match reviewed {
            Ok((answer, level, unlocked)) => {
                let data = json!({ "kataId": kata.id, "level": level, "passed": answer.passed, "model": model, "latencyMs": latency_ms, "success": true });
                self.log_action(ActionType::ReviewCompleted, data);
                self.broadcast(reply(request.reply, kata.id, answer, level, unlocked));
                // A kata not yet mastered is due for spaced review (issue 31): every UI's count
                // moves now, not at the next dashboard request.
                match self.reviews().sync().and_then(|_| self.reviews().due()) {
                    Ok(due) => self.broadcast(ServerMessage::ReviewsDue(due)),
                    Err(err) => tracing::warn!("cannot update the reviews due: {err}"),
                }
            }
            Err(error) => {
                let data = json!({ "kataId": kata.id, "model": model, "latencyMs": latency_ms, "success": false, "error": error });
                self.log_action(ActionType::ReviewCompleted, data);
                self.broadcast(ServerMessage::ReviewError(KataError { kata_id: kata.id, error }));
            }
        }
    }

    /// The stage for the kata's gap topic: the assessment whose skill area is the topic, or
    /// contains it or is contained in it; else novice (EC-80).
    fn review_stage(&self, topic: Option<&str>) -> String {
        let Some(topic) = topic.map(str::to_lowercase).filter(|t| !t.trim().is_empty()) else {
            return "novice".into();
        };
        let assessments = self.db().dreyfus_assessments().unwrap_or_default();
        let area = |a: &crate::db::DreyfusAssessment| a.skill_area.to_lowercase();
        let exact = assessments.iter().find(|a| area(a) == topic);
        let near = || assessments.iter().find(|a| topic.contains(&area(a)) || area(a).contains(&topic));
        exact.or_else(near).map_or("novice", |a| a.stage.as_str()).to_owned()
    }
}

impl From<FollowUpType> for FollowUpKind {
    fn from(kind: FollowUpType) -> Self {
        match kind {
            FollowUpType::ConstraintEscalation => FollowUpKind::ConstraintEscalation,
            FollowUpType::RetryHint => FollowUpKind::RetryHint,
            FollowUpType::Completed => FollowUpKind::Completed,
        }
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn valid_level(level: i64) -> Result<u8, String> {
    u8::try_from(level)
        .ok()
        .filter(|l| (1..=10).contains(l))
        .ok_or_else(|| format!("the review gave level {level}, outside 1–10"))
}

fn reply(
    with: ReplyWith,
    kata_id: String,
    answer: PracticeReviewResponse,
    level: u8,
    unlocked: Vec<KataConstraint>,
) -> ServerMessage {
    match with {
        ReplyWith::Review => ServerMessage::ReviewResponse(ReviewResponse {
            kata_id,
            correct: answer.correct,
            feedback: answer.feedback,
            level,
            passed: answer.passed,
            follow_up: answer.follow_up.map(|f| FollowUp {
                kind: f.kind.into(),
                constraint: f.constraint,
                reason: f.reason,
            }),
            dreyfus_signal: answer.dreyfus_signal,
            unlocked_constraints: unlocked,
        }),
        ReplyWith::SolutionReview => ServerMessage::PracticeSolutionReview(SolutionReview {
            review: answer.feedback,
            level,
            passed: answer.passed,
            constraints_unlocked: unlocked,
        }),
    }
}

/// The kata's constraints named by `titles` (trimmed, any case), in the kata's order; titles
/// that name none are ignored (EC-77).
pub fn resolve_constraints(constraints: &[KataConstraint], titles: &[String]) -> Vec<KataConstraint> {
    constraints
        .iter()
        .filter(|c| titles.iter().any(|t| t.trim().eq_ignore_ascii_case(c.title.trim())))
        .cloned()
        .collect()
}

/// The previous attempts made under exactly the `active` constraints (D75), the latest
/// [`PREVIOUS_ATTEMPTS_SENT`], oldest first.
pub fn same_constraint_attempts(attempts: &[KataAttempt], active: &[KataConstraint]) -> Vec<PreviousAttempt> {
    let mut titles: Vec<&str> = active.iter().map(|c| c.title.as_str()).collect();
    titles.sort_unstable();
    titles.dedup();
    let same: Vec<&KataAttempt> = attempts.iter().filter(|a| a.constraint_titles() == titles).collect();
    same[same.len().saturating_sub(PREVIOUS_ATTEMPTS_SENT)..]
        .iter()
        .map(|a| PreviousAttempt {
            code: a.code.clone(),
            review: a.review.clone(),
            level: a.level.map(i64::from),
            passed: a.passed,
        })
        .collect()
}

/// The constraints the step from `previous_best` to `level` unlocks: `previous_best <
/// minLevel <= level` (FR-158; none when the level did not rise).
pub fn newly_unlocked(constraints: &[KataConstraint], previous_best: u8, level: u8) -> Vec<KataConstraint> {
    constraints.iter().filter(|c| c.min_level > previous_best && c.min_level <= level).cloned().collect()
}

#[cfg(test)]
mod tests;

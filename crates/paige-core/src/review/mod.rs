//! Spaced review (issue 31): what the learner found hard comes back until it sticks.
//!
//! Each knowledge gap not yet addressed, each kata not yet mastered (not all of its
//! constraints unlocked) and each concept answered wrong in a comprehension check becomes a
//! review item ([`Reviews::sync`], once per source), an FSRS card scheduled by `rs-fsrs`
//! (long-term scheduler, no fuzz: days, on the injected clock). The dashboard shows how many
//! are due; the learner opens one, Haiku writes a short question from it
//! (`review-question`), the answer is graded by the comprehension grader, and the grade and
//! the time taken become an FSRS rating (incorrect → Again, partial → Hard, correct → Good,
//! or Easy when answered within [`EASY_WITHIN`]). An item reviewed at least [`STABLE_REVIEWS`]
//! times whose next interval reaches [`STABLE_DAYS`] is addressed (one fast first answer —
//! FSRS's first Easy is about 15 days — is not yet proof) — and a gap's item addresses the gap, so the dashboard's
//! "gaps addressed" moves and the gap stops feeding learning-material searches. A gap is also
//! addressed when a later phase of its skill area is understood (`gap_understood`).
//!
//! The question an open review was asked is kept on its item (a restart between question and
//! answer loses nothing). [`Reviews`] gets the shared [`Ctx`] when `Core::open` builds it; it
//! knows nothing of `Core`.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rs_fsrs::{Card, FSRS, Parameters, Rating};
use serde_json::json;

use crate::api::CallOptions;
use crate::ctx::Ctx;
use crate::db::{DbError, NewReview, NewReviewItem, ReviewItem, ReviewKind};
use crate::prompts::comprehension_grade::{self as grader, ComprehensionGradeResponse, Grade};
use crate::prompts::review_question::{self as prompt, ReviewQuestionResponse};
use crate::protocol::{ReviewDue, ReviewGraded, ReviewItemView, ReviewQuestion};

/// An interval this long or longer means the item is remembered: it is addressed.
pub const STABLE_DAYS: i64 = 7;
/// Reviews before an item can count as remembered.
pub const STABLE_REVIEWS: i32 = 2;
/// A correct answer this fast is an Easy recall.
pub const EASY_WITHIN: Duration = Duration::from_secs(20);
/// The most due items listed at once.
const MAX_LISTED: usize = 20;
/// The longest answer graded.
const MAX_ANSWER_CHARS: usize = 2000;

/// Why a review could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("There is no such review item.")]
    UnknownItem,
    #[error("Open the review first: its question has not been asked.")]
    NotAsked,
    #[error("Type an answer first.")]
    EmptyAnswer,
    #[error("{0}")]
    Model(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Spaced review; see the module docs.
pub struct Reviews {
    ctx: Arc<Ctx>,
    fsrs: FSRS,
}

/// The FSRS rating a graded answer makes.
pub fn rating(grade: Grade, took: Duration) -> Rating {
    match grade {
        Grade::Incorrect => Rating::Again,
        Grade::Partial => Rating::Hard,
        Grade::Correct if took <= EASY_WITHIN => Rating::Easy,
        Grade::Correct => Rating::Good,
    }
}

fn rating_name(rating: Rating) -> &'static str {
    match rating {
        Rating::Again => "again",
        Rating::Hard => "hard",
        Rating::Good => "good",
        Rating::Easy => "easy",
    }
}

impl Reviews {
    pub(crate) fn new(ctx: Arc<Ctx>) -> Arc<Reviews> {
        let parameters = Parameters { enable_short_term: false, enable_fuzz: false, ..Parameters::default() };
        Arc::new(Reviews { ctx, fsrs: FSRS::new(parameters) })
    }

    /// A new card, due now.
    fn new_card(&self, now: DateTime<Utc>) -> Card {
        Card { due: now, last_review: now, ..Card::new() }
    }

    /// Makes an item of every source not yet reviewed: open gaps, katas not mastered, wrong
    /// concepts. Returns how many were added.
    pub fn sync(&self) -> Result<usize, DbError> {
        let db = self.ctx.db();
        let now = self.ctx.now();
        let card = serde_json::to_value(self.new_card(now)).unwrap_or_default();
        let mut added = 0;
        let mut add = |kind, source_id: String, topic: String, skill_area: Option<String>, context| {
            let new = NewReviewItem { kind, source_id, topic, skill_area, context, card: card.clone(), due: now };
            db.add_review_item(&new).map(|new| added += usize::from(new))
        };
        for gap in db.knowledge_gaps(&crate::db::GapFilter::default())?.into_iter().filter(|g| !g.addressed) {
            let context = json!({ "evidence": gap.evidence, "related_concepts": gap.related_concepts });
            add(ReviewKind::Gap, gap.id, gap.topic, None, context)?;
        }
        for kata in db.katas()? {
            let hardest = kata.constraints.iter().map(|c| c.min_level).max().unwrap_or(0);
            if kata.user_attempts.is_empty() || kata.best_level() >= hardest.max(1) {
                continue;
            }
            let context =
                json!({ "title": kata.title, "description": kata.description, "best_level": kata.best_level() });
            add(ReviewKind::Kata, kata.id, kata.title, None, context)?;
        }
        for wrong in db.wrong_concepts()? {
            let context = json!({ "earlier_question": wrong.question, "their_code": wrong.quote });
            add(ReviewKind::Concept, wrong.question_id, wrong.concept, wrong.skill_area, context)?;
        }
        Ok(added)
    }

    /// What is due now.
    pub fn due(&self) -> Result<ReviewDue, DbError> {
        let (items, due_count) = self.ctx.db().due_reviews(self.ctx.now(), MAX_LISTED)?;
        Ok(ReviewDue { due_count, items: items.iter().map(view).collect() })
    }

    /// `review:start`: the question for an item (Haiku), kept with when it was asked.
    pub async fn start(&self, item_id: &str) -> Result<ReviewQuestion, ReviewError> {
        let item = self.item(item_id)?;
        let reviews = self.ctx.db().review_count(item_id)?;
        let message = prompt::assemble_user_message(
            item.kind.as_str(),
            &item.topic,
            item.skill_area.as_deref(),
            &item.context,
            reviews,
        );
        let options = CallOptions::new(prompt::CALL_TYPE, prompt::MODEL, prompt::SYSTEM_PROMPT, &message);
        let asked: ReviewQuestionResponse = self
            .ctx
            .api()
            .call_with_retry(self.ctx.db(), &options)
            .await
            .map_err(|err| ReviewError::Model(err.readable("Paige could not write the review question")))?;
        if asked.question.trim().is_empty() {
            return Err(ReviewError::Model("Paige's model answered without a question; try again.".into()));
        }
        let question = ReviewQuestion {
            item_id: item.id.clone(),
            kind: item.kind.as_str().to_owned(),
            topic: item.topic.clone(),
            question: asked.question.trim().to_owned(),
            concept: asked.concept.trim().to_owned(),
            kata_id: (item.kind == ReviewKind::Kata).then(|| item.source_id.clone()),
        };
        self.ctx.db().set_review_asked(&item.id, &serde_json::to_value(&asked).unwrap_or_default())?;
        Ok(question)
    }

    /// `review:answer`: the answer graded, rated into FSRS and rescheduled; a stable interval
    /// addresses the item (and its gap).
    pub async fn answer(&self, item_id: &str, answer: &str) -> Result<ReviewGraded, ReviewError> {
        let answer: String = answer.trim().chars().take(MAX_ANSWER_CHARS).collect();
        if answer.is_empty() {
            return Err(ReviewError::EmptyAnswer);
        }
        let item = self.item(item_id)?;
        let (asked, at) = self.ctx.db().review_asked(item_id)?.ok_or(ReviewError::NotAsked)?;
        let asked: ReviewQuestionResponse = serde_json::from_value(asked).map_err(|_| ReviewError::NotAsked)?;
        let message = grader::assemble_user_message(&asked.question, item.kind.as_str(), "", &asked.concept, &answer);
        let options = CallOptions::new(grader::CALL_TYPE, grader::MODEL, grader::SYSTEM_PROMPT, &message);
        let graded: ComprehensionGradeResponse = self
            .ctx
            .api()
            .call_with_retry(self.ctx.db(), &options)
            .await
            .map_err(|err| ReviewError::Model(err.readable("Paige could not grade this answer")))?;
        let now = self.ctx.now();
        let took = (now - at).to_std().unwrap_or_default();
        let rating = rating(graded.grade, took);
        let scheduled = self.reschedule(&item, rating, now)?;
        let db = self.ctx.db();
        db.record_review(&NewReview {
            item_id: item.id.clone(),
            question: asked.question.clone(),
            answer,
            grade: graded.grade.as_str().to_owned(),
            rating: rating_name(rating).to_owned(),
            elapsed_ms: took.as_millis() as i64,
            scheduled_days: scheduled.interval_days,
        })?;
        Ok(ReviewGraded {
            item_id: item.id,
            grade: graded.grade.as_str().to_owned(),
            why: graded.why,
            rating: rating_name(rating).to_owned(),
            interval_days: scheduled.interval_days,
            next_due: crate::db::iso(scheduled.due),
            addressed: scheduled.addressed,
        })
    }

    /// Rates an item into FSRS at `now` and stores its new card; a stable interval addresses
    /// it (and its gap).
    pub fn reschedule(&self, item: &ReviewItem, rating: Rating, now: DateTime<Utc>) -> Result<Scheduled, DbError> {
        let card: Card = serde_json::from_value(item.card.clone()).unwrap_or_else(|_| self.new_card(now));
        let next = self.fsrs.next(card, now, rating).card;
        let interval_days = next.scheduled_days;
        let addressed = interval_days >= STABLE_DAYS && next.reps >= STABLE_REVIEWS;
        let db = self.ctx.db();
        db.reschedule_review(&item.id, &serde_json::to_value(&next).unwrap_or_default(), next.due, addressed)?;
        if addressed && item.kind == ReviewKind::Gap {
            db.set_gap_addressed(&item.source_id, true)?;
        }
        Ok(Scheduled { due: next.due, interval_days, addressed })
    }

    /// A later phase of `skill_area` was understood (its comprehension check all right): the
    /// open gaps about that area are addressed. Returns how many.
    pub fn gap_understood(&self, skill_area: &str) -> Result<usize, DbError> {
        let db = self.ctx.db();
        let area = skill_area.trim().to_lowercase();
        let mut addressed = 0;
        for gap in db.knowledge_gaps(&crate::db::GapFilter::default())?.into_iter().filter(|g| !g.addressed) {
            let topic = gap.topic.trim().to_lowercase();
            let related = gap.related_concepts.iter().any(|c| c.trim().eq_ignore_ascii_case(&area));
            if area.is_empty() || !(topic.contains(&area) || area.contains(&topic) || related) {
                continue;
            }
            db.set_gap_addressed(&gap.id, true)?;
            db.address_review_source(ReviewKind::Gap, &gap.id)?;
            addressed += 1;
        }
        Ok(addressed)
    }

    fn item(&self, id: &str) -> Result<ReviewItem, ReviewError> {
        match self.ctx.db().review_item(id) {
            Ok(item) => Ok(item),
            Err(DbError::NotFound { .. }) => Err(ReviewError::UnknownItem),
            Err(err) => Err(err.into()),
        }
    }
}

/// Where an item was scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheduled {
    pub due: DateTime<Utc>,
    pub interval_days: i64,
    pub addressed: bool,
}

fn view(item: &ReviewItem) -> ReviewItemView {
    ReviewItemView {
        id: item.id.clone(),
        kind: item.kind.as_str().to_owned(),
        topic: item.topic.clone(),
        skill_area: item.skill_area.clone(),
        due: crate::db::iso(item.due),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grade_and_the_time_taken_make_the_fsrs_rating() {
        let fast = Duration::from_secs(5);
        let slow = Duration::from_secs(90);
        assert_eq!(rating(Grade::Incorrect, fast), Rating::Again);
        assert_eq!(rating(Grade::Partial, fast), Rating::Hard);
        assert_eq!(rating(Grade::Correct, fast), Rating::Easy);
        assert_eq!(rating(Grade::Correct, slow), Rating::Good);
    }
}

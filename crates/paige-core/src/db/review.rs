//! Spaced review's tables (issue 31): the review items (what the learner found hard, each an
//! FSRS card) and the log of every review answered.

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, params};

use super::{Db, DbError, get_opt_ts, get_ts, new_id, ts};

/// What a review item is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewKind {
    /// A knowledge gap (its id is the source).
    Gap,
    /// A kata not yet mastered (not all of its constraints unlocked).
    Kata,
    /// A concept answered wrong in a comprehension check (the question's id).
    Concept,
}

impl ReviewKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewKind::Gap => "gap",
            ReviewKind::Kata => "kata",
            ReviewKind::Concept => "concept",
        }
    }

    fn parse(s: &str) -> ReviewKind {
        match s {
            "kata" => ReviewKind::Kata,
            "concept" => ReviewKind::Concept,
            _ => ReviewKind::Gap,
        }
    }
}

/// One review item.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewItem {
    pub id: String,
    pub kind: ReviewKind,
    pub source_id: String,
    pub topic: String,
    pub skill_area: Option<String>,
    /// What the question is made from (JSON): the gap's evidence, the kata's description, the
    /// concept's question and quote.
    pub context: serde_json::Value,
    /// The FSRS card (JSON, rs-fsrs's `Card`).
    pub card: serde_json::Value,
    pub due: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub addressed_at: Option<DateTime<Utc>>,
}

/// An item to keep (once per kind and source).
#[derive(Debug, Clone, PartialEq)]
pub struct NewReviewItem {
    pub kind: ReviewKind,
    pub source_id: String,
    pub topic: String,
    pub skill_area: Option<String>,
    pub context: serde_json::Value,
    pub card: serde_json::Value,
    pub due: DateTime<Utc>,
}

/// A review answered.
#[derive(Debug, Clone, PartialEq)]
pub struct NewReview {
    pub item_id: String,
    pub question: String,
    pub answer: String,
    pub grade: String,
    pub rating: String,
    pub elapsed_ms: i64,
    pub scheduled_days: i64,
}

/// A comprehension question answered wrong: what its review item is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrongConcept {
    pub question_id: String,
    pub skill_area: Option<String>,
    pub concept: String,
    pub question: String,
    pub quote: String,
}

const COLUMNS: &str = "id, kind, source_id, topic, skill_area, context, card, due, created_at, addressed_at";

fn item(row: &rusqlite::Row<'_>) -> rusqlite::Result<ReviewItem> {
    let json = |idx: usize| -> rusqlite::Result<serde_json::Value> {
        let raw: String = row.get(idx)?;
        serde_json::from_str(&raw)
            .map_err(|err| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(err)))
    };
    Ok(ReviewItem {
        id: row.get(0)?,
        kind: ReviewKind::parse(&row.get::<_, String>(1)?),
        source_id: row.get(2)?,
        topic: row.get(3)?,
        skill_area: row.get(4)?,
        context: json(5)?,
        card: json(6)?,
        due: get_ts(row, 7)?,
        created_at: get_ts(row, 8)?,
        addressed_at: get_opt_ts(row, 9)?,
    })
}

impl Db {
    /// Keeps an item unless one of its kind and source exists, or an open one names the same
    /// topic (a gap and a wrong concept both called "closures" are one thing to review);
    /// true when added.
    pub fn add_review_item(&self, new: &NewReviewItem) -> Result<bool, DbError> {
        let added = self.conn().execute(
            "INSERT OR IGNORE INTO review_items (id, kind, source_id, topic, skill_area, context, card, due, created_at)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9
             WHERE NOT EXISTS (SELECT 1 FROM review_items
                               WHERE addressed_at IS NULL AND lower(trim(topic)) = lower(trim(?4)))",
            params![
                new_id(),
                new.kind.as_str(),
                new.source_id,
                new.topic,
                new.skill_area,
                new.context.to_string(),
                new.card.to_string(),
                ts(new.due),
                ts(self.now())
            ],
        )?;
        Ok(added == 1)
    }

    pub fn review_item(&self, id: &str) -> Result<ReviewItem, DbError> {
        self.conn()
            .query_row(&format!("SELECT {COLUMNS} FROM review_items WHERE id = ?1"), [id], item)
            .map_err(DbError::not_found("review item", id))
    }

    /// Items not addressed that are due at `now`, soonest first (at most `limit`), and how many
    /// are due in all.
    pub fn due_reviews(&self, now: DateTime<Utc>, limit: usize) -> Result<(Vec<ReviewItem>, u32), DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM review_items WHERE addressed_at IS NULL AND due <= ?1 ORDER BY due, rowid LIMIT ?2"
        ))?;
        let items = stmt.query_map(params![ts(now), limit as i64], item)?.collect::<Result<_, _>>()?;
        let count = conn.query_row(
            "SELECT count(*) FROM review_items WHERE addressed_at IS NULL AND due <= ?1",
            [ts(now)],
            |r| r.get(0),
        )?;
        Ok((items, count))
    }

    /// Stores an item's new card and due date; `addressed` marks it addressed (once).
    pub fn reschedule_review(
        &self,
        id: &str,
        card: &serde_json::Value,
        due: DateTime<Utc>,
        addressed: bool,
    ) -> Result<(), DbError> {
        self.conn().execute(
            "UPDATE review_items SET card = ?2, due = ?3, asked = NULL, asked_at = NULL,
                 addressed_at = CASE WHEN ?4 THEN coalesce(addressed_at, ?5) ELSE addressed_at END
             WHERE id = ?1",
            params![id, card.to_string(), ts(due), addressed, ts(self.now())],
        )?;
        Ok(())
    }

    /// Marks the items of a source addressed (a gap addressed by a later phase).
    pub fn address_review_source(&self, kind: ReviewKind, source_id: &str) -> Result<(), DbError> {
        self.conn().execute(
            "UPDATE review_items SET addressed_at = coalesce(addressed_at, ?3) WHERE kind = ?1 AND source_id = ?2",
            params![kind.as_str(), source_id, ts(self.now())],
        )?;
        Ok(())
    }

    pub fn record_review(&self, review: &NewReview) -> Result<(), DbError> {
        self.conn()
            .execute(
                "INSERT INTO review_log (id, item_id, question, answer, grade, rating, elapsed_ms, scheduled_days,
                     reviewed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    new_id(),
                    review.item_id,
                    review.question,
                    review.answer,
                    review.grade,
                    review.rating,
                    review.elapsed_ms,
                    review.scheduled_days,
                    ts(self.now())
                ],
            )
            .map_err(DbError::on_insert("review", "review item", &review.item_id))?;
        Ok(())
    }

    /// Keeps the question an item's review was asked (JSON) and when.
    pub fn set_review_asked(&self, id: &str, asked: &serde_json::Value) -> Result<(), DbError> {
        self.conn().execute(
            "UPDATE review_items SET asked = ?2, asked_at = ?3 WHERE id = ?1",
            params![id, asked.to_string(), ts(self.now())],
        )?;
        Ok(())
    }

    /// The question an item's open review was asked, and when; `None` when none is open.
    pub fn review_asked(&self, id: &str) -> Result<Option<(serde_json::Value, DateTime<Utc>)>, DbError> {
        let row: Option<(Option<String>, Option<String>)> = self
            .conn()
            .query_row("SELECT asked, asked_at FROM review_items WHERE id = ?1", [id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((Some(asked), Some(at))) = row else { return Ok(None) };
        let at = chrono::DateTime::parse_from_rfc3339(&at).map(|t| t.with_timezone(&Utc)).ok();
        Ok(serde_json::from_str(&asked).ok().zip(at))
    }

    /// How many reviews an item has had.
    pub fn review_count(&self, item_id: &str) -> Result<u32, DbError> {
        Ok(self.conn().query_row("SELECT count(*) FROM review_log WHERE item_id = ?1", [item_id], |r| r.get(0))?)
    }

    /// The item of a source, if any.
    pub fn review_item_of(&self, kind: ReviewKind, source_id: &str) -> Result<Option<ReviewItem>, DbError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM review_items WHERE kind = ?1 AND source_id = ?2"),
                params![kind.as_str(), source_id],
                item,
            )
            .optional()?)
    }

    /// Questions graded incorrect, oldest first.
    pub fn wrong_concepts(&self) -> Result<Vec<WrongConcept>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id, skill_area, concept, question, quote FROM comprehension_checks
             WHERE status = 'graded' AND grade = 'incorrect' ORDER BY answered_at",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok(WrongConcept {
                    question_id: r.get(0)?,
                    skill_area: r.get(1)?,
                    concept: r.get(2)?,
                    question: r.get(3)?,
                    quote: r.get(4)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

//! The learning record's reads (issue 31; the format is in `record/`): what the learner did,
//! oldest first, handed to a callback one row at a time so memory stays bounded however long
//! the history. Read-only, in one read transaction (one snapshot) under the connection lock.
//!
//! What is read is what shows what the learner can do: sessions and their phases, graded
//! comprehension questions, kata attempts, reviews, reliance counts, solutions shown. What
//! they typed (answers, prompts, kata code) and the questions' quoted code are never read.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};
use serde::Deserialize;

use super::{
    Db, DbError, HintLevel, KataConstraint, PhaseStatus, RELIANCE_CLASSES, RelianceCounts, SessionStatus, get_json, ts,
};

/// One row of the record, in the order [`Db::each_record_row`] hands them out: every
/// session, then the questions, the katas, the reviews, the reliance counts (exactly one),
/// the solutions shown.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordRow {
    Session(RecordSession),
    Question(RecordQuestion),
    Kata(RecordKata),
    Review(RecordReview),
    Reliance(RelianceCounts),
    Solution(RecordSolution),
}

/// A session with the phases of its plans. Timestamps are the stored ISO 8601 UTC text.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordSession {
    pub id: String,
    pub issue_number: Option<i64>,
    pub issue_title: Option<String>,
    pub status: SessionStatus,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// Oldest plan first, each plan's phases by number.
    pub phases: Vec<RecordPhase>,
}

/// A phase: where it ended (status, hint level), not what it said.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordPhase {
    /// Which of the session's plans it belongs to, 1 for the first (a session is re-planned
    /// when Claude Code plans again).
    pub plan: u32,
    pub number: i64,
    pub title: String,
    pub skill_area: Option<String>,
    pub status: PhaseStatus,
    /// The hint level it ended at (or is at, while active).
    pub hint_level: HintLevel,
    pub completed_at: Option<String>,
}

/// A settled comprehension question: graded, skipped or expired. No answer, no quote.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordQuestion {
    pub session_id: String,
    /// `None` only if its phase was deleted meanwhile.
    pub phase_number: Option<i64>,
    pub skill_area: Option<String>,
    pub kind: String,
    pub concept: String,
    /// `graded`, `skipped` or `expired`.
    pub status: String,
    /// `correct`, `partial` or `incorrect` when graded.
    pub grade: Option<String>,
    pub answered_at: Option<String>,
}

/// A kata with its constraints and what each attempt reached (the code is not read).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordKata {
    /// The session whose knowledge gap the kata practises.
    pub session_id: String,
    pub title: String,
    pub topic: String,
    pub constraints: Vec<KataConstraint>,
    pub attempts: Vec<RecordAttempt>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RecordAttempt {
    pub level: Option<u8>,
    pub passed: Option<bool>,
    /// The titles of the constraints it was made under.
    pub constraints: Vec<String>,
}

/// One answered review with its item (no question, no answer).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordReview {
    pub topic: String,
    /// `gap`, `kata` or `concept`.
    pub kind: String,
    pub skill_area: Option<String>,
    pub grade: String,
    pub rating: String,
    pub scheduled_days: i64,
    pub reviewed_at: String,
}

/// A code block Claude Code showed that the learner then typed.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordSolution {
    pub session_id: Option<String>,
    pub phase_number: Option<i64>,
    pub path: String,
    pub overlap: f64,
    pub block_lines: i64,
    pub created_at: String,
}

impl Db {
    /// Hands `f` every row of the learning record since `since` (all time when `None`), one at
    /// a time, in the order of [`RecordRow`]: sessions by start, questions by creation, katas
    /// by their session's start, reviews by time, the reliance counts, solutions by time.
    /// Katas have no time of their own: they come with their knowledge gap's session.
    ///
    /// The connection stays locked until the last row: `f` should write, not wait.
    pub fn each_record_row<E: From<DbError>>(
        &self,
        since: Option<DateTime<Utc>>,
        mut f: impl FnMut(RecordRow) -> Result<(), E>,
    ) -> Result<(), E> {
        let since = since.map(ts).unwrap_or_default();
        let mut conn = self.conn();
        // A deferred read transaction: every query below sees the same snapshot; rolled back
        // on drop (nothing is written).
        let tx = conn.transaction().map_err(DbError::from)?;
        sessions(&tx, &since, &mut f)?;
        questions(&tx, &since, &mut f)?;
        katas(&tx, &since, &mut f)?;
        reviews(&tx, &since, &mut f)?;
        f(RecordRow::Reliance(reliance(&tx, &since)?))?;
        solutions(&tx, &since, &mut f)?;
        Ok(())
    }
}

/// Sessions joined to their phases, grouped as the rows stream by.
fn sessions<E: From<DbError>>(
    conn: &Connection,
    since: &str,
    f: &mut impl FnMut(RecordRow) -> Result<(), E>,
) -> Result<(), E> {
    let mut stmt = conn
        .prepare(
            "SELECT s.id, s.issue_number, s.issue_title, s.status, s.started_at, s.ended_at,
                    pl.id, p.number, p.title, p.skill_area, p.status, p.hint_level, p.completed_at
             FROM sessions s
             LEFT JOIN plans pl ON pl.session_id = s.id
             LEFT JOIN phases p ON p.plan_id = pl.id
             WHERE s.started_at >= ?1
             ORDER BY s.started_at, s.rowid, pl.created_at, pl.rowid, p.number, p.rowid",
        )
        .map_err(DbError::from)?;
    let mut rows = stmt.query(params![since]).map_err(DbError::from)?;
    let mut current: Option<RecordSession> = None;
    let mut plan_id: Option<String> = None;
    let mut plan = 0u32;
    while let Some(row) = rows.next().map_err(DbError::from)? {
        let id: String = row.get(0).map_err(DbError::from)?;
        if current.as_ref().is_none_or(|s| s.id != id) {
            if let Some(done) = current.take() {
                f(RecordRow::Session(done))?;
            }
            current = Some(session(row, id).map_err(DbError::from)?);
            plan_id = None;
            plan = 0;
        }
        let this_plan: Option<String> = row.get(6).map_err(DbError::from)?;
        if this_plan.is_some() && this_plan != plan_id {
            plan += 1;
            plan_id = this_plan;
        }
        if let (Some(session), Some(phase)) = (current.as_mut(), phase(row, plan).map_err(DbError::from)?) {
            session.phases.push(phase);
        }
    }
    if let Some(done) = current {
        f(RecordRow::Session(done))?;
    }
    Ok(())
}

fn session(row: &rusqlite::Row<'_>, id: String) -> rusqlite::Result<RecordSession> {
    Ok(RecordSession {
        id,
        issue_number: row.get(1)?,
        issue_title: row.get(2)?,
        status: row.get(3)?,
        started_at: row.get(4)?,
        ended_at: row.get(5)?,
        phases: Vec::new(),
    })
}

/// The phase on a joined row; `None` for a session (or plan) without phases.
fn phase(row: &rusqlite::Row<'_>, plan: u32) -> rusqlite::Result<Option<RecordPhase>> {
    let Some(number) = row.get::<_, Option<i64>>(7)? else { return Ok(None) };
    Ok(Some(RecordPhase {
        plan,
        number,
        title: row.get(8)?,
        skill_area: row.get(9)?,
        status: row.get(10)?,
        hint_level: row.get(11)?,
        completed_at: row.get(12)?,
    }))
}

/// Runs `sql` (`?1` bound to `since`) and hands `f` each row as `map` reads it.
fn each<T, E: From<DbError>>(
    conn: &Connection,
    sql: &str,
    since: &str,
    map: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    wrap: fn(T) -> RecordRow,
    f: &mut impl FnMut(RecordRow) -> Result<(), E>,
) -> Result<(), E> {
    let mut stmt = conn.prepare(sql).map_err(DbError::from)?;
    let mut rows = stmt.query(params![since]).map_err(DbError::from)?;
    while let Some(row) = rows.next().map_err(DbError::from)? {
        f(wrap(map(row).map_err(DbError::from)?))?;
    }
    Ok(())
}

fn questions<E: From<DbError>>(
    conn: &Connection,
    since: &str,
    f: &mut impl FnMut(RecordRow) -> Result<(), E>,
) -> Result<(), E> {
    let sql = "SELECT c.session_id, p.number, c.skill_area, c.kind, c.concept, c.status, c.grade, c.answered_at
         FROM comprehension_checks c LEFT JOIN phases p ON p.id = c.phase_id
         WHERE c.created_at >= ?1 AND c.status IN ('graded', 'skipped', 'expired')
         ORDER BY c.created_at, c.rowid";
    each(conn, sql, since, question, RecordRow::Question, f)
}

fn question(row: &rusqlite::Row<'_>) -> rusqlite::Result<RecordQuestion> {
    Ok(RecordQuestion {
        session_id: row.get(0)?,
        phase_number: row.get(1)?,
        skill_area: row.get(2)?,
        kind: row.get(3)?,
        concept: row.get(4)?,
        status: row.get(5)?,
        grade: row.get(6)?,
        answered_at: row.get(7)?,
    })
}

/// What the record reads of a stored attempt: its level, verdict and constraints' titles;
/// the code and the review text are skipped by the parser, not kept.
#[derive(Deserialize)]
struct StoredAttempt {
    #[serde(default)]
    level: Option<u8>,
    #[serde(default)]
    passed: Option<bool>,
    #[serde(default)]
    constraints: Option<Vec<Titled>>,
}

#[derive(Deserialize)]
struct Titled {
    title: String,
}

fn katas<E: From<DbError>>(
    conn: &Connection,
    since: &str,
    f: &mut impl FnMut(RecordRow) -> Result<(), E>,
) -> Result<(), E> {
    let sql = "SELECT s.id, k.title, g.topic, k.constraints, k.user_attempts
         FROM kata_specs k
         JOIN knowledge_gaps g ON g.id = k.knowledge_gap_id
         JOIN sessions s ON s.id = g.session_id
         WHERE s.started_at >= ?1
         ORDER BY s.started_at, s.rowid, k.rowid";
    each(conn, sql, since, kata, RecordRow::Kata, f)
}

fn kata(row: &rusqlite::Row<'_>) -> rusqlite::Result<RecordKata> {
    let attempts: Vec<StoredAttempt> = get_json(row, 4)?;
    Ok(RecordKata {
        session_id: row.get(0)?,
        title: row.get(1)?,
        topic: row.get(2)?,
        constraints: get_json(row, 3)?,
        attempts: attempts
            .into_iter()
            .map(|a| RecordAttempt {
                level: a.level,
                passed: a.passed,
                constraints: a.constraints.into_iter().flatten().map(|c| c.title).collect(),
            })
            .collect(),
    })
}

fn reviews<E: From<DbError>>(
    conn: &Connection,
    since: &str,
    f: &mut impl FnMut(RecordRow) -> Result<(), E>,
) -> Result<(), E> {
    let sql = "SELECT i.topic, i.kind, i.skill_area, l.grade, l.rating, l.scheduled_days, l.reviewed_at
         FROM review_log l JOIN review_items i ON i.id = l.item_id
         WHERE l.reviewed_at >= ?1
         ORDER BY l.reviewed_at, l.rowid";
    each(conn, sql, since, review, RecordRow::Review, f)
}

fn review(row: &rusqlite::Row<'_>) -> rusqlite::Result<RecordReview> {
    Ok(RecordReview {
        topic: row.get(0)?,
        kind: row.get(1)?,
        skill_area: row.get(2)?,
        grade: row.get(3)?,
        rating: row.get(4)?,
        scheduled_days: row.get(5)?,
        reviewed_at: row.get(6)?,
    })
}

/// The learner's own prompts per reliance class since `since` (counted, never read; what Paige
/// typed into Claude Code is not the learner's).
fn reliance(conn: &Connection, since: &str) -> Result<RelianceCounts, DbError> {
    let mut stmt = conn.prepare(
        "SELECT class, count(*) FROM learner_prompts WHERE created_at >= ?1 AND author = 'learner' GROUP BY class",
    )?;
    let mut out: RelianceCounts = [0; 5];
    for row in stmt.query_map(params![since], |r| Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?)))? {
        let (class, n) = row?;
        if let Some(i) = RELIANCE_CLASSES.iter().position(|c| *c == class) {
            out[i] += n;
        }
    }
    Ok(out)
}

fn solutions<E: From<DbError>>(
    conn: &Connection,
    since: &str,
    f: &mut impl FnMut(RecordRow) -> Result<(), E>,
) -> Result<(), E> {
    let sql = "SELECT s.session_id, p.number, s.path, s.overlap, s.block_lines, s.created_at
         FROM solutions_shown s LEFT JOIN phases p ON p.id = s.phase_id
         WHERE s.created_at >= ?1
         ORDER BY s.created_at, s.rowid";
    each(conn, sql, since, solution, RecordRow::Solution, f)
}

fn solution(row: &rusqlite::Row<'_>) -> rusqlite::Result<RecordSolution> {
    Ok(RecordSolution {
        session_id: row.get(0)?,
        phase_number: row.get(1)?,
        path: row.get(2)?,
        overlap: row.get(3)?,
        block_lines: row.get(4)?,
        created_at: row.get(5)?,
    })
}

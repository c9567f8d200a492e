//! The learning signals' tables (issue 30): each phase's baseline (what its files held when
//! the plan arrived), the comprehension checks' questions, answers and grades, the learner's
//! prompts to Claude Code with their reliance class, and the solutions shown then typed.

use chrono::{DateTime, Utc};
use rusqlite::params;

use super::{Db, DbError, get_opt_ts, get_ts, new_id, ts};

/// Where a comprehension question stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionStatus {
    /// Asked, not answered (or its grading failed: the answer is kept for a retry).
    Open,
    /// Answered; the grade is being asked for.
    Grading,
    Graded,
    /// The learner skipped it.
    Skipped,
    /// Never answered before the session ended (counted as skipped).
    Expired,
}

impl QuestionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionStatus::Open => "open",
            QuestionStatus::Grading => "grading",
            QuestionStatus::Graded => "graded",
            QuestionStatus::Skipped => "skipped",
            QuestionStatus::Expired => "expired",
        }
    }

    fn parse(s: &str) -> QuestionStatus {
        match s {
            "grading" => QuestionStatus::Grading,
            "graded" => QuestionStatus::Graded,
            "skipped" => QuestionStatus::Skipped,
            "expired" => QuestionStatus::Expired,
            _ => QuestionStatus::Open,
        }
    }
}

/// One question of a phase's comprehension check.
#[derive(Debug, Clone, PartialEq)]
pub struct ComprehensionQuestion {
    pub id: String,
    pub session_id: String,
    pub phase_id: String,
    pub skill_area: Option<String>,
    /// `predict_output`, `explain_line` or `edge_case`.
    pub kind: String,
    pub question: String,
    pub quote: String,
    pub concept: String,
    pub status: QuestionStatus,
    pub answer: Option<String>,
    /// `correct`, `partial` or `incorrect` once graded.
    pub grade: Option<String>,
    pub why: Option<String>,
    pub created_at: DateTime<Utc>,
    pub answered_at: Option<DateTime<Utc>>,
}

/// A question to store (status `open`).
#[derive(Debug, Clone, PartialEq)]
pub struct NewQuestion {
    pub session_id: String,
    pub phase_id: String,
    pub skill_area: Option<String>,
    pub kind: String,
    pub question: String,
    pub quote: String,
    pub concept: String,
}

/// How the learner's comprehension answers came out (skipped counts expired ones too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GradeTally {
    pub correct: u32,
    pub partial: u32,
    pub incorrect: u32,
    pub skipped: u32,
}

/// Prompts per reliance class, in the order of [`RELIANCE_CLASSES`].
pub type RelianceCounts = [u32; 5];

/// The reliance classes as stored, in the order [`RelianceCounts`] uses.
pub const RELIANCE_CLASSES: [&str; 5] =
    ["delegation", "debugging_help", "conceptual_question", "verification", "other"];

const QUESTION_COLUMNS: &str = "id, session_id, phase_id, skill_area, kind, question, quote, concept, status, answer, \
     grade, why, created_at, answered_at";

fn question(row: &rusqlite::Row<'_>) -> rusqlite::Result<ComprehensionQuestion> {
    Ok(ComprehensionQuestion {
        id: row.get(0)?,
        session_id: row.get(1)?,
        phase_id: row.get(2)?,
        skill_area: row.get(3)?,
        kind: row.get(4)?,
        question: row.get(5)?,
        quote: row.get(6)?,
        concept: row.get(7)?,
        status: QuestionStatus::parse(&row.get::<_, String>(8)?),
        answer: row.get(9)?,
        grade: row.get(10)?,
        why: row.get(11)?,
        created_at: get_ts(row, 12)?,
        answered_at: get_opt_ts(row, 13)?,
    })
}

fn counts(rows: impl Iterator<Item = rusqlite::Result<(String, u32)>>) -> rusqlite::Result<RelianceCounts> {
    let mut out = [0; 5];
    for row in rows {
        let (class, n) = row?;
        if let Some(i) = RELIANCE_CLASSES.iter().position(|c| *c == class) {
            out[i] += n;
        }
    }
    Ok(out)
}

impl Db {
    /// Keeps what `path` held for `phase_id` (`None`: it did not exist); the first baseline of
    /// a path stays.
    pub fn save_phase_baseline(&self, phase_id: &str, path: &str, content: Option<&str>) -> Result<(), DbError> {
        self.conn()
            .execute(
                "INSERT OR IGNORE INTO phase_baselines (phase_id, path, content) VALUES (?1, ?2, ?3)",
                params![phase_id, path, content],
            )
            .map_err(DbError::on_insert("phase baseline", "phase", phase_id))?;
        Ok(())
    }

    /// A phase's baselines: (path, content at the plan's arrival; `None` when it did not exist).
    pub fn phase_baselines(&self, phase_id: &str) -> Result<Vec<(String, Option<String>)>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT path, content FROM phase_baselines WHERE phase_id = ?1 ORDER BY path")?;
        let rows = stmt.query_map([phase_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    pub fn create_question(&self, new: NewQuestion) -> Result<ComprehensionQuestion, DbError> {
        let id = new_id();
        self.conn()
            .execute(
                "INSERT INTO comprehension_checks (id, session_id, phase_id, skill_area, kind, question, quote, concept,
                     created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    id,
                    new.session_id,
                    new.phase_id,
                    new.skill_area,
                    new.kind,
                    new.question,
                    new.quote,
                    new.concept,
                    ts(self.now())
                ],
            )
            .map_err(DbError::on_insert("comprehension question", "phase", &new.phase_id))?;
        self.question(&id)
    }

    pub fn question(&self, id: &str) -> Result<ComprehensionQuestion, DbError> {
        self.conn()
            .query_row(&format!("SELECT {QUESTION_COLUMNS} FROM comprehension_checks WHERE id = ?1"), [id], question)
            .map_err(DbError::not_found("comprehension question", id))
    }

    /// A phase's questions, in the order they were asked.
    pub fn questions_for_phase(&self, phase_id: &str) -> Result<Vec<ComprehensionQuestion>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {QUESTION_COLUMNS} FROM comprehension_checks WHERE phase_id = ?1 ORDER BY created_at, rowid"
        ))?;
        let rows = stmt.query_map([phase_id], question)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// A session's questions, in the order they were asked.
    pub fn questions_for_session(&self, session_id: &str) -> Result<Vec<ComprehensionQuestion>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {QUESTION_COLUMNS} FROM comprehension_checks WHERE session_id = ?1 ORDER BY created_at, rowid"
        ))?;
        let rows = stmt.query_map([session_id], question)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Stores the learner's answer to an open question, which moves to `grading`; `false` when
    /// the question is no longer open (answered, skipped or expired).
    pub fn answer_question(&self, id: &str, answer: &str) -> Result<bool, DbError> {
        let changed = self.conn().execute(
            "UPDATE comprehension_checks SET status = 'grading', answer = ?2, answered_at = ?3
             WHERE id = ?1 AND status = 'open'",
            params![id, answer, ts(self.now())],
        )?;
        Ok(changed == 1)
    }

    /// A question whose grading failed is open again; its answer is kept for the retry.
    pub fn reopen_question(&self, id: &str) -> Result<(), DbError> {
        self.conn()
            .execute("UPDATE comprehension_checks SET status = 'open' WHERE id = ?1 AND status = 'grading'", [id])?;
        Ok(())
    }

    /// Stores the grade of a question being graded; `false` when it is no longer being graded
    /// (the session ended meanwhile).
    pub fn grade_question(&self, id: &str, grade: &str, why: &str, concept: &str) -> Result<bool, DbError> {
        let changed = self.conn().execute(
            "UPDATE comprehension_checks SET status = 'graded', grade = ?2, why = ?3,
                 concept = CASE WHEN ?4 = '' THEN concept ELSE ?4 END
             WHERE id = ?1 AND status = 'grading'",
            params![id, grade, why, concept.trim()],
        )?;
        Ok(changed == 1)
    }

    /// Skips a phase's open questions; how many.
    pub fn skip_questions(&self, phase_id: &str) -> Result<usize, DbError> {
        Ok(self.conn().execute(
            "UPDATE comprehension_checks SET status = 'skipped' WHERE phase_id = ?1 AND status = 'open'",
            [phase_id],
        )?)
    }

    /// The session ended: its questions still open or being graded expire; how many.
    pub fn expire_questions(&self, session_id: &str) -> Result<usize, DbError> {
        Ok(self.conn().execute(
            "UPDATE comprehension_checks SET status = 'expired'
             WHERE session_id = ?1 AND status IN ('open', 'grading')",
            [session_id],
        )?)
    }

    /// The newest `limit` grades in `skill_area`, newest first.
    pub fn recent_grades(&self, skill_area: &str, limit: usize) -> Result<Vec<String>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT grade FROM comprehension_checks WHERE skill_area = ?1 AND status = 'graded'
             ORDER BY answered_at DESC, rowid DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![skill_area, limit as i64], |r| r.get(0))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// How the questions asked since `since` (all time when `None`) came out.
    pub fn grade_tally(&self, since: Option<DateTime<Utc>>) -> Result<GradeTally, DbError> {
        let since = since.map(ts).unwrap_or_default();
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT coalesce(grade, status), count(*) FROM comprehension_checks
             WHERE created_at >= ?1 AND status IN ('graded', 'skipped', 'expired') GROUP BY 1",
        )?;
        let mut tally = GradeTally::default();
        for row in stmt.query_map([since], |r| Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?)))? {
            let (what, n) = row?;
            match what.as_str() {
                "correct" => tally.correct += n,
                "partial" => tally.partial += n,
                "incorrect" => tally.incorrect += n,
                _ => tally.skipped += n,
            }
        }
        Ok(tally)
    }

    /// Keeps one prompt the learner typed to Claude Code, with its reliance class and what
    /// decided it (a rule's name, or `model`).
    pub fn record_prompt(
        &self,
        session_id: Option<&str>,
        phase_id: Option<&str>,
        prompt: &str,
        class: &str,
        decided_by: &str,
        author: super::Author,
    ) -> Result<(), DbError> {
        self.conn().execute(
            "INSERT INTO learner_prompts (id, session_id, phase_id, prompt, class, decided_by, author, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![new_id(), session_id, phase_id, prompt, class, decided_by, author.as_str(), ts(self.now())],
        )?;
        Ok(())
    }

    /// A session's prompts per reliance class.
    pub fn reliance_counts(&self, session_id: &str) -> Result<RelianceCounts, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT class, count(*) FROM learner_prompts WHERE session_id = ?1 AND author = 'learner' GROUP BY class",
        )?;
        Ok(counts(stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))?)?)
    }

    /// A phase's prompts per reliance class.
    pub fn phase_reliance_counts(&self, phase_id: &str) -> Result<RelianceCounts, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT class, count(*) FROM learner_prompts WHERE phase_id = ?1 AND author = 'learner' GROUP BY class",
        )?;
        Ok(counts(stmt.query_map([phase_id], |r| Ok((r.get(0)?, r.get(1)?)))?)?)
    }

    /// Prompts per reliance class in buckets since `since` (all time when `None`): a bucket is
    /// a day (`2026-11-22`) when `by_day`, else an ISO-like week (`2026-W47`), oldest first.
    pub fn reliance_buckets(
        &self,
        since: Option<DateTime<Utc>>,
        by_day: bool,
    ) -> Result<Vec<(String, RelianceCounts)>, DbError> {
        let since = since.map(ts).unwrap_or_default();
        let bucket = if by_day { "substr(created_at, 1, 10)" } else { "strftime('%Y-W%W', created_at)" };
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {bucket}, class, count(*) FROM learner_prompts WHERE created_at >= ?1 AND author = 'learner' GROUP BY 1, 2 ORDER BY 1"
        ))?;
        let mut out: Vec<(String, RelianceCounts)> = Vec::new();
        for row in
            stmt.query_map([since], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, u32>(2)?)))?
        {
            let (label, class, n) = row?;
            if out.last().is_none_or(|(l, _)| *l != label) {
                out.push((label, [0; 5]));
            }
            if let (Some(i), Some((_, c))) = (RELIANCE_CLASSES.iter().position(|k| *k == class), out.last_mut()) {
                c[i] += n;
            }
        }
        Ok(out)
    }

    /// Records a code block Claude Code showed that the learner then typed into `path`.
    pub fn record_solution_shown(
        &self,
        session_id: &str,
        phase_id: Option<&str>,
        path: &str,
        overlap: f64,
        block_lines: usize,
    ) -> Result<(), DbError> {
        self.conn().execute(
            "INSERT INTO solutions_shown (id, session_id, phase_id, path, overlap, block_lines, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![new_id(), session_id, phase_id, path, overlap, block_lines as i64, ts(self.now())],
        )?;
        Ok(())
    }

    /// Solutions shown then typed since `since` (all time when `None`), or in one session.
    pub fn solutions_shown(&self, since: Option<DateTime<Utc>>, session_id: Option<&str>) -> Result<u32, DbError> {
        let since = since.map(ts).unwrap_or_default();
        Ok(self.conn().query_row(
            "SELECT count(*) FROM solutions_shown WHERE created_at >= ?1 AND (?2 IS NULL OR session_id = ?2)",
            params![since, session_id],
            |r| r.get(0),
        )?)
    }

    /// Solutions shown then typed in one phase.
    pub fn solutions_shown_in_phase(&self, phase_id: &str) -> Result<u32, DbError> {
        Ok(self
            .conn()
            .query_row("SELECT count(*) FROM solutions_shown WHERE phase_id = ?1", [phase_id], |r| r.get(0))?)
    }
}

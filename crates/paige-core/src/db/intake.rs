//! The intake interview's event store (migration 10): one interview per session, with the
//! guard's constants and the scripted coding question, and every guard input in order. The
//! rows are JSON: the guard's types live in `intake/`, this layer only keeps them.

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{Db, DbError, get_json, get_ts, to_json, ts};

/// A recorded interview.
#[derive(Debug, Clone, PartialEq)]
pub struct IntakeInterview {
    pub session_id: String,
    pub config: serde_json::Value,
    pub coding_question: String,
    pub created_at: DateTime<Utc>,
}

impl Db {
    /// Records that `session_id` holds an interview with these constants; `false` when it
    /// already had one (that one stands).
    pub fn create_intake(
        &self,
        session_id: &str,
        config: &serde_json::Value,
        coding_question: &str,
    ) -> Result<bool, DbError> {
        let created = self
            .conn()
            .execute(
                "INSERT OR IGNORE INTO intake_interviews (session_id, config, coding_question, created_at)
                 VALUES (?1, ?2, ?3, ?4)",
                params![session_id, to_json(config)?, coding_question, ts(self.now())],
            )
            .map_err(DbError::on_insert("intake interview", "session", session_id))?;
        Ok(created == 1)
    }

    pub fn intake(&self, session_id: &str) -> Result<Option<IntakeInterview>, DbError> {
        let row = self
            .conn()
            .query_row(
                "SELECT session_id, config, coding_question, created_at FROM intake_interviews WHERE session_id = ?1",
                [session_id],
                |row| {
                    Ok(IntakeInterview {
                        session_id: row.get(0)?,
                        config: get_json(row, 1)?,
                        coding_question: row.get(2)?,
                        created_at: get_ts(row, 3)?,
                    })
                },
            )
            .optional()?;
        Ok(row)
    }

    /// Forgets the session's interview and its guard inputs (a skipped interview taken up
    /// again starts afresh, its timebox from its new first question); true if there was one.
    pub fn delete_intake(&self, session_id: &str) -> Result<bool, DbError> {
        let deleted = self.conn().execute("DELETE FROM intake_interviews WHERE session_id = ?1", [session_id])?;
        Ok(deleted == 1)
    }

    /// The session of the newest interview, if any.
    pub fn latest_intake_session(&self) -> Result<Option<String>, DbError> {
        let id = self
            .conn()
            .query_row(
                "SELECT session_id FROM intake_interviews ORDER BY created_at DESC, rowid DESC LIMIT 1",
                [],
                |row| row.get(0),
            )
            .optional()?;
        Ok(id)
    }

    /// Appends one guard input at `at_ms` (the injected clock, ms since the epoch) and
    /// returns its sequence number, 0 for the first.
    pub fn append_intake_event(&self, session_id: &str, at_ms: i64, event: &serde_json::Value) -> Result<u32, DbError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let seq: u32 = tx.query_row(
            "SELECT COALESCE(MAX(seq) + 1, 0) FROM intake_events WHERE session_id = ?1",
            [session_id],
            |row| row.get(0),
        )?;
        tx.execute(
            "INSERT INTO intake_events (session_id, seq, at_ms, event) VALUES (?1, ?2, ?3, ?4)",
            params![session_id, seq, at_ms, to_json(event)?],
        )
        .map_err(DbError::on_insert("intake event", "intake interview", session_id))?;
        tx.commit()?;
        Ok(seq)
    }

    /// Every guard input of the interview, in order: `(at_ms, event)`.
    pub fn intake_events(&self, session_id: &str) -> Result<Vec<(i64, serde_json::Value)>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT at_ms, event FROM intake_events WHERE session_id = ?1 ORDER BY seq")?;
        let rows =
            stmt.query_map([session_id], |row| Ok((row.get(0)?, get_json(row, 1)?)))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

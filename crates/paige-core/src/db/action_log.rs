use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{ActionType, Db, DbError, get_opt_json, get_ts, new_id, to_json, ts};

/// One entry of the action timeline: a session's, or none for the few actions the spec logs
/// outside a session (Explain This, practice reviews, the dashboard).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionEntry {
    pub id: String,
    pub session_id: Option<String>,
    pub action_type: ActionType,
    pub data: Option<serde_json::Value>,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, session_id, action_type, data, created_at";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ActionEntry> {
    Ok(ActionEntry {
        id: row.get(0)?,
        session_id: row.get(1)?,
        action_type: row.get(2)?,
        data: get_opt_json(row, 3)?,
        created_at: get_ts(row, 4)?,
    })
}

impl Db {
    pub fn log_action(
        &self,
        session_id: &str,
        action_type: ActionType,
        data: Option<serde_json::Value>,
    ) -> Result<ActionEntry, DbError> {
        self.insert_action(Some(session_id), action_type, data)
    }

    /// Logs an action that belongs to no session.
    pub fn log_action_without_session(
        &self,
        action_type: ActionType,
        data: Option<serde_json::Value>,
    ) -> Result<ActionEntry, DbError> {
        self.insert_action(None, action_type, data)
    }

    /// The last `limit` actions logged outside any session, newest first.
    pub fn actions_without_session(&self, limit: usize) -> Result<Vec<ActionEntry>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM action_log WHERE session_id IS NULL ORDER BY created_at DESC, rowid DESC LIMIT ?1"
        ))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map([limit], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    fn insert_action(
        &self,
        session_id: Option<&str>,
        action_type: ActionType,
        data: Option<serde_json::Value>,
    ) -> Result<ActionEntry, DbError> {
        let entry = ActionEntry {
            id: new_id(),
            session_id: session_id.map(str::to_owned),
            action_type,
            data,
            created_at: self.now(),
        };
        let data = entry.data.as_ref().map(to_json).transpose()?;
        self.conn()
            .execute(
                "INSERT INTO action_log (id, session_id, action_type, data, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![entry.id, entry.session_id, entry.action_type, data, ts(entry.created_at)],
            )
            .map_err(DbError::on_insert("action", "session", session_id.unwrap_or("none")))?;
        Ok(entry)
    }

    /// The last `limit` actions of a session, newest first, optionally of one type only.
    pub fn recent_actions(
        &self,
        session_id: &str,
        limit: usize,
        only: Option<ActionType>,
    ) -> Result<Vec<ActionEntry>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM action_log WHERE session_id = ?1 AND (?2 IS NULL OR action_type = ?2)
             ORDER BY created_at DESC, rowid DESC LIMIT ?3"
        ))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![session_id, only, limit], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// How the learner's interviews have ended, over every session: (one ran to its hand-over,
    /// one was skipped) — `intake_transition` actions by their reason.
    pub fn interview_endings(&self) -> Result<(bool, bool), DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT DISTINCT json_extract(data, '$.reason') = 'skipped' FROM action_log
             WHERE action_type = 'intake_transition' AND data IS NOT NULL",
        )?;
        let skips: Vec<Option<bool>> = stmt.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
        Ok((skips.contains(&Some(false)), skips.contains(&Some(true))))
    }

    /// Every action type the log holds, in any session or none.
    pub fn logged_action_types(&self) -> Result<std::collections::HashSet<ActionType>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT DISTINCT action_type FROM action_log")?;
        let types = stmt.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
        Ok(types)
    }

    /// When the session's last action (of one type, if given) happened.
    pub fn last_action_at(&self, session_id: &str, only: Option<ActionType>) -> Result<Option<DateTime<Utc>>, DbError> {
        let raw: Option<String> = self
            .conn()
            .query_row(
                "SELECT max(created_at) FROM action_log WHERE session_id = ?1 AND (?2 IS NULL OR action_type = ?2)",
                params![session_id, only],
                |row| row.get(0),
            )
            .optional()?
            .flatten();
        Ok(raw.map(|raw| super::parse_ts(0, raw)).transpose()?)
    }
}

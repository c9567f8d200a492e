use std::path::PathBuf;

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Db, DbError, SessionStatus, get_opt_ts, get_ts, new_id, ts};

/// One coaching session on one issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub project_dir: PathBuf,
    pub issue_number: Option<i64>,
    pub issue_title: Option<String>,
    pub status: SessionStatus,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewSession {
    pub project_dir: PathBuf,
    pub issue_number: Option<i64>,
    pub issue_title: Option<String>,
}

const COLUMNS: &str = "id, project_dir, issue_number, issue_title, status, started_at, ended_at";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: row.get(0)?,
        project_dir: PathBuf::from(row.get::<_, String>(1)?),
        issue_number: row.get(2)?,
        issue_title: row.get(3)?,
        status: row.get(4)?,
        started_at: get_ts(row, 5)?,
        ended_at: get_opt_ts(row, 6)?,
    })
}

impl Db {
    /// Starts a session: status `active`, `started_at` now.
    pub fn create_session(&self, new: NewSession) -> Result<Session, DbError> {
        let session = Session {
            id: new_id(),
            project_dir: new.project_dir,
            issue_number: new.issue_number,
            issue_title: new.issue_title,
            status: SessionStatus::Active,
            started_at: self.now(),
            ended_at: None,
        };
        self.conn().execute(
            "INSERT INTO sessions (id, project_dir, issue_number, issue_title, status, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                session.id,
                session.project_dir.to_string_lossy(),
                session.issue_number,
                session.issue_title,
                session.status,
                ts(session.started_at)
            ],
        )?;
        Ok(session)
    }

    pub fn session(&self, id: &str) -> Result<Session, DbError> {
        self.conn()
            .query_row(&format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"), [id], from_row)
            .map_err(DbError::not_found("session", id))
    }

    /// The most recently started session that is still active, if any.
    pub fn active_session(&self) -> Result<Option<Session>, DbError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM sessions WHERE status = 'active' ORDER BY started_at DESC, rowid DESC LIMIT 1"),
                [],
                from_row,
            )
            .optional()?)
    }

    /// All sessions, newest first.
    pub fn sessions(&self) -> Result<Vec<Session>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM sessions ORDER BY started_at DESC, rowid DESC"))?;
        let rows = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Ends a session with `status` (completed or abandoned) and `ended_at` now.
    pub fn end_session(&self, id: &str, status: SessionStatus) -> Result<Session, DbError> {
        let changed = self.conn().execute(
            "UPDATE sessions SET status = ?2, ended_at = ?3 WHERE id = ?1",
            params![id, status, ts(self.now())],
        )?;
        if changed == 0 {
            return Err(DbError::NotFound { entity: "session", id: id.to_owned() });
        }
        self.session(id)
    }

    /// Deletes a session and, by cascade, everything recorded under it.
    pub fn delete_session(&self, id: &str) -> Result<(), DbError> {
        match self.conn().execute("DELETE FROM sessions WHERE id = ?1", [id])? {
            0 => Err(DbError::NotFound { entity: "session", id: id.to_owned() }),
            _ => Ok(()),
        }
    }
}

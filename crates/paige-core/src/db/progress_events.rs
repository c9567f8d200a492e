use chrono::{DateTime, Utc};
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Db, DbError, ProgressEventType, get_opt_json, get_ts, new_id, to_json, ts};

/// Something that happened within a phase (a hint used, a review passed, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressEvent {
    pub id: String,
    pub phase_id: String,
    pub event_type: ProgressEventType,
    pub data: Option<serde_json::Value>,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, phase_id, event_type, data, created_at";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ProgressEvent> {
    Ok(ProgressEvent {
        id: row.get(0)?,
        phase_id: row.get(1)?,
        event_type: row.get(2)?,
        data: get_opt_json(row, 3)?,
        created_at: get_ts(row, 4)?,
    })
}

impl Db {
    pub fn record_progress(
        &self,
        phase_id: &str,
        event_type: ProgressEventType,
        data: Option<serde_json::Value>,
    ) -> Result<ProgressEvent, DbError> {
        let event =
            ProgressEvent { id: new_id(), phase_id: phase_id.to_owned(), event_type, data, created_at: self.now() };
        let data = event.data.as_ref().map(to_json).transpose()?;
        self.conn()
            .execute(
                "INSERT INTO progress_events (id, phase_id, event_type, data, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![event.id, event.phase_id, event.event_type, data, ts(event.created_at)],
            )
            .map_err(DbError::on_insert("progress event", "phase", phase_id))?;
        Ok(event)
    }

    /// A phase's progress events, oldest first.
    pub fn progress_for_phase(&self, phase_id: &str) -> Result<Vec<ProgressEvent>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM progress_events WHERE phase_id = ?1 ORDER BY created_at, rowid"
        ))?;
        let rows = stmt.query_map([phase_id], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

use chrono::{DateTime, Utc};
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Db, DbError, get_ts, new_id, ts};

/// The implementation plan a session works through, as the agent wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub id: String,
    pub session_id: String,
    pub raw_plan_text: String,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, session_id, raw_plan_text, created_at";

pub(super) fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Plan> {
    Ok(Plan { id: row.get(0)?, session_id: row.get(1)?, raw_plan_text: row.get(2)?, created_at: get_ts(row, 3)? })
}

impl Db {
    pub fn create_plan(&self, session_id: &str, raw_plan_text: &str) -> Result<Plan, DbError> {
        let plan = Plan {
            id: new_id(),
            session_id: session_id.to_owned(),
            raw_plan_text: raw_plan_text.to_owned(),
            created_at: self.now(),
        };
        self.conn()
            .execute(
                "INSERT INTO plans (id, session_id, raw_plan_text, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![plan.id, plan.session_id, plan.raw_plan_text, ts(plan.created_at)],
            )
            .map_err(DbError::on_insert("plan", "session", session_id))?;
        Ok(plan)
    }

    pub fn plan(&self, id: &str) -> Result<Plan, DbError> {
        self.conn()
            .query_row(&format!("SELECT {COLUMNS} FROM plans WHERE id = ?1"), [id], from_row)
            .map_err(DbError::not_found("plan", id))
    }

    /// A session's plans, oldest first.
    pub fn plans_for_session(&self, session_id: &str) -> Result<Vec<Plan>, DbError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare(&format!("SELECT {COLUMNS} FROM plans WHERE session_id = ?1 ORDER BY created_at, rowid"))?;
        let rows = stmt.query_map([session_id], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Deletes a plan; its phases, their hints and progress events go with it.
    pub fn delete_plan(&self, id: &str) -> Result<(), DbError> {
        match self.conn().execute("DELETE FROM plans WHERE id = ?1", [id])? {
            0 => Err(DbError::NotFound { entity: "plan", id: id.to_owned() }),
            _ => Ok(()),
        }
    }
}

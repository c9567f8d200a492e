use chrono::{DateTime, Utc};
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Db, DbError, NewPhase, NewPhaseHint, Phase, PhaseHint, get_ts, new_id, ts};

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
        insert_plan(&self.conn(), session_id, raw_plan_text, self.now())
    }

    /// A plan with its phases and their hints, all or nothing (one transaction). Each phase's
    /// `plan_id` and each hint's `phase_id` are filled in here.
    pub fn create_plan_with_phases(
        &self,
        session_id: &str,
        raw_plan_text: &str,
        phases: Vec<(NewPhase, Vec<NewPhaseHint>)>,
    ) -> Result<(Plan, Vec<PhaseWithHints>), DbError> {
        let now = self.now();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let plan = insert_plan(&tx, session_id, raw_plan_text, now)?;
        let mut stored = Vec::with_capacity(phases.len());
        for (new_phase, hints) in phases {
            let phase = super::phases::insert_phase(&tx, NewPhase { plan_id: plan.id.clone(), ..new_phase })?;
            let hints = hints
                .into_iter()
                .map(|hint| {
                    super::phase_hints::insert_phase_hint(&tx, NewPhaseHint { phase_id: phase.id.clone(), ..hint })
                })
                .collect::<Result<Vec<_>, _>>()?;
            stored.push((phase, hints));
        }
        tx.commit()?;
        Ok((plan, stored))
    }

    pub fn plan(&self, id: &str) -> Result<Plan, DbError> {
        self.conn()
            .query_row(&format!("SELECT {COLUMNS} FROM plans WHERE id = ?1"), [id], from_row)
            .map_err(DbError::not_found("plan", id))
    }

    /// The plan a session works to: its newest.
    pub fn current_plan(&self, session_id: &str) -> Result<Option<Plan>, DbError> {
        Ok(self.plans_for_session(session_id)?.pop())
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

/// A stored phase and its hints.
pub type PhaseWithHints = (Phase, Vec<PhaseHint>);

fn insert_plan(
    conn: &rusqlite::Connection,
    session_id: &str,
    raw_plan_text: &str,
    created_at: DateTime<Utc>,
) -> Result<Plan, DbError> {
    let plan =
        Plan { id: new_id(), session_id: session_id.to_owned(), raw_plan_text: raw_plan_text.to_owned(), created_at };
    conn.execute(
        "INSERT INTO plans (id, session_id, raw_plan_text, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![plan.id, plan.session_id, plan.raw_plan_text, ts(plan.created_at)],
    )
    .map_err(DbError::on_insert("plan", "session", session_id))?;
    Ok(plan)
}

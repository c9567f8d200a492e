use chrono::{DateTime, Utc};
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Db, DbError, HintLevel, PhaseStatus, Plan, get_json, get_opt_ts, new_id, to_json, ts};

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub id: String,
    pub plan_id: String,
    pub number: i64,
    pub title: String,
    pub description: String,
    pub status: PhaseStatus,
    pub hint_level: HintLevel,
    pub expected_files: Vec<String>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    /// The skill area the phase exercises (the coach agent names it).
    pub skill_area: Option<String>,
    /// Why its hints start where they do, when the learner's history moved them.
    pub hint_reason: Option<String>,
    /// The name or pattern of the test that passes when the phase is done (the coach agent's),
    /// passed as one argument to the project's test runner by the step check (`checks/`).
    pub test_filter: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewPhase {
    pub plan_id: String,
    pub number: i64,
    pub title: String,
    pub description: String,
    pub hint_level: HintLevel,
    pub expected_files: Vec<String>,
    pub skill_area: Option<String>,
    pub hint_reason: Option<String>,
    pub test_filter: Option<String>,
}

/// One completed phase of a skill area, as the hint-fading rule reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseOutcome {
    /// The learner raised the hint level, asked for a worked example, or typed a solution
    /// Claude Code showed in it.
    pub needed_help: bool,
    /// Its comprehension check: `Some(false)` when an answer was wrong, `Some(true)` when
    /// every graded answer was right, `None` without graded answers (or a partial one).
    pub understood: Option<bool>,
}

const COLUMNS: &str = "id, plan_id, number, title, description, status, hint_level, expected_files, started_at, \
     completed_at, skill_area, hint_reason, test_filter";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Phase> {
    Ok(Phase {
        id: row.get(0)?,
        plan_id: row.get(1)?,
        number: row.get(2)?,
        title: row.get(3)?,
        description: row.get(4)?,
        status: row.get(5)?,
        hint_level: row.get(6)?,
        expected_files: get_json(row, 7)?,
        started_at: get_opt_ts(row, 8)?,
        completed_at: get_opt_ts(row, 9)?,
        skill_area: row.get(10)?,
        hint_reason: row.get(11)?,
        test_filter: row.get(12)?,
    })
}

impl Db {
    /// Adds a phase to a plan with status `pending`.
    pub fn create_phase(&self, new: NewPhase) -> Result<Phase, DbError> {
        insert_phase(&self.conn(), new)
    }

    pub fn phase(&self, id: &str) -> Result<Phase, DbError> {
        self.conn()
            .query_row(&format!("SELECT {COLUMNS} FROM phases WHERE id = ?1"), [id], from_row)
            .map_err(DbError::not_found("phase", id))
    }

    /// A phase together with the plan it belongs to.
    pub fn phase_with_plan(&self, id: &str) -> Result<(Phase, Plan), DbError> {
        let phase = self.phase(id)?;
        let plan = self.plan(&phase.plan_id)?;
        Ok((phase, plan))
    }

    /// A plan's phases in phase-number order.
    pub fn phases_for_plan(&self, plan_id: &str) -> Result<Vec<Phase>, DbError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare(&format!("SELECT {COLUMNS} FROM phases WHERE plan_id = ?1 ORDER BY number, rowid"))?;
        let rows = stmt.query_map([plan_id], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Moves a phase to `status`, stamping `started_at` when it becomes active and
    /// `completed_at` when it completes (each set once, on the first such transition).
    pub fn set_phase_status(&self, id: &str, status: PhaseStatus) -> Result<Phase, DbError> {
        let now = ts(self.now());
        let changed = self.conn().execute(
            "UPDATE phases SET status = ?2,
                 started_at = CASE WHEN ?2 IN ('active', 'complete') THEN coalesce(started_at, ?3) ELSE started_at END,
                 completed_at = CASE WHEN ?2 = 'complete' THEN coalesce(completed_at, ?3) ELSE completed_at END
             WHERE id = ?1",
            params![id, status, now],
        )?;
        if changed == 0 {
            return Err(DbError::NotFound { entity: "phase", id: id.to_owned() });
        }
        self.phase(id)
    }

    /// Sets a phase's hint level (the learner's `hints:level_change`).
    pub fn set_phase_hint_level(&self, id: &str, level: HintLevel) -> Result<Phase, DbError> {
        self.conn().execute("UPDATE phases SET hint_level = ?2 WHERE id = ?1", params![id, level])?;
        self.phase(id)
    }

    /// Sets a phase's hint level and why it starts there (a learning signal moved it).
    pub fn set_phase_hint_level_because(&self, id: &str, level: HintLevel, reason: &str) -> Result<Phase, DbError> {
        self.conn()
            .execute("UPDATE phases SET hint_level = ?2, hint_reason = ?3 WHERE id = ?1", params![id, level, reason])?;
        self.phase(id)
    }

    /// The completed phases of `skill_area`, oldest first (at most the last `limit`): did
    /// each need help (a `hint_escalated`, a `hint_used` for a worked example, a solution
    /// shown then typed), and how did its comprehension check go?
    pub fn skill_area_history(&self, skill_area: &str, limit: usize) -> Result<Vec<PhaseOutcome>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT EXISTS (SELECT 1 FROM progress_events e WHERE e.phase_id = p.id AND (e.event_type = 'hint_escalated'
                        OR (e.event_type = 'hint_used' AND json_extract(e.data, '$.workedExample') = 1)))
                    OR EXISTS (SELECT 1 FROM solutions_shown s WHERE s.phase_id = p.id),
                    CASE WHEN EXISTS (SELECT 1 FROM comprehension_checks c WHERE c.phase_id = p.id AND c.grade = 'incorrect')
                         THEN 0
                         WHEN EXISTS (SELECT 1 FROM comprehension_checks c WHERE c.phase_id = p.id AND c.grade IS NOT NULL)
                              AND NOT EXISTS (SELECT 1 FROM comprehension_checks c WHERE c.phase_id = p.id
                                              AND c.grade IS NOT NULL AND c.grade <> 'correct')
                         THEN 1 END
             FROM phases p
             WHERE p.skill_area = ?1 AND p.status = 'complete' AND p.completed_at IS NOT NULL
             ORDER BY p.completed_at DESC, p.rowid DESC LIMIT ?2",
        )?;
        let mut rows: Vec<PhaseOutcome> = stmt
            .query_map(params![skill_area, limit as i64], |row| {
                Ok(PhaseOutcome { needed_help: row.get(0)?, understood: row.get(1)? })
            })?
            .collect::<Result<_, _>>()?;
        rows.reverse();
        Ok(rows)
    }

    pub fn delete_phase(&self, id: &str) -> Result<(), DbError> {
        match self.conn().execute("DELETE FROM phases WHERE id = ?1", [id])? {
            0 => Err(DbError::NotFound { entity: "phase", id: id.to_owned() }),
            _ => Ok(()),
        }
    }
}

/// Inserts a `pending` phase on `conn` (a connection or a transaction).
pub(super) fn insert_phase(conn: &rusqlite::Connection, new: NewPhase) -> Result<Phase, DbError> {
    let phase = Phase {
        id: new_id(),
        plan_id: new.plan_id,
        number: new.number,
        title: new.title,
        description: new.description,
        status: PhaseStatus::Pending,
        hint_level: new.hint_level,
        expected_files: new.expected_files,
        started_at: None,
        completed_at: None,
        skill_area: new.skill_area,
        hint_reason: new.hint_reason,
        test_filter: new.test_filter,
    };
    conn.execute(
        "INSERT INTO phases (id, plan_id, number, title, description, status, hint_level, expected_files,
             skill_area, hint_reason, test_filter)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            phase.id,
            phase.plan_id,
            phase.number,
            phase.title,
            phase.description,
            phase.status,
            phase.hint_level,
            to_json(&phase.expected_files)?,
            phase.skill_area,
            phase.hint_reason,
            phase.test_filter
        ],
    )
    .map_err(DbError::on_insert("phase", "plan", &phase.plan_id))?;
    Ok(phase)
}

/// The phase in progress: the active one, else the first pending one.
pub fn current_phase(phases: &[Phase]) -> Option<&Phase> {
    phases
        .iter()
        .find(|p| p.status == PhaseStatus::Active)
        .or_else(|| phases.iter().find(|p| p.status == PhaseStatus::Pending))
}

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Db, DbError, DreyfusStage, get_ts, new_id, ts};

/// The learner's level in one skill area. Global: one row per skill area, across sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DreyfusAssessment {
    pub id: String,
    pub skill_area: String,
    pub stage: DreyfusStage,
    pub confidence: f64,
    pub evidence: String,
    pub assessed_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewDreyfusAssessment {
    pub skill_area: String,
    pub stage: DreyfusStage,
    pub confidence: f64,
    pub evidence: String,
}

const COLUMNS: &str = "id, skill_area, stage, confidence, evidence, assessed_at";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<DreyfusAssessment> {
    Ok(DreyfusAssessment {
        id: row.get(0)?,
        skill_area: row.get(1)?,
        stage: row.get(2)?,
        confidence: row.get(3)?,
        evidence: row.get(4)?,
        assessed_at: get_ts(row, 5)?,
    })
}

impl Db {
    /// Records an assessment; an existing one for the same skill area is overwritten in
    /// place (its id is kept).
    pub fn upsert_dreyfus(&self, new: NewDreyfusAssessment) -> Result<DreyfusAssessment, DbError> {
        self.conn().execute(
            "INSERT INTO dreyfus_assessments (id, skill_area, stage, confidence, evidence, assessed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (skill_area) DO UPDATE SET
                 stage = excluded.stage, confidence = excluded.confidence,
                 evidence = excluded.evidence, assessed_at = excluded.assessed_at",
            params![new_id(), new.skill_area, new.stage, new.confidence, new.evidence, ts(self.now())],
        )?;
        self.dreyfus(&new.skill_area)?
            .ok_or_else(|| DbError::NotFound { entity: "dreyfus assessment", id: new.skill_area.clone() })
    }

    pub fn dreyfus(&self, skill_area: &str) -> Result<Option<DreyfusAssessment>, DbError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM dreyfus_assessments WHERE skill_area = ?1"),
                [skill_area],
                from_row,
            )
            .optional()?)
    }

    /// Every assessment, by skill area.
    pub fn dreyfus_assessments(&self) -> Result<Vec<DreyfusAssessment>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM dreyfus_assessments ORDER BY skill_area"))?;
        let rows = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    pub fn delete_dreyfus(&self, skill_area: &str) -> Result<(), DbError> {
        match self.conn().execute("DELETE FROM dreyfus_assessments WHERE skill_area = ?1", [skill_area])? {
            0 => Err(DbError::NotFound { entity: "dreyfus assessment", id: skill_area.to_owned() }),
            _ => Ok(()),
        }
    }
}

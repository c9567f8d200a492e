use chrono::{DateTime, Utc};
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Db, DbError, Severity, get_json, get_ts, new_id, to_json, ts};

/// A concept the learner struggled with in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeGap {
    pub id: String,
    pub session_id: String,
    pub topic: String,
    pub severity: Severity,
    pub evidence: String,
    pub related_concepts: Vec<String>,
    pub frequency: i64,
    pub last_encountered_at: DateTime<Utc>,
    pub addressed: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewKnowledgeGap {
    pub session_id: String,
    pub topic: String,
    pub severity: Severity,
    pub evidence: String,
    pub related_concepts: Vec<String>,
}

/// Filters for [`Db::knowledge_gaps`]; `None` means "any".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GapFilter {
    pub session_id: Option<String>,
    pub severity: Option<Severity>,
    pub addressed: Option<bool>,
}

const COLUMNS: &str =
    "id, session_id, topic, severity, evidence, related_concepts, frequency, last_encountered_at, addressed";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<KnowledgeGap> {
    Ok(KnowledgeGap {
        id: row.get(0)?,
        session_id: row.get(1)?,
        topic: row.get(2)?,
        severity: row.get(3)?,
        evidence: row.get(4)?,
        related_concepts: get_json(row, 5)?,
        frequency: row.get(6)?,
        last_encountered_at: get_ts(row, 7)?,
        addressed: row.get(8)?,
    })
}

impl Db {
    /// Records a gap with frequency 1, not yet addressed.
    pub fn create_knowledge_gap(&self, new: NewKnowledgeGap) -> Result<KnowledgeGap, DbError> {
        let gap = KnowledgeGap {
            id: new_id(),
            session_id: new.session_id,
            topic: new.topic,
            severity: new.severity,
            evidence: new.evidence,
            related_concepts: new.related_concepts,
            frequency: 1,
            last_encountered_at: self.now(),
            addressed: false,
        };
        self.conn()
            .execute(
                "INSERT INTO knowledge_gaps (id, session_id, topic, severity, evidence, related_concepts, frequency, last_encountered_at, addressed)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    gap.id,
                    gap.session_id,
                    gap.topic,
                    gap.severity,
                    gap.evidence,
                    to_json(&gap.related_concepts)?,
                    gap.frequency,
                    ts(gap.last_encountered_at),
                    gap.addressed
                ],
            )
            .map_err(DbError::on_insert("knowledge gap", "session", &gap.session_id))?;
        Ok(gap)
    }

    pub fn knowledge_gap(&self, id: &str) -> Result<KnowledgeGap, DbError> {
        self.conn()
            .query_row(&format!("SELECT {COLUMNS} FROM knowledge_gaps WHERE id = ?1"), [id], from_row)
            .map_err(DbError::not_found("knowledge gap", id))
    }

    /// Gaps matching `filter`, most frequent first, then most recent.
    pub fn knowledge_gaps(&self, filter: &GapFilter) -> Result<Vec<KnowledgeGap>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM knowledge_gaps
             WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR severity = ?2) AND (?3 IS NULL OR addressed = ?3)
             ORDER BY frequency DESC, last_encountered_at DESC, rowid"
        ))?;
        let rows = stmt
            .query_map(params![filter.session_id, filter.severity, filter.addressed], from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The learner hit the same gap again: frequency + 1, last encountered now.
    pub fn record_gap_encounter(&self, id: &str) -> Result<KnowledgeGap, DbError> {
        let changed = self.conn().execute(
            "UPDATE knowledge_gaps SET frequency = frequency + 1, last_encountered_at = ?2 WHERE id = ?1",
            params![id, ts(self.now())],
        )?;
        if changed == 0 {
            return Err(DbError::NotFound { entity: "knowledge gap", id: id.to_owned() });
        }
        self.knowledge_gap(id)
    }

    pub fn set_gap_addressed(&self, id: &str, addressed: bool) -> Result<KnowledgeGap, DbError> {
        let changed =
            self.conn().execute("UPDATE knowledge_gaps SET addressed = ?2 WHERE id = ?1", params![id, addressed])?;
        if changed == 0 {
            return Err(DbError::NotFound { entity: "knowledge gap", id: id.to_owned() });
        }
        self.knowledge_gap(id)
    }
}

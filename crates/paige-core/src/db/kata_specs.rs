use rusqlite::{TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::{Db, DbError, get_json, new_id, to_json};

/// A practice exercise generated for a knowledge gap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KataSpec {
    pub id: String,
    pub knowledge_gap_id: String,
    pub title: String,
    pub description: String,
    pub scaffolding_code: String,
    pub instructor_notes: String,
    pub constraints: Vec<KataConstraint>,
    pub user_attempts: Vec<KataAttempt>,
}

/// An extra rule the learner may switch on once their level reaches `min_level`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KataConstraint {
    pub title: String,
    pub description: String,
    /// 1–10.
    pub min_level: u8,
}

/// One submitted attempt and, once reviewed, its verdict.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KataAttempt {
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// 1–10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Vec<KataConstraint>>,
}

impl KataSpec {
    /// The best level any reviewed attempt reached; 0 before any (Story 11: constraints
    /// unlock as it rises).
    pub fn best_level(&self) -> u8 {
        best_level(&self.user_attempts)
    }

    /// The constraints the learner may switch on: those whose `min_level` the best level reached.
    pub fn unlocked_constraints(&self) -> Vec<KataConstraint> {
        let best = self.best_level();
        self.constraints.iter().filter(|c| c.min_level <= best).cloned().collect()
    }
}

impl KataAttempt {
    /// The titles of the constraints this attempt was made under, sorted (none: empty).
    pub fn constraint_titles(&self) -> Vec<&str> {
        let mut titles: Vec<&str> = self.constraints.iter().flatten().map(|c| c.title.as_str()).collect();
        titles.sort_unstable();
        titles.dedup();
        titles
    }
}

fn best_level(attempts: &[KataAttempt]) -> u8 {
    attempts.iter().filter_map(|a| a.level).max().unwrap_or(0)
}

/// An attempt appended by [`Db::record_kata_attempt`]: the kata as it now stands and the best
/// level before this attempt, read in the same transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedAttempt {
    pub kata: KataSpec,
    pub previous_best: u8,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewKataSpec {
    pub knowledge_gap_id: String,
    pub title: String,
    pub description: String,
    pub scaffolding_code: String,
    pub instructor_notes: String,
    pub constraints: Vec<KataConstraint>,
}

const COLUMNS: &str =
    "id, knowledge_gap_id, title, description, scaffolding_code, instructor_notes, constraints, user_attempts";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<KataSpec> {
    Ok(KataSpec {
        id: row.get(0)?,
        knowledge_gap_id: row.get(1)?,
        title: row.get(2)?,
        description: row.get(3)?,
        scaffolding_code: row.get(4)?,
        instructor_notes: row.get(5)?,
        constraints: get_json(row, 6)?,
        user_attempts: get_json(row, 7)?,
    })
}

impl Db {
    /// Stores a kata with no attempts yet.
    pub fn create_kata(&self, new: NewKataSpec) -> Result<KataSpec, DbError> {
        let kata = KataSpec {
            id: new_id(),
            knowledge_gap_id: new.knowledge_gap_id,
            title: new.title,
            description: new.description,
            scaffolding_code: new.scaffolding_code,
            instructor_notes: new.instructor_notes,
            constraints: new.constraints,
            user_attempts: Vec::new(),
        };
        self.conn()
            .execute(
                &format!("INSERT INTO kata_specs ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, '[]')"),
                params![
                    kata.id,
                    kata.knowledge_gap_id,
                    kata.title,
                    kata.description,
                    kata.scaffolding_code,
                    kata.instructor_notes,
                    to_json(&kata.constraints)?
                ],
            )
            .map_err(DbError::on_insert("kata spec", "knowledge gap", &kata.knowledge_gap_id))?;
        Ok(kata)
    }

    pub fn kata(&self, id: &str) -> Result<KataSpec, DbError> {
        self.conn()
            .query_row(&format!("SELECT {COLUMNS} FROM kata_specs WHERE id = ?1"), [id], from_row)
            .map_err(DbError::not_found("kata spec", id))
    }

    pub fn katas_for_gap(&self, knowledge_gap_id: &str) -> Result<Vec<KataSpec>, DbError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare(&format!("SELECT {COLUMNS} FROM kata_specs WHERE knowledge_gap_id = ?1 ORDER BY rowid"))?;
        let rows = stmt.query_map([knowledge_gap_id], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Appends an attempt; earlier attempts are kept. One statement, so concurrent appends
    /// cannot lose each other.
    pub fn append_kata_attempt(&self, id: &str, attempt: &KataAttempt) -> Result<KataSpec, DbError> {
        let changed = self.conn().execute(
            "UPDATE kata_specs SET user_attempts = json_insert(user_attempts, '$[#]', json(?2)) WHERE id = ?1",
            params![id, to_json(attempt)?],
        )?;
        if changed == 0 {
            return Err(DbError::NotFound { entity: "kata spec", id: id.to_owned() });
        }
        self.kata(id)
    }

    /// Every kata, newest first.
    pub fn katas(&self) -> Result<Vec<KataSpec>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM kata_specs ORDER BY rowid DESC"))?;
        let rows = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Appends a reviewed attempt in one write transaction that also reads the best level
    /// before it: concurrent reviews of one kata each keep their attempt, and each sees the
    /// attempts committed before its own (a constraint is reported unlocked once).
    pub fn record_kata_attempt(&self, id: &str, attempt: &KataAttempt) -> Result<RecordedAttempt, DbError> {
        let json = to_json(attempt)?;
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let before: Vec<KataAttempt> = tx
            .query_row("SELECT user_attempts FROM kata_specs WHERE id = ?1", [id], |row| get_json(row, 0))
            .map_err(DbError::not_found("kata spec", id))?;
        tx.execute(
            "UPDATE kata_specs SET user_attempts = json_insert(user_attempts, '$[#]', json(?2)) WHERE id = ?1",
            params![id, json],
        )?;
        let kata = tx
            .query_row(&format!("SELECT {COLUMNS} FROM kata_specs WHERE id = ?1"), [id], from_row)
            .map_err(DbError::not_found("kata spec", id))?;
        tx.commit()?;
        Ok(RecordedAttempt { kata, previous_best: best_level(&before) })
    }
}

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Db, DbError, HintStyle, HintType, new_id};

/// Where a hint points: a whole file, or a line range in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HintSpan {
    File,
    Line { start_line: i64, end_line: i64 },
}

impl HintSpan {
    pub fn hint_type(self) -> HintType {
        match self {
            HintSpan::File => HintType::File,
            HintSpan::Line { .. } => HintType::Line,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseHint {
    pub id: String,
    pub phase_id: String,
    pub path: String,
    pub span: HintSpan,
    pub style: HintStyle,
    pub hover_text: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewPhaseHint {
    pub phase_id: String,
    pub path: String,
    pub span: HintSpan,
    pub style: HintStyle,
    pub hover_text: Option<String>,
}

const COLUMNS: &str = "id, phase_id, type, path, start_line, end_line, style, hover_text";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<PhaseHint> {
    let span = match row.get::<_, HintType>(2)? {
        HintType::File => HintSpan::File,
        HintType::Line => HintSpan::Line {
            start_line: row.get::<_, Option<i64>>(4)?.unwrap_or(0),
            end_line: row.get::<_, Option<i64>>(5)?.unwrap_or(0),
        },
    };
    Ok(PhaseHint {
        id: row.get(0)?,
        phase_id: row.get(1)?,
        path: row.get(3)?,
        span,
        style: row.get(6)?,
        hover_text: row.get(7)?,
    })
}

impl Db {
    pub fn create_phase_hint(&self, new: NewPhaseHint) -> Result<PhaseHint, DbError> {
        insert_phase_hint(&self.conn(), new)
    }

    /// A phase's hints in insertion order, optionally only those of one type.
    pub fn phase_hints(&self, phase_id: &str, only: Option<HintType>) -> Result<Vec<PhaseHint>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM phase_hints WHERE phase_id = ?1 AND (?2 IS NULL OR type = ?2) ORDER BY rowid"
        ))?;
        let rows = stmt.query_map(params![phase_id, only], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    pub fn delete_phase_hint(&self, id: &str) -> Result<(), DbError> {
        match self.conn().execute("DELETE FROM phase_hints WHERE id = ?1", [id])? {
            0 => Err(DbError::NotFound { entity: "phase hint", id: id.to_owned() }),
            _ => Ok(()),
        }
    }
}

/// Inserts a hint on `conn` (a connection or a transaction).
pub(super) fn insert_phase_hint(conn: &rusqlite::Connection, new: NewPhaseHint) -> Result<PhaseHint, DbError> {
    let hint = PhaseHint {
        id: new_id(),
        phase_id: new.phase_id,
        path: new.path,
        span: new.span,
        style: new.style,
        hover_text: new.hover_text,
    };
    let (start, end) = match hint.span {
        HintSpan::File => (None, None),
        HintSpan::Line { start_line, end_line } => (Some(start_line), Some(end_line)),
    };
    conn.execute(
        "INSERT INTO phase_hints (id, phase_id, type, path, start_line, end_line, style, hover_text)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![hint.id, hint.phase_id, hint.span.hint_type(), hint.path, start, end, hint.style, hint.hover_text],
    )
    .map_err(DbError::on_insert("phase hint", "phase", &hint.phase_id))?;
    Ok(hint)
}

//! SQLite state (spec Stories 2 and 4): one database file, `DATA_DIR/paige.db`.
//!
//! Each table module adds typed read/write methods to [`Db`]. JSON columns are encoded and
//! decoded here; callers only see Rust types. The schema lives in numbered SQL folders in
//! `migrations/`, applied by `rusqlite_migration` (the version is SQLite's `user_version`).

mod action_log;
mod api_call_log;
mod dashboard;
mod deliveries;
mod dreyfus;
mod enums;
mod error;
mod file_versions;
mod governance;
mod intake;
mod kata_specs;
mod knowledge_gaps;
mod learning;
mod ledger_index;
mod phase_hints;
mod phases;
mod plans;
mod progress_events;
mod record;
mod review;
mod sessions;

use crate::sync::Locked;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use include_dir::{Dir, include_dir};
use rusqlite::{Connection, OpenFlags};
use rusqlite_migration::Migrations;

use crate::clock::Clock;

pub use action_log::ActionEntry;
pub use api_call_log::{ApiCall, BudgetSummary, ModelCost, NewApiCall};
pub use dashboard::{ActiveSessionRow, CompletedSession, DashboardRows, KataRow, OpenGap, PeriodStats};
pub use deliveries::{Author, text_hash};
pub use dreyfus::{DreyfusAssessment, NewDreyfusAssessment};
pub use enums::{
    ActionType, DreyfusStage, HintLevel, HintStyle, HintType, PhaseStatus, ProgressEventType, SessionStatus, Severity,
};
pub use error::DbError;
pub use file_versions::{FileVersion, VersionKind};
pub use governance::{AgentSession, AgentState};
pub use intake::IntakeInterview;
pub use kata_specs::{KataAttempt, KataConstraint, KataSpec, NewKataSpec, RecordedAttempt};
pub use knowledge_gaps::{GapFilter, KnowledgeGap, NewKnowledgeGap};
pub use learning::{ComprehensionQuestion, GradeTally, NewQuestion, QuestionStatus, RELIANCE_CLASSES, RelianceCounts};
pub use ledger_index::{IndexedMutation, LedgerHead};
pub use phase_hints::{HintSpan, NewPhaseHint, PhaseHint};
pub use phases::{NewPhase, Phase, PhaseOutcome, current_phase};
pub use plans::{PhaseWithHints, Plan};
pub use progress_events::ProgressEvent;
pub use record::{
    RecordAttempt, RecordKata, RecordPhase, RecordQuestion, RecordReview, RecordRow, RecordSession, RecordSolution,
};
pub use review::{NewReview, NewReviewItem, ReviewItem, ReviewKind, WrongConcept};
pub use sessions::{NewSession, Session};

static MIGRATIONS_DIR: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../migrations");

/// The migrations in `migrations/`, in order. `MIGRATIONS.validate()` runs in the tests.
pub static MIGRATIONS: LazyLock<Migrations<'static>> = LazyLock::new(|| {
    // The folder is compiled in and checked by the tests, so a failure here is a build defect.
    Migrations::from_directory(&MIGRATIONS_DIR).expect("migrations/ folder is well formed")
});

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The database: one connection behind a mutex. SQLite calls are short; WAL and the busy
/// timeout let other processes (CLI subcommands) read and write alongside.
pub struct Db {
    conn: Mutex<Connection>,
    path: PathBuf,
    clock: Arc<dyn Clock>,
}

/// Makes the database file (created empty when missing, as SQLite would) and its WAL and
/// SHM files, which SQLite creates with the database's mode, readable by the owner only.
fn owner_only(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    std::fs::OpenOptions::new().write(true).create(true).truncate(false).mode(0o600).open(path)?;
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        match std::fs::symlink_metadata(&file) {
            Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o077 != 0 => {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
            }
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

impl Db {
    /// Opens (or creates) the database file and brings its schema up to date.
    ///
    /// A file that is not a healthy SQLite database is reported as [`DbError::Corrupt`]
    /// naming the file, and is left exactly as it was: nothing is written before the check.
    pub fn open(path: &Path, clock: Arc<dyn Clock>) -> Result<Db, DbError> {
        let open_err = |source| DbError::Open { path: path.to_owned(), source };
        owner_only(path).map_err(|source| DbError::Permissions { path: path.to_owned(), source })?;
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_err)?;
        check_readable(&conn, path)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)).map_err(open_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %path.display(), mode, "SQLite refused WAL mode");
        }
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;").map_err(open_err)?;
        MIGRATIONS.to_latest(&mut conn).map_err(|source| DbError::Migration { path: path.to_owned(), source })?;
        Ok(Db { conn: Mutex::new(conn), path: path.to_owned(), clock })
    }

    /// An in-memory database with the full schema, for tests.
    pub fn open_in_memory(clock: Arc<dyn Clock>) -> Result<Db, DbError> {
        let path = PathBuf::from(":memory:");
        let mut conn = Connection::open_in_memory().map_err(|source| DbError::Open { path: path.clone(), source })?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")?;
        MIGRATIONS.to_latest(&mut conn).map_err(|source| DbError::Migration { path: path.clone(), source })?;
        Ok(Db { conn: Mutex::new(conn), path, clock })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the WAL into the main file and truncates it; done on clean shutdown.
    pub fn checkpoint(&self) -> Result<(), DbError> {
        self.conn().query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Names of the user tables, sorted. For diagnostics and tests.
    pub fn table_names(&self) -> Result<Vec<String>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )?;
        let names = stmt.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
        Ok(names)
    }

    /// The current `PRAGMA journal_mode`.
    pub fn journal_mode(&self) -> Result<String, DbError> {
        Ok(self.conn().query_row("PRAGMA journal_mode", [], |row| row.get(0))?)
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (statements are
        // atomic), so a poisoned lock is safe to keep using.
        self.conn.locked()
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }
}

fn check_readable(conn: &Connection, path: &Path) -> Result<(), DbError> {
    let corrupt = |detail: String| DbError::Corrupt { path: path.to_owned(), detail };
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get::<_, i64>(0))
        .map_err(|err| corrupt(err.to_string()))?;
    let verdict: String =
        conn.query_row("PRAGMA quick_check(1)", [], |row| row.get(0)).map_err(|err| corrupt(err.to_string()))?;
    if verdict != "ok" {
        return Err(corrupt(verdict));
    }
    Ok(())
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Timestamps are stored as `2026-11-22T04:16:24.123Z`: ISO 8601, UTC, sortable as text.
fn ts(at: DateTime<Utc>) -> String {
    iso(at)
}

/// The ISO 8601 form Paige uses everywhere (`2026-11-22T04:16:24.123Z`).
pub fn iso(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn parse_ts(idx: usize, raw: String) -> rusqlite::Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(&raw)
        .map(|at| at.with_timezone(&Utc))
        .map_err(|err| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(err)))
}

fn get_ts(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<DateTime<Utc>> {
    parse_ts(idx, row.get(idx)?)
}

fn get_opt_ts(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<Option<DateTime<Utc>>> {
    row.get::<_, Option<String>>(idx)?.map(|raw| parse_ts(idx, raw)).transpose()
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, DbError> {
    Ok(serde_json::to_string(value)?)
}

fn get_json<T: serde::de::DeserializeOwned>(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let raw: String = row.get(idx)?;
    serde_json::from_str(&raw)
        .map_err(|err| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(err)))
}

fn get_opt_json<T: serde::de::DeserializeOwned>(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<Option<T>> {
    match row.get::<_, Option<String>>(idx)? {
        None => Ok(None),
        Some(raw) => serde_json::from_str(&raw)
            .map(Some)
            .map_err(|err| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(err))),
    }
}

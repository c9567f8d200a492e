//! The SQLite cache of each project's audit ledger (`ledger_heads`, `ledger_files`).

use std::path::Path;

use rusqlite::{OptionalExtension, params};

use super::{Db, DbError};

/// What the cache last indexed of a ledger file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerHead {
    pub size: u64,
    pub last_hash: String,
    pub lines: i64,
}

/// A mutation as the cache keeps it: its line in the ledger, the file and the intent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedMutation {
    pub line: i64,
    pub path: String,
    pub intent_id: String,
}

impl Db {
    pub fn ledger_head(&self, project_dir: &Path) -> Result<Option<LedgerHead>, DbError> {
        let head = self
            .conn()
            .query_row(
                "SELECT size, last_hash, lines FROM ledger_heads WHERE project_dir = ?1",
                params![project_dir.display().to_string()],
                |r| Ok(LedgerHead { size: r.get::<_, i64>(0)? as u64, last_hash: r.get(1)?, lines: r.get(2)? }),
            )
            .optional()?;
        Ok(head)
    }

    /// Adds mutations to the cache (after clearing it, with `reset`) and sets its head, in one
    /// transaction.
    pub fn index_ledger(
        &self,
        project_dir: &Path,
        reset: bool,
        mutations: &[IndexedMutation],
        head: &LedgerHead,
    ) -> Result<(), DbError> {
        let project = project_dir.display().to_string();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        if reset {
            tx.execute("DELETE FROM ledger_files WHERE project_dir = ?1", params![project])?;
        }
        {
            let mut upsert = tx.prepare(
                "INSERT INTO ledger_files (project_dir, path, intent_id, first_line, last_line)
                 VALUES (?1, ?2, ?3, ?4, ?4)
                 ON CONFLICT (project_dir, path, intent_id) DO UPDATE SET last_line = excluded.last_line",
            )?;
            for m in mutations {
                upsert.execute(params![project, m.path, m.intent_id, m.line])?;
            }
        }
        tx.execute(
            "INSERT INTO ledger_heads (project_dir, size, last_hash, lines) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (project_dir) DO UPDATE SET size = excluded.size, last_hash = excluded.last_hash,
               lines = excluded.lines",
            params![project, head.size as i64, head.last_hash, head.lines],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The intent whose mutation of `path` is the newest in the ledger.
    pub fn ledger_last_writer(&self, project_dir: &Path, path: &str) -> Result<Option<String>, DbError> {
        let writer = self
            .conn()
            .query_row(
                "SELECT intent_id FROM ledger_files WHERE project_dir = ?1 AND path = ?2
                 ORDER BY last_line DESC LIMIT 1",
                params![project_dir.display().to_string(), path],
                |r| r.get(0),
            )
            .optional()?;
        Ok(writer)
    }

    /// Every file with the intents that changed it, in the order they first did.
    pub fn ledger_file_intents(&self, project_dir: &Path) -> Result<Vec<(String, Vec<String>)>, DbError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare("SELECT path, intent_id FROM ledger_files WHERE project_dir = ?1 ORDER BY path, first_line")?;
        let rows = stmt.query_map(params![project_dir.display().to_string()], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for row in rows {
            let (path, intent) = row?;
            match out.last_mut() {
                Some((last, intents)) if *last == path => intents.push(intent),
                _ => out.push((path, vec![intent])),
            }
        }
        Ok(out)
    }
}

//! The change detector's index of kept file versions (`DATA_DIR/versions/` holds the bytes).

use std::path::Path;

use rusqlite::{OptionalExtension, params};

use super::{Db, DbError, ts};

/// Why a version was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionKind {
    /// The file's content when Paige first saw it, or after the learner changed it.
    Seen,
    /// What a tool call left in the file, before Paige undid it.
    Replaced,
}

impl VersionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            VersionKind::Seen => "seen",
            VersionKind::Replaced => "replaced",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileVersion {
    pub id: i64,
    pub path: String,
    pub sha256: String,
    pub size: u64,
    pub mode: u32,
    pub kind: VersionKind,
    pub created_at: String,
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<FileVersion> {
    let kind: String = r.get(6)?;
    Ok(FileVersion {
        id: r.get(0)?,
        path: r.get(1)?,
        sha256: r.get(2)?,
        size: r.get::<_, i64>(3)? as u64,
        mode: r.get::<_, i64>(4)? as u32,
        kind: if kind == "replaced" { VersionKind::Replaced } else { VersionKind::Seen },
        created_at: r.get(5)?,
    })
}

const COLUMNS: &str = "id, path, sha256, size, mode, created_at, kind";

impl Db {
    /// Records a version unless it is already the path's latest of that kind; true when added.
    pub fn add_file_version(
        &self,
        project_dir: &Path,
        path: &str,
        sha256: &str,
        size: u64,
        mode: u32,
        kind: VersionKind,
    ) -> Result<bool, DbError> {
        let project = project_dir.display().to_string();
        let conn = self.conn();
        let latest: Option<String> = conn
            .prepare_cached(
                "SELECT sha256 FROM file_versions WHERE project_dir = ?1 AND path = ?2 AND kind = ?3
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row(params![project, path, kind.as_str()], |r| r.get(0))
            .optional()?;
        if latest.as_deref() == Some(sha256) {
            return Ok(false);
        }
        conn.prepare_cached(
            "INSERT INTO file_versions (project_dir, path, sha256, size, mode, kind, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            project,
            path,
            sha256,
            size as i64,
            i64::from(mode),
            kind.as_str(),
            ts(self.now())
        ])?;
        Ok(true)
    }

    /// The project's kept versions, newest first; of one path when given.
    pub fn file_versions(&self, project_dir: &Path, path: Option<&str>) -> Result<Vec<FileVersion>, DbError> {
        let project = project_dir.display().to_string();
        let conn = self.conn();
        // One statement each: `(?2 IS NULL OR path = ?2)` kept SQLite from the (project, path)
        // index, so each lookup of one file read every version of the project — undoing a
        // call that made 20,000 files took minutes.
        let rows = match path {
            Some(path) => {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM file_versions WHERE project_dir = ?1 AND path = ?2 ORDER BY id DESC"
                ))?;
                stmt.query_map(params![project, path], row)?.collect::<Result<_, _>>()?
            }
            None => {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM file_versions WHERE project_dir = ?1 ORDER BY id DESC"
                ))?;
                stmt.query_map(params![project], row)?.collect::<Result<_, _>>()?
            }
        };
        Ok(rows)
    }

    pub fn file_version(&self, id: i64) -> Result<Option<(String, FileVersion)>, DbError> {
        let conn = self.conn();
        let found = conn
            .query_row(&format!("SELECT {COLUMNS}, project_dir FROM file_versions WHERE id = ?1"), params![id], |r| {
                Ok((r.get::<_, String>(7)?, row(r)?))
            })
            .optional()?;
        Ok(found)
    }

    /// Bytes of distinct content all projects' versions hold: one row, kept current by the
    /// triggers of `migrations/13-version-store`.
    pub fn file_versions_bytes(&self) -> Result<u64, DbError> {
        let total: i64 = self.conn().query_row("SELECT bytes FROM version_store", [], |r| r.get(0))?;
        Ok(total.max(0) as u64)
    }

    /// One batch of the version store's eviction: drops the oldest versions that are not
    /// their path's latest of their kind (the latest seen version of every file, and the latest
    /// one Paige undid, are never dropped), at most `batch` of them and no more than bring the
    /// store to `max_bytes`. `unused` is called with each content hash no version uses any
    /// more, so its bytes can go too.
    ///
    /// One write transaction, bounded by `batch`: the candidates are an index scan, each hash
    /// one index lookup. `unused` runs inside it, before the commit: a version added meanwhile
    /// (here or by another process) with the same content waits for the commit, and its
    /// writer then finds the bytes gone and writes them again (`Store::keep`). Were the commit
    /// to fail after all, the rows left without bytes are ones eviction drops anyway.
    pub fn evict_file_versions(
        &self,
        max_bytes: u64,
        batch: usize,
        mut unused: impl FnMut(&str),
    ) -> Result<Evicted, DbError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let bytes = |tx: &rusqlite::Transaction<'_>| -> Result<u64, DbError> {
            let total: i64 = tx.prepare_cached("SELECT bytes FROM version_store")?.query_row([], |r| r.get(0))?;
            Ok(total.max(0) as u64)
        };
        let before = bytes(&tx)?;
        if before <= max_bytes {
            return Ok(Evicted { dropped: 0, bytes: before, done: true });
        }
        let candidates: Vec<(i64, String, u64)> = tx
            .prepare_cached("SELECT id, sha256, size FROM file_versions WHERE superseded = 1 ORDER BY id LIMIT ?1")?
            .query_map(params![batch as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?.max(0) as u64)))?
            .collect::<Result<_, _>>()?;
        // How many versions use each candidate's content, counted up to what one batch could drop.
        let mut uses: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
        {
            let mut count =
                tx.prepare_cached("SELECT COUNT(*) FROM (SELECT 1 FROM file_versions WHERE sha256 = ?1 LIMIT ?2)")?;
            for (_, sha, _) in &candidates {
                if !uses.contains_key(sha.as_str()) {
                    let n: i64 = count.query_row(params![sha, batch as i64 + 1], |r| r.get(0))?;
                    uses.insert(sha, n);
                }
            }
        }
        // The oldest first, until what stays fits.
        let (mut after, mut cut, mut dropped) = (before, None, 0);
        for (id, sha, size) in &candidates {
            let left = uses.get_mut(sha.as_str()).expect("counted above");
            *left -= 1;
            if *left == 0 {
                after = after.saturating_sub(*size);
            }
            cut = Some(*id);
            dropped += 1;
            if after <= max_bytes {
                break;
            }
        }
        let Some(cut) = cut else {
            // Only latest versions remain.
            return Ok(Evicted { dropped: 0, bytes: before, done: true });
        };
        let mut gone: Vec<String> = tx
            .prepare_cached("DELETE FROM file_versions WHERE superseded = 1 AND id <= ?1 RETURNING sha256")?
            .query_map(params![cut], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        gone.sort_unstable();
        gone.dedup();
        {
            let mut used = tx.prepare_cached("SELECT EXISTS (SELECT 1 FROM file_versions WHERE sha256 = ?1)")?;
            for sha in &gone {
                if !used.query_row(params![sha], |r| r.get::<_, bool>(0))? {
                    unused(sha);
                }
            }
        }
        let after = bytes(&tx)?;
        tx.commit()?;
        let done = after <= max_bytes || candidates.len() < batch;
        Ok(Evicted { dropped, bytes: after, done })
    }
}

/// What one batch of [`Db::evict_file_versions`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Versions dropped.
    pub dropped: usize,
    /// The store's bytes after it.
    pub bytes: u64,
    /// The store fits its cap, or only latest versions are left: no further batch is needed.
    pub done: bool,
}

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

    /// Bytes of distinct content all projects' versions hold.
    pub fn file_versions_bytes(&self) -> Result<u64, DbError> {
        let total: i64 = self.conn().query_row(
            "SELECT COALESCE(SUM(size), 0) FROM (SELECT sha256, MAX(size) AS size FROM file_versions GROUP BY sha256)",
            [],
            |r| r.get(0),
        )?;
        Ok(total as u64)
    }

    /// Drops the oldest version that is not its path's latest of its kind (the latest seen
    /// version of every file, and the latest one Paige undid, are never dropped). Returns
    /// the content hash when no other version still uses it, so its bytes can go too.
    pub fn drop_oldest_file_version(&self) -> Result<Option<Option<String>>, DbError> {
        let conn = self.conn();
        let oldest: Option<(i64, String)> = conn
            .query_row(
                "SELECT id, sha256 FROM file_versions WHERE id NOT IN
                   (SELECT MAX(id) FROM file_versions GROUP BY project_dir, path, kind)
                 ORDER BY id LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((id, sha)) = oldest else { return Ok(None) };
        conn.execute("DELETE FROM file_versions WHERE id = ?1", params![id])?;
        let used: i64 =
            conn.query_row("SELECT COUNT(*) FROM file_versions WHERE sha256 = ?1", params![sha], |r| r.get(0))?;
        Ok(Some((used == 0).then_some(sha)))
    }
}

//! Kept versions of learner files: content-addressed bytes in `DATA_DIR/versions/` (0700,
//! files 0600), indexed in SQLite (`file_versions`), bounded by
//! `PAIGE_MAX_VERSION_STORE_BYTES` with the oldest out first — never a path's latest version.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::db::{Db, VersionKind};

use super::DetectorError;

pub struct Store {
    dir: PathBuf,
    max_bytes: u64,
    /// A version was added since the last eviction check.
    pending: std::sync::atomic::AtomicBool,
}

impl Store {
    /// The store of a `DATA_DIR`.
    pub fn new(dir: PathBuf, max_bytes: u64) -> Store {
        Store { dir, max_bytes, pending: Default::default() }
    }

    /// Removes the temp files that puts cut short by a crash left; returns how many.
    pub(crate) fn sweep_temp_files(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return 0 };
        let shards = entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir()));
        shards.map(|shard| crate::files::sweep_data_temp_files(&shard.path())).sum()
    }

    fn object(&self, sha: &str) -> PathBuf {
        self.dir.join(&sha[..2.min(sha.len())]).join(sha)
    }

    fn io(&self, path: &Path) -> impl Fn(std::io::Error) -> DetectorError {
        let path = path.to_owned();
        move |source| DetectorError::Store { path: path.clone(), source }
    }

    /// Keeps `bytes` as a version of `path`; returns its SHA-256.
    pub(crate) fn keep(
        &self,
        db: &Db,
        project: &Path,
        path: &str,
        bytes: &[u8],
        mode: u32,
        kind: VersionKind,
    ) -> Result<String, DetectorError> {
        let sha = crate::files::sha256_hex(bytes);
        self.put(&sha, bytes)?;
        let added = db.add_file_version(project, path, &sha, bytes.len() as u64, mode, kind)?;
        self.pending.fetch_or(added, std::sync::atomic::Ordering::Relaxed);
        Ok(sha)
    }

    fn put(&self, sha: &str, bytes: &[u8]) -> Result<(), DetectorError> {
        use std::os::unix::fs::DirBuilderExt;
        let object = self.object(sha);
        if object.exists() {
            return Ok(());
        }
        let parent = object.parent().unwrap_or(&self.dir);
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent).map_err(self.io(parent))?;
        // 0600, persisted by rename: a reader never sees half an object. Named so a start-up
        // sweep removes one a crash left.
        let prefix = crate::files::data_temp_prefix();
        let mut tmp = tempfile::Builder::new().prefix(&prefix).tempfile_in(parent).map_err(self.io(parent))?;
        tmp.write_all(bytes).map_err(self.io(&object))?;
        tmp.persist(&object).map_err(|e| e.error).map_err(self.io(&object))?;
        Ok(())
    }

    pub(crate) fn get(&self, sha: &str) -> Result<Vec<u8>, DetectorError> {
        let object = self.object(sha);
        let bytes = std::fs::read(&object).map_err(self.io(&object))?;
        if crate::files::sha256_hex(&bytes) != sha {
            return Err(DetectorError::Store {
                path: object,
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, "content does not match its hash"),
            });
        }
        Ok(bytes)
    }

    /// Drops the oldest versions until the store fits its cap (or only latest ones remain);
    /// a no-op unless something was kept since the last call.
    pub(crate) fn evict(&self, db: &Db) -> Result<(), DetectorError> {
        if !self.pending.swap(false, std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        while db.file_versions_bytes()? > self.max_bytes {
            match db.drop_oldest_file_version()? {
                None => break,
                Some(Some(unused)) => {
                    let _ = std::fs::remove_file(self.object(&unused));
                }
                Some(None) => {}
            }
        }
        Ok(())
    }
}

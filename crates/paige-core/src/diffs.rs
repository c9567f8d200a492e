//! The learner's unsaved changes as diffs (`paige_get_diff`, the coach hook's context, the
//! Observer): each buffer's diff against its file on disk, cached by buffer version and the
//! file's size and mtime, so asking again reads nothing while neither changed.

use std::sync::Arc;

use serde::Serialize;

use crate::ctx::Ctx;
use crate::files::{self, FileError, ProjectPath};
use crate::live::CachedDiff;

/// One file's unsaved changes as a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: String,
    pub diff: String,
}

/// The diffs of the editor's buffers: see the module docs.
pub struct Diffs {
    ctx: Arc<Ctx>,
    /// `PAIGE_MAX_DIFF_BYTES`: a longer diff is cut with a marker.
    max_diff_bytes: usize,
}

impl Diffs {
    pub(crate) fn new(ctx: Arc<Ctx>, max_diff_bytes: usize) -> Arc<Diffs> {
        Arc::new(Diffs { ctx, max_diff_bytes })
    }

    /// The diffs [`Core::diffs`](crate::Core::diffs) would return, when every one of them is
    /// in the cache: then nothing is read or diffed (an `fstat` per file checks the cache),
    /// and an adapter may answer without moving to a blocking thread. `None` on a miss.
    pub fn from_cache(&self, path: Option<&str>) -> Option<Vec<FileDiff>> {
        let paths = match path {
            Some(path) => vec![self.ctx.root.resolve(path).ok()?],
            None => {
                let dirty = self.ctx.live().dirty_paths();
                dirty.iter().map(|rel| self.ctx.root.resolve(rel).ok()).collect::<Option<Vec<_>>>()?
            }
        };
        let mut diffs = Vec::new();
        for path in paths {
            let diff = self.cached_diff(&path)?;
            if !diff.is_empty() {
                diffs.push(FileDiff { path: path.rel().to_owned(), diff });
            }
        }
        Some(diffs)
    }

    /// The cached diff of `path` if it is still valid (the empty diff for a clean or missing
    /// buffer); `None` when it must be computed.
    fn cached_diff(&self, path: &ProjectPath) -> Option<String> {
        let Some(version) = self.dirty_version(path) else { return Some(String::new()) };
        self.cached_at(path, version, files::disk_stamp(path))
    }

    /// The version of `path`'s buffer when it has unsaved changes.
    fn dirty_version(&self, path: &ProjectPath) -> Option<u64> {
        self.ctx.live().buffer(path.rel()).filter(|e| e.dirty).map(|e| e.version)
    }

    /// The cached diff for buffer `version` against the file as `disk` stamps it.
    fn cached_at(&self, path: &ProjectPath, version: u64, disk: Option<files::DiskStamp>) -> Option<String> {
        let live = self.ctx.live();
        let cached = live.cached_diff(path.rel())?;
        (cached.buffer_version == version && cached.disk == disk).then(|| cached.diff.clone())
    }

    /// Diffs of every dirty buffer, by path.
    pub fn dirty(&self) -> Vec<FileDiff> {
        let dirty = self.ctx.live().dirty_paths();
        dirty
            .into_iter()
            .filter_map(|rel| {
                let path = self.ctx.root.resolve(&rel).ok()?;
                match self.of(&path) {
                    Ok(diff) if !diff.is_empty() => Some(FileDiff { path: rel, diff }),
                    Ok(_) => None,
                    Err(err) => {
                        tracing::warn!(path = %rel, "cannot diff: {err}");
                        None
                    }
                }
            })
            .collect()
    }

    /// The diff of one buffer, from the cache while neither the buffer nor the file on disk
    /// changed (checked by buffer version and the file's size and mtime). Cut at
    /// `PAIGE_MAX_DIFF_BYTES` with a marker.
    pub fn of(&self, path: &ProjectPath) -> Result<String, FileError> {
        let Some(version) = self.dirty_version(path) else { return Ok(String::new()) };
        // One open: its stamp checks the cache, and on a miss the same handle is read.
        let opened = match files::Opened::open(path) {
            Ok(opened) => Some(opened),
            Err(FileError::NotFound(_)) => None,
            Err(err) => return Err(err),
        };
        let disk = opened.as_ref().map(files::Opened::stamp);
        if let Some(diff) = self.cached_at(path, version, disk) {
            return Ok(diff);
        }
        let saved = match opened {
            Some(opened) => match opened.read_all(path)? {
                bytes if files::sniff_binary(&bytes) => return Ok(String::new()),
                bytes => String::from_utf8(bytes).unwrap_or_default(),
            },
            None => String::new(),
        };
        let max = self.max_diff_bytes;
        let diff_of = |current: &str| {
            let mut diff = files::unified_diff(path.rel(), &saved, current);
            crate::limits::truncate_with_marker(&mut diff, max, "diff");
            diff
        };
        let live = self.ctx.live();
        let Some(entry) = live.buffer(path.rel()).filter(|e| e.version == version) else {
            // The buffer changed while we read the file; diff what is there now, uncached.
            let current = live.buffer(path.rel()).filter(|e| e.dirty).map(|e| e.content.clone());
            drop(live);
            return Ok(current.map(|c| diff_of(&c)).unwrap_or_default());
        };
        let content = entry.content.clone();
        drop(live);
        let diff = diff_of(&content);
        self.ctx.live().cache_diff(path.rel(), CachedDiff { buffer_version: version, disk, diff: diff.clone() });
        Ok(diff)
    }
}

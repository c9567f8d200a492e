//! File operations on the learner's project, as the core offers them to every adapter.
//! Each takes a path from outside and resolves it through the one guard first.

use std::sync::Arc;

use serde::Serialize;

use crate::buffers::BufferEntry;
use crate::core::Core;
use crate::files::{self, DirPage, FileContent, FileError, FsChange, ListError, PathError, ProjectPath, TreeCache};
use crate::live::CachedDiff;
use crate::protocol::{CursorPosition, FsTree, ServerMessage};

#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    File(#[from] FileError),
    #[error(transparent)]
    Buffer(#[from] crate::buffers::BufferError),
}

/// One file's unsaved changes as a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: String,
    pub diff: String,
}

impl Core {
    /// Resolves a path from outside; nothing is read or written.
    pub fn resolve_path(&self, path: &str) -> Result<ProjectPath, PathError> {
        self.project_root().resolve(path)
    }

    /// Reads a file from disk (binary files are flagged, without content).
    pub fn read_file(&self, path: &str) -> Result<FileContent, ProjectError> {
        Ok(files::read_file(&self.resolve_path(path)?)?)
    }

    /// Writes a file atomically and marks its buffer clean. Only UI adapters call this; the
    /// MCP surface has no write tool. `.git/`, Paige's temp files and the audit ledger are
    /// refused (`files::refuse_reserved`) before anything is noted or written.
    pub fn write_file(&self, path: &str, content: String) -> Result<ProjectPath, ProjectError> {
        let path = self.resolve_path(path)?;
        // Before the detector hears of it: a refused save must not pass as the learner's.
        files::refuse_reserved(path.rel())?;
        // The learner's save: the change detector must not undo it.
        self.detector().note_learner_save(path.rel(), content.as_bytes());
        files::write_file(&path, &content)?;
        // Clean now: its diff is empty, and a cached one would only hold memory.
        self.live().saved(path.rel(), content, self.now());
        Ok(path)
    }

    /// The editor's current state of a file, if it has one.
    pub fn buffer(&self, path: &str) -> Result<Option<BufferEntry>, PathError> {
        let path = self.resolve_path(path)?;
        Ok(self.live().buffer(path.rel()).cloned())
    }

    /// Records an edit from the editor. Binary and special files never enter the cache; an
    /// edit over a memory cap is refused and the buffer keeps its last accepted content.
    pub(crate) fn update_buffer(
        &self,
        path: &ProjectPath,
        content: String,
        cursor: CursorPosition,
    ) -> Result<Option<crate::buffers::SignificantChange>, ProjectError> {
        let known = self.live().has_buffer(path.rel());
        if !known {
            files::check_bufferable(path)?;
        }
        Ok(self.live().update_buffer(path.rel(), content, cursor, self.now())?)
    }

    /// Unified diff from the saved file to the buffer; empty when the buffer is clean or
    /// missing. A file deleted on disk diffs against empty.
    pub fn diff(&self, path: &str) -> Result<String, ProjectError> {
        let path = self.resolve_path(path)?;
        Ok(self.diff_resolved(&path)?)
    }

    /// The diffs [`Core::diffs`](crate::Core::diffs) would return, when every one of them is
    /// in the cache: then nothing is read or diffed (an `fstat` per file checks the cache),
    /// and an adapter may answer without moving to a blocking thread. `None` on a miss.
    pub fn diffs_from_cache(&self, path: Option<&str>) -> Option<Vec<FileDiff>> {
        let paths = match path {
            Some(path) => vec![self.resolve_path(path).ok()?],
            None => {
                let dirty = self.live().dirty_paths();
                dirty.iter().map(|rel| self.resolve_path(rel).ok()).collect::<Option<Vec<_>>>()?
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
        self.live().buffer(path.rel()).filter(|e| e.dirty).map(|e| e.version)
    }

    /// The cached diff for buffer `version` against the file as `disk` stamps it.
    fn cached_at(&self, path: &ProjectPath, version: u64, disk: Option<files::DiskStamp>) -> Option<String> {
        let live = self.live();
        let cached = live.cached_diff(path.rel())?;
        (cached.buffer_version == version && cached.disk == disk).then(|| cached.diff.clone())
    }

    /// Diffs of every dirty buffer, by path.
    pub fn dirty_diffs(&self) -> Vec<FileDiff> {
        let dirty = self.live().dirty_paths();
        dirty
            .into_iter()
            .filter_map(|rel| {
                let path = self.resolve_path(&rel).ok()?;
                match self.diff_resolved(&path) {
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

    /// The project tree's folder listings, shared by every UI (noise directories and
    /// gitignored paths left out): `fs:tree` and `fs:list` are answered from them.
    pub fn project_tree(&self) -> Arc<TreeCache> {
        self.live().tree(self.project_root())
    }

    /// The `fs:tree` a UI gets: the root's first level, and the small folders under it.
    pub(crate) fn first_tree(&self) -> ServerMessage {
        ServerMessage::FsTree(FsTree { root: self.project_tree().first_tree() })
    }

    /// `fs:list`: one page of a folder's entries, or why it cannot be listed.
    pub fn list_folder(&self, path: &str, offset: u32) -> Result<DirPage, ListError> {
        self.project_tree().list(path, offset)
    }

    /// A change the watcher saw: the listings it touches are read again when next asked.
    pub(crate) fn tree_changed(&self, change: &FsChange) {
        self.project_tree().changed(change);
    }

    /// Files the editor has open, sorted.
    pub fn open_files(&self) -> Vec<String> {
        self.live().open_files()
    }

    /// The diff of one buffer, from the cache while neither the buffer nor the file on disk
    /// changed (checked by buffer version and the file's size and mtime). Cut at
    /// `PAIGE_MAX_DIFF_BYTES` with a marker.
    fn diff_resolved(&self, path: &ProjectPath) -> Result<String, FileError> {
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
        let max = self.config().limits.max_diff_bytes;
        let diff_of = |current: &str| {
            let mut diff = files::unified_diff(path.rel(), &saved, current);
            crate::limits::truncate_with_marker(&mut diff, max, "diff");
            diff
        };
        let live = self.live();
        let Some(entry) = live.buffer(path.rel()).filter(|e| e.version == version) else {
            // The buffer changed while we read the file; diff what is there now, uncached.
            let current = live.buffer(path.rel()).filter(|e| e.dirty).map(|e| e.content.clone());
            drop(live);
            return Ok(current.map(|c| diff_of(&c)).unwrap_or_default());
        };
        let content = entry.content.clone();
        drop(live);
        let diff = diff_of(&content);
        self.live().cache_diff(path.rel(), CachedDiff { buffer_version: version, disk, diff: diff.clone() });
        Ok(diff)
    }
}

//! File operations on the learner's project, as the core offers them to every adapter.
//! Each takes a path from outside and resolves it through the one guard first.

use std::sync::Arc;

use crate::buffers::BufferEntry;
use crate::core::Core;
use crate::files::{self, DirPage, FileContent, FsChange, ListError, PathError, ProjectPath, TreeCache};
use crate::protocol::{CursorPosition, FsTree, ServerMessage};

pub use crate::live::ProjectError;

pub use crate::diffs::FileDiff;

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
        Ok(self.diff_cache().of(&path)?)
    }

    /// The diffs [`Core::diffs`](crate::Core::diffs) would return, when every one of them is
    /// in the cache (`diffs.rs`); `None` on a miss.
    pub fn diffs_from_cache(&self, path: Option<&str>) -> Option<Vec<FileDiff>> {
        self.diff_cache().from_cache(path)
    }

    /// Diffs of every dirty buffer, by path.
    pub fn dirty_diffs(&self) -> Vec<FileDiff> {
        self.diff_cache().dirty()
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
}

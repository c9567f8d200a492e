//! `Live`: the core's in-memory state — the editor's buffers and open files, the diff cache,
//! the UI connections, the terminal size, the active session, the notices a UI is shown
//! when it connects and the project tree's listings (which keep their own lock) — behind one
//! short-held lock (never across I/O or `.await`). Its fields are private: each method keeps
//! what belongs together together (a closed file leaves the open set, its buffer and its
//! cached diff at once).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::buffers::{BufferEntry, BufferError, BufferSummary, Buffers, SignificantChange};
use crate::db::Session;
use crate::files::{ProjectRoot, TreeCache};
use crate::protocol::{ConnectionId, ConnectionMeta, CursorPosition, ServerMessage, TerminalSize};

#[derive(Default)]
pub(crate) struct Live {
    buffers: Buffers,
    open_files: BTreeSet<String>,
    connections: HashMap<ConnectionId, ConnectionMeta>,
    next_connection: u64,
    terminal: Option<TerminalSize>,
    session: Option<ActiveSession>,
    /// Set when the system's inotify limit left part of the project unwatched.
    watch_notice: Option<ServerMessage>,
    /// Which mode the agent was launched in (and, without the OS sandbox, why).
    agent_notice: Option<ServerMessage>,
    guard_notice: Option<ServerMessage>,
    /// Last diff per path, valid while the buffer version and the file's disk stamp match.
    diffs: HashMap<String, CachedDiff>,
    /// The project's folder listings, shared by every UI (made on first use).
    tree: Option<Arc<TreeCache>>,
}

pub(crate) struct CachedDiff {
    pub(crate) buffer_version: u64,
    pub(crate) disk: Option<crate::files::DiskStamp>,
    pub(crate) diff: String,
}

pub(crate) struct ActiveSession {
    pub(crate) session: Session,
    /// Cancels the session's own loops (buffer summaries).
    pub(crate) cancel: CancellationToken,
}

impl Live {
    pub(crate) fn new(buffers: Buffers) -> Live {
        Live { buffers, ..Live::default() }
    }

    // ---- the editor: open files, buffers, diffs ----------------------------------------

    /// A file the editor opened (a binary one has no buffer).
    pub(crate) fn opened(&mut self, path: &str, content: Option<&str>) {
        self.open_files.insert(path.to_owned());
        if let Some(content) = content {
            self.buffers.opened(path, content);
        }
    }

    /// A file the editor closed: out of the open set, its buffer and its cached diff.
    pub(crate) fn closed(&mut self, path: &str) {
        self.open_files.remove(path);
        self.buffers.closed(path);
        self.diffs.remove(path);
    }

    /// The learner saved `content`: the buffer is clean and its cached diff gone.
    pub(crate) fn saved(&mut self, path: &str, content: String, now: DateTime<Utc>) {
        self.buffers.saved(path, content, None, now);
        self.diffs.remove(path);
    }

    pub(crate) fn update_buffer(
        &mut self,
        path: &str,
        content: String,
        cursor: CursorPosition,
        now: DateTime<Utc>,
    ) -> Result<Option<SignificantChange>, BufferError> {
        self.buffers.update(path, content, cursor, now)
    }

    pub(crate) fn buffer(&self, path: &str) -> Option<&BufferEntry> {
        self.buffers.get(path)
    }

    pub(crate) fn has_buffer(&self, path: &str) -> bool {
        self.buffers.contains(path)
    }

    pub(crate) fn dirty_paths(&self) -> Vec<String> {
        self.buffers.dirty_paths()
    }

    /// Files the editor has open, sorted.
    pub(crate) fn open_files(&self) -> Vec<String> {
        self.open_files.iter().cloned().collect()
    }

    /// The buffers an agent sees: open files that have one, then dirty ones not open.
    pub(crate) fn buffer_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self.open_files.iter().filter(|p| self.buffers.contains(p)).cloned().collect();
        paths.extend(self.buffers.dirty_paths().into_iter().filter(|p| !self.open_files.contains(p)));
        paths
    }

    pub(crate) fn cached_diff(&self, path: &str) -> Option<&CachedDiff> {
        self.diffs.get(path)
    }

    pub(crate) fn cache_diff(&mut self, path: &str, diff: CachedDiff) {
        self.diffs.insert(path.to_owned(), diff);
    }

    pub(crate) fn take_summaries(&mut self) -> Vec<BufferSummary> {
        self.buffers.take_summaries()
    }

    // ---- UI connections and the terminal -------------------------------------------------

    pub(crate) fn connect(&mut self, now: DateTime<Utc>) -> ConnectionId {
        self.next_connection += 1;
        let id = ConnectionId(self.next_connection);
        let meta = ConnectionMeta { version: None, platform: None, window_size: None, connected_at: now };
        self.connections.insert(id, meta);
        id
    }

    pub(crate) fn disconnect(&mut self, id: ConnectionId) {
        self.connections.remove(&id);
    }

    pub(crate) fn connection(&self, id: ConnectionId) -> Option<&ConnectionMeta> {
        self.connections.get(&id)
    }

    pub(crate) fn connection_mut(&mut self, id: ConnectionId) -> Option<&mut ConnectionMeta> {
        self.connections.get_mut(&id)
    }

    pub(crate) fn connection_count(&self) -> usize {
        self.connections.len()
    }

    pub(crate) fn terminal_size(&self) -> Option<TerminalSize> {
        self.terminal
    }

    pub(crate) fn set_terminal_size(&mut self, size: TerminalSize) {
        self.terminal = Some(size);
    }

    // ---- the coaching session -------------------------------------------------------------

    pub(crate) fn session(&self) -> Option<&ActiveSession> {
        self.session.as_ref()
    }

    /// Makes `session` the active one, unless another is: then that one's id.
    pub(crate) fn begin_session(&mut self, session: Session, cancel: CancellationToken) -> Result<(), String> {
        if let Some(active) = &self.session {
            return Err(active.session.id.clone());
        }
        self.buffers.reset_log_state();
        self.session = Some(ActiveSession { session, cancel });
        Ok(())
    }

    pub(crate) fn end_session(&mut self) {
        self.session = None;
        self.buffers.reset_log_state();
    }

    // ---- the project tree ---------------------------------------------------------------------

    /// The listings of `root`'s folders; used outside this lock (they have their own).
    pub(crate) fn tree(&mut self, root: &ProjectRoot) -> Arc<TreeCache> {
        self.tree.get_or_insert_with(|| Arc::new(TreeCache::new(root))).clone()
    }

    // ---- notices ----------------------------------------------------------------------------

    pub(crate) fn set_watch_notice(&mut self, notice: ServerMessage) {
        self.watch_notice = Some(notice);
    }

    pub(crate) fn set_agent_notice(&mut self, notice: ServerMessage) {
        self.agent_notice = Some(notice);
    }

    pub(crate) fn set_guard_notice(&mut self, notice: ServerMessage) {
        self.guard_notice = Some(notice);
    }

    /// What a UI is shown when it connects.
    pub(crate) fn notices(&self) -> Vec<ServerMessage> {
        self.watch_notice.iter().chain(&self.agent_notice).chain(&self.guard_notice).cloned().collect()
    }
}

/// Why a file operation on the project failed: the path, the file, or the editor's buffer.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Path(#[from] crate::files::PathError),
    #[error(transparent)]
    File(#[from] crate::files::FileError),
    #[error(transparent)]
    Buffer(#[from] BufferError),
}

//! The editor's unsaved state (spec Stories 3 and 4): one entry per open text file, plus the
//! bookkeeping that turns a stream of `buffer:update`s into a few action-log rows.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::protocol::CursorPosition;

/// Absolute delta (in characters) above which an update is logged at once.
pub const SIGNIFICANT_CHARS: usize = 500;
/// Relative delta above which an update is logged at once.
pub const SIGNIFICANT_RATIO: f64 = 0.5;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BufferEntry {
    pub content: String,
    pub cursor_position: CursorPosition,
    pub dirty: bool,
    pub last_updated: DateTime<Utc>,
    /// Changes whenever the content may have changed; keys derived caches (diffs).
    #[serde(skip)]
    pub version: u64,
}

/// An update big enough to log immediately (`buffer_significant_change`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignificantChange {
    pub previous_char_count: usize,
    pub new_char_count: usize,
    pub delta: i64,
}

/// A periodic `buffer_summary` for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferSummary {
    pub path: String,
    pub edit_count: u32,
    pub char_delta: i64,
    pub char_count: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LogState {
    last_logged_char_count: usize,
    edits_since_last_log: u32,
    char_count: usize,
}

/// An edit refused because it would break a memory cap; the buffer keeps its last accepted
/// content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BufferError {
    #[error(
        "the buffer of {path} is {size} bytes, over the limit of {limit} bytes per buffer (PAIGE_MAX_BUFFER_BYTES); \
         Paige keeps its last accepted content"
    )]
    TooLarge { path: String, size: usize, limit: usize },
    #[error(
        "unsaved buffers would take {total} bytes, over the limit of {limit} bytes for all buffers \
         (PAIGE_MAX_BUFFERS_BYTES); save or close some files — {path} keeps its last accepted content"
    )]
    Full { path: String, total: usize, limit: usize },
}

/// Buffers keyed by project-relative path, within a per-buffer and a total size cap.
#[derive(Debug)]
pub struct Buffers {
    entries: HashMap<String, BufferEntry>,
    log: HashMap<String, LogState>,
    next_version: u64,
    /// Bytes of content held by all entries.
    total_bytes: usize,
    max_buffer_bytes: usize,
    max_total_bytes: usize,
}

impl Default for Buffers {
    fn default() -> Self {
        let limits = crate::limits::Limits::default();
        Buffers::with_limits(limits.max_buffer_bytes, limits.max_buffers_bytes)
    }
}

impl Buffers {
    pub fn with_limits(max_buffer_bytes: usize, max_total_bytes: usize) -> Buffers {
        Buffers {
            entries: HashMap::new(),
            log: HashMap::new(),
            next_version: 0,
            total_bytes: 0,
            max_buffer_bytes,
            max_total_bytes,
        }
    }

    pub fn get(&self, path: &str) -> Option<&BufferEntry> {
        self.entries.get(path)
    }

    pub fn contains(&self, path: &str) -> bool {
        self.entries.contains_key(path)
    }

    /// Paths with unsaved changes, sorted.
    pub fn dirty_paths(&self) -> Vec<String> {
        let mut paths: Vec<_> = self.entries.iter().filter(|(_, e)| e.dirty).map(|(p, _)| p.clone()).collect();
        paths.sort();
        paths
    }

    /// Starts tracking a file just opened from disk: the baseline for change detection.
    pub fn opened(&mut self, path: &str, content: &str) {
        let chars = content.chars().count();
        self.log.entry(path.to_owned()).or_insert(LogState {
            last_logged_char_count: chars,
            edits_since_last_log: 0,
            char_count: chars,
        });
    }

    /// Records an edit (last write wins). Returns the change when it crosses the
    /// significance threshold, which also resets the logging baseline. An edit over a cap is
    /// refused (clean buffers of other files are evicted first to make room); the buffer
    /// keeps its last accepted content.
    pub fn update(
        &mut self,
        path: &str,
        content: String,
        cursor: CursorPosition,
        now: DateTime<Utc>,
    ) -> Result<Option<SignificantChange>, BufferError> {
        if content.len() > self.max_buffer_bytes {
            return Err(BufferError::TooLarge {
                path: path.to_owned(),
                size: content.len(),
                limit: self.max_buffer_bytes,
            });
        }
        if !self.make_room(path, content.len()) {
            let total = self.total_without(path) + content.len();
            return Err(BufferError::Full { path: path.to_owned(), total, limit: self.max_total_bytes });
        }
        let chars = self.put(path, content, cursor, true, now);
        let state = self.log.entry(path.to_owned()).or_insert(LogState {
            last_logged_char_count: chars,
            edits_since_last_log: 0,
            char_count: chars,
        });
        state.edits_since_last_log += 1;
        state.char_count = chars;
        let previous = state.last_logged_char_count;
        let delta = chars as i64 - previous as i64;
        let significant = delta.unsigned_abs() as usize > SIGNIFICANT_CHARS
            || delta.unsigned_abs() as f64 > previous as f64 * SIGNIFICANT_RATIO;
        if !significant {
            return Ok(None);
        }
        state.last_logged_char_count = chars;
        state.edits_since_last_log = 0;
        Ok(Some(SignificantChange { previous_char_count: previous, new_char_count: chars, delta }))
    }

    /// The file was saved with `content`: the buffer is clean and matches disk. A clean
    /// buffer that does not fit the caps is not kept (the file on disk is the same).
    pub fn saved(&mut self, path: &str, content: String, cursor: Option<CursorPosition>, now: DateTime<Utc>) {
        let cursor = cursor.or_else(|| self.entries.get(path).map(|e| e.cursor_position)).unwrap_or_default();
        if content.len() > self.max_buffer_bytes || !self.make_room(path, content.len()) {
            self.remove_entry(path);
            return;
        }
        let chars = self.put(path, content, cursor, false, now);
        let state = self.log.entry(path.to_owned()).or_insert(LogState {
            last_logged_char_count: chars,
            edits_since_last_log: 0,
            char_count: chars,
        });
        state.char_count = chars;
    }

    /// The tab was closed: unsaved changes are gone with it.
    pub fn closed(&mut self, path: &str) {
        self.remove_entry(path);
        self.log.remove(path);
    }

    /// Bytes held by every buffer but `path`'s.
    fn total_without(&self, path: &str) -> usize {
        self.total_bytes - self.entries.get(path).map_or(0, |e| e.content.len())
    }

    /// Evicts clean buffers of other files, least recently updated first, until `incoming`
    /// bytes for `path` fit the total cap. Dirty buffers are never evicted. Returns whether
    /// they fit.
    fn make_room(&mut self, path: &str, incoming: usize) -> bool {
        if self.total_without(path) + incoming <= self.max_total_bytes {
            return true;
        }
        let mut clean: Vec<(DateTime<Utc>, u64, String)> = self
            .entries
            .iter()
            .filter(|(p, e)| !e.dirty && p.as_str() != path)
            .map(|(p, e)| (e.last_updated, e.version, p.clone()))
            .collect();
        clean.sort();
        for (_, _, victim) in clean {
            if self.total_without(path) + incoming <= self.max_total_bytes {
                break;
            }
            tracing::debug!(path = %victim, "evicting a clean buffer to stay within PAIGE_MAX_BUFFERS_BYTES");
            self.remove_entry(&victim);
        }
        self.total_without(path) + incoming <= self.max_total_bytes
    }

    fn remove_entry(&mut self, path: &str) {
        if let Some(old) = self.entries.remove(path) {
            self.total_bytes -= old.content.len();
        }
    }

    /// One summary per dirty file edited since its last log entry; resets their baselines.
    pub fn take_summaries(&mut self) -> Vec<BufferSummary> {
        let mut out = Vec::new();
        for (path, state) in &mut self.log {
            let dirty = self.entries.get(path).is_some_and(|e| e.dirty);
            if !dirty || state.edits_since_last_log == 0 {
                continue;
            }
            out.push(BufferSummary {
                path: path.clone(),
                edit_count: state.edits_since_last_log,
                char_delta: state.char_count as i64 - state.last_logged_char_count as i64,
                char_count: state.char_count,
            });
            state.last_logged_char_count = state.char_count;
            state.edits_since_last_log = 0;
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// Stores a new state of a buffer under a fresh version; returns its character count.
    fn put(&mut self, path: &str, content: String, cursor: CursorPosition, dirty: bool, now: DateTime<Utc>) -> usize {
        let chars = content.chars().count();
        self.next_version += 1;
        self.total_bytes += content.len();
        let entry =
            BufferEntry { content, cursor_position: cursor, dirty, last_updated: now, version: self.next_version };
        if let Some(old) = self.entries.insert(path.to_owned(), entry) {
            self.total_bytes -= old.content.len();
        }
        chars
    }

    /// Forgets edit counts (a session ended); buffers themselves stay.
    pub fn reset_log_state(&mut self) {
        for state in self.log.values_mut() {
            state.last_logged_char_count = state.char_count;
            state.edits_since_last_log = 0;
        }
    }
}

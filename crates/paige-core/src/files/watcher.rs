//! Watches the project for changes made outside the editor (spec Story 3): debounced
//! add / change / unlink / rename events, relative paths, noise filtered out.

use crate::sync::Locked;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::EventKind;
use notify::event::{ModifyKind, RenameMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use serde::Serialize;

use super::ProjectRoot;
use super::guard::to_slash;
use super::ignore_rules::IgnoreRules;
use super::tree::{is_excluded_name, kept_dirs};

const DEBOUNCE: Duration = Duration::from_millis(100);

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FsChangeAction {
    Add,
    Change,
    Unlink,
    Rename,
}

/// One change in the project, paths relative to the root.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FsChange {
    pub action: FsChangeAction,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub new_path: Option<String>,
}

/// A running watcher. Dropping it (or [`Watcher::stop`]) stops watching; pending events are
/// discarded.
pub struct Watcher {
    debouncer: Arc<Mutex<Option<Watching>>>,
    degraded: Option<String>,
}

type Watching = Debouncer<notify::RecommendedWatcher, RecommendedCache>;

impl Watcher {
    /// Starts watching the directories the project tree shows — not excluded or gitignored
    /// ones like `node_modules` or `target`, which would cost an inotify watch per directory —
    /// each on its own, adding directories as they appear. `on_change` runs on the watcher's
    /// thread. When the system's watch limit is reached, the rest goes unwatched: logged,
    /// and said by [`Watcher::degraded`]; Paige keeps working.
    pub fn start(root: &ProjectRoot, on_change: impl Fn(FsChange) + Send + 'static) -> notify::Result<Watcher> {
        let base = root.path().to_path_buf();
        let ignored = IgnoreRules::new(&base);
        let shared: Arc<Mutex<Option<Watching>>> = Arc::new(Mutex::new(None));
        let handle = Arc::downgrade(&shared);
        let debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| match result {
            Ok(events) => {
                for event in events {
                    if let Some(change) = to_change(&base, &ignored, &event.kind, &event.paths) {
                        if change.action != FsChangeAction::Unlink
                            && let Some(shared) = handle.upgrade()
                        {
                            let target = change.new_path.as_deref().unwrap_or(&change.path);
                            watch_new_dir(&shared, &base, &base.join(target));
                        }
                        on_change(change);
                    }
                }
            }
            Err(errors) => errors.iter().for_each(|e| tracing::warn!("file watcher: {e}")),
        })?;
        let mut debouncer = debouncer;
        let dirs = kept_dirs(root.path(), root.path());
        let mut watched = 0;
        let mut degraded = None;
        for dir in &dirs {
            match debouncer.watch(dir, notify::RecursiveMode::NonRecursive) {
                Ok(()) => watched += 1,
                Err(err) if dir.as_path() == root.path() => return Err(err),
                Err(err) => {
                    let message = format!(
                        "Paige watches {watched} of the project's {} folders: {err} (raise \
                         fs.inotify.max_user_watches); changes made outside the editor in the others show \
                         when the project is reopened",
                        dirs.len()
                    );
                    tracing::warn!("file watcher: {message}");
                    degraded = Some(message);
                    break;
                }
            }
        }
        tracing::debug!(watched, "file watcher started");
        *shared.locked() = Some(debouncer);
        Ok(Watcher { debouncer: shared, degraded })
    }

    /// Why some of the project is not watched, when the system's watch limit cut it short.
    pub fn degraded(&self) -> Option<&str> {
        self.degraded.as_deref()
    }

    pub fn stop(self) {
        // Taken out of the lock first: the event thread may be waiting on it to add a watch.
        let debouncer = self.debouncer.locked().take();
        if let Some(debouncer) = debouncer {
            debouncer.stop();
        }
    }
}

/// A directory created in (or moved into) the project: watch it and the directories below it
/// that the tree keeps. A file is ignored.
fn watch_new_dir(shared: &Mutex<Option<Watching>>, root: &Path, path: &Path) {
    if !path.is_dir() {
        return;
    }
    let mut slot = shared.locked();
    let Some(debouncer) = slot.as_mut() else { return };
    for dir in kept_dirs(root, path) {
        if let Err(err) = debouncer.watch(&dir, notify::RecursiveMode::NonRecursive) {
            tracing::warn!(dir = %dir.display(), "file watcher: cannot watch a new folder: {err}");
            return;
        }
    }
}

fn to_change(root: &Path, ignored: &IgnoreRules, kind: &EventKind, paths: &[PathBuf]) -> Option<FsChange> {
    let rel = |p: &PathBuf| -> Option<String> {
        let rel = p.strip_prefix(root).ok()?;
        if rel.as_os_str().is_empty()
            || rel.components().any(|c| is_excluded_name(c.as_os_str()))
            || rel.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(".paige-save-"))
            || ignored.is_ignored_with_parents(p, p.is_dir())
        {
            return None;
        }
        Some(to_slash(rel))
    };
    let first = paths.first()?;
    let (action, new_path) = match kind {
        EventKind::Create(_) => (FsChangeAction::Add, None),
        EventKind::Remove(_) => (FsChangeAction::Unlink, None),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if paths.len() == 2 => {
            return match (rel(first), rel(&paths[1])) {
                (Some(from), Some(to)) => {
                    Some(FsChange { action: FsChangeAction::Rename, path: from, new_path: Some(to) })
                }
                (Some(from), None) => Some(FsChange { action: FsChangeAction::Unlink, path: from, new_path: None }),
                (None, Some(to)) => Some(FsChange { action: FsChangeAction::Add, path: to, new_path: None }),
                (None, None) => None,
            };
        }
        EventKind::Modify(ModifyKind::Name(RenameMode::From)) => (FsChangeAction::Unlink, None),
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => (FsChangeAction::Add, None),
        EventKind::Modify(ModifyKind::Name(_)) => {
            (if first.exists() { FsChangeAction::Add } else { FsChangeAction::Unlink }, None)
        }
        EventKind::Modify(ModifyKind::Metadata(_)) | EventKind::Access(_) | EventKind::Other => return None,
        EventKind::Modify(_) | EventKind::Any => (FsChangeAction::Change, None),
    };
    Some(FsChange { action, path: rel(first)?, new_path })
}

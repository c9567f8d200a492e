//! Watches the project for changes made outside the editor (spec Story 3): debounced
//! add / change / unlink / rename events, relative paths, noise filtered out.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::EventKind;
use notify::event::{ModifyKind, RenameMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use serde::Serialize;

use super::ProjectRoot;
use super::guard::to_slash;
use super::tree::is_excluded_name;

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
    debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

impl Watcher {
    /// Starts watching `root` recursively; `on_change` runs on the watcher's thread.
    pub fn start(root: &ProjectRoot, on_change: impl Fn(FsChange) + Send + 'static) -> notify::Result<Watcher> {
        let base = root.path().to_path_buf();
        let ignored = gitignore(&base);
        let mut debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| match result {
            Ok(events) => {
                for event in events {
                    if let Some(change) = to_change(&base, &ignored, &event.kind, &event.paths) {
                        on_change(change);
                    }
                }
            }
            Err(errors) => errors.iter().for_each(|e| tracing::warn!("file watcher: {e}")),
        })?;
        debouncer.watch(root.path(), notify::RecursiveMode::Recursive)?;
        Ok(Watcher { debouncer })
    }

    pub fn stop(self) {
        self.debouncer.stop();
    }
}

fn gitignore(root: &Path) -> ignore::gitignore::Gitignore {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(root);
    if let Some(err) = builder.add(root.join(".gitignore"))
        && !matches!(&err, ignore::Error::Io(io) if io.kind() == std::io::ErrorKind::NotFound)
    {
        tracing::warn!("file watcher: cannot read .gitignore: {err}");
    }
    builder.build().unwrap_or_else(|_| ignore::gitignore::Gitignore::empty())
}

fn to_change(
    root: &Path,
    ignored: &ignore::gitignore::Gitignore,
    kind: &EventKind,
    paths: &[PathBuf],
) -> Option<FsChange> {
    let rel = |p: &PathBuf| -> Option<String> {
        let rel = p.strip_prefix(root).ok()?;
        if rel.as_os_str().is_empty()
            || rel.components().any(|c| is_excluded_name(c.as_os_str()))
            || rel.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(".paige-save-"))
            || ignored.matched_path_or_any_parents(rel, p.is_dir()).is_ignore()
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

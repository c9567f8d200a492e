//! Watches the project for changes made outside the editor (spec Story 3) on Linux's inotify:
//! one watch per folder the tree keeps (not `node_modules`, `target` or other ignored ones),
//! added in one walk, kept in maps (linear in folders), moved along when a folder is renamed.
//!
//! Two views of the same events ([`WatchEvent`]):
//! - **Touched**, at once and in the kernel's order, for the change detector's journal. A
//!   [`Syncer::sync`] writes a marker in a folder the same inotify instance watches and waits
//!   until the reader has passed it: every change completed before the call has then been
//!   reported. The kernel's queue overflowing is reported too (then nothing is known).
//! - **Change**, coalesced per path over [`DEBOUNCE`], for the UIs (`fs:tree_update`).

mod coalesce;
mod reader;

use crate::sync::Locked;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use inotify::{Inotify, WatchDescriptor, WatchMask};
use rustix::fd::OwnedFd;
use serde::Serialize;

use super::ProjectRoot;
use super::ignore_rules::IgnoreRules;
use super::tree::kept_dirs;

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

/// What the watcher reports, on its own thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// A learner path (a file or a folder: everything beneath it may have changed) was
    /// created, written, removed, re-permissioned or moved. Sent at once.
    Touched(String),
    /// Changes were lost (the kernel's queue overflowed, a folder could not be watched):
    /// anything may have changed.
    Overflow,
    /// A change for the UIs, coalesced.
    Change(FsChange),
}

/// A running watcher. Dropping it (or [`Watcher::stop`]) stops watching and joins its thread;
/// pending UI changes are discarded.
pub struct Watcher {
    shared: Arc<Shared>,
    stop: Option<OwnedFd>,
    thread: Option<std::thread::JoinHandle<()>>,
    degraded: Option<String>,
}

/// What the reader thread and the callers share.
struct Shared {
    root: PathBuf,
    rules: Arc<IgnoreRules>,
    watches: Mutex<Watches>,
    barrier: std::sync::OnceLock<Barrier>,
}

/// The folders watched, both ways.
struct Watches {
    handle: inotify::Watches,
    by_wd: HashMap<WatchDescriptor, String>,
    by_dir: HashMap<String, WatchDescriptor>,
}

/// Markers written to prove that the reader has caught up.
struct Barrier {
    dir: PathBuf,
    wd: WatchDescriptor,
    next: AtomicU64,
    seen: Mutex<u64>,
    passed: Condvar,
}

const MASK: WatchMask = WatchMask::CREATE
    .union(WatchMask::DELETE)
    .union(WatchMask::MODIFY)
    .union(WatchMask::ATTRIB)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::ONLYDIR)
    .union(WatchMask::DONT_FOLLOW)
    .union(WatchMask::EXCL_UNLINK);

/// A handle to make sure every change made so far has been reported.
#[derive(Clone)]
pub struct Syncer(Arc<Shared>);

impl Syncer {
    /// Returns once every change completed before this call has been reported as
    /// [`WatchEvent::Touched`] — `false` when that could not be shown within `timeout` (no
    /// marker folder, or the reader did not get there): the caller must then assume anything
    /// changed.
    pub fn sync(&self, timeout: Duration) -> bool {
        let Some(barrier) = self.0.barrier.get() else { return false };
        let n = barrier.next.fetch_add(1, Ordering::Relaxed) + 1;
        let marker = barrier.dir.join(format!("{n}"));
        if std::fs::File::create(&marker).is_err() {
            return false;
        }
        let _ = std::fs::remove_file(&marker);
        let deadline = Instant::now() + timeout;
        let mut seen = barrier.seen.locked();
        while *seen < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            seen = barrier.passed.wait_timeout(seen, left).map(|(s, _)| s).unwrap_or_else(|p| p.into_inner().0);
        }
        true
    }
}

/// How a watcher is set up.
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    /// A private folder (Paige's, outside the project) for [`Syncer::sync`]'s markers.
    pub barrier_dir: Option<PathBuf>,
}

impl Watcher {
    /// Starts watching; each change reaches `on_change` coalesced, on the watcher's thread.
    pub fn start(root: &ProjectRoot, on_change: impl Fn(FsChange) + Send + 'static) -> std::io::Result<Watcher> {
        Watcher::start_with(root, WatchOptions::default(), move |event| {
            if let WatchEvent::Change(change) = event {
                on_change(change);
            }
        })
    }

    /// Starts watching the folders the project tree shows — not excluded or ignored ones, each
    /// would cost a watch — adding folders as they appear. This walks the project's folders:
    /// call it off the runtime. When the system's watch limit is reached, the rest goes
    /// unwatched: logged, said by [`Watcher::degraded`]; Paige keeps working.
    pub fn start_with(
        root: &ProjectRoot,
        options: WatchOptions,
        on_event: impl Fn(WatchEvent) + Send + 'static,
    ) -> std::io::Result<Watcher> {
        let inotify = Inotify::init()?;
        let handle = inotify.watches();
        let watches = Watches { handle: handle.clone(), by_wd: HashMap::new(), by_dir: HashMap::new() };
        let shared = Arc::new(Shared {
            root: root.path().to_owned(),
            rules: IgnoreRules::new(root.path()),
            watches: Mutex::new(watches),
            barrier: std::sync::OnceLock::new(),
        });
        let (stop_read, stop_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("paige-watcher".into())
                .spawn(move || reader::run(inotify, stop_read, &shared, &on_event))?
        };
        let mut watcher = Watcher { shared, stop: Some(stop_write), thread: Some(thread), degraded: None };
        let dirs = kept_dirs(root.path(), root.path());
        let watched = watcher.shared.watch_all(&dirs);
        // The markers' folder last: at the watch limit the project's folders come first (and
        // without markers every look walks the project, as a degraded watcher needs anyway).
        if let Some(dir) = options.barrier_dir {
            match add_barrier(handle, dir) {
                Ok(barrier) => drop(watcher.shared.barrier.set(barrier)),
                Err(err) => tracing::warn!("file watcher: no marker folder, each look walks the project: {err}"),
            }
        }
        if watched == 0 && !dirs.is_empty() {
            return Err(std::io::Error::other("cannot watch the project's folder"));
        }
        if watched < dirs.len() {
            let message = format!(
                "Paige watches {watched} of the project's {} folders (raise fs.inotify.max_user_watches); \
                 changes made outside the editor in the others show when the project is reopened",
                dirs.len()
            );
            tracing::warn!("file watcher: {message}");
            watcher.degraded = Some(message);
        }
        tracing::info!(folders = watched, "file watcher started");
        Ok(watcher)
    }

    /// Why some of the project is not watched, when the system's watch limit cut it short.
    pub fn degraded(&self) -> Option<&str> {
        self.degraded.as_deref()
    }

    /// A handle for [`Syncer::sync`].
    pub fn syncer(&self) -> Syncer {
        Syncer(self.shared.clone())
    }

    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        // Closing the pipe's write end wakes the reader, which then returns.
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Watches `dir` (Paige's own, emptied first: a marker a crash left would make no event when
/// written again) for [`Syncer::sync`]'s markers.
fn add_barrier(mut handle: inotify::Watches, dir: PathBuf) -> std::io::Result<Barrier> {
    std::fs::create_dir_all(&dir)?;
    for entry in std::fs::read_dir(&dir)?.flatten() {
        let _ = std::fs::remove_file(entry.path());
    }
    let wd = handle.add(&dir, WatchMask::CREATE | WatchMask::ONLYDIR)?;
    Ok(Barrier { dir, wd, next: AtomicU64::new(0), seen: Mutex::new(0), passed: Condvar::new() })
}

impl Shared {
    /// Watches `dirs` (absolute, inside the root); returns how many are watched. Stops at the
    /// first failure (the watch limit: the others would fail too).
    fn watch_all(&self, dirs: &[PathBuf]) -> usize {
        let mut watches = self.watches.locked();
        let mut watched = 0;
        for dir in dirs {
            let Some(rel) = self.rel(dir) else { continue };
            match watches.handle.add(dir, MASK) {
                Ok(wd) => {
                    if let Some(old) = watches.by_dir.insert(rel.clone(), wd.clone())
                        && old != wd
                    {
                        watches.by_wd.remove(&old);
                    }
                    watches.by_wd.insert(wd, rel);
                    watched += 1;
                }
                Err(err) => {
                    tracing::warn!(dir = %dir.display(), "file watcher: cannot watch a folder: {err}");
                    break;
                }
            }
        }
        watched
    }

    /// A folder moved within the project: its watches (and those beneath it) follow it.
    fn moved(&self, from: &str, to: &str) {
        let mut watches = self.watches.locked();
        let moved: Vec<(String, WatchDescriptor)> =
            watches.by_dir.iter().filter(|(dir, _)| beneath(dir, from)).map(|(d, w)| (d.clone(), w.clone())).collect();
        for (dir, wd) in moved {
            let renamed = format!("{to}{}", &dir[from.len()..]);
            watches.by_dir.remove(&dir);
            watches.by_dir.insert(renamed.clone(), wd.clone());
            watches.by_wd.insert(wd, renamed);
        }
    }

    /// A folder left the project (removed, or moved out): its watches go.
    fn gone(&self, dir: &str) {
        let mut watches = self.watches.locked();
        let gone: Vec<(String, WatchDescriptor)> =
            watches.by_dir.iter().filter(|(d, _)| beneath(d, dir)).map(|(d, w)| (d.clone(), w.clone())).collect();
        for (dir, wd) in gone {
            watches.by_dir.remove(&dir);
            watches.by_wd.remove(&wd);
            let _ = watches.handle.remove(wd);
        }
    }

    fn rel(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?;
        Some(super::to_slash(rel))
    }
}

/// `path` is `dir` or beneath it (`/`-separated, relative; `""` is the root).
fn beneath(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

//! The watcher's thread: reads inotify's events in the kernel's order, turns them into learner
//! paths (ignored and Paige's own temp files left out), reports each at once, keeps the
//! watches in step with folders made, moved and removed, and sends the UIs' changes when due.

use crate::sync::Locked;
use std::path::Path;
use std::time::Instant;

use inotify::{EventMask, Inotify};
use rustix::event::{PollFd, PollFlags};
use rustix::fd::{AsFd, OwnedFd};

use super::coalesce::Coalescer;
use super::{FsChange, FsChangeAction, Shared, WatchEvent};
use crate::files::tree::{is_excluded_name, kept_dirs};

/// One read's moves waiting for their other half, by cookie: the path and whether a folder.
type Moves = Vec<(u32, String, bool)>;

pub(super) fn run(mut inotify: Inotify, stop: OwnedFd, shared: &Shared, on_event: &dyn Fn(WatchEvent)) {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut ui = Coalescer::default();
    let mut out = Vec::new();
    loop {
        let timeout = ui
            .due_in(Instant::now())
            .map(|d| rustix::event::Timespec { tv_sec: d.as_secs() as i64, tv_nsec: i64::from(d.subsec_nanos()) });
        let stop_fd = stop.as_fd();
        let mut fds = [PollFd::new(&inotify, PollFlags::IN), PollFd::new(&stop_fd, PollFlags::IN)];
        match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(err) => {
                tracing::warn!("file watcher stopped: {err}");
                return;
            }
        }
        if !fds[1].revents().is_empty() {
            return;
        }
        loop {
            let events = match inotify.read_events(&mut buffer) {
                Ok(events) => events,
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(err) => {
                    tracing::warn!("file watcher: cannot read events: {err}");
                    on_event(WatchEvent::Overflow);
                    break;
                }
            };
            let mut moves: Moves = Vec::new();
            let now = Instant::now();
            for event in events {
                handle(shared, &event, &mut moves, &mut |e| match e {
                    WatchEvent::Change(change) => ui.push(change, now, &mut out),
                    other => on_event(other),
                });
            }
            // A move whose other half is not in this read left the project (or came from
            // outside it).
            for (_, from, is_dir) in moves {
                if is_dir {
                    shared.gone(&from);
                }
                ui.push(FsChange { action: FsChangeAction::Unlink, path: from, new_path: None }, now, &mut out);
            }
        }
        ui.flush_due(Instant::now(), &mut out);
        for change in out.drain(..) {
            on_event(WatchEvent::Change(change));
        }
    }
}

fn handle(
    shared: &Shared,
    event: &inotify::Event<&std::ffi::OsStr>,
    moves: &mut Moves,
    emit: &mut dyn FnMut(WatchEvent),
) {
    let mask = event.mask;
    if mask.contains(EventMask::Q_OVERFLOW) {
        tracing::warn!("file watcher: the kernel's event queue overflowed; changes were lost");
        emit(WatchEvent::Overflow);
        return;
    }
    if let Some(barrier) = shared.barrier.get()
        && barrier.wd == event.wd
    {
        if let Some(n) = event.name.and_then(|n| n.to_str()).and_then(|n| n.parse::<u64>().ok()) {
            let mut seen = barrier.seen.locked();
            *seen = (*seen).max(n);
            barrier.passed.notify_all();
        }
        return;
    }
    let dir = {
        let mut watches = shared.watches.locked();
        if mask.contains(EventMask::IGNORED) {
            // The folder went (or its watch did): its entry goes.
            if let Some(dir) = watches.by_wd.remove(&event.wd) {
                watches.by_dir.remove(&dir);
            }
            return;
        }
        match watches.by_wd.get(&event.wd) {
            Some(dir) => dir.clone(),
            None => return,
        }
    };
    let Some(name) = event.name else { return };
    let rel =
        if dir.is_empty() { name.to_string_lossy().into_owned() } else { format!("{dir}/{}", name.to_string_lossy()) };
    let is_dir = mask.contains(EventMask::ISDIR);
    let abs = shared.root.join(&rel);
    if !kept(shared, &rel, &abs, is_dir) {
        return;
    }
    if matches!(name.to_str(), Some(".gitignore" | ".ignore")) {
        shared.rules.forget(abs.parent().unwrap_or(&shared.root));
    }
    let change = |action| WatchEvent::Change(FsChange { action, path: rel.clone(), new_path: None });
    if mask.contains(EventMask::MOVED_FROM) {
        emit(WatchEvent::Touched(rel.clone()));
        moves.push((event.cookie, rel, is_dir));
        return;
    }
    emit(WatchEvent::Touched(rel.clone()));
    if mask.contains(EventMask::MOVED_TO) {
        if let Some(at) = moves.iter().position(|(cookie, _, _)| *cookie == event.cookie) {
            let (_, from, _) = moves.remove(at);
            if is_dir {
                shared.moved(&from, &rel);
            }
            emit(WatchEvent::Change(FsChange { action: FsChangeAction::Rename, path: from, new_path: Some(rel) }));
        } else {
            if is_dir {
                watch_new(shared, &abs, emit);
            }
            emit(change(FsChangeAction::Add));
        }
    } else if mask.contains(EventMask::CREATE) {
        if is_dir {
            watch_new(shared, &abs, emit);
        }
        emit(change(FsChangeAction::Add));
    } else if mask.contains(EventMask::DELETE) {
        if is_dir {
            shared.gone(&rel);
        }
        emit(change(FsChangeAction::Unlink));
    } else if mask.contains(EventMask::MODIFY) {
        emit(change(FsChangeAction::Change));
    }
    // ATTRIB: touched only (permissions, times, links): the UIs show nothing for it.
}

/// A learner path: not in an excluded folder, not a temp file of Paige's saves, not ignored.
fn kept(shared: &Shared, rel: &str, abs: &Path, is_dir: bool) -> bool {
    !(rel.split('/').any(|part| is_excluded_name(std::ffi::OsStr::new(part)))
        || rel.rsplit('/').next().is_some_and(|n| n.starts_with(crate::files::TEMP_PREFIX))
        || shared.rules.is_ignored_with_parents(abs, is_dir))
}

/// A folder made in (or moved into) the project: it and the folders beneath it that the tree
/// keeps are watched. What was made inside before the watch is reported by the folder's own
/// path (the detector walks it). A watch that cannot be added loses changes: said.
fn watch_new(shared: &Shared, abs: &Path, emit: &mut dyn FnMut(WatchEvent)) {
    let dirs = kept_dirs(&shared.root, abs);
    if shared.watch_all(&dirs) < dirs.len() {
        emit(WatchEvent::Overflow);
    }
}

//! The project tree a folder at a time (issue 32). Connecting lists the root (and the small
//! folders right under it), never the whole project; a UI asks for a folder's entries when
//! it is expanded (`fs:list` → `fs:children`), a page of [`PAGE_ENTRIES`] at a time. Each
//! folder is read with one `read_dir` through the root's handle, by the rules the walk uses
//! (excluded names, `.gitignore`, no symlink followed), and its listing is kept for every UI:
//! dropped when the watcher reports a change in it ([`TreeCache::changed`]) or when the
//! folder's own timestamps moved (a change the watcher missed), the least recently used
//! going first past [`MAX_CACHED_DIRS`] folders or [`MAX_CACHED_ENTRIES`] entries.

use crate::sync::Locked;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rustix::fs::{AtFlags, FileType};
use rustix::io::Errno;
use serde::Serialize;

use super::guard::{PathError, ProjectRoot};
use super::ignore_rules::IgnoreRules;
use super::tree::{TreeNode, TreeNodeKind, is_excluded_name, root_name, tree_order};
use super::watcher::{FsChange, FsChangeAction};

/// The most entries one `fs:children` frame (or the root in `fs:tree`) carries.
pub const PAGE_ENTRIES: usize = 2_000;
/// The most entries of one folder Paige lists; a folder with more lists the first ones the
/// file system gives, and says so (`capped`).
pub const MAX_DIR_ENTRIES: usize = 100_000;
/// The most folder listings kept.
pub const MAX_CACHED_DIRS: usize = 512;
/// The most entries kept over all listings.
pub const MAX_CACHED_ENTRIES: usize = 200_000;
/// The first `fs:tree` also lists the first this many folders under the root…
const FIRST_FRAME_DIRS: usize = 16;
/// …each only when it has at most this many entries…
const SMALL_DIR: usize = 100;
/// …while the frame stays within this many nodes (besides the root's page).
const FIRST_FRAME_NODES: usize = 1_000;

/// One page of a folder's entries: the payload of `fs:children`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DirPage {
    /// The folder, relative to the root (`""`: the root).
    pub path: String,
    /// Its entries from `offset` on, at most 2,000; directories among them are not listed.
    pub children: Vec<TreeNode>,
    pub offset: u32,
    /// How many entries the folder lists in all.
    pub total: u32,
    /// Where the next page starts, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub next_offset: Option<u32>,
    /// The folder holds more than the 100,000 entries Paige lists; the rest are not shown.
    pub capped: bool,
}

/// Why a folder cannot be listed; the UI shows it where the folder is.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("{0:?} is a symlink or lies under one: the project tree does not follow symlinks")]
    Symlink(String),
    #[error("{0:?} is left out of the project tree (an excluded folder, or ignored by .gitignore)")]
    Hidden(String),
    #[error("folder not found: {0}")]
    NotFound(String),
    #[error("{0:?} is not a folder")]
    NotAFolder(String),
    #[error("cannot list {path:?}: {source}")]
    Io { path: String, source: std::io::Error },
}

/// The project's folder listings, shared by every UI.
pub struct TreeCache {
    root: ProjectRoot,
    state: Mutex<State>,
}

struct State {
    /// The ignore rules the listings were made with (made anew when an ignore file changes).
    rules: Arc<IgnoreRules>,
    dirs: HashMap<String, Kept>,
    /// Entries over all of `dirs`.
    entries: usize,
    /// Bumped on every use, for least-recently-used eviction.
    uses: u64,
    /// Bumped on every change: a listing read while one arrived is not kept.
    generation: u64,
    /// Folders read with `rules`: the rules of every folder ever listed would pile up, so
    /// past [`RULES_READS`] they are read afresh (the listings kept were made by the same).
    reads: usize,
}

const RULES_READS: usize = 4 * MAX_CACHED_DIRS;

struct Kept {
    listing: Arc<Listing>,
    stamp: Stamp,
    used: u64,
}

/// One folder's entries in the tree's order.
struct Listing {
    entries: Vec<TreeNode>,
    /// More entries than the read's limit.
    capped: bool,
}

/// What changes whenever a folder's entries do: its inode and its timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp([i64; 5]);

impl TreeCache {
    pub fn new(root: &ProjectRoot) -> TreeCache {
        let state = State {
            rules: IgnoreRules::new(root.path()),
            dirs: HashMap::new(),
            entries: 0,
            uses: 0,
            generation: 0,
            reads: 0,
        };
        TreeCache { root: root.clone(), state: Mutex::new(state) }
    }

    /// What the first `fs:tree` carries: the root with its first page of entries, and the
    /// entries of the first few small folders under it. Nothing deeper is read. When the root
    /// cannot be listed its `children` stay absent, so the UI asks and shows why.
    pub fn first_tree(&self) -> TreeNode {
        let mut root = TreeNode::unlisted(root_name(self.root.path()), String::new(), TreeNodeKind::Directory);
        match self.list("", 0) {
            Ok(page) => {
                root.next_offset = page.next_offset;
                root.children = Some(page.children);
            }
            Err(err) => tracing::warn!("cannot list the project folder: {err}"),
        }
        let mut budget = FIRST_FRAME_NODES;
        let dirs = root.children.iter_mut().flatten().filter(|c| c.kind == TreeNodeKind::Directory);
        for dir in dirs.take(FIRST_FRAME_DIRS) {
            let limit = SMALL_DIR.min(budget);
            if limit == 0 {
                break;
            }
            let Ok(listing) = self.listing(&dir.path, limit) else { continue };
            if !listing.capped && listing.entries.len() <= limit {
                budget -= listing.entries.len();
                dir.children = Some(listing.entries.clone());
            }
        }
        root
    }

    /// One page of the folder `path`'s entries from `offset` (`""` or `"."`: the root). The
    /// path passes the project guard; a symlink, a file, or a folder the tree leaves out is
    /// refused with why.
    pub fn list(&self, path: &str, offset: u32) -> Result<DirPage, ListError> {
        let rel = self.folder(path)?;
        let listing = self.listing(&rel, MAX_DIR_ENTRIES)?;
        let total = listing.entries.len();
        let start = (offset as usize).min(total);
        let end = (start + PAGE_ENTRIES).min(total);
        Ok(DirPage {
            children: listing.entries[start..end].to_vec(),
            offset: start as u32,
            total: total as u32,
            next_offset: (end < total).then_some(end as u32),
            capped: listing.capped,
            path: rel,
        })
    }

    /// A change the watcher reported: the listings it touches are dropped (the folder that
    /// holds the path, and a removed or moved folder with everything under it); a changed
    /// `.gitignore` or `.ignore` drops them all and reads the rules afresh.
    pub fn changed(&self, change: &FsChange) {
        let paths = [Some(change.path.as_str()), change.new_path.as_deref()];
        if paths.iter().flatten().any(|p| is_rules_file(p)) {
            return self.forget_all();
        }
        let mut state = self.state.locked();
        if change.action == FsChangeAction::Change {
            return;
        }
        state.generation += 1;
        for path in paths.into_iter().flatten() {
            state.forget(|dir| dir == parent(path) || dir == path || is_under(dir, path));
        }
    }

    /// Every listing dropped and the rules read afresh: the watcher lost changes (its queue
    /// overflowed), or the rules changed.
    pub fn forget_all(&self) {
        let mut state = self.state.locked();
        state.rules = IgnoreRules::new(self.root.path());
        state.reads = 0;
        state.dirs.clear();
        state.entries = 0;
        state.generation += 1;
    }

    /// The folders whose listings are kept, sorted (`""`: the root).
    pub fn listed(&self) -> Vec<String> {
        let mut dirs: Vec<String> = self.state.locked().dirs.keys().cloned().collect();
        dirs.sort();
        dirs
    }

    /// `path` as a folder the tree shows, relative to the root.
    fn folder(&self, path: &str) -> Result<String, ListError> {
        let Some(asked) = lexical(self.root.path(), path) else {
            return Err(PathError::OutsideProject(path.to_owned()).into());
        };
        if asked.is_empty() {
            return Ok(asked);
        }
        let resolved = match self.root.resolve(path) {
            Ok(resolved) => resolved,
            Err(PathError::IsRoot(_)) => return Ok(String::new()),
            Err(err) => return Err(err.into()),
        };
        if resolved.rel() != asked {
            return Err(ListError::Symlink(path.to_owned()));
        }
        let rules = self.state.locked().rules.clone();
        let excluded = Path::new(&asked).components().any(|c| is_excluded_name(c.as_os_str()));
        if excluded || rules.is_ignored_with_parents(resolved.abs(), true) {
            return Err(ListError::Hidden(path.to_owned()));
        }
        Ok(asked)
    }

    /// The folder `rel`'s listing, kept or read now (at most `limit` entries are read; a
    /// listing cut short by a smaller limit than [`MAX_DIR_ENTRIES`] is not kept).
    fn listing(&self, rel: &str, limit: usize) -> Result<Arc<Listing>, ListError> {
        let fd = self.root.handle().dir.open_dir(rel).map_err(|errno| open_error(rel, errno))?;
        let stamp = Stamp::of(&fd).map_err(|errno| io_error(rel, errno))?;
        let (rules, generation) = {
            let mut state = self.state.locked();
            state.uses += 1;
            let uses = state.uses;
            if let Some(kept) = state.dirs.get_mut(rel).filter(|kept| kept.stamp == stamp) {
                kept.used = uses;
                return Ok(kept.listing.clone());
            }
            state.reads += 1;
            if state.reads > RULES_READS {
                state.reads = 0;
                state.rules = IgnoreRules::new(self.root.path());
            }
            (state.rules.clone(), state.generation)
        };
        let listing = Arc::new(read_listing(self.root.path(), &rules, rel, &fd, limit).map_err(|e| io_error(rel, e))?);
        if !listing.capped || limit >= MAX_DIR_ENTRIES {
            let mut state = self.state.locked();
            if state.generation == generation {
                let used = state.uses;
                state.keep(rel, Kept { listing: listing.clone(), stamp, used });
            }
        }
        Ok(listing)
    }
}

impl State {
    fn keep(&mut self, rel: &str, kept: Kept) {
        self.forget(|dir| dir == rel);
        self.entries += kept.listing.entries.len();
        self.dirs.insert(rel.to_owned(), kept);
        while self.dirs.len() > MAX_CACHED_DIRS || self.entries > MAX_CACHED_ENTRIES {
            let oldest = self.dirs.iter().filter(|(dir, _)| *dir != rel).min_by_key(|(_, kept)| kept.used);
            let Some(oldest) = oldest.map(|(dir, _)| dir.clone()) else { break };
            self.forget(|dir| dir == oldest);
        }
    }

    fn forget(&mut self, drop: impl Fn(&str) -> bool) {
        let entries = &mut self.entries;
        self.dirs.retain(|dir, kept| {
            let keep = !drop(dir);
            if !keep {
                *entries -= kept.listing.entries.len();
            }
            keep
        });
    }
}

impl Stamp {
    // The fields' types differ between targets.
    #[allow(clippy::unnecessary_cast)]
    fn of(fd: &OwnedFd) -> Result<Stamp, Errno> {
        let stat = rustix::fs::fstat(fd)?;
        Ok(Stamp([
            stat.st_ino as i64,
            stat.st_mtime as i64,
            stat.st_mtime_nsec as i64,
            stat.st_ctime as i64,
            stat.st_ctime_nsec as i64,
        ]))
    }
}

/// The entries of the folder `rel` (open as `fd`) the tree shows, in its order: at most
/// `limit` read, excluded names and ignored paths left out, symlinks shown as files.
fn read_listing(root: &Path, rules: &IgnoreRules, rel: &str, fd: &OwnedFd, limit: usize) -> Result<Listing, Errno> {
    let dir = root.join(rel);
    let mut entries = Vec::new();
    let mut read = 0;
    let mut capped = false;
    for entry in rustix::fs::Dir::read_from(fd)? {
        let entry = entry?;
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        if read == limit {
            capped = true;
            break;
        }
        read += 1;
        let name = OsStr::from_bytes(bytes);
        if is_excluded_name(name) {
            continue;
        }
        let is_dir = match entry.file_type() {
            FileType::Directory => true,
            // A file system that gives no types: asked, without following a symlink.
            FileType::Unknown => rustix::fs::statat(fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Directory),
            _ => false,
        };
        if rules.is_ignored(&dir.join(name), is_dir) {
            continue;
        }
        let name = name.to_string_lossy().into_owned();
        let path = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        let kind = if is_dir { TreeNodeKind::Directory } else { TreeNodeKind::File };
        entries.push(TreeNode::unlisted(name, path, kind));
    }
    entries.sort_by(tree_order);
    Ok(Listing { entries, capped })
}

/// `path` relative to the root as written (`/`-separated, without `.` and trailing slashes),
/// to compare with what the guard resolved it to: they differ when a symlink was followed.
/// `None` for an absolute path outside the root.
fn lexical(root: &Path, path: &str) -> Option<String> {
    let given = Path::new(path);
    let rel = match given.strip_prefix(root) {
        Ok(rel) => rel,
        Err(_) if given.is_absolute() => return None,
        Err(_) => given,
    };
    let parts: Vec<_> = rel
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::ParentDir))
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    Some(parts.join("/"))
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(parent, _)| parent)
}

fn is_under(dir: &str, folder: &str) -> bool {
    dir.strip_prefix(folder).is_some_and(|rest| rest.starts_with('/'))
}

fn is_rules_file(path: &str) -> bool {
    matches!(path.rsplit('/').next(), Some(".gitignore" | ".ignore"))
}

fn open_error(rel: &str, errno: Errno) -> ListError {
    let shown = if rel.is_empty() { "the project folder" } else { rel };
    match errno {
        Errno::NOENT => ListError::NotFound(shown.to_owned()),
        Errno::NOTDIR => ListError::NotAFolder(shown.to_owned()),
        Errno::LOOP | Errno::XDEV => ListError::Symlink(shown.to_owned()),
        errno => io_error(rel, errno),
    }
}

fn io_error(rel: &str, errno: Errno) -> ListError {
    let path = if rel.is_empty() { "the project folder".to_owned() } else { rel.to_owned() };
    ListError::Io { path, source: errno.into() }
}

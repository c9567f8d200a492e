//! The closing walk of a window, made cheap: the folders and files the last walk kept are
//! remembered, so a re-walk lists each known folder once and `fstatat`s each entry by name
//! from the folder's descriptor (no path lookup from the root, no ignore matching for names
//! already known). Only new names are matched against the ignore rules. Every learner file's
//! metadata is still read on every walk: a change through a hard link or a restored mtime is
//! still seen. A change to an ignore file invalidates it (the next walk is a full one).

use crate::sync::Locked;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

use rustix::fd::OwnedFd;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::manifest::{Manifest, Meta};
use crate::files::IgnoreRules;

/// What the last walk kept, per folder (`""` is the root): the names of its kept files and
/// sub-folders.
pub(crate) struct Tree {
    rules: Arc<IgnoreRules>,
    folders: HashMap<String, Arc<Folder>>,
    /// `.git/info/exclude` when the tree was made (ignore rules outside the manifest).
    exclude: Option<Meta>,
}

#[derive(Default)]
struct Folder {
    files: HashSet<Vec<u8>>,
    dirs: HashSet<Vec<u8>>,
}

impl Tree {
    /// The tree of a full walk's manifest.
    pub(crate) fn from_manifest(root: &Path, manifest: &Manifest) -> Tree {
        let mut folders: HashMap<String, Folder> = HashMap::new();
        folders.entry(String::new()).or_default();
        for path in manifest.keys() {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            folders.entry(dir.to_owned()).or_default().files.insert(name.as_bytes().to_vec());
            // Every folder above it is kept too.
            let mut child = dir;
            while !child.is_empty() {
                let (parent, name) = child.rsplit_once('/').unwrap_or(("", child));
                folders.entry(parent.to_owned()).or_default().dirs.insert(name.as_bytes().to_vec());
                child = parent;
            }
        }
        let folders = folders.into_iter().map(|(dir, folder)| (dir, Arc::new(folder))).collect();
        Tree { rules: IgnoreRules::new(root), folders, exclude: exclude_meta(root) }
    }

    /// The learner files now. `None` when `.git/info/exclude` changed: the caller walks in
    /// full (it also does when a `.gitignore` or `.ignore` in the result changed).
    pub(crate) fn rewalk(&mut self, root: &Path) -> Option<Manifest> {
        if exclude_meta(root) != self.exclude {
            return None;
        }
        let root_fd = open_dir(root).ok()?;
        let work = Mutex::new(Work { queue: vec![(String::new(), root_fd)], busy: 0 });
        let ready = Condvar::new();
        let found: Mutex<Found> = Mutex::default();
        let this = &*self;
        // Folders are read on two threads: a re-walk is bound by one syscall per entry.
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    while let Some((dir, fd)) = next(&work, &ready) {
                        let (files, folder, subdirs) = this.read_folder(root, &dir, &fd);
                        let mut out = found.locked();
                        out.0.extend(files);
                        out.1.push((dir, folder));
                        drop(out);
                        let mut work = work.locked();
                        work.queue.extend(subdirs);
                        work.busy -= 1;
                        ready.notify_all();
                    }
                });
            }
        });
        let (files, folders) = found.into_inner().unwrap_or_else(|p| p.into_inner());
        self.folders = folders.into_iter().collect();
        Some(files.into_iter().collect())
    }

    /// One folder's kept files (with their metadata), its kept names (the last walk's, when
    /// nothing was added or removed), and its kept sub-folders opened from its own descriptor
    /// (never through a symlink).
    fn read_folder(&self, root: &Path, dir: &str, fd: &OwnedFd) -> (Vec<(String, Meta)>, Arc<Folder>, Vec<Queued>) {
        let known = self.folders.get(dir);
        let mut files = Vec::new();
        let mut subdirs = Vec::new();
        // Names the last walk did not have: the folder's sets are made anew only then.
        let mut added = false;
        let open_child = |rel: String, name: &std::ffi::CStr, subdirs: &mut Vec<Queued>| {
            if let Ok(child) = rustix::fs::openat(fd, name, DIR_FLAGS, Mode::empty()) {
                subdirs.push((rel, child));
            }
        };
        if let Ok(entries) = rustix::fs::Dir::read_from(fd) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                let rel = if dir.is_empty() {
                    String::from_utf8_lossy(name).into_owned()
                } else {
                    format!("{dir}/{}", String::from_utf8_lossy(name))
                };
                let is_dir = match entry.file_type() {
                    FileType::Directory => None,
                    _ => match rustix::fs::statat(fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(stat) => Some(stat),
                        Err(_) => continue,
                    },
                };
                match is_dir.map(|stat| (FileType::from_raw_mode(stat.st_mode), stat)) {
                    // A directory (by its entry type, or by its stat where the file system
                    // gives no types).
                    None | Some((FileType::Directory, _)) => {
                        let was = known.is_some_and(|k| k.dirs.contains(name));
                        if was || self.keeps(root, &rel, name, true) {
                            added |= !was;
                            open_child(rel, entry.file_name(), &mut subdirs);
                        }
                    }
                    Some((FileType::RegularFile, stat)) => {
                        let was = known.is_some_and(|k| k.files.contains(name));
                        if was || self.keeps(root, &rel, name, false) {
                            added |= !was;
                            files.push((rel, Meta::of_stat(&stat)));
                        }
                    }
                    _ => {}
                }
            }
        }
        let unchanged = known.filter(|k| !added && k.files.len() == files.len() && k.dirs.len() == subdirs.len());
        let folder = match unchanged {
            Some(known) => known.clone(),
            None => {
                let name = |rel: &String| rel.rsplit('/').next().unwrap_or(rel).as_bytes().to_vec();
                Arc::new(Folder {
                    files: files.iter().map(|(rel, _)| name(rel)).collect(),
                    dirs: subdirs.iter().map(|(rel, _)| name(rel)).collect(),
                })
            }
        };
        (files, folder, subdirs)
    }

    /// Whether a name the last walk did not have is a learner path.
    fn keeps(&self, root: &Path, rel: &str, name: &[u8], is_dir: bool) -> bool {
        let name = OsStr::from_bytes(name);
        if crate::files::is_excluded_name(name) {
            return false;
        }
        if !is_dir && name.to_string_lossy().starts_with(crate::files::TEMP_PREFIX) {
            return false;
        }
        !self.rules.is_ignored(&root.join(rel), is_dir)
    }
}

/// `.gitignore` or `.ignore`: files whose change changes what is kept.
pub(crate) fn is_ignore_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == ".gitignore" || name == ".ignore"
}

fn exclude_meta(root: &Path) -> Option<Meta> {
    std::fs::symlink_metadata(root.join(".git/info/exclude")).ok().map(|m| Meta::of(&m))
}

const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

fn open_dir(root: &Path) -> rustix::io::Result<OwnedFd> {
    rustix::fs::open(root, DIR_FLAGS, Mode::empty())
}

/// What the reading threads found: files with their metadata, folders with their names.
type Found = (Vec<(String, Meta)>, Vec<(String, Arc<Folder>)>);

/// A folder to read: its path and its open descriptor.
type Queued = (String, OwnedFd);

/// Folders waiting to be read, and how many are being read.
struct Work {
    queue: Vec<Queued>,
    busy: usize,
}

/// The next folder to read; `None` once none is queued and none is being read (whose
/// sub-folders could still come).
fn next(work: &Mutex<Work>, ready: &Condvar) -> Option<Queued> {
    let mut state = work.locked();
    loop {
        if let Some(item) = state.queue.pop() {
            state.busy += 1;
            return Some(item);
        }
        if state.busy == 0 {
            ready.notify_all();
            return None;
        }
        state = ready.wait(state).unwrap_or_else(|p| p.into_inner());
    }
}

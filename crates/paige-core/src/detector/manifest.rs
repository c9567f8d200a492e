//! A manifest of the learner's files: every regular file the project tree keeps (ignored
//! paths and Paige's excluded directories left out), by metadata only. Comparing two costs
//! one metadata walk; content is hashed only where metadata changed.

use crate::sync::Locked;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;

/// What a file's metadata says. `ctime` is compared too: a same-size write followed by
/// `touch -r` keeps size and mtime, but not ctime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) size: u64,
    pub(crate) mtime_ns: i128,
    pub(crate) ctime_ns: i128,
    pub(crate) ino: u64,
    pub(crate) mode: u32,
}

impl Meta {
    pub(crate) fn of(metadata: &std::fs::Metadata) -> Meta {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Meta {
            size: metadata.size(),
            mtime_ns: ns(metadata.mtime(), metadata.mtime_nsec()),
            ctime_ns: ns(metadata.ctime(), metadata.ctime_nsec()),
            ino: metadata.ino(),
            mode: metadata.mode() & 0o7777,
        }
    }
}

impl Meta {
    pub(crate) fn of_stat(stat: &rustix::fs::Stat) -> Meta {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Meta {
            size: stat.st_size as u64,
            mtime_ns: ns(stat.st_mtime, stat.st_mtime_nsec as i64),
            ctime_ns: ns(stat.st_ctime, stat.st_ctime_nsec as i64),
            ino: stat.st_ino,
            mode: stat.st_mode & 0o7777,
        }
    }
}

pub(crate) type Manifest = HashMap<String, Meta>;

/// The learner files under `root`, by their path relative to it (`/`-separated). Walks on
/// two threads: a call pays this walk once.
pub(crate) fn scan(root: &Path) -> Manifest {
    scan_from(root, root)
}

/// The learner files under `start` (a folder the tree keeps, inside `root`).
pub(crate) fn scan_from(root: &Path, start: &Path) -> Manifest {
    let found = Mutex::new(Vec::new());
    crate::files::walker(root, start).threads(2).build_parallel().visit(&mut Collector { root, found: &found });
    found.into_inner().unwrap_or_else(|p| p.into_inner()).into_iter().collect()
}

type Found = Mutex<Vec<(String, Meta)>>;

struct Collector<'a> {
    root: &'a Path,
    found: &'a Found,
}

impl<'a> ignore::ParallelVisitorBuilder<'a> for Collector<'a> {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 'a> {
        Box::new(Batch { root: self.root, found: self.found, batch: Vec::new() })
    }
}

/// One walking thread's finds, handed over in batches and when the thread is done.
struct Batch<'a> {
    root: &'a Path,
    found: &'a Found,
    batch: Vec<(String, Meta)>,
}

impl ignore::ParallelVisitor for Batch<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        if let Ok(entry) = entry
            && entry.file_type().is_some_and(|t| t.is_file())
            && !entry.file_name().to_string_lossy().starts_with(crate::files::TEMP_PREFIX)
            && let (Ok(rel), Ok(metadata)) = (entry.path().strip_prefix(self.root), entry.metadata())
        {
            self.batch.push((crate::files::to_slash(rel), Meta::of(&metadata)));
            if self.batch.len() >= 512 {
                self.found.locked().append(&mut self.batch);
            }
        }
        ignore::WalkState::Continue
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.found.locked().append(&mut self.batch);
    }
}

/// Lockfiles builds and tests rewrite as a side effect: kept and reported, never undone.
pub fn is_lockfile(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(name, "Cargo.lock" | "package-lock.json" | "yarn.lock" | "pnpm-lock.yaml" | "poetry.lock" | "uv.lock")
}

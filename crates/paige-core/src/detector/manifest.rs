//! A manifest of the learner's files: every regular file the project tree keeps (ignored
//! paths and Paige's excluded directories left out), by metadata only. Comparing two costs
//! one metadata walk; content is hashed only where metadata changed.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

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

pub(crate) type Manifest = BTreeMap<String, Meta>;

/// The learner files under `root`, by their path relative to it (`/`-separated).
pub(crate) fn scan(root: &Path) -> Manifest {
    let mut manifest = Manifest::new();
    for entry in crate::files::walker(root, root).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if entry.file_name().to_string_lossy().starts_with(crate::files::TEMP_PREFIX) {
            continue;
        }
        let (Ok(rel), Ok(metadata)) = (entry.path().strip_prefix(root), entry.metadata()) else { continue };
        manifest.insert(crate::files::to_slash(rel), Meta::of(&metadata));
    }
    manifest
}

/// Lockfiles builds and tests rewrite as a side effect: kept and reported, never undone.
pub fn is_lockfile(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(name, "Cargo.lock" | "package-lock.json" | "yarn.lock" | "pnpm-lock.yaml" | "poetry.lock" | "uv.lock")
}

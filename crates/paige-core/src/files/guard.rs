//! The one path guard. Every path that comes from outside (UI, MCP, hooks) is turned into a
//! [`ProjectPath`] here before any I/O on it; a `ProjectPath` is proof that the path was inside
//! the project, with symlinks resolved, when it was checked. It carries the root's directory
//! handle, and the file layer opens its canonical relative path from that handle without
//! following symlinks ([`super::beneath`]), so the check holds at the moment of use too.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::beneath::RootDir;

/// Default cap on a file Paige reads into memory (`PAIGE_MAX_FILE_BYTES`).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 << 20;

/// The canonical project root, and a directory handle on it.
#[derive(Debug, Clone)]
pub struct ProjectRoot {
    root: PathBuf,
    handle: Arc<Handle>,
}

/// What every path of a root shares: the directory handle and the read cap.
#[derive(Debug)]
pub(crate) struct Handle {
    pub(crate) dir: RootDir,
    pub(crate) max_file_bytes: u64,
}

/// A path proven to lie inside the project: `abs` is canonical (existing part resolved through
/// symlinks), `rel` is the same path relative to the root with `/` separators.
#[derive(Debug, Clone)]
pub struct ProjectPath {
    abs: PathBuf,
    rel: String,
    handle: Arc<Handle>,
}

impl PartialEq for ProjectRoot {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}
impl Eq for ProjectRoot {}

impl PartialEq for ProjectPath {
    fn eq(&self, other: &Self) -> bool {
        self.abs == other.abs
    }
}
impl Eq for ProjectPath {}
impl std::hash::Hash for ProjectPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.abs.hash(state);
    }
}
impl PartialOrd for ProjectPath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ProjectPath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.abs.cmp(&other.abs)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path is empty")]
    Empty,
    #[error("path contains a NUL byte")]
    NulByte,
    #[error("path {0:?} contains '..'; use a path inside the project")]
    ParentComponent(String),
    #[error("path {0:?} is outside the project")]
    OutsideProject(String),
    #[error("path {0:?} is a symlink that points outside the project")]
    SymlinkOutside(String),
    #[error("path {0:?} is the project root, not a file")]
    IsRoot(String),
    #[error("cannot resolve path {path:?}: {reason}")]
    Unresolvable { path: String, reason: String },
}

impl ProjectRoot {
    /// `dir` must exist; it is canonicalized and opened once here. Files are read up to
    /// [`DEFAULT_MAX_FILE_BYTES`].
    pub fn new(dir: &Path) -> std::io::Result<ProjectRoot> {
        ProjectRoot::with_max_file_bytes(dir, DEFAULT_MAX_FILE_BYTES)
    }

    /// As [`ProjectRoot::new`], refusing to read files larger than `max_file_bytes`.
    pub fn with_max_file_bytes(dir: &Path, max_file_bytes: u64) -> std::io::Result<ProjectRoot> {
        let root = dir.canonicalize()?;
        let dir = RootDir::open(&root)?;
        Ok(ProjectRoot { root, handle: Arc::new(Handle { dir, max_file_bytes }) })
    }

    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Resolves `input` (relative to the root, or absolute) to a path inside the project, or
    /// says why not. Only metadata is read: no file is opened.
    pub fn resolve(&self, input: &str) -> Result<ProjectPath, PathError> {
        if input.is_empty() {
            return Err(PathError::Empty);
        }
        if input.contains('\0') {
            return Err(PathError::NulByte);
        }
        let given = Path::new(input);
        if given.components().any(|c| c == Component::ParentDir) {
            return Err(PathError::ParentComponent(input.to_owned()));
        }
        let joined = if given.is_absolute() { given.to_path_buf() } else { self.root.join(given) };
        // Lexically outside is rejected before the file system is touched at all.
        let lexical: PathBuf = joined.components().filter(|c| *c != Component::CurDir).collect();
        if !lexical.starts_with(&self.root) {
            return Err(PathError::OutsideProject(input.to_owned()));
        }
        let abs = self.canonical(&lexical, input)?;
        let rel = match abs.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => return Err(PathError::IsRoot(input.to_owned())),
            Ok(rel) => to_slash(rel),
            Err(_) => return Err(PathError::SymlinkOutside(input.to_owned())),
        };
        Ok(ProjectPath { abs, rel, handle: self.handle.clone() })
    }

    /// The canonical form of `path`: the longest existing prefix is canonicalized (resolving
    /// symlinks), the rest — names of things not yet created — is appended as is.
    fn canonical(&self, path: &Path, input: &str) -> Result<PathBuf, PathError> {
        let unresolvable = |reason: String| PathError::Unresolvable { path: input.to_owned(), reason };
        let mut existing = path;
        let mut missing: Vec<&OsStr> = Vec::new();
        loop {
            match existing.symlink_metadata() {
                Ok(_) => break,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    let name = existing.file_name().ok_or_else(|| unresolvable(err.to_string()))?;
                    missing.push(name);
                    existing = existing.parent().ok_or_else(|| unresolvable(err.to_string()))?;
                }
                Err(err) => return Err(unresolvable(err.to_string())),
            }
        }
        let resolved = existing.canonicalize().map_err(|err| match err.kind() {
            // The prefix exists as a link but its target does not: a dangling symlink, which a
            // write would follow to wherever it points.
            std::io::ErrorKind::NotFound => PathError::SymlinkOutside(input.to_owned()),
            _ => unresolvable(err.to_string()),
        })?;
        Ok(missing.iter().rev().fold(resolved, |acc, name| acc.join(name)))
    }
}

impl ProjectPath {
    /// For display and for the language by extension; I/O goes through the root's handle.
    pub fn abs(&self) -> &Path {
        &self.abs
    }

    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Relative to the project root, `/`-separated: the path the UI and tools see.
    pub fn rel(&self) -> &str {
        &self.rel
    }
}

impl std::fmt::Display for ProjectPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.rel)
    }
}

pub(crate) fn to_slash(rel: &Path) -> String {
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

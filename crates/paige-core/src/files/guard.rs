//! The one path guard. Every path that comes from outside (UI, MCP, hooks) is turned into a
//! [`ProjectPath`] here before any I/O on it; a `ProjectPath` is proof that the path is inside
//! the project, with symlinks resolved.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// The canonical project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRoot {
    root: PathBuf,
}

/// A path proven to lie inside the project: `abs` is canonical (existing part resolved through
/// symlinks), `rel` is the same path relative to the root with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProjectPath {
    abs: PathBuf,
    rel: String,
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
    /// `dir` must exist; it is canonicalized once here.
    pub fn new(dir: &Path) -> std::io::Result<ProjectRoot> {
        Ok(ProjectRoot { root: dir.canonicalize()? })
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
        Ok(ProjectPath { abs, rel })
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
    pub fn abs(&self) -> &Path {
        &self.abs
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

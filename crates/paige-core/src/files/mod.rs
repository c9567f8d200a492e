//! The file system layer (spec Story 3): every read, write, tree scan, diff and watch of the
//! learner's project. Paths from outside pass through [`ProjectRoot::resolve`] first.

mod diff;
mod guard;
mod language;
mod read;
mod tree;
mod watcher;
mod write;

pub use diff::unified_diff;
pub use guard::{PathError, ProjectPath, ProjectRoot};
pub use language::language_for;
pub(crate) use read::is_binary_path;
pub use read::{FileContent, FileError, read_file, sniff_binary};
pub use tree::{EXCLUDED_DIRS, TreeNode, TreeNodeKind, project_tree};
pub use watcher::{FsChange, FsChangeAction, Watcher};
pub use write::write_file;

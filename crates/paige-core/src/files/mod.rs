//! The file system layer (spec Story 3): every read, write, tree scan, diff and watch of the
//! learner's project. Paths from outside pass through [`ProjectRoot::resolve`] first.

mod beneath;
mod diff;
mod guard;
mod ignore_rules;
mod language;
mod read;
mod tree;
mod watcher;
mod write;

pub use diff::unified_diff;
pub use guard::DEFAULT_MAX_FILE_BYTES;
pub(crate) use guard::to_slash;
pub use guard::{PathError, ProjectPath, ProjectRoot};
pub(crate) use ignore_rules::IgnoreRules;
pub use language::language_for;
pub(crate) use read::{DiskStamp, Opened, check_bufferable, disk_stamp, read_bytes};
pub use read::{FileContent, FileError, read_file, sniff_binary};
pub use tree::{EXCLUDED_DIRS, TreeNode, TreeNodeKind, project_tree};
pub(crate) use tree::{is_excluded_name, walker};
pub use watcher::{FsChange, FsChangeAction, Watcher};
pub use write::{TEMP_PREFIX, sweep_temp_files, write_file};
pub(crate) use write::{append_bytes, create_temp, refuse_reserved, remove_file, set_mode, write_bytes};
pub(crate) use write::{data_temp_prefix, sweep_data_temp_files};

//! The file system layer (spec Story 3): every read, write, tree scan, diff and watch of the
//! learner's project. Paths from outside pass through [`ProjectRoot::resolve`] first.

mod beneath;
mod diff;
mod guard;
mod ignore_rules;
mod language;
mod read;
mod tree;
mod tree_cache;
mod watcher;
mod write;

/// The governance sidecar folder in a project (`.orchestration/`), and the audit ledger in
/// it, which only governance writes: the file layer refuses saves to it.
pub const ORCHESTRATION_DIR: &str = ".orchestration";
pub const TRACE_FILE: &str = "agent_trace.jsonl";

/// A content's SHA-256, as lowercase hex: how the ledger and the version store name content.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

pub use diff::unified_diff;
pub use guard::DEFAULT_MAX_FILE_BYTES;
pub(crate) use guard::to_slash;
pub use guard::{PathError, ProjectPath, ProjectRoot};
pub(crate) use ignore_rules::IgnoreRules;
pub use language::language_for;
pub(crate) use read::{DiskStamp, Opened, check_bufferable, disk_stamp, read_bytes, sha256_streaming};
pub use read::{FileContent, FileError, read_file, sniff_binary};
pub use tree::{EXCLUDED_DIRS, TreeNode, TreeNodeKind, project_tree};
pub(crate) use tree::{is_excluded_name, walker};
pub use tree_cache::{
    DirPage, ListError, MAX_CACHED_DIRS, MAX_CACHED_ENTRIES, MAX_DIR_ENTRIES, PAGE_ENTRIES, TreeCache,
};
pub use watcher::{FsChange, FsChangeAction, Syncer, WatchEvent, WatchOptions, Watcher};
pub use write::{TEMP_PREFIX, sweep_temp_files, write_file};
pub(crate) use write::{append_bytes, create_temp, refuse_reserved, remove_file, set_mode, write_bytes};
pub(crate) use write::{data_temp_prefix, process_alive, sweep_data_temp_files};

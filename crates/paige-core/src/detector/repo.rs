//! What git already keeps of the project, as the change detector sees it: the index's
//! entries (path, blob id, the file's metadata when it was staged) and blobs by id. A tracked
//! file whose metadata still matches its entry holds that blob, so its baseline is the blob id
//! and nothing is copied. `paige-git` implements [`GitObjects`] (the core does not link git).

use std::collections::HashMap;

use super::manifest::Meta;

/// A git object id (SHA-1).
pub type GitOid = [u8; 20];

/// A `(seconds, nanoseconds)` time as the index keeps it.
pub type IndexTime = (u32, u32);

/// One tracked file as the index has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    pub oid: GitOid,
    /// The file's size when staged, truncated to 32 bits as git does.
    pub size: u32,
    pub mtime: IndexTime,
    pub ctime: IndexTime,
    /// The inode, truncated to 32 bits as git does.
    pub ino: u32,
    pub executable: bool,
}

/// The index: tracked files by their path relative to the project root, and when the index
/// was written (an entry not older than that is "racy": its content must be compared).
#[derive(Debug, Default)]
pub struct GitIndex {
    pub entries: HashMap<String, IndexEntry>,
    pub written: IndexTime,
}

/// The project's git repository, read in-process.
pub trait GitObjects: Send + Sync {
    /// The index now, or `None` (no repository, an unreadable or unsupported index).
    fn index(&self) -> Option<GitIndex>;
    /// A blob's content.
    fn blob(&self, oid: &GitOid) -> Result<Vec<u8>, String>;
    /// The blob id `bytes` would have; `None` when it cannot be computed (the SHA-1 of a
    /// known collision attack is refused): such content is never taken for git's.
    fn blob_id(&self, bytes: &[u8]) -> Option<GitOid>;
}

/// What a file's metadata says about its index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clean {
    /// The file holds the entry's blob.
    Yes,
    /// Staged in the same second (or later) than the index was written: only its content
    /// can tell.
    Racy,
    No,
}

impl IndexEntry {
    /// Whether a file with `meta` still holds this entry's blob, by git's own stat rules
    /// (nanoseconds compared only where the index kept them).
    pub(crate) fn clean(&self, meta: &Meta, written: IndexTime) -> Clean {
        let split = |ns: i128| ((ns.div_euclid(1_000_000_000)) as u32, ns.rem_euclid(1_000_000_000) as u32);
        let same = |kept: IndexTime, now: IndexTime| kept.0 == now.0 && (kept.1 == 0 || kept.1 == now.1);
        let matches = self.size == meta.size as u32
            && self.ino == meta.ino as u32
            && self.executable == (meta.mode & 0o111 != 0)
            && same(self.mtime, split(meta.mtime_ns))
            && same(self.ctime, split(meta.ctime_ns));
        if !matches {
            Clean::No
        } else if self.mtime >= written {
            Clean::Racy
        } else {
            Clean::Yes
        }
    }
}

/// Hex of an object id, for messages.
pub(crate) fn hex(oid: &GitOid) -> String {
    oid.iter().map(|b| format!("{b:02x}")).collect()
}

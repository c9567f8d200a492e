//! The project's ignore rules — `.gitignore` and `.ignore` in each folder, and
//! `.git/info/exclude` — read by Paige itself for the tree walk and the watcher. The `ignore`
//! crate opens these files with a blocking open, so a FIFO named `.gitignore` would hang the
//! walk (and with it start-up); here only regular files are read, never blocking, capped.

use crate::sync::Locked;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The largest ignore file read; a larger one is skipped with a warning.
const MAX_RULES_BYTES: u64 = 1 << 20;

/// The rules of one project, loaded folder by folder as a walk reaches them.
pub(crate) struct IgnoreRules {
    root: PathBuf,
    per_dir: Mutex<HashMap<PathBuf, Option<Arc<Gitignore>>>>,
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> Arc<IgnoreRules> {
        Arc::new(IgnoreRules { root: root.to_owned(), per_dir: Mutex::default() })
    }

    /// Whether `path` (under the root) is ignored by the rules of its folders: the nearest
    /// folder whose rules match it decides (`!pattern` re-includes), `.ignore` over
    /// `.gitignore`, `.git/info/exclude` last.
    pub(crate) fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let mut dir = path.parent();
        while let Some(current) = dir.filter(|d| d.starts_with(&self.root)) {
            if let Some(rules) = self.rules_of(current) {
                match rules.matched(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
            dir = current.parent();
        }
        false
    }

    /// [`IgnoreRules::is_ignored`] for `path` or any folder above it, up to the root.
    pub(crate) fn is_ignored_with_parents(&self, path: &Path, is_dir: bool) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else { return false };
        let mut current = self.root.clone();
        let parts: Vec<_> = rel.components().collect();
        for (i, part) in parts.iter().enumerate() {
            current.push(part);
            let last = i + 1 == parts.len();
            if self.is_ignored(&current, if last { is_dir } else { true }) {
                return true;
            }
        }
        false
    }

    /// The rules of `dir` changed (its `.gitignore` or `.ignore`, or `.git/info/exclude` for
    /// the root): they are read again when next needed.
    pub(crate) fn forget(&self, dir: &Path) {
        self.per_dir.locked().remove(dir);
    }

    fn rules_of(&self, dir: &Path) -> Option<Arc<Gitignore>> {
        if let Some(cached) = self.per_dir.locked().get(dir) {
            return cached.clone();
        }
        // Read outside the lock; a second reader of the same folder only repeats the work.
        let mut builder = GitignoreBuilder::new(dir);
        let mut any = false;
        let exclude = (dir == self.root).then(|| dir.join(".git/info/exclude"));
        for file in exclude.into_iter().chain([dir.join(".gitignore"), dir.join(".ignore")]) {
            if let Some(text) = read_rules(&file) {
                for line in text.lines() {
                    if let Err(err) = builder.add_line(Some(file.clone()), line) {
                        tracing::debug!(file = %file.display(), "skipping an ignore rule: {err}");
                    }
                }
                any = true;
            }
        }
        let rules = any.then(|| builder.build().ok().map(Arc::new)).flatten();
        self.per_dir.locked().insert(dir.to_owned(), rules.clone());
        rules
    }
}

/// An ignore file's text: only a regular file (opened without blocking or following a
/// symlink), at most [`MAX_RULES_BYTES`].
fn read_rules(path: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        tracing::warn!(file = %path.display(), "ignore file is not a regular file; not read");
        return None;
    }
    if meta.len() > MAX_RULES_BYTES {
        tracing::warn!(file = %path.display(), "ignore file is over {MAX_RULES_BYTES} bytes; not read");
        return None;
    }
    let mut text = String::new();
    file.take(MAX_RULES_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

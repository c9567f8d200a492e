//! Paige's view of a project's git repository, for the change detector
//! ([`paige_core::detector::GitObjects`]): the index's entries and blobs by id, read in-process
//! with gix (loose and packed objects), never by running `git` per file. A project that is a
//! folder inside a repository sees the entries beneath it, by their path relative to it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use paige_core::detector::{GitIndex, GitObjects, GitOid, IndexEntry};

/// The repository that holds a project.
pub struct Repo {
    /// The repository's git folder. Without gix's `parallel` feature (threads, more to build)
    /// a handle cannot cross threads, so each read opens it (about a millisecond; reads are
    /// rare: the prime, and a change undone).
    git_dir: PathBuf,
    /// The project's path inside the work tree, `/`-separated, with a trailing `/` (empty at
    /// the top).
    prefix: String,
}

impl Repo {
    /// The repository holding `project` (a canonical path), if there is one with a work tree.
    pub fn discover(project: &Path) -> Option<Repo> {
        let repo = match gix::discover(project) {
            Ok(repo) => repo,
            Err(err) => {
                tracing::debug!(project = %project.display(), "no git repository: {err}");
                return None;
            }
        };
        let workdir: PathBuf = repo.workdir()?.canonicalize().ok()?;
        let inside = project.strip_prefix(&workdir).ok()?;
        let mut prefix = inside.to_str()?.replace('\\', "/");
        if !prefix.is_empty() {
            prefix.push('/');
        }
        Some(Repo { git_dir: repo.git_dir().to_owned(), prefix })
    }

    /// As a shared [`GitObjects`] for the core, if `project` is in a repository.
    pub fn for_project(project: &Path) -> Option<std::sync::Arc<dyn GitObjects>> {
        Repo::discover(project).map(|repo| std::sync::Arc::new(repo) as std::sync::Arc<dyn GitObjects>)
    }
}

impl Repo {
    fn open(&self) -> Result<gix::Repository, String> {
        gix::open(&self.git_dir).map_err(|e| format!("cannot open the git repository: {e}"))
    }

    /// Runs `read` with this thread's handle on the repository, opened on first use (a
    /// thousand files put back after a `git checkout` open it once per thread, not 1,000 times).
    fn with_repo<T>(&self, read: impl FnOnce(&gix::Repository) -> Result<T, String>) -> Result<T, String> {
        thread_local! {
            static OPEN: std::cell::RefCell<Option<(PathBuf, gix::Repository)>> = const { std::cell::RefCell::new(None) };
        }
        OPEN.with(|slot| {
            let mut slot = slot.borrow_mut();
            if slot.as_ref().is_none_or(|(dir, _)| *dir != self.git_dir) {
                *slot = Some((self.git_dir.clone(), self.open()?));
            }
            let (_, repo) = slot.as_ref().expect("opened above");
            read(repo)
        })
    }
}

fn oid_bytes(id: &gix::hash::oid) -> Option<GitOid> {
    id.as_bytes().try_into().ok()
}

impl GitObjects for Repo {
    fn index(&self) -> Option<GitIndex> {
        let repo = self.open().inspect_err(|err| tracing::debug!("{err}")).ok()?;
        let index = match repo.open_index() {
            Ok(index) => index,
            Err(err) => {
                tracing::debug!("cannot read the git index: {err}");
                return None;
            }
        };
        let written = index.timestamp();
        let written = (written.unix_seconds().clamp(0, u32::MAX.into()) as u32, written.nanoseconds());
        let mut entries = HashMap::with_capacity(index.entries().len());
        for entry in index.entries() {
            // Files only (no submodules, symlinks or sparse folders), stage 0 (not mid-merge).
            let file = matches!(entry.mode, gix::index::entry::Mode::FILE | gix::index::entry::Mode::FILE_EXECUTABLE);
            if !file || entry.stage_raw() != 0 {
                continue;
            }
            let Ok(path) = std::str::from_utf8(entry.path(&index)) else { continue };
            let Some(rel) = path.strip_prefix(self.prefix.as_str()) else { continue };
            let Some(oid) = oid_bytes(&entry.id) else { continue };
            let stat = entry.stat;
            entries.insert(
                rel.to_owned(),
                IndexEntry {
                    oid,
                    size: stat.size,
                    mtime: (stat.mtime.secs, stat.mtime.nsecs),
                    ctime: (stat.ctime.secs, stat.ctime.nsecs),
                    ino: stat.ino,
                    executable: entry.mode == gix::index::entry::Mode::FILE_EXECUTABLE,
                },
            );
        }
        Some(GitIndex { entries, written })
    }

    fn blob(&self, oid: &GitOid) -> Result<Vec<u8>, String> {
        let id = gix::ObjectId::try_from(&oid[..]).map_err(|e| e.to_string())?;
        self.with_repo(|repo| {
            let blob = repo.find_blob(id).map_err(|e| e.to_string())?;
            Ok(blob.data.clone())
        })
    }

    fn blob_id(&self, bytes: &[u8]) -> Option<GitOid> {
        // gix hashes with collision detection: a file crafted as a SHA-1 collision is an
        // error here, from content outside Paige's control, so it must not panic.
        let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes).ok()?;
        oid_bytes(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir)
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn a_committed_file_is_in_the_index_with_its_blob_readable_and_its_id_computed_alike() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("app/src")).unwrap();
        std::fs::write(root.join("app/src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(root.join("top.txt"), "outside the project\n").unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "one"]);
        git(&root, &["gc", "-q"]);

        let repo = Repo::discover(&root.join("app")).expect("a repository above the project");
        let index = repo.index().expect("index");
        assert_eq!(index.entries.keys().collect::<Vec<_>>(), vec!["src/main.rs"], "only the project's files");
        let entry = index.entries["src/main.rs"];
        assert_eq!(entry.size, 13);
        // Packed by gc: read from the pack.
        assert_eq!(repo.blob(&entry.oid).unwrap(), b"fn main() {}\n");
        assert_eq!(repo.blob_id(b"fn main() {}\n"), Some(entry.oid));
        assert!(repo.blob(&[7; 20]).is_err(), "an unknown id is an error, not a panic");
    }

    #[test]
    fn a_folder_without_a_repository_has_none() {
        let dir = tempfile::tempdir().unwrap();
        // A temp dir may sit inside a repository on a developer's machine; this one must not.
        if gix::discover(dir.path()).is_ok() {
            return;
        }
        assert!(Repo::discover(&dir.path().canonicalize().unwrap()).is_none());
    }
}

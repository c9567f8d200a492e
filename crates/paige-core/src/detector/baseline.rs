//! The baseline: what each learner file held before a window opened, kept current by full
//! walks, the closing re-walk and the watcher's journal; and the comparison against it.

use crate::sync::Locked;
use std::collections::HashSet;

use super::manifest::{self, Manifest, Meta};
use super::repo::Clean;
use super::{ChangeKind, Content, DetectorError, Known, State, rewalk};
use crate::db::VersionKind;

impl super::Detector {
    /// The learner files now: a re-walk of what the last walk kept, or a full walk when there
    /// is none or the ignore rules changed.
    pub(super) fn walk(&self, state: &mut State) -> Manifest {
        let root = self.ctx.root().path();
        let rewalked = state.tree.as_mut().and_then(|tree| tree.rewalk(root));
        let rules_changed = |now: &Manifest| {
            let ignore_files = now.keys().chain(state.baseline.keys()).filter(|p| rewalk::is_ignore_file(p));
            ignore_files.into_iter().any(|p| now.get(p) != state.baseline.get(p).map(|k| &k.meta))
        };
        match rewalked {
            Some(now) if !rules_changed(&now) => now,
            _ => {
                let now = manifest::scan(root);
                state.tree = Some(rewalk::Tree::from_manifest(root, &now));
                now
            }
        }
    }

    /// The baseline from a full walk: every file whose metadata moved is taken in anew (a
    /// clean tracked file by its blob id, any other kept in the store).
    pub(super) fn refresh_all(&self, state: &mut State) -> Result<(), DetectorError> {
        let now = manifest::scan(self.ctx.root().path());
        state.tree = Some(rewalk::Tree::from_manifest(self.ctx.root().path(), &now));
        state.baseline.retain(|path, _| now.contains_key(path));
        let index = self.git_index();
        for (path, meta) in &now {
            if self.ctx.shutdown_token().is_cancelled() {
                // Shutting down: the rest is taken in next time.
                return Ok(());
            }
            if state.baseline.get(path).is_none_or(|k| k.meta != *meta) {
                let known = self.remember_with(path, *meta, index.as_ref())?;
                state.baseline.insert(path.clone(), known);
            }
        }
        state.primed = true;
        Ok(())
    }

    /// The baseline updated for the paths the watcher saw change since the last window: what
    /// they are now (a file, a folder to walk, or gone). A change to ignore rules walks all.
    pub(super) fn refresh(&self, state: &mut State, paths: HashSet<String>) -> Result<(), DetectorError> {
        if paths.iter().any(|p| is_rules_file(p)) {
            return self.refresh_all(state);
        }
        let now = self.look(&paths);
        let moved = self.moved(state, &now, &paths);
        // Many files at once (a `git checkout` between calls): those git now holds need no copy.
        let index = if moved.len() > 32 { self.git_index() } else { None };
        for path in moved {
            match now.get(&path) {
                Some(meta) => {
                    let known = self.remember_with(&path, *meta, index.as_ref())?;
                    state.baseline.insert(path, known);
                }
                None => {
                    state.baseline.remove(&path);
                }
            }
        }
        Ok(())
    }

    /// What `paths` (files or folders, as the watcher reported them) hold now: the learner
    /// files at or beneath them.
    pub(super) fn look(&self, paths: &HashSet<String>) -> Manifest {
        let root = self.ctx.root().path();
        let mut now = Manifest::new();
        for path in paths {
            match std::fs::symlink_metadata(root.join(path)) {
                Ok(m) if m.is_file() => {
                    now.insert(path.clone(), Meta::of(&m));
                }
                Ok(m) if m.is_dir() => now.extend(manifest::scan_from(root, &root.join(path))),
                _ => {}
            }
        }
        now
    }

    /// The paths at or beneath `paths` whose metadata differs between the baseline and `now`
    /// (made, changed, gone). Files are looked up one by one; only when a folder changed (made,
    /// moved or removed) is the baseline passed over once for what it held beneath it.
    pub(super) fn moved(&self, state: &State, now: &Manifest, paths: &HashSet<String>) -> Vec<String> {
        let mut moved: Vec<String> = now
            .iter()
            .filter(|(path, meta)| state.baseline.get(*path).is_none_or(|k| k.meta != **meta))
            .map(|(path, _)| path.clone())
            .collect();
        moved.extend(paths.iter().filter(|p| state.baseline.contains_key(*p) && !now.contains_key(*p)).cloned());
        let folders: HashSet<&str> = paths
            .iter()
            .filter(|p| !state.baseline.contains_key(*p) && !now.contains_key(*p))
            .map(String::as_str)
            .collect();
        if !folders.is_empty() {
            let beneath_one =
                |p: &str| p.char_indices().filter(|(_, c)| *c == '/').any(|(i, _)| folders.contains(&p[..i]));
            moved.extend(state.baseline.keys().filter(|p| !now.contains_key(*p) && beneath_one(p)).cloned());
        }
        moved.sort_unstable();
        moved.dedup();
        moved
    }

    /// The baseline takes `path` as it is now (`after`), its content kept; a version that
    /// cannot be kept is logged and the file known by its metadata only.
    /// Paige wrote `path` (project-relative) itself: its content now is the baseline
    /// (`governance::record::paige_wrote`).
    pub(crate) fn paige_wrote(&self, path: &str) {
        let meta = std::fs::symlink_metadata(self.ctx.root().path().join(path))
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|m| Meta::of(&m));
        let mut state = self.state.locked();
        self.rebaseline(&mut state, path, meta);
    }

    pub(super) fn rebaseline(&self, state: &mut State, path: &str, after: Option<Meta>) {
        let Some(meta) = after else {
            state.baseline.remove(path);
            return;
        };
        let known = self.remember(path, meta).unwrap_or_else(|err| {
            tracing::warn!(path, "could not keep a version: {err}");
            Known { meta, content: Content::Unknown }
        });
        state.baseline.insert(path.to_owned(), known);
    }

    /// The change, if the file's content, existence or permissions differ from the baseline
    /// and the learner did not save this content through Paige; with the new content's hash.
    pub(super) fn compare(
        &self,
        path: &str,
        before: Option<&Known>,
        after: Option<Meta>,
    ) -> Result<Option<(ChangeKind, Option<String>)>, DetectorError> {
        let current = |meta: Meta| -> Result<Option<Vec<u8>>, DetectorError> {
            let file = self.ctx.root().resolve(path)?;
            if meta.size > self.max_file_bytes {
                return Ok(None);
            }
            Ok(crate::files::read_bytes(&file).ok())
        };
        Ok(match (before, after) {
            (None, None) => None,
            (Some(_), None) => Some((ChangeKind::Deleted, None)),
            (Some(known), Some(meta)) if known.meta == meta => None,
            (before, Some(meta)) => {
                let bytes = current(meta)?;
                // A file past the size cap is not kept, but the ledger still names its content.
                let sha = match bytes.as_deref() {
                    Some(bytes) => Some(crate::files::sha256_hex(bytes)),
                    None if meta.size > self.max_file_bytes => {
                        crate::files::sha256_streaming(&self.ctx.root().resolve(path)?).ok()
                    }
                    None => None,
                };
                if sha.as_deref().is_some_and(|s| self.saved(path, s)) {
                    return Ok(None);
                }
                match before {
                    None => Some((ChangeKind::Created, sha)),
                    Some(known) if bytes.as_deref().is_some_and(|b| self.same_content(&known.content, b)) => {
                        (known.meta.mode != meta.mode).then_some((ChangeKind::ModeChanged, sha))
                    }
                    Some(_) => Some((ChangeKind::Modified, sha)),
                }
            }
        })
    }

    /// Hashes and keeps the file's current content.
    pub(super) fn remember(&self, path: &str, meta: Meta) -> Result<Known, DetectorError> {
        self.remember_with(path, meta, None)
    }

    /// The file's current content as the baseline keeps it: by its blob id when `index` says
    /// git holds it (by metadata; a racy entry by its content), else copied into the store.
    pub(super) fn remember_with(
        &self,
        path: &str,
        meta: Meta,
        index: Option<&super::GitIndex>,
    ) -> Result<Known, DetectorError> {
        if meta.size > self.max_file_bytes {
            return Ok(Known { meta, content: Content::Unknown });
        }
        let entry = index.and_then(|i| Some((i.entries.get(path)?, i.written)));
        if let Some((entry, written)) = entry
            && entry.clean(&meta, written) == Clean::Yes
        {
            return Ok(Known { meta, content: Content::Git(entry.oid) });
        }
        let file = self.ctx.root().resolve(path)?;
        let Ok(bytes) = crate::files::read_bytes(&file) else {
            // Gone or swapped since the walk: the next window sees it as it is then.
            return Ok(Known { meta, content: Content::Unknown });
        };
        if let (Some((entry, written)), Some(repo)) = (entry, self.repo.get())
            && entry.clean(&meta, written) == Clean::Racy
            && repo.blob_id(&bytes) == Some(entry.oid)
        {
            return Ok(Known { meta, content: Content::Git(entry.oid) });
        }
        let sha = self.store.keep(self.ctx.db(), self.ctx.root().path(), path, &bytes, meta.mode, VersionKind::Seen)?;
        Ok(Known { meta, content: Content::Stored(sha) })
    }

    /// The git index now, when the project has a repository.
    pub(super) fn git_index(&self) -> Option<super::GitIndex> {
        self.repo.get().and_then(|repo| repo.index())
    }

    /// Whether `bytes` is the content the baseline knows.
    pub(super) fn same_content(&self, content: &Content, bytes: &[u8]) -> bool {
        match content {
            Content::Stored(sha) => crate::files::sha256_hex(bytes) == *sha,
            Content::Git(oid) => self.repo.get().is_some_and(|repo| repo.blob_id(bytes) == Some(*oid)),
            Content::Unknown => false,
        }
    }

    /// The baseline's content of a file, to put back.
    pub(super) fn content_bytes(&self, path: &str, content: &Content) -> Result<Vec<u8>, DetectorError> {
        let unkept = |why: String| DetectorError::Store {
            path: self.ctx.root().path().join(path),
            source: std::io::Error::other(why),
        };
        match content {
            Content::Stored(sha) => self.store.get(sha),
            Content::Git(oid) => match self.repo.get() {
                Some(repo) => repo.blob(oid).map_err(|e| unkept(format!("git object {}: {e}", super::repo::hex(oid)))),
                None => Err(unkept("no git repository".into())),
            },
            Content::Unknown => Err(unkept("no earlier version was kept (too large or unreadable)".into())),
        }
    }

    /// The kept version of what the baseline knew of `path`: a blob git holds is copied into
    /// the store now (so `paige restore` finds it).
    pub(super) fn earlier_version(&self, path: &str, before: Option<&Known>) -> Option<i64> {
        let known = before?;
        let sha = match &known.content {
            Content::Stored(sha) => sha.clone(),
            Content::Git(_) => {
                let bytes = self.content_bytes(path, &known.content).ok()?;
                let (db, root) = (self.ctx.db(), self.ctx.root().path());
                self.store.keep(db, root, path, &bytes, known.meta.mode, VersionKind::Seen).ok()?
            }
            Content::Unknown => return None,
        };
        self.version_id(path, Some(&sha), VersionKind::Seen)
    }

    /// The id of the kept version of `path` with this content, newest first.
    pub(super) fn version_id(&self, path: &str, sha: Option<&str>, kind: VersionKind) -> Option<i64> {
        let sha = sha?;
        let versions = self.ctx.db().file_versions(self.ctx.root().path(), Some(path)).ok()?;
        versions.into_iter().find(|v| v.sha256 == sha && v.kind == kind).map(|v| v.id)
    }
}

/// A file whose change changes which files are the learner's.
pub(super) fn is_rules_file(path: &str) -> bool {
    path == ".git/info/exclude" || rewalk::is_ignore_file(path)
}

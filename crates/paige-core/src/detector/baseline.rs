//! The baseline: what each learner file held before a window opened, kept current by full
//! walks, the closing re-walk and the watcher's journal; and the comparison against it.

use crate::sync::Locked;
use std::collections::HashSet;

use super::manifest::{self, Manifest, Meta};
use super::{ChangeKind, DetectorError, Known, State, rewalk};
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

    /// The baseline from a full walk: every file whose metadata moved is kept anew.
    pub(super) fn refresh_all(&self, state: &mut State) -> Result<(), DetectorError> {
        let now = manifest::scan(self.ctx.root().path());
        state.tree = Some(rewalk::Tree::from_manifest(self.ctx.root().path(), &now));
        state.baseline.retain(|path, _| now.contains_key(path));
        for (path, meta) in &now {
            if self.ctx.shutdown_token().is_cancelled() {
                // Shutting down: the rest is taken in next time.
                return Ok(());
            }
            if state.baseline.get(path).is_none_or(|k| k.meta != *meta) {
                let known = self.remember(path, *meta, VersionKind::Seen)?;
                state.baseline.insert(path.clone(), known);
            }
        }
        state.primed = true;
        Ok(())
    }

    /// The baseline updated for the paths the watcher saw change since the last window: what
    /// they are now (a file, a folder to walk, or gone). A change to ignore rules walks all.
    pub(super) fn refresh(&self, state: &mut State, paths: HashSet<String>) -> Result<(), DetectorError> {
        let root = self.ctx.root().path().to_owned();
        let rules = |p: &str| {
            p == ".git/info/exclude" || p.rsplit('/').next().is_some_and(|n| n == ".gitignore" || n == ".ignore")
        };
        if paths.iter().any(|p| rules(p)) {
            return self.refresh_all(state);
        }
        for path in paths {
            let under = format!("{path}/");
            let found = match std::fs::symlink_metadata(root.join(&path)) {
                Ok(m) if m.is_file() => Manifest::from([(path.clone(), Meta::of(&m))]),
                Ok(m) if m.is_dir() => manifest::scan_from(&root, &root.join(&path)),
                _ => Manifest::new(),
            };
            state.baseline.retain(|p, _| !(p == &path || p.starts_with(&under)) || found.contains_key(p));
            for (p, meta) in found {
                if state.baseline.get(&p).is_none_or(|k| k.meta != meta) {
                    let known = self.remember(&p, meta, VersionKind::Seen)?;
                    state.baseline.insert(p, known);
                }
            }
        }
        Ok(())
    }

    /// The baseline takes `path` as it is now (`after`), its content kept; a version that
    /// cannot be kept is logged and the file known by its metadata only.
    pub(super) fn rebaseline(&self, state: &mut State, path: &str, after: Option<Meta>) {
        let Some(meta) = after else {
            state.baseline.remove(path);
            return;
        };
        let known = self.remember(path, meta, VersionKind::Seen).unwrap_or_else(|err| {
            tracing::warn!(path, "could not keep a version: {err}");
            Known { meta, sha256: None }
        });
        state.baseline.insert(path.to_owned(), known);
    }

    /// Takes in the project's files ahead of the first watched call (which would otherwise
    /// pay for storing every file once), on the core's task tracker; without a runtime, the
    /// first call does it.
    pub(crate) fn prime(self: &std::sync::Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let core = std::sync::Arc::downgrade(self);
        self.ctx.tasks().spawn_blocking_on(
            move || {
                let Some(core) = core.upgrade() else { return };
                let mut state = core.state.locked();
                if state.primed || state.window.is_some() {
                    return;
                }
                let started = std::time::Instant::now();
                match core.refresh_all(&mut state) {
                    Ok(()) => tracing::info!(
                        files = state.baseline.len(),
                        ms = started.elapsed().as_millis() as u64,
                        "change detector primed"
                    ),
                    Err(err) => tracing::warn!("cannot prime the change detector: {err}"),
                }
            },
            &runtime,
        );
    }

    /// The change, if the file's content, existence or permissions differ from the baseline
    /// and the learner did not save this content through Paige; with the new content's hash.
    pub(super) fn compare(
        &self,
        path: &str,
        before: Option<&Known>,
        after: Option<Meta>,
    ) -> Result<Option<(ChangeKind, Option<String>)>, DetectorError> {
        let current = |meta: Meta| -> Result<Option<String>, DetectorError> {
            let file = self.ctx.root().resolve(path)?;
            if meta.size > self.max_file_bytes {
                return Ok(None);
            }
            Ok(crate::files::read_bytes(&file).ok().map(|b| crate::files::sha256_hex(&b)))
        };
        Ok(match (before, after) {
            (None, None) => None,
            (Some(_), None) => Some((ChangeKind::Deleted, None)),
            (Some(known), Some(meta)) if known.meta == meta => None,
            (before, Some(meta)) => {
                let sha = current(meta)?;
                if sha.as_deref().is_some_and(|s| self.saved(path, s)) {
                    return Ok(None);
                }
                match before {
                    None => Some((ChangeKind::Created, sha)),
                    Some(known) if known.sha256.is_some() && known.sha256 == sha => {
                        (known.meta.mode != meta.mode).then_some((ChangeKind::ModeChanged, sha))
                    }
                    Some(_) => Some((ChangeKind::Modified, sha)),
                }
            }
        })
    }

    /// Hashes and keeps the file's current content.
    pub(super) fn remember(&self, path: &str, meta: Meta, kind: VersionKind) -> Result<Known, DetectorError> {
        if meta.size > self.max_file_bytes {
            return Ok(Known { meta, sha256: None });
        }
        let file = self.ctx.root().resolve(path)?;
        let Ok(bytes) = crate::files::read_bytes(&file) else {
            // Gone or swapped since the walk: the next window sees it as it is then.
            return Ok(Known { meta, sha256: None });
        };
        let sha = self.store.keep(self.ctx.db(), self.ctx.root().path(), path, &bytes, meta.mode, kind)?;
        Ok(Known { meta, sha256: Some(sha) })
    }

    /// The id of the kept version of `path` with this content, newest first.
    pub(super) fn version_id(&self, path: &str, sha: Option<&str>, kind: VersionKind) -> Option<i64> {
        let sha = sha?;
        let versions = self.ctx.db().file_versions(self.ctx.root().path(), Some(path)).ok()?;
        versions.into_iter().find(|v| v.sha256 == sha && v.kind == kind).map(|v| v.id)
    }
}

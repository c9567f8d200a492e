//! The change detector, the last layer of "the AI never changes the learner's files": around
//! every Bash call and every other server's MCP call (PreToolUse → PostToolUse or
//! PostToolUseFailure) it compares a manifest of the learner files, and settles what changed
//! — in coach mode by undoing it, in governed mode by undoing what lies outside the bound
//! intent's scope and ledgering what lies inside.
//!
//! - **Window.** The first watched call opens a window over the baseline; parallel calls
//!   join it; it closes when the last of them ends. A call that leaves a process running
//!   (`run_in_background`, `&`, `nohup`) keeps it open until the session's next Stop.
//! - **Baseline.** What each learner file held, hashed and kept (content-addressed) the first
//!   time a window opens over it and again whenever it changed outside a window — so a call
//!   costs one metadata walk, not a copy of the project.
//! - **Saves through Paige** during a window are the learner's: their content hash is noted
//!   and a file holding it is not undone.
//! - Nothing is lost: every version Paige replaces is kept first (`paige restore`).

mod manifest;
mod rewalk;
mod store;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;

use serde::Serialize;

pub use manifest::is_lockfile;
use manifest::{Manifest, Meta};
pub use store::Store;

use crate::Core;
use crate::db::VersionKind;

#[derive(Debug, thiserror::Error)]
pub enum DetectorError {
    #[error("cannot use the version store at {}: {source}", path.display())]
    Store { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    File(#[from] crate::files::FileError),
    #[error(transparent)]
    Path(#[from] crate::files::PathError),
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
    #[error("no kept version {0} (`paige restore` lists them)")]
    UnknownVersion(i64),
    #[error("version {id} belongs to another project ({})", project.display())]
    OtherProject { id: i64, project: PathBuf },
}

/// What a file went through during a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Created,
    Modified,
    Deleted,
    /// Same content, other permissions (`chmod`).
    ModeChanged,
}

/// What the policy decided for one change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Undo,
    /// Kept, with the reason (a lockfile; inside the intent's scope).
    Keep(&'static str),
}

/// What became of one change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "snake_case")]
pub enum Outcome {
    Undone,
    /// Kept, with the verdict's reason.
    Kept(&'static str),
    /// Paige could not check or undo it: the error.
    Failed(String),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Undone => write!(f, "undone"),
            Outcome::Kept(why) => write!(f, "kept: {why}"),
            Outcome::Failed(err) => write!(f, "could not undo: {err}"),
        }
    }
}

/// One settled change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settled {
    pub path: String,
    pub change: ChangeKind,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// SHA-256 of what the call left in the file (absent when it deleted it).
    pub sha256: Option<String>,
}

/// A file as the baseline knows it.
#[derive(Debug, Clone)]
struct Known {
    meta: Meta,
    /// `None` for a file too large to keep versions of.
    sha256: Option<String>,
}

#[derive(Default)]
struct State {
    baseline: HashMap<String, Known>,
    /// What the last walk kept, for a cheap re-walk at the window's close.
    tree: Option<rewalk::Tree>,
    /// A full walk made the baseline; from then on the watcher's journal keeps it current.
    primed: bool,
    /// Open window: the calls in it, and whether one left a process running.
    window: Option<(HashSet<String>, bool)>,
}

/// The paths the watcher saw change since the last window opened. Trusted only while the
/// watcher runs over the whole project; otherwise (or past [`MAX_JOURNAL`]) a window opens
/// with a full walk.
#[derive(Default)]
struct Journal {
    trusted: bool,
    overflow: bool,
    paths: HashSet<String>,
}

const MAX_JOURNAL: usize = 2000;

pub(crate) struct Detector {
    state: Mutex<State>,
    journal: Mutex<Journal>,
    /// Content hashes of the learner's saves through Paige while a window is open.
    saves: Mutex<HashMap<String, HashSet<String>>>,
    store: Store,
}

impl Detector {
    /// The version store, for the start-up sweep of temp files a crash left.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    pub(crate) fn new(store: Store) -> Detector {
        Detector { state: Mutex::default(), journal: Mutex::default(), saves: Mutex::default(), store }
    }

    /// A save through Paige's own path (the learner's): not undone if it lands in a window.
    pub(crate) fn note_save(&self, rel: &str, content: &[u8]) {
        let sha = crate::governance::ledger::sha256_hex(content);
        self.saves.lock().unwrap_or_else(|p| p.into_inner()).entry(rel.to_owned()).or_default().insert(sha);
    }

    /// The watcher started (over the whole project, or `degraded`): until the next full
    /// walk nothing it missed before is known.
    pub(crate) fn journal_start(&self, complete: bool) {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        *journal = Journal { trusted: complete, overflow: true, paths: HashSet::new() };
    }

    /// A change the watcher saw.
    pub(crate) fn journal_note(&self, change: &crate::files::FsChange) {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        for path in std::iter::once(&change.path).chain(change.new_path.as_ref()) {
            journal.paths.insert(path.clone());
        }
        if journal.paths.len() > MAX_JOURNAL {
            journal.overflow = true;
            journal.paths.clear();
        }
    }

    /// The changed paths since the last call, or `None` when a full walk is needed.
    fn journal_take(&self) -> Option<HashSet<String>> {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let paths = std::mem::take(&mut journal.paths);
        let usable = journal.trusted && !journal.overflow;
        journal.overflow = false;
        usable.then_some(paths)
    }

    fn saved(&self, rel: &str, sha: &str) -> bool {
        self.saves.lock().unwrap_or_else(|p| p.into_inner()).get(rel).is_some_and(|s| s.contains(sha))
    }
}

impl Core {
    /// Opens (or joins) the watch window for a tool call about to run. The baseline takes in
    /// whatever changed since the last window: those changes were the learner's.
    pub(crate) fn watch_begin(&self, call_id: &str, backgrounds: bool) -> Result<(), DetectorError> {
        let detector = self.detector();
        let mut state = detector.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((calls, background)) = &mut state.window {
            calls.insert(call_id.to_owned());
            *background |= backgrounds;
            return Ok(());
        }
        match detector.journal_take().filter(|_| state.primed) {
            Some(paths) => self.refresh(&mut state, paths)?,
            None => self.refresh_all(&mut state)?,
        }
        detector.saves.lock().unwrap_or_else(|p| p.into_inner()).clear();
        state.window = Some((HashSet::from([call_id.to_owned()]), backgrounds));
        detector.store.evict(self.db())?;
        Ok(())
    }

    /// A call ended: when it was the window's last (and nothing runs on in the background),
    /// the window closes and every change is settled by `verdict`. `None` closes the window
    /// whatever is in it (the session's Stop or end).
    pub(crate) fn watch_end(
        &self,
        call_id: Option<&str>,
        verdict: impl Fn(&str) -> Verdict,
    ) -> Result<Vec<Settled>, DetectorError> {
        let detector = self.detector();
        let mut state = detector.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some((calls, background)) = &mut state.window else { return Ok(Vec::new()) };
        if let Some(id) = call_id {
            calls.remove(id);
            if !calls.is_empty() || *background {
                return Ok(Vec::new());
            }
        }
        state.window = None;
        let now = self.walk(&mut state);
        let mut settled = Vec::new();
        // Only paths whose metadata moved are looked at further.
        let mut paths: Vec<String> = now
            .iter()
            .filter(|(path, meta)| state.baseline.get(*path).is_none_or(|k| k.meta != **meta))
            .map(|(path, _)| path.clone())
            .collect();
        paths.extend(state.baseline.keys().filter(|path| !now.contains_key(*path)).cloned());
        for path in paths {
            let before = state.baseline.get(&path).cloned();
            let after = now.get(&path).copied();
            // One path that cannot be checked must not leave the others unsettled.
            let change = match self.compare(&path, before.as_ref(), after) {
                Ok(change) => change,
                Err(err) => {
                    tracing::warn!(path, "could not check a change: {err}");
                    let outcome = Outcome::Failed(format!("cannot check it: {err}"));
                    settled.push(Settled { path, change: ChangeKind::Modified, outcome, sha256: None });
                    continue;
                }
            };
            let Some(change) = change else {
                if let Some(meta) = after.filter(|m| before.as_ref().is_none_or(|k| k.meta != *m)) {
                    // Same content (a touch), or the learner's own save: the new baseline.
                    match self.remember(&path, meta, VersionKind::Seen) {
                        Ok(known) => state.baseline.insert(path, known),
                        Err(err) => {
                            tracing::warn!(path, "could not keep a version: {err}");
                            state.baseline.insert(path, Known { meta, sha256: None })
                        }
                    };
                }
                continue;
            };
            let outcome = match verdict(&path) {
                Verdict::Keep(why) => {
                    if let Some(meta) = after {
                        let known = self.remember(&path, meta, VersionKind::Seen).unwrap_or_else(|err| {
                            tracing::warn!(path, "could not keep a version: {err}");
                            Known { meta, sha256: None }
                        });
                        state.baseline.insert(path.clone(), known);
                    } else {
                        state.baseline.remove(&path);
                    }
                    Outcome::Kept(why)
                }
                Verdict::Undo => match self.undo(&path, before.as_ref(), change.0) {
                    Ok(restored) => {
                        match restored {
                            Some(known) => state.baseline.insert(path.clone(), known),
                            None => state.baseline.remove(&path),
                        };
                        Outcome::Undone
                    }
                    Err(err) => {
                        tracing::warn!(path, "could not undo a change: {err}");
                        Outcome::Failed(err.to_string())
                    }
                },
            };
            settled.push(Settled { path, change: change.0, outcome, sha256: change.1 });
        }
        settled.sort_by(|a, b| a.path.cmp(&b.path));
        if settled.iter().any(|s| rewalk::is_ignore_file(&s.path)) {
            // The rules the re-walk remembers may be the call's: the next walk is a full one.
            state.tree = None;
        }
        detector.store.evict(self.db())?;
        Ok(settled)
    }

    /// The learner files now: a re-walk of what the last walk kept, or a full walk when there
    /// is none or the ignore rules changed.
    fn walk(&self, state: &mut State) -> Manifest {
        let root = self.project_root().path();
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
    fn refresh_all(&self, state: &mut State) -> Result<(), DetectorError> {
        let now = manifest::scan(self.project_root().path());
        state.tree = Some(rewalk::Tree::from_manifest(self.project_root().path(), &now));
        state.baseline.retain(|path, _| now.contains_key(path));
        for (path, meta) in &now {
            if self.shutdown_token().is_cancelled() {
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
    fn refresh(&self, state: &mut State, paths: HashSet<String>) -> Result<(), DetectorError> {
        let root = self.project_root().path().to_owned();
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

    /// Takes in the project's files ahead of the first watched call (which would otherwise
    /// pay for storing every file once), on the core's task tracker; without a runtime, the
    /// first call does it.
    pub(crate) fn prime_detector(self: &std::sync::Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let core = std::sync::Arc::downgrade(self);
        self.tasks().spawn_blocking_on(
            move || {
                let Some(core) = core.upgrade() else { return };
                let mut state = core.detector().state.lock().unwrap_or_else(|p| p.into_inner());
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

    /// Whether a window is open (for tests and the UI).
    pub fn watching(&self) -> bool {
        self.detector().state.lock().unwrap_or_else(|p| p.into_inner()).window.is_some()
    }

    /// The change, if the file's content, existence or permissions differ from the baseline
    /// and the learner did not save this content through Paige; with the new content's hash.
    fn compare(
        &self,
        path: &str,
        before: Option<&Known>,
        after: Option<Meta>,
    ) -> Result<Option<(ChangeKind, Option<String>)>, DetectorError> {
        let current = |meta: Meta| -> Result<Option<String>, DetectorError> {
            let file = self.project_root().resolve(path)?;
            if meta.size > self.config().limits.max_file_bytes {
                return Ok(None);
            }
            Ok(crate::files::read_bytes(&file).ok().map(|b| crate::governance::ledger::sha256_hex(&b)))
        };
        Ok(match (before, after) {
            (None, None) => None,
            (Some(_), None) => Some((ChangeKind::Deleted, None)),
            (Some(known), Some(meta)) if known.meta == meta => None,
            (before, Some(meta)) => {
                let sha = current(meta)?;
                if sha.as_deref().is_some_and(|s| self.detector().saved(path, s)) {
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
    fn remember(&self, path: &str, meta: Meta, kind: VersionKind) -> Result<Known, DetectorError> {
        if meta.size > self.config().limits.max_file_bytes {
            return Ok(Known { meta, sha256: None });
        }
        let file = self.project_root().resolve(path)?;
        let Ok(bytes) = crate::files::read_bytes(&file) else {
            // Gone or swapped since the walk: the next window sees it as it is then.
            return Ok(Known { meta, sha256: None });
        };
        let sha = self.detector().store.keep(self.db(), self.project_root().path(), path, &bytes, meta.mode, kind)?;
        Ok(Known { meta, sha256: Some(sha) })
    }

    /// Puts the file back as the baseline had it; what the call left is kept first.
    fn undo(&self, path: &str, before: Option<&Known>, change: ChangeKind) -> Result<Option<Known>, DetectorError> {
        let file = self.project_root().resolve(path)?;
        let store = &self.detector().store;
        // A "deleted" file may exist but be ignored now (the call changed .gitignore): kept too.
        if let Ok(bytes) = crate::files::read_bytes(&file) {
            let mode = std::fs::symlink_metadata(file.abs()).map(|m| Meta::of(&m).mode).unwrap_or(0o644);
            store.keep(self.db(), self.project_root().path(), path, &bytes, mode, VersionKind::Replaced)?;
        }
        let Some(known) = before else {
            crate::files::remove_file(&file)?;
            return Ok(None);
        };
        match change {
            ChangeKind::ModeChanged => crate::files::set_mode(&file, known.meta.mode)?,
            _ => {
                let sha = known.sha256.as_deref().ok_or_else(|| DetectorError::Store {
                    path: file.abs().to_owned(),
                    source: std::io::Error::other("no earlier version was kept (too large or unreadable)"),
                })?;
                let bytes = store.get(sha)?;
                crate::files::write_bytes(&file, &bytes, Some(known.meta.mode))?;
            }
        }
        let meta = std::fs::symlink_metadata(file.abs()).map(|m| Meta::of(&m)).unwrap_or(known.meta);
        Ok(Some(Known { meta, sha256: known.sha256.clone() }))
    }
}

impl Core {
    /// Brings a kept version back into its file (`paige restore <id>`); what the file holds
    /// now is kept first, so a restore loses nothing either. Returns the file's path.
    pub fn restore_version(&self, id: i64) -> Result<String, DetectorError> {
        restore_version(self.db(), &self.detector().store, self.project_root(), id)
    }
}

/// [`Core::restore_version`] without a running core: the CLI's way.
pub fn restore_version(
    db: &crate::db::Db,
    store: &Store,
    root: &crate::files::ProjectRoot,
    id: i64,
) -> Result<String, DetectorError> {
    let (project, version) = db.file_version(id)?.ok_or(DetectorError::UnknownVersion(id))?;
    if std::path::Path::new(&project) != root.path() {
        return Err(DetectorError::OtherProject { id, project: project.into() });
    }
    let file = root.resolve(&version.path)?;
    if let Ok(bytes) = crate::files::read_bytes(&file) {
        let mode = std::fs::symlink_metadata(file.abs()).map(|m| Meta::of(&m).mode).unwrap_or(0o644);
        store.keep(db, root.path(), &version.path, &bytes, mode, VersionKind::Replaced)?;
    }
    let bytes = store.get(&version.sha256)?;
    crate::files::write_bytes(&file, &bytes, Some(version.mode))?;
    store.evict(db)?;
    Ok(version.path)
}

/// What Claude Code and the learner are told about settled changes; `None` when nothing
/// was undone or kept.
pub fn describe(settled: &[Settled], why: &str) -> Option<String> {
    if settled.is_empty() {
        return None;
    }
    let lines: Vec<String> = settled
        .iter()
        .map(|s| {
            let change = match s.change {
                ChangeKind::Created => "created",
                ChangeKind::Modified => "changed",
                ChangeKind::Deleted => "deleted",
                ChangeKind::ModeChanged => "re-permissioned",
            };
            format!("- {} ({change}): {}", s.path, s.outcome)
        })
        .collect();
    Some(format!("{why}\n{}", lines.join("\n")))
}

/// The manifest type, for benchmarks.
#[doc(hidden)]
pub fn scan_for_bench(root: &std::path::Path) -> usize {
    let manifest: Manifest = manifest::scan(root);
    manifest.len()
}

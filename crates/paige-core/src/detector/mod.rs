//! The change detector, the last layer of "the AI never changes the learner's files": around
//! every Bash call and every other server's MCP call (PreToolUse → PostToolUse or
//! PostToolUseFailure) it looks at what changed in the learner files, and settles it
//! — in coach mode by undoing it, in governed mode by undoing what lies outside the bound
//! intent's scope and ledgering what lies inside.
//!
//! - **Window.** The first watched call opens a window over the baseline; parallel calls
//!   join it; it closes when the last of them ends. A call that leaves a process running
//!   (`run_in_background`, `&`, `nohup`) keeps it open until the session's next Stop.
//! - **Attribution.** A change is undone only while the window's calls are known to be
//!   running. A window that lost its end (Claude Code interrupted, killed or crashed: no
//!   PostToolUse came, and the session's Stop, SessionEnd, next prompt or a new session
//!   arrived) is closed *without undoing anything*: what changed is reported and kept.
//! - **Baseline.** What each learner file held: a clean file git tracks by its blob id
//!   (`repo.rs`), any other hashed and kept (content-addressed); taken in by the prime
//!   (`prime.rs`, in the background) and again whenever a file changed outside a window.
//! - **What changed.** The watcher's journal: the paths it saw change during the window, read
//!   once it has caught up (a marker it must pass). A journal that cannot be trusted (the
//!   kernel's queue overflowed, too many paths, a degraded watcher, changed ignore rules)
//!   means a full walk. So a call costs what it changed, not the project's size.
//! - **The learner's edits stay.** Saves through Paige during a window are noted (path and
//!   content hash) and kept; a file open or unsaved in Paige's editor is the learner's too
//!   (Paige cannot tell who wrote it): kept, its earlier version in the store, the learner told.
//! - **Claude Code's sandbox** creates empty placeholder files at the paths it guards
//!   ([`guarded`]): they are left alone, and nothing is written at a guarded path while a
//!   command may still run.
//! - Nothing is lost, nothing deleted: every version Paige replaces is kept first, a new
//!   file is moved into the store rather than deleted (`paige restore`).

mod baseline;
mod guarded;
mod manifest;
mod prime;
mod repo;
mod rewalk;
mod store;
mod undo;
mod window;

use crate::sync::Locked;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use manifest::Meta;
pub use manifest::is_lockfile;
pub use repo::{GitIndex, GitObjects, GitOid, IndexEntry, IndexTime};
pub use store::Store;
pub use undo::restore_version;
pub(crate) use window::End;

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
    #[error("Paige was busy and answered after the hook had stopped waiting (the call was denied)")]
    Unanswered,
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
    /// Put back as it was; a new file moved into the version store.
    Undone,
    /// Kept, with the verdict's reason (the call's change, allowed).
    Kept(&'static str),
    /// Left as it is because Paige cannot attribute it to the call, or must not write there:
    /// the reason. Its earlier version is in the store.
    Left(&'static str),
    /// Paige could not check or undo it: the error.
    Failed(String),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Undone => write!(f, "undone"),
            Outcome::Kept(why) | Outcome::Left(why) => write!(f, "kept: {why}"),
            Outcome::Failed(err) => write!(f, "could not undo: {err}"),
        }
    }
}

/// Why a change was left as it is.
pub const LOST_END: &str = "an interrupted command may still have been running, so Paige cannot tell who made it";
pub const LEARNERS_OPEN_FILE: &str = "the file is open in the learner's editor, so Paige cannot tell who made it";
pub const STILL_READING: &str =
    "the call ran while Paige was still reading the project, so it cannot tell what the file held before";
pub const GUARDED_WHILE_RUNNING: &str =
    "Claude Code's sandbox guards this path and a command may still run, so Paige does not write there";

/// One settled change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settled {
    pub path: String,
    pub change: ChangeKind,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// SHA-256 of what the call left in the file (absent when it deleted it).
    pub sha256: Option<String>,
    /// The kept version `paige restore` brings back: what the call left, for an undone
    /// change; what the file held before, for one kept or left as it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
}

/// A file as the baseline knows it.
#[derive(Debug, Clone)]
struct Known {
    meta: Meta,
    content: Content,
}

/// Where a baseline file's content can be had again.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Content {
    /// Kept in the version store, by SHA-256.
    Stored(String),
    /// A clean tracked file: git's object store has it (nothing copied).
    Git(GitOid),
    /// Too large to keep, or unreadable.
    Unknown,
}

/// Who runs a call in a window: a Claude Code session, or Paige itself (a step check, whose
/// end Paige always sees).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owner {
    Session(String),
    Paige,
}

/// The open window: the calls running in it, and who ran calls that left a process running.
struct Window {
    calls: HashMap<String, Owner>,
    background: Vec<Owner>,
    /// The baseline was complete when it opened; otherwise (the prime still ran) nothing it
    /// saw change can be put back: what the files held before is not known.
    primed: bool,
}

#[derive(Default)]
struct State {
    baseline: HashMap<String, Known>,
    /// What the last walk kept, for a cheap re-walk at the window's close.
    tree: Option<rewalk::Tree>,
    /// A full walk made the baseline; from then on the watcher's journal keeps it current.
    primed: bool,
    window: Option<Window>,
    /// The last calls whose end was taken for lost, to tell when one ends after all.
    lost: std::collections::VecDeque<String>,
    /// Paths that changed while the prime ran and a window was open: taken in when it closes.
    pending: HashSet<String>,
}

/// The paths the watcher saw change since the last window opened. Trusted only while the
/// watcher runs over the whole project; otherwise (or past [`MAX_JOURNAL`]) a window opens
/// with a full walk.
#[derive(Default)]
struct Journal {
    trusted: bool,
    overflow: bool,
    paths: HashSet<String>,
    /// The paths changed since the prime began its walk (`None`: no prime runs), and whether
    /// some were lost.
    prime: Option<HashSet<String>>,
    prime_overflow: bool,
}

/// Past this many changed paths between two looks, one full walk is cheaper (and a
/// `git checkout` of the whole tree lands here).
const MAX_JOURNAL: usize = 10_000;
/// How long a look at the journal waits for the watcher to catch up before walking instead.
const SYNC_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);
/// Saves noted while no window closes are forgotten past this many paths.
const MAX_SAVES: usize = 10_000;

pub(crate) struct Detector {
    ctx: std::sync::Arc<crate::ctx::Ctx>,
    /// A file larger than this is not kept (`PAIGE_MAX_FILE_BYTES`).
    max_file_bytes: u64,
    state: Mutex<State>,
    journal: Mutex<Journal>,
    /// Content hashes of the learner's saves through Paige (in order, per path) since the
    /// last window closed.
    saves: Mutex<HashMap<String, Vec<String>>>,
    /// A window is open: a save is then kept in the store too, so an undo can go back to it.
    open: AtomicBool,
    store: Store,
    /// The project's git repository, when it has one: clean tracked files need no copy.
    repo: std::sync::OnceLock<std::sync::Arc<dyn GitObjects>>,
    /// Proves the watcher has reported every change so far (set once it watches).
    syncer: Mutex<Option<crate::files::Syncer>>,
    /// A prime is scheduled or running: a window that opens meanwhile does not walk.
    priming: AtomicBool,
}

impl Detector {
    /// The version store, for the start-up sweep of temp files a crash left.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The detector over `ctx`'s project, keeping versions in `store`.
    pub(crate) fn new(
        ctx: std::sync::Arc<crate::ctx::Ctx>,
        store: Store,
        max_file_bytes: u64,
    ) -> std::sync::Arc<Detector> {
        std::sync::Arc::new(Detector {
            ctx,
            max_file_bytes,
            state: Mutex::default(),
            journal: Mutex::default(),
            saves: Mutex::default(),
            open: AtomicBool::new(false),
            store,
            repo: std::sync::OnceLock::new(),
            syncer: Mutex::default(),
            priming: AtomicBool::new(false),
        })
    }

    /// A save through Paige's own path (the learner's): not undone if it lands in a window.
    /// Returns its content hash.
    pub(crate) fn note_save(&self, rel: &str, content: &[u8]) -> String {
        let sha = crate::files::sha256_hex(content);
        let mut saves = self.saves.locked();
        if saves.len() >= MAX_SAVES && !saves.contains_key(rel) {
            saves.clear();
        }
        let shas = saves.entry(rel.to_owned()).or_default();
        shas.retain(|s| *s != sha);
        shas.push(sha.clone());
        sha
    }

    /// The project's git repository (set once, before the watcher starts).
    pub(crate) fn set_repo(&self, repo: std::sync::Arc<dyn GitObjects>) {
        let _ = self.repo.set(repo);
    }

    /// The watcher started (over the whole project, or `degraded`): until the next full
    /// walk nothing it missed before is known. `syncer` proves it caught up.
    pub(crate) fn journal_start(&self, complete: bool, syncer: Option<crate::files::Syncer>) {
        *self.syncer.locked() = syncer;
        let mut journal = self.journal.locked();
        *journal = Journal { trusted: complete, overflow: true, ..Journal::default() };
    }

    /// A learner path the watcher saw change (a folder: anything beneath it).
    pub(crate) fn journal_note(&self, path: &str) {
        let mut journal = self.journal.locked();
        journal.paths.insert(path.to_owned());
        if journal.paths.len() > MAX_JOURNAL {
            journal.overflow = true;
            journal.paths.clear();
        }
        let mut overflowed = false;
        if let Some(prime) = &mut journal.prime {
            prime.insert(path.to_owned());
            overflowed = prime.len() > MAX_JOURNAL;
        }
        if overflowed {
            journal.prime_overflow = true;
            journal.prime = Some(HashSet::new());
        }
    }

    /// The watcher lost changes: the next look walks the whole project.
    pub(crate) fn journal_overflow(&self) {
        let mut journal = self.journal.locked();
        journal.overflow = true;
        journal.paths.clear();
        journal.prime_overflow = true;
    }

    /// The changed paths since the last call, or `None` when a full walk is needed. Waits for
    /// the watcher to report every change completed before this call.
    fn journal_take(&self) -> Option<HashSet<String>> {
        let syncer = self.syncer.locked().clone();
        let synced = syncer.is_some_and(|s| s.sync(SYNC_TIMEOUT));
        let mut journal = self.journal.locked();
        if !synced {
            journal.overflow = true;
        }
        let paths = std::mem::take(&mut journal.paths);
        let usable = journal.trusted && !journal.overflow;
        journal.overflow = false;
        usable.then_some(paths)
    }

    fn saved(&self, rel: &str, sha: &str) -> bool {
        self.saves.locked().get(rel).is_some_and(|s| s.iter().any(|x| x == sha))
    }

    /// The content hash of the learner's last save of `rel` through Paige in this window.
    fn last_save(&self, rel: &str) -> Option<String> {
        self.saves.locked().get(rel).and_then(|s| s.last().cloned())
    }

    fn set_open(&self, open: bool) {
        self.open.store(open, Ordering::Relaxed);
        if !open {
            self.saves.locked().clear();
        }
    }
}

impl Detector {
    /// The learner saved `content` to `rel` through Paige: the change detector keeps it (a
    /// window open now must not undo it, and an undo of a later change goes back to it).
    pub(crate) fn note_learner_save(&self, rel: &str, content: &[u8]) {
        let detector = self;
        detector.note_save(rel, content);
        if !detector.open.load(Ordering::Relaxed) {
            return;
        }
        let root = self.ctx.root();
        let mode = root
            .resolve(rel)
            .ok()
            .and_then(|f| std::fs::symlink_metadata(f.abs()).ok())
            .map_or(0o644, |m| Meta::of(&m).mode);
        if let Err(err) =
            detector.store.keep(self.ctx.db(), root.path(), rel, content, mode, crate::db::VersionKind::Seen)
        {
            tracing::warn!(path = rel, "could not keep the learner's save: {err}");
        }
    }
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
            let restore = match (&s.outcome, s.change, s.version) {
                (Outcome::Undone, ChangeKind::Created, Some(id)) => {
                    format!(" (moved into Paige's version store, not deleted: `paige restore {id}` brings it back)")
                }
                (Outcome::Left(_), _, Some(id)) => format!(" (the earlier version: `paige restore {id}`)"),
                _ => String::new(),
            };
            format!("- {} ({change}): {}{restore}", s.path, s.outcome)
        })
        .collect();
    Some(format!("{why}\n{}", lines.join("\n")))
}

/// The manifest type, for benchmarks.
#[doc(hidden)]
pub fn scan_for_bench(root: &std::path::Path) -> usize {
    let manifest: manifest::Manifest = manifest::scan(root);
    manifest.len()
}

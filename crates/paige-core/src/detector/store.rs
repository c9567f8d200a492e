//! Kept versions of learner files: content-addressed bytes in `DATA_DIR/versions/` (0700,
//! files 0600), indexed in SQLite (`file_versions`), bounded by
//! `PAIGE_MAX_VERSION_STORE_BYTES` with the oldest out first — never a path's latest version
//! of its kind, and a hash's bytes are removed only when no version uses them.
//!
//! **Eviction is off the hook path.** The detector only asks for it ([`Store::request_evict`]
//! at a window's opening and closing: an atomic flag and a wake-up, never a wait). The
//! evictor — one loop on the core's task tracker, started by `Core::open` inside a Tokio
//! runtime, stopped by the shutdown token or when the store is dropped — runs it on the
//! blocking pool, in batches of at most [`Store::EVICT_BATCH`] versions, each one bounded write
//! transaction ([`Db::evict_file_versions`]); the shutdown token is checked between batches.
//! Without a running evictor (no runtime: the CLI's `paige restore`, tests that drive the
//! core synchronously; or after shutdown) a request evicts in place at the same safe points,
//! which the bounded batches keep cheap.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use tokio_util::sync::CancellationToken;

use crate::ctx::Ctx;
use crate::db::{Db, VersionKind};

use super::DetectorError;

pub struct Store {
    shared: Arc<Shared>,
    /// The evictor's token (a child of the core's shutdown token), once it was started:
    /// cancelled when the store is dropped.
    evictor: OnceLock<CancellationToken>,
}

/// What the store and its evictor share.
struct Shared {
    dir: PathBuf,
    max_bytes: u64,
    /// A version was added since the last eviction (true at first: a cap lowered since the
    /// last run is honoured at the first request).
    pending: AtomicBool,
    /// The evictor runs and listens on `wake`; otherwise a request evicts in place.
    running: AtomicBool,
    wake: tokio::sync::Notify,
}

impl Store {
    /// Versions one eviction batch drops at most: one write transaction of bounded length, so
    /// a hook waiting for the database waits for one batch at most.
    pub const EVICT_BATCH: usize = 256;

    /// The store of a `DATA_DIR`.
    pub fn new(dir: PathBuf, max_bytes: u64) -> Store {
        let shared = Shared {
            dir,
            max_bytes,
            pending: AtomicBool::new(true),
            running: AtomicBool::new(false),
            wake: tokio::sync::Notify::new(),
        };
        Store { shared: Arc::new(shared), evictor: OnceLock::new() }
    }

    /// Removes the temp files that puts cut short by a crash left; returns how many.
    pub(crate) fn sweep_temp_files(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.shared.dir) else { return 0 };
        let shards = entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir()));
        shards.map(|shard| crate::files::sweep_data_temp_files(&shard.path())).sum()
    }

    fn object(&self, sha: &str) -> PathBuf {
        self.shared.object(sha)
    }

    fn io(&self, path: &Path) -> impl Fn(std::io::Error) -> DetectorError {
        let path = path.to_owned();
        move |source| DetectorError::Store { path: path.clone(), source }
    }

    /// Keeps `bytes` as a version of `path`; returns its SHA-256.
    pub(crate) fn keep(
        &self,
        db: &Db,
        project: &Path,
        path: &str,
        bytes: &[u8],
        mode: u32,
        kind: VersionKind,
    ) -> Result<String, DetectorError> {
        let sha = crate::files::sha256_hex(bytes);
        self.put(&sha, bytes)?;
        let added = db.add_file_version(project, path, &sha, bytes.len() as u64, mode, kind)?;
        // The evictor may have removed these bytes between `put` and the insert (their last
        // version dropped, before the insert could commit): now that a row holds them, they
        // are written again. A stat when they are there.
        self.put(&sha, bytes)?;
        self.shared.pending.fetch_or(added, Ordering::AcqRel);
        Ok(sha)
    }

    fn put(&self, sha: &str, bytes: &[u8]) -> Result<(), DetectorError> {
        use std::os::unix::fs::DirBuilderExt;
        let object = self.object(sha);
        if object.exists() {
            return Ok(());
        }
        let parent = object.parent().unwrap_or(&self.shared.dir);
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent).map_err(self.io(parent))?;
        // 0600, persisted by rename: a reader never sees half an object. Named so a start-up
        // sweep removes one a crash left.
        let prefix = crate::files::data_temp_prefix();
        let mut tmp = tempfile::Builder::new().prefix(&prefix).tempfile_in(parent).map_err(self.io(parent))?;
        tmp.write_all(bytes).map_err(self.io(&object))?;
        tmp.persist(&object).map_err(|e| e.error).map_err(self.io(&object))?;
        Ok(())
    }

    pub(crate) fn get(&self, sha: &str) -> Result<Vec<u8>, DetectorError> {
        let object = self.object(sha);
        let bytes = std::fs::read(&object).map_err(self.io(&object))?;
        if crate::files::sha256_hex(&bytes) != sha {
            return Err(DetectorError::Store {
                path: object,
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, "content does not match its hash"),
            });
        }
        Ok(bytes)
    }

    /// Drops the oldest versions until the store fits its cap (or only latest ones remain),
    /// here and now, in batches; a no-op unless something was kept since the last eviction.
    /// The synchronous way: `paige restore`, the benchmarks.
    pub fn evict(&self, db: &Db) -> Result<(), DetectorError> {
        self.shared.evict(db, || false)
    }

    /// Asks for an eviction after something may have been kept, without waiting for it: the
    /// evictor is woken when it runs; without one (see the module docs) it happens here. A
    /// failure is logged: eviction never fails a hook.
    pub(crate) fn request_evict(&self, db: &Db) {
        if !self.shared.pending.load(Ordering::Acquire) {
            return;
        }
        if self.shared.running.load(Ordering::Acquire) {
            self.shared.wake.notify_one();
        } else if let Err(err) = self.shared.evict(db, || false) {
            tracing::warn!("cannot evict old versions from the version store: {err}");
        }
    }

    /// Starts the evictor on `ctx`'s task tracker, with a child of its shutdown token; a
    /// no-op outside a Tokio runtime, or when it was started already.
    pub(crate) fn start_evictor(&self, ctx: &Arc<Ctx>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let stop = ctx.shutdown_token().child_token();
        if self.evictor.set(stop.clone()).is_err() {
            return;
        }
        self.shared.running.store(true, Ordering::Release);
        // Made before the task: dropping a task that never ran (its runtime gone) still
        // marks the evictor gone.
        let running = Running(self.shared.clone());
        let task = evictor(running, Arc::downgrade(ctx), stop, runtime.clone());
        ctx.tasks().spawn_on(task, &runtime);
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(stop) = self.evictor.get() {
            stop.cancel();
        }
    }
}

impl Shared {
    fn object(&self, sha: &str) -> PathBuf {
        self.dir.join(&sha[..2.min(sha.len())]).join(sha)
    }

    /// Batches until the store fits, `stopped` says so between batches, or a batch fails;
    /// what is left stays pending for the next request.
    fn evict(&self, db: &Db, stopped: impl Fn() -> bool) -> Result<(), DetectorError> {
        if !self.pending.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let (mut dropped, mut batches) = (0, 0);
        let finished = loop {
            if stopped() {
                break Ok(false);
            }
            let batch = match db.evict_file_versions(self.max_bytes, Store::EVICT_BATCH, |sha| {
                let _ = std::fs::remove_file(self.object(sha));
            }) {
                Ok(batch) => batch,
                Err(err) => break Err(err),
            };
            dropped += batch.dropped;
            batches += 1;
            if batch.done {
                break Ok(true);
            }
        };
        if dropped > 0 {
            let ms = started.elapsed().as_millis() as u64;
            tracing::info!(dropped, batches, ms, "dropped the oldest versions to keep the version store under its cap");
        }
        if !matches!(finished, Ok(true)) {
            self.pending.store(true, Ordering::Release);
        }
        finished.map(|_| ()).map_err(DetectorError::from)
    }
}

/// Marks the evictor gone however its task ends — stopped, or dropped with its runtime — so
/// requests then evict in place.
struct Running(Arc<Shared>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::Release);
    }
}

/// The evictor: waits for a request, runs one eviction on the blocking pool (awaited, so
/// nothing outlives it), again; ends when `stop` is cancelled or the core is gone.
async fn evictor(running: Running, ctx: Weak<Ctx>, stop: CancellationToken, runtime: tokio::runtime::Handle) {
    let shared = running.0.clone();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = shared.wake.notified() => {}
        }
        let Some(ctx) = ctx.upgrade() else { return };
        let (work, halt, tasks) = (shared.clone(), stop.clone(), ctx.tasks().clone());
        let pass = tasks.spawn_blocking_on(move || work.evict(ctx.db(), || halt.is_cancelled()), &runtime);
        match pass.await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => tracing::warn!("cannot evict old versions from the version store: {err}"),
            Err(err) => tracing::warn!("the version store's eviction stopped: {err}"),
        }
    }
}

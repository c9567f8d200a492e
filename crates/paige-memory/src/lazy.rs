//! all-MiniLM-L6-v2 as the binaries hold it: loaded on first use (a start does not wait for
//! 90 MB to be read) and released after a quiet period (issue 32: the desktop app keeps no
//! 90 MB it has not used for minutes), loaded again on the next embed.
//!
//! The release timer is a thread owned by the model: it runs only while the weights are
//! loaded, sleeps until the last embed is `idle` old, drops the weights and ends; dropping
//! the model wakes and joins it. [`LazyModel::release_idle`] does the same check for a given
//! instant, for callers (and tests) that keep their own time.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use paige_core::memory::{Embedder, MemoryError};

use crate::MiniLm;
use crate::embed::{DIMENSION, MODEL_NAME};

/// How long the weights stay loaded without an embed (`Limits::embedder_idle`, `PAIGE_EMBEDDER_IDLE_MS`).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(5 * 60);

/// MiniLM from `dir`, loaded when needed and released when idle; a load that fails fails
/// every call with the same reason (the embedded store then ranks by keywords).
pub struct LazyModel {
    shared: Arc<Shared>,
    /// The release timer, while one runs (or its finished handle, joined at the next start).
    timer: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    dir: PathBuf,
    idle: Duration,
    state: Mutex<State>,
    /// Wakes the timer: the model is dropped.
    wake: Condvar,
}

struct State {
    weights: Weights,
    /// When the last embed started or ended.
    last_used: Instant,
    timer_running: bool,
    closed: bool,
}

enum Weights {
    Unloaded,
    Loaded(Arc<MiniLm>),
    Failed(String),
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The state is a few fields set in single steps: a panic elsewhere leaves it usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LazyModel {
    /// The model in `dir`, not loaded yet; its weights go after `idle` without an embed.
    pub fn new(dir: &Path, idle: Duration) -> LazyModel {
        let state =
            State { weights: Weights::Unloaded, last_used: Instant::now(), timer_running: false, closed: false };
        let shared = Shared { dir: dir.to_owned(), idle, state: Mutex::new(state), wake: Condvar::new() };
        LazyModel { shared: Arc::new(shared), timer: Mutex::new(None) }
    }

    /// Whether the weights are in memory now.
    pub fn loaded(&self) -> bool {
        matches!(lock(&self.shared.state).weights, Weights::Loaded(_))
    }

    /// Drops the weights if no embed ran in the `idle` before `now`; true when it did. An
    /// embed still running keeps them until it ends.
    pub fn release_idle(&self, now: Instant) -> bool {
        let mut state = lock(&self.shared.state);
        self.shared.release_if_idle(&mut state, now)
    }

    /// The loaded model, loading it (and starting the release timer) if needed.
    fn model(&self) -> Result<Arc<MiniLm>, MemoryError> {
        let mut state = lock(&self.shared.state);
        state.last_used = Instant::now();
        let model = match &state.weights {
            Weights::Loaded(model) => return Ok(model.clone()),
            Weights::Failed(err) => return Err(MemoryError::Embedding(err.clone())),
            Weights::Unloaded => {
                // Loaded under the lock: a second caller waits for this load, not a second one.
                let started = Instant::now();
                match MiniLm::load(&self.shared.dir) {
                    Ok(model) => {
                        tracing::info!(ms = started.elapsed().as_millis() as u64, "loaded {}", self.describe());
                        Arc::new(model)
                    }
                    Err(err) => {
                        tracing::warn!("cannot load the embedding model: {err}");
                        state.weights = Weights::Failed(err.clone());
                        return Err(MemoryError::Embedding(err));
                    }
                }
            }
        };
        state.weights = Weights::Loaded(model.clone());
        state.last_used = Instant::now();
        if !state.timer_running && !state.closed {
            state.timer_running = true;
            drop(state);
            self.start_timer();
        }
        Ok(model)
    }

    fn start_timer(&self) {
        let mut slot = lock(&self.timer);
        if let Some(done) = slot.take() {
            // It marked itself stopped before ending: this returns at once.
            let _ = done.join();
        }
        let shared = self.shared.clone();
        let spawned = std::thread::Builder::new().name("paige-embedder-idle".into()).spawn(move || shared.timer());
        match spawned {
            Ok(handle) => *slot = Some(handle),
            Err(err) => {
                // No timer: the weights stay loaded until the model is dropped (or
                // `release_idle` is called); the next load tries again.
                tracing::warn!("cannot start the embedder's release timer: {err}");
                lock(&self.shared.state).timer_running = false;
            }
        }
    }
}

impl Shared {
    fn release_if_idle(&self, state: &mut State, now: Instant) -> bool {
        if !matches!(state.weights, Weights::Loaded(_)) || now.saturating_duration_since(state.last_used) < self.idle {
            return false;
        }
        state.weights = Weights::Unloaded;
        tracing::info!(idle_secs = self.idle.as_secs(), "released the embedding model's weights after it was idle");
        true
    }

    /// The release timer: sleeps until the weights are `idle` old, releases them and ends;
    /// ends too when they are gone already or the model is dropped.
    fn timer(&self) {
        let mut state = lock(&self.state);
        loop {
            if state.closed || !matches!(state.weights, Weights::Loaded(_)) {
                break;
            }
            let now = Instant::now();
            if self.release_if_idle(&mut state, now) {
                break;
            }
            let due = (state.last_used + self.idle).saturating_duration_since(now).max(Duration::from_millis(1));
            state = self.wake.wait_timeout(state, due).unwrap_or_else(PoisonError::into_inner).0;
        }
        state.timer_running = false;
    }
}

impl Drop for LazyModel {
    fn drop(&mut self) {
        lock(&self.shared.state).closed = true;
        self.shared.wake.notify_all();
        if let Some(timer) = lock(&self.timer).take() {
            let _ = timer.join();
        }
    }
}

impl Embedder for LazyModel {
    fn describe(&self) -> String {
        format!("{MODEL_NAME} ({DIMENSION}-d) from {}", self.shared.dir.display())
    }

    fn dimension(&self) -> usize {
        DIMENSION
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError> {
        let model = self.model()?;
        let vectors = model.embed(texts);
        lock(&self.shared.state).last_used = Instant::now();
        vectors
    }
}

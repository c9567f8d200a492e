//! The prime: the baseline of the whole project, taken in once the watcher watches every
//! folder, in the background, without holding the detector's lock — so no hook waits for it.
//! A clean tracked file is known by its blob id (git keeps it); only dirty and untracked files
//! are copied into the store.
//!
//! While it walks, the journal notes every path that changes. When it is done: a path that did
//! not change since is taken in as the walk saw it; one that did is looked at again — unless a
//! window is open then, which settles it (and takes it in when it closes). A window that
//! opened before the prime was done puts nothing back (what the files held is not known) and
//! says so: [`super::STILL_READING`].

use crate::sync::Locked;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

use super::manifest;
use super::{DetectorError, Known};

impl super::Detector {
    /// Marks a prime as coming: windows that open before it is done do not walk.
    pub(crate) fn prime_scheduled(&self) {
        self.priming.store(true, Ordering::Relaxed);
    }

    /// Whether a prime is scheduled or running: a window opened now could not tell what its
    /// call changes (it settles `Unprimed`).
    pub(crate) fn prime_pending(&self) -> bool {
        self.priming.load(Ordering::Relaxed)
    }

    /// Walks the project and takes it in as the baseline (see the module's doc). Blocking:
    /// run it on the blocking pool, after the watcher watches every folder.
    pub(crate) fn prime(&self) {
        let started = std::time::Instant::now();
        let outcome = self.prime_walk();
        self.priming.store(false, Ordering::Relaxed);
        match outcome {
            Ok(Some((files, stored))) => {
                tracing::info!(files, stored, ms = started.elapsed().as_millis() as u64, "change detector primed")
            }
            Ok(None) => tracing::info!("change detector prime stopped: shutting down"),
            Err(err) => tracing::warn!("cannot prime the change detector: {err}"),
        }
    }

    /// The walk and the merge; `(files, copied)` or `None` when shutting down.
    fn prime_walk(&self) -> Result<Option<(usize, usize)>, DetectorError> {
        {
            let mut journal = self.journal.locked();
            journal.prime = Some(HashSet::new());
            journal.prime_overflow = false;
        }
        let root = self.ctx.root().path().to_owned();
        let now = manifest::scan(&root);
        let index = self.git_index();
        let mut found: HashMap<String, Known> = HashMap::with_capacity(now.len());
        let mut stored = 0;
        for (path, meta) in now {
            if self.ctx.shutdown_token().is_cancelled() {
                return Ok(None);
            }
            let known = self.remember_with(&path, meta, index.as_ref())?;
            stored += usize::from(matches!(known.content, super::Content::Stored(_)));
            found.insert(path, known);
        }
        drop(index);
        let files = found.len();
        let mut state = self.state.locked();
        let (changed, lost) = {
            let mut journal = self.journal.locked();
            let changed = journal.prime.take().unwrap_or_default();
            // The journal is complete from the walk's start unless changes were lost during
            // it: then the next look walks it all again.
            journal.overflow = journal.prime_overflow || !journal.trusted;
            (changed, journal.prime_overflow)
        };
        let under_changed = |p: &str| {
            changed.contains(p) || p.char_indices().filter(|(_, c)| *c == '/').any(|(i, _)| changed.contains(&p[..i]))
        };
        found.retain(|path, _| !under_changed(path));
        if state.baseline.is_empty() {
            state.baseline = found;
        } else {
            for (path, known) in found {
                state.baseline.entry(path).or_insert(known);
            }
        }
        // The re-walk's folder map is built by the first full walk, if one is ever needed
        // (the journal spares it): at 100k files it is memory kept for nothing.
        state.tree = None;
        state.primed = true;
        if lost {
            tracing::warn!("the watcher lost changes while Paige read the project: the next call walks it again");
        } else if state.window.is_some() {
            state.pending.extend(changed);
        } else {
            self.refresh(&mut state, changed)?;
        }
        drop(state);
        release_freed_memory();
        Ok(Some((files, stored)))
    }
}

/// The walk's maps and the git index are freed by now; glibc keeps freed memory for reuse
/// unless asked, which would leave the process as large as the walk made it.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

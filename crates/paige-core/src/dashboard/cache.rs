//! The dashboard's two model answers, kept in memory so that a reconnect, a period switch or
//! a second window costs no model call (issue 28): an answer is kept until a session
//! completes, the learner refreshes, or it is a day old (the core's clock). Only answers are
//! kept: after an error the next load calls again. Loads while a flow runs join that run
//! (its answer goes to every UI) instead of calling the model a second time. The materials'
//! answer is also tied to its input (the gaps, the stack, the katas): new gaps, new answer.
//!
//! The cache also remembers which UI asked for the dashboard with which period, so that a
//! session's end pushes each of them its `dashboard:state` again.

use crate::sync::Locked;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Duration, Utc};
use tokio::sync::watch;

use crate::protocol::{ConnectionId, DashboardIssue, MaterialRecommendation, Period};

/// How long a model answer is kept.
pub fn max_age() -> Duration {
    Duration::days(1)
}

/// The answers, the runs under way and the dashboards open.
#[derive(Default)]
pub struct DashboardCache {
    inner: Mutex<Inner>,
}

#[derive(Default)]
pub(super) struct Inner {
    pub(super) issues: Slot<Vec<DashboardIssue>>,
    pub(super) materials: Slot<Vec<MaterialRecommendation>>,
    viewers: HashMap<ConnectionId, Period>,
}

/// One flow's kept answer and its run under way. `generation` moves on each invalidation:
/// a run that started before it stores nothing.
pub(super) struct Slot<T> {
    generation: u64,
    kept: Option<Kept<T>>,
    running: Option<Running>,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot { generation: 0, kept: None, running: None }
    }
}

struct Kept<T> {
    value: T,
    key: u64,
    at: DateTime<Utc>,
}

struct Running {
    generation: u64,
    key: u64,
    done: watch::Receiver<Option<bool>>,
}

/// What a load does for one flow.
pub(super) enum Claim<T> {
    /// A fresh answer: send it, call nothing.
    Kept(T),
    /// The same flow runs already: wait for its outcome (whether it loaded); it tells every UI.
    Joined(watch::Receiver<Option<bool>>),
    /// Run the flow, then hand the ticket back with [`Slot::finish`].
    Run(Ticket),
}

/// A run's right to store its answer (if nothing was invalidated meanwhile).
pub(super) struct Ticket {
    generation: u64,
    key: u64,
    done: watch::Sender<Option<bool>>,
}

impl<T: Clone> Slot<T> {
    /// What a load of this flow does at `now`, for an input that hashes to `key`. `refresh`
    /// drops the kept answer and always runs.
    pub(super) fn claim(&mut self, now: DateTime<Utc>, key: u64, refresh: bool) -> Claim<T> {
        if refresh {
            self.invalidate();
        } else {
            if let Some(kept) = &self.kept
                && kept.key == key
                && now - kept.at < max_age()
            {
                return Claim::Kept(kept.value.clone());
            }
            if let Some(running) = &self.running
                && running.generation == self.generation
                && running.key == key
                && running.done.has_changed().is_ok()
            {
                return Claim::Joined(running.done.clone());
            }
        }
        let (done, receiver) = watch::channel(None);
        self.running = Some(Running { generation: self.generation, key, done: receiver });
        Claim::Run(Ticket { generation: self.generation, key, done })
    }

    /// A run ended: its answer (`None` after an error) is kept unless something invalidated
    /// the slot since it started; whoever joined it hears whether it loaded.
    pub(super) fn finish(&mut self, ticket: Ticket, now: DateTime<Utc>, answer: Option<T>) {
        let loaded = answer.is_some();
        if ticket.generation == self.generation {
            if self.running.as_ref().is_some_and(|r| r.generation == ticket.generation && r.key == ticket.key) {
                self.running = None;
            }
            if let Some(value) = answer {
                self.kept = Some(Kept { value, key: ticket.key, at: now });
            }
        }
        ticket.done.send_replace(Some(loaded));
    }

    fn invalidate(&mut self) {
        self.generation += 1;
        self.kept = None;
        self.running = None;
    }
}

impl DashboardCache {
    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.locked()
    }

    /// Forgets both answers: the next load asks the model again.
    pub fn invalidate(&self) {
        let mut inner = self.lock();
        inner.issues.invalidate();
        inner.materials.invalidate();
    }

    /// `connection` shows the dashboard for `period`.
    pub(super) fn note_viewer(&self, connection: ConnectionId, period: Period) {
        self.lock().viewers.insert(connection, period);
    }

    /// The UIs that asked for the dashboard, with the period each chose last; those for
    /// which `gone` holds are forgotten.
    pub(super) fn viewers(&self, gone: impl Fn(ConnectionId) -> bool) -> Vec<(ConnectionId, Period)> {
        let mut inner = self.lock();
        inner.viewers.retain(|id, _| !gone(*id));
        inner.viewers.iter().map(|(id, period)| (*id, *period)).collect()
    }
}

/// Waits for a joined run's outcome: whether it loaded (`false` if it was dropped).
pub(super) async fn joined(mut done: watch::Receiver<Option<bool>>) -> bool {
    match done.wait_for(Option::is_some).await {
        Ok(loaded) => loaded.unwrap_or(false),
        Err(_) => false,
    }
}

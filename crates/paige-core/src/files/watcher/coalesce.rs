//! The UIs' view of changes: a burst on one path (an editor's create + write, a formatter's
//! several writes) becomes one change, sent once the burst has been quiet for
//! [`super::DEBOUNCE`] (at most [`MAX_DELAY`] after it began).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::{FsChange, FsChangeAction};

/// The longest a change waits while changes keep coming.
const MAX_DELAY: Duration = Duration::from_secs(1);

#[derive(Default)]
pub(super) struct Coalescer {
    order: Vec<String>,
    pending: HashMap<String, FsChange>,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Coalescer {
    /// Takes in a change; a rename first sends what is pending (its order matters), then
    /// itself.
    pub(super) fn push(&mut self, change: FsChange, now: Instant, out: &mut Vec<FsChange>) {
        if change.action == FsChangeAction::Rename {
            self.flush(out);
            out.push(change);
            return;
        }
        self.first.get_or_insert(now);
        self.last = Some(now);
        let merged = match self.pending.remove(&change.path).map(|p| p.action) {
            None => Some(change.action),
            Some(before) => merge(before, change.action),
        };
        match merged {
            Some(action) => {
                if !self.order.contains(&change.path) {
                    self.order.push(change.path.clone());
                }
                self.pending.insert(change.path.clone(), FsChange { action, ..change });
            }
            None => self.order.retain(|p| *p != change.path),
        }
    }

    /// How long until what is pending is due; `None` when nothing is.
    pub(super) fn due_in(&self, now: Instant) -> Option<Duration> {
        let (first, last) = (self.first?, self.last?);
        let due = (last + super::DEBOUNCE).min(first + MAX_DELAY);
        Some(due.saturating_duration_since(now))
    }

    /// Sends what is pending when it is due.
    pub(super) fn flush_due(&mut self, now: Instant, out: &mut Vec<FsChange>) {
        if self.due_in(now).is_some_and(|d| d.is_zero()) {
            self.flush(out);
        }
    }

    fn flush(&mut self, out: &mut Vec<FsChange>) {
        for path in std::mem::take(&mut self.order) {
            out.extend(self.pending.remove(&path));
        }
        self.pending.clear();
        self.first = None;
        self.last = None;
    }
}

/// One path's two changes in a burst as one: `None` when they cancel out (a file made and
/// removed at once).
fn merge(before: FsChangeAction, after: FsChangeAction) -> Option<FsChangeAction> {
    use FsChangeAction::*;
    match (before, after) {
        (Add, Unlink) => None,
        (Add, _) => Some(Add),
        (Unlink, Add) | (Unlink, Change) => Some(Change),
        (_, after) => Some(after),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(action: FsChangeAction, path: &str) -> FsChange {
        FsChange { action, path: path.into(), new_path: None }
    }

    #[test]
    fn a_burst_on_one_path_is_one_change_and_made_then_removed_is_none() {
        let mut c = Coalescer::default();
        let now = Instant::now();
        let mut out = Vec::new();
        c.push(change(FsChangeAction::Add, "a"), now, &mut out);
        c.push(change(FsChangeAction::Change, "a"), now, &mut out);
        c.push(change(FsChangeAction::Add, "b"), now, &mut out);
        c.push(change(FsChangeAction::Unlink, "b"), now, &mut out);
        c.push(change(FsChangeAction::Unlink, "c"), now, &mut out);
        c.push(change(FsChangeAction::Add, "c"), now, &mut out);
        c.flush_due(now, &mut out);
        assert!(out.is_empty(), "nothing before the burst is quiet");
        c.flush_due(now + super::super::DEBOUNCE, &mut out);
        assert_eq!(out, vec![change(FsChangeAction::Add, "a"), change(FsChangeAction::Change, "c")]);
        assert_eq!(c.due_in(now), None);
    }

    #[test]
    fn changes_that_keep_coming_are_sent_within_the_longest_delay() {
        let mut c = Coalescer::default();
        let start = Instant::now();
        let mut out = Vec::new();
        let mut now = start;
        while now < start + MAX_DELAY + Duration::from_millis(50) && out.is_empty() {
            c.push(change(FsChangeAction::Change, "busy"), now, &mut out);
            now += Duration::from_millis(20);
            c.flush_due(now, &mut out);
        }
        assert_eq!(out, vec![change(FsChangeAction::Change, "busy")]);
        assert!(now - start <= MAX_DELAY + Duration::from_millis(20));
    }
}

//! Solutions shown (issue 30): after each turn of Claude Code's (its Stop hook), the code
//! blocks of its reply are fingerprinted (`shingles.rs`), together with what each watched
//! file holds then — the phase in progress's expected files and the files open in Paige's
//! editor; a file the learner opens in the editor later is watched from what it holds on
//! disk when opened. The session's loop hears of the learner's edits (the editor's buffer, a save, a
//! change the watcher saw from their own editor) and, at most twice a second per batch,
//! checks the edited files against the blocks still pending: a file whose new content
//! reproduces a block is "shown, then typed" — recorded once per block with its overlap,
//! logged, counted like a "just show me" by the hint fading and on the dashboard. Code a
//! block merely quoted from the learner's own file was already there and does not count.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::Learning;
use super::shingles::{self, Fingerprint, MIN_SHINGLES};
use crate::db::{ActionType, Session};
use crate::event::{Domain, Event};
use crate::protocol::ServerMessage;

/// The most blocks kept waiting to be typed; the oldest make room.
const MAX_PENDING_BLOCKS: usize = 32;
/// How often the edited files are compared with the pending blocks.
const CHECK_EVERY: Duration = Duration::from_millis(500);

/// A code block Claude Code showed, not yet typed.
pub struct Shown {
    pub(super) session_id: String,
    phase_id: Option<String>,
    block: Fingerprint,
    lines: usize,
    /// What each watched file held when the block was shown.
    before: HashMap<String, Fingerprint>,
}

impl Learning {
    /// Starts `session`'s loop over the bus (the learner's edits), on `cancel`, the session's
    /// token.
    pub(crate) fn start(
        self: &Arc<Self>,
        session: &Session,
        cancel: CancellationToken,
        runtime: &tokio::runtime::Handle,
    ) {
        let events = self.ctx.subscribe();
        self.ctx.tasks().spawn_on(watch(Arc::downgrade(self), session.id.clone(), events, cancel), runtime);
    }

    /// Stop: Claude Code's turn ended with `reply`. Its code blocks long enough to judge are
    /// kept, with what the watched files hold now. Returns how many.
    pub fn turn_ended(&self, reply: &str) -> usize {
        let Some(session) = self.ctx.active_session() else { return 0 };
        let blocks: Vec<(Fingerprint, usize)> = shingles::code_blocks(reply)
            .into_iter()
            .map(|b| (Fingerprint::of(&b.code), b.code.lines().count()))
            .filter(|(f, _)| f.len() >= MIN_SHINGLES)
            .collect();
        if blocks.is_empty() {
            return 0;
        }
        let phase = self.phase_in_progress(&session.id);
        let mut paths: HashSet<String> = self.ctx.live().buffer_paths().into_iter().collect();
        paths.extend(phase.iter().flat_map(|p| p.expected_files.iter().cloned()));
        let before: HashMap<String, Fingerprint> = paths
            .into_iter()
            .map(|path| {
                let now = self.current_text(&path).unwrap_or_default();
                (path, Fingerprint::of(&now))
            })
            .collect();
        let kept = blocks.len();
        let mut state = self.state();
        for (block, lines) in blocks {
            state.shown.push(Shown {
                session_id: session.id.clone(),
                phase_id: phase.as_ref().map(|p| p.id.clone()),
                block,
                lines,
                before: before.clone(),
            });
        }
        let excess = state.shown.len().saturating_sub(MAX_PENDING_BLOCKS);
        state.shown.drain(..excess);
        drop(state);
        // On the timeline: Claude Code showed code (what the learner types next is compared).
        let data = json!({ "kind": "code_shown", "blocks": kept });
        drop(self.ctx.db().log_action(&session.id, ActionType::CoachingMessage, Some(data)));
        kept
    }

    /// The learner opened `path` in the editor: pending blocks of the session that do not
    /// watch it yet start from what it holds on disk (the editor's edits reach the disk only
    /// when saved, so this is what it held before any of them).
    pub(crate) fn file_opened(&self, session_id: &str, path: &str) {
        if !self.state().shown.iter().any(|s| s.session_id == session_id && !s.before.contains_key(path)) {
            return;
        }
        let on_disk = self.ctx.root().resolve(path).ok().and_then(|p| crate::files::read_file(&p).ok());
        let before = Fingerprint::of(&on_disk.filter(|f| !f.binary).map(|f| f.content).unwrap_or_default());
        for shown in self.state().shown.iter_mut().filter(|s| s.session_id == session_id) {
            shown.before.entry(path.to_owned()).or_insert_with(|| before.clone());
        }
    }

    /// The learner edited `paths`: each pending block one of them now reproduces is recorded
    /// (once). Returns how many were found.
    pub(crate) fn learner_edited(&self, session_id: &str, paths: &HashSet<String>) -> usize {
        let watched: Vec<String> = {
            let state = self.state();
            paths
                .iter()
                .filter(|p| state.shown.iter().any(|s| s.session_id == session_id && s.before.contains_key(*p)))
                .cloned()
                .collect()
        };
        let mut found = 0;
        for path in watched {
            let after = Fingerprint::of(&self.current_text(&path).unwrap_or_default());
            let typed: Vec<Shown> = {
                let mut state = self.state();
                let (typed, kept) = std::mem::take(&mut state.shown).into_iter().partition(|s| {
                    s.session_id == session_id
                        && s.before
                            .get(&path)
                            .is_some_and(|before| shingles::reproduced(&s.block, before, &after).is_some())
                });
                state.shown = kept;
                typed
            };
            for shown in typed {
                let before = &shown.before[&path];
                let overlap = shingles::typed_share(&shown.block, before, &after);
                self.record_solution(session_id, &shown, &path, overlap);
                found += 1;
            }
        }
        found
    }

    fn record_solution(&self, session_id: &str, shown: &Shown, path: &str, overlap: f64) {
        let db = self.ctx.db();
        if let Err(err) = db.record_solution_shown(session_id, shown.phase_id.as_deref(), path, overlap, shown.lines) {
            tracing::warn!("cannot record a solution shown: {err}");
            return;
        }
        tracing::info!(path, overlap, lines = shown.lines, "a solution Claude Code showed was typed by the learner");
        let data = json!({ "path": path, "overlap": (overlap * 100.0).round() / 100.0, "lines": shown.lines });
        drop(db.log_action(session_id, ActionType::SolutionShown, Some(data)));
        self.ctx.broadcast(ServerMessage::LearningSignals(self.signals(session_id)));
    }
}

/// The session's loop: the paths the learner edits, compared in batches.
async fn watch(
    learning: Weak<Learning>,
    session_id: String,
    mut events: tokio::sync::broadcast::Receiver<Event>,
    cancel: CancellationToken,
) {
    let mut edited: HashSet<String> = HashSet::new();
    let mut tick = tokio::time::interval(CHECK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {
                if edited.is_empty() {
                    continue;
                }
                let Some(learning) = learning.upgrade() else { break };
                let paths = std::mem::take(&mut edited);
                // Reads files and fingerprints them: off the runtime's workers.
                let session_id = session_id.clone();
                drop(tokio::task::spawn_blocking(move || learning.learner_edited(&session_id, &paths)).await);
            }
            event = events.recv() => match event {
                Ok(Event::BufferEdited { path }) => { edited.insert(path); }
                Ok(Event::Domain(Domain::FilesChanged(change))) => edited.extend(change.changed_paths()),
                Ok(Event::ActionLogged(entry)) if entry.action_type == ActionType::FileOpen => {
                    let Some(learning) = learning.upgrade() else { break };
                    if let Some(path) = entry.data.as_ref().and_then(|d| d.get("path")).and_then(|p| p.as_str()) {
                        learning.file_opened(&session_id, path);
                    }
                }
                Ok(Event::ActionLogged(entry)) if entry.action_type == ActionType::FileSave => {
                    if let Some(path) = entry.data.as_ref().and_then(|d| d.get("path")).and_then(|p| p.as_str()) {
                        edited.insert(path.to_owned());
                    }
                }
                Ok(Event::ShuttingDown) | Err(RecvError::Closed) => break,
                Ok(_) => {}
                Err(RecvError::Lagged(missed)) => tracing::warn!(missed, "the learning signals fell behind the bus"),
            },
        }
    }
}

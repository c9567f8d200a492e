//! The window around watched calls: opened by the first, joined by parallel ones, closed by
//! the last call's end (its changes settled by the policy) — or, when the calls' end was
//! lost, closed without undoing anything.

use crate::sync::Locked;
use std::collections::{HashMap, HashSet};

use super::manifest::Meta;
use super::{ChangeKind, DetectorError, Known, Outcome, Owner, Settled, State, Verdict, Window, guarded, rewalk};
use crate::db::VersionKind;

/// What ends (part of) a window.
#[derive(Debug, Clone, Copy)]
pub(crate) enum End<'a> {
    /// A call's PostToolUse or PostToolUseFailure (or a step check's end), by its id.
    Call(&'a str),
    /// The session's turn ended (Stop, SessionEnd): a background call's window closes; a call
    /// of this session still open lost its end. `None`: every session's.
    Turn(Option<&'a str>),
    /// An event that comes only after the session's calls ended (its next prompt; a new
    /// session, `None`): whatever of its calls is still open lost its end, and so did a
    /// background window whose Stop never came.
    Lost(Option<&'a str>),
}

/// How a closing window's changes are settled.
enum Settle<'a> {
    /// The calls are known to have run: `verdict` decides. `running`: a process the calls
    /// started may still run.
    Attributed { verdict: &'a dyn Fn(&str) -> Verdict, running: bool },
    /// The calls' end was lost: nothing is undone.
    Unattributed,
    /// The window opened before the prime was done: what the files held is not known, so
    /// nothing is undone.
    Unprimed,
}

impl super::Detector {
    /// Opens (or joins) the watch window for a tool call about to run, by Paige itself (a
    /// step check). The baseline takes in whatever changed since the last window: those
    /// changes were the learner's.
    pub(crate) fn watch_begin(&self, call_id: &str, backgrounds: bool) -> Result<(), DetectorError> {
        self.watch_begin_owned(call_id, Owner::Paige, backgrounds, None)
    }

    /// [`Detector::watch_begin`](super::Detector::watch_begin) for a Claude Code session's call, whose hook waits for the answer
    /// until `answer_by`: a window is not opened (nor joined) once that has passed — Claude
    /// Code was told the call is denied, so no PostToolUse would ever close it, and a window
    /// left open would take the next call's changes for an interrupted one's.
    pub(crate) fn watch_begin_in(
        &self,
        call_id: &str,
        session: &str,
        backgrounds: bool,
        answer_by: Option<std::time::Instant>,
    ) -> Result<(), DetectorError> {
        self.watch_begin_owned(call_id, Owner::Session(session.to_owned()), backgrounds, answer_by)
    }

    fn watch_begin_owned(
        &self,
        call_id: &str,
        owner: Owner,
        backgrounds: bool,
        answer_by: Option<std::time::Instant>,
    ) -> Result<(), DetectorError> {
        let detector = self;
        let mut state = detector.state.locked();
        let late = || answer_by.is_some_and(|by| std::time::Instant::now() >= by);
        if late() {
            return Err(DetectorError::Unanswered);
        }
        if let Some(window) = &mut state.window {
            if backgrounds && !window.background.contains(&owner) {
                window.background.push(owner.clone());
            }
            window.calls.insert(call_id.to_owned(), owner);
            return Ok(());
        }
        // What changed since the last window was the learner's: the baseline takes it in. The
        // journal is read only once the watcher has caught up with every change made so far.
        let primed = match detector.journal_take() {
            _ if !state.primed && detector.prime_pending() => false,
            Some(paths) if state.primed => {
                self.refresh(&mut state, paths)?;
                true
            }
            _ => {
                self.refresh_all(&mut state)?;
                true
            }
        };
        if late() {
            return Err(DetectorError::Unanswered);
        }
        let background = if backgrounds { vec![owner.clone()] } else { Vec::new() };
        state.window = Some(Window { calls: HashMap::from([(call_id.to_owned(), owner)]), background, primed });
        detector.set_open(true);
        detector.store.request_evict(self.ctx.db());
        Ok(())
    }

    /// A call ended (`Some`), or the session's turn did (`None`): see [`Detector::watch_close`](super::Detector::watch_close).
    pub(crate) fn watch_end(
        &self,
        call_id: Option<&str>,
        verdict: impl Fn(&str) -> Verdict,
    ) -> Result<Vec<Settled>, DetectorError> {
        let end = match call_id {
            Some(id) => End::Call(id),
            None => End::Turn(None),
        };
        self.watch_close(end, verdict)
    }

    /// Settles what `end` closes. A call's end closes the window when it was the last call
    /// and nothing runs on in the background: every change is settled by `verdict`. A turn's
    /// end closes a background window the same way. A call whose end was lost closes the
    /// window without undoing anything (the changes come back as [`Outcome::Left`]); calls of
    /// other sessions still running go on in a fresh window.
    pub(crate) fn watch_close(
        &self,
        end: End<'_>,
        verdict: impl Fn(&str) -> Verdict,
    ) -> Result<Vec<Settled>, DetectorError> {
        let detector = self;
        let mut guard = detector.state.locked();
        let state = &mut *guard;
        let Some(window) = &mut state.window else { return Ok(Vec::new()) };
        let ours = |owner: &Owner, session: Option<&str>| match (owner, session) {
            (Owner::Paige, _) => false,
            (Owner::Session(_), None) => true,
            (Owner::Session(s), Some(session)) => s == session,
        };
        let (settle, running) = match end {
            End::Call(id) => {
                if window.calls.remove(id).is_none() {
                    // Not in this window: it never joined, or its end was taken for lost.
                    if state.lost.iter().any(|l| l == id) {
                        tracing::warn!(
                            call = id,
                            "a call Paige took for interrupted ended after all; its changes were kept"
                        );
                    }
                    return Ok(Vec::new());
                }
                if !window.calls.is_empty() || !window.background.is_empty() {
                    return Ok(Vec::new());
                }
                (Settle::Attributed { verdict: &verdict, running: false }, HashMap::new())
            }
            End::Turn(session) | End::Lost(session) => {
                let lost: HashSet<String> =
                    window.calls.iter().filter(|(_, o)| ours(o, session)).map(|(id, _)| id.clone()).collect();
                // A background call's process runs on: the window waits for its session's turn.
                let background_only = window.calls.is_empty() && window.background.iter().any(|o| ours(o, session));
                if lost.is_empty() && !background_only {
                    // Other sessions' (or Paige's own) calls still run.
                    return Ok(Vec::new());
                }
                window.calls.retain(|id, _| !lost.contains(id));
                let running = std::mem::take(&mut window.calls);
                for id in &lost {
                    if state.lost.len() >= 64 {
                        state.lost.pop_front();
                    }
                    state.lost.push_back(id.clone());
                }
                match end {
                    End::Turn(_) if lost.is_empty() => {
                        (Settle::Attributed { verdict: &verdict, running: true }, running)
                    }
                    _ => {
                        tracing::warn!(calls = ?lost, "closing a watch window that lost its end without undoing");
                        (Settle::Unattributed, running)
                    }
                }
            }
        };
        let (mut background, primed) =
            state.window.take().map(|w| (w.background, w.primed)).unwrap_or((Vec::new(), true));
        if let End::Turn(session) | End::Lost(session) = end {
            background.retain(|o| !ours(o, session));
        }
        let settle = if primed { settle } else { Settle::Unprimed };
        let settled = self.settle_changes(state, &settle);
        if running.is_empty() && !state.pending.is_empty() {
            // What changed while the prime ran, and this window was open, is taken in now.
            let pending = std::mem::take(&mut state.pending);
            if let Err(err) = self.refresh(state, pending) {
                tracing::warn!("could not take in what changed while Paige read the project: {err}");
            }
        }
        // The saves noted are settled with it.
        detector.set_open(false);
        if !running.is_empty() {
            // Calls of other sessions still run: they go on in a window from here.
            state.window = Some(Window { calls: running, background, primed: state.primed });
            detector.set_open(true);
        }
        detector.store.request_evict(self.ctx.db());
        Ok(settled)
    }

    /// Every change since the baseline, settled; the baseline is what the files hold after.
    /// The paths the watcher saw change during the window are looked at; when its journal
    /// cannot be trusted (it overflowed, the watcher does not cover the project or did not
    /// catch up), the whole project is walked.
    fn settle_changes(&self, state: &mut State, settle: &Settle<'_>) -> Vec<Settled> {
        let (now, paths) = match self.journal_take() {
            Some(journaled) if !journaled.iter().any(|p| super::baseline::is_rules_file(p)) => {
                let now = self.look(&journaled);
                let paths = self.moved(state, &now, &journaled);
                (now, paths)
            }
            _ if matches!(settle, Settle::Unprimed) => {
                // Without a baseline a walk would take every file for new: nothing is known.
                let text = "A command ran while Paige was still starting to watch the project, so Paige \
                            cannot tell what it changed; files it changed stay as they are. `git status` \
                            shows what differs from your last commit.";
                tracing::warn!("{text}");
                let notice = crate::protocol::ServerMessage::notice(crate::protocol::MessageKind::Warning, text);
                self.ctx.broadcast(notice);
                return Vec::new();
            }
            _ => {
                let now = self.walk(state);
                // Only paths whose metadata moved are looked at further.
                let mut paths: Vec<String> = now
                    .iter()
                    .filter(|(path, meta)| state.baseline.get(*path).is_none_or(|k| k.meta != **meta))
                    .map(|(path, _)| path.clone())
                    .collect();
                paths.extend(state.baseline.keys().filter(|path| !now.contains_key(*path)).cloned());
                (now, paths)
            }
        };
        let mut settled = Vec::new();
        let learners = self.learners_files();
        for path in paths {
            let before = state.baseline.get(&path).cloned();
            let after = now.get(&path).copied();
            if guarded::is_guarded(&path) && is_placeholder(before.as_ref(), after) {
                // Claude Code's sandbox made or removed it: left alone, and not reported.
                if after.is_none() {
                    state.baseline.remove(&path);
                }
                continue;
            }
            // One path that cannot be checked must not leave the others unsettled.
            let change = match self.compare(&path, before.as_ref(), after) {
                Ok(change) => change,
                Err(err) => {
                    tracing::warn!(path, "could not check a change: {err}");
                    let outcome = Outcome::Failed(format!("cannot check it: {err}"));
                    settled.push(Settled { path, change: ChangeKind::Modified, outcome, sha256: None, version: None });
                    continue;
                }
            };
            let Some((change, sha256)) = change else {
                if after.is_some_and(|m| before.as_ref().is_none_or(|k| k.meta != m)) {
                    // Same content (a touch), or the learner's own save: the new baseline.
                    self.rebaseline(state, &path, after);
                }
                continue;
            };
            let earlier = || self.earlier_version(&path, before.as_ref());
            let left = |why: &'static str| (Outcome::Left(why), earlier());
            let (outcome, version) = match settle {
                Settle::Unattributed => left(super::LOST_END),
                // What the call left is kept (below); what was there before is not known.
                Settle::Unprimed => (Outcome::Left(super::STILL_READING), None),
                Settle::Attributed { .. } if learners.contains(&path) => left(super::LEARNERS_OPEN_FILE),
                Settle::Attributed { running: true, .. } if guarded::is_guarded(&path) => {
                    left(super::GUARDED_WHILE_RUNNING)
                }
                Settle::Attributed { verdict, .. } => match verdict(&path) {
                    // The earlier version too: the ledger hashes what a deletion removed and
                    // finds the blocks a kept change wrote.
                    Verdict::Keep(why) => (Outcome::Kept(why), earlier()),
                    Verdict::Undo => {
                        match self.undo_to_learners(&path, before.as_ref(), after, change) {
                            Ok(undone) => {
                                match undone.known {
                                    Some(known) => state.baseline.insert(path.clone(), known),
                                    None => state.baseline.remove(&path),
                                };
                                let version = self.version_id(&path, undone.left_sha.as_deref(), VersionKind::Replaced);
                                settled.push(Settled { path, change, outcome: Outcome::Undone, sha256, version });
                            }
                            Err(err) => {
                                tracing::warn!(path, "could not undo a change: {err}");
                                settled.push(Settled {
                                    path,
                                    change,
                                    outcome: Outcome::Failed(err.to_string()),
                                    sha256,
                                    version: None,
                                });
                            }
                        }
                        continue;
                    }
                },
            };
            // Kept or left: the file as it is now is the new baseline (its earlier version
            // stays in the store).
            self.rebaseline(state, &path, after);
            settled.push(Settled { path, change, outcome, sha256, version });
        }
        settled.sort_by(|a, b| a.path.cmp(&b.path));
        if settled.iter().any(|s| rewalk::is_ignore_file(&s.path)) {
            // The rules the re-walk remembers may be the call's: the next walk is a full one.
            state.tree = None;
        }
        settled
    }

    /// Undoes a change, back to the learner's last save through Paige in this window when
    /// there was one (a save Paige kept), else to the baseline.
    fn undo_to_learners(
        &self,
        path: &str,
        before: Option<&Known>,
        after: Option<Meta>,
        change: ChangeKind,
    ) -> Result<super::undo::Undone, DetectorError> {
        let saved = self.last_save(path).and_then(|sha| {
            let meta = before.map(|k| k.meta).or(after)?;
            Some(Known { meta, content: super::Content::Stored(sha) })
        });
        match saved {
            Some(saved) if change != ChangeKind::ModeChanged => self.undo(path, Some(&saved), ChangeKind::Modified),
            _ => self.undo(path, before, change),
        }
    }

    /// Files open in Paige's editor or with unsaved changes there: the learner's.
    fn learners_files(&self) -> HashSet<String> {
        let live = self.ctx.live();
        live.open_files().into_iter().chain(live.dirty_paths()).collect()
    }

    /// Whether the baseline holds the whole project.
    pub(crate) fn primed(&self) -> bool {
        self.state.locked().primed
    }

    /// Whether a window is open (for tests and the UI).
    pub fn watching(&self) -> bool {
        self.state.locked().window.is_some()
    }
}

/// An empty file that appeared, or one that went: what the sandbox's mount points look like.
fn is_placeholder(before: Option<&Known>, after: Option<Meta>) -> bool {
    let empty_or_absent = |meta: Option<Meta>| meta.is_none_or(|m| m.size == 0);
    empty_or_absent(before.map(|k| k.meta)) && empty_or_absent(after) && (before.is_some() != after.is_some())
}

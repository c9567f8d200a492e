//! The Observer (spec Story 10): one per live coaching session, started with it and stopped
//! when it ends or Paige shuts down (an owned loop with a child of the session's token). It
//! watches the event bus — the action log, buffer updates — and an idle check; each trigger
//! passes the suppression checks (`state.rs`), then a Haiku triage call on a snapshot of the
//! learner's work (`triage.rs`) decides whether Paige nudges (`nudge.rs`). One evaluation at
//! a time; a result arriving after its session ended is discarded. The idle check logs
//! `idle_start` when the learner goes idle and `idle_end` when they come back, and looks
//! again on a back-off while they stay idle. The wrap-up's start stops the Observer (its
//! own token, a child of the session's), and with it any nudge waiting to be typed.
//!
//! [`Observer`] owns its state and gets what it uses when `Core::open` builds it: the shared
//! [`Ctx`], the terminals a nudge is typed into, and its settings. It knows nothing of
//! `Core`; the step checks it hears of on the bus (`coaching:step_check`) it keeps itself.

mod nudge;
mod state;
mod triage;

use crate::sync::Locked;
use std::sync::{Arc, Mutex, Weak};

use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::ctx::Ctx;
use crate::db::{ActionType, Session};
use crate::event::{Domain, Event};
use crate::protocol::{ObserverStatus, ServerMessage};
use crate::terminal::Terminals;
use crate::vocab::CheckStatus;
pub use state::{ObserverSettings, ObserverState, Skip, Trigger, is_learner_action};
pub(crate) use triage::{Verdict, verdict};

/// The Observer: the live session's watch, if one runs.
pub struct Observer {
    ctx: Arc<Ctx>,
    terminals: Arc<Terminals>,
    settings: ObserverSettings,
    current: Mutex<Option<Running>>,
}

struct Running {
    session_id: String,
    state: Arc<Mutex<ObserverState>>,
    cancel: CancellationToken,
}

type Shared = Arc<Mutex<ObserverState>>;

/// The same step-check failure this many saves in a row is a reason to look.
const REPEAT_FAILURES: u32 = 3;

impl Observer {
    /// The Observer, with what it uses: the shared context, the terminals a nudge is typed
    /// into, and its settings (`PAIGE_OBSERVER_*`).
    pub(crate) fn new(ctx: Arc<Ctx>, terminals: Arc<Terminals>, settings: ObserverSettings) -> Arc<Observer> {
        Arc::new(Observer { ctx, terminals, settings, current: Mutex::new(None) })
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.current.locked()
    }

    /// The token of the Observer whose state is `state`, while it is the live one.
    fn token_of(&self, state: &Shared) -> Option<CancellationToken> {
        self.current().as_ref().filter(|r| Arc::ptr_eq(&r.state, state)).map(|r| r.cancel.clone())
    }

    /// Starts `session`'s Observer (FR-129): its state, its loop over the event bus and the
    /// idle check, and `observer:status` to every UI. `cancel` is the session's token; the
    /// Observer runs on a child of it, so it can stop before the session does (the wrap-up).
    pub(crate) fn start(
        self: &Arc<Self>,
        session: &Session,
        cancel: CancellationToken,
        runtime: &tokio::runtime::Handle,
    ) {
        let cancel = cancel.child_token();
        let state: Shared = Arc::new(Mutex::new(ObserverState::new(session.id.clone(), self.ctx.now())));
        // Subscribed before the loop runs: nothing logged from here on is missed.
        let events = self.ctx.subscribe();
        let previous = self.current().replace(Running {
            session_id: session.id.clone(),
            state: state.clone(),
            cancel: cancel.clone(),
        });
        if let Some(previous) = previous {
            previous.cancel.cancel();
        }
        self.ctx.tasks().spawn_on(watch(Arc::downgrade(self), state, self.settings, events, cancel), runtime);
        self.ctx.broadcast(ServerMessage::ObserverStatus(self.status()));
    }

    /// Stops `session_id`'s Observer (FR-130; and when its wrap-up starts): its loop ends, a
    /// nudge waiting to be typed is dropped, and every UI hears it is inactive. A triage call
    /// in flight finishes and is discarded (EC-66).
    pub(crate) fn stop(&self, session_id: &str) {
        let stopped = {
            let mut current = self.current();
            match current.as_ref() {
                Some(running) if running.session_id == session_id => current.take(),
                _ => None,
            }
        };
        if let Some(running) = stopped {
            running.cancel.cancel();
            let last = running.state.locked().last_evaluation;
            self.ctx.broadcast(ServerMessage::ObserverStatus(ObserverStatus {
                active: false,
                muted: false,
                last_evaluation: last.map(crate::db::iso),
            }));
        }
    }

    /// What `observer:status` says now.
    pub fn status(&self) -> ObserverStatus {
        match self.current().as_ref() {
            Some(running) => {
                let state = running.state.locked();
                ObserverStatus {
                    active: true,
                    muted: state.muted,
                    last_evaluation: state.last_evaluation.map(crate::db::iso),
                }
            }
            None => ObserverStatus { active: false, muted: false, last_evaluation: None },
        }
    }

    /// `observer:mute` (FR-144): flips the live Observer's mute, logs `observer_muted` and
    /// tells every UI. Without a session there is nothing to mute (EC-70): `false`.
    pub fn mute(&self, muted: bool) -> bool {
        let Some(state) = self.current().as_ref().map(|r| r.state.clone()) else {
            tracing::warn!("observer:mute without an active session: ignored");
            return false;
        };
        state.locked().muted = muted;
        self.ctx.log_action(ActionType::ObserverMuted, json!({ "muted": muted }));
        self.ctx.broadcast(ServerMessage::ObserverStatus(self.status()));
        true
    }

    /// Runs the suppression checks for `trigger`; when they pass, the evaluation runs as
    /// owned background work.
    fn consider(self: &Arc<Self>, trigger: Trigger, state: &Shared) {
        let settings = self.settings;
        let now = self.ctx.now();
        let (admitted, session_id) = {
            let mut s = state.locked();
            (s.admit(now, &settings), s.session_id.clone())
        };
        match admitted {
            Err(Skip::Silent) => {}
            Err(Skip::Suppressed(reason)) => {
                self.ctx.log_action(
                    ActionType::NudgeSuppressed,
                    json!({ "reason": reason, "trigger": format!("{trigger:?}") }),
                );
            }
            Ok(()) => {
                let (observer, state) = (self.clone(), state.clone());
                self.ctx.tasks().spawn(async move { observer.evaluate(trigger, session_id, state).await });
            }
        }
    }

    async fn evaluate(self: Arc<Self>, trigger: Trigger, session_id: String, state: Shared) {
        let settings = self.settings;
        let (last_nudge, idle, generation) = {
            let s = state.locked();
            (s.last_nudge, s.is_idle(self.ctx.now(), &settings), s.generation)
        };
        let observer = self.clone();
        let id = session_id.clone();
        let context = tokio::task::spawn_blocking(move || observer.triage_context(&id, last_nudge, idle)).await;
        let shutdown = self.ctx.shutdown_token();
        let answer = match context {
            // At shutdown the call is abandoned; otherwise it completes (EC-66).
            Ok(context) => tokio::select! {
                _ = shutdown.cancelled() => return,
                answer = self.triage(&session_id, &context) => answer,
            },
            Err(err) => {
                tracing::error!("the observer's snapshot failed: {err}");
                state.locked().finish(self.ctx.now());
                return;
            }
        };
        state.locked().finish(self.ctx.now());
        // EC-66: the session ended or began wrapping up (or another began) while the model
        // thought.
        let Some(cancel) = self.token_of(&state) else {
            tracing::debug!("triage result after the observer stopped: discarded");
            return;
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(err) => {
                tracing::warn!(?trigger, "the observer's triage failed; it keeps watching: {err}");
                return;
            }
        };
        match verdict(answer, settings.min_confidence_pct) {
            Verdict::Nudge(answer) => self.nudge(answer, &state, generation, cancel),
            Verdict::LowConfidence(answer) => {
                let data =
                    json!({ "signal": answer.signal, "confidence": answer.confidence, "reason": "low_confidence" });
                self.ctx.log_action(ActionType::NudgeSuppressed, data);
            }
            Verdict::Contradictory => {
                tracing::warn!(?trigger, "the triage said nudge with signal no_nudge: contradictory, no nudge");
            }
            Verdict::Quiet => {}
        }
    }
}

/// Whether `entry` is one the Observer logged itself (`"source": "observer"`).
fn is_own(entry: &crate::db::ActionEntry) -> bool {
    entry.data.as_ref().is_some_and(|data| data.get("source").and_then(|v| v.as_str()) == Some(OWN_SOURCE))
}

/// The `source` of what the Observer logs itself.
const OWN_SOURCE: &str = "observer";

/// The Observer's loop: triggers from the bus and the idle check, until the session's token
/// is cancelled or the core goes away.
async fn watch(
    observer: Weak<Observer>,
    state: Shared,
    settings: ObserverSettings,
    mut events: tokio::sync::broadcast::Receiver<Event>,
    cancel: CancellationToken,
) {
    let session_id = state.locked().session_id.clone();
    let mut idle = tokio::time::interval(settings.idle_check);
    idle.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    idle.tick().await;
    loop {
        let event = tokio::select! {
            _ = cancel.cancelled() => break,
            _ = idle.tick() => None,
            event = events.recv() => match event {
                Ok(event) => Some(event),
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "the observer fell behind the event bus");
                    continue;
                }
                Err(RecvError::Closed) => break,
            },
        };
        let Some(observer) = observer.upgrade() else { break };
        let now = observer.ctx.now();
        let (trigger, idle_change) = {
            let mut s = state.locked();
            let (was_idle, last_activity) = (s.in_idle_spell(), s.last_activity);
            let trigger = match &event {
                None => s.on_idle_check(now, &settings),
                // Its own `idle_start`/`idle_end` are Paige's entries, not the learner's activity.
                Some(Event::ActionLogged(entry)) if is_own(entry) => None,
                Some(Event::ActionLogged(entry)) if entry.session_id.as_deref() == Some(session_id.as_str()) => {
                    s.on_action(entry.action_type, now, &settings)
                }
                Some(Event::BufferEdited { .. }) => s.on_buffer_update(now, &settings),
                // A step check's result is a reason to look (the snapshot carries it).
                Some(Event::Domain(Domain::StepChecked(check))) => {
                    s.step_checks.insert(check.phase, (check.clone(), now));
                    match check.status {
                        CheckStatus::Passed => s.on_step_check(true, 0, REPEAT_FAILURES),
                        CheckStatus::Failed => s.on_step_check(false, check.consecutive_failures, REPEAT_FAILURES),
                        CheckStatus::Running | CheckStatus::Error => None,
                    }
                }
                // Delegation dominating the phase's prompts is a reason to look (issue 30).
                Some(Event::Domain(Domain::RelianceChanged(signals))) => {
                    match (signals.session_id == session_id, &signals.phase, &signals.phase_reliance) {
                        (true, Some(phase), Some(gauge)) => s.on_reliance(*phase, gauge),
                        _ => None,
                    }
                }
                // A new plan's phases are numbered afresh: the old plan's checks say nothing.
                Some(Event::Domain(Domain::PlanReady { .. })) => {
                    s.step_checks.clear();
                    None
                }
                Some(Event::ShuttingDown) => break,
                Some(_) => None,
            };
            let idle_change = match (was_idle, s.in_idle_spell()) {
                (false, true) => Some((ActionType::IdleStart, last_activity)),
                (true, false) => Some((ActionType::IdleEnd, last_activity)),
                _ => None,
            };
            (trigger, idle_change)
        };
        // Logged before the idle triage runs, so its snapshot shows the learner went idle.
        if let Some((kind, last_activity)) = idle_change {
            let idle_ms = (now - last_activity).num_milliseconds().max(0);
            let data = match kind {
                ActionType::IdleStart => {
                    json!({ "lastActionTimestamp": last_activity.timestamp_millis(), "idleMs": idle_ms, "source": OWN_SOURCE })
                }
                _ => json!({ "idleMs": idle_ms, "source": OWN_SOURCE }),
            };
            observer.ctx.log_action(kind, data);
        }
        if let Some(trigger) = trigger {
            observer.consider(trigger, &state);
        }
    }
}

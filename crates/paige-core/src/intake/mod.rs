//! The intake interview (background-session-guard spec): a short, time-boxed conversation
//! about the learner's past projects in Paige's own chat panel, before a session's coding.
//! `guard/` is the pure, event-sourced guard; `invitation.rs` keeps coding invitations out
//! of the interviewer's replies; `runner.rs` is the interview's owned loop, which feeds the
//! guard, stores every input and acts on what the guard decides; `calls.rs` its model calls.
//! [`Intake`] is the feature: it owns the live interview and gets the shared context and
//! its timings when `Core::open` builds it; its methods are the entry points — start or
//! rejoin, typing, answers, and what Claude Code is told. It knows nothing of `Core`.

mod calls;
pub mod guard;
pub mod invitation;
mod runner;

use crate::sync::Locked;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::sync::mpsc;

use crate::ctx::Ctx;
use crate::db::ActionType;
use crate::event::Event;
use crate::protocol::{ConnectionId, IntakeError, IntakePhase, IntakeState, ServerMessage};
use guard::{GuardConfig, Timed};

/// The intake interview: the live session's, if one runs.
pub struct Intake {
    ctx: Arc<Ctx>,
    /// The guard's constants for a new interview (a rejoined one keeps its recorded ones).
    config: GuardConfig,
    current: Mutex<Option<Running>>,
}

struct Running {
    session_id: String,
    inputs: mpsc::UnboundedSender<Input>,
    /// What a UI that connects mid-interview, and Claude Code's context, are told.
    view: Arc<Mutex<View>>,
}

/// What the learner does, sent to the runner.
#[derive(Debug)]
enum Input {
    Typing(bool),
    Answer(String),
}

/// The interview as the outside sees it, kept current by the runner.
#[derive(Debug, Clone)]
struct View {
    state: IntakeState,
    coding_question: String,
}

fn refusal(message: impl Into<String>, retryable: bool) -> IntakeError {
    IntakeError { message: message.into(), retryable }
}

/// The guard's constants for a new interview: the spec's, with the timings from `Limits`.
fn guard_config(limits: &crate::limits::Limits) -> GuardConfig {
    GuardConfig {
        timebox_ms: limits.intake_timebox.as_millis() as i64,
        typing_quiet_ms: limits.intake_typing_quiet.as_millis() as i64,
        control_wait_ms: limits.intake_control_wait.as_millis() as i64,
        ..GuardConfig::default()
    }
}

impl Intake {
    /// The feature, with the shared context and the interview's timings from `limits`.
    pub(crate) fn new(ctx: Arc<Ctx>, limits: &crate::limits::Limits) -> Arc<Intake> {
        Arc::new(Intake { ctx, config: guard_config(limits), current: Mutex::new(None) })
    }

    /// `intake:start`: starts the active session's interview, or rejoins it — the one running,
    /// or one recorded before a restart, rebuilt from its stored events (its timebox runs from
    /// its first question, not from now). The sender gets `intake:state` at once; every UI
    /// follows the interview from there.
    pub(crate) fn start(self: &Arc<Self>, from: ConnectionId) -> Result<(), IntakeError> {
        let session = self
            .ctx
            .active_session()
            .ok_or_else(|| refusal("Start a coaching session first: the interview comes before its coding.", false))?;
        if let Some(view) = self.view(&session.id) {
            self.ctx.emit(Event::UiTo { connection: from, message: ServerMessage::IntakeState(view.state) });
            return Ok(());
        }
        let cannot = |err: &dyn std::fmt::Display| refusal(format!("Cannot start the interview: {err}"), true);
        // Skipped earlier and taken up now: a fresh interview, not the old one's spent timebox.
        if self.was_skipped(&session.id) && self.ctx.db().delete_intake(&session.id).map_err(|err| cannot(&err))? {
            tracing::info!("the skipped interview starts afresh");
        }
        let title = session.issue_title.clone().unwrap_or_default();
        let config = self.config.clone();
        let config_json = serde_json::to_value(&config).map_err(|err| cannot(&err))?;
        use crate::prompts::intake_interviewer::{CodingTask, coding_question};
        // Work typed in the panel is not an issue: it is named as the learner put it.
        let question = coding_question(match session.issue_number {
            Some(_) => CodingTask::Issue(&title),
            None => CodingTask::Typed(&title),
        });
        if self.ctx.db().create_intake(&session.id, &config_json, &question).map_err(|err| cannot(&err))? {
            self.ctx.log_action(ActionType::IntakeStarted, json!({ "timeboxMs": config.timebox_ms }));
        }
        let recorded =
            self.ctx.db().intake(&session.id).map_err(|err| cannot(&err))?.ok_or_else(|| cannot(&"it vanished"))?;
        // The recorded constants stand: a replay must decide as the interview did.
        let config: GuardConfig = serde_json::from_value(recorded.config).map_err(|err| cannot(&err))?;
        let events: Vec<Timed> = self
            .ctx
            .db()
            .intake_events(&session.id)
            .map_err(|err| cannot(&err))?
            .into_iter()
            .map(|(at_ms, event)| serde_json::from_value(event).map(|event| Timed { at_ms, event }))
            .collect::<Result<_, _>>()
            .map_err(|err| cannot(&format!("a stored event does not read back ({err})")))?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| cannot(&"no runtime"))?;
        let cancel = self
            .ctx
            .live()
            .session()
            .filter(|active| active.session.id == session.id)
            .map(|active| active.cancel.clone())
            .ok_or_else(|| refusal("The session ended.", false))?;
        let (inputs, received) = mpsc::unbounded_channel();
        let runner = runner::Runner::new(&self.ctx, &session.id, config, recorded.coding_question.clone(), &events);
        let view = runner.view();
        let previous =
            self.current.locked().replace(Running { session_id: session.id.clone(), inputs, view: view.clone() });
        drop(previous);
        self.ctx
            .emit(Event::UiTo { connection: from, message: ServerMessage::IntakeState(view.locked().state.clone()) });
        self.ctx.tasks().spawn_on(runner.run(received, cancel), &runtime);
        Ok(())
    }

    /// A learner's first session opens with the interview, and so does each next one while
    /// the learner has skipped it ("Skip for now") and never had one run to its hand-over
    /// (issue 41: once the skipped session was over, nothing offered it again); otherwise a
    /// session has it when the learner asks (`intake:start`). A failure to start is logged:
    /// the session stands.
    pub(crate) fn for_new_session(self: &Arc<Self>, from: ConnectionId) {
        let first = self.ctx.db().sessions().is_ok_and(|sessions| sessions.len() == 1);
        let skipped_only = matches!(self.ctx.db().interview_endings(), Ok((false, true)));
        if (first || skipped_only)
            && let Err(err) = self.start(from)
        {
            tracing::warn!("the first session's interview did not start: {}", err.message);
        }
    }

    /// `intake:typing`: the learner started or stopped typing an answer.
    pub(crate) fn typing(&self, typing: bool) {
        self.send(Input::Typing(typing)).ok();
    }

    /// `intake:answer`: the learner's answer; refused without a running interview.
    pub(crate) fn answer(&self, text: String) -> Result<(), IntakeError> {
        let text = text.trim().to_owned();
        if text.is_empty() {
            return Err(refusal("An empty answer was not sent.", false));
        }
        self.send(Input::Answer(text))
    }

    /// `intake:skip`: the learner skips the interview for now. It stops, the skip is logged,
    /// and every UI gets the hand-over with reason `skipped` (no coding question: Claude Code
    /// plans from the work itself). A later `intake:start` begins it afresh.
    pub(crate) fn skip(&self) -> Result<(), IntakeError> {
        let session = self.ctx.active_session().ok_or_else(|| refusal("No interview is running.", false))?;
        let running = {
            let mut current = self.current.locked();
            match current.as_ref() {
                Some(r) if r.session_id == session.id && !r.inputs.is_closed() => {}
                _ => return Err(refusal("No interview is running.", false)),
            }
            if current.as_ref().expect("checked").view.locked().state.phase == IntakePhase::Coding {
                return Err(refusal("The interview is already over.", false));
            }
            current.take()
        };
        // Dropping the runner's inputs ends its loop.
        drop(running);
        self.ctx.log_action(ActionType::IntakeTransition, json!({ "reason": "skipped" }));
        self.ctx.broadcast(ServerMessage::IntakeTransition(crate::protocol::IntakeTransition {
            session_id: session.id,
            reason: crate::protocol::IntakeReason::Skipped,
            reasons: vec![crate::protocol::IntakeReason::Skipped],
            coding_question: String::new(),
        }));
        Ok(())
    }

    /// Whether the session's interview last ended by `intake:skip`.
    fn was_skipped(&self, session_id: &str) -> bool {
        self.ctx
            .db()
            .recent_actions(session_id, 1, Some(ActionType::IntakeTransition))
            .is_ok_and(|last| last.first().and_then(|a| a.data.as_ref()).is_some_and(|d| d["reason"] == "skipped"))
    }

    fn send(&self, input: Input) -> Result<(), IntakeError> {
        let session = self.ctx.active_session().map(|s| s.id);
        let current = self.current.locked();
        let running = current
            .as_ref()
            .filter(|r| Some(&r.session_id) == session.as_ref())
            .ok_or_else(|| refusal("No interview is running.", true))?;
        running.inputs.send(input).map_err(|_| refusal("The interview has ended.", true))
    }

    fn view(&self, session_id: &str) -> Option<View> {
        let current = self.current.locked();
        let running = current.as_ref().filter(|r| r.session_id == session_id && !r.inputs.is_closed())?;
        Some(running.view.locked().clone())
    }

    /// What a UI that connects mid-interview is sent: the interview as it stands, and after
    /// the hand-over the transition with its coding question again.
    pub(crate) fn rejoin(&self) -> Vec<ServerMessage> {
        let Some(view) = self.ctx.active_session().and_then(|session| self.view(&session.id)) else {
            return Vec::new();
        };
        let mut out = vec![ServerMessage::IntakeState(view.state.clone())];
        if let (IntakePhase::Coding, Some(reason)) = (view.state.phase, view.state.reason) {
            out.push(ServerMessage::IntakeTransition(crate::protocol::IntakeTransition {
                session_id: view.state.session_id,
                reason,
                reasons: view.state.reasons,
                coding_question: view.coding_question,
            }));
        }
        out
    }

    /// The active session's interview: `None` when none runs, `Some(None)` while it runs,
    /// `Some(Some(task))` once it handed over with the coding task it set.
    pub(crate) fn progress(&self) -> Option<Option<String>> {
        let session = self.ctx.active_session()?;
        let view = self.view(&session.id)?;
        Some(matches!(view.state.phase, IntakePhase::Coding).then_some(view.coding_question))
    }

    /// What Claude Code is told of the interview in its session context: that one runs (the
    /// learner is busy in Paige's panel), or, once it handed over, the coding task.
    pub(crate) fn context(&self) -> Option<String> {
        let session = self.ctx.active_session()?;
        let view = self.view(&session.id)?;
        Some(match view.state.phase {
            IntakePhase::Coding => format!(
                "The intake interview is over; the learner now codes. The task Paige set them: {}",
                view.coding_question
            ),
            _ => "Paige is holding a short intake interview with the learner in its own panel; wait for it to \
                  end before starting on the coding task."
                .to_owned(),
        })
    }
}

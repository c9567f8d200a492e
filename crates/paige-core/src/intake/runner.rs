//! The interview's owned loop: one per running interview, on the session's cancellation
//! token. It stamps every input with the core's clock, stores it (the guard is a fold over
//! the stored events), applies it to the guard and carries out what the guard decides —
//! model calls run as tasks the loop owns, and their results come back as guard inputs.
//! A `Tick` is applied once the guard's next wake time has passed: the loop sleeps until
//! then (at most `POLL`, since an injected clock may jump), so a timebox lands on time.

use crate::sync::Locked;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::calls::{self, Done};
use super::guard::{ANOTHER_PROJECT_QUESTION, GuardAction, GuardConfig, GuardEvent, GuardState, QuestionKind, Timed};
use super::{Input, View};
use crate::ctx::Ctx;
use crate::db::ActionType;
use crate::prompts::intake_interviewer::BACKGROUND_QUESTIONS;
use crate::protocol::{
    IntakeError, IntakeLine, IntakePhase, IntakePillar, IntakePillars, IntakeReason, IntakeReplyDone, IntakeScores,
    IntakeSentence, IntakeState, IntakeTransition, ServerMessage,
};

/// How often the loop looks at the clock for a due `Tick`.
const POLL: Duration = Duration::from_millis(200);

pub(super) struct Runner {
    core: Weak<Ctx>,
    session_id: String,
    config: GuardConfig,
    coding_question: String,
    guard: GuardState,
    transcript: Vec<IntakeLine>,
    /// The highest turn used, and whether the latest question has had its answer.
    turn: u32,
    question_answered: bool,
    replying: bool,
    background_asked: usize,
    /// Guard inputs waiting to be applied, in order (acting on one may cause another).
    queue: VecDeque<GuardEvent>,
    view: Arc<Mutex<View>>,
}

impl Runner {
    /// A runner for `session_id`'s interview, its guard and transcript rebuilt from `events`.
    pub(super) fn new(
        core: &Arc<Ctx>,
        session_id: &str,
        config: GuardConfig,
        coding_question: String,
        events: &[Timed],
    ) -> Runner {
        let mut guard = GuardState::new();
        let mut transcript = Vec::new();
        let (mut turn, mut question_answered, mut replying, mut background_asked) = (0, true, false, 0);
        for timed in events {
            guard.apply(&config, timed);
            match &timed.event {
                GuardEvent::QuestionDelivered { turn: t, question, kind } => {
                    transcript.push(line("interviewer", question));
                    (turn, question_answered) = (turn.max(*t), false);
                    background_asked += usize::from(*kind == QuestionKind::Background);
                }
                GuardEvent::AnswerSubmitted { turn: t, answer } => {
                    transcript.push(line("learner", answer));
                    (turn, question_answered) = (turn.max(*t), true);
                }
                GuardEvent::ReplyStarted { turn: t } => (turn, replying) = (turn.max(*t), true),
                GuardEvent::ReplyFinished { .. } => replying = false,
                _ => {}
            }
        }
        if guard.phase == super::guard::Phase::Coding {
            transcript.push(line("interviewer", &coding_question));
        }
        let state = IntakeState {
            session_id: session_id.to_owned(),
            phase: IntakePhase::NotStarted,
            timebox_ms: config.timebox_ms,
            remaining_ms: config.timebox_ms,
            at_ms: core.now().timestamp_millis(),
            zero_runs: 0,
            projects_used: 0,
            stop_check: false,
            weights: scores(&super::guard::Traits::splat(0.0)),
            confidence: scores(&super::guard::Traits::splat(0.0)),
            tau: scores(&config.tau),
            last_pillars: None,
            reason: None,
            reasons: Vec::new(),
            transcript: Vec::new(),
            awaiting_answer: false,
        };
        let view = Arc::new(Mutex::new(View { state, coding_question: coding_question.clone() }));
        let mut runner = Runner {
            core: Arc::downgrade(core),
            session_id: session_id.to_owned(),
            config,
            coding_question,
            guard,
            transcript,
            turn,
            question_answered,
            replying,
            background_asked,
            queue: VecDeque::new(),
            view,
        };
        runner.publish(core, false);
        runner
    }

    pub(super) fn view(&self) -> Arc<Mutex<View>> {
        self.view.clone()
    }

    pub(super) async fn run(mut self, mut inputs: mpsc::UnboundedReceiver<Input>, cancel: CancellationToken) {
        let mut tasks: JoinSet<Done> = JoinSet::new();
        if let Some(core) = self.core.upgrade() {
            if self.guard.phase == super::guard::Phase::NotStarted && !self.replying {
                // The first question is Paige's own: no model call stands between the learner
                // and the interview, and the timebox starts as it is shown.
                self.deliver(&core, self.turn + 1, BACKGROUND_QUESTIONS[0], QuestionKind::Background);
                self.background_asked = 1;
            } else if self.replying {
                // Paige stopped while a reply was being written: a prepared question stands in.
                let fallback = self.next_fallback();
                self.deliver(&core, self.turn, fallback, QuestionKind::Background);
            }
            self.settle(&core, &mut tasks);
        }
        loop {
            tokio::select! {
                _ = cancel.cancelled() => break,
                input = inputs.recv() => {
                    let Some(input) = input else { break };
                    let Some(core) = self.core.upgrade() else { break };
                    self.input(&core, input);
                    self.settle(&core, &mut tasks);
                }
                Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                    let Some(core) = self.core.upgrade() else { break };
                    match done {
                        Ok(done) => self.finished(&core, done),
                        Err(err) => tracing::error!("intake: a model call's task failed: {err}"),
                    }
                    self.settle(&core, &mut tasks);
                }
                _ = tokio::time::sleep(self.until_wake()) => {
                    let Some(core) = self.core.upgrade() else { break };
                    let now = core.now().timestamp_millis();
                    if self.guard.next_wake_ms(&self.config).is_some_and(|wake| wake <= now) {
                        self.queue.push_back(GuardEvent::Tick);
                        self.settle(&core, &mut tasks);
                    }
                }
            }
        }
        tasks.shutdown().await;
    }

    /// How long to sleep before looking at the clock again: until the guard's next wake time
    /// on the core's clock, at most `POLL` (an injected clock may jump).
    fn until_wake(&self) -> Duration {
        let now = self.core.upgrade().map(|core| core.now().timestamp_millis());
        match (self.guard.next_wake_ms(&self.config), now) {
            (Some(wake), Some(now)) => {
                Duration::from_millis(wake.saturating_sub(now).clamp(1, POLL.as_millis() as i64) as u64)
            }
            _ => POLL,
        }
    }

    fn input(&mut self, core: &Arc<Ctx>, input: Input) {
        match input {
            Input::Typing(true) => self.queue.push_back(GuardEvent::TypingStarted),
            Input::Typing(false) => self.queue.push_back(GuardEvent::TypingStopped),
            Input::Answer(_) if self.guard.phase != super::guard::Phase::Background => {
                let message = "The interview is over; the answer was not sent.";
                core.broadcast(ServerMessage::IntakeError(IntakeError { message: message.into(), retryable: false }));
            }
            Input::Answer(answer) => {
                // An answer to the latest question takes its turn; a rapid second one the next.
                if self.question_answered {
                    self.turn += 1;
                }
                self.question_answered = true;
                self.transcript.push(line("learner", &answer));
                self.queue.push_back(GuardEvent::AnswerSubmitted { turn: self.turn, answer });
            }
        }
    }

    fn finished(&mut self, core: &Arc<Ctx>, done: Done) {
        match done {
            Done::Control { turn, result: Ok((pillars, new_project)) } => {
                self.queue.push_back(GuardEvent::Control { turn, pillars, new_project });
            }
            Done::Control { turn, result: Err(error) } => {
                tracing::warn!(turn, "intake: {error}");
                // Said where it happens (issue 41): the meter stays where it is for this answer.
                let (reason, details) = error.split_once('\n').unwrap_or((&error, ""));
                let message = crate::protocol::error_text(
                    &format!(
                        "Paige could not weigh this answer ({}), so the meter did not move; the interview goes on.",
                        reason.trim_end_matches('.')
                    ),
                    details,
                );
                core.broadcast(ServerMessage::IntakeError(IntakeError { message, retryable: false }));
                self.queue.push_back(GuardEvent::ControlFailed { turn, error });
            }
            Done::Reply { turn, reply } => {
                if let Some(why) = &reply.fallback {
                    // A model error's details stay below the sentence (`protocol::error_text`).
                    let (reason, details) = why.split_once('\n').unwrap_or((why, ""));
                    let reason = reason.trim_end_matches('.');
                    let message = crate::protocol::error_text(
                        &format!("Paige asked a prepared question instead: {reason}."),
                        details,
                    );
                    core.broadcast(ServerMessage::IntakeError(IntakeError { message, retryable: false }));
                }
                self.turn = self.turn.max(turn);
                self.finish_reply(core, turn, &reply.text, QuestionKind::Background);
            }
        }
    }

    /// Delivers an app-authored question whole as `turn`: shown, then finished as a reply.
    fn deliver(&mut self, core: &Arc<Ctx>, turn: u32, question: &str, kind: QuestionKind) {
        self.turn = self.turn.max(turn);
        self.queue.push_back(GuardEvent::ReplyStarted { turn });
        core.broadcast(ServerMessage::IntakeSentence(IntakeSentence { turn, text: question.to_owned() }));
        self.finish_reply(core, turn, question, kind);
    }

    fn finish_reply(&mut self, core: &Arc<Ctx>, turn: u32, text: &str, kind: QuestionKind) {
        self.transcript.push(line("interviewer", text));
        self.question_answered = false;
        self.queue.push_back(GuardEvent::QuestionDelivered { turn, question: text.to_owned(), kind });
        self.queue.push_back(GuardEvent::ReplyFinished { turn });
        core.broadcast(ServerMessage::IntakeReplyDone(IntakeReplyDone { turn, text: text.to_owned() }));
    }

    fn next_fallback(&mut self) -> &'static str {
        let question = BACKGROUND_QUESTIONS[self.background_asked % BACKGROUND_QUESTIONS.len()];
        self.background_asked += 1;
        question
    }

    /// Applies the queued inputs in order — each stamped, stored, folded in — and acts on
    /// what the guard decides; then tells every UI where the interview stands.
    fn settle(&mut self, core: &Arc<Ctx>, tasks: &mut JoinSet<Done>) {
        let mut changed = false;
        while let Some(event) = self.queue.pop_front() {
            changed = true;
            let timed = Timed { at_ms: core.now().timestamp_millis(), event };
            self.replying = match timed.event {
                GuardEvent::ReplyStarted { .. } => true,
                GuardEvent::ReplyFinished { .. } => false,
                _ => self.replying,
            };
            match serde_json::to_value(&timed.event) {
                Ok(stored) => {
                    if let Err(err) = core.db().append_intake_event(&self.session_id, timed.at_ms, &stored) {
                        tracing::error!("intake: cannot store a guard input: {err}");
                    }
                }
                Err(err) => tracing::error!("intake: cannot encode a guard input: {err}"),
            }
            // The record first: a log row is written before any UI hears of what it records
            // (the hand-over's row before `intake:transition`), so whoever saw it finds it.
            let mut actions = self.guard.apply(&self.config, &timed);
            actions.sort_by_key(|action| !matches!(action, GuardAction::LogTurn(_)));
            for action in actions {
                self.act(core, action, tasks);
            }
        }
        if changed {
            self.publish(core, true);
        }
    }

    fn act(&mut self, core: &Arc<Ctx>, action: GuardAction, tasks: &mut JoinSet<Done>) {
        match action {
            GuardAction::ScoreTurn { turn, last_turn } => {
                tasks.spawn(calls::control(core.clone(), self.session_id.clone(), turn, last_turn));
            }
            GuardAction::AskBackground { turn } => {
                self.turn = self.turn.max(turn);
                self.queue.push_back(GuardEvent::ReplyStarted { turn });
                let fallback = self.next_fallback();
                let transcript = self.transcript.clone();
                tasks.spawn(calls::interviewer_reply(
                    core.clone(),
                    self.session_id.clone(),
                    turn,
                    transcript,
                    fallback,
                ));
            }
            GuardAction::AskAnotherProject { turn } => {
                self.deliver(core, turn, ANOTHER_PROJECT_QUESTION, QuestionKind::AnotherProject);
            }
            GuardAction::Transition { reason, reasons } => {
                tasks.abort_all();
                self.transcript.push(line("interviewer", &self.coding_question));
                // The view a rejoining panel reads says "coding" before any UI hears of the
                // hand-over: a rejoin right after the transition never gets the old phase.
                self.publish(core, false);
                core.broadcast(ServerMessage::IntakeTransition(IntakeTransition {
                    session_id: self.session_id.clone(),
                    reason: protocol_reason(reason),
                    reasons: reasons.into_iter().map(protocol_reason).collect(),
                    coding_question: self.coding_question.clone(),
                }));
            }
            GuardAction::LogTurn(log) => {
                let kind = if log.reason.is_some() { ActionType::IntakeTransition } else { ActionType::IntakeTurn };
                let data = serde_json::to_value(&log).unwrap_or_else(|err| json!({ "error": err.to_string() }));
                core.log_action(kind, data);
            }
        }
    }

    /// Refreshes the view and, when `broadcast`, sends it to every UI.
    fn publish(&mut self, core: &Arc<Ctx>, broadcast: bool) {
        let guard = &self.guard;
        let now = core.now().timestamp_millis();
        let state = IntakeState {
            session_id: self.session_id.clone(),
            phase: match guard.phase {
                super::guard::Phase::NotStarted => IntakePhase::NotStarted,
                super::guard::Phase::Background => IntakePhase::Background,
                super::guard::Phase::Coding => IntakePhase::Coding,
            },
            timebox_ms: self.config.timebox_ms,
            // Counted from the first question on the core's clock while the interview runs
            // (after a restart the guard's last event may be long ago); frozen once over.
            remaining_ms: match (guard.phase, guard.started_at_ms) {
                (super::guard::Phase::Background, Some(start)) => start + self.config.timebox_ms - now,
                _ => guard.remaining_ms(&self.config).unwrap_or(self.config.timebox_ms),
            }
            .max(0),
            at_ms: now,
            zero_runs: guard.zero_runs,
            projects_used: guard.projects_used,
            stop_check: guard.stop_check,
            weights: scores(&guard.weights),
            confidence: scores(&guard.confidence),
            tau: scores(&self.config.tau),
            last_pillars: guard.last_pillars.as_ref().map(|p| IntakePillars {
                adaptability: pillar(&p.adaptability),
                creativity: pillar(&p.creativity),
                reasoning: pillar(&p.reasoning),
            }),
            reason: guard.reason.map(protocol_reason),
            reasons: guard.reasons.iter().copied().map(protocol_reason).collect(),
            transcript: self.transcript.clone(),
            awaiting_answer: guard.phase == super::guard::Phase::Background && !self.replying,
        };
        self.view.locked().state = state.clone();
        if broadcast {
            core.broadcast(ServerMessage::IntakeState(state));
        }
    }
}

fn line(role: &str, text: &str) -> IntakeLine {
    IntakeLine { role: role.to_owned(), text: text.to_owned() }
}

fn scores(t: &super::guard::Traits<f64>) -> IntakeScores {
    IntakeScores { adaptability: t.adaptability, creativity: t.creativity, reasoning: t.reasoning }
}

fn pillar(p: &super::guard::Pillar) -> IntakePillar {
    IntakePillar { score: p.score, rationale: p.rationale.clone() }
}

fn protocol_reason(reason: super::guard::Reason) -> IntakeReason {
    match reason {
        super::guard::Reason::Timebox => IntakeReason::Timebox,
        super::guard::Reason::ProjectsCap => IntakeReason::ProjectsCap,
        super::guard::Reason::Gate => IntakeReason::Gate,
    }
}

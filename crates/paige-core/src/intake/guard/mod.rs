//! The intake interview's session guard (background-session-guard spec, issue 18): a pure
//! state machine over timed events. It does no I/O and reads no clock: times come in the
//! events, so a session's guard is a fold over its stored events (`replay`) and a reload
//! rebuilds it exactly. A runner feeds it events, acts on its actions, and sends a `Tick` at
//! `next_wake_ms`.
//!
//! The rules, with the choices the spec leaves open:
//! - **Clock.** The guard's time only moves forward: an event stamped before the previous one
//!   counts as happening at the previous one's time. The timebox starts at the first
//!   `QuestionDelivered` (`started_at_ms`); `elapsed_ms` stops at the transition. Each event
//!   is applied as if a `Tick` had come just before it, so missing Ticks change nothing but
//!   timing: an answer arriving after an idle deadline finds the interview already moved on.
//! - **Turns.** An answer is paired with the latest question delivered at or before its turn;
//!   a second answer with the same turn, or one with no question before it, is not scored.
//!   Each accepted answer gets its own `ScoreTurn` on exactly that question and answer
//!   (delta-only), so rapid answers are each scored. The guard numbers its own asks one past
//!   the highest turn it has seen.
//! - **Next assistant turn.** Decided once every answer since the last decision has its
//!   CONTROL result, a `ControlFailed`, or has waited `control_wait_ms` (a Tick at exactly
//!   answer + wait decides without the result). The decision is, in order: transition if a reason applies,
//!   the zero-run rule, else `AskBackground`. Gate and project cap are only checked there:
//!   a question already asked is not taken back.
//! - **CONTROL results** apply only to turns the guard asked to score, once per turn (a
//!   duplicate is ignored; a result after a `ControlFailed` still counts). Scores above 100
//!   count as 100. 0/0/0 adds a zero run, anything else resets the run; `W_T += score / 100`;
//!   `conf_T = W_T / (W_T + prior_mass)`; `stop_check` = every `conf_T ≥ τ_T`. A result that
//!   comes after its wait still counts for later decisions. After the transition results are
//!   discarded and counted in `late_results`.
//! - **Zero-run rule.** `zero_runs ≥ zero_run_limit` at a decision asks
//!   `ANOTHER_PROJECT_QUESTION` (and resets the run) if `projects_used < project_cap` and it
//!   was not already asked in this project; otherwise the decision is a `projects_cap`
//!   transition. `projects_used` is 1 from the first question; it grows when a result for the
//!   another-project question or a later turn reports `new_project`, which also starts a fresh
//!   run. A new project the learner brings up unasked does not count.
//! - **Timebox.** Once expired the guard transitions at once unless an assistant reply is
//!   streaming (`ReplyStarted` without a `ReplyFinished`) or the learner is speaking (the last
//!   `TypingStarted` came less than `typing_quiet_ms` ago and was neither submitted nor
//!   cleared); then it
//!   transitions at the event (or the quiet `Tick`) that ends the last of them. A pending
//!   CONTROL result does not hold it. An answer submitted after expiry is not scored: it goes
//!   into the transition's log and no new background question follows. A reply has no time
//!   limit here: a runner that reloads mid-reply must record the reply's end (`ReplyFinished`).
//! - **Reasons.** Every transition lists all reasons that apply at its moment in priority
//!   order timebox > projects_cap > gate; the first is `reason`. There is exactly one.

mod describe;
mod model;

use std::collections::BTreeMap;

use serde::Serialize;

pub use describe::{describe, mm_ss, transcript};
pub use model::{
    ANOTHER_PROJECT_QUESTION, GuardAction, GuardConfig, GuardEvent, LastTurn, Phase, Pillar, QuestionKind, Reason,
    Timed, Trait, Traits, TurnLog,
};

/// The guard: the spec's GuardState plus what the debug panel shows and the bookkeeping the
/// rules need (not serialized; it is rebuilt by replaying the events).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardState {
    pub started_at_ms: Option<i64>,
    pub elapsed_ms: i64,
    pub zero_runs: u32,
    pub projects_used: u32,
    pub reason: Option<Reason>,
    /// Every reason that applied at the transition, in priority order.
    pub reasons: Vec<Reason>,
    pub phase: Phase,
    /// Evidence mass per trait (`W_T`).
    pub weights: Traits<f64>,
    pub confidence: Traits<f64>,
    pub stop_check: bool,
    /// The latest accepted answer and its question.
    pub last_turn: Option<LastTurn>,
    /// The latest applied CONTROL result.
    pub last_pillars: Option<Traits<Pillar>>,
    /// CONTROL results discarded because they came after the transition.
    pub late_results: u32,
    #[serde(skip)]
    now_ms: Option<i64>,
    #[serde(skip)]
    questions: BTreeMap<u32, String>,
    #[serde(skip)]
    answers: BTreeMap<u32, Answer>,
    /// Answers the next decision waits for: turn → end of the wait.
    #[serde(skip)]
    awaiting: BTreeMap<u32, i64>,
    #[serde(skip)]
    decision_owed: bool,
    #[serde(skip)]
    replying: bool,
    /// When the learner last showed typing, while they are speaking.
    #[serde(skip)]
    typing_at_ms: Option<i64>,
    #[serde(skip)]
    max_turn: Option<u32>,
    #[serde(skip)]
    last_answer_turn: Option<u32>,
    /// The turn of the another-project question asked in the current project.
    #[serde(skip)]
    project_asked_at_turn: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
struct Answer {
    delta: LastTurn,
    outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// Sent for scoring, no result yet.
    Pending,
    Failed,
    Scored(Traits<Pillar>),
    /// Given after the timebox expired: never scored.
    Unscored,
}

impl GuardState {
    pub fn new() -> Self {
        Self::default()
    }

    /// The guard's clock: the latest event time it has seen.
    pub fn now_ms(&self) -> Option<i64> {
        self.now_ms
    }

    /// Time left in the background conversation (negative once past), for the countdown.
    pub fn remaining_ms(&self, config: &GuardConfig) -> Option<i64> {
        self.started_at_ms.map(|_| config.timebox_ms.saturating_sub(self.elapsed_ms))
    }

    /// Folds one event in and returns what the runner must do, in order.
    pub fn apply(&mut self, config: &GuardConfig, event: &Timed) -> Vec<GuardAction> {
        let now = self.now_ms.map_or(event.at_ms, |n| n.max(event.at_ms));
        self.now_ms = Some(now);
        let mut out = Vec::new();
        self.track_elapsed(now);
        // Time-driven changes first, so an event behaves as if a Tick had come just before it.
        self.settle(config, now, &mut out);
        if self.phase != Phase::Coding {
            self.effect(config, now, &event.event, &mut out);
            self.track_elapsed(now);
            self.settle(config, now, &mut out);
        } else if matches!(event.event, GuardEvent::Control { .. }) {
            self.late_results = self.late_results.saturating_add(1);
        }
        out
    }

    /// When the runner must send a `Tick`: the timebox deadline, the end of a control wait, or
    /// the point where a typing learner counts as quiet; `None` when only events matter.
    pub fn next_wake_ms(&self, config: &GuardConfig) -> Option<i64> {
        let (Phase::Background, Some(now)) = (self.phase, self.now_ms) else { return None };
        let quiet = self.typing_at_ms.map(|t| t.saturating_add(config.typing_quiet_ms));
        if self.timebox_expired(config, now) {
            return quiet;
        }
        let deadline = self.started_at_ms.map(|s| s.saturating_add(config.timebox_ms));
        let wait = self.awaiting.values().min().copied();
        [deadline, wait, quiet].into_iter().flatten().min()
    }

    fn effect(&mut self, config: &GuardConfig, now: i64, event: &GuardEvent, out: &mut Vec<GuardAction>) {
        match event {
            GuardEvent::QuestionDelivered { turn, question, kind: _ } => {
                self.see_turn(*turn);
                if self.phase == Phase::NotStarted {
                    self.phase = Phase::Background;
                    self.started_at_ms = Some(now);
                    self.projects_used = 1;
                }
                self.questions.insert(*turn, question.clone());
            }
            GuardEvent::ReplyStarted { turn } => {
                self.see_turn(*turn);
                self.replying = true;
            }
            GuardEvent::ReplyFinished { .. } => self.replying = false,
            GuardEvent::TypingStarted => self.typing_at_ms = Some(now),
            GuardEvent::TypingStopped => self.typing_at_ms = None,
            GuardEvent::AnswerSubmitted { turn, answer } => self.answer(config, now, *turn, answer, out),
            GuardEvent::Control { turn, pillars, new_project } => {
                self.result(config, now, *turn, pillars, *new_project, out);
            }
            GuardEvent::ControlFailed { turn, error: _ } => {
                if let Some(a) = self.answers.get_mut(turn).filter(|a| a.outcome == Outcome::Pending) {
                    a.outcome = Outcome::Failed;
                }
                self.awaiting.remove(turn);
            }
            GuardEvent::Tick => {}
        }
    }

    fn answer(&mut self, config: &GuardConfig, now: i64, turn: u32, answer: &str, out: &mut Vec<GuardAction>) {
        self.typing_at_ms = None;
        if self.phase != Phase::Background || self.answers.contains_key(&turn) {
            return;
        }
        let Some((_, question)) = self.questions.range(..=turn).next_back() else { return };
        let delta = LastTurn { last_question: question.clone(), last_answer: answer.to_owned() };
        self.see_turn(turn);
        self.last_turn = Some(delta.clone());
        self.last_answer_turn = Some(turn);
        if self.timebox_expired(config, now) {
            self.answers.insert(turn, Answer { delta, outcome: Outcome::Unscored });
            return;
        }
        self.answers.insert(turn, Answer { delta: delta.clone(), outcome: Outcome::Pending });
        self.awaiting.insert(turn, now.saturating_add(config.control_wait_ms));
        self.decision_owed = true;
        out.push(GuardAction::ScoreTurn { turn, last_turn: delta });
    }

    fn result(
        &mut self,
        config: &GuardConfig,
        now: i64,
        turn: u32,
        pillars: &Traits<Pillar>,
        new_project: bool,
        out: &mut Vec<GuardAction>,
    ) {
        let Some(answer) = self.answers.get_mut(&turn) else { return };
        if !matches!(answer.outcome, Outcome::Pending | Outcome::Failed) {
            return;
        }
        let pillars = pillars.map(|_, p| Pillar { score: p.score.min(100), rationale: p.rationale.clone() });
        answer.outcome = Outcome::Scored(pillars.clone());
        let delta = answer.delta.clone();
        self.awaiting.remove(&turn);
        if new_project && self.project_asked_at_turn.is_some_and(|asked| turn >= asked) {
            self.projects_used = self.projects_used.saturating_add(1);
            self.project_asked_at_turn = None;
            self.zero_runs = 0;
        }
        if pillars.iter().all(|(_, p)| p.score == 0) {
            self.zero_runs = self.zero_runs.saturating_add(1);
        } else {
            self.zero_runs = 0;
        }
        for t in Trait::ALL {
            *self.weights.get_mut(t) += f64::from(pillars.get(t).score) / 100.0;
        }
        self.confidence = self.weights.map(|_, w| confidence(*w, config.prior_mass));
        self.stop_check = Trait::ALL.iter().all(|&t| self.confidence.get(t) >= config.tau.get(t));
        self.last_pillars = Some(pillars.clone());
        out.push(GuardAction::LogTurn(self.log(now, Some(turn), delta, Some(pillars), None)));
    }

    /// Applies what the passing of time decides: quiet typing, ended waits, the timebox, and a
    /// decision whose waits are over.
    fn settle(&mut self, config: &GuardConfig, now: i64, out: &mut Vec<GuardAction>) {
        if self.phase != Phase::Background {
            return;
        }
        if self.typing_at_ms.is_some_and(|t| now >= t.saturating_add(config.typing_quiet_ms)) {
            self.typing_at_ms = None;
        }
        self.awaiting.retain(|_, end| *end > now);
        if self.timebox_expired(config, now) {
            if !self.replying && self.typing_at_ms.is_none() {
                let reasons = self.reasons(config, now);
                self.transition(now, reasons, out);
            }
            return;
        }
        if self.decision_owed && self.awaiting.is_empty() {
            self.decision_owed = false;
            self.decide(config, now, out);
        }
    }

    fn decide(&mut self, config: &GuardConfig, now: i64, out: &mut Vec<GuardAction>) {
        let reasons = self.reasons(config, now);
        if !reasons.is_empty() {
            self.transition(now, reasons, out);
            return;
        }
        let turn = self.max_turn.map_or(1, |t| t.saturating_add(1));
        self.see_turn(turn);
        if self.zero_runs >= config.zero_run_limit {
            self.zero_runs = 0;
            self.project_asked_at_turn = Some(turn);
            out.push(GuardAction::AskAnotherProject { turn });
        } else {
            out.push(GuardAction::AskBackground { turn });
        }
    }

    /// Every transition reason that applies now, in priority order.
    fn reasons(&self, config: &GuardConfig, now: i64) -> Vec<Reason> {
        let may_ask = self.projects_used < config.project_cap && self.project_asked_at_turn.is_none();
        let applies = [
            (Reason::Timebox, self.timebox_expired(config, now)),
            (Reason::ProjectsCap, self.zero_runs >= config.zero_run_limit && !may_ask),
            (Reason::Gate, self.stop_check),
        ];
        applies.into_iter().filter(|(_, on)| *on).map(|(r, _)| r).collect()
    }

    fn transition(&mut self, now: i64, reasons: Vec<Reason>, out: &mut Vec<GuardAction>) {
        let Some(&reason) = reasons.first() else { return };
        self.phase = Phase::Coding;
        self.reason = Some(reason);
        self.reasons = reasons.clone();
        self.decision_owed = false;
        self.awaiting.clear();
        out.push(GuardAction::Transition { reason, reasons });
        let answered = self.last_answer_turn.and_then(|t| self.answers.get(&t).map(|a| (t, a)));
        let (turn, delta, pillars) = match answered {
            Some((t, a)) => {
                let pillars = match &a.outcome {
                    Outcome::Scored(p) => Some(p.clone()),
                    _ => None,
                };
                (Some(t), a.delta.clone(), pillars)
            }
            None => {
                let question = self.questions.values().next_back().cloned().unwrap_or_default();
                (None, LastTurn { last_question: question, last_answer: String::new() }, None)
            }
        };
        out.push(GuardAction::LogTurn(self.log(now, turn, delta, pillars, Some(reason))));
    }

    fn log(
        &self,
        now: i64,
        turn: Option<u32>,
        delta: LastTurn,
        pillars: Option<Traits<Pillar>>,
        reason: Option<Reason>,
    ) -> TurnLog {
        TurnLog {
            at_ms: now,
            turn,
            last_question: delta.last_question,
            last_answer: delta.last_answer,
            pillars,
            weights: self.weights,
            confidence: self.confidence,
            zero_runs: self.zero_runs,
            projects_used: self.projects_used,
            elapsed_ms: self.elapsed_ms_at(now),
            reason,
        }
    }

    /// `elapsed_ms` follows the clock during the background conversation and stops with it.
    fn track_elapsed(&mut self, now: i64) {
        if self.phase == Phase::Background {
            self.elapsed_ms = self.elapsed_ms_at(now);
        }
    }

    fn elapsed_ms_at(&self, now: i64) -> i64 {
        self.started_at_ms.map_or(0, |s| now.saturating_sub(s).max(0))
    }

    fn timebox_expired(&self, config: &GuardConfig, now: i64) -> bool {
        self.started_at_ms.is_some_and(|s| now >= s.saturating_add(config.timebox_ms))
    }

    fn see_turn(&mut self, turn: u32) {
        self.max_turn = Some(self.max_turn.map_or(turn, |m| m.max(turn)));
    }
}

/// `W / (W + prior)`; no evidence and no prior is no confidence rather than NaN.
fn confidence(weight: f64, prior_mass: f64) -> f64 {
    let total = weight + prior_mass;
    if total > 0.0 { weight / total } else { 0.0 }
}

/// The guard after `events`, with each action stamped with the guard's time when it was
/// emitted: the same as applying the events one by one.
pub fn replay(config: &GuardConfig, events: &[Timed]) -> (GuardState, Vec<(i64, GuardAction)>) {
    let mut state = GuardState::new();
    let mut actions = Vec::new();
    for event in events {
        let emitted = state.apply(config, event);
        let at = state.now_ms.unwrap_or(event.at_ms);
        actions.extend(emitted.into_iter().map(|a| (at, a)));
    }
    (state, actions)
}

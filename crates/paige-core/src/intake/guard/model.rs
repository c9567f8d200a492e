//! The guard's vocabulary: its configuration, the events it folds and the actions it asks of
//! the runner. Events are stored as JSON, so their serde shape is part of the session record.

use serde::{Deserialize, Serialize};

/// The zero-run rule's question, delivered verbatim (spec story 2, scenario 1).
pub const ANOTHER_PROJECT_QUESTION: &str = "Would you like to share another challenging project you worked on?";

/// One value per trait the intake scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Traits<T> {
    pub adaptability: T,
    pub creativity: T,
    pub reasoning: T,
}

/// The three traits (pillars) a CONTROL call scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Trait {
    Adaptability,
    Creativity,
    Reasoning,
}

impl Trait {
    pub const ALL: [Trait; 3] = [Trait::Adaptability, Trait::Creativity, Trait::Reasoning];
}

impl<T> Traits<T> {
    /// The same value for every trait.
    pub fn splat(value: T) -> Self
    where
        T: Clone,
    {
        Traits { adaptability: value.clone(), creativity: value.clone(), reasoning: value }
    }

    pub fn get(&self, t: Trait) -> &T {
        match t {
            Trait::Adaptability => &self.adaptability,
            Trait::Creativity => &self.creativity,
            Trait::Reasoning => &self.reasoning,
        }
    }

    pub fn get_mut(&mut self, t: Trait) -> &mut T {
        match t {
            Trait::Adaptability => &mut self.adaptability,
            Trait::Creativity => &mut self.creativity,
            Trait::Reasoning => &mut self.reasoning,
        }
    }

    pub fn map<U>(&self, mut f: impl FnMut(Trait, &T) -> U) -> Traits<U> {
        Traits {
            adaptability: f(Trait::Adaptability, &self.adaptability),
            creativity: f(Trait::Creativity, &self.creativity),
            reasoning: f(Trait::Reasoning, &self.reasoning),
        }
    }

    /// The traits in a fixed order (adaptability, creativity, reasoning).
    pub fn iter(&self) -> impl Iterator<Item = (Trait, &T)> {
        Trait::ALL.into_iter().map(move |t| (t, self.get(t)))
    }
}

/// One pillar of a CONTROL result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pillar {
    /// 0..=100; a larger value is read as 100.
    pub score: u8,
    pub rationale: String,
}

/// The guard's constants (FR-007); `Default` holds the spec's values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardConfig {
    /// How long the background conversation may run, from the first question.
    pub timebox_ms: i64,
    /// Consecutive 0/0/0 results that trigger the zero-run rule.
    pub zero_run_limit: u32,
    /// Most projects an interview may cover.
    pub project_cap: u32,
    /// The confidence each trait needs before the gate (stopCheck) opens.
    pub tau: Traits<f64>,
    /// `conf_T = W_T / (W_T + prior_mass)`: how much evidence counts as "some".
    pub prior_mass: f64,
    /// A learner who typed and then went quiet this long has finished speaking.
    pub typing_quiet_ms: i64,
    /// How long the next assistant turn waits for the previous answer's CONTROL result.
    pub control_wait_ms: i64,
}

impl Default for GuardConfig {
    fn default() -> Self {
        GuardConfig {
            timebox_ms: 240_000,
            zero_run_limit: 2,
            project_cap: 2,
            // The gate opens at W_T ≥ 1.86 on every trait (τ / (1 − τ) × prior): about six
            // full answers, each with clear evidence (CONTROL's 31-70) of two traits — three
            // minutes for a learner who answers fully (issue 41). With τ 0.7 and a prior of 2
            // (W_T ≥ 4.67) it took fifteen, and every interview ended at the timebox.
            tau: Traits::splat(0.65),
            prior_mass: 1.0,
            typing_quiet_ms: 20_000,
            control_wait_ms: 2_000,
        }
    }
}

/// What a delivered question was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum QuestionKind {
    Background,
    AnotherProject,
}

/// One guard input; stored as JSON so a session's guard is a fold over its events.
///
/// Turn numbers are the runner's: a question and the answers to it carry the question's turn,
/// except that each answer must have a turn of its own (a rapid second answer takes the next
/// number); an answer is paired with the latest question delivered at or before its turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum GuardEvent {
    /// A question reached the learner; the first one starts the timebox.
    QuestionDelivered { turn: u32, question: String, kind: QuestionKind },
    /// An assistant reply began streaming.
    ReplyStarted { turn: u32 },
    /// The assistant reply finished streaming (the spec's `response.done`); it ends the reply
    /// in progress whatever its turn, so a mismatched number cannot hold the timebox open.
    ReplyFinished { turn: u32 },
    /// The learner is typing ("user speaking"); sent again while typing goes on, it keeps
    /// the learner from counting as quiet.
    TypingStarted,
    /// The learner cleared the input without submitting.
    TypingStopped,
    /// The learner submitted an answer (end of speech).
    AnswerSubmitted { turn: u32, answer: String },
    /// The CONTROL result for the answer of `turn`.
    Control { turn: u32, pillars: Traits<Pillar>, new_project: bool },
    /// The CONTROL call for the answer of `turn` failed: no result, the wait is over.
    ControlFailed { turn: u32, error: String },
    /// Time passed; the runner sends one at `next_wake_ms`.
    Tick,
}

/// An event at its client time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Timed {
    pub at_ms: i64,
    pub event: GuardEvent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// No question delivered yet.
    #[default]
    NotStarted,
    /// The timed background conversation.
    Background,
    /// Transitioned; the guard only counts late results from here on.
    Coding,
}

/// Why the interview moved to coding (FR-004), in priority order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Timebox,
    ProjectsCap,
    Gate,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Timebox => "timebox",
            Reason::ProjectsCap => "projects_cap",
            Reason::Gate => "gate",
        }
    }
}

/// The only text a CONTROL call may see (delta-only scoring).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastTurn {
    pub last_question: String,
    pub last_answer: String,
}

/// What the runner must do next.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum GuardAction {
    /// Make the CONTROL call on exactly this delta, then report `Control`/`ControlFailed`.
    ScoreTurn { turn: u32, last_turn: LastTurn },
    /// Generate the next background question (a model call) for this turn.
    AskBackground { turn: u32 },
    /// Deliver `ANOTHER_PROJECT_QUESTION` verbatim as this turn.
    AskAnotherProject { turn: u32 },
    /// Move to coding: present the scripted coding question. Emitted once.
    Transition { reason: Reason, reasons: Vec<Reason> },
    /// The FR-006 record: after each applied CONTROL result and at the transition.
    LogTurn(TurnLog),
}

/// One FR-006 log line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnLog {
    pub at_ms: i64,
    /// The answer's turn; `None` at a transition with no answer (silent learner).
    pub turn: Option<u32>,
    pub last_question: String,
    /// Empty when the learner has not answered.
    pub last_answer: String,
    /// The answer's CONTROL result, when one was applied.
    pub pillars: Option<Traits<Pillar>>,
    pub weights: Traits<f64>,
    pub confidence: Traits<f64>,
    pub zero_runs: u32,
    pub projects_used: u32,
    pub elapsed_ms: i64,
    /// Set on the transition's record only.
    pub reason: Option<Reason>,
}

//! Paige's typed extensions of the catalog for the intake interview (issue 18, the
//! background-session-guard spec): a short, time-boxed conversation in the coaching panel
//! before a session's coding. The learner's typing and answers go up; the interviewer's
//! checked sentences, the guard's state (the debug panel) and the transition come down.
//! Additive: a spec client that never sends these never receives them.

use serde::{Deserialize, Serialize};

/// `intake:typing`: the learner started (`true`) or stopped (`false`, the input cleared)
/// typing an answer — the spec's "user speaking".
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntakeTyping {
    pub typing: bool,
}

/// `intake:answer`: the learner submitted an answer — the spec's end of speech.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntakeAnswer {
    pub text: String,
}

/// `intake:sentence`: one sentence of the interviewer's reply `turn`, shown only after the
/// coding-invitation check passed it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntakeSentence {
    pub turn: u32,
    pub text: String,
}

/// `intake:reply_done`: the interviewer's reply `turn` finished (the spec's `response.done`);
/// `text` is the whole reply as shown.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntakeReplyDone {
    pub turn: u32,
    pub text: String,
}

/// Why the interview handed over to coding.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntakeReason {
    Timebox,
    ProjectsCap,
    Gate,
    /// The learner skipped the interview for now (`intake:skip`); it can be taken later.
    Skipped,
}

/// Where the interview is.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntakePhase {
    NotStarted,
    Background,
    Coding,
}

/// A number per CONTROL trait.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntakeScores {
    pub adaptability: f64,
    pub creativity: f64,
    pub reasoning: f64,
}

/// The pillars of the latest CONTROL result, one per trait.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntakePillars {
    pub adaptability: IntakePillar,
    pub creativity: IntakePillar,
    pub reasoning: IntakePillar,
}

/// One pillar of a CONTROL result: its score 0–100 and the rationale quoting the answer.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntakePillar {
    pub score: u8,
    pub rationale: String,
}

/// `intake:state`: the guard as the debug panel shows it (FR-005), after every change.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntakeState {
    pub session_id: String,
    pub phase: IntakePhase,
    /// The timebox, and how much of it is left at `atMs` (the server's clock, ms since the
    /// epoch): the panel counts down from there.
    pub timebox_ms: i64,
    pub remaining_ms: i64,
    pub at_ms: i64,
    pub zero_runs: u32,
    pub projects_used: u32,
    pub stop_check: bool,
    /// Evidence mass W per trait, its confidence W/(W+prior) and the threshold τ.
    pub weights: IntakeScores,
    pub confidence: IntakeScores,
    pub tau: IntakeScores,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub last_pillars: Option<IntakePillars>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reason: Option<IntakeReason>,
    /// Every reason that applied at the transition, by priority.
    pub reasons: Vec<IntakeReason>,
    /// The interview so far, oldest first, for a UI that connects mid-interview.
    pub transcript: Vec<IntakeLine>,
    /// Whether the learner's answer is awaited (no reply is being written).
    pub awaiting_answer: bool,
}

/// One line of the interview transcript.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntakeLine {
    /// `interviewer` or `learner`.
    pub role: String,
    pub text: String,
}

/// `intake:transition`: the interview is over; `codingQuestion` is Paige's scripted task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntakeTransition {
    pub session_id: String,
    pub reason: IntakeReason,
    pub reasons: Vec<IntakeReason>,
    pub coding_question: String,
}

/// `intake:error`: something the interview needs failed (no session, the model); shown in
/// the panel. `retryable` offers a Retry that sends `intake:start` again.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntakeError {
    pub message: String,
    pub retryable: bool,
}

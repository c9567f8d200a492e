//! Paige's typed extensions of the catalog for learning signals (issue 30): the comprehension
//! check after each phase, the reliance gauge and the solutions shown then typed, and their
//! dashboard chart. Additive: a spec client that never sends these never receives them.

use serde::{Deserialize, Serialize};

/// `learning:check`: a phase's comprehension check as it stands — being prepared, its
/// questions (each with its answer and grade once there), or why there is none. Sent whole on
/// every change, so a UI only ever draws the latest.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComprehensionCheck {
    pub session_id: String,
    pub phase: i64,
    pub phase_title: String,
    pub state: CheckState,
    /// Why there are no questions (nothing changed, the model failed…), or what went wrong;
    /// its first line is the sentence to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub note: Option<String>,
    pub questions: Vec<QuestionView>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckState {
    /// The questions are being written (a model call runs).
    Preparing,
    /// Questions to answer (or some answered, graded, skipped).
    Ready,
    /// No questions: the model failed or answered nothing usable — `note` says why; Retry.
    Failed,
    /// No questions: nothing changed in the phase's files.
    NothingToAsk,
    /// Every question is graded, skipped or expired.
    Done,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionView {
    pub id: String,
    /// `predict_output`, `explain_line` or `edge_case`.
    pub kind: String,
    pub question: String,
    /// The learner's own lines the question is about.
    pub quote: String,
    pub concept: String,
    /// `open`, `grading`, `graded`, `skipped` or `expired`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub answer: Option<String>,
    /// `correct`, `partial` or `incorrect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub grade: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub why: Option<String>,
    /// The grading failed: what to show beside the answer, with Retry (send it again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub error: Option<String>,
}

/// Prompts per reliance class.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelianceGauge {
    pub delegation: u32,
    pub debugging_help: u32,
    pub conceptual_question: u32,
    pub verification: u32,
    pub other: u32,
}

impl RelianceGauge {
    /// From counts in the order of `db::RELIANCE_CLASSES`.
    pub fn of(counts: [u32; 5]) -> RelianceGauge {
        let [delegation, debugging_help, conceptual_question, verification, other] = counts;
        RelianceGauge { delegation, debugging_help, conceptual_question, verification, other }
    }
}

/// `learning:signals`: the active session's reliance gauge and solutions shown then typed,
/// after each prompt the learner types to Claude Code and each solution found.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LearningSignals {
    pub session_id: String,
    pub reliance: RelianceGauge,
    pub solutions_shown: u32,
    /// The phase in progress (its number) and its own gauge: where delegation dominating a
    /// phase shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub phase: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub phase_reliance: Option<RelianceGauge>,
}

impl RelianceGauge {
    pub fn total(&self) -> u32 {
        self.delegation + self.debugging_help + self.conceptual_question + self.verification + self.other
    }

    /// Delegation dominates: at least 3 such prompts, and more than half of them all.
    pub fn delegation_dominates(&self) -> bool {
        self.delegation >= 3 && self.delegation * 2 > self.total()
    }
}

/// `learning:answer`: the learner's answer to one question (Enter sends it).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LearningAnswer {
    pub question_id: String,
    pub answer: String,
}

/// `learning:skip` (skip the phase's open questions) and `learning:retry` (ask for the
/// questions again after a failure).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearningPhase {
    pub phase: i64,
}

/// `learning:error`: a `learning:*` request refused — said where it happened (the question or
/// the phase), to the sender only.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LearningErrorView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub question_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub phase: Option<i64>,
    pub error: String,
}

/// The dashboard's learning signals for its period.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DashboardLearning {
    /// Prompts per reliance class in buckets (days for 7d and 30d, weeks for all), oldest first.
    pub reliance: Vec<RelianceBucket>,
    pub solutions_shown: u32,
    pub comprehension: GradeCounts,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelianceBucket {
    /// `2026-11-22` or `2026-W47`.
    pub label: String,
    pub counts: RelianceGauge,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GradeCounts {
    pub correct: u32,
    pub partial: u32,
    pub incorrect: u32,
    /// Skipped, or never answered before the session ended.
    pub skipped: u32,
}

//! Live step checking (issue 16): each phase declares what done looks like, and Paige runs
//! the phase's check — the project's own test runner with the phase's test filter as one
//! argument, never a model-written command — in the background when the learner saves an
//! expected file. The Observer reads the latest result ([`Core::phase_check`]).

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::core::Core;

/// How a phase's check last ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Running,
    Passed,
    Failed,
    /// The check could not run (no test runner, a missing tool, a timeout).
    Error,
}

/// The latest check of one phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseCheck {
    pub phase_id: String,
    pub phase: i64,
    pub status: CheckStatus,
    /// Failed checks in a row, this one included (0 after a pass).
    pub consecutive_failures: u32,
    /// One line on what happened (the failing test, the missing tool…).
    pub summary: String,
    pub finished_at: Option<DateTime<Utc>>,
}

/// The checks' state: the latest result per phase.
#[derive(Default)]
pub(crate) struct StepChecks {
    latest: Mutex<HashMap<String, PhaseCheck>>,
}

impl Core {
    /// The latest check of `phase_id`, if one ran.
    pub fn phase_check(&self, phase_id: &str) -> Option<PhaseCheck> {
        self.checks().latest.lock().unwrap_or_else(|p| p.into_inner()).get(phase_id).cloned()
    }
}

//! Live step checking (issue 16): each phase declares what done looks like, and Paige runs
//! the phase's check — the project's own test runner with the phase's test filter as one
//! argument, never a model-written command — in the background when the learner saves an
//! expected file. [`StepChecks`] is the feature: it owns the results and the check running,
//! and gets the shared context, the change detector and its timeout from `Core::open`; it
//! knows nothing of `Core`.
//!
//! - `runner.rs`: which runner the project uses, and the one command a check runs.
//! - `process.rs`: running it in its own process group, bounded in time and output.
//! - `summary.rs`: what its output says, in one line.
//! - `live.rs`: the session's loop on the event bus (saves of an expected file), the check
//!   under the change detector's window, superseding, the result recorded and broadcast.

mod live;
pub mod process;
pub mod runner;
pub mod summary;

use crate::sync::Locked;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

pub use runner::MAX_FILTER_BYTES;

pub use crate::vocab::CheckStatus;

/// The latest check of one phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseCheck {
    pub phase_id: String,
    pub phase: i64,
    pub status: CheckStatus,
    /// Failed checks in a row, this one included (0 after a pass). A check that could not
    /// run (`Error`) and one still running leave the count as it was.
    pub consecutive_failures: u32,
    /// One line on what happened (the failing test, the missing tool…).
    pub summary: String,
    pub finished_at: Option<DateTime<Utc>>,
    /// How long the check ran (absent while running, or when nothing ran).
    pub duration_ms: Option<u64>,
}

/// The step checks: what they use, and their state.
pub struct StepChecks {
    ctx: std::sync::Arc<crate::ctx::Ctx>,
    detector: std::sync::Arc<crate::detector::Detector>,
    /// How long one check may run (`PAIGE_STEP_CHECK_TIMEOUT_MS`).
    timeout: std::time::Duration,
    state: CheckState,
}

/// The checks' state: the latest result per phase, and the one check running (a newer save
/// of an expected file supersedes it).
#[derive(Default)]
struct CheckState {
    latest: Mutex<HashMap<String, PhaseCheck>>,
    running: Mutex<Option<(u64, CancellationToken)>>,
    next_id: AtomicU64,
}

impl CheckState {
    /// A new check takes the slot: the one running (if any) is cancelled. Returns its id.
    fn supersede(&self, cancel: CancellationToken) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let old = self.running.locked().replace((id, cancel));
        if let Some((_, old)) = old {
            old.cancel();
        }
        id
    }

    /// Check `id` ended: the slot is free unless a newer check holds it.
    fn release(&self, id: u64) {
        let mut running = self.running.locked();
        if running.as_ref().is_some_and(|(held, _)| *held == id) {
            *running = None;
        }
    }

    /// Records `status` for `phase`, counting failures in a row; returns what was recorded.
    fn record(
        &self,
        phase: &crate::db::Phase,
        status: CheckStatus,
        summary: String,
        finished_at: Option<DateTime<Utc>>,
        duration_ms: Option<u64>,
    ) -> PhaseCheck {
        let mut latest = self.latest.locked();
        let before = latest.get(&phase.id).map_or(0, |c| c.consecutive_failures);
        let consecutive_failures = match status {
            CheckStatus::Passed => 0,
            CheckStatus::Failed => before.saturating_add(1),
            CheckStatus::Running | CheckStatus::Error => before,
        };
        let check = PhaseCheck {
            phase_id: phase.id.clone(),
            phase: phase.number,
            status,
            consecutive_failures,
            summary,
            finished_at,
            duration_ms,
        };
        latest.insert(phase.id.clone(), check.clone());
        check
    }
}

impl StepChecks {
    pub(crate) fn new(
        ctx: std::sync::Arc<crate::ctx::Ctx>,
        detector: std::sync::Arc<crate::detector::Detector>,
        timeout: std::time::Duration,
    ) -> std::sync::Arc<StepChecks> {
        std::sync::Arc::new(StepChecks { ctx, detector, timeout, state: CheckState::default() })
    }

    /// The latest check of `phase_id`, if one ran.
    pub fn phase_check(&self, phase_id: &str) -> Option<PhaseCheck> {
        self.state.latest.locked().get(phase_id).cloned()
    }

    /// The latest check of the live session's phase in progress, as `coaching:step_check`
    /// says it (for a UI that connects mid-session).
    pub fn current_step_check(&self) -> Option<crate::protocol::StepCheck> {
        let session = self.ctx.active_session()?;
        let plan = self.ctx.db().current_plan(&session.id).ok().flatten()?;
        let phases = self.ctx.db().phases_for_plan(&plan.id).ok()?;
        let check = self.phase_check(&crate::db::current_phase(&phases)?.id)?;
        Some(crate::protocol::StepCheck {
            phase: check.phase,
            status: check.status,
            summary: check.summary,
            consecutive_failures: check.consecutive_failures,
            duration_ms: check.duration_ms,
            command: None,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    /// Whether process `pid` is gone (or a zombie waiting for its parent).
    pub(crate) fn gone(pid: i32) -> bool {
        for _ in 0..50 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat) if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')) => return true,
                Ok(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase() -> crate::db::Phase {
        crate::db::Phase {
            id: "p1".into(),
            plan_id: "plan".into(),
            number: 2,
            title: "Add".into(),
            description: String::new(),
            status: crate::db::PhaseStatus::Active,
            hint_level: crate::db::HintLevel::File,
            expected_files: vec!["src/sum.js".into()],
            started_at: None,
            completed_at: None,
            skill_area: None,
            hint_reason: None,
            test_filter: Some("sum adds".into()),
        }
    }

    #[test]
    fn failures_in_a_row_are_counted_and_a_pass_resets_them() {
        let checks = CheckState::default();
        let p = phase();
        let mut counts = Vec::new();
        for status in [
            CheckStatus::Running,
            CheckStatus::Failed,
            CheckStatus::Running,
            CheckStatus::Failed,
            CheckStatus::Error,
            CheckStatus::Failed,
            CheckStatus::Passed,
            CheckStatus::Failed,
        ] {
            counts.push(checks.record(&p, status, String::new(), None, None).consecutive_failures);
        }
        assert_eq!(counts, [0, 1, 1, 2, 2, 3, 0, 1]);
    }

    #[test]
    fn a_newer_check_cancels_the_running_one_and_keeps_the_slot() {
        let checks = CheckState::default();
        let (a, b) = (CancellationToken::new(), CancellationToken::new());
        let first = checks.supersede(a.clone());
        let second = checks.supersede(b.clone());
        assert!(a.is_cancelled() && !b.is_cancelled());
        checks.release(first);
        assert!(checks.running.lock().expect("lock").is_some(), "the old check does not free the new one's slot");
        checks.release(second);
        assert!(checks.running.lock().expect("lock").is_none());
    }
}

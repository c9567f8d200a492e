//! The hint ladder: each phase has a hint level (`none → file → region → line`). The learner
//! moves it with `hints:level_change`; Paige stores it on the phase in progress, records a
//! `hint_escalated` progress event when it rises (what the wrap-up and the Dreyfus
//! assessment read), and redraws the editor's and explorer's hints at the new level.

use super::Coaching;
use crate::db::{HintLevel, Phase, ProgressEventType};

/// How much a level reveals, for telling a rise from a fall.
fn rank(level: HintLevel) -> u8 {
    match level {
        HintLevel::None => 0,
        HintLevel::File => 1,
        HintLevel::Region => 2,
        HintLevel::Line => 3,
    }
}

impl Coaching {
    /// The learner chose `level` for the phase in progress (the active one, else the first
    /// pending one of the session's latest plan). `None` without a session, plan or phase;
    /// nothing changes then but the action log.
    pub fn change_hint_level(&self, level: HintLevel) -> Option<Phase> {
        let session = self.active_session()?;
        let found = self.current_plan(&session.id).and_then(|plan| match plan {
            Some(plan) => {
                self.db().phases_for_plan(&plan.id).map(|phases| super::lifecycle::current_phase(&phases).cloned())
            }
            None => Ok(None),
        });
        let phase = match found {
            Ok(phase) => phase?,
            Err(err) => {
                tracing::warn!("cannot find the phase in progress: {err}");
                return None;
            }
        };
        if phase.hint_level == level {
            return Some(phase);
        }
        let previous = phase.hint_level;
        let phase = match self.db().set_phase_hint_level(&phase.id, level) {
            Ok(phase) => phase,
            Err(err) => {
                tracing::warn!("cannot store the hint level: {err}");
                return None;
            }
        };
        if rank(level) > rank(previous) {
            let data = serde_json::json!({ "from": previous, "to": level });
            if let Err(err) = self.db().record_progress(&phase.id, ProgressEventType::HintEscalated, Some(data)) {
                tracing::warn!("cannot record the escalation: {err}");
            }
        }
        self.redraw_phase_hints(&phase);
        Some(phase)
    }

    /// A learning signal (a comprehension check) moved `phase`'s hints to `level`, because of
    /// `reason` (shown in the panel). Not the learner's choice: no escalation is recorded. A
    /// phase in progress has its hints redrawn.
    pub(crate) fn set_phase_level(&self, phase: Phase, level: HintLevel, reason: &str) {
        match self.db().set_phase_hint_level_because(&phase.id, level, reason) {
            Ok(phase) if phase.status == crate::db::PhaseStatus::Active => self.redraw_phase_hints(&phase),
            Ok(phase) => self.broadcast(crate::protocol::ServerMessage::CoachingPhaseUpdate(
                crate::protocol::PhaseUpdate::of(&phase),
            )),
            Err(err) => tracing::warn!("cannot move the phase's hints: {err}"),
        }
    }

    /// Every UI shows `phase`'s stored level; its hints are redrawn from scratch (a lower
    /// level takes hints away).
    fn redraw_phase_hints(&self, phase: &Phase) {
        let hints = self.db().phase_hints(&phase.id, None).unwrap_or_else(|err| {
            tracing::warn!("cannot read the phase's hints: {err}");
            Vec::new()
        });
        self.broadcast(crate::protocol::ServerMessage::CoachingPhaseUpdate(crate::protocol::PhaseUpdate::of(phase)));
        let _ = self.clear_highlights(None);
        self.clear_hints();
        self.show_phase_hints(phase, &hints);
    }
}

//! The Observer's per-session state and its decisions, pure and on the injected clock:
//! which events trigger an evaluation, and the suppression checks in the spec's order
//! (muted → cooldown → flow state), plus one evaluation at a time (EC-65).

use std::collections::VecDeque;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::db::ActionType;

pub use crate::limits::ObserverSettings;

/// What made the Observer look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    FileOpen,
    FileSave,
    BufferEdits,
    PhaseStarted,
    PhaseCompleted,
    Idle,
    /// The phase's step check went green, or failed again (Paige's extension).
    StepCheck,
    /// Delegation came to dominate the phase's prompts to Claude Code (issue 30).
    Delegation,
}

/// Why an evaluation did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Muted, or an evaluation is already running: silently (FR-134, EC-65).
    Silent,
    /// Logged as `nudge_suppressed` with this reason (FR-135, FR-136).
    Suppressed(&'static str),
}

/// One session's Observer state (the spec's `ObserverState`).
#[derive(Debug)]
pub struct ObserverState {
    pub session_id: String,
    pub muted: bool,
    pub last_nudge: Option<DateTime<Utc>>,
    pub last_evaluation: Option<DateTime<Utc>>,
    pub last_activity: DateTime<Utc>,
    buffer_updates: u32,
    /// The latest learner actions within the flow window, at most `flow_actions + 1`: enough
    /// to tell flow, and neither the memory nor `admit`'s scan grows with the edit rate.
    recent: VecDeque<DateTime<Utc>>,
    in_progress: bool,
    /// Bumped by every trigger: a nudge from an older one is superseded.
    pub generation: u64,
    /// The idle time at which the current idle spell is looked at next; `None` while the
    /// learner is active (no spell yet).
    idle_next_look: Option<Duration>,
    /// The latest step check of each phase of the plan (by number), as the bus said it, and
    /// when: the snapshot carries the phase in progress's.
    pub step_checks: std::collections::HashMap<i64, (crate::protocol::StepCheck, DateTime<Utc>)>,
    /// Per phase, the delegations counted at its last reliance trigger.
    delegation_seen: std::collections::HashMap<i64, u32>,
    /// The latest reliance gauge of the phase in progress, as the bus said it.
    pub reliance: Option<(i64, crate::protocol::RelianceGauge)>,
}

/// The learner's own actions: what counts as activity and toward flow. Paige's own entries
/// (nudges, coaching messages, MCP calls, reverted changes…) do not, nor the buffer's
/// summaries: every buffer update already counts, from the bus.
pub fn is_learner_action(action: ActionType) -> bool {
    use ActionType::*;
    matches!(
        action,
        FileOpen
            | FileSave
            | FileClose
            | TabSwitch
            | Selection
            | HintLevelChange
            | ExplainRequested
            | ReviewRequested
            | IdleEnd
            | WorkedExample
    )
}

impl ObserverState {
    pub fn new(session_id: String, now: DateTime<Utc>) -> ObserverState {
        ObserverState {
            session_id,
            muted: false,
            last_nudge: None,
            last_evaluation: None,
            last_activity: now,
            buffer_updates: 0,
            recent: VecDeque::new(),
            in_progress: false,
            generation: 0,
            idle_next_look: None,
            step_checks: Default::default(),
            delegation_seen: Default::default(),
            reliance: None,
        }
    }

    fn activity(&mut self, now: DateTime<Utc>, settings: &ObserverSettings) {
        self.last_activity = now;
        self.idle_next_look = None;
        self.recent.push_back(now);
        let window = chrono::Duration::from_std(settings.flow_window).unwrap_or(chrono::Duration::MAX);
        while self.recent.front().is_some_and(|t| now - *t > window) || self.recent.len() > settings.flow_actions + 1 {
            self.recent.pop_front();
        }
    }

    /// An action-log entry: activity when the learner's, and a trigger when its kind is one.
    pub fn on_action(
        &mut self,
        action: ActionType,
        now: DateTime<Utc>,
        settings: &ObserverSettings,
    ) -> Option<Trigger> {
        if is_learner_action(action) {
            self.activity(now, settings);
        }
        let trigger = match action {
            ActionType::FileOpen => Trigger::FileOpen,
            ActionType::FileSave => Trigger::FileSave,
            ActionType::PhaseStarted => Trigger::PhaseStarted,
            ActionType::PhaseCompleted => Trigger::PhaseCompleted,
            _ => return None,
        };
        self.generation += 1;
        Some(trigger)
    }

    /// A buffer update (on the bus, not in the action log): every `buffer_updates`th triggers.
    pub fn on_buffer_update(&mut self, now: DateTime<Utc>, settings: &ObserverSettings) -> Option<Trigger> {
        self.activity(now, settings);
        self.buffer_updates += 1;
        if self.buffer_updates < settings.buffer_updates {
            return None;
        }
        self.generation += 1;
        Some(Trigger::BufferEdits)
    }

    /// A step check's result: a pass, or a failure that repeats (`repeat_failures` in a row),
    /// is worth a look; a first failure or an error is not (the learner is still working).
    pub fn on_step_check(&mut self, passed: bool, consecutive_failures: u32, repeat_failures: u32) -> Option<Trigger> {
        if !passed && consecutive_failures < repeat_failures {
            return None;
        }
        self.generation += 1;
        Some(Trigger::StepCheck)
    }

    /// The phase's reliance gauge: a trigger when delegation dominates it and grew since the
    /// last such trigger (each new delegation past dominance is another reason to look;
    /// the suppression rules still apply).
    pub fn on_reliance(&mut self, phase: i64, gauge: &crate::protocol::RelianceGauge) -> Option<Trigger> {
        if !gauge.delegation_dominates() || self.delegation_seen.get(&phase).is_some_and(|n| *n >= gauge.delegation) {
            return None;
        }
        self.delegation_seen.insert(phase, gauge.delegation);
        self.reliance = Some((phase, *gauge));
        self.generation += 1;
        Some(Trigger::Delegation)
    }

    /// The idle check: a trigger when the learner has been idle for `idle_after`, and again
    /// on the back-off (see [`ObserverSettings::idle_repeat_max`]) while they stay idle.
    pub fn on_idle_check(&mut self, now: DateTime<Utc>, settings: &ObserverSettings) -> Option<Trigger> {
        let idle_for = (now - self.last_activity).to_std().unwrap_or_default();
        let due = self.idle_next_look.unwrap_or(settings.idle_after);
        if idle_for <= due {
            return None;
        }
        self.idle_next_look = Some(next_look(due, idle_for, settings.idle_repeat_max));
        self.generation += 1;
        Some(Trigger::Idle)
    }

    /// Whether an idle spell has begun (the idle check saw the learner idle) and no activity
    /// has ended it yet.
    pub fn in_idle_spell(&self) -> bool {
        self.idle_next_look.is_some()
    }

    pub fn is_idle(&self, now: DateTime<Utc>, settings: &ObserverSettings) -> bool {
        now - self.last_activity > chrono::Duration::from_std(settings.idle_after).unwrap_or(chrono::Duration::MAX)
    }

    /// May an evaluation start now? On `Ok` it is marked in progress (and the buffer count
    /// resets, FR-148) until [`ObserverState::finish`].
    pub fn admit(&mut self, now: DateTime<Utc>, settings: &ObserverSettings) -> Result<(), Skip> {
        if self.muted || self.in_progress {
            return Err(Skip::Silent);
        }
        let cooldown = chrono::Duration::from_std(settings.cooldown).unwrap_or(chrono::Duration::MAX);
        if self.last_nudge.is_some_and(|at| now - at < cooldown) {
            return Err(Skip::Suppressed("cooldown"));
        }
        let window = chrono::Duration::from_std(settings.flow_window).unwrap_or(chrono::Duration::MAX);
        if self.recent.iter().filter(|t| now - **t <= window).count() > settings.flow_actions {
            return Err(Skip::Suppressed("flow_state"));
        }
        self.in_progress = true;
        self.buffer_updates = 0;
        Ok(())
    }

    /// The evaluation is over (whatever its outcome).
    pub fn finish(&mut self, now: DateTime<Utc>) {
        self.in_progress = false;
        self.last_evaluation = Some(now);
    }
}

/// The idle time of the look after one due at `due` and taken at `idle_for`: the gap doubles
/// (it is the idle time so far) up to `max`, then stays at `max`; looks missed (a sleeping
/// laptop, a long check interval) are skipped, not made up in a burst.
fn next_look(due: Duration, idle_for: Duration, max: Duration) -> Duration {
    let max = max.max(Duration::from_millis(1));
    let mut next = due.max(Duration::from_millis(1));
    while next <= idle_for && next < max {
        next = next.saturating_mul(2);
    }
    if next <= idle_for {
        let steps = (idle_for - next).as_nanos() / max.as_nanos() + 1;
        next = next.saturating_add(max.saturating_mul(u32::try_from(steps).unwrap_or(u32::MAX)));
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 23, 9, 0, 0).single().expect("date") + chrono::Duration::seconds(secs)
    }

    #[test]
    fn every_fifth_buffer_update_triggers_and_an_evaluation_resets_the_count() {
        let s = ObserverSettings::default();
        let mut state = ObserverState::new("s".into(), at(0));
        let fired: Vec<bool> = (0..5).map(|i| state.on_buffer_update(at(i * 20), &s).is_some()).collect();
        assert_eq!(fired, [false, false, false, false, true]);
        state.admit(at(100), &s).expect("admitted");
        state.finish(at(100));
        assert!(state.on_buffer_update(at(101), &s).is_none(), "the count restarted at the evaluation");
    }

    #[test]
    fn suppression_runs_in_order_muted_then_cooldown_then_flow_and_one_evaluation_at_a_time() {
        let s = ObserverSettings::default();
        let mut state = ObserverState::new("s".into(), at(0));
        for i in 100..111 {
            state.on_action(ActionType::TabSwitch, at(i), &s);
        }
        state.last_nudge = Some(at(0));
        state.muted = true;
        assert_eq!(state.admit(at(30), &s), Err(Skip::Silent), "muted first");
        state.muted = false;
        assert_eq!(state.admit(at(30), &s), Err(Skip::Suppressed("cooldown")));
        assert_eq!(state.admit(at(121), &s), Err(Skip::Suppressed("flow_state")), "11 actions in the last 60 s");
        assert_eq!(state.admit(at(171), &s), Ok(()), "the window has moved on");
        assert_eq!(state.admit(at(172), &s), Err(Skip::Silent), "one evaluation at a time");
        state.finish(at(173));
        assert_eq!(state.last_evaluation, Some(at(173)));
    }

    #[test]
    fn a_flood_of_edits_keeps_only_the_actions_flow_needs_and_still_reads_as_flow() {
        let s = ObserverSettings::default();
        let mut state = ObserverState::new("s".into(), at(0));
        for i in 0..100_000 {
            state.on_buffer_update(at(0) + chrono::Duration::microseconds(i * 500), &s);
        }
        assert_eq!(state.recent.len(), s.flow_actions + 1, "bounded by the threshold, not the edit rate");
        assert_eq!(state.admit(at(51), &s), Err(Skip::Suppressed("flow_state")));
        assert_eq!(state.admit(at(111), &s), Ok(()), "the window has moved past the flood");
    }

    #[test]
    fn a_green_check_or_the_third_failure_in_a_row_triggers_but_not_a_first_failure() {
        let mut state = ObserverState::new("s".into(), at(0));
        assert_eq!(state.on_step_check(true, 0, 3), Some(Trigger::StepCheck));
        assert_eq!(state.on_step_check(false, 1, 3), None);
        assert_eq!(state.on_step_check(false, 2, 3), None);
        assert_eq!(state.on_step_check(false, 3, 3), Some(Trigger::StepCheck));
    }

    #[test]
    fn an_idle_spell_is_looked_at_again_on_a_doubling_back_off_and_only_the_learners_actions_reset_it() {
        let s = ObserverSettings::default();
        let mut state = ObserverState::new("s".into(), at(0));
        assert!(state.on_idle_check(at(299), &s).is_none());
        assert!(!state.in_idle_spell());
        assert_eq!(state.on_idle_check(at(301), &s), Some(Trigger::Idle));
        assert!(state.in_idle_spell());
        assert!(state.on_idle_check(at(331), &s).is_none(), "not again at once");
        state.on_action(ActionType::NudgeSuppressed, at(340), &s);
        assert!(state.on_idle_check(at(361), &s).is_none(), "Paige's own entries are not activity");
        // Looked at again at 10, 20 and 40 idle minutes, then every 40 (the cap).
        let looks: Vec<i64> =
            (0..=(130 * 2)).map(|half| half * 30).filter(|t| state.on_idle_check(at(*t), &s).is_some()).collect();
        assert_eq!(looks, [630, 1230, 2430, 4830, 7230], "10, 20, 40, 80, 120 minutes (checked every 30 s)");
        state.on_action(ActionType::FileOpen, at(7300), &s);
        assert!(!state.in_idle_spell(), "activity ends the spell");
        assert!(state.on_idle_check(at(7500), &s).is_none(), "the back-off starts over");
        assert_eq!(state.on_idle_check(at(7601), &s), Some(Trigger::Idle), "a new spell, at 5 minutes");
        assert!(state.on_idle_check(at(7800), &s).is_none());
        assert_eq!(state.on_idle_check(at(7901), &s), Some(Trigger::Idle), "then at 10");
    }

    #[test]
    fn looks_missed_while_nothing_checked_are_skipped_not_made_up() {
        let s = ObserverSettings::default();
        let mut state = ObserverState::new("s".into(), at(0));
        assert_eq!(state.on_idle_check(at(301), &s), Some(Trigger::Idle));
        // The laptop slept for three hours: one look, then the next one on the schedule.
        assert_eq!(state.on_idle_check(at(3 * 3600), &s), Some(Trigger::Idle));
        assert!(state.on_idle_check(at(3 * 3600 + 30), &s).is_none());
        assert_eq!(
            next_look(Duration::from_secs(300), Duration::from_secs(10_800), s.idle_repeat_max).as_secs(),
            12_000
        );
    }
}

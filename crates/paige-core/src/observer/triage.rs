//! The Observer's look at the learner (spec Story 10, FR-137…FR-142): the context snapshot
//! (the spec's `TriageContext`, plus the phase's latest step check), the Haiku triage call,
//! and what its answer means.

use chrono::{DateTime, Utc};

use crate::api::{ApiError, CallOptions};
use crate::prompts::observer_triage::{
    self as prompt, ObserverTriageResponse, RecentAction, RelianceContext, Signal, StepCheckContext, TriageContext,
    TriagePhase,
};
use crate::sync::Locked;

/// The actions the snapshot lists (FR-137).
const RECENT_ACTIONS: usize = 20;

/// What the triage answer means for the learner.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// Nudge: confident enough, with a real signal.
    Nudge(ObserverTriageResponse),
    /// `should_nudge` but below the bar: logged `low_confidence` (FR-141).
    LowConfidence(ObserverTriageResponse),
    /// `should_nudge` with signal `no_nudge` (EC-67): nothing, and a warning.
    Contradictory,
    /// Nothing to say (FR-142).
    Quiet,
}

pub(crate) fn verdict(answer: ObserverTriageResponse, min_confidence_pct: u8) -> Verdict {
    if !answer.should_nudge {
        return Verdict::Quiet;
    }
    if answer.signal == Signal::NoNudge {
        return Verdict::Contradictory;
    }
    if answer.confidence * 100.0 + 1e-9 < f64::from(min_confidence_pct) {
        return Verdict::LowConfidence(answer);
    }
    Verdict::Nudge(answer)
}

/// A duration as people read it: "45s", "3m12s", "1h05m".
pub(crate) fn human(duration: chrono::Duration) -> String {
    let secs = duration.num_seconds().max(0);
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

fn since(now: DateTime<Utc>, at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(|| "never".to_owned(), |at| format!("{} ago", human(now - at)))
}

impl super::Observer {
    /// The context snapshot for `session_id` now. What cannot be read is left out (logged).
    pub fn triage_context(
        &self,
        session_id: &str,
        last_nudge: Option<DateTime<Utc>>,
        user_idle: bool,
    ) -> TriageContext {
        let (db, now) = (self.ctx.db(), self.ctx.now());
        let phases = match db.current_plan(session_id) {
            Ok(Some(plan)) => db.phases_for_plan(&plan.id).unwrap_or_default(),
            _ => Vec::new(),
        };
        let phase = crate::db::current_phase(&phases);
        let actions = db.recent_actions(session_id, RECENT_ACTIONS, None).unwrap_or_else(|err| {
            tracing::warn!("the observer cannot read the action log: {err}");
            Vec::new()
        });
        let last_save = db.last_action_at(session_id, Some(crate::db::ActionType::FileSave)).ok().flatten();
        let stage = db
            .dreyfus_assessments()
            .unwrap_or_default()
            .into_iter()
            .max_by_key(|a| a.assessed_at)
            .map_or_else(|| "novice".to_owned(), |a| a.stage.as_str().to_owned());
        // The step check the bus last told of for the phase in progress (still running: no age).
        let step_check =
            phase.and_then(|p| self.latest_step_check(session_id, p.number)).map(|(check, at)| StepCheckContext {
                status: check.status.as_str().to_owned(),
                consecutive_failures: check.consecutive_failures,
                ago: (check.status != crate::vocab::CheckStatus::Running).then(|| format!("{} ago", human(now - at))),
                summary: check.summary,
            });
        TriageContext {
            current_phase: phase.map(|p| TriagePhase {
                number: p.number,
                title: p.title.clone(),
                description: p.description.clone(),
                expected_files: p.expected_files.clone(),
            }),
            recent_actions: actions
                .iter()
                .map(|a| RecentAction {
                    kind: a.action_type.as_str().to_owned(),
                    path: a.data.as_ref().and_then(|d| d["path"].as_str()).map(str::to_owned),
                    ago: format!("{} ago", human(now - a.created_at)),
                })
                .collect(),
            time_since_last_save: since(now, last_save),
            time_since_last_nudge: since(now, last_nudge),
            dreyfus_stage: stage,
            user_idle,
            step_check,
            reliance: phase.and_then(|p| self.latest_reliance(session_id, p.number)).map(|g| RelianceContext {
                prompts: g.total(),
                delegation: g.delegation,
                conceptual_question: g.conceptual_question,
                debugging_help: g.debugging_help,
                verification: g.verification,
            }),
        }
    }

    /// The Haiku triage call (FR-139); its failure is logged by the client (FR-146).
    pub async fn triage(&self, session_id: &str, context: &TriageContext) -> Result<ObserverTriageResponse, ApiError> {
        let message = prompt::assemble_user_message(context);
        let options = CallOptions {
            session_id: Some(session_id),
            ..CallOptions::new(prompt::CALL_TYPE, prompt::MODEL, prompt::SYSTEM_PROMPT, &message)
        };
        self.ctx.api().call(self.ctx.db(), &options).await
    }

    /// The latest step check of phase `number` the live Observer of `session_id` heard of.
    /// The phase's reliance gauge the bus last told of (issue 30).
    fn latest_reliance(&self, session_id: &str, number: i64) -> Option<crate::protocol::RelianceGauge> {
        let current = self.current();
        let running = current.as_ref().filter(|r| r.session_id == session_id)?;
        let state = running.state.locked();
        state.reliance.filter(|(phase, _)| *phase == number).map(|(_, gauge)| gauge)
    }

    fn latest_step_check(&self, session_id: &str, number: i64) -> Option<(crate::protocol::StepCheck, DateTime<Utc>)> {
        let current = self.current();
        let running = current.as_ref().filter(|r| r.session_id == session_id)?;
        let state = running.state.locked();
        state.step_checks.get(&number).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompts::observer_triage::SuggestedContext;

    fn answer(should_nudge: bool, confidence: f64, signal: Signal) -> ObserverTriageResponse {
        ObserverTriageResponse {
            should_nudge,
            confidence,
            signal,
            reasoning: String::new(),
            suggested_context: SuggestedContext {
                current_file: None,
                expected_file: None,
                time_in_file: None,
                phase_description: None,
            },
        }
    }

    #[test]
    fn the_answer_decides_nudge_low_confidence_contradiction_or_quiet() {
        assert!(matches!(verdict(answer(true, 0.85, Signal::WrongFile), 70), Verdict::Nudge(_)));
        assert!(matches!(verdict(answer(true, 0.7, Signal::Idle), 70), Verdict::Nudge(_)), "0.7 is enough");
        assert!(matches!(verdict(answer(true, 0.5, Signal::ScopeDrift), 70), Verdict::LowConfidence(_)));
        assert_eq!(verdict(answer(true, 0.95, Signal::NoNudge), 70), Verdict::Contradictory);
        assert_eq!(verdict(answer(false, 0.99, Signal::WrongFile), 70), Verdict::Quiet);
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(human(chrono::Duration::seconds(45)), "45s");
        assert_eq!(human(chrono::Duration::seconds(192)), "3m12s");
        assert_eq!(human(chrono::Duration::seconds(3900)), "1h05m");
        assert_eq!(since(Utc::now(), None), "never");
    }
}

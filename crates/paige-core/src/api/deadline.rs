//! How long one model call may take, retries and `pause_turn` continuations included (issue
//! 28): a deadline per kind of call, so a learner waiting on Explain This hears back within
//! minutes, not after six ten-minute attempts.
//!
//! The client looks the deadline up by call type ([`ModelDeadlines::for_call`]), so no caller
//! can forget it. Each deadline has its `PAIGE_MODEL_*_TIMEOUT_MS` variable (`limits.rs`).

use std::time::Duration;

pub use crate::limits::ModelDeadlines;

impl ModelDeadlines {
    /// The deadline of a call type and the variable that sets it. A call type not named here
    /// gets the coach's, the longest a learner is asked to wait for an answer.
    pub fn for_call(&self, call_type: &str) -> (Duration, &'static str) {
        match call_type {
            "observer_triage" | "memory_retrieval_filter" | "intake_control" => {
                (self.triage, "PAIGE_MODEL_TRIAGE_TIMEOUT_MS")
            }
            "explain_this" => (self.explain, "PAIGE_MODEL_EXPLAIN_TIMEOUT_MS"),
            "practice_review" => (self.review, "PAIGE_MODEL_REVIEW_TIMEOUT_MS"),
            "issue_assessment" => (self.dashboard, "PAIGE_MODEL_DASHBOARD_TIMEOUT_MS"),
            "learning_materials" => (self.materials, "PAIGE_MODEL_MATERIALS_TIMEOUT_MS"),
            "intake_interviewer" => (self.interview, "PAIGE_MODEL_INTERVIEW_TIMEOUT_MS"),
            _ => (self.coach, "PAIGE_MODEL_COACH_TIMEOUT_MS"),
        }
    }

    /// Every deadline's variable with the field it sets, for `Limits::from_env`.
    pub fn fields(&mut self) -> [(&'static str, &mut Duration); 7] {
        [
            ("PAIGE_MODEL_TRIAGE_TIMEOUT_MS", &mut self.triage),
            ("PAIGE_MODEL_COACH_TIMEOUT_MS", &mut self.coach),
            ("PAIGE_MODEL_EXPLAIN_TIMEOUT_MS", &mut self.explain),
            ("PAIGE_MODEL_REVIEW_TIMEOUT_MS", &mut self.review),
            ("PAIGE_MODEL_DASHBOARD_TIMEOUT_MS", &mut self.dashboard),
            ("PAIGE_MODEL_MATERIALS_TIMEOUT_MS", &mut self.materials),
            ("PAIGE_MODEL_INTERVIEW_TIMEOUT_MS", &mut self.interview),
        ]
    }

    /// The same deadline for every call: what tests use to see a deadline expire quickly.
    pub fn all(deadline: Duration) -> ModelDeadlines {
        ModelDeadlines {
            triage: deadline,
            coach: deadline,
            explain: deadline,
            review: deadline,
            dashboard: deadline,
            materials: deadline,
            interview: deadline,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_modules_call_type_has_the_deadline_of_its_kind() {
        let d = ModelDeadlines::default();
        for module in crate::prompts::ALL {
            let (deadline, var) = d.for_call(module.call_type);
            assert!(deadline >= d.triage && deadline <= d.materials, "{}: {deadline:?}", module.call_type);
            assert!(var.starts_with("PAIGE_MODEL_"), "{var}");
        }
        assert_eq!(d.for_call("observer_triage").0, Duration::from_secs(30), "triage is short");
        assert_eq!(d.for_call("coach_agent").0, Duration::from_secs(180), "the coach is longer");
        assert_eq!(d.for_call("knowledge_gap_extraction").1, "PAIGE_MODEL_COACH_TIMEOUT_MS", "the wrap-up's");
    }
}

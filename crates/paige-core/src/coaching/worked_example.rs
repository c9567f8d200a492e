//! "Just show me" (issue 15): when the learner is stuck, Paige itself — not Claude Code —
//! makes a worked example for the phase in progress: an analogous problem solved step by
//! step, shown read-only beside the editor, never the learner's file and never written into
//! the project (nothing here writes a file). Asking is a coaching signal: a `worked_example`
//! action and a `hint_used` progress event (`workedExample: true`) that the wrap-up, the
//! Dreyfus assessment and the hint-fading rule read.

use std::sync::Arc;

use serde_json::json;

use super::Coaching;
use crate::api::CallOptions;
use crate::db::{ActionType, Phase, ProgressEventType};
use crate::prompts::worked_example::{self as prompt, WorkedExampleResponse};
use crate::protocol::{ServerMessage, WorkedExample, WorkedExampleError};

impl Coaching {
    /// Starts a worked example for the phase in progress; `coaching:worked_example` (or
    /// `coaching:worked_example_error`) follows for every UI. Refused at once, with why,
    /// without a session or a phase.
    pub fn show_me(self: &Arc<Self>) -> Result<(), WorkedExampleError> {
        let refuse = |error: &str| WorkedExampleError { phase: None, error: error.to_owned() };
        let Some(session) = self.active_session() else {
            return Err(refuse("Start a session first: there is no phase to show an example for."));
        };
        let phases = match self.current_plan(&session.id) {
            Ok(Some(plan)) => self.db().phases_for_plan(&plan.id).unwrap_or_default(),
            _ => Vec::new(),
        };
        let Some(phase) = super::lifecycle::current_phase(&phases).cloned() else {
            return Err(refuse(
                "No phase yet: ask Claude Code to plan the work first, then Paige can show an example.",
            ));
        };
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| WorkedExampleError { phase: Some(phase.number), error: "Paige is shutting down".into() })?;
        self.log_action(ActionType::WorkedExample, json!({ "phaseId": phase.id, "phase": phase.number }));
        let signal = json!({ "workedExample": true });
        if let Err(err) = self.db().record_progress(&phase.id, ProgressEventType::HintUsed, Some(signal)) {
            tracing::warn!("cannot record the worked example as a hint used: {err}");
        }
        let core = self.clone();
        let cancel = self.shutdown_token();
        let issue_title = session.issue_title.clone();
        self.tasks().spawn_on(
            async move {
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    made = core.make_worked_example(&session.id, &phase, issue_title.as_deref()) => {
                        core.broadcast(match made {
                            Ok(example) => ServerMessage::CoachingWorkedExample(example),
                            Err(error) => ServerMessage::CoachingWorkedExampleError(WorkedExampleError {
                                phase: Some(phase.number),
                                error,
                            }),
                        });
                    }
                }
            },
            &runtime,
        );
        Ok(())
    }

    async fn make_worked_example(
        &self,
        session_id: &str,
        phase: &Phase,
        issue_title: Option<&str>,
    ) -> Result<WorkedExample, String> {
        let language = phase
            .expected_files
            .iter()
            .map(|path| crate::files::language_for(std::path::Path::new(path)))
            .find(|language| *language != "plaintext")
            .unwrap_or("plaintext");
        let stage = self.stage_for(phase.skill_area.as_deref());
        let system = prompt::system_prompt(&stage);
        let message = prompt::assemble_user_message(&phase.title, &phase.description, issue_title, language);
        let options = CallOptions {
            session_id: Some(session_id),
            ..CallOptions::new(prompt::CALL_TYPE, prompt::MODEL, &system, &message)
        };
        let answer: WorkedExampleResponse = self
            .api()
            .call_with_retry(self.db(), &options)
            .await
            .map_err(|err| err.readable("Paige could not make an example"))?;
        if answer.example_code.trim().is_empty() {
            return Err("Paige's model answered without an example; try again.".into());
        }
        Ok(WorkedExample {
            phase: phase.number,
            title: answer.title,
            explanation: answer.explanation,
            language: answer.language,
            example_code: answer.example_code,
            steps: answer.steps,
        })
    }

    /// The learner's stage in `skill_area` when assessed, else novice.
    fn stage_for(&self, skill_area: Option<&str>) -> String {
        let assessments = self.db().dreyfus_assessments().unwrap_or_default();
        skill_area
            .and_then(|area| assessments.iter().find(|a| a.skill_area.eq_ignore_ascii_case(area)))
            .map_or("novice", |a| a.stage.as_str())
            .to_owned()
    }
}

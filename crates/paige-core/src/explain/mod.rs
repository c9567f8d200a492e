//! Explain This (spec Story 11, Flow 1, FR-151…FR-153, FR-163…FR-165): the learner selects
//! code and asks; Paige — not Claude Code — explains it at the learner's Dreyfus stage and in
//! the light of the phase in progress, with one retry on a transient failure. The answer
//! (`explain:response`) or the reason there is none (`explain:error`) goes to every UI;
//! `explain_requested` and `explain_completed` are logged.

use serde_json::json;
use std::sync::Arc;

use crate::core::Core;
use crate::db::ActionType;
use crate::prompts::explain_this::{self as prompt, ExplainThisResponse, PhaseContext};
use crate::protocol::{ExplainResponse, PathError, ServerMessage, UserExplain};

impl Core {
    /// Starts an explanation of `request`'s selection; the answer follows for every UI.
    /// Refused at once, with why, for a path outside the project, a missing or binary file
    /// (EC-75), or when Paige is shutting down.
    pub fn explain(self: &Arc<Self>, request: UserExplain) -> Result<(), PathError> {
        let refuse = |error: String| PathError { path: request.path.clone(), error };
        let file =
            self.read_file(&request.path).map_err(|err| refuse(format!("Cannot explain {}: {err}", request.path)))?;
        if file.binary {
            return Err(refuse("Cannot explain binary files".into()));
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| refuse("Paige is shutting down".into()))?;
        let lines = json!([request.selection.start_line, request.selection.end_line]);
        self.log_action(
            ActionType::ExplainRequested,
            json!({ "path": file.path, "language": request.language, "lines": lines }),
        );
        let core = self.clone();
        let cancel = self.shutdown_token();
        self.tasks().spawn_on(
            async move {
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    () = core.answer_explain(request) => {}
                }
            },
            &runtime,
        );
        Ok(())
    }

    async fn answer_explain(&self, request: UserExplain) {
        let phase = self.active_session().and_then(|session| {
            let plan = self.db().current_plan(&session.id).ok().flatten()?;
            let phases = self.db().phases_for_plan(&plan.id).ok()?;
            crate::coaching::current_phase(&phases).cloned()
        });
        let stage = self.explain_stage(&request.language, phase.as_ref().and_then(|p| p.skill_area.as_deref()));
        let phase_context = phase.as_ref().map(|p| PhaseContext {
            number: p.number,
            title: p.title.clone(),
            description: p.description.clone(),
        });
        let system = prompt::system_prompt(&stage);
        let message = prompt::assemble_user_message(
            &request.selected_text,
            &request.surrounding_context,
            &request.path,
            &request.language,
            phase_context.as_ref(),
        );
        let crate::timed_call::Timed { answer, latency_ms, model } =
            self.timed_call::<ExplainThisResponse>(prompt::CALL_TYPE, prompt::MODEL, &system, &message).await;
        match answer {
            Ok(answer) => {
                let data = json!({ "path": request.path, "model": model, "latencyMs": latency_ms, "success": true });
                self.log_action(ActionType::ExplainCompleted, data);
                self.broadcast(ServerMessage::ExplainResponse(ExplainResponse {
                    path: request.path,
                    explanation: answer.explanation,
                    key_concepts: answer.key_concepts,
                    analogy: answer.analogy.filter(|a| !a.trim().is_empty()),
                    related_files: answer.related_files,
                    // Without a phase there is nothing to connect to (Scenario 11.3).
                    phase_connection: answer.phase_connection.filter(|_| phase.is_some()),
                }));
            }
            Err(err) => {
                let error = err.readable("Paige could not explain this");
                let data = json!({ "path": request.path, "model": model, "latencyMs": latency_ms, "success": false, "error": error });
                self.log_action(ActionType::ExplainCompleted, data);
                self.broadcast(ServerMessage::ExplainError(PathError { path: request.path, error }));
            }
        }
    }

    /// The stage to explain at: an assessment whose skill area names the language, else the
    /// phase's skill area's, else the most recent, else novice (FR-152).
    fn explain_stage(&self, language: &str, skill_area: Option<&str>) -> String {
        let assessments = self.db().dreyfus_assessments().unwrap_or_default();
        let language = language.to_lowercase();
        let by_language =
            assessments.iter().find(|a| !language.is_empty() && a.skill_area.to_lowercase().contains(&language));
        let by_area =
            || skill_area.and_then(|area| assessments.iter().find(|a| a.skill_area.eq_ignore_ascii_case(area)));
        let latest = || assessments.iter().max_by_key(|a| a.assessed_at);
        by_language.or_else(by_area).or_else(latest).map_or("novice", |a| a.stage.as_str()).to_owned()
    }
}

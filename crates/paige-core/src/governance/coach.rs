//! Coach mode (no `.orchestration/`): Claude Code may read and explain, the learner writes
//! the code. Writes and mutating Bash are denied with a coaching reason; the persona, the
//! session state and the learner's unsaved diffs are added as context.

use super::tools;
use super::{HookDecision, HookEvent, HookInput};
use crate::Core;

impl Core {
    pub(super) fn coach(&self, event: HookEvent, input: &HookInput) -> HookDecision {
        let tool = input.tool_name.as_deref().unwrap_or("");
        match event {
            HookEvent::PreToolUse if tools::is_write_tool(tool) => HookDecision::Deny {
                reason: format!(
                    "Paige is in coach mode: the learner writes the code. Do not use {tool}; instead explain \
                     the change, point to the file and lines, and let the learner type it."
                ),
            },
            HookEvent::PreToolUse if tool == "Bash" && tools::is_mutating(tool, input.tool_input.as_ref()) => {
                HookDecision::Deny {
                    reason: "Paige is in coach mode: only read-only commands may run. Suggest the command to the \
                             learner and let them run it."
                        .into(),
                }
            }
            HookEvent::SessionStart => HookDecision::Context {
                context: format!(
                    "{}\n\n{}",
                    crate::prompts::coach_persona::SYSTEM_PROMPT.trim_end(),
                    self.coach_state()
                ),
            },
            HookEvent::UserPromptSubmit => HookDecision::Context { context: self.coach_prompt_context() },
            _ => HookDecision::None,
        }
    }

    fn coach_state(&self) -> String {
        let Some(session) = self.active_session() else {
            return "Session state: no coaching session is active yet.".into();
        };
        let issue = match (session.issue_number, &session.issue_title) {
            (Some(n), Some(t)) => format!("#{n} {t}"),
            (Some(n), None) => format!("#{n}"),
            (None, Some(t)) => t.clone(),
            (None, None) => "(none)".into(),
        };
        let phase = self
            .current_phase(&session.id)
            .map(|p| {
                format!(
                    "phase {} \"{}\" ({}), hint level {}",
                    p.number,
                    p.title,
                    p.status.as_str(),
                    p.hint_level.as_str()
                )
            })
            .unwrap_or_else(|| "no phase yet".into());
        format!("Session state: issue {issue}; {phase}.")
    }

    fn current_phase(&self, session_id: &str) -> Option<crate::db::Phase> {
        let plans = self.db().plans_for_session(session_id).ok()?;
        let plan = plans.last()?;
        let phases = self.db().phases_for_plan(&plan.id).ok()?;
        phases
            .iter()
            .find(|p| p.status == crate::db::PhaseStatus::Active)
            .or_else(|| phases.iter().find(|p| p.status != crate::db::PhaseStatus::Complete))
            .cloned()
    }

    fn coach_prompt_context(&self) -> String {
        let mut out = self.coach_state();
        let diffs = self.dirty_diffs();
        if diffs.is_empty() {
            out.push_str("\n\nThe learner has no unsaved changes in the editor.");
        } else {
            out.push_str("\n\nThe learner's unsaved changes in the editor (what is on screen now):");
            for diff in diffs {
                out.push_str(&format!("\n\n{}:\n{}", diff.path, diff.diff));
            }
        }
        out
    }
}

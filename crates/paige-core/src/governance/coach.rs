//! Coach mode (no `.orchestration/`): Claude Code may read and explain, the learner writes
//! the code. Unknown is denied: only calls known to change nothing run — reads, read-only
//! shell commands, Paige's own MCP tools, other servers' tools the learner allowed, and
//! subagents (whose calls come through these same hooks). Writes, shell commands that change
//! files or that Paige cannot read, tools that schedule or write elsewhere, and tools Paige
//! does not know yet are denied with a coaching reason. The persona, the session state and
//! the learner's unsaved diffs are added as context.

use super::Governance;
use super::bash::Effect;
use super::tools::ToolCall;
use super::{HookDecision, HookEvent};

impl Governance {
    pub(super) fn coach(&self, event: HookEvent, input: &super::HookInput, call: &ToolCall) -> HookDecision {
        let deny = |reason: String| HookDecision::Deny { reason };
        match (event, call) {
            (HookEvent::PreToolUse, ToolCall::Write { tool, .. }) => deny(format!(
                "Paige is in coach mode: the learner writes the code. Do not use {tool}; instead explain \
                 the change, point to the file and lines, and let the learner type it."
            )),
            (HookEvent::PreToolUse, ToolCall::Bash { parsed, .. }) => match &parsed.effect {
                Effect::ReadOnly => HookDecision::None,
                Effect::Mutating(why) => deny(format!(
                    "Paige is in coach mode: the learner's files are theirs to change, and this command \
                     would change files ({why}). Suggest the command to the learner and let them run it."
                )),
                Effect::Unknown(why) => deny(format!(
                    "Paige is in coach mode and runs only commands it knows to be read-only; it cannot tell \
                     what this one does ({why}). Suggest the command to the learner, say what it does, and \
                     let them run it — or use the Read tool or a read-only command (ls, cat, grep, find)."
                )),
            },
            (HookEvent::PreToolUse, ToolCall::OtherMcp { tool }) if !self.coach_allows_mcp(tool) => deny(format!(
                "Paige is in coach mode and {tool} is another server's tool that may change the \
                 learner's files. The learner can allow it in Paige's settings (coach.allowedMcpTools)."
            )),
            (HookEvent::PreToolUse, ToolCall::Refused { tool, why }) => deny(format!(
                "Paige is in coach mode, so {tool} is refused: it {why}. Explain what you would do and let \
                 the learner do it."
            )),
            (HookEvent::PreToolUse, ToolCall::Unknown { tool }) => deny(format!(
                "Paige does not know the tool {tool} yet, so in coach mode it is refused; it may change the \
                 learner's files. Use the Read tool or a read-only command (ls, cat, grep, find) instead, or explain what you \
                 would do and let the learner do it."
            )),
            (HookEvent::SessionStart, _) => HookDecision::Context {
                context: format!(
                    "{}\n\n{}{}",
                    crate::prompts::coach_persona::SYSTEM_PROMPT.trim_end(),
                    self.coach_state(),
                    // A session without a plan: what to do first (issue 28's kickoff).
                    self.coaching().coaching_kickoff().map(|k| format!("\n\n{k}")).unwrap_or_default()
                ),
            },
            (HookEvent::UserPromptSubmit, _) => {
                HookDecision::Context { context: self.coach_prompt_context(input.prompt.as_deref()) }
            }
            _ => HookDecision::None,
        }
    }

    /// Whether the user allowed another server's MCP tool in coach mode. Unreadable
    /// settings allow nothing.
    fn coach_allows_mcp(&self, tool: &str) -> bool {
        crate::settings::Settings::load(&self.config().data_dir).is_ok_and(|s| s.coach.allows(tool))
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
        let mut state = format!("Session state: issue {issue}; {phase}.");
        if let Some(intake) = self.coaching().intake().context() {
            state.push(' ');
            state.push_str(&intake);
        }
        state
    }

    fn current_phase(&self, session_id: &str) -> Option<crate::db::Phase> {
        let plan = self.db().current_plan(session_id).ok()??;
        let phases = self.db().phases_for_plan(&plan.id).ok()?;
        crate::db::current_phase(&phases).cloned()
    }

    /// The context every prompt gets; the kickoff line Paige typed (`Coaching::kickoff_line`)
    /// brings the kickoff itself with it.
    fn coach_prompt_context(&self, prompt: Option<&str>) -> String {
        let mut out = self.coach_state();
        let kickoff_line = prompt.is_some_and(|p| matches!(self.db().delivery_kind(p), Ok(Some(k)) if k == "kickoff"));
        if let Some(kickoff) = self.coaching().coaching_kickoff().filter(|_| kickoff_line) {
            out.push_str("\n\n");
            out.push_str(&kickoff);
        }
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

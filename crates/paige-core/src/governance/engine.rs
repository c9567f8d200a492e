//! The decisions: pure rules over the hook payload, the sidecar files and the session's
//! persisted state. Every mutating PreToolUse that cannot be checked is denied.

use crate::sync::Locked;
use std::path::Path;

use serde_json::Value;

use super::Governance;
use super::context::IntentContext;
use super::intents::{self, Intent, IntentStatus, IntentsFile, Orchestration};
use super::ledger::{self, NewTrace, TraceKind};
use super::tools::ToolCall;
use super::{GovernanceError, HookDecision, HookEvent, HookInput};
use crate::db::{AgentSession, AgentState};

/// This many identical calls in a row pass; the next trips the circuit breaker.
pub const BREAKER_LIMIT: i64 = 3;
/// A tool failing this many times in a row is a lesson for the Shared Brain.
pub const FAILURE_LESSON_AT: i64 = 3;
/// Governed decisions read, change and write a session's state and the sidecar files;
/// Claude Code runs hooks of parallel tool calls concurrently, so they take turns.
static GOVERNED: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Governance {
    fn orchestration(&self) -> Orchestration {
        Orchestration::new(self.project_root().path())
    }

    /// Whether this project is under governance: `.orchestration/` exists now (recorded), or
    /// existed once.
    pub fn governance_enabled(&self) -> Result<bool, GovernanceError> {
        let root = self.project_root().path();
        if self.orchestration().exists() {
            if !self.db().governance_enabled(root)? {
                self.db().enable_governance(root)?;
            }
            return Ok(true);
        }
        Ok(self.db().governance_enabled(root)?)
    }

    /// Validates an intent for selection and returns its context. Does not bind it to any
    /// Claude Code session: the hooks around the MCP call do that.
    pub fn select_active_intent(&self, intent_id: &str) -> Result<IntentContext, GovernanceError> {
        let orch = self.orchestration();
        if !orch.exists() {
            return Err(GovernanceError::NotGoverned);
        }
        let file = orch.load()?;
        let intent = selectable(&file, intent_id, orch.project_root())?;
        Ok(self.intent_context(&orch, intent))
    }

    /// The one entry point for every hook. Never panics on outside data; an internal error
    /// on a mutating PreToolUse becomes a deny.
    pub fn handle_hook(&self, event: HookEvent, input: &HookInput) -> HookDecision {
        let call = input.call();
        let mutating = event == HookEvent::PreToolUse && call.may_mutate();
        let result = match self.governance_enabled() {
            Ok(false) => Ok(self.coach(event, input, &call)).and_then(|d| self.watch(event, input, &call, d, false)),
            Ok(true) => self.governed(event, input, &call).and_then(|d| self.watch(event, input, &call, d, true)),
            Err(err) => Err(err),
        };
        match result {
            Ok(HookDecision::Context { mut context }) => {
                // Unsaved diffs can be long; Claude Code gets a bounded context.
                let max = self.config().limits.max_hook_context_bytes;
                crate::limits::truncate_with_marker(&mut context, max, "context");
                HookDecision::Context { context }
            }
            Ok(decision) => decision,
            Err(err) if mutating => HookDecision::Deny { reason: format!("paige could not check this action: {err}") },
            Err(err) => {
                tracing::warn!(event = event.name(), "hook engine error: {err}");
                HookDecision::None
            }
        }
    }

    // ---- governed mode ----------------------------------------------------------------

    fn governed(&self, event: HookEvent, input: &HookInput, call: &ToolCall) -> Result<HookDecision, GovernanceError> {
        let _turn = GOVERNED.locked();
        let orch = self.orchestration();
        let root = orch.project_root().to_owned();
        let tool = call.tool();
        let file = match orch.exists() {
            true => orch.load(),
            false => Err(GovernanceError::Io {
                path: orch.dir(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "directory is missing"),
            }),
        };
        let mut file = match file {
            Ok(file) => file,
            Err(err) => return Ok(fail_safe(event, call, &err)),
        };
        let mut session = self.db().agent_session(&input.session_id)?;
        let decision = match event {
            HookEvent::SessionStart => {
                if session.state == AgentState::ContextualizedAction {
                    // A resumed session keeps its intent only while it is still in progress.
                    self.revalidate(&orch, &file, &mut session);
                }
                HookDecision::Context { context: self.state_prompt(&orch, &file, &session) }
            }
            HookEvent::UserPromptSubmit => {
                session.prompt_submitted();
                HookDecision::Context { context: self.state_prompt(&orch, &file, &session) }
            }
            HookEvent::PreToolUse => self.pre_tool_use(&orch, &mut file, &mut session, input, call)?,
            HookEvent::PostToolUse => {
                self.post_tool_use(&orch, &mut file, &mut session, input, call)?;
                // Bound to an intent its view does not make writable: started again for it.
                match (call, &input.paige_view, session.intent_id.as_deref()) {
                    (ToolCall::SelectIntent { .. }, Some(view), Some(bound)) if view.intent != bound => {
                        HookDecision::Context { context: self.relaunch_for(view, bound) }
                    }
                    _ => HookDecision::None,
                }
            }
            HookEvent::PostToolUseFailure => {
                if session.tool_failed(tool) == FAILURE_LESSON_AT {
                    let intent = session.intent_id.as_deref().unwrap_or("no intent");
                    self.add_lesson(&format!(
                        "{tool} failed {FAILURE_LESSON_AT} times in a row under {intent}; check its input before retrying."
                    ))?;
                }
                HookDecision::None
            }
            // Claude Code passes this hook's output on to the compaction as instructions. The
            // intent: the one bound, else the last this session worked under (a `/compact`
            // typed after the turn, or in a resumed session, comes with none bound).
            HookEvent::PreCompact => {
                let entries = ledger::read_all(&orch.trace_path())?;
                let last = || {
                    entries.iter().rev().filter(|e| e.session_id == input.session_id).find_map(|e| e.intent_id.clone())
                };
                match session.intent_id.clone().or_else(last).and_then(|id| file.get(&id)) {
                    Some(intent) => HookDecision::Context {
                        context: format!(
                            "Keep the governance context: the session works under intent {} ({}), scope {}. \
                             Trace summary: {}",
                            intent.id,
                            intent.name,
                            intent.owned_scope.join(", "),
                            ledger::summary(&entries, &intent.id, 20)
                        ),
                    },
                    None => HookDecision::None,
                }
            }
            HookEvent::SessionEnd => {
                session.ended();
                HookDecision::None
            }
            HookEvent::Stop => {
                // A switch of views asked for in this turn can be made now.
                if let Some(view) = &input.paige_view {
                    self.turn_ended(&view.launch);
                }
                // State 3 completes with the turn: an intent finished in it is a lesson (FR-010).
                if session.state == AgentState::ContextualizedAction {
                    self.revalidate(&orch, &file, &mut session);
                }
                HookDecision::None
            }
        };
        if !input.session_id.is_empty() {
            self.db().save_agent_session(&root, &session)?;
        }
        Ok(decision)
    }

    /// What the session last saw of a file (for the stale-file check). The session's row is
    /// written first: its first hook may be this one.
    fn remember_view(
        &self,
        orch: &Orchestration,
        session: &AgentSession,
        rel: &str,
        sha256: &str,
    ) -> Result<(), GovernanceError> {
        if session.session_id.is_empty() {
            return Ok(());
        }
        self.db().save_agent_session(orch.project_root(), session)?;
        Ok(self.db().record_file_view(&session.session_id, rel, sha256)?)
    }

    /// State 2 lists the intents; state 3 shows scope and constraints.
    fn state_prompt(&self, orch: &Orchestration, file: &IntentsFile, session: &AgentSession) -> String {
        if let (AgentState::ContextualizedAction, Some(intent)) =
            (session.state, session.intent_id.as_deref().and_then(|id| file.get(id)))
        {
            return format!(
                "Paige governance — State 3 (Contextualized Action).\n{}",
                self.intent_context(orch, intent).to_text()
            );
        }
        let available: Vec<String> = file
            .active_intents
            .iter()
            .filter(|i| matches!(i.status, IntentStatus::Pending | IntentStatus::InProgress))
            .map(|i| format!("- {} [{}] {} — scope: {}", i.id, i.status.as_str(), i.name, i.owned_scope.join(", ")))
            .collect();
        let list =
            if available.is_empty() { "(none: ask the human to add one)".to_owned() } else { available.join("\n") };
        format!(
            "Paige governance — Reasoning Intercept. Before any other tool, analyse the request and call \
             select_active_intent with the id of the intent it belongs to. Available intents:\n{list}"
        )
    }

    /// A bound intent that is no longer in progress sends the session back to state 2.
    /// Returns the reason when it did.
    fn revalidate(&self, orch: &Orchestration, file: &IntentsFile, session: &mut AgentSession) -> Option<String> {
        let id = session.intent_id.clone()?;
        let status = file.get(&id).map(|i| i.status);
        if status == Some(IntentStatus::InProgress) {
            return None;
        }
        session.back_to_intercept();
        if status == Some(IntentStatus::Completed) {
            let summary = ledger::read_all(&orch.trace_path()).map(|e| ledger::summary(&e, &id, 3)).unwrap_or_default();
            let _ = self.add_lesson(&format!("{id} completed. {}", summary.lines().next().unwrap_or("")));
        }
        let status = status.map(IntentStatus::as_str).unwrap_or("gone from active_intents.yaml");
        Some(format!("Stale Intent: {id} is {status}; call select_active_intent again before acting"))
    }

    fn pre_tool_use(
        &self,
        orch: &Orchestration,
        file: &mut IntentsFile,
        session: &mut AgentSession,
        input: &HookInput,
        call: &ToolCall,
    ) -> Result<HookDecision, GovernanceError> {
        let tool = call.tool();
        let tool_input = input.tool_input.as_ref();
        let root = orch.project_root();
        // What Claude Code spent since its last call goes to the intent bound meanwhile (none
        // before the handshake): a token budget counts its own intent's work (issue 42).
        // The transcript is read only where an intent has a token budget: not on every call.
        let budgeted = file.active_intents.iter().any(|i| i.budget.as_ref().is_some_and(|b| b.tokens.is_some()));
        let total = input.transcript_path.as_deref().filter(|_| budgeted).and_then(super::transcript::tokens);
        let intent_tokens = match total {
            Some(total) => self.db().add_intent_tokens(root, &input.session_id, session.intent_id.as_deref(), total)?,
            None => None,
        };
        if let ToolCall::SelectIntent { intent_id } = call {
            let id = intent_id.as_str();
            if session.state == AgentState::Request {
                session.state = AgentState::ReasoningIntercept;
            }
            let checked = selectable(file, id, root).and_then(|intent| {
                match self.db().intent_holder(root, &intent.id, &input.session_id)? {
                    Some(_) => Err(GovernanceError::NotSelectable {
                        id: intent.id.clone(),
                        status: "held by another Claude Code session",
                    }),
                    None => Ok(()),
                }
            });
            return Ok(match checked {
                Ok(()) => {
                    session.pending_intent_id = Some(id.to_owned());
                    HookDecision::None
                }
                Err(err) => self.deny(orch, session, call, format!("Intent Validation Error: {err}"))?,
            });
        }
        if session.state != AgentState::ContextualizedAction {
            let ids: Vec<&str> = file
                .active_intents
                .iter()
                .filter(|i| matches!(i.status, IntentStatus::Pending | IntentStatus::InProgress))
                .map(|i| i.id.as_str())
                .collect();
            let reason = format!(
                "State Violation: Reasoning Intercept Required. Call select_active_intent first (available: {}).",
                if ids.is_empty() { "none".to_owned() } else { ids.join(", ") }
            );
            return self.deny(orch, session, call, reason);
        }
        if let Some(reason) = self.revalidate(orch, file, session) {
            return self.deny(orch, session, call, reason);
        }
        let Some(intent) = session.intent_id.clone().and_then(|id| file.get(&id).cloned()) else {
            return self.deny(orch, session, call, "State Violation: Reasoning Intercept Required".into());
        };

        // Circuit breaker: the same call three times in a row — the same by what it does
        // (`repetition_key`), so a new description does not make it another call.
        let call_hash = ledger::sha256_hex(repetition_key(tool, tool_input).as_bytes());
        if session.repeated(call_hash) > BREAKER_LIMIT {
            let reason = format!(
                "Circuit Breaker: loop detected — {tool} was called {} times in a row with the same input. Intent \
                 {} is BLOCKED until a human resets it (`paige intents reset {}`); the session ends.",
                session.repeat_count, intent.id, intent.id
            );
            self.trip(orch, file, session, call, &intent.id, reason.clone())?;
            return Ok(HookDecision::Stop { reason });
        }

        // Budgets.
        let turns = self.db().add_intent_turn(root, &intent.id)?;
        if let Some(limit) = intent.budget.as_ref().and_then(|b| b.turns)
            && turns > limit
        {
            let reason = format!(
                "Budget Exceeded: intent {} used its {limit} turns and is BLOCKED until a human resets it.",
                intent.id
            );
            return self.trip(orch, file, session, call, &intent.id, reason);
        }
        if let (Some(limit), Some(used)) = (intent.budget.as_ref().and_then(|b| b.tokens), intent_tokens)
            && used > limit
        {
            let reason = format!(
                "Budget Exceeded: intent {} used {used} of {limit} tokens and is BLOCKED until a human resets it.",
                intent.id
            );
            return self.trip(orch, file, session, call, &intent.id, reason);
        }

        match self.check_write(orch, file, session, call, &intent)? {
            Some(reason) => self.deny(orch, session, call, reason),
            None => Ok(HookDecision::None),
        }
    }

    fn post_tool_use(
        &self,
        orch: &Orchestration,
        file: &mut IntentsFile,
        session: &mut AgentSession,
        input: &HookInput,
        call: &ToolCall,
    ) -> Result<(), GovernanceError> {
        let tool = call.tool();
        if let ToolCall::SelectIntent { intent_id } = call {
            let id = intent_id.as_str();
            if session.pending_intent_id.as_deref() == Some(id) {
                session.bind(id);
                if let Some(intent) = file.get_mut(id)
                    && intent.status == IntentStatus::Pending
                {
                    intent.status = IntentStatus::InProgress;
                    orch.save(file)?;
                    self.paige_wrote(&orch.intents_path());
                }
            }
            return Ok(());
        }
        session.tool_succeeded(tool);
        if let ToolCall::Read { file } = call {
            if let Some(path) = file.as_deref().and_then(|t| self.project_root().resolve(t).ok())
                && let Ok(bytes) = crate::files::read_bytes(&path)
            {
                self.remember_view(orch, session, path.rel(), &ledger::sha256_hex(&bytes))?;
            }
            return Ok(());
        }
        // Bash and other servers' tools are ledgered by the change detector, one entry per
        // file they changed, with its hash (SC-002); only the write tools are recorded here.
        let ToolCall::Write { file: target, blocks, .. } = call else {
            return Ok(());
        };
        let Some(path) = target.as_deref().and_then(|t| self.project_root().resolve(t).ok()) else {
            return Ok(());
        };
        let content = crate::files::read_bytes(&path).map_err(|err| GovernanceError::Io {
            path: path.abs().to_owned(),
            source: std::io::Error::other(err.to_string()),
        })?;
        let file_hash = ledger::sha256_hex(&content);
        let text = String::from_utf8_lossy(&content);
        let trace = NewTrace {
            model: input.transcript_path.as_deref().and_then(super::transcript::model),
            file: Some(path.rel().to_owned()),
            blocks: blocks.iter().filter_map(|b| ledger::locate_block(&text, b)).collect(),
            file_hash: Some(file_hash.clone()),
            reason: Some(super::watch::mutation_reason(
                input,
                session.intent_id.as_deref().and_then(|id| file.get(id)),
            )),
            ..self.trace(TraceKind::Mutation, session, call)
        };
        self.remember_view(orch, session, path.rel(), &file_hash)?;
        ledger::append(&orch.trace_path(), trace)?;
        self.paige_wrote(&orch.trace_path());
        self.write_intent_map(orch, file)
    }
}

/// The intent if it can be selected: known, not completed or blocked, and narrow enough.
fn selectable<'a>(file: &'a IntentsFile, id: &str, root: &Path) -> Result<&'a Intent, GovernanceError> {
    let intent = file.get(id).ok_or_else(|| GovernanceError::UnknownIntent(id.to_owned()))?;
    if matches!(intent.status, IntentStatus::Completed | IntentStatus::Blocked) {
        return Err(GovernanceError::NotSelectable { id: id.to_owned(), status: intent.status.as_str() });
    }
    intents::check_scope_breadth(intent, root)?;
    Ok(intent)
}

/// Governance was enabled but its state is missing or corrupt: deny every mutating action.
fn fail_safe(event: HookEvent, call: &ToolCall, err: &GovernanceError) -> HookDecision {
    let message = format!(
        "Fail-Safe: governance state is missing or corrupt ({err}). Every change is denied until a human \
         restores .orchestration/ or runs `paige intents init`."
    );
    match event {
        HookEvent::PreToolUse if matches!(call, ToolCall::SelectIntent { .. }) || call.may_mutate() => {
            HookDecision::Deny { reason: message }
        }
        // The spec's fail-safe halts the system: no new request is processed until restored.
        HookEvent::UserPromptSubmit => HookDecision::Block { reason: message },
        HookEvent::SessionStart => HookDecision::Context { context: message },
        _ => HookDecision::None,
    }
}

/// What makes two calls the same for the circuit breaker (issue 42): the tool and what it
/// does — a Bash command with its whitespace collapsed; any other tool's input without the
/// words it carries for people (`description`). Not the wording around it, which a looping
/// agent can vary at no cost.
pub fn repetition_key(tool: &str, input: Option<&Value>) -> String {
    let input = input.cloned().unwrap_or(Value::Null);
    let what = match (tool, &input) {
        ("Bash", Value::Object(fields)) => {
            let command = fields.get("command").and_then(Value::as_str).unwrap_or_default();
            command.split_whitespace().collect::<Vec<_>>().join(" ")
        }
        (_, Value::Object(fields)) => {
            let mut fields = fields.clone();
            fields.remove("description");
            Value::Object(fields).to_string()
        }
        _ => input.to_string(),
    };
    format!("{tool}\n{what}")
}

//! What governed mode writes down: ledger entries for denials and breaker trips, blocking an
//! intent, lessons in the Shared Brain (`AGENT.md`), and `intent_map.md`.

use super::Governance;
use super::context::LESSONS;
use super::intents::{IntentStatus, IntentsFile, Orchestration};
use super::ledger::{self, NewTrace, TraceKind};
use super::tools::ToolCall;
use super::{GovernanceError, HookDecision};
use crate::db::AgentSession;

impl Governance {
    /// `intent_map.md` from the ledger's index, brought up to date first.
    pub(super) fn write_intent_map(&self, orch: &Orchestration, file: &IntentsFile) -> Result<(), GovernanceError> {
        self.ledger_index(orch)?;
        let files = self.db().ledger_file_intents(orch.project_root())?;
        ledger::write_intent_map(orch, file, &files)?;
        self.paige_wrote(&orch.map_path());
        Ok(())
    }

    /// Paige wrote `path` itself (its governance files, a lesson): what it holds now is the
    /// change detector's baseline, so a window open meanwhile for the agent's call does not
    /// take it for the agent's and undo it (issue 42). An agent's own write to it afterwards
    /// is still the agent's.
    pub(super) fn paige_wrote(&self, path: &std::path::Path) {
        if let Ok(rel) = path.strip_prefix(self.project_root().path()) {
            self.detector().paige_wrote(&rel.to_string_lossy());
        }
    }

    pub(super) fn deny(
        &self,
        orch: &Orchestration,
        session: &AgentSession,
        call: &ToolCall,
        reason: String,
    ) -> Result<HookDecision, GovernanceError> {
        self.record(orch, session, call, TraceKind::Denial, &reason)?;
        Ok(HookDecision::Deny { reason })
    }

    /// Breaker or budget: the intent becomes BLOCKED and the session goes back to state 2.
    pub(super) fn trip(
        &self,
        orch: &Orchestration,
        file: &mut IntentsFile,
        session: &mut AgentSession,
        call: &ToolCall,
        intent_id: &str,
        reason: String,
    ) -> Result<HookDecision, GovernanceError> {
        if let Some(intent) = file.get_mut(intent_id) {
            intent.status = IntentStatus::Blocked;
            orch.save(file)?;
            self.paige_wrote(&orch.intents_path());
        }
        self.record(orch, session, call, TraceKind::Breaker, &reason)?;
        session.back_to_intercept();
        Ok(HookDecision::Deny { reason })
    }

    pub(super) fn record(
        &self,
        orch: &Orchestration,
        session: &AgentSession,
        call: &ToolCall,
        kind: TraceKind,
        reason: &str,
    ) -> Result<(), GovernanceError> {
        let trace = NewTrace {
            intent_id: session.intent_id.clone().or_else(|| session.pending_intent_id.clone()),
            reason: Some(reason.to_owned()),
            ..self.trace(kind, session, call)
        };
        ledger::append(&orch.trace_path(), trace)?;
        self.paige_wrote(&orch.trace_path());
        Ok(())
    }

    /// A ledger entry for `call` in `session`, stamped now; callers fill in what its kind
    /// needs (the file's hash, the reason).
    pub(super) fn trace(&self, kind: TraceKind, session: &AgentSession, call: &ToolCall) -> NewTrace {
        NewTrace {
            id: uuid::Uuid::new_v4().to_string(),
            timestamp: self.now(),
            kind,
            intent_id: session.intent_id.clone(),
            session_id: session.session_id.clone(),
            model: None,
            tool: call.tool().to_owned(),
            file: call.file().map(str::to_owned),
            blocks: Vec::new(),
            file_hash: None,
            command: call.command().map(str::to_owned),
            reason: None,
        }
    }

    /// Appends a dated lesson to `AGENT.md` (created if missing), through the path guard: a
    /// lessons file that links out of the project or is a FIFO is refused, never written.
    pub(super) fn add_lesson(&self, lesson: &str) -> Result<(), GovernanceError> {
        let err =
            |source: std::io::Error| GovernanceError::Io { path: self.project_root().path().join(LESSONS), source };
        let path = self.project_root().resolve(LESSONS).map_err(|e| err(std::io::Error::other(e)))?;
        let header = "# Shared Brain\n\nLessons agents learned in this project.\n\n";
        let line = format!("- {}: {lesson}\n", self.now().format("%Y-%m-%d"));
        crate::files::append_bytes(&path, header.as_bytes(), line.as_bytes())
            .map_err(|e| err(std::io::Error::other(e)))?;
        self.paige_wrote(path.abs());
        Ok(())
    }
}

//! Scope and ownership in governed mode: may the bound intent's write touch this file — inside
//! its `owned_scope`, not owned by another in-progress intent (by scope, or as the last
//! intent the ledger's index records writing it), and not changed on disk since the session
//! last read it.
//!
//! Every call that may change files is checked before it runs, not only the write tools: a
//! Bash command by the files it names (`bash::BashCommand::writes`), and one that writes what
//! Paige cannot name — or a tool Paige cannot read (another server's MCP tool, a tool it does
//! not know) — is denied while an intent is bound (issue 42).

use super::Governance;
use super::GovernanceError;
use super::bash::{BashCommand, Effect};
use super::intents::{self, Intent, IntentStatus, IntentsFile, Orchestration};
use super::ledger;
use super::tools::ToolCall;
use crate::db::AgentSession;

impl Governance {
    /// Why the write may not happen, or `None` when it may (calls other than writes may).
    pub(super) fn check_write(
        &self,
        orch: &Orchestration,
        file: &IntentsFile,
        session: &AgentSession,
        call: &ToolCall,
        intent: &Intent,
    ) -> Result<Option<String>, GovernanceError> {
        let (tool, target) = match call {
            ToolCall::Write { tool, file, .. } => (tool, file),
            ToolCall::Bash { parsed, .. } => return self.check_command(orch, file, intent, parsed),
            ToolCall::OtherMcp { tool } | ToolCall::Unknown { tool } | ToolCall::Refused { tool, .. } => {
                return Ok(Some(format!(
                    "Scope Violation: Paige cannot tell which files {tool} changes, so it cannot keep it inside intent \
                     {}'s owned_scope ({}). Use Edit or Write, or a Bash command that names the files it writes.",
                    intent.id,
                    intent.owned_scope.join(", ")
                )));
            }
            _ => return Ok(None),
        };
        let Some(target) = target.as_deref() else {
            return Ok(Some(format!("{tool} names no file")));
        };
        let path = match self.project_root().resolve(target) {
            Ok(path) => path,
            Err(err) => return Ok(Some(format!("Scope Violation: {target}: {err}"))),
        };
        let rel = path.rel().to_owned();
        let in_scope = intents::scope_set(intent)?.is_match(&rel);
        if let Some(owner) = self.other_owner(orch, file, &intent.id, &rel, in_scope)? {
            return Ok(Some(format!("Governance Violation: File owned by Intent [{owner}]")));
        }
        if !in_scope {
            return Ok(Some(format!(
                "Scope Violation: {rel} is outside intent {}'s owned_scope ({})",
                intent.id,
                intent.owned_scope.join(", ")
            )));
        }
        if let Some(seen) = self.db().file_view(&session.session_id, &rel)?
            && let Ok(bytes) = crate::files::read_bytes(&path)
            && ledger::sha256_hex(&bytes) != seen
        {
            return Ok(Some(format!(
                "Stale File: {rel} changed on disk since you last read it; read it again before writing"
            )));
        }
        Ok(None)
    }

    /// A Bash command may run when it only reads, or when every file it names is inside the
    /// intent's scope and owned by no other intent. A directory it names (`rm -r dir`, `cp f
    /// dir/`) is inside when all of it is (`dir/**`).
    fn check_command(
        &self,
        orch: &Orchestration,
        file: &IntentsFile,
        intent: &Intent,
        parsed: &BashCommand,
    ) -> Result<Option<String>, GovernanceError> {
        if parsed.is_read_only() {
            return Ok(None);
        }
        let scope = || format!("intent {}'s owned_scope ({})", intent.id, intent.owned_scope.join(", "));
        let Some(named) = &parsed.writes else {
            let why = match &parsed.effect {
                Effect::Mutating(why) | Effect::Unknown(why) => why.as_str(),
                Effect::ReadOnly => "",
            };
            return Ok(Some(format!(
                "Scope Violation: Paige cannot name every file this command writes ({why}), so it cannot keep it \
                 inside {}. Name the files it writes (`sed -i 's/a/b/' src/x.rs`, `> src/x.rs`) or use Edit or Write.",
                scope()
            )));
        };
        let set = intents::scope_set(intent)?;
        for name in named {
            let path = match self.project_root().resolve(name) {
                Ok(path) => path,
                Err(err) => return Ok(Some(format!("Scope Violation: {name}: {err}"))),
            };
            let rel = path.rel().to_owned();
            let in_scope = set.is_match(&rel) || set.is_match(format!("{rel}/\u{1}"));
            if let Some(owner) = self.other_owner(orch, file, &intent.id, &rel, in_scope)? {
                return Ok(Some(format!("Governance Violation: File owned by Intent [{owner}] ({rel})")));
            }
            if !in_scope {
                return Ok(Some(format!("Scope Violation: this command writes {rel}, outside {}", scope())));
            }
        }
        Ok(None)
    }

    /// Another in-progress intent owning `rel`: by its scope (when ours does not cover the
    /// file), or as the last intent recorded writing it.
    pub(super) fn other_owner(
        &self,
        orch: &Orchestration,
        file: &IntentsFile,
        mine: &str,
        rel: &str,
        in_scope: bool,
    ) -> Result<Option<String>, GovernanceError> {
        let others: Vec<&Intent> =
            file.active_intents.iter().filter(|i| i.id != mine && i.status == IntentStatus::InProgress).collect();
        if !in_scope {
            for other in &others {
                if intents::scope_set(other).map(|s| s.is_match(rel)).unwrap_or(false) {
                    return Ok(Some(other.id.clone()));
                }
            }
        }
        self.ledger_index(orch)?;
        let last_writer = self.db().ledger_last_writer(orch.project_root(), rel)?;
        Ok(last_writer.filter(|w| others.iter().any(|o| &o.id == w)))
    }
}

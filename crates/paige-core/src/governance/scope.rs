//! Scope and ownership in governed mode: may the bound intent's write touch this file — inside
//! its `owned_scope`, not owned by another in-progress intent (by scope, or as the last
//! intent the ledger's index records writing it), and not changed on disk since the session
//! last read it.

use super::Governance;
use super::GovernanceError;
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
        let ToolCall::Write { tool, file: target, .. } = call else {
            return Ok(None);
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

//! The ledger's SQLite cache kept current: checked against `agent_trace.jsonl`'s size and
//! last hash before each use; lines appended since are indexed on their own, anything else
//! (an edit, a truncation, another tool's rewrite) rebuilds it from the file, the source of
//! truth. So a decision costs the same with a 100,000-line ledger as with an empty one.

use super::Governance;
use super::ledger::{self, TraceEntry, TraceKind};
use super::{GovernanceError, Orchestration};
use crate::db::{IndexedMutation, LedgerHead};

impl Governance {
    pub(super) fn ledger_index(&self, orch: &Orchestration) -> Result<(), GovernanceError> {
        let path = orch.trace_path();
        let project = orch.project_root();
        let io = |source| GovernanceError::Io { path: path.clone(), source };
        let (size, last) = ledger::tail(&path).map_err(io)?;
        let last = last.unwrap_or_else(|| ledger::GENESIS.to_owned());
        let head = self.db().ledger_head(project)?;
        if let Some(head) = &head {
            if head.size == size && head.last_hash == last {
                return Ok(());
            }
            if size > head.size {
                let (entries, clean) = ledger::read_from(&path, head.size).map_err(io)?;
                if clean && entries.first().is_some_and(|e| e.prev_hash == head.last_hash) {
                    let mutations = indexed(&entries, head.lines);
                    let lines = head.lines + entries.len() as i64;
                    self.db().index_ledger(project, false, &mutations, &LedgerHead { size, last_hash: last, lines })?;
                    return Ok(());
                }
            }
        }
        let entries = ledger::read_all(&path)?;
        let lines = entries.len() as i64;
        self.db().index_ledger(project, true, &indexed(&entries, 0), &LedgerHead { size, last_hash: last, lines })?;
        Ok(())
    }
}

fn indexed(entries: &[TraceEntry], before: i64) -> Vec<IndexedMutation> {
    entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match (e.kind, &e.file, &e.intent_id) {
            (TraceKind::Mutation, Some(path), Some(intent)) => {
                Some(IndexedMutation { line: before + i as i64 + 1, path: path.clone(), intent_id: intent.clone() })
            }
            _ => None,
        })
        .collect()
}

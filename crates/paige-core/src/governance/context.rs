//! What an agent working under an intent is told: the intent, its recent history in the
//! ledger, and the Shared Brain (`AGENT.md`, `CLAUDE.md`).

use serde::Serialize;

use super::Governance;
use super::intents::{Intent, Orchestration};
use super::ledger;
use crate::files::ProjectRoot;

/// The lessons file agents add to (the Shared Brain's first file).
pub(super) const LESSONS: &str = "AGENT.md";
const SHARED_BRAIN_FILES: [&str; 2] = [LESSONS, "CLAUDE.md"];
const SHARED_BRAIN_MAX_CHARS: usize = 4000;

/// What `select_active_intent` returns: everything the agent needs to act within the intent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntentContext {
    pub intent_id: String,
    pub name: String,
    pub owned_scope: Vec<String>,
    pub constraints: Vec<String>,
    pub acceptance_criteria: Vec<String>,
    /// A summary of the intent's recent entries in `agent_trace.jsonl`.
    pub recent_history: String,
    /// `AGENT.md` / `CLAUDE.md`, to be followed as high-priority constraints.
    pub shared_brain: String,
}

impl IntentContext {
    pub fn to_text(&self) -> String {
        let list = |items: &[String]| {
            if items.is_empty() {
                "- (none)".to_owned()
            } else {
                items.iter().map(|i| format!("- {i}")).collect::<Vec<_>>().join("\n")
            }
        };
        format!(
            "Active intent {} — {}\n\nOwned scope (you may only change files matching these globs):\n{}\n\n\
             Constraints:\n{}\n\nAcceptance criteria:\n{}\n\nRecent history:\n{}\n\n\
             Shared Brain (high-priority constraints):\n{}",
            self.intent_id,
            self.name,
            list(&self.owned_scope),
            list(&self.constraints),
            list(&self.acceptance_criteria),
            self.recent_history.trim_end(),
            if self.shared_brain.is_empty() { "(no lessons yet)" } else { self.shared_brain.trim_end() },
        )
    }
}

impl Governance {
    pub(super) fn intent_context(&self, orch: &Orchestration, intent: &Intent) -> IntentContext {
        let entries = ledger::read_all(&orch.trace_path()).unwrap_or_default();
        IntentContext {
            intent_id: intent.id.clone(),
            name: intent.name.clone(),
            owned_scope: intent.owned_scope.clone(),
            constraints: intent.constraints.clone(),
            acceptance_criteria: intent.acceptance_criteria.clone(),
            recent_history: ledger::summary(&entries, &intent.id, 10),
            shared_brain: shared_brain(self.project_root()),
        }
    }
}

/// The end of each lessons file, read as the editor reads files: through the path guard, so
/// one that links out of the project, is not a regular file or is over the size cap is
/// left out rather than read (or waited on).
fn shared_brain(root: &ProjectRoot) -> String {
    let mut out = String::new();
    for name in SHARED_BRAIN_FILES {
        let bytes = root.resolve(name).ok().and_then(|path| crate::files::read_bytes(&path).ok());
        if let Some(text) = bytes.and_then(|bytes| String::from_utf8(bytes).ok()) {
            let start = text.len().saturating_sub(SHARED_BRAIN_MAX_CHARS);
            let start = (start..text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
            out.push_str(&format!("From {name}:\n{}\n", &text[start..]));
        }
    }
    out
}

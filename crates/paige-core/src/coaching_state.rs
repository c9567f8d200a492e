//! The coaching handlers' state, which `Core` holds for them (`coaching/`): each session's
//! wrap-up, run once and watched by every caller until it has a result; what a wrap-up did
//! or why it failed; the transcript the last hook named; and the newest message Paige is
//! waiting to type into Claude Code (a newer one supersedes it).

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;
use tokio::sync::watch;

use crate::db::SessionStatus;
use crate::sync::Locked;

/// What a wrap-up did (spec `paige_end_session` output; `session:completed` adds the id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WrapUp {
    #[serde(skip)]
    pub session_id: String,
    /// Gaps this session showed: new ones and known topics that recurred (frequency bumped).
    pub knowledge_gaps: u32,
    pub kata_specs: u32,
    /// Skill areas assessed (inserted or updated).
    pub dreyfus_updates: u32,
    pub memories_stored: u32,
    /// Always `completed`.
    pub session_status: SessionStatus,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WrapUpError {
    /// No session is active and none was just wrapped up (FR-128; the MCP tools' wording).
    #[error("No active session")]
    NoActiveSession,
    /// Ending the session failed (the database); a later call tries again.
    #[error("the session could not be ended: {0}")]
    EndFailed(String),
    /// The wrap-up's task died (a panic); a later call tries again.
    #[error("the wrap-up stopped before it finished")]
    Interrupted,
}

pub(crate) type Outcome = Option<Result<WrapUp, WrapUpError>>;

/// Each session's wrap-up, watched by every caller until it has a result.
#[derive(Default)]
pub(crate) struct WrapUps {
    state: Mutex<WrapUpState>,
}

#[derive(Default)]
pub(crate) struct WrapUpState {
    pub(crate) runs: HashMap<String, watch::Receiver<Outcome>>,
    /// The session most recently wrapped up: the one a call without an active session means.
    pub(crate) last: Option<String>,
}

impl WrapUps {
    pub(crate) fn state(&self) -> std::sync::MutexGuard<'_, WrapUpState> {
        self.state.locked()
    }

    /// Whether `session_id`'s wrap-up has started and not finished.
    pub(crate) fn in_progress(&self, session_id: &str) -> bool {
        self.state().runs.get(session_id).is_some_and(|run| run.borrow().is_none())
    }

    pub(crate) fn forget(&self, session_id: &str) {
        self.state().runs.remove(session_id);
    }
}

/// The transcript the last hook named: what a UI `session:end` condenses.
#[derive(Default)]
pub(crate) struct LastTranscript(pub(crate) Mutex<Option<std::path::PathBuf>>);

/// Which delivery to Claude Code is the newest (`coaching/kickoff.rs`): an older one still
/// waiting for a quiet terminal gives way to it.
#[derive(Default)]
pub(crate) struct Deliveries(pub(crate) std::sync::atomic::AtomicU64);

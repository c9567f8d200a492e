//! The hook engine: the single gateway for every tool call Claude Code makes in a project.
//!
//! `paige hook <event>` forwards each Claude Code hook payload to the running Paige, which
//! calls [`Core::handle_hook`](crate::Core::handle_hook). Two modes:
//! - **coach** (no `.orchestration/`, never had one): the learner writes the code — the
//!   Write/Edit family and mutating Bash are denied with a coaching reason; SessionStart and
//!   UserPromptSubmit add Paige's persona, the session state and the unsaved diffs;
//! - **governed** (`.orchestration/` exists, or existed once — recorded in the database): the
//!   three-state handshake, scope and ownership, stale files, circuit breaker, budgets, and the
//!   audit ledger. A missing or corrupt sidecar then denies every mutating action.

pub mod bash;
mod bash_inputs;
mod coach;
mod context;
mod engine;
mod feature;
pub use engine::repetition_key;
mod index;
pub mod intents;
pub mod ledger;
mod programs;
mod record;
mod scope;
mod session;
pub mod tools;
mod watch;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use context::IntentContext;
pub use feature::{Governance, GovernanceSettings};
pub use intents::{Budget, Intent, IntentStatus, IntentsFile, Orchestration};
pub use tools::{SELECT_TOOL, ToolCall};

pub use crate::hook_event::{HOOK_TIMEOUT_SECS, HookEvent, HookInput, SETTLE_HOOK_TIMEOUT_SECS};
pub use crate::launch::claude_settings;
pub(crate) use crate::transcript;

impl HookInput {
    /// The tool call, parsed once.
    pub fn call(&self) -> ToolCall {
        ToolCall::parse(self.tool_name.as_deref().unwrap_or(""), self.tool_input.as_ref())
    }
}

/// What the engine decided. `None` means no objection: the hook prints nothing, so Claude
/// Code's own permission checks still apply (an `allow` would skip them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum HookDecision {
    None,
    /// PreToolUse: the call does not run; the reason reaches the model.
    Deny {
        reason: String,
    },
    /// UserPromptSubmit: the prompt is not processed.
    Block {
        reason: String,
    },
    /// The session ends (`{"continue": false, "stopReason": ...}`); a PreToolUse's call is
    /// denied too. The circuit breaker's loop-detection error.
    Stop {
        reason: String,
    },
    /// SessionStart / UserPromptSubmit: added to the model's context; PreCompact: added to
    /// the compaction instructions.
    Context {
        context: String,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum GovernanceError {
    #[error("cannot access {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{} is not valid intents YAML: {detail}", path.display())]
    CorruptIntents { path: PathBuf, detail: String },
    #[error("unknown intent {0}")]
    UnknownIntent(String),
    #[error("intent {id} is {status} and cannot be selected")]
    NotSelectable { id: String, status: &'static str },
    #[error("intent {intent} has a bad scope: {detail}")]
    BadScope { intent: String, detail: String },
    #[error("governance is not enabled here: no .orchestration/ (run `paige intents init`)")]
    NotGoverned,
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
}

/// Opens one of governance's own files (the intents, the ledger) as a regular file only,
/// for reading or (with `append`) for reading and appending, created if missing. Never
/// through a symlink at its name or at `.orchestration` itself, either of which could lead
/// out of the project, and never waiting on a FIFO (it opens at once, then is refused). A
/// hook or a tool reading a planted FIFO would otherwise hold the governance lock forever.
pub(crate) fn open_sidecar(path: &std::path::Path, append: bool) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let (dir, name) = sidecar_dir(path)?;
    let access = if append { OFlags::RDWR | OFlags::APPEND | OFlags::CREATE } else { OFlags::RDONLY };
    let flags = access | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let file = match rustix::fs::openat(&dir, name, flags, Mode::from_raw_mode(0o666)) {
        Err(rustix::io::Errno::LOOP) => return Err(not_regular("a symlink")),
        opened => std::fs::File::from(opened?),
    };
    if !file.metadata()?.is_file() {
        return Err(not_regular("a FIFO, socket, device or directory"));
    }
    Ok(file)
}

/// The directory holding a governance file (`<project>/.orchestration`), opened without
/// following a symlink there, and the file's name in it. Opening the file from this handle
/// means a `.orchestration` swapped for a link to elsewhere can never be read or written.
pub(crate) fn sidecar_dir(path: &std::path::Path) -> std::io::Result<(rustix::fd::OwnedFd, &std::ffi::OsStr)> {
    use rustix::fs::{Mode, OFlags};
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file in a project directory");
    let name = path.file_name().ok_or_else(bad)?;
    let dir = path.parent().ok_or_else(bad)?;
    let (project, dir_name) = (dir.parent().ok_or_else(bad)?, dir.file_name().ok_or_else(bad)?);
    let lookup = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let project = rustix::fs::open(project, lookup, Mode::empty())?;
    match rustix::fs::openat(&project, dir_name, lookup | OFlags::NOFOLLOW, Mode::empty()) {
        // With O_PATH|O_NOFOLLOW a symlink opens as itself, so O_DIRECTORY refuses it.
        Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
            let kind = format!("{} is a symlink or a file, not a directory", dir.display());
            Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, kind))
        }
        opened => Ok((opened?, name)),
    }
}

fn not_regular(kind: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{kind}, not a regular file"))
}

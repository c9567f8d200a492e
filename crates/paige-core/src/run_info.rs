//! `DATA_DIR/run/server.json`: how local tools (`paige hook`, `paige intents`) find the
//! running Paige. Written with mode 0600 on start because it holds the tokens; removed on
//! clean shutdown.
//!
//! A Paige has three tokens (`token::Tokens`). The UI token (`token`, `PAIGE_TOKEN` when
//! configured) opens every private route; it is written here only where an OS layer hides
//! `DATA_DIR` from Claude Code (`token::UiTokenKept`). The local tools' token (`localToken`)
//! opens only the routes `paige session` and `paige memory` call. The agent token
//! (`agentToken`) opens only `POST /hooks/*`, `/mcp` and `paige claude`'s routes: it is the one
//! Claude Code's environment and MCP config hold, so the model, which can read both, cannot
//! reach `/ws` (`file:save`) or the rest of `/api/*` with it.

use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    pub pid: u32,
    pub port: u16,
    /// The UI token: opens every private route. Absent where nothing hides `DATA_DIR` from
    /// Claude Code (no OS layer): then the learner has it from the address Paige printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<Token>,
    /// The local tools' token: opens only the routes `paige session` and `paige memory` call.
    /// Absent in a run file an older Paige wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_token: Option<Token>,
    /// The agent token: opens only `POST /hooks/*`, `/mcp` and `paige claude`'s routes.
    /// Absent in a run file an older Paige wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_token: Option<Token>,
    /// Whether coach mode runs Claude Code in the read-only view: this Paige's decision,
    /// which `paige claude` follows (`launch::jail::Confinement`). Absent in a run file an
    /// older Paige wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jail: Option<bool>,
    /// Whether, without the jail, Landlock keeps the project read-only (`paige confine`).
    /// Absent in a run file an older Paige wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock: Option<bool>,
    /// Why there is no read-only view, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_jail_because: Option<String>,
    pub project_dir: PathBuf,
    pub started_at: DateTime<Utc>,
}

use crate::files::process_alive;
pub use crate::token::Token;

/// A running Paige as a client finds it: its base URL and the token it wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// `http://host:port[/base]`, no trailing slash.
    pub base_url: String,
    pub token: Token,
}

/// Finds the running Paige: `PAIGE_URL` + `PAIGE_TOKEN` from `env` (what Paige's own terminal
/// sets), else the run file in `DATA_DIR` (`data_dir_flag`, else `DATA_DIR`, else
/// `~/.paige/`), with its local tools' token (an older Paige's run file: its UI token). The
/// one way every local tool (`paige session`, `paige memory`) finds it; `paige hook` uses
/// [`locate_agent`], `paige token` [`locate_ui`].
pub fn locate(
    env: &std::collections::HashMap<String, String>,
    data_dir_flag: Option<PathBuf>,
) -> anyhow::Result<Located> {
    locate_with(env, data_dir_flag, |info| {
        info.local_token.or(info.token).ok_or_else(|| anyhow::anyhow!("the running Paige's run file names no token"))
    })
}

/// [`locate`] with the UI token: the run file's — or, where it holds none (no OS layer),
/// `PAIGE_TOKEN`.
pub fn locate_ui(
    env: &std::collections::HashMap<String, String>,
    data_dir_flag: Option<PathBuf>,
) -> anyhow::Result<Located> {
    let from_env = env.get("PAIGE_TOKEN").map(|v| v.trim()).filter(|v| !v.is_empty()).map(Token::from);
    locate_with(env, data_dir_flag, |info| {
        info.token.or(from_env).ok_or_else(|| anyhow::anyhow!("{UI_TOKEN_NOT_KEPT}"))
    })
}

/// Why a local tool cannot find the UI token, and what the learner does about it.
pub const UI_TOKEN_NOT_KEPT: &str = "the running Paige keeps its UI token in memory only: no OS layer keeps Claude Code \
     out of its data folder, so a file there would give the token to the AI. Give this command the token in the \
     `ui:` address Paige printed when it started, for this command only (PAIGE_TOKEN=<token> paige …), not exported \
     in the shell where Claude Code runs";

/// [`locate`] for a client that needs only hooks and MCP (`paige hook`): from the run file it
/// takes the agent token, never the UI token.
pub fn locate_agent(
    env: &std::collections::HashMap<String, String>,
    data_dir_flag: Option<PathBuf>,
) -> anyhow::Result<Located> {
    locate_with(env, data_dir_flag, |info| {
        info.agent_token.ok_or_else(|| {
            anyhow::anyhow!(
                "the running Paige has no agent token in its run file (it is older than this paige); restart it"
            )
        })
    })
}

fn locate_with(
    env: &std::collections::HashMap<String, String>,
    data_dir_flag: Option<PathBuf>,
    token_of: impl FnOnce(RunInfo) -> anyhow::Result<Token>,
) -> anyhow::Result<Located> {
    let var = |name: &str| env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    if let (Some(url), Some(token)) = (var("PAIGE_URL"), var("PAIGE_TOKEN")) {
        return Ok(Located { base_url: url.trim_end_matches('/').to_owned(), token: token.into() });
    }
    let data_dir = crate::config::data_dir(env, data_dir_flag)?;
    match read(&data_dir)? {
        Some(info) => Ok(Located { base_url: format!("http://127.0.0.1:{}", info.port), token: token_of(info)? }),
        None => anyhow::bail!(
            "no running Paige found ({} does not exist); start one with `paige serve` or the desktop app",
            path(&data_dir).display()
        ),
    }
}

pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("run").join("server.json")
}

/// Writes the file atomically (temp file + rename), readable by the owner only.
pub fn write(data_dir: &Path, info: &RunInfo) -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};

    let target = path(data_dir);
    let dir = target.parent().context("run file has no parent directory")?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    // A run directory an older Paige left open to others is made private, as the database is.
    let mode = std::fs::metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private", dir.display()))?;
    }
    // Temp files a killed writer left here (this one's, or the MCP config's and settings'
    // from `terminal.rs`), some holding a dead launch's token.
    crate::files::sweep_data_temp_files(dir);
    // The token goes only into a file this call creates: a new temp file (0600, O_EXCL, a
    // random name, so neither a leftover nor a planted symlink is reused or followed),
    // synced, then renamed into place.
    let mut file = tempfile::Builder::new()
        .prefix(&crate::files::data_temp_prefix())
        .tempfile_in(dir)
        .with_context(|| format!("cannot write a temp file in {}", dir.display()))?;
    file.write_all(&serde_json::to_vec_pretty(info)?)?;
    file.as_file().sync_all()?;
    file.persist(&target).map_err(|err| err.error).with_context(|| format!("cannot write {}", target.display()))?;
    Ok(target)
}

/// Reads the run file; `None` when no Paige has announced itself.
pub fn read(data_dir: &Path) -> anyhow::Result<Option<RunInfo>> {
    use anyhow::Context;
    let target = path(data_dir);
    match std::fs::read(&target) {
        Ok(bytes) => {
            Ok(Some(serde_json::from_slice(&bytes).with_context(|| format!("{} is not valid", target.display()))?))
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", target.display())),
    }
}

/// The Paige whose run file is in `data_dir`, if its process is alive.
pub fn running(data_dir: &Path) -> anyhow::Result<Option<RunInfo>> {
    Ok(read(data_dir)?.filter(|info| process_alive(info.pid)))
}

/// Removes the run file if it still describes `ours` (another Paige may have replaced it).
/// Returns whether a file was removed.
pub fn remove_if_ours(data_dir: &Path, ours: &RunInfo) -> anyhow::Result<bool> {
    match read(data_dir) {
        // Not by token: `paige token rotate` rewrites the file with new ones.
        Ok(Some(current)) if current.pid == ours.pid && current.port == ours.port => {
            std::fs::remove_file(path(data_dir))?;
            Ok(true)
        }
        Ok(_) => Ok(false),
        Err(err) => Err(err),
    }
}

/// The run file of a Paige that ended without removing it — killed, or crashed — if the one
/// in `data_dir` is such. A run file whose process is still alive belongs to another running
/// Paige and is not reported.
pub fn left_by_crash(data_dir: &Path) -> Option<RunInfo> {
    let info = match read(data_dir) {
        Ok(info) => info?,
        Err(err) => {
            tracing::warn!("the last run left a run file Paige cannot read: {err:#}");
            return None;
        }
    };
    let ours = info.pid == std::process::id();
    (ours || !process_alive(info.pid)).then_some(info)
}

/// A fresh random token: 32 bytes from the OS, hex-encoded.
pub fn generate_token() -> anyhow::Result<Token> {
    crate::token::generate()
}

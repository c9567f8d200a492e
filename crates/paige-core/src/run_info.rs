//! `DATA_DIR/run/server.json`: how local tools (`paige hook`, `paige intents`) find the
//! running Paige. Written with mode 0600 on start because it holds the per-launch token;
//! removed on clean shutdown.

use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    pub pid: u32,
    pub port: u16,
    pub token: String,
    pub project_dir: PathBuf,
    pub started_at: DateTime<Utc>,
}

pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("run").join("server.json")
}

/// Writes the file atomically (temp file + rename), readable by the owner only.
pub fn write(data_dir: &Path, info: &RunInfo) -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

    let target = path(data_dir);
    let dir = target.parent().context("run file has no parent directory")?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = dir.join(format!(".server.json.{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    file.write_all(&serde_json::to_vec_pretty(info)?)?;
    file.sync_all()?;
    std::fs::rename(&tmp, &target).with_context(|| format!("cannot write {}", target.display()))?;
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

/// Removes the run file if it still describes `ours` (another Paige may have replaced it).
/// Returns whether a file was removed.
pub fn remove_if_ours(data_dir: &Path, ours: &RunInfo) -> anyhow::Result<bool> {
    match read(data_dir) {
        Ok(Some(current)) if current.pid == ours.pid && current.token == ours.token => {
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

fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // Signal 0 checks that the process exists without touching it; EPERM means it exists
    // but belongs to someone else.
    // SAFETY: kill with signal 0 sends nothing; it only reads the process table.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A fresh random token for one launch: 32 bytes from the OS, hex-encoded.
pub fn generate_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|err| anyhow::anyhow!("cannot get random bytes: {err}"))?;
    Ok(hex::encode(bytes))
}

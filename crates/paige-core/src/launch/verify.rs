//! The guard self-check's report. The first time Paige's app sees a Claude Code version it
//! runs `paige doctor --guard --guard-report FILE` against it (`guard_check.rs`) — the
//! installed `claude` driven by a scripted model on loopback through the fixed attack table,
//! no tokens spent — and tells every UI "Guard verified for Claude Code X.Y.Z" or which
//! attempts changed files. The report is kept per version, user and layers in force
//! (`DATA_DIR/guard/`; [`crate::launch::layers::Plan::fingerprint`]), so later starts only
//! show it and any change — a new Claude Code, another user, `socat` gone, user namespaces
//! forbidden — checks again; a failed check keeps saying so on screen for as long as that
//! configuration runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::protocol::{MessageKind, ServerMessage};

/// How long the whole check may take (about two minutes on a 2-core machine).
pub const CHECK_DEADLINE: Duration = Duration::from_secs(20 * 60);

/// What `paige doctor --guard --guard-report FILE` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuardReport {
    /// `claude --version`'s first word.
    pub claude_version: String,
    pub passed: bool,
    pub held: usize,
    pub escaped: usize,
    pub skipped: usize,
    /// Attempts that could not run.
    pub errors: usize,
    /// The names of the attempts that changed a file, and of those that could not run.
    #[serde(default)]
    pub failed_attempts: Vec<String>,
    pub seconds: f64,
    /// The user and the layers it ran under ([`crate::launch::layers::Plan::fingerprint`]).
    #[serde(default)]
    pub layers: String,
}

impl GuardReport {
    /// What the learner is shown.
    pub fn notice(&self) -> ServerMessage {
        let version = &self.claude_version;
        if self.passed {
            return ServerMessage::notice(
                MessageKind::Info,
                format!(
                    "Guard verified for Claude Code {version}: {} attempts to change your files, all held.",
                    self.held
                ),
            );
        }
        let names = self.failed_attempts.join(", ");
        ServerMessage::notice(
            MessageKind::Error,
            format!(
                "Guard check failed for Claude Code {version}: {} of {} attempts got through ({names}). Coach mode \
                 may not keep your files yours with this version; `paige doctor --guard` shows each attempt.",
                self.escaped + self.errors,
                self.held + self.escaped + self.errors,
            ),
        )
    }
}

/// Where the report for `version` under `layers` (the user and the layers in force) is kept.
pub fn report_path(data_dir: &Path, version: &str, layers: &str) -> PathBuf {
    use sha2::Digest;
    let clean: String =
        version.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    let key = hex::encode(&sha2::Sha256::digest(layers.as_bytes())[..6]);
    data_dir.join("guard").join(format!("claude-{clean}-{key}.json"))
}

/// The kept report for `version` under `layers`, if a check finished for them.
pub fn kept_report(data_dir: &Path, version: &str, layers: &str) -> Option<GuardReport> {
    let text = std::fs::read_to_string(report_path(data_dir, version, layers)).ok()?;
    serde_json::from_str(&text).ok().filter(|r: &GuardReport| r.claude_version == version)
}

/// `claude --version`'s first word (`2.1.330`), or why it could not be read.
pub async fn claude_version(claude: &Path) -> Result<String, String> {
    let output = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(claude)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .map_err(|_| "`claude --version` did not answer within 30 s".to_owned())?
    .map_err(|err| format!("cannot run `claude --version`: {err}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    match text.split_whitespace().next() {
        Some(word) if output.status.success() => Ok(word.to_owned()),
        _ => Err(format!("`claude --version` answered {:?}", text.trim())),
    }
}

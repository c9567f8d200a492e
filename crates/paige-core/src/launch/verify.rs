//! The guard self-check on the learner's machine. The first time Paige's app sees a Claude
//! Code version it runs `paige doctor --guard --guard-report FILE` against it — the installed
//! `claude` driven by a scripted model on loopback through the fixed attack table, no tokens
//! spent — in the background (owned by the core's task tracker, killed with its process group
//! at shutdown), and tells every UI "Guard verified for Claude Code X.Y.Z" or which attempts
//! changed files. The report is kept per version (`DATA_DIR/guard/`), so later starts only
//! show it; a failed check keeps saying so on screen for as long as that version runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Core;
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

/// Where the report for `version` is kept.
pub fn report_path(data_dir: &Path, version: &str) -> PathBuf {
    let clean: String =
        version.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    data_dir.join("guard").join(format!("claude-{clean}.json"))
}

/// The kept report for `version`, if a check finished for it.
pub fn kept_report(data_dir: &Path, version: &str) -> Option<GuardReport> {
    let text = std::fs::read_to_string(report_path(data_dir, version)).ok()?;
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

impl Core {
    /// Shows the guard check for the `claude` on `PATH` of `env`: the kept report for its
    /// version, or — the first time this version is seen — runs `paige` (`doctor --guard`)
    /// in the background and shows its result. Nothing when `claude` is not installed.
    pub fn verify_guard(self: &Arc<Self>, paige: PathBuf, env: HashMap<String, String>) {
        let path = env.get("PATH").map(std::ffi::OsString::from);
        let Some(claude) = crate::terminal::find_in_path("claude", path.as_deref()) else { return };
        let (core, cancel) = (self.clone(), self.shutdown_token());
        self.tasks().spawn(async move {
            let version = tokio::select! {
                _ = cancel.cancelled() => return,
                version = claude_version(&claude) => version,
            };
            let version = match version {
                Ok(version) => version,
                Err(why) => {
                    core.show_guard(ServerMessage::notice(
                        MessageKind::Warning,
                        format!(
                            "Paige cannot tell which Claude Code is installed, so its guard is not verified: {why}"
                        ),
                    ));
                    return;
                }
            };
            let data_dir = core.config().data_dir.clone();
            if let Some(kept) = kept_report(&data_dir, &version) {
                core.show_guard(kept.notice());
                return;
            }
            core.show_guard(ServerMessage::notice(
                MessageKind::Info,
                format!(
                    "Checking Paige's guard against Claude Code {version} (a scripted attack on a scratch project, \
                     about two minutes; nothing is sent anywhere)…"
                ),
            ));
            let notice = match run_check(&core, &paige, &env, &version, &cancel).await {
                Ok(report) => report.notice(),
                Err(why) if cancel.is_cancelled() => {
                    tracing::info!("guard check stopped: {why}");
                    return;
                }
                Err(why) => ServerMessage::notice(
                    MessageKind::Warning,
                    format!(
                        "Paige could not check its guard against Claude Code {version}: {why}. Run `paige doctor \
                         --guard` to see why."
                    ),
                ),
            };
            core.show_guard(notice);
        });
    }

    /// Tells every UI, now and on connecting, the guard check's state.
    fn show_guard(&self, notice: ServerMessage) {
        self.broadcast(notice.clone());
        self.live().set_guard_notice(notice);
    }
}

/// Runs the check and keeps its report for `version`.
async fn run_check(
    core: &Core,
    paige: &Path,
    env: &HashMap<String, String>,
    version: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<GuardReport, String> {
    let data_dir = &core.config().data_dir;
    let dir = data_dir.join("guard");
    std::fs::create_dir_all(&dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    let file = tempfile::Builder::new()
        .prefix(&crate::files::data_temp_prefix())
        .tempfile_in(&dir)
        .map_err(|err| format!("cannot create the report file: {err}"))?;
    let args = ["doctor", "--guard", "--guard-report"].map(String::from).into_iter();
    let args: Vec<String> = args.chain([file.path().display().to_string()]).collect();
    let cwd = env.get("HOME").map_or_else(|| data_dir.clone(), PathBuf::from);
    let started = std::time::Instant::now();
    let ran = crate::checks::process::run_program(paige, &args, Some(env), &cwd, CHECK_DEADLINE, cancel, |_| {}).await;
    tracing::info!(exit = ?ran.exit, seconds = started.elapsed().as_secs(), "guard check ran");
    let text = std::fs::read_to_string(file.path()).unwrap_or_default();
    let report: GuardReport = match serde_json::from_str(&text) {
        Ok(report) => report,
        Err(_) => {
            let tail: String = ran.output.lines().rev().take(3).collect::<Vec<_>>().join(" · ");
            return Err(format!("it ended ({:?}) without a report: {tail}", ran.exit));
        }
    };
    if report.claude_version != version {
        return Err(format!("it checked Claude Code {} instead", report.claude_version));
    }
    file.persist(report_path(data_dir, version)).map_err(|err| format!("cannot keep the report: {}", err.error))?;
    Ok(report)
}

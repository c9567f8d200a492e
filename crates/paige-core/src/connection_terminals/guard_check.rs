//! The app's guard self-check (`launch/verify.rs` keeps the report types): the first time
//! the app sees a Claude Code version it runs `paige doctor --guard --guard-report FILE` in
//! the background, owned by the core's task tracker, and shows every UI the outcome.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::core::Core;
use crate::launch::verify::{CHECK_DEADLINE, GuardReport, claude_version, kept_report, report_path};
use crate::protocol::{MessageKind, ServerMessage};

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
            let layers = core.coach_plan(path.as_deref()).1.fingerprint();
            if let Some(kept) = kept_report(&data_dir, &version, &layers) {
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
            let notice = match run_check(&core, &paige, &env, (&version, &layers), &cancel).await {
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

/// Runs the check and keeps its report for `version` under `layers`.
async fn run_check(
    core: &Core,
    paige: &Path,
    env: &HashMap<String, String>,
    (version, layers): (&str, &str),
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
    file.persist(report_path(data_dir, version, layers))
        .map_err(|err| format!("cannot keep the report: {}", err.error))?;
    Ok(report)
}

//! `paige doctor`: checks that Paige can run here, one line per check, and exits 1 if any fails.
//!
//! Checks today: configuration, DATA_DIR, the database, and the Anthropic API key (with the
//! cheapest authenticated request, against `ANTHROPIC_BASE_URL`). Later issues add memory,
//! `gh` and `claude`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use paige_core::api::{ApiClient, ApiSettings};
use paige_core::db::Db;
use paige_core::{Config, ConfigOverrides, SystemClock};

use crate::DoctorArgs;

/// How long the key check may take before it is reported as a failure.
const KEY_CHECK_TIMEOUT: Duration = Duration::from_secs(15);

/// `paige doctor --guard` and its options.
#[derive(Debug, clap::Args)]
pub(crate) struct GuardArgs {
    /// Check the guard instead: attack a scratch project through the installed `claude`
    #[arg(long)]
    guard: bool,
    /// Switch a layer off for the check, to see what the others hold alone (PAIGE_JAIL=0)
    #[arg(long, value_name = "LAYER", requires = "guard")]
    guard_without: Vec<crate::guard::Layer>,
    /// Seconds to wait after the last attempt before the last comparison (late writers)
    #[arg(long, value_name = "SECS", default_value_t = 3, requires = "guard")]
    guard_wait_secs: u64,
    /// Only the attempts whose name contains this (`latency`: the latency line)
    #[arg(long, value_name = "NAME", requires = "guard")]
    guard_only: Option<String>,
    /// Keep the scratch dir (each session's output and the model's requests) and print it
    #[arg(long, requires = "guard")]
    guard_keep: bool,
    /// Attempts run at once (each a Claude Code and a Paige of its own)
    #[arg(long, value_name = "N", default_value_t = 2, requires = "guard")]
    guard_jobs: usize,
    /// Also write the result as JSON to FILE (how the app keeps it per Claude Code version)
    #[arg(long, value_name = "FILE", requires = "guard")]
    guard_report: Option<std::path::PathBuf>,
    /// Governed mode: each sample project gets an intent owning one folder, and Claude Code,
    /// started for it (`paige claude --intent`), may change nothing else
    #[arg(long, requires = "guard")]
    guard_governed: bool,
}

/// Runs every check and prints the report; `Ok(false)` when a check failed.
pub(crate) fn run(args: DoctorArgs) -> anyhow::Result<bool> {
    if args.guard.guard {
        let guard = args.guard;
        return crate::guard::run(crate::guard::GuardOptions {
            without: guard.guard_without,
            wait: Duration::from_secs(guard.guard_wait_secs),
            only: guard.guard_only,
            keep: guard.guard_keep,
            jobs: guard.guard_jobs,
            report: guard.guard_report,
            governed: guard.guard_governed,
        });
    }
    let env = crate::serve::environment(args.data_dir.as_ref())?;
    let overrides = ConfigOverrides { project_dir: args.project, port: None, data_dir: args.data_dir.clone() };
    println!("paige doctor");
    let mut report = Report::default();
    // Coach mode's layers, each on or off with the reason (`launch::layers`).
    let confinement = paige_core::launch::jail::Confinement::from_env(&env);
    let path = env.get("PATH").map(std::ffi::OsStr::new);
    let sandbox = paige_core::sandbox::probe(path);
    let data_dir = paige_core::config::data_dir(&env, args.data_dir.clone()).unwrap_or_default();
    let plan = paige_core::launch::layers::Plan::new(paige_core::launch::layers::Inputs {
        confinement: &confinement,
        sandbox,
        hooks: true,
        project_dir: std::path::Path::new("."),
        data_dir: &data_dir,
        config_dir: &data_dir.join("claude"),
        run_files: &[],
        ports: Vec::new(),
        support: paige_core::launch::layers::kernel_support(&confinement, &env),
        destinations: paige_core::launch::gate::Destinations::for_launch(0, &env),
    });
    match (&confinement, plan.unguarded()) {
        (paige_core::launch::jail::Confinement::Jail { .. }, _) => {
            report.ok("read-only", "coach mode runs Claude Code with your project read-only (bubblewrap)".into())
        }
        (paige_core::launch::jail::Confinement::Landlock(why), _) => report.warn(
            "read-only",
            format!("no read-only view ({why}); Landlock keeps your project read-only to Claude Code instead"),
        ),
        (_, false) => report.warn(
            "read-only",
            format!(
                "coach mode cannot keep your project read-only: {}; Claude Code's sandbox and Paige's hooks hold",
                confinement.why_off().unwrap_or_default()
            ),
        ),
        (_, true) => {
            report.warn("read-only", paige_core::launch::layers::refusal(confinement.why_off().unwrap_or_default()))
        }
    }
    // Where the UI token (which opens `/ws`, where files are saved) is kept: only where
    // Claude Code cannot read it (issue 39).
    match confinement.ui_token_kept() {
        paige_core::token::UiTokenKept::OnDisk => report.ok(
            "ui token",
            "kept in the data folder, which the OS layer hides from Claude Code: an open tab reconnects after a restart"
                .into(),
        ),
        paige_core::token::UiTokenKept::InMemoryOnly => report.warn(
            "ui token",
            "never written to disk, since nothing hides the data folder from Claude Code: the ui: address changes \
             at each start"
                .into(),
        ),
    }
    // Claude Code's own Bash sandbox: whether it can run here at all (the plan below says
    // whether coach mode uses it).
    match paige_core::sandbox::probe(path) {
        Ok(()) => report.ok("sandbox", "Claude Code's Bash sandbox can run (bubblewrap, socat)".into()),
        Err(why) => report.warn("sandbox", format!("Claude Code's Bash sandbox cannot run here: {why}")),
    }
    if paige_core::launch::jail::apparmor_profile_missing() {
        report.warn(
            "apparmor",
            format!(
                "AppArmor restricts user namespaces here and Paige's profile for its own bubblewrap ({}) is not \
                 installed: install Paige's .deb (it ships both), or Landlock stands in for the jail",
                paige_core::launch::jail::APPARMOR_PROFILE
            ),
        );
    }
    for layer in &plan.layers {
        let line = format!("{}: {}", if layer.on { "on" } else { "off" }, layer.detail);
        let name = format!("  {}", layer.name);
        if layer.on { report.ok(&name, line) } else { report.warn(&name, line) }
    }
    check_guard(&env, &plan, &data_dir, &mut report);

    let config = match Config::load(&env, overrides) {
        Ok(config) => config,
        Err(err) => {
            report.fail("config", err.to_string());
            report.skip("data dir, database, anthropic", "need a valid configuration");
            return Ok(report.finish());
        }
    };
    let settings = ApiSettings::from_config(&config);
    let base_url = settings.as_ref().map(|s| s.base_url.clone()).unwrap_or_default();
    report.ok(
        "config",
        format!(
            "project {} · port {} · ANTHROPIC_BASE_URL {base_url} · key {}",
            config.project_dir.display(),
            config.port,
            redact(&config.anthropic_api_key)
        ),
    );

    match check_data_dir(&config.data_dir) {
        Ok(()) => {
            match others_can_read(&config.data_dir) {
                Some(mode) => report.warn(
                    "data dir",
                    format!(
                        "{} is readable by other users (mode {mode:o}); run `chmod 700 {}` to keep the learner's data private",
                        config.data_dir.display(),
                        config.data_dir.display()
                    ),
                ),
                None => report.ok("data dir", format!("{} (writable, private)", config.data_dir.display())),
            }
            match check_database(&config.db_path()) {
                Ok(detail) => report.ok("database", detail),
                Err(err) => report.fail("database", format!("{err:#}")),
            }
        }
        Err(err) => {
            report.fail("data dir", format!("{err:#}"));
            report.skip("database", "needs DATA_DIR");
        }
    }

    check_memory(&config, &mut report);

    match settings {
        Err(err) => report.fail("anthropic", err.to_string()),
        Ok(mut settings) => {
            settings.timeout = KEY_CHECK_TIMEOUT;
            match check_key(settings) {
                Ok(()) => report.ok("anthropic", format!("key accepted by {base_url}")),
                Err(err) => report.fail("anthropic", format!("{err:#}")),
            }
        }
    }
    Ok(report.finish())
}

/// Whether the guard's self-check passed against the installed Claude Code under these
/// layers: the report the app keeps when it runs the check in the background, and where.
fn check_guard(
    env: &std::collections::HashMap<String, String>,
    plan: &paige_core::launch::layers::Plan,
    data_dir: &Path,
    report: &mut Report,
) {
    let path = env.get("PATH").map(std::ffi::OsStr::new);
    let Some(claude) = paige_core::terminal::find_in_path("claude", path) else {
        report.warn("guard", "Claude Code is not installed: there is nothing to check the guard against".into());
        return;
    };
    let version = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| err.to_string())
        .and_then(|runtime| runtime.block_on(paige_core::launch::verify::claude_version(&claude)));
    let version = match version {
        Ok(version) => version,
        Err(why) => return report.warn("guard", format!("cannot tell which Claude Code is installed: {why}")),
    };
    let layers = plan.fingerprint();
    let kept = paige_core::launch::verify::report_path(data_dir, &version, &layers);
    match paige_core::launch::verify::kept_report(data_dir, &version, &layers) {
        Some(found) if found.passed => report.ok(
            "guard",
            format!("checked against Claude Code {version} on these layers: {} attempts, all held", found.held),
        ),
        Some(found) => report.warn(
            "guard",
            format!(
                "the check against Claude Code {version} on these layers failed: {} ({})",
                found.failed_attempts.join(", "),
                kept.display()
            ),
        ),
        None => report.warn(
            "guard",
            format!(
                "not checked against Claude Code {version} on these layers yet: the app checks it in the \
                 background at its next start (report: {})",
                kept.display()
            ),
        ),
    }
}

/// Which store and model memory uses, whether the store answers and the model embeds.
/// Memory is optional: a problem is a warning, not a failure.
fn check_memory(config: &Config, report: &mut Report) {
    let memory = paige_memory::open(config, &[]);
    let connected = memory.connect();
    let status = memory.status();
    let store = format!("{} at {}", status.store, status.location);
    if !connected {
        let why = status.model_problem.clone().unwrap_or_else(|| "it does not answer".into());
        report.warn("memory", format!("{store} is unavailable ({why}): memory features are off"));
        return;
    }
    let Some(model) = status.model else {
        let problem = status.model_problem.unwrap_or_default();
        report.warn("memory", format!("{store}; ranking by keywords only: {problem}"));
        return;
    };
    let started = std::time::Instant::now();
    match paige_memory::find_model(&[config.models_dir()], config.limits.embedder_idle)
        .and_then(|m| m.embed(&["paige"]).map_err(|e| e.to_string()))
    {
        Ok(_) => report
            .ok("memory", format!("{store} · {model}, loaded and embedding ({} ms)", started.elapsed().as_millis())),
        Err(err) => report.warn("memory", format!("{store}; the model does not load: {err}")),
    }
}

#[derive(Default)]
struct Report {
    failed: usize,
}

impl Report {
    fn ok(&mut self, check: &str, detail: String) {
        println!("  ok    {check:<10} {detail}");
    }

    /// Worth fixing, but Paige works: not counted as a failure.
    fn warn(&mut self, check: &str, detail: String) {
        println!("  WARN  {check:<10} {detail}");
    }

    fn fail(&mut self, check: &str, detail: String) {
        self.failed += 1;
        println!("  FAIL  {check:<10} {detail}");
    }

    fn skip(&mut self, check: &str, why: &str) {
        println!("  skip  {check:<10} ({why})");
    }

    fn finish(self) -> bool {
        match self.failed {
            0 => println!("all checks passed"),
            1 => println!("1 check failed"),
            n => println!("{n} checks failed"),
        }
        self.failed == 0
    }
}

fn check_data_dir(dir: &Path) -> anyhow::Result<()> {
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let probe = dir.join(".paige-doctor-probe");
    std::fs::write(&probe, b"ok").with_context(|| format!("{} is not writable", dir.display()))?;
    std::fs::remove_file(&probe).with_context(|| format!("cannot remove {}", probe.display()))?;
    Ok(())
}

/// The directory's permission bits when group or others may read or enter it.
fn others_can_read(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

fn check_database(path: &Path) -> anyhow::Result<String> {
    let db = Db::open(path, Arc::new(SystemClock))?;
    let tables = db.table_names()?.len();
    let mode = db.journal_mode()?;
    Ok(format!("{} ({tables} tables, journal {mode})", path.display()))
}

fn check_key(settings: ApiSettings) -> anyhow::Result<()> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")?;
    let client = ApiClient::new(settings)?;
    runtime.block_on(client.check_key())?;
    Ok(())
}

/// `sk-ant-…abcd`: enough to tell keys apart, not enough to use one.
fn redact(key: &str) -> String {
    let tail: String = key.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect();
    if key.chars().count() <= 8 { "set".into() } else { format!("…{tail}") }
}

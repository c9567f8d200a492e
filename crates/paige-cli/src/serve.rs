//! `paige serve`: load config, open the core, serve on 127.0.0.1 until SIGINT/SIGTERM.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;

use paige_core::{Config, ConfigOverrides, SystemClock};
use tokio::signal::unix::{SignalKind, signal};

use crate::ServeArgs;

/// How long in-flight requests get to finish after a shutdown signal.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<()> {
    let launched = Instant::now();
    init_logging();
    let env = environment(args.data_dir.as_ref())?;
    let overrides = ConfigOverrides { project_dir: args.project, port: args.port, data_dir: args.data_dir };
    let mut config = Config::load(&env, overrides)?;
    // What the browser UI tells the learner to run beside it: this very binary.
    config.agent_command = std::env::current_exe().ok().map(|paige| {
        let paige = paige.to_string_lossy();
        let plain = paige.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
        let paige = if plain { paige.into_owned() } else { paige_core::launch::shell_quote(&paige) };
        format!("{paige} claude")
    });
    let ui_dir = find_ui(args.ui_dir)?;
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(serve(config, ui_dir, launched))
}

async fn serve(config: Config, ui_dir: Option<PathBuf>, launched: Instant) -> anyhow::Result<()> {
    // Signals are caught from the very start, so one that arrives during start-up still
    // leads to a clean shutdown of whatever was set up.
    let mut sigterm = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    let mut sigint = signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;

    let memory = paige_memory::open(&config, &[]);
    let instance = paige_server::Instance::start(config, Arc::new(SystemClock), memory, ui_dir.as_deref()).await?;
    let config = instance.core.config();
    let port = instance.port;
    tracing::info!("project: {}", config.project_dir.display());
    tracing::info!("data dir: {} (database {})", config.data_dir.display(), instance.core.db().path().display());
    tracing::info!("port: {port} — MCP at http://127.0.0.1:{port}/mcp, health at /health");
    tracing::info!("run file: {}", instance.run_file().display());
    match &ui_dir {
        Some(dir) => {
            tracing::info!("ui: http://127.0.0.1:{port}/?token={} (from {})", instance.token.expose(), dir.display())
        }
        None => tracing::warn!("ui: no built UI found (run `npm ci && npm run build` in ui/); serving the API only"),
    }
    if config.agent_jail.ui_token_kept() == paige_core::token::UiTokenKept::InMemoryOnly {
        tracing::warn!(
            "the UI token is kept in memory only, since nothing keeps Claude Code out of {}: the address changes at \
             each start, and `paige token` needs it for that command alone: PAIGE_TOKEN={} paige token …",
            config.data_dir.display(),
            instance.token.expose()
        );
    }
    tracing::info!("ready in {} ms", launched.elapsed().as_millis());

    tokio::select! {
        _ = instance.ended() => tracing::error!("the HTTP server stopped on its own"),
        _ = sigterm.recv() => tracing::info!("received SIGTERM, shutting down"),
        _ = sigint.recv() => tracing::info!("received SIGINT, shutting down"),
    }
    instance.stop(DRAIN_TIMEOUT).await?;
    tracing::info!("shutdown complete");
    Ok(())
}

/// The UI build to serve: the one asked for (which must exist), else the first default that
/// holds a build, else none (the API alone is served).
fn find_ui(asked: Option<PathBuf>) -> anyhow::Result<Option<PathBuf>> {
    match asked {
        Some(dir) if paige_server::is_ui_build(&dir) => Ok(Some(dir)),
        Some(dir) => anyhow::bail!("no built UI in {} (index.html missing); run `npm run build` in ui/", dir.display()),
        None => Ok(paige_server::default_ui_dirs().into_iter().find(|dir| paige_server::is_ui_build(dir))),
    }
}

/// The process environment after `.env`, with the key saved in the desktop app's settings
/// (`DATA_DIR/settings.json`) standing in for a missing `ANTHROPIC_API_KEY`.
pub(crate) fn environment(data_dir_flag: Option<&PathBuf>) -> anyhow::Result<HashMap<String, String>> {
    load_dotenv()?;
    let mut env: HashMap<String, String> = std::env::vars().collect();
    if let Ok(data_dir) = paige_core::config::data_dir(&env, data_dir_flag.cloned()) {
        match paige_core::settings::Settings::load(&data_dir) {
            Ok(settings) => settings.fill_env(&mut env),
            Err(err) => tracing::warn!("ignoring the saved settings: {err}"),
        }
    }
    Ok(env)
}

/// Reads `.env` from the working directory into the environment; variables already set win.
pub(crate) fn load_dotenv() -> anyhow::Result<()> {
    match dotenvy::dotenv() {
        Ok(_) => Ok(()),
        Err(err) if err.not_found() => Ok(()),
        Err(err) => Err(err).context("cannot read .env"),
    }
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stdout)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();
}

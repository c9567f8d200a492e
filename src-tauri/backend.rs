//! One open project: the core and the localhost server it is served on, started when a
//! project is opened and stopped when another one replaces it or the app exits.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Context;
use paige_core::protocol::encode;
use paige_core::run_info::{self, RunInfo};
use paige_core::terminal::AgentServer;
use paige_core::{Config, Core, Event, SystemClock};
use tauri::{Emitter, Manager, Runtime};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::{Shell, TERMINAL_EVENT, UI_EVENT};

/// What each window's terminal runs: the agent talks to `server`; `agent_override` is
/// `PAIGE_AGENT_CMD`.
#[derive(Debug, Clone)]
pub struct TerminalSpec {
    pub server: AgentServer,
    pub agent_override: Option<String>,
}

/// The running core of the open project, and its server when the app started one.
pub struct Backend {
    pub core: Arc<Core>,
    pub(crate) terminal: Option<TerminalSpec>,
    server: Option<Server>,
    /// Set once the event forwarding loop of this core runs.
    forwarding: std::sync::Once,
}

/// The localhost server of a backend: stopped by `stop`, awaited through `task`.
struct Server {
    stop: CancellationToken,
    task: std::sync::Mutex<Option<tauri::async_runtime::JoinHandle<()>>>,
    info: RunInfo,
}

impl Backend {
    /// A backend over an already open core, without a server (tests, embedding).
    pub fn embedded(core: Arc<Core>, terminal: Option<TerminalSpec>) -> Backend {
        Backend { core, terminal, server: None, forwarding: std::sync::Once::new() }
    }

    /// Opens the core for `config`, serves it on a free 127.0.0.1 port and writes the run
    /// file. `env` supplies `PAIGE_AGENT_CMD` and `PATH` for the terminal.
    pub async fn start(config: Config, env: &HashMap<String, String>) -> anyhow::Result<Backend> {
        let token = match &config.token {
            Some(token) => token.as_str().into(),
            None => run_info::generate_token()?,
        };
        let core = Arc::new(Core::open(config, Arc::new(SystemClock))?);
        core.start_watcher()?;
        // The desktop app always takes a free port: several windows of different projects,
        // or a `paige serve` beside it, never collide.
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.context("cannot listen on 127.0.0.1")?;
        let port = listener.local_addr().context("cannot read the bound address")?.port();
        let (info, _) = core.announce(port, &token)?;
        let stop = CancellationToken::new();
        let serving = paige_server::serve(listener, paige_server::app(core.clone(), token.expose()), stop.clone());
        let task = tauri::async_runtime::spawn(async move {
            if let Err(err) = serving.await {
                tracing::error!("the HTTP server failed: {err}");
            }
        });
        tracing::info!("project {}; server on 127.0.0.1:{port}", core.config().project_dir.display());
        let terminal = TerminalSpec {
            server: AgentServer { port, token, hook_command: hook_command(env) },
            agent_override: env.get("PAIGE_AGENT_CMD").cloned(),
        };
        let server = Server { stop, task: std::sync::Mutex::new(Some(task)), info };
        Ok(Backend { core, terminal: Some(terminal), server: Some(server), forwarding: std::sync::Once::new() })
    }

    /// Stops the server, shuts the core down (terminals killed, database checkpointed) and
    /// removes the run file if it is still ours.
    pub async fn stop(&self) {
        let task = self.server.as_ref().and_then(|server| {
            server.stop.cancel();
            server.task.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
        });
        if let Err(err) = self.core.shutdown().await {
            tracing::warn!("shutdown: cannot checkpoint the database: {err}");
        }
        if let Some(task) = task
            && let Err(err) = task.await
        {
            tracing::warn!("shutdown: the server task failed: {err}");
        }
        if let Some(server) = &self.server
            && let Err(err) = run_info::remove_if_ours(&self.core.config().data_dir, &server.info)
        {
            tracing::warn!("shutdown: cannot remove the run file: {err:#}");
        }
    }

    /// Starts forwarding this core's events to the webviews, once.
    pub(crate) fn forward_events_once<R: Runtime>(self: &Arc<Self>, app: &tauri::AppHandle<R>) {
        self.forwarding.call_once(|| forward_events(app.clone(), self.core.clone()));
    }
}

/// `paige hook` is the CLI installed beside the app, else the one on `PATH`.
fn hook_command(env: &HashMap<String, String>) -> Option<std::path::PathBuf> {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join("paige")));
    beside
        .filter(|paige| paige.is_file())
        .or_else(|| std::env::split_paths(env.get("PATH")?).map(|dir| dir.join("paige")).find(|p| p.is_file()))
}

/// Emits every `Event::Ui` of `core` to the webviews (an `Event::UiTo` to its window) until
/// the core shuts down.
fn forward_events<R: Runtime>(app: tauri::AppHandle<R>, core: Arc<Core>) {
    let mut events = core.subscribe();
    let stop = core.shutdown_token();
    tauri::async_runtime::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                event = events.recv() => match event {
                    Ok(Event::Ui(message)) => {
                        let frame = encode(&message, None, core.now().timestamp_millis());
                        if let Err(err) = app.emit(UI_EVENT, frame) {
                            tracing::warn!("cannot emit {UI_EVENT}: {err}");
                        }
                    }
                    Ok(Event::UiTo { connection, message }) => {
                        let frame = encode(&message, None, core.now().timestamp_millis());
                        if let Some(window) = app.state::<Shell>().window_of(connection)
                            && let Err(err) = app.emit_to(window.as_str(), UI_EVENT, frame)
                        {
                            tracing::warn!("cannot emit {UI_EVENT}: {err}");
                        }
                    }
                    Ok(Event::ActionLogged(_)) => {}
                    Ok(Event::ShuttingDown) | Err(RecvError::Closed) => break,
                    Err(RecvError::Lagged(missed)) => tracing::warn!(missed, "webview too slow; UI events dropped"),
                },
            }
        }
    });
}

/// Emits a terminal's output to its window as `paige://terminal`, chunk by chunk, until the
/// terminal ends or the core shuts down. Its channel is bounded: while the window is behind,
/// the terminal's child waits.
pub(crate) fn forward_terminal<R: Runtime>(
    app: tauri::AppHandle<R>,
    core: &Core,
    window: String,
    mut output: paige_core::terminal::TerminalOutput,
) {
    let stop = core.shutdown_token();
    tauri::async_runtime::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                data = output.recv() => match data {
                    Some(data) => {
                        if let Err(err) = app.emit_to(window.as_str(), TERMINAL_EVENT, data) {
                            tracing::warn!("cannot emit {TERMINAL_EVENT}: {err}");
                        }
                    }
                    None => break,
                },
            }
        }
    });
}

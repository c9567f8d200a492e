//! One open project: the core and the localhost server it is served on, started when a
//! project is opened and stopped when another one replaces it or the app exits.

use std::collections::HashMap;
use std::sync::Arc;

use paige_core::launch::AgentServer;
use paige_core::protocol::encode;
use paige_core::{Config, Core, Event, SystemClock};
use tauri::{Emitter, Manager, Runtime};
use tokio::sync::broadcast::error::RecvError;

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
    instance: Option<paige_server::Instance>,
    /// Set once the event forwarding loop of this core runs.
    forwarding: std::sync::Once,
}

/// How long in-flight requests get to finish when a backend stops.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

impl Backend {
    /// A backend over an already open core, without a server (tests, embedding).
    pub fn embedded(core: Arc<Core>, terminal: Option<TerminalSpec>) -> Backend {
        Backend { core, terminal, instance: None, forwarding: std::sync::Once::new() }
    }

    /// Opens the core for `config`, serves it on a free 127.0.0.1 port and writes the run
    /// file. `env` supplies `PAIGE_AGENT_CMD` and `PATH` for the terminal.
    pub async fn start(mut config: Config, env: &HashMap<String, String>) -> anyhow::Result<Backend> {
        // The desktop app always takes a free port: several windows of different projects,
        // or a `paige serve` beside it, never collide.
        config.port = 0;
        let memory = paige_memory::open(&config, &bundled_model_dirs());
        let instance = paige_server::Instance::start(config, Arc::new(SystemClock), memory, None).await?;
        let core = instance.core.clone();
        tracing::info!("project {}; server on 127.0.0.1:{}", core.config().project_dir.display(), instance.port);
        let terminal = TerminalSpec {
            // The hook command is located per terminal, through the app (`hook_command`). The
            // terminal gets the agent token (hooks and MCP only), never the UI token.
            server: AgentServer { port: instance.port, token: instance.agent_token.clone(), hook_command: None },
            agent_override: env.get("PAIGE_AGENT_CMD").cloned(),
        };
        Ok(Backend { core, terminal: Some(terminal), instance: Some(instance), forwarding: std::sync::Once::new() })
    }

    /// Stops the server, shuts the core down (terminals killed, database checkpointed) and
    /// removes the run file if it is still ours.
    pub async fn stop(&self) {
        let stopped = match &self.instance {
            Some(instance) => instance.stop(DRAIN).await,
            None => self.core.shutdown().await.map_err(anyhow::Error::from),
        };
        if let Err(err) = stopped {
            tracing::warn!("shutdown: {err:#}");
        }
    }

    /// Starts forwarding this core's events to the webviews, once.
    pub(crate) fn forward_events_once<R: Runtime>(self: &Arc<Self>, app: &tauri::AppHandle<R>) {
        self.forwarding.call_once(|| forward_events(app.clone(), self.core.clone()));
    }
}

/// `paige hook` is the CLI the packages ship as the app's sidecar (`externalBin`, found
/// through the shell plugin's sidecar API), else the one on `PATH`.
pub(crate) fn hook_command<R: Runtime>(
    app: &tauri::AppHandle<R>,
    env: &HashMap<String, String>,
) -> Option<std::path::PathBuf> {
    use tauri::Manager;
    let shell = app.try_state::<tauri_plugin_shell::Shell<R>>();
    let sidecar = shell.and_then(|shell| shell.sidecar("paige").ok()).map(std::process::Command::from);
    sidecar
        .map(|command| std::path::PathBuf::from(command.get_program()))
        .filter(|paige| paige.is_file())
        .or_else(|| std::env::split_paths(env.get("PATH")?).map(|dir| dir.join("paige")).find(|p| p.is_file()))
}

/// Emits what every UI is shown of `core`'s events (`Event::into_ui_message`) to the
/// webviews (an `Event::UiTo` to its window) until the core shuts down.
fn forward_events<R: Runtime>(app: tauri::AppHandle<R>, core: Arc<Core>) {
    let mut events = core.subscribe();
    let stop = core.shutdown_token();
    tauri::async_runtime::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                event = events.recv() => match event {
                    Ok(Event::UiTo { connection, message }) => {
                        let frame = encode(&message, None, core.now().timestamp_millis());
                        if let Some(window) = app.state::<Shell>().window_of(connection)
                            && let Err(err) = app.emit_to(window.as_str(), UI_EVENT, frame)
                        {
                            tracing::warn!("cannot emit {UI_EVENT}: {err}");
                        }
                    }
                    Ok(Event::ShuttingDown) | Err(RecvError::Closed) => break,
                    // What every UI is shown: UI messages, and the domain events that are frames.
                    Ok(event) => {
                        if let Some(message) = event.into_ui_message() {
                            let frame = encode(&message, None, core.now().timestamp_millis());
                            if let Err(err) = app.emit(UI_EVENT, frame) {
                                tracing::warn!("cannot emit {UI_EVENT}: {err}");
                            }
                        }
                    }
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

/// Where the desktop package keeps the embedding model: its resources (`/usr/lib/Paige/models`
/// for `/usr/bin/paige-app`), or `models/` beside the binary.
fn bundled_model_dirs() -> Vec<std::path::PathBuf> {
    let Some(bin) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(std::path::Path::to_path_buf)) else {
        return Vec::new();
    };
    vec![bin.join("../lib/Paige/models"), bin.join("models")]
}

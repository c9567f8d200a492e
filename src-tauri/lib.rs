//! Paige's desktop shell: the only crate that knows Tauri. It starts the core and the
//! localhost server in-process (a free port), carries UI frames between the webview and
//! the core, and forwards every core event to the webview. Nothing else lives here.
//!
//! - command `ui_message(frame)`: one client frame of the UI catalog into
//!   `Core::handle_text`; returns the reply frame for this window, if any;
//! - event `paige://ui`: every `Event::Ui` as an encoded frame (the same text `/ws` sends);
//! - event `paige://terminal`: the output of the window's terminal (`Event::TerminalOutput`),
//!   emitted to that window only. The terminal opens with the window's first frame.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use paige_core::protocol::{ConnectionId, encode};
use paige_core::run_info::{self, RunInfo};
use paige_core::terminal::{AgentServer, agent_command};
use paige_core::{Config, ConfigOverrides, Core, Event, SystemClock};
use tauri::{Emitter, Manager, Runtime};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

/// The event every core `Event::Ui` is emitted as.
pub const UI_EVENT: &str = "paige://ui";
/// The event a window's terminal output is emitted as.
pub const TERMINAL_EVENT: &str = "paige://terminal";

/// What each window's terminal runs: the agent talks to `server`; `agent_override` is
/// `PAIGE_AGENT_CMD`.
#[derive(Debug, Clone)]
pub struct TerminalSpec {
    pub server: AgentServer,
    pub agent_override: Option<String>,
}

/// What the commands share: the core and one core connection per window.
pub struct Shell {
    pub core: Arc<Core>,
    terminal: Option<TerminalSpec>,
    connections: Mutex<HashMap<String, ConnectionId>>,
    /// Set once the event forwarding loop runs (started by the first frame of any window).
    forwarding: std::sync::Once,
}

impl Shell {
    pub fn new(core: Arc<Core>, terminal: Option<TerminalSpec>) -> Shell {
        Shell { core, terminal, connections: Mutex::new(HashMap::new()), forwarding: std::sync::Once::new() }
    }

    /// The window's core connection; the first call connects and opens its terminal.
    fn connection(&self, window: &str) -> ConnectionId {
        let mut connections = self.connections.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(id) = connections.get(window) {
            return *id;
        }
        let id = self.core.connect();
        connections.insert(window.to_owned(), id);
        drop(connections);
        if let Some(spec) = &self.terminal {
            self.open_terminal(id, spec);
        }
        id
    }

    fn open_terminal(&self, id: ConnectionId, spec: &TerminalSpec) {
        let config = self.core.config();
        let command = agent_command(
            &config.project_dir,
            &config.data_dir.join("run"),
            &spec.server,
            spec.agent_override.as_deref(),
            std::env::var_os("PATH").as_deref(),
            std::env::var("SHELL").ok().as_deref(),
        );
        if let Err(err) = command.and_then(|command| self.core.open_terminal(id, &command)) {
            tracing::error!("cannot open the terminal: {err}");
        }
    }

    /// The window a connection belongs to.
    fn window_of(&self, id: ConnectionId) -> Option<String> {
        let connections = self.connections.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        connections.iter().find(|(_, c)| **c == id).map(|(label, _)| label.clone())
    }

    fn disconnect(&self, window: &str) {
        let mut connections = self.connections.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(id) = connections.remove(window) {
            self.core.disconnect(id);
        }
    }
}

/// One frame from a window's UI to the core; the reply frame for that window, if any.
#[tauri::command]
fn ui_message<R: Runtime>(frame: String, window: tauri::Window<R>, shell: tauri::State<'_, Shell>) -> Option<String> {
    // Started here rather than in `setup`: the forwarding loop must run before the first
    // window's first frame, and `setup` only runs once the event loop does.
    shell.forwarding.call_once(|| forward_events(window.app_handle().clone()));
    let connection = shell.connection(window.label());
    shell.core.handle_text(connection, &frame)
}

/// The shell's commands and event forwarding on `builder`, over `core`. The real app adds
/// its plugins and windows; tests use `tauri::test::mock_builder()`.
pub fn wire<R: Runtime>(
    builder: tauri::Builder<R>,
    core: Arc<Core>,
    terminal: Option<TerminalSpec>,
) -> tauri::Builder<R> {
    builder.manage(Shell::new(core, terminal)).invoke_handler(tauri::generate_handler![ui_message]).on_window_event(
        |window, event| {
            if let tauri::WindowEvent::Destroyed = event {
                window.state::<Shell>().disconnect(window.label());
            }
        },
    )
}

/// Emits every `Event::Ui` of the core to the webviews until the core shuts down.
fn forward_events<R: Runtime>(app: tauri::AppHandle<R>) {
    let core = app.state::<Shell>().core.clone();
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
                    Ok(Event::TerminalOutput { connection, data }) => {
                        if let Some(window) = app.state::<Shell>().window_of(connection)
                            && let Err(err) = app.emit_to(window.as_str(), TERMINAL_EVENT, data)
                        {
                            tracing::warn!("cannot emit {TERMINAL_EVENT}: {err}");
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

/// The running core and server of one app launch.
struct Backend {
    core: Arc<Core>,
    terminal: TerminalSpec,
    stop: CancellationToken,
    info: RunInfo,
}

async fn start_backend(config: Config) -> anyhow::Result<Backend> {
    let token = match &config.token {
        Some(token) => token.clone(),
        None => run_info::generate_token()?,
    };
    let core = Arc::new(Core::open(config, Arc::new(SystemClock))?);
    core.start_watcher()?;
    let config = core.config();
    // The desktop app always takes a free port: several windows of different projects, or
    // a `paige serve` beside it, never collide.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.context("cannot listen on 127.0.0.1")?;
    let port = listener.local_addr().context("cannot read the bound address")?.port();
    let (info, _) = core.announce(port, &token)?;
    let stop = CancellationToken::new();
    let server = paige_server::serve(listener, paige_server::app(core.clone(), &token), stop.clone());
    tauri::async_runtime::spawn(async move {
        if let Err(err) = server.await {
            tracing::error!("the HTTP server failed: {err}");
        }
    });
    tracing::info!("project {}; server on 127.0.0.1:{port}", config.project_dir.display());
    let agent_override = std::env::var("PAIGE_AGENT_CMD").ok();
    // `paige hook` is the CLI installed beside the app (or found on PATH).
    let hook_command = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("paige")))
        .filter(|paige| paige.is_file())
        .or_else(|| std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join("paige")).find(|p| p.is_file()));
    let terminal = TerminalSpec { server: AgentServer { port, token, hook_command }, agent_override };
    Ok(Backend { core, terminal, stop, info })
}

async fn stop_backend(backend: &Backend) {
    backend.stop.cancel();
    if let Err(err) = backend.core.shutdown().await {
        tracing::warn!("shutdown: cannot checkpoint the database: {err}");
    }
    if let Err(err) = run_info::remove_if_ours(&backend.core.config().data_dir, &backend.info) {
        tracing::warn!("shutdown: cannot remove the run file: {err:#}");
    }
}

/// What `paige-app --help` prints.
pub const USAGE: &str = "\
Paige desktop app: a coding coach around your project, with Claude Code in its terminal.

Usage: paige-app [PROJECT_DIR]

Settings as for `paige serve` (see `paige serve --help`): PROJECT_DIR (or the argument),
ANTHROPIC_API_KEY, DATA_DIR, ANTHROPIC_BASE_URL, from the environment or ./.env. The app
serves MCP on a free 127.0.0.1 port. PAIGE_AGENT_CMD replaces `claude` in the terminal.

Options:
  -h, --help     Print this help
  -V, --version  Print the version
";

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    Help,
    Version,
    Run { project_dir: Option<std::path::PathBuf> },
}

/// Parses the arguments after the program name.
pub fn parse_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Invocation, String> {
    let mut project_dir = None;
    for arg in args {
        match arg.to_str() {
            Some("-h" | "--help") => return Ok(Invocation::Help),
            Some("-V" | "--version") => return Ok(Invocation::Version),
            Some(flag) if flag.starts_with('-') => return Err(format!("unknown option {flag}; see --help")),
            _ if project_dir.is_some() => return Err("only one PROJECT_DIR may be given; see --help".into()),
            _ => project_dir = Some(std::path::PathBuf::from(arg)),
        }
    }
    Ok(Invocation::Run { project_dir })
}

/// The desktop app: `paige-app [PROJECT_DIR]`, settings as for `paige serve`.
pub fn run() {
    let project_dir = match parse_args(std::env::args_os().skip(1)) {
        Ok(Invocation::Help) => return print!("{USAGE}"),
        Ok(Invocation::Version) => return println!("paige-app {}", env!("CARGO_PKG_VERSION")),
        Ok(Invocation::Run { project_dir }) => project_dir,
        Err(err) => {
            eprintln!("error: {err}");
            std::process::exit(2);
        }
    };
    init_logging();
    if let Err(err) = try_run(project_dir) {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

fn try_run(project_dir: Option<std::path::PathBuf>) -> anyhow::Result<()> {
    let env: HashMap<String, String> = std::env::vars().collect();
    let config = Config::load(&env, ConfigOverrides { project_dir, port: None, data_dir: None })?;
    let backend = tauri::async_runtime::block_on(start_backend(config))?;
    let builder = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            if let Some(window) = app.get_webview_window("main") {
                let _ = window.unminimize();
                let _ = window.set_focus();
            }
        }))
        .plugin(tauri_plugin_window_state::Builder::default().build());
    let app = wire(builder, backend.core.clone(), Some(backend.terminal.clone()))
        .build(tauri::generate_context!())
        .context("cannot start the window")?;
    app.run(move |_handle, event| {
        if let tauri::RunEvent::Exit = event {
            tauri::async_runtime::block_on(stop_backend(&backend));
        }
    });
    Ok(())
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_target(false).try_init();
}

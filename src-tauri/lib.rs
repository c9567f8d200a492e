//! Paige's desktop shell: the only crate that knows Tauri. It opens a project's core and
//! localhost server in-process (a free port), carries UI frames between the webview and
//! the core, forwards every core event to the webview, and keeps the app's settings (the
//! saved API key, recent projects) for the welcome and settings screens.
//!
//! - command `ui_message(frame)`: one client frame of the UI catalog into
//!   `Core::handle_text`; returns the reply frame for this window, if any;
//! - event `paige://ui`: what every UI is shown (`Event::into_ui_message`) as an encoded frame (the same text `/ws` sends);
//! - event `paige://terminal`: the output of the window's terminal (its own channel),
//!   emitted to that window only. The terminal opens with the window's first frame and is
//!   killed when the page reloads or the window closes;
//! - commands `app_state`, `open_project(path)`, `choose_project` (native folder dialog),
//!   `save_api_key(key)`, `save_allowed_mcp_tools(tools)`, `forget_project(path)`: the first-run
//!   and settings screens.
//!   Opening another project replaces the backend; the window then reloads.
//! - command `open_external(url)`: an `https:` link in the system browser (`external.rs`).

mod backend;
mod error;
mod external;
mod shell;
pub mod webview_tuning;

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Context;
use tauri::{Manager, Runtime};

pub use backend::{Backend, TerminalSpec};
pub use error::{CommandError, CommandErrorCode};
pub use external::{ExternalOpener, MAX_URL_LEN, https_url};
pub use shell::{ApiKeyState, AppState, KeySource, Launch, ProjectEntry, RecentEntry, Shell};

#[cfg(feature = "ts")]
pub mod bindings;

/// The event what every UI is shown of the core is emitted as.
pub const UI_EVENT: &str = "paige://ui";
/// The event a window's terminal output is emitted as.
pub const TERMINAL_EVENT: &str = "paige://terminal";

/// One frame from a window's UI to the core; the reply frame for that window, if any. Async,
/// and the core's work (files, SQLite, the first frame's terminal spawn) runs on the blocking
/// pool: the main thread, which paints the window and answers the other commands, never
/// waits for it. The UI sends a window's frames one after another (`transport.ts`), so they
/// are handled in order.
#[tauri::command]
async fn ui_message<R: Runtime>(
    frame: String,
    window: tauri::Window<R>,
    shell: tauri::State<'_, Shell>,
) -> Result<Option<String>, CommandError> {
    let backend =
        shell.backend().ok_or_else(|| CommandError::new(CommandErrorCode::NoProject, "no project is open"))?;
    // Started here rather than in `setup`: forwarding must run before the window's first
    // frame is answered, and each opened project has its own core to forward.
    backend.forward_events_once(window.app_handle());
    let app = window.app_handle().clone();
    let label = window.label().to_owned();
    let work = move || {
        let connection = app.state::<Shell>().connection(&app, &backend, &label);
        backend.core.handle_text(connection, &frame)
    };
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|err| CommandError::new(CommandErrorCode::Internal, format!("the frame was not handled: {err}")))
}

/// What the welcome and settings screens show.
#[tauri::command]
fn app_state(shell: tauri::State<'_, Shell>) -> AppState {
    shell.state()
}

/// Opens the project in `path`, replacing the open one (the window then reloads).
#[tauri::command]
async fn open_project<R: Runtime>(
    path: String,
    window: tauri::WebviewWindow<R>,
    shell: tauri::State<'_, Shell>,
) -> Result<AppState, CommandError> {
    let state = shell
        .open_project(Some(PathBuf::from(path)))
        .await
        .map_err(CommandError::with(CommandErrorCode::ProjectRefused))?;
    show_project_in_title(&window, &state);
    Ok(state)
}

/// Asks for a folder with the native dialog and opens it; `None` when the user cancels.
#[tauri::command]
async fn choose_project<R: Runtime>(
    window: tauri::WebviewWindow<R>,
    shell: tauri::State<'_, Shell>,
) -> Result<Option<AppState>, CommandError> {
    let dialogs = window
        .try_state::<tauri_plugin_dialog::Dialog<R>>()
        .ok_or_else(|| CommandError::new(CommandErrorCode::Dialog, "the folder dialog is not available"))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = dialogs.file().set_title("Open a project");
    if let Some(project) = shell.state().project {
        dialog = dialog.set_directory(project.path);
    }
    dialog.pick_folder(move |picked| {
        let _ = tx.send(picked);
    });
    let Some(picked) = rx.await.ok().flatten() else { return Ok(None) };
    let dir = picked
        .into_path()
        .map_err(|err| CommandError::new(CommandErrorCode::Dialog, format!("cannot use that folder: {err}")))?;
    let state = shell.open_project(Some(dir)).await.map_err(CommandError::with(CommandErrorCode::ProjectRefused))?;
    show_project_in_title(&window, &state);
    Ok(Some(state))
}

/// Where `export_learning_record` saved the record.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SavedRecord {
    pub path: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub lines: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub sessions: u64,
    /// The key a mentor can pin (`paige record verify FILE --key …`).
    pub public_key: String,
}

/// Asks where to save the signed learning record (the native save dialog) and writes it there;
/// `None` when the user cancels. Nothing leaves the machine but by this choice.
#[tauri::command]
async fn export_learning_record<R: Runtime>(
    window: tauri::WebviewWindow<R>,
    shell: tauri::State<'_, Shell>,
    since: Option<String>,
) -> Result<Option<SavedRecord>, CommandError> {
    let backend =
        shell.backend().ok_or_else(|| CommandError::new(CommandErrorCode::NoProject, "no project is open"))?;
    let dialogs = window
        .try_state::<tauri_plugin_dialog::Dialog<R>>()
        .ok_or_else(|| CommandError::new(CommandErrorCode::Dialog, "the save dialog is not available"))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let name = format!("paige-learning-record-{}.jsonl", chrono::Utc::now().format("%Y-%m-%d"));
    dialogs.file().set_title("Save the learning record").set_file_name(name).save_file(move |picked| {
        let _ = tx.send(picked);
    });
    let Some(picked) = rx.await.ok().flatten() else { return Ok(None) };
    let path = picked
        .into_path()
        .map_err(|err| CommandError::new(CommandErrorCode::Dialog, format!("cannot save there: {err}")))?;
    let core = backend.core.clone();
    let target = path.clone();
    let summary =
        tauri::async_runtime::spawn_blocking(move || core.coaching().export_record_to(&target, since.as_deref()))
            .await
            .map_err(|err| CommandError::new(CommandErrorCode::Internal, err.to_string()))?
            .map_err(CommandError::with(CommandErrorCode::Record))?;
    Ok(Some(SavedRecord {
        path: path.display().to_string(),
        lines: summary.lines,
        sessions: summary.sessions,
        public_key: summary.public_key,
    }))
}

/// Saves the Anthropic API key (an empty one removes it).
#[tauri::command]
fn save_api_key(key: String, shell: tauri::State<'_, Shell>) -> Result<AppState, CommandError> {
    shell.save_api_key(&key).map_err(CommandError::with(CommandErrorCode::Settings))
}

/// Saves the other MCP servers' tools coach mode allows.
#[tauri::command]
fn save_allowed_mcp_tools(tools: Vec<String>, shell: tauri::State<'_, Shell>) -> Result<AppState, CommandError> {
    shell.save_allowed_mcp_tools(&tools).map_err(CommandError::with(CommandErrorCode::Settings))
}

/// Removes a project from the recent list.
#[tauri::command]
fn forget_project(path: String, shell: tauri::State<'_, Shell>) -> Result<AppState, CommandError> {
    shell.forget_project(std::path::Path::new(&path)).map_err(CommandError::with(CommandErrorCode::Settings))
}

fn show_project_in_title<R: Runtime>(window: &tauri::WebviewWindow<R>, state: &AppState) {
    let title = match &state.project {
        Some(project) => format!("{} — Paige", project.name),
        None => "Paige".to_owned(),
    };
    if let Err(err) = window.set_title(&title) {
        tracing::warn!("cannot set the window title: {err}");
    }
}

/// The shell's commands and event forwarding on `builder`, over `shell`. The real app adds
/// its plugins, windows and the system browser (`ExternalOpener::system`); tests use
/// `tauri::test::mock_builder()` and manage their own opener.
pub fn wire<R: Runtime>(builder: tauri::Builder<R>, shell: Shell) -> tauri::Builder<R> {
    builder
        // Locates the hook command, the packages' `paige` sidecar (`backend::hook_command`).
        .plugin(tauri_plugin_shell::init())
        .manage(shell)
        .invoke_handler(tauri::generate_handler![
            ui_message,
            app_state,
            open_project,
            choose_project,
            save_api_key,
            save_allowed_mcp_tools,
            forget_project,
            export_learning_record,
            external::open_external
        ])
        .on_page_load(|webview, payload| {
            // A reloaded page is a new UI: it gets a new connection and terminal.
            if payload.event() == tauri::webview::PageLoadEvent::Started {
                webview.state::<Shell>().disconnect(webview.label());
            }
        })
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::Destroyed = event {
                window.state::<Shell>().disconnect(window.label());
            }
        })
}

/// What `paige-app --help` prints.
pub const USAGE: &str = "\
Paige desktop app: a coding coach around your project, with Claude Code in its terminal.

Usage: paige-app [PROJECT_DIR]

Settings as for `paige serve` (see `paige serve --help`): PROJECT_DIR (or the argument),
ANTHROPIC_API_KEY, DATA_DIR, ANTHROPIC_BASE_URL, from the environment or ./.env. Without a
project the app opens on its welcome screen (recent projects, a folder picker); a key saved
in its settings (DATA_DIR/settings.json, mode 0600) is used when ANTHROPIC_API_KEY is unset.
The app serves MCP on a free 127.0.0.1 port. PAIGE_AGENT_CMD replaces `claude` in the terminal.

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
    paige_core::limits::cap_malloc_arenas();
    let project_dir = match parse_args(std::env::args_os().skip(1)) {
        Ok(Invocation::Help) => return print!("{USAGE}"),
        Ok(Invocation::Version) => return println!("paige-app {}", env!("CARGO_PKG_VERSION")),
        Ok(Invocation::Run { project_dir }) => project_dir,
        Err(err) => {
            eprintln!("error: {err}");
            std::process::exit(2);
        }
    };
    // First, while the process has one thread: how the webview renders (for its memory).
    let rendering = webview_tuning::prepare();
    init_logging();
    if !rendering.is_empty() {
        let vars: Vec<String> = rendering.iter().map(|(name, value)| format!("{name}={value}")).collect();
        tracing::info!("no GPU: the webview renders without compositing ({})", vars.join(" "));
    }
    if let Err(err) = try_run(project_dir) {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

fn try_run(project_dir: Option<PathBuf>) -> anyhow::Result<()> {
    // A broken .env is reported on the welcome screen rather than ending the app.
    let dotenv_problem = match dotenvy::dotenv() {
        Err(err) if !err.not_found() => Some(format!("cannot read .env: {err}")),
        _ => None,
    };
    let env: HashMap<String, String> = std::env::vars().collect();
    let data_dir = paige_core::config::data_dir(&env, None)?;
    let wanted = project_dir.is_some() || env.get("PROJECT_DIR").is_some_and(|dir| !dir.trim().is_empty());
    let shell = Shell::new(Launch { env, data_dir });
    // Without a project (or when it cannot be opened) the window shows the welcome screen.
    if wanted && let Err(err) = tauri::async_runtime::block_on(shell.open_project(project_dir)) {
        tracing::warn!("the project did not open: {err}");
        shell.set_notice(Some(format!("The project did not open: {err}")));
    }
    if let Some(problem) = dotenv_problem {
        tracing::warn!("{problem}");
        shell.set_notice(Some(problem));
    }
    // Stops listening for signals once the app exits by itself.
    let signals = tokio_util::sync::CancellationToken::new();
    let builder = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            if let Some(window) = app.get_webview_window("main") {
                let _ = window.unminimize();
                let _ = window.set_focus();
            }
        }))
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_dialog::init())
        .manage(ExternalOpener::system())
        .setup({
            let signals = signals.clone();
            move |app| {
                if let Some(window) = app.get_webview_window("main") {
                    show_project_in_title(&window, &app.state::<Shell>().state());
                }
                exit_on_signals(app.handle().clone(), signals)?;
                Ok(())
            }
        });
    let app = wire(builder, shell).build(tauri::generate_context!()).context("cannot start the window")?;
    app.run(move |handle, event| {
        if let tauri::RunEvent::Exit = event {
            signals.cancel();
            tauri::async_runtime::block_on(handle.state::<Shell>().close());
        }
    });
    Ok(())
}

/// SIGTERM (a logout, `kill`) or SIGINT (Ctrl-C in the launching terminal) exits the app the
/// way closing its window does: terminals killed, database checkpointed, run file removed.
fn exit_on_signals<R: Runtime>(
    app: tauri::AppHandle<R>,
    stop: tokio_util::sync::CancellationToken,
) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let _runtime = tauri::async_runtime::handle().inner().enter();
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tauri::async_runtime::spawn(async move {
        let name = tokio::select! {
            _ = stop.cancelled() => return,
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        };
        tracing::info!("{name}: shutting down");
        app.exit(0);
    });
    Ok(())
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours only on a terminal: a log file (a desktop launcher's) gets plain text.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .try_init();
}

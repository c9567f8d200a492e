//! What the commands share: the open project's backend (none on first run), one core
//! connection per window, and what the app needs to open another project — the launch
//! environment and `DATA_DIR`, whose `settings.json` holds the saved key and recent projects.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use paige_core::launch::AgentServer;
use paige_core::protocol::ConnectionId;
use paige_core::settings::{self, Settings};
use paige_core::{Config, ConfigOverrides};
use serde::Serialize;

use crate::backend::Backend;

/// How the app was launched: the environment (with `.env` read in) and `DATA_DIR`.
#[derive(Debug, Clone)]
pub struct Launch {
    pub env: HashMap<String, String>,
    pub data_dir: PathBuf,
}

pub struct Shell {
    launch: Launch,
    backend: Mutex<Option<Arc<Backend>>>,
    connections: Mutex<HashMap<String, ConnectionId>>,
    /// Why the project of the command line or `PROJECT_DIR` did not open, shown on the
    /// welcome screen until another project opens.
    notice: Mutex<Option<String>>,
    /// Opening projects takes turns: two quick clicks must not start two backends.
    opening: tokio::sync::Mutex<()>,
}

/// What the welcome and settings screens show (`app_state` and the commands that change it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AppState {
    pub project: Option<ProjectEntry>,
    pub recent_projects: Vec<RecentEntry>,
    pub api_key: ApiKeyState,
    /// Where the key and the recent projects are kept.
    pub settings_path: String,
    /// A problem to show: a project that did not open at launch, unreadable settings.
    pub notice: Option<String>,
    /// Other MCP servers' tools coach mode lets Claude Code call (`mcp__server__tool` or
    /// `mcp__server__*`); all others are denied.
    pub allowed_mcp_tools: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProjectEntry {
    pub path: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RecentEntry {
    pub path: String,
    pub name: String,
    /// ISO 8601.
    pub opened_at: String,
    /// Whether the directory still exists.
    pub available: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyState {
    pub configured: bool,
    pub source: KeySource,
    /// The key's last four characters, to recognise it by.
    pub last_four: Option<String>,
}

/// Where the key in use comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum KeySource {
    /// `ANTHROPIC_API_KEY` (or `.env`), which wins over a saved key.
    Environment,
    /// Saved in the app's settings.
    Settings,
    None,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn entry(path: &Path) -> ProjectEntry {
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned());
    ProjectEntry { path: path.display().to_string(), name: name.unwrap_or_else(|| path.display().to_string()) }
}

impl Shell {
    /// A shell that can open projects: starts without one.
    pub fn new(launch: Launch) -> Shell {
        Shell {
            launch,
            backend: Mutex::new(None),
            connections: Mutex::new(HashMap::new()),
            notice: Mutex::new(None),
            opening: tokio::sync::Mutex::new(()),
        }
    }

    /// A shell with `backend` already open (tests, embedding).
    pub fn with_backend(launch: Launch, backend: Backend) -> Shell {
        let shell = Shell::new(launch);
        *lock(&shell.backend) = Some(Arc::new(backend));
        shell
    }

    /// The open project's backend.
    pub fn backend(&self) -> Option<Arc<Backend>> {
        lock(&self.backend).clone()
    }

    pub(crate) fn set_notice(&self, notice: Option<String>) {
        *lock(&self.notice) = notice;
    }

    /// The window's core connection; the first call connects and opens its terminal, whose
    /// output goes to that window as `paige://terminal`.
    pub(crate) fn connection<R: tauri::Runtime>(
        &self,
        app: &tauri::AppHandle<R>,
        backend: &Backend,
        window: &str,
    ) -> ConnectionId {
        let mut connections = lock(&self.connections);
        if let Some(id) = connections.get(window) {
            return *id;
        }
        let id = backend.core.connect();
        connections.insert(window.to_owned(), id);
        drop(connections);
        if let Some(spec) = &backend.terminal {
            let config = backend.core.config();
            let env = &self.launch.env;
            let (mode, confinement) = backend.core.agent_launch_mode(env.get("PATH").map(std::ffi::OsStr::new));
            let server = AgentServer { hook_command: crate::backend::hook_command(app, env), ..spec.server.clone() };
            if server.hook_command.is_none()
                && spec.agent_override.is_none()
                && matches!(mode, paige_core::launch::AgentMode::Coach { .. })
            {
                backend.core.show_agent_problem(paige_core::launch::MISSING_HOOKS);
            }
            let governed = matches!(mode, paige_core::launch::AgentMode::Governed);
            // Governed mode by construction where an OS layer can make the view: Claude Code
            // starts with the whole project read-only, and again in the view of each intent
            // it selects (`connection_terminals/relaunch.rs`).
            let viewed = governed && spec.agent_override.is_none() && confinement.read_only();
            let command = paige_core::launch::Launch {
                project_dir: &config.project_dir,
                data_dir: &config.data_dir,
                server: &server,
                mode,
                env,
                origin: paige_core::launch::Origin::App,
                agent_override: spec.agent_override.as_deref(),
                confinement: confinement.clone(),
                extra_args: Vec::new(),
                scope: viewed.then(paige_core::launch::scope::View::before_intent),
            }
            .command();
            let claude = command.as_ref().is_ok_and(|command| command.accepts_nudges);
            let rebuild: paige_core::launch::Rebuild = {
                let (project_dir, data_dir, server, env) =
                    (config.project_dir.clone(), config.data_dir.clone(), server.clone(), env.clone());
                let confinement = confinement.clone();
                std::sync::Arc::new(move |intent: &str| {
                    let view = paige_core::governance::intents::view_of_intent(&project_dir, intent)?;
                    paige_core::launch::Launch {
                        project_dir: &project_dir,
                        data_dir: &data_dir,
                        server: &server,
                        mode,
                        env: &env,
                        origin: paige_core::launch::Origin::App,
                        agent_override: None,
                        confinement: confinement.clone(),
                        extra_args: vec!["--continue".into()],
                        scope: Some(view),
                    }
                    .command()
                    .map_err(|err| err.to_string())
                })
            };
            let opened = command.and_then(|command| match viewed && claude {
                true => backend.core.open_governed_terminal(id, &command, rebuild),
                false => backend.core.open_terminal(id, &command),
            });
            match opened {
                Ok(output) => crate::backend::forward_terminal(app.clone(), &backend.core, window.to_owned(), output),
                Err(err) => tracing::error!("cannot open the terminal: {err}"),
            }
            // Coach mode's promise, checked against the installed Claude Code the first time
            // this version is seen (`launch::verify`); later starts show the kept result.
            if let (true, true, Some(paige)) =
                (claude, matches!(mode, paige_core::launch::AgentMode::Coach { .. }), server.hook_command.clone())
            {
                backend.core.verify_guard(paige, env.clone());
            }
        }
        id
    }

    /// The window a connection belongs to.
    pub(crate) fn window_of(&self, id: ConnectionId) -> Option<String> {
        lock(&self.connections).iter().find(|(_, c)| **c == id).map(|(label, _)| label.clone())
    }

    /// Ends the window's connection: its terminal is killed with its process group.
    pub(crate) fn disconnect(&self, window: &str) {
        let id = lock(&self.connections).remove(window);
        if let (Some(id), Some(backend)) = (id, self.backend()) {
            backend.core.disconnect(id);
        }
    }

    /// The saved settings; unreadable ones read as empty, with the reason.
    fn settings(&self) -> (Settings, Option<String>) {
        match Settings::load(&self.launch.data_dir) {
            Ok(settings) => (settings, None),
            Err(err) => (Settings::default(), Some(err.to_string())),
        }
    }

    /// What the welcome and settings screens show.
    pub fn state(&self) -> AppState {
        let (settings, settings_problem) = self.settings();
        let from_env = self.launch.env.get("ANTHROPIC_API_KEY").map(|key| key.trim()).filter(|key| !key.is_empty());
        let (source, key) = match (from_env, settings.anthropic_api_key.as_deref()) {
            (Some(key), _) => (KeySource::Environment, Some(key)),
            (None, Some(key)) => (KeySource::Settings, Some(key)),
            (None, None) => (KeySource::None, None),
        };
        let last_four = key.map(|key| key.chars().skip(key.chars().count().saturating_sub(4)).collect());
        AppState {
            project: self.backend().map(|backend| entry(&backend.core.config().project_dir)),
            recent_projects: settings
                .recent_projects
                .iter()
                .map(|recent| RecentEntry {
                    opened_at: recent.opened_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    available: recent.path.is_dir(),
                    ..RecentEntry::from(entry(&recent.path))
                })
                .collect(),
            api_key: ApiKeyState { configured: key.is_some(), source, last_four },
            settings_path: settings::path(&self.launch.data_dir).display().to_string(),
            notice: lock(&self.notice).clone().or(settings_problem),
            allowed_mcp_tools: settings.coach.allowed_mcp_tools.clone(),
        }
    }

    /// The configuration for opening `dir`: the launch environment, the saved key where
    /// the environment has none.
    fn config_for(&self, dir: Option<PathBuf>) -> Result<Config, String> {
        let launch = &self.launch;
        let mut env = launch.env.clone();
        self.settings().0.fill_env(&mut env);
        let overrides = ConfigOverrides { project_dir: dir, port: None, data_dir: Some(launch.data_dir.clone()) };
        Config::load_without_key(&env, overrides).map_err(|err| match err {
            paige_core::ConfigError::ProjectDirNotFound(dir) => format!("{} does not exist", dir.display()),
            paige_core::ConfigError::ProjectDirNotADirectory(dir) => format!("{} is not a folder", dir.display()),
            other => other.to_string(),
        })
    }

    /// Opens the project in `dir` (the launch's `PROJECT_DIR` when `None`): starts its
    /// backend, then stops the one it replaces, whose windows must reload. Remembers it
    /// among the recent projects. Nothing changes when it cannot be opened.
    pub async fn open_project(&self, dir: Option<PathBuf>) -> Result<AppState, String> {
        let _turn = self.opening.lock().await;
        let config = self.config_for(dir)?;
        let current = self.backend();
        if current.as_ref().is_some_and(|backend| backend.core.config().project_dir == config.project_dir) {
            return Ok(self.state());
        }
        let dir = config.project_dir.clone();
        let backend = Backend::start(config, &self.launch.env).await.map_err(|err| format!("{err:#}"))?;
        *lock(&self.backend) = Some(Arc::new(backend));
        let windows: Vec<ConnectionId> = lock(&self.connections).drain().map(|(_, id)| id).collect();
        if let Some(old) = current {
            for id in windows {
                old.core.disconnect(id);
            }
            old.stop().await;
        }
        self.set_notice(None);
        self.remember(|settings| settings.record_project(&dir, chrono::Utc::now()))?;
        Ok(self.state())
    }

    /// Saves `key` (an empty one removes the saved key) and, unless `ANTHROPIC_API_KEY`
    /// is set (which wins), uses it from now on.
    pub fn save_api_key(&self, key: &str) -> Result<AppState, String> {
        let saved = self.remember(|settings| settings.set_api_key(key))?;
        let state = self.state();
        if state.api_key.source != KeySource::Environment
            && let Some(backend) = self.backend()
        {
            backend.core.api().set_api_key(saved.anthropic_api_key);
        }
        Ok(state)
    }

    /// Saves the other MCP servers' tools coach mode allows: each `mcp__<server>__<tool>` or
    /// `mcp__<server>__*`, never Paige's own. Blank lines and duplicates are dropped.
    pub fn save_allowed_mcp_tools(&self, tools: &[String]) -> Result<AppState, String> {
        let mut clean: Vec<String> = Vec::new();
        for tool in tools.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
            let parts: Vec<&str> = tool.splitn(3, "__").collect();
            let well_formed = parts.len() == 3 && parts[0] == "mcp" && !parts[1].is_empty() && !parts[2].is_empty();
            if !well_formed || tool.contains(char::is_whitespace) {
                return Err(format!(
                    "{tool:?} is not an MCP tool name: write mcp__<server>__<tool> or mcp__<server>__*"
                ));
            }
            if parts[1] == "paige" {
                return Err(format!("{tool} is Paige's own tool: it needs no allowing"));
            }
            if !clean.iter().any(|t| t == tool) {
                clean.push(tool.to_owned());
            }
        }
        self.remember(|settings| settings.coach.allowed_mcp_tools = clean)?;
        Ok(self.state())
    }

    /// Drops `dir` from the recent projects.
    pub fn forget_project(&self, dir: &Path) -> Result<AppState, String> {
        self.remember(|settings| {
            settings.forget_project(dir);
        })?;
        Ok(self.state())
    }

    /// Changes the saved settings and writes them back; what was saved.
    fn remember(&self, change: impl FnOnce(&mut Settings)) -> Result<Settings, String> {
        let mut settings = self.settings().0;
        change(&mut settings);
        settings.save(&self.launch.data_dir).map_err(|err| err.to_string())?;
        Ok(settings)
    }

    /// Stops the open project's backend (app exit).
    pub async fn close(&self) {
        let backend = lock(&self.backend).take();
        if let Some(backend) = backend {
            backend.stop().await;
        }
    }
}

impl From<ProjectEntry> for RecentEntry {
    fn from(project: ProjectEntry) -> RecentEntry {
        RecentEntry { path: project.path, name: project.name, opened_at: String::new(), available: false }
    }
}

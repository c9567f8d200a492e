//! Configuration (spec Story 1): environment first, then CLI flags on top.
//!
//! Loading is a pure function of an environment map and flag overrides, so it is tested
//! without touching the process environment. The binary is responsible for reading `.env`
//! into that map (values already in the environment win, as with dotenv).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const DEFAULT_PORT: u16 = 3000;

/// Validated settings for running Paige.
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// TCP port on 127.0.0.1; 0 lets the OS choose a free one.
    pub port: u16,
    /// The learner's project, canonicalized. Every file path from outside stays inside it.
    pub project_dir: PathBuf,
    /// Where `paige.db` and `run/server.json` live. Created on start if missing.
    pub data_dir: PathBuf,
    pub anthropic_api_key: String,
    /// `ANTHROPIC_BASE_URL`; the client uses `https://api.anthropic.com` when absent.
    pub anthropic_base_url: Option<String>,
    /// `PAIGE_HAIKU_MODEL` / `PAIGE_SONNET_MODEL`: move a tier to another model whose price
    /// is in `paige_core::api::PRICES`. The spec's models when absent.
    pub haiku_model: Option<String>,
    pub sonnet_model: Option<String>,
    /// Optional ChromaDB server; the embedded memory store is used when absent.
    pub chromadb_url: Option<String>,
    /// `PAIGE_MODEL_DIR`: where the embedding model's folder (`all-MiniLM-L6-v2/`) is;
    /// `DATA_DIR/models` when absent (see [`Config::models_dir`]).
    pub model_dir: Option<PathBuf>,
    /// `PAIGE_GH`: the GitHub CLI Paige asks for the project's issues; `gh` on `PATH` when
    /// absent. Without a working one, sessions start from what the UI typed.
    pub gh_program: Option<PathBuf>,
    /// Fixed per-launch token from `PAIGE_TOKEN`; a random one is generated when absent.
    pub token: Option<String>,
    /// Caps on memory and connections (`PAIGE_MAX_*`, `PAIGE_*_TIMEOUT_MS`).
    pub limits: crate::limits::Limits,
    /// Whether coach mode runs Claude Code in the read-only view (`PAIGE_JAIL`, probed with
    /// `PATH` on load); [`Config::new`] has none.
    pub agent_jail: crate::launch::jail::Confinement,
    /// How the learner runs Claude Code for this Paige from their own terminal
    /// (`/path/to/paige claude`): set by `paige serve`, whose browser UI has no terminal and
    /// shows it (issue 41: a bare `paige claude` is not on `PATH` on a fresh clone).
    pub agent_command: Option<String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("port", &self.port)
            .field("project_dir", &self.project_dir)
            .field("data_dir", &self.data_dir)
            .field("anthropic_api_key", &"<redacted>")
            .field("anthropic_base_url", &self.anthropic_base_url)
            .field("haiku_model", &self.haiku_model)
            .field("sonnet_model", &self.sonnet_model)
            .field("chromadb_url", &self.chromadb_url)
            .field("model_dir", &self.model_dir)
            .field("gh_program", &self.gh_program)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("limits", &self.limits)
            .field("agent_jail", &self.agent_jail)
            .field("agent_command", &self.agent_command)
            .finish()
    }
}

/// Values given as command-line flags; each one beats its environment variable.
#[derive(Debug, Default, Clone)]
pub struct ConfigOverrides {
    pub project_dir: Option<PathBuf>,
    pub port: Option<u16>,
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(
        "missing required environment variable{}: {} (set {} in the environment or in .env{})",
        if .0.len() == 1 { "" } else { "s" },
        .0.join(", "),
        if .0.len() == 1 { "it" } else { "them" },
        if .0.contains(&"ANTHROPIC_API_KEY") { "; a key saved in the desktop app's settings also counts" } else { "" }
    )]
    Missing(Vec<&'static str>),
    #[error("PROJECT_DIR does not exist: {0}")]
    ProjectDirNotFound(PathBuf),
    #[error("PROJECT_DIR is not a directory: {0}")]
    ProjectDirNotADirectory(PathBuf),
    #[error("PROJECT_DIR cannot be resolved: {path}: {reason}")]
    ProjectDirUnreadable { path: PathBuf, reason: String },
    #[error("PORT must be a whole number from 0 to 65535, got {0:?}")]
    InvalidPort(String),
    #[error("{var}: {source}")]
    UnknownModel { var: &'static str, source: crate::models::UnknownModel },
    #[error(transparent)]
    InvalidLimit(#[from] crate::limits::InvalidLimit),
    #[error("DATA_DIR is not set and HOME is unknown, so the default ~/.paige/ cannot be used")]
    NoDataDir,
}

impl Config {
    /// Reads `PORT`, `PROJECT_DIR`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `DATA_DIR`,
    /// `CHROMADB_URL`, `PAIGE_MODEL_DIR`, `PAIGE_TOKEN`, `PAIGE_HAIKU_MODEL`, `PAIGE_SONNET_MODEL`
    /// and `PAIGE_JAIL` from `env`, applies `overrides`, and validates. Every missing required
    /// variable is reported at once.
    pub fn load(env: &HashMap<String, String>, overrides: ConfigOverrides) -> Result<Config, ConfigError> {
        Config::load_inner(env, overrides, true)
    }

    /// [`Config::load`] for the desktop app, which asks for a missing key in its settings
    /// screen instead of refusing to start: without `ANTHROPIC_API_KEY` the key is empty
    /// and model features answer "Anthropic API key not configured".
    pub fn load_without_key(env: &HashMap<String, String>, overrides: ConfigOverrides) -> Result<Config, ConfigError> {
        Config::load_inner(env, overrides, false)
    }

    fn load_inner(
        env: &HashMap<String, String>,
        overrides: ConfigOverrides,
        key_required: bool,
    ) -> Result<Config, ConfigError> {
        let var = |name: &str| env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());

        let project_dir = overrides.project_dir.or_else(|| var("PROJECT_DIR").map(PathBuf::from));
        let api_key = var("ANTHROPIC_API_KEY").map(str::to_owned);
        let mut missing = Vec::new();
        if project_dir.is_none() {
            missing.push("PROJECT_DIR");
        }
        if api_key.is_none() && key_required {
            missing.push("ANTHROPIC_API_KEY");
        }
        let Some(project_dir) = project_dir.filter(|_| missing.is_empty()) else {
            return Err(ConfigError::Missing(missing));
        };
        let anthropic_api_key = api_key.unwrap_or_default();

        let port = match (overrides.port, var("PORT")) {
            (Some(port), _) => port,
            (None, Some(raw)) => raw.parse().map_err(|_| ConfigError::InvalidPort(raw.to_owned()))?,
            (None, None) => DEFAULT_PORT,
        };

        let data_dir = data_dir(env, overrides.data_dir)?;

        let model = |var_name: &'static str| -> Result<Option<String>, ConfigError> {
            let Some(id) = var(var_name) else { return Ok(None) };
            match crate::models::price_of(id) {
                Some(_) => Ok(Some(id.to_owned())),
                None => Err(ConfigError::UnknownModel { var: var_name, source: crate::models::UnknownModel::new(id) }),
            }
        };
        let haiku_model = model("PAIGE_HAIKU_MODEL")?;
        let sonnet_model = model("PAIGE_SONNET_MODEL")?;

        Ok(Config {
            port,
            project_dir: resolve_project_dir(&project_dir)?,
            data_dir,
            anthropic_api_key,
            anthropic_base_url: var("ANTHROPIC_BASE_URL").map(str::to_owned),
            haiku_model,
            sonnet_model,
            chromadb_url: var("CHROMADB_URL").map(str::to_owned),
            model_dir: var("PAIGE_MODEL_DIR").map(|dir| expand_home(Path::new(dir), var("HOME"))),
            gh_program: var("PAIGE_GH").map(PathBuf::from),
            token: var("PAIGE_TOKEN").map(str::to_owned),
            limits: crate::limits::Limits::from_env(env)?,
            agent_jail: crate::launch::jail::Confinement::from_env(env),
            agent_command: None,
        })
    }

    /// The given essentials with defaults for the rest (port 0: any free port). For embedding
    /// the core and for tests; [`Config::load`] is the validating path from the environment.
    pub fn new(project_dir: PathBuf, data_dir: PathBuf, anthropic_api_key: impl Into<String>) -> Config {
        Config {
            port: 0,
            project_dir,
            data_dir,
            anthropic_api_key: anthropic_api_key.into(),
            anthropic_base_url: None,
            haiku_model: None,
            sonnet_model: None,
            chromadb_url: None,
            model_dir: None,
            gh_program: None,
            token: None,
            limits: Default::default(),
            agent_jail: crate::launch::jail::Confinement::Off("not set up for this core".into()),
            agent_command: None,
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("paige.db")
    }

    /// Where the embedding model's folder is looked for: `PAIGE_MODEL_DIR`, else
    /// `DATA_DIR/models`.
    pub fn models_dir(&self) -> PathBuf {
        self.model_dir.clone().unwrap_or_else(|| self.data_dir.join("models"))
    }
}

/// `DATA_DIR` alone (flag, else env, else `~/.paige/`): for commands that only need to find
/// a running Paige or its files.
pub fn data_dir(env: &HashMap<String, String>, flag: Option<PathBuf>) -> Result<PathBuf, ConfigError> {
    let var = |name: &str| env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    Ok(match flag.or_else(|| var("DATA_DIR").map(PathBuf::from)) {
        Some(dir) => expand_home(&dir, var("HOME")),
        None => Path::new(var("HOME").ok_or(ConfigError::NoDataDir)?).join(".paige"),
    })
}

fn resolve_project_dir(dir: &Path) -> Result<PathBuf, ConfigError> {
    match std::fs::metadata(dir) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(ConfigError::ProjectDirNotFound(dir.to_owned())),
        Err(err) => Err(ConfigError::ProjectDirUnreadable { path: dir.to_owned(), reason: err.to_string() }),
        Ok(meta) if !meta.is_dir() => Err(ConfigError::ProjectDirNotADirectory(dir.to_owned())),
        Ok(_) => dir
            .canonicalize()
            .map_err(|err| ConfigError::ProjectDirUnreadable { path: dir.to_owned(), reason: err.to_string() }),
    }
}

fn expand_home(dir: &Path, home: Option<&str>) -> PathBuf {
    match (dir.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => Path::new(home).join(rest),
        _ => dir.to_owned(),
    }
}

/// The model client's settings come from the configuration (here, so the client knows
/// nothing of `Config`).
impl crate::api::ApiSettings {
    /// Key, base URL and model overrides from the configuration.
    pub fn from_config(config: &Config) -> Result<crate::api::ApiSettings, crate::api::UnknownModel> {
        let mut settings =
            crate::api::ApiSettings::new(Some(config.anthropic_api_key.clone()).filter(|k| !k.is_empty()));
        if let Some(url) = &config.anthropic_base_url {
            settings.base_url = url.clone();
        }
        settings.models =
            crate::api::ModelMap::with_overrides(config.haiku_model.as_deref(), config.sonnet_model.as_deref())?;
        settings.deadlines = config.limits.model_deadlines;
        Ok(settings)
    }
}

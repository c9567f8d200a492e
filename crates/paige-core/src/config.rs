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
    /// Optional ChromaDB server; the embedded memory store is used when absent.
    pub chromadb_url: Option<String>,
    /// Fixed per-launch token from `PAIGE_TOKEN`; a random one is generated when absent.
    pub token: Option<String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("port", &self.port)
            .field("project_dir", &self.project_dir)
            .field("data_dir", &self.data_dir)
            .field("anthropic_api_key", &"<redacted>")
            .field("chromadb_url", &self.chromadb_url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
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
        "missing required environment variable{}: {} (set {} in the environment or in .env)",
        if .0.len() == 1 { "" } else { "s" },
        .0.join(", "),
        if .0.len() == 1 { "it" } else { "them" }
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
    #[error("DATA_DIR is not set and HOME is unknown, so the default ~/.paige/ cannot be used")]
    NoDataDir,
}

impl Config {
    /// Reads `PORT`, `PROJECT_DIR`, `ANTHROPIC_API_KEY`, `DATA_DIR`, `CHROMADB_URL` and
    /// `PAIGE_TOKEN` from `env`, applies `overrides`, and validates. Every missing required
    /// variable is reported at once.
    pub fn load(env: &HashMap<String, String>, overrides: ConfigOverrides) -> Result<Config, ConfigError> {
        let var = |name: &str| env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());

        let project_dir = overrides.project_dir.or_else(|| var("PROJECT_DIR").map(PathBuf::from));
        let api_key = var("ANTHROPIC_API_KEY").map(str::to_owned);
        let mut missing = Vec::new();
        if project_dir.is_none() {
            missing.push("PROJECT_DIR");
        }
        if api_key.is_none() {
            missing.push("ANTHROPIC_API_KEY");
        }
        let (Some(project_dir), Some(anthropic_api_key)) = (project_dir, api_key) else {
            return Err(ConfigError::Missing(missing));
        };

        let port = match (overrides.port, var("PORT")) {
            (Some(port), _) => port,
            (None, Some(raw)) => raw.parse().map_err(|_| ConfigError::InvalidPort(raw.to_owned()))?,
            (None, None) => DEFAULT_PORT,
        };

        let data_dir = match overrides.data_dir.or_else(|| var("DATA_DIR").map(PathBuf::from)) {
            Some(dir) => expand_home(&dir, var("HOME")),
            None => Path::new(var("HOME").ok_or(ConfigError::NoDataDir)?).join(".paige"),
        };

        Ok(Config {
            port,
            project_dir: resolve_project_dir(&project_dir)?,
            data_dir,
            anthropic_api_key,
            chromadb_url: var("CHROMADB_URL").map(str::to_owned),
            token: var("PAIGE_TOKEN").map(str::to_owned),
        })
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("paige.db")
    }
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

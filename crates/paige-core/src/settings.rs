//! `DATA_DIR/settings.json`: what the desktop app remembers between launches — the
//! Anthropic API key a user typed into the settings screen and the recently opened
//! projects. The file holds a secret, so it is written atomically with mode 0600 (its
//! directory 0700). Keys this version does not know are kept as they are.
//!
//! Precedence (DESIGN.md): the environment and `.env` win over the file; the file only
//! fills in what they leave out ([`Settings::fill_env`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How many recent projects are remembered.
pub const MAX_RECENT_PROJECTS: usize = 10;

/// The variable a stored key stands in for.
const API_KEY_VAR: &str = "ANTHROPIC_API_KEY";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anthropic_api_key: Option<String>,
    /// Most recent first, one entry per directory.
    #[serde(default)]
    pub recent_projects: Vec<RecentProject>,
    /// Coach mode's choices.
    #[serde(default, skip_serializing_if = "CoachSettings::is_default")]
    pub coach: CoachSettings,
    /// Whatever a newer (or older) Paige wrote that this one does not know.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// `coach` in settings.json.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoachSettings {
    /// Other MCP servers' tools coach mode lets Claude Code call (`mcp__server__tool`, or
    /// `mcp__server__*` for all of a server's). Their file changes are still watched.
    #[serde(default)]
    pub allowed_mcp_tools: Vec<String>,
}

impl CoachSettings {
    fn is_default(&self) -> bool {
        self == &CoachSettings::default()
    }

    /// Whether the user listed this MCP tool.
    pub fn allows(&self, tool: &str) -> bool {
        self.allowed_mcp_tools.iter().any(|allowed| match allowed.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => allowed == tool,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentProject {
    pub path: PathBuf,
    pub opened_at: DateTime<Utc>,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not valid settings JSON ({source}); fix or remove it")]
    Malformed { path: PathBuf, source: serde_json::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// Where the settings of `data_dir` live.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("settings.json")
}

impl Settings {
    /// Reads `DATA_DIR/settings.json`; no file is the empty default.
    pub fn load(data_dir: &Path) -> Result<Settings, SettingsError> {
        let path = path(data_dir);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|source| SettingsError::Malformed { path, source }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
            Err(source) => Err(SettingsError::Read { path, source }),
        }
    }

    /// Writes the settings atomically (temp file + rename), mode 0600. A file that could not
    /// be parsed is kept beside it as `settings.json.bad` first, so a save never loses it.
    pub fn save(&self, data_dir: &Path) -> Result<(), SettingsError> {
        use std::os::unix::fs::DirBuilderExt;

        let path = path(data_dir);
        let write_err = |source| SettingsError::Write { path: path.clone(), source };
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(data_dir).map_err(write_err)?;
        if matches!(Settings::load(data_dir), Err(SettingsError::Malformed { .. })) {
            std::fs::rename(&path, data_dir.join("settings.json.bad")).map_err(write_err)?;
        }
        // Created 0600, renamed into place; named so a start-up sweep removes one a crash left.
        let prefix = crate::files::data_temp_prefix();
        let mut file = tempfile::Builder::new().prefix(&prefix).tempfile_in(data_dir).map_err(write_err)?;
        let json = serde_json::to_vec_pretty(self).map_err(|err| write_err(std::io::Error::other(err)))?;
        file.write_all(&json).map_err(write_err)?;
        file.as_file().sync_all().map_err(write_err)?;
        file.persist(&path).map_err(|err| write_err(err.error))?;
        Ok(())
    }

    /// Puts `dir` at the top of the recent projects (once), keeping at most
    /// [`MAX_RECENT_PROJECTS`].
    pub fn record_project(&mut self, dir: &Path, now: DateTime<Utc>) {
        self.recent_projects.retain(|recent| recent.path != dir);
        self.recent_projects.insert(0, RecentProject { path: dir.to_owned(), opened_at: now });
        self.recent_projects.truncate(MAX_RECENT_PROJECTS);
    }

    /// Removes `dir` from the recent projects; whether it was there.
    pub fn forget_project(&mut self, dir: &Path) -> bool {
        let before = self.recent_projects.len();
        self.recent_projects.retain(|recent| recent.path != dir);
        self.recent_projects.len() != before
    }

    /// Stores `key` (trimmed); an empty key removes the stored one.
    pub fn set_api_key(&mut self, key: &str) {
        let key = key.trim();
        self.anthropic_api_key = (!key.is_empty()).then(|| key.to_owned());
    }

    /// Adds the stored key to `env` when the environment (or `.env`) has none.
    pub fn fill_env(&self, env: &mut std::collections::HashMap<String, String>) {
        let unset = env.get(API_KEY_VAR).is_none_or(|value| value.trim().is_empty());
        if let (true, Some(key)) = (unset, &self.anthropic_api_key) {
            env.insert(API_KEY_VAR.to_owned(), key.clone());
        }
    }
}

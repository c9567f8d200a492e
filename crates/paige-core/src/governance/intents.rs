//! `.orchestration/active_intents.yaml`: the intents an agent may work under.

use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use super::GovernanceError;

pub use crate::files::ORCHESTRATION_DIR;
pub const INTENTS_FILE: &str = "active_intents.yaml";
pub use crate::files::TRACE_FILE;
pub const INTENT_MAP_FILE: &str = "intent_map.md";
/// The intents file is read whole on every hook: one larger than this is refused.
pub const MAX_INTENTS_BYTES: u64 = 1 << 20;
/// An intent may cover at most this many existing files (spec: broad scope rejection).
pub const MAX_SCOPE_FILES: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum IntentStatus {
    Pending,
    InProgress,
    Completed,
    Blocked,
}

impl IntentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            IntentStatus::Pending => "PENDING",
            IntentStatus::InProgress => "IN_PROGRESS",
            IntentStatus::Completed => "COMPLETED",
            IntentStatus::Blocked => "BLOCKED",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    pub id: String,
    pub name: String,
    pub status: IntentStatus,
    #[serde(default)]
    pub owned_scope: Vec<String>,
    #[serde(default)]
    pub constraints: Vec<String>,
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// Extra keys are kept as they are.
    #[serde(flatten)]
    pub extra: serde_norway::Mapping,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntentsFile {
    #[serde(default)]
    pub active_intents: Vec<Intent>,
}

impl IntentsFile {
    pub fn get(&self, id: &str) -> Option<&Intent> {
        self.active_intents.iter().find(|i| i.id == id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Intent> {
        self.active_intents.iter_mut().find(|i| i.id == id)
    }
}

/// The sidecar directory of one project. Paths only; every read goes to disk, so a human's
/// edit takes effect on the next hook.
#[derive(Debug, Clone)]
pub struct Orchestration {
    root: PathBuf,
}

impl Orchestration {
    pub fn new(project_root: &Path) -> Orchestration {
        Orchestration { root: project_root.to_owned() }
    }

    pub fn project_root(&self) -> &Path {
        &self.root
    }

    pub fn dir(&self) -> PathBuf {
        self.root.join(ORCHESTRATION_DIR)
    }

    pub fn intents_path(&self) -> PathBuf {
        self.dir().join(INTENTS_FILE)
    }

    pub fn trace_path(&self) -> PathBuf {
        self.dir().join(TRACE_FILE)
    }

    pub fn map_path(&self) -> PathBuf {
        self.dir().join(INTENT_MAP_FILE)
    }

    pub fn exists(&self) -> bool {
        self.dir().is_dir()
    }

    pub fn load(&self) -> Result<IntentsFile, GovernanceError> {
        let path = self.intents_path();
        let io = |source| GovernanceError::Io { path: path.clone(), source };
        let file = super::open_sidecar(&path, false).map_err(io)?;
        let mut text = String::new();
        file.take(MAX_INTENTS_BYTES + 1).read_to_string(&mut text).map_err(io)?;
        if text.len() as u64 > MAX_INTENTS_BYTES {
            let too_large = format!("larger than {MAX_INTENTS_BYTES} bytes");
            return Err(io(std::io::Error::new(std::io::ErrorKind::InvalidData, too_large)));
        }
        serde_norway::from_str(&text).map_err(|err| GovernanceError::CorruptIntents { path, detail: err.to_string() })
    }

    /// Writes the YAML atomically (temp file + rename).
    pub fn save(&self, intents: &IntentsFile) -> Result<(), GovernanceError> {
        let path = self.intents_path();
        let text = serde_norway::to_string(intents)
            .map_err(|err| GovernanceError::CorruptIntents { path: path.clone(), detail: err.to_string() })?;
        write_atomic(&path, text.as_bytes())
    }

    /// Creates `.orchestration/` with an example intent, an empty ledger and map. Files that
    /// exist are left alone; returns the files created.
    pub fn init(&self) -> Result<Vec<PathBuf>, GovernanceError> {
        let dir = self.dir();
        std::fs::create_dir_all(&dir).map_err(|source| GovernanceError::Io { path: dir.clone(), source })?;
        let mut created = Vec::new();
        let files: [(PathBuf, &str); 3] = [
            (self.intents_path(), EXAMPLE_INTENTS),
            (self.trace_path(), ""),
            (self.map_path(), "# Intent map\n\nFiles and the intents that changed them.\n\n"),
        ];
        for (path, body) in files {
            if !path.exists() {
                write_atomic(&path, body.as_bytes())?;
                created.push(path);
            }
        }
        Ok(created)
    }
}

pub const EXAMPLE_INTENTS: &str = "\
# Intents an agent may work under. Status: PENDING | IN_PROGRESS | COMPLETED | BLOCKED.
# A BLOCKED intent resumes only when a human sets it back to IN_PROGRESS (or runs
# `paige intents reset <id>`).
active_intents:
  - id: INT-001
    name: Describe the first piece of work
    status: PENDING
    owned_scope: [\"src/feature/**\"]
    constraints: [\"no new dependencies\"]
    acceptance_criteria: [\"tests pass\"]
    budget: {turns: 50, tokens: 200000}
";

/// Writes a sidecar file by temp file and rename. The temp file is named as a save's, so one
/// a crash cuts short is swept from the project at the next start like theirs.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), GovernanceError> {
    use std::io::Write;
    let io = |source| GovernanceError::Io { path: path.to_owned(), source };
    // From the directory's handle, so a `.orchestration` that is a link out is never written.
    let (dir, name) = super::sidecar_dir(path).map_err(io)?;
    let (tmp, fd) =
        crate::files::create_temp(dir.as_fd(), rustix::fs::Mode::from_raw_mode(0o666)).map_err(|e| io(e.into()))?;
    let mut file = std::fs::File::from(fd);
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| rustix::fs::renameat(&dir, tmp.as_str(), &dir, name).map_err(std::io::Error::from));
    if let Err(source) = written {
        let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), rustix::fs::AtFlags::empty());
        return Err(io(source));
    }
    Ok(())
}

/// Compiles an intent's owned scope.
pub fn scope_set(intent: &Intent) -> Result<GlobSet, GovernanceError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in &intent.owned_scope {
        let glob = Glob::new(pattern).map_err(|err| GovernanceError::BadScope {
            intent: intent.id.clone(),
            detail: format!("invalid glob {pattern:?}: {err}"),
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|err| GovernanceError::BadScope { intent: intent.id.clone(), detail: err.to_string() })
}

/// Rejects intents too broad to audit: an empty scope, root-level recursive or wildcard
/// globs (`*`, `**`, `**/*`, `src/**/*`, `**/*.ts`), or more than [`MAX_SCOPE_FILES`]
/// existing files.
pub fn check_scope_breadth(intent: &Intent, project_root: &Path) -> Result<(), GovernanceError> {
    let broad = |detail: String| GovernanceError::BadScope { intent: intent.id.clone(), detail };
    if intent.owned_scope.is_empty() {
        return Err(broad("owned_scope is empty".into()));
    }
    for pattern in &intent.owned_scope {
        if is_broad_glob(pattern) {
            return Err(broad(format!(
                "{pattern:?} is too broad; name a feature directory such as \"src/weather/**\""
            )));
        }
    }
    let set = scope_set(intent)?;
    let mut count = 0usize;
    // The tree's walk: ignore files read safely (a FIFO named .gitignore cannot hang it).
    for entry in crate::files::walker(project_root, project_root).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(project_root) else { continue };
        if rel.starts_with(ORCHESTRATION_DIR) || rel.starts_with(".git") {
            continue;
        }
        if set.is_match(rel) {
            count += 1;
            if count > MAX_SCOPE_FILES {
                return Err(broad(format!("the scope covers more than {MAX_SCOPE_FILES} files")));
            }
        }
    }
    Ok(())
}

/// A glob is broad when its first path segment is a wildcard (`*`, `**`, `*.ts`, `**/*.ts`)
/// or when it is a directory followed by a recursive wildcard for every file at any depth
/// (`src/**/*`).
pub fn is_broad_glob(pattern: &str) -> bool {
    let pattern = pattern.trim().trim_start_matches("./");
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let Some(first) = segments.first() else { return true };
    if first.contains('*') || first.contains('?') || first.starts_with('{') || first.starts_with('[') {
        return true;
    }
    // `dir/**/*`: a recursive wildcard followed by a bare `*` under a single top-level dir.
    segments.len() == 3 && segments[1] == "**" && segments[2] == "*"
}

/// The view (`launch::scope`) for intent `id` of the project's `.orchestration/`: an intent Claude Code may
/// work on (pending or in progress), its folders made if missing.
pub fn view_of_intent(project_dir: &Path, id: &str) -> Result<crate::launch::scope::View, String> {
    let file =
        Orchestration::new(project_dir).load().map_err(|err| format!("cannot read the project's intents: {err}"))?;
    let Some(intent) = file.get(id) else {
        let ids: Vec<&str> = file.active_intents.iter().map(|i| i.id.as_str()).collect();
        return Err(format!("no intent {id} in .orchestration/active_intents.yaml (there: {})", ids.join(", ")));
    };
    if !matches!(intent.status, IntentStatus::Pending | IntentStatus::InProgress) {
        return Err(format!(
            "intent {id} is {}: only a pending or in-progress intent can be worked on",
            intent.status.as_str()
        ));
    }
    crate::launch::scope::for_intent(project_dir, id, &intent.owned_scope)
        .map_err(|why| format!("cannot make intent {id}'s view: {why}"))
}

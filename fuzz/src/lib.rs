//! What the cargo-fuzz targets share: a real core over a temp project, snapshots of the
//! files around it, and the intents the governed targets start from. The invariants are the
//! proptest suite's (`crates/paige-core/tests/it/fuzz.rs`): no panic, nothing outside the
//! project touched, no learner file changed except by a save.
//!
//! A target keeps one world for the whole run (opening a core per input would cost more than
//! the input), so each target resets what an input may have changed before the next one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use paige_core::governance::Orchestration;
use paige_core::{Config, Core, ManualClock};

/// Where `tests/fixtures/claude-code-hooks` recorded Claude Code's project.
pub const RECORDED_ROOT: &str = "/home/learner/project";

/// The intents a governed world starts every input from: in-progress, pending, completed
/// and budgeted intents, so selections and scope checks take every branch.
pub const INTENTS: &str = include_str!("../corpus/intents_yaml/weather.yaml");

/// Lets a panic inside brush-parser pass: `bash::classify` catches those by design (a command
/// it cannot parse is unknown), but libFuzzer's hook aborts on every panic, caught or not.
/// Any other panic still aborts. Call it from the target, after libFuzzer's hook is set.
pub fn tolerate_caught_parser_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.location().is_some_and(|at| at.file().contains("/brush-parser-")) {
                abort(info);
            }
        }));
    });
}

/// Every file, directory and symlink under `dir` with its content (or link target).
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_default();
                out.insert(path, target.into_os_string().into_encoded_bytes());
            } else if meta.is_dir() {
                out.insert(path.clone(), b"<dir>".to_vec());
                walk(&path, out);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

/// How the world's project starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No `.orchestration/`: the hook engine coaches.
    Coach,
    /// `.orchestration/` with [`INTENTS`]: the hook engine governs.
    Governed,
}

/// A real core over `outer/project` (with a symlink `escape` to `outer/sibling`) and a data
/// dir elsewhere, inside a runtime so background work runs too. It has no API key: every
/// model call fails at once, with no network and no retry delays.
pub struct World {
    pub core: Arc<Core>,
    pub runtime: tokio::runtime::Runtime,
    outer: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl World {
    pub fn new(mode: Mode) -> World {
        let outer = tempfile::tempdir().expect("outer dir");
        let project = outer.path().join("project");
        let sibling = outer.path().join("sibling");
        std::fs::create_dir_all(project.join("src/weather")).expect("src");
        std::fs::create_dir_all(&sibling).expect("sibling");
        std::fs::write(project.join("src/main.rs"), "fn main() {}\n").expect("main");
        std::fs::write(project.join("src/weather/mod.rs"), "pub fn today() {}\n").expect("weather");
        std::fs::write(project.join("README.md"), "# demo\n").expect("readme");
        std::fs::write(sibling.join("secret.txt"), "secret\n").expect("secret");
        std::os::unix::fs::symlink(&sibling, project.join("escape")).expect("symlink");
        if mode == Mode::Governed {
            let orch = Orchestration::new(&project);
            orch.init().expect("orchestration");
            std::fs::write(orch.intents_path(), INTENTS).expect("intents");
        }
        let data = tempfile::tempdir().expect("data dir");
        let mut config = Config::new(project, data.path().to_owned(), "");
        config.gh_program = Some(PathBuf::from("/nonexistent/gh"));
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
        let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).single().expect("date")));
        let core = {
            let _entered = runtime.enter();
            Arc::new(Core::open(config, clock).expect("core opens"))
        };
        World { core, runtime, outer, _data: data }
    }

    /// The directory holding the project and its sibling.
    pub fn outer(&self) -> &Path {
        self.outer.path()
    }

    /// The project as the core sees it (canonical).
    pub fn project(&self) -> PathBuf {
        self.core.project_root().path().to_owned()
    }

    /// Everything beside the project (the project's own files are compared separately).
    pub fn outside(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let project = self.outer.path().join("project");
        snapshot(self.outer.path()).into_iter().filter(|(p, _)| !p.starts_with(&project)).collect()
    }

    /// The learner's files: the project without Paige's `.orchestration/`.
    pub fn learner(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let orchestration = Orchestration::new(&self.project()).dir();
        snapshot(&self.project()).into_iter().filter(|(p, _)| !p.starts_with(&orchestration)).collect()
    }

    /// Puts the project's files back as `before` had them: removes what was added, rewrites
    /// what changed. A save may have created or changed files; the next input starts clean.
    pub fn restore(&self, before: &BTreeMap<PathBuf, Vec<u8>>) {
        let now = self.learner();
        for path in now.keys().rev().filter(|p| !before.contains_key(*p)) {
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path).expect("remove a new dir"),
                Ok(_) => std::fs::remove_file(path).expect("remove a new file"),
                Err(_) => {}
            }
        }
        for (path, bytes) in before {
            if bytes != b"<dir>" && now.get(path) != Some(bytes) && !path.is_symlink() {
                std::fs::write(path, bytes).expect("restore a file");
            }
        }
    }
}

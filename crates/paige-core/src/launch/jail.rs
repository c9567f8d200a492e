//! Layer 1 of coach mode, by construction: Claude Code and everything it starts — every
//! tool, subagents, background jobs, tools it gains next month — run in a read-only view of
//! the machine (bubblewrap). What stays writable:
//! - Paige's Claude Code config dir (`DATA_DIR/claude`, `CLAUDE_CONFIG_DIR`): Claude Code's
//!   sessions, login and trust state. The learner's own `~/.claude` stays read-only, so no
//!   setting, hook or skill can be planted there for their next session outside Paige;
//! - a scratch dir (`DATA_DIR/claude/scratch`) where builds inside the jail put their output
//!   (`CARGO_TARGET_DIR`, `PYTHONPYCACHEPREFIX`, `GOCACHE`, npm's cache: see `launch`);
//! - a private `/tmp`, gone with the jail.
//!
//! Read-only: the learner's files, `.git/` (no hook, config or `core.fsmonitor` for their next
//! git command), their home (`.gitconfig`, `.bashrc`, `~/.cargo` …) and — on purpose — the
//! project's ignored folders too (`target/`, `node_modules/`, `__pycache__/`): what is written
//! there runs later outside the jail (a planted `node_modules/.bin/jest`, a build script's
//! binary, a `.pyc`) on the learner's next build. New files at the project's root go nowhere.
//! `DATA_DIR` is hidden (the database, the version store, the run file with the UI token) but
//! for the files Claude Code is started with. The jail has its own process namespace: when
//! Claude Code ends, every process it started ends with it, so nothing runs on after the
//! turn, and no process outside (Paige's own `/proc/PID/cwd`) is in reach. The network is
//! shared: Claude Code needs its API, and Paige's hooks and MCP on 127.0.0.1 — where the
//! agent token opens nothing else.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Whether coach mode runs Claude Code in the jail: decided once, when Paige starts
/// ([`crate::config::Config::load`]), and followed by every launcher — the app's terminal,
/// and `paige claude` through the run file. While it holds the change detector stands down in
/// coach mode: nothing the agent runs can write a learner file, so whatever changes there is
/// the learner's own, and it is never undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// The jail, made with this `bwrap`.
    Jail(PathBuf),
    /// No jail, and why (`PAIGE_JAIL=0`; bubblewrap missing or unable to run here).
    Off(String),
}

impl Confinement {
    /// `PAIGE_JAIL=0` (or `off`, `false`) turns the jail off — for a machine where it gets in
    /// the way, and for `paige doctor --guard` to show what the other layers hold alone;
    /// otherwise it is on wherever [`probe`] finds it can run with `PATH` of `env`.
    pub fn from_env(env: &HashMap<String, String>) -> Confinement {
        let off = env.get("PAIGE_JAIL").is_some_and(|v| matches!(v.trim(), "0" | "off" | "false"));
        if off {
            return Confinement::Off("PAIGE_JAIL=0 turned it off".into());
        }
        match probe(env.get("PATH").map(std::ffi::OsStr::new)) {
            Ok(bwrap) => Confinement::Jail(bwrap),
            Err(why) => Confinement::Off(why),
        }
    }

    pub fn bwrap(&self) -> Option<&Path> {
        match self {
            Confinement::Jail(bwrap) => Some(bwrap),
            Confinement::Off(_) => None,
        }
    }

    /// Why there is no jail, when there is none.
    pub fn why_off(&self) -> Option<&str> {
        match self {
            Confinement::Jail(_) => None,
            Confinement::Off(why) => Some(why),
        }
    }
}

/// What the jail needs to know, all of it absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JailSpec {
    pub bwrap: PathBuf,
    pub project_dir: PathBuf,
    pub data_dir: PathBuf,
    /// Claude Code's config dir inside `data_dir`, writable (the scratch dir is inside it).
    pub claude_config_dir: PathBuf,
    /// Files inside `data_dir` Claude Code is started with (its MCP config and settings), read-only.
    pub run_files: Vec<PathBuf>,
    /// Paths under `/tmp` the jail must still see (read-only): `/tmp` is private in it.
    pub keep_under_tmp: Vec<PathBuf>,
}

/// Whether the jail can run here: `bwrap` on `path` and able to make a read-only view with
/// its own process namespace. `Err` says why not, for the doctor and the UI.
pub fn probe(path: Option<&std::ffi::OsStr>) -> Result<PathBuf, String> {
    let bwrap = crate::terminal::find_in_path("bwrap", path)
        .ok_or("bubblewrap is not installed (Debian/Ubuntu: `sudo apt-get install bubblewrap`)")?;
    // An absolute program: a `true` found through a PATH folder under /tmp would be hidden by
    // the private /tmp and fail the probe.
    let args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-pid"];
    let run = ["--die-with-parent", "--", "/bin/sh", "-c", "exit 0"];
    crate::sandbox::try_bwrap(&bwrap, &[&args[..], &run[..]].concat(), "make a read-only view here")?;
    Ok(bwrap)
}

/// The `bwrap` arguments (before `--` and the command) for `spec`.
pub fn args(spec: &JailSpec) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |words: &[&std::ffi::OsStr]| args.extend(words.iter().map(|w| w.to_os_string()));
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    push(&[os("--die-with-parent"), os("--unshare-pid"), os("--unshare-ipc")]);
    push(&[os("--ro-bind"), os("/"), os("/"), os("--dev"), os("/dev"), os("--proc"), os("/proc")]);
    push(&[os("--tmpfs"), os("/tmp")]);
    for kept in &spec.keep_under_tmp {
        if kept.starts_with("/tmp") && kept.exists() {
            push(&[os("--ro-bind"), kept.as_os_str(), kept.as_os_str()]);
        }
    }
    if spec.project_dir.starts_with("/tmp") {
        push(&[os("--ro-bind"), spec.project_dir.as_os_str(), spec.project_dir.as_os_str()]);
    }
    push(&[os("--tmpfs"), spec.data_dir.as_os_str(), os("--chmod"), os("0700"), spec.data_dir.as_os_str()]);
    for file in &spec.run_files {
        push(&[os("--ro-bind"), file.as_os_str(), file.as_os_str()]);
    }
    push(&[os("--bind"), spec.claude_config_dir.as_os_str(), spec.claude_config_dir.as_os_str()]);
    push(&[os("--chdir"), spec.project_dir.as_os_str()]);
    args
}

//! Layer 1 of coach mode (and of governed mode started for an intent, with that intent's
//! folders writable: `scope.rs`), by construction: Claude Code and everything it starts — every
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
//! its own too: Claude Code reaches Paige and its model API only through Paige's gate
//! (`gate.rs`), and nothing else of the learner's machine listens there.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How coach mode confines Claude Code: decided once, when Paige starts
/// ([`crate::config::Config::load`]), and followed by every launcher — the app's terminal,
/// and `paige claude` through the run file. While the project is read-only by construction
/// (the jail, or Landlock where the jail cannot run) the change detector stands down in coach
/// mode: nothing the agent runs can write a learner file, so whatever changes there is the
/// learner's own, and it is never undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// The jail, made with this `bwrap`; `userns`: in a user namespace of its own (always
    /// where one can be made; without one only root can run it, and it drops every
    /// capability either way).
    Jail { bwrap: PathBuf, userns: bool },
    /// No jail (why), but Landlock (and seccomp) keep the project read-only: what the kernel
    /// gives a process without a user namespace (`paige confine`).
    Landlock(String),
    /// No OS layer, and why: coach mode then starts only when the learner says so
    /// (`PAIGE_UNGUARDED=1`, `paige claude --unguarded`).
    Off(String),
}

impl Confinement {
    /// `PAIGE_JAIL=0` (or `off`, `false`) turns the jail off and `PAIGE_LANDLOCK=0` the layer
    /// that needs no user namespace — for a machine where one gets in the way, and for
    /// `paige doctor --guard` to show what the other layers hold alone; otherwise each is on
    /// wherever [`probe`] (with `PATH` of `env`) and the kernel allow.
    pub fn from_env(env: &HashMap<String, String>) -> Confinement {
        let off = |var: &str| env.get(var).is_some_and(|v| matches!(v.trim(), "0" | "off" | "false"));
        let why_no_jail = if off("PAIGE_JAIL") {
            "PAIGE_JAIL=0 turned it off".to_owned()
        } else {
            match probe(env.get("PATH").map(std::ffi::OsStr::new)) {
                Ok(Probed { bwrap, userns }) => return Confinement::Jail { bwrap, userns },
                Err(why) => why,
            }
        };
        if off("PAIGE_LANDLOCK") {
            return Confinement::Off(format!("{why_no_jail}; PAIGE_LANDLOCK=0 turned Landlock off"));
        }
        match landlock_usable() {
            Ok(()) => Confinement::Landlock(why_no_jail),
            Err(why) => Confinement::Off(format!("{why_no_jail}; {why}")),
        }
    }

    pub fn bwrap(&self) -> Option<&Path> {
        match self {
            Confinement::Jail { bwrap, .. } => Some(bwrap),
            _ => None,
        }
    }

    /// Whether the project is read-only to Claude Code by construction (the jail or Landlock).
    pub fn read_only(&self) -> bool {
        !matches!(self, Confinement::Off(_))
    }

    /// Why there is no jail, when there is none.
    /// Whether the UI token may be kept in `DATA_DIR`: only where the jail or Landlock hides
    /// that folder from Claude Code.
    pub fn ui_token_kept(&self) -> crate::token::UiTokenKept {
        match self {
            Confinement::Jail { .. } | Confinement::Landlock(_) => crate::token::UiTokenKept::OnDisk,
            Confinement::Off(_) => crate::token::UiTokenKept::InMemoryOnly,
        }
    }

    pub fn why_off(&self) -> Option<&str> {
        match self {
            Confinement::Jail { .. } => None,
            Confinement::Landlock(why) | Confinement::Off(why) => Some(why),
        }
    }
}

/// Whether `paige confine` can keep the project read-only here without a user namespace.
pub fn landlock_usable() -> Result<(), String> {
    let support = paige_confine::support();
    match support.landlock_abi {
        None => Err("the kernel offers no Landlock (Linux 5.13+ with the landlock LSM enabled)".into()),
        Some(abi) if abi < 3 => {
            Err(format!("the kernel's Landlock (ABI {abi}) cannot stop truncate(2): Linux 6.2 or later is needed"))
        }
        Some(_) if !support.seccomp => Err("the kernel offers no seccomp filters".into()),
        Some(_) => Ok(()),
    }
}

/// A `bwrap` that can make the jail here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    pub bwrap: PathBuf,
    /// In a user namespace of its own.
    pub userns: bool,
}

/// What the jail needs to know, all of it absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JailSpec {
    pub bwrap: PathBuf,
    /// In a user namespace of its own ([`Probed::userns`]).
    pub userns: bool,
    pub project_dir: PathBuf,
    pub data_dir: PathBuf,
    /// Claude Code's config dir inside `data_dir`, writable (the scratch dir is inside it).
    pub claude_config_dir: PathBuf,
    /// Files inside `data_dir` Claude Code is started with (its MCP config and settings), read-only.
    pub run_files: Vec<PathBuf>,
    /// Paths under `/tmp` or `/run` the jail must still see (read-only): both are private in it.
    pub keep_under_tmp: Vec<PathBuf>,
    /// The gate's socket (`gate.rs`): the jail gets a network namespace of its own, and this
    /// socket as its only way out. None: the network is shared (tests of the view alone).
    pub gate: Option<PathBuf>,
    /// Governed mode started for an intent: the project's files and folders its scope makes
    /// writable (`scope.rs`); empty in coach mode. `.orchestration/` and `.git/` stay
    /// read-only inside them.
    pub writable: Vec<PathBuf>,
}

/// Paige's own bubblewrap, which the .deb installs with an AppArmor profile that lets it make
/// a user namespace where AppArmor restricts them (`packaging/apparmor/paige-bwrap`): tried
/// before the one on `PATH`.
pub const BUNDLED_BWRAP: &str = "/usr/lib/paige/bwrap";

/// The AppArmor profile that goes with it.
pub const APPARMOR_PROFILE: &str = "/etc/apparmor.d/paige-bwrap";

/// Whether AppArmor restricts unprivileged user namespaces here (Ubuntu 24.04+) and Paige's
/// profile for its own bubblewrap is missing: then the jail cannot run for an ordinary user.
pub fn apparmor_profile_missing() -> bool {
    let restricted = std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
        .is_ok_and(|v| v.trim() == "1");
    restricted && !(Path::new(APPARMOR_PROFILE).is_file() && Path::new(BUNDLED_BWRAP).is_file())
}

/// Folders the jail replaces with empty ones of its own: where the learner's session keeps
/// its sockets and state — the X display (`/tmp/.X11-unix`), `tmux`, `screen` (`/run/screen`),
/// the D-Bus session and system buses, Wayland, `ssh-agent`, docker (`/run/docker.sock`).
pub const PRIVATE_DIRS: [&str; 2] = ["/tmp", "/run"];

/// Whether the jail can run here: `bwrap` on `path` and able to make a read-only view with
/// its own process namespace and no capabilities — in a user namespace of its own where the
/// machine allows one, else (root only: where AppArmor or `user.max_user_namespaces=0`
/// forbid them) without. `Err` says why not, for the doctor and the UI.
pub fn probe(path: Option<&std::ffi::OsStr>) -> Result<Probed, String> {
    let bundled = Path::new(BUNDLED_BWRAP);
    let bwrap = (bundled.is_file().then(|| bundled.to_owned()))
        .or_else(|| crate::terminal::find_in_path("bwrap", path))
        .ok_or("bubblewrap is not installed (Debian/Ubuntu: `sudo apt-get install bubblewrap`)")?;
    // An absolute program: a `true` found through a PATH folder under /tmp would be hidden by
    // the private /tmp and fail the probe.
    let args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-pid"];
    let run = ["--cap-drop", "ALL", "--die-with-parent", "--", "/bin/sh", "-c", "exit 0"];
    let in_userns = crate::sandbox::try_bwrap(
        &bwrap,
        &[&["--unshare-user"][..], &args[..], &run[..]].concat(),
        "make a user namespace here",
    );
    let Err(no_userns) = in_userns else { return Ok(Probed { bwrap, userns: true }) };
    match crate::sandbox::try_bwrap(&bwrap, &[&args[..], &run[..]].concat(), "make a read-only view here") {
        Ok(()) => Ok(Probed { bwrap, userns: false }),
        Err(why) => Err(format!("{no_userns}; {why}")),
    }
}

/// The `bwrap` arguments (before `--` and the command) for `spec`.
pub fn args(spec: &JailSpec) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |words: &[&std::ffi::OsStr]| args.extend(words.iter().map(|w| w.to_os_string()));
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    push(&[os("--die-with-parent"), os("--unshare-pid"), os("--unshare-ipc")]);
    if spec.userns {
        push(&[os("--unshare-user")]);
    }
    if spec.gate.is_some() {
        push(&[os("--unshare-net")]);
    }
    // No capability in the jail, ever: started by root without a user namespace bwrap keeps
    // the full set, and one `mount(MS_REMOUNT)` made the project writable again.
    push(&[os("--cap-drop"), os("ALL")]);
    push(&[os("--ro-bind"), os("/"), os("/"), os("--dev"), os("/dev"), os("--proc"), os("/proc")]);
    for private in PRIVATE_DIRS {
        if Path::new(private).is_dir() {
            push(&[os("--tmpfs"), os(private)]);
        }
    }
    let mut kept: Vec<PathBuf> = spec.keep_under_tmp.clone();
    // Name resolution: `/etc/resolv.conf` is often a link into /run (systemd-resolved).
    kept.extend(std::fs::canonicalize("/etc/resolv.conf").ok());
    kept.push(spec.project_dir.clone());
    for kept in &kept {
        let hidden = PRIVATE_DIRS.iter().any(|dir| kept.starts_with(dir));
        if hidden && kept.exists() {
            push(&[os("--ro-bind"), kept.as_os_str(), kept.as_os_str()]);
        }
    }
    for path in &spec.writable {
        push(&[os("--bind"), path.as_os_str(), path.as_os_str()]);
    }
    for kept in super::scope::ALWAYS_READ_ONLY.map(|name| spec.project_dir.join(name)) {
        if kept.exists() && spec.writable.iter().any(|w| kept.starts_with(w)) {
            push(&[os("--ro-bind"), kept.as_os_str(), kept.as_os_str()]);
        }
    }
    push(&[os("--tmpfs"), spec.data_dir.as_os_str(), os("--chmod"), os("0700"), spec.data_dir.as_os_str()]);
    for file in &spec.run_files {
        push(&[os("--ro-bind"), file.as_os_str(), file.as_os_str()]);
    }
    push(&[os("--bind"), spec.claude_config_dir.as_os_str(), spec.claude_config_dir.as_os_str()]);
    if let Some(gate) = &spec.gate {
        push(&[os("--ro-bind"), gate.as_os_str(), os(super::gate::SOCKET_IN_JAIL)]);
    }
    push(&[os("--chdir"), spec.project_dir.as_os_str()]);
    args
}

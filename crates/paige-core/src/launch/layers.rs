//! What guards Claude Code in coach mode, layer by layer, and what Paige tells the learner
//! about it: each layer on or off with the reason, and "read-only" only when it is true.
//!
//! The configurations a learner's machine gives (issue 39's matrix):
//! - **The jail with Claude Code's sandbox inside** (user namespaces, `socat`): bubblewrap in a
//!   user namespace, no capabilities, private `/tmp` and `/run`, a network of its own with
//!   Paige's gate as the only way out (`gate.rs`); `paige confine` adds seccomp
//!   (no typing into a terminal, no `ptrace`) and Landlock's scopes (no abstract UNIX socket,
//!   no signal outside). No Landlock file-system rules here: they forbid `mount(2)`, which
//!   Claude Code's own sandbox needs for every Bash call; its sandbox keeps commands off the
//!   network and off UNIX sockets instead.
//! - **The jail alone** (no `socat`, or Claude Code's sandbox cannot run): the same jail, and
//!   `paige confine` adds all of Landlock (the project read-only again, TCP only to Paige and
//!   the model API) and seccomp with no UNIX sockets and no mounts.
//! - **No user namespaces** (Ubuntu 24.04's AppArmor default, `user.max_user_namespaces=0`),
//!   as an ordinary user: no jail; `paige confine` alone — Landlock with `DATA_DIR` hidden,
//!   seccomp, every capability dropped.
//! - **Nothing** (no Landlock either): coach mode starts only when the learner says so.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use paige_confine::Policy;

use super::jail::Confinement;

/// The variable (and `paige claude --unguarded`) that starts coach mode with no OS layer.
pub const UNGUARDED_VAR: &str = "PAIGE_UNGUARDED";

/// Whether the learner said to start coach mode with no OS layer (`PAIGE_UNGUARDED=1`).
pub fn unguarded_asked(env: &std::collections::HashMap<String, String>) -> bool {
    env.get(UNGUARDED_VAR).is_some_and(|v| v.trim() == "1")
}

/// Why coach mode does not start with no OS layer, and how to start it anyway.
pub fn refusal(why: &str) -> String {
    format!(
        "Paige will not start Claude Code in coach mode here: nothing in the operating system would keep your \
         project read-only ({why}). Install bubblewrap or use a kernel with Landlock (Linux 5.13+), or start it \
         anyway with {UNGUARDED_VAR}=1 (`paige claude --unguarded`): then only Paige's hooks and change detector \
         stand between Claude Code and your files."
    )
}

/// One layer, as the learner sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layer {
    pub name: String,
    pub on: bool,
    /// What it does when on; why not when off.
    pub detail: String,
}

/// What a launch of Claude Code in coach mode runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// `bwrap` and whether in a user namespace.
    pub jail: Option<(PathBuf, bool)>,
    /// What `paige confine` applies before Claude Code starts (inside the jail when there is one).
    pub confine: Option<Policy>,
    /// Claude Code's own Bash sandbox.
    pub claude_sandbox: bool,
    pub layers: Vec<Layer>,
    /// The learner's files are read-only to Claude Code by construction.
    pub read_only: bool,
    /// Temp files go to Paige's scratch dir (`TMPDIR`), not `/tmp`: without the jail `/tmp`
    /// is the learner's, and a project under `/tmp` must not share Landlock's write rule.
    tmp_in_scratch: bool,
    /// Governed mode started for an intent: what its view lets it write ([`Plan::allow_write`]).
    governed: Option<String>,
}

impl Plan {
    /// No OS layer at all: coach mode starts only when the learner says so.
    pub fn unguarded(&self) -> bool {
        self.jail.is_none() && self.confine.is_none() && !self.claude_sandbox
    }
}

/// What a plan is made from.
pub struct Inputs<'a> {
    pub confinement: &'a Confinement,
    /// Claude Code's sandbox probe (`crate::sandbox::probe`).
    pub sandbox: Result<(), String>,
    pub hooks: bool,
    pub project_dir: &'a Path,
    pub data_dir: &'a Path,
    pub config_dir: &'a Path,
    /// Files in `data_dir` Claude Code is started with (read-only).
    pub run_files: &'a [PathBuf],
    /// TCP ports Claude Code may connect to: Paige's, the model API's, a proxy's.
    pub ports: Vec<u16>,
    /// What the kernel offers (`paige_confine::support()`).
    pub support: paige_confine::Support,
    /// What the jail's own network reaches through Paige's gate (`gate.rs`).
    pub destinations: super::gate::Destinations,
}

impl Plan {
    pub fn new(inputs: Inputs<'_>) -> Plan {
        let support = inputs.support;
        let abi = support.landlock_abi.unwrap_or(0);
        let jail = match inputs.confinement {
            Confinement::Jail { bwrap, userns } => Some((bwrap.clone(), *userns)),
            _ => None,
        };
        // Claude Code's sandbox needs `mount(2)` for every command, which Landlock's file
        // rules forbid: where those are the read-only layer, it stays off.
        let landlock = matches!(inputs.confinement, Confinement::Landlock(_));
        // SAFETY: geteuid(2) has no failure mode.
        let root = unsafe { libc::geteuid() } == 0;
        let sandbox = match &inputs.sandbox {
            Err(why) => Err(why.clone()),
            Ok(()) if landlock => Err("it cannot run under Landlock's file rules (it needs mount(2))".to_owned()),
            // Root in the jail has no capability left: mapping uid 0 into the sandbox's own
            // user namespace needs CAP_SETFCAP, so every sandboxed command would fail.
            Ok(()) if root && jail.is_some() => {
                Err("as root in the jail it cannot map uid 0 (no CAP_SETFCAP there); the jail's own layers hold"
                    .to_owned())
            }
            Ok(()) => Ok(()),
        };
        let claude_sandbox = sandbox.is_ok();
        let mut confine = match inputs.confinement {
            Confinement::Off(_) => None,
            _ if claude_sandbox => Some(Policy {
                scope_abstract_unix: abi >= 6,
                scope_signals: abi >= 6,
                seccomp: support.seccomp,
                ..Policy::default()
            }),
            _ => Some(full_policy(&inputs, landlock, abi, support.seccomp)),
        };
        // Later mounts from outside would arrive writable in the jail's view: in a jail with a
        // user namespace an ordinary user's `paige confine` makes every mount private first.
        if let (Some((_, true)), false, Some(policy)) = (&jail, root, confine.as_mut()) {
            policy.private_mounts = true;
        }
        let read_only = inputs.confinement.read_only();
        let tmp_in_scratch = confine.as_ref().is_some_and(|p| p.fs && !p.write.iter().any(|w| w == Path::new("/tmp")));
        let layers = describe(&Inputs { sandbox, ..inputs }, &jail, confine.as_ref(), abi);
        Plan { jail, confine, claude_sandbox, layers, read_only, tmp_in_scratch, governed: None }
    }

    /// Governed mode started for an intent (`scope.rs`): the intent's folders are writable
    /// too, in Landlock's rules as in the jail's view.
    pub fn allow_write(&mut self, view: &super::scope::View, project_dir: &Path) {
        if let Some(policy) = self.confine.as_mut().filter(|p| p.fs) {
            policy.write.extend(view.writable.iter().cloned());
        }
        self.governed = Some(view.describe(project_dir));
    }

    /// The user and each layer on or off: what a guard check's result holds for.
    pub fn fingerprint(&self) -> String {
        // SAFETY: geteuid(2) has no failure mode.
        let uid = unsafe { libc::geteuid() };
        let layers: Vec<String> = self.layers.iter().map(|l| format!("{}={}", l.name, on_off(l.on))).collect();
        format!("uid {uid}; {}", layers.join(", "))
    }

    /// One line for the learner: what holds, then each layer.
    pub fn summary(&self, project_dir: &Path) -> String {
        let head = if let Some(view) = &self.governed {
            format!("governed mode — {view}, by construction")
        } else if self.read_only {
            format!("coach mode — Claude Code sees {} read-only", project_dir.display())
        } else {
            "coach mode WITHOUT an operating-system guard — your files are NOT read-only to Claude Code".to_owned()
        };
        let layers: Vec<String> = self.layers.iter().map(|l| format!("{} {}", l.name, on_off(l.on))).collect();
        format!("{head} ({})", layers.join(", "))
    }

    /// The environment `paige confine` needs beside Claude Code's: where temp files go when
    /// `/tmp` is the learner's (no jail).
    pub fn extra_env(&self, config_dir: &Path) -> Vec<(OsString, OsString)> {
        if self.tmp_in_scratch {
            vec![("TMPDIR".into(), config_dir.join("scratch/tmp").into_os_string())]
        } else {
            Vec::new()
        }
    }
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// Landlock over everything (file rules from ABI 3), seccomp with no UNIX sockets and no
/// mounts: the jail alone, or
/// no jail at all (`landlock`: then `DATA_DIR` is hidden and capabilities dropped here).
fn full_policy(inputs: &Inputs<'_>, landlock: bool, abi: u32, seccomp: bool) -> Policy {
    let mut write = vec![inputs.config_dir.to_owned()];
    let mut read = vec![PathBuf::from("/")];
    let mut hide = Vec::new();
    // A write rule covers every mount that arrives under its folder later, so none may hold
    // the project: in the jail a project under /tmp (bound into the jail's own /tmp) gets
    // Paige's scratch dir for temp files instead.
    let holds_project = |dir: &str| inputs.project_dir.starts_with(dir);
    if landlock {
        hide.push(inputs.data_dir.to_owned());
        read.extend(inputs.run_files.iter().cloned());
        write.push(inputs.config_dir.join("scratch/tmp"));
    } else if holds_project("/tmp") {
        write.push(inputs.config_dir.join("scratch/tmp"));
    } else {
        // The jail's own /tmp, gone with it.
        write.push("/tmp".into());
    }
    // Shared memory is made as files in /dev/shm: writable, as the jail's own /dev is.
    if !holds_project("/dev/shm") {
        write.push("/dev/shm".into());
    }
    let devices = ["null", "zero", "full", "random", "urandom", "tty", "pts", "ptmx"];
    Policy {
        // Below ABI 3 Landlock cannot stop truncate(2): in the jail its file rules are then left
        // to the jail's read-only view (without the jail such a kernel gives no Landlock layer).
        fs: abi >= 3,
        read,
        write,
        hide,
        devices: devices.iter().map(|d| Path::new("/dev").join(d)).collect(),
        tcp_connect: (abi >= 4).then(|| inputs.ports.clone()),
        scope_abstract_unix: abi >= 6,
        scope_signals: abi >= 6,
        // A kernel without seccomp filters (rare) runs the jail without them rather than not at
        // all; without the jail, Landlock is usable only with them (`jail::landlock_usable`).
        seccomp,
        deny_unix_sockets: seccomp,
        deny_mounts: seccomp,
        drop_caps: landlock,
        private_mounts: false,
    }
}

fn describe(inputs: &Inputs<'_>, jail: &Option<(PathBuf, bool)>, confine: Option<&Policy>, abi: u32) -> Vec<Layer> {
    let claude_sandbox = inputs.sandbox.is_ok();
    let layer = |name: &str, on: bool, detail: String| Layer { name: name.to_owned(), on, detail };
    let why_no_jail = inputs.confinement.why_off().unwrap_or_default().to_owned();
    // SAFETY: geteuid(2) has no failure mode.
    let root = unsafe { libc::geteuid() } == 0;
    let fs = confine.is_some_and(|p| p.fs);
    let mut layers = vec![match jail {
        Some(_) => layer("jail", true, "bubblewrap: a read-only view, private /tmp and /run, its own processes".into()),
        None => layer("jail", false, why_no_jail.clone()),
    }];
    layers.push(match jail {
        Some((_, true)) => layer("user namespace", true, "the jail runs in a user namespace of its own".into()),
        Some((_, false)) => {
            layer("user namespace", false, "this machine allows none: the jail runs as root without one".into())
        }
        None => layer("user namespace", false, why_no_jail),
    });
    let dropped = jail.is_some() || confine.is_some_and(|p| p.drop_caps);
    layers.push(match (dropped, root) {
        (true, _) => layer("capabilities", true, "every capability dropped".into()),
        (false, false) => layer("capabilities", true, "an ordinary user: none to drop".into()),
        (false, true) => layer("capabilities", false, "Claude Code runs as root with every capability".into()),
    });
    layers.push(match confine {
        Some(p) if p.fs => layer(
            "Landlock",
            true,
            format!("ABI {abi}: the project and your home read-only, Paige's data hidden, sockets and signals scoped"),
        ),
        Some(p) if p.scope_abstract_unix => {
            layer("Landlock", true, format!("ABI {abi}: abstract sockets and signals scoped to Claude Code"))
        }
        _ => layer("Landlock", false, super::jail::landlock_usable().err().unwrap_or_else(|| "not needed here".into())),
    });
    layers.push(match confine {
        Some(p) if p.seccomp && p.deny_unix_sockets => {
            layer("seccomp", true, "no typing into terminals, no ptrace, no UNIX sockets, no mounts".into())
        }
        Some(p) if p.seccomp => layer("seccomp", true, "no typing into terminals, no ptrace".into()),
        _ => layer("seccomp", false, "no OS layer to add it to".into()),
    });
    layers.push(match confine.and_then(|p| p.tcp_connect.as_ref()) {
        _ if jail.is_some() && confine.is_some() => layer("network", true, inputs.destinations.describe()),
        Some(ports) if fs => layer("network", true, format!("TCP only to Paige and the model API (ports {ports:?})")),
        _ if claude_sandbox => layer("network", true, "commands run without network (Claude Code's sandbox)".into()),
        _ => layer("network", false, "shared with your session".into()),
    });
    layers.push(match (&inputs.sandbox, claude_sandbox) {
        (_, true) => layer("Claude Code's sandbox", true, "each command in a sandbox of its own".into()),
        (Ok(()), false) => layer("Claude Code's sandbox", false, "it cannot run under Landlock's file rules".into()),
        (Err(why), false) => layer("Claude Code's sandbox", false, why.clone()),
    });
    layers.push(if inputs.hooks {
        layer("hooks", true, "Paige checks every tool call".into())
    } else {
        layer("hooks", false, "Paige's hook command was not found".into())
    });
    layers
}

/// What the kernel offers a launch from `env`: `PAIGE_LANDLOCK=0` there also keeps Landlock
/// out of the jail (to see what the jail's own layers hold alone: `doctor --guard`, tests).
/// Without the jail Landlock is the read-only layer, which the running Paige decided on.
pub fn kernel_support(
    confinement: &Confinement,
    env: &std::collections::HashMap<String, String>,
) -> paige_confine::Support {
    let mut support = paige_confine::support();
    let off = env.get("PAIGE_LANDLOCK").is_some_and(|v| matches!(v.trim(), "0" | "off" | "false"));
    if off && matches!(confinement, Confinement::Jail { .. }) {
        support.landlock_abi = None;
    }
    support
}

/// The TCP ports Claude Code needs: Paige's, the model API's (`ANTHROPIC_BASE_URL`, else
/// 443) and a proxy's.
pub fn ports(paige: u16, env: &std::collections::HashMap<String, String>) -> Vec<u16> {
    let port_of = |url: &str| reqwest::Url::parse(url).ok().and_then(|u| u.port_or_known_default());
    let mut ports = vec![paige, 443];
    ports.extend(env.get("ANTHROPIC_BASE_URL").and_then(|u| port_of(u)));
    for var in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] {
        ports.extend(env.get(var).and_then(|u| port_of(u)));
    }
    ports.sort_unstable();
    ports.dedup();
    ports
}

impl Plan {
    /// Files Claude Code is started with, readable where `DATA_DIR` is otherwise hidden.
    pub fn allow_read(&mut self, files: &[PathBuf]) {
        if let Some(policy) = self.confine.as_mut().filter(|p| !p.hide.is_empty()) {
            policy.read.extend(files.iter().cloned());
        }
    }
}

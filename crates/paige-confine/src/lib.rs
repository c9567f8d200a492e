//! Confinement that needs no user namespace: `paige confine` applies a [`Policy`] to itself
//! and then execs Claude Code, which inherits it with everything it starts. Where bubblewrap
//! cannot make a user namespace (Ubuntu 24.04's AppArmor default, `max_user_namespaces=0`) it
//! is the only OS layer; inside the bubblewrap jail it adds what the jail lacks.
//!
//! [`apply`] fails closed: every layer the policy asks for is fully enforced or it returns an
//! error naming what is missing. Nothing is best-effort.
//!
//! The layers, in the order they are applied:
//! - **Private mounts** (`private_mounts`): a user and mount namespace of its own, every mount
//!   private, so nothing mounted outside later shows in the jail (`mounts.rs`).
//! - **Landlock filesystem** (`fs`, ABI ≥ 3): nothing is readable or writable but the grants.
//!   `read`: read + execute; `write`: every right (make, remove, refer, truncate…);
//!   `devices`: read, write, truncate, device ioctls. ABI 3 is required so truncate(2) of a
//!   read-only file is denied too. Grants are opened `O_PATH`; a `write` grant is opened with
//!   `openat2(RESOLVE_NO_SYMLINKS)`: a symlink anywhere in it is refused, never followed.
//!   `read` and `devices` grants follow symlinks (dotfiles are often links); a missing path is
//!   skipped. `hide` carves paths out of a `read` hierarchy by granting, along the way down to
//!   each hidden path, every sibling entry instead of the hierarchy (symlinked siblings are
//!   not granted: their targets are judged on their own). What it cannot do: names inside a
//!   hidden directory stay listable (the hierarchy keeps `ReadDir` so it can be listed; file
//!   contents are not readable), and an entry created later directly in a directory on the
//!   way down to a hidden path is not readable (only what existed at `apply` was granted).
//! - **Landlock network** (`tcp_connect`, ABI ≥ 4): TCP connect(2) only to the listed ports
//!   (any address). bind(2) and UDP are not restricted.
//! - **Landlock scopes** (ABI ≥ 6): connect(2) to an abstract UNIX socket made outside the
//!   domain, and signals to processes outside it, are refused. Landlock cannot refuse
//!   connect(2) to a *pathname* UNIX socket (X11's, D-Bus's, docker.sock) before ABI 9 and
//!   only through fs rules then: that is why `deny_unix_sockets` is a seccomp rule.
//! - **Capabilities** (`drop_caps`): no_new_privs, then securebits locked (noroot), ambient
//!   cleared, the bounding set emptied when the process may (CAP_SETPCAP), permitted,
//!   effective and inheritable emptied; then checked. Without CAP_SETPCAP the bounding set
//!   cannot shrink, but with nothing permitted and no_new_privs no exec can give any back.
//! - **seccomp** (rust-vmm's seccompiler; x86_64, aarch64, riscv64): `seccomp`: ioctl
//!   TIOCSTI and TIOCLINUX (32-bit compare, as the kernel reads the command), ptrace,
//!   process_vm_readv/writev fail with EPERM. `deny_unix_sockets`: socket(AF_UNIX, …) fails
//!   with EPERM, socketpair(2) still works. `deny_mounts`: mount, umount2, pivot_root, the new
//!   mount API (open_tree, move_mount, fsopen, fsconfig, fsmount, mount_setattr), and
//!   unshare/clone with CLONE_NEWUSER fail with EPERM; clone3 fails with ENOSYS (its flags are
//!   in memory seccomp cannot read) so libc falls back to clone. On x86_64 x32 syscall numbers
//!   fail, and any other architecture's syscalls kill the process, so no alias escapes the
//!   filter. What seccomp cannot do: judge paths or memory arguments.

mod caps;
mod filter;
mod fs;
mod mounts;

use std::path::PathBuf;

use landlock::{
    ABI, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus, NetPort, RestrictSelf, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope,
};

/// What to confine. JSON field names are these; an absent field is off/empty, an unknown
/// field is an error (a misspelt layer must not silently be off).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Landlock filesystem rules on: everything not granted below is neither readable nor writable.
    pub fs: bool,
    /// Hierarchies readable and executable (files and directories).
    pub read: Vec<PathBuf>,
    /// Hierarchies readable and writable (all file-system rights, incl. make/remove/refer/truncate).
    pub write: Vec<PathBuf>,
    /// Paths inside a `read` hierarchy that must not be readable (see the crate doc). A hidden
    /// path inside a `write` grant is an error: it could not be hidden.
    pub hide: Vec<PathBuf>,
    /// Device files/dirs writable and ioctl-able (terminals: /dev/null, /dev/tty, /dev/pts, /dev/ptmx ...).
    pub devices: Vec<PathBuf>,
    /// Some(ports): TCP connect only to these ports (Landlock ABI >= 4); None: network not restricted.
    pub tcp_connect: Option<Vec<u16>>,
    /// Landlock ABI >= 6: abstract UNIX sockets scoped to this domain.
    pub scope_abstract_unix: bool,
    /// Landlock ABI >= 6: signals scoped to this domain.
    pub scope_signals: bool,
    /// seccomp: deny ioctl TIOCSTI/TIOCLINUX, ptrace, process_vm_readv/writev.
    pub seccomp: bool,
    /// seccomp: deny socket(AF_UNIX, ...); socketpair stays allowed.
    pub deny_unix_sockets: bool,
    /// seccomp: deny the mount syscalls and new user namespaces.
    pub deny_mounts: bool,
    /// Drop every capability and set no_new_privs.
    pub drop_caps: bool,
    /// A user and mount namespace of its own with every mount private, so that nothing
    /// mounted outside later arrives (writable) in the jail's view: inside a jail with a user
    /// namespace, as an ordinary user (`mounts.rs`).
    pub private_mounts: bool,
}

/// What was applied, for the launcher's banner and `paige doctor`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Applied {
    /// The kernel's Landlock ABI, when a Landlock domain was applied.
    pub landlock_abi: Option<u32>,
    pub fs: bool,
    pub net: bool,
    pub scopes: bool,
    pub seccomp: bool,
    pub caps_dropped: bool,
}

/// What this kernel offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The kernel's Landlock ABI; None: not built in or not enabled at boot.
    pub landlock_abi: Option<u32>,
    /// seccomp filters returning errno can be installed.
    pub seccomp: bool,
}

/// Why a policy could not be applied; the message says what is missing.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kernel lacks what a layer needs.
    #[error("{0}")]
    Unsupported(String),
    /// A grant or hidden path cannot be honoured.
    #[error("{path}: {reason}")]
    Path { path: PathBuf, reason: String },
    /// The kernel refused a step.
    #[error("{what}: {source}")]
    Os { what: &'static str, source: std::io::Error },
    /// Landlock refused the ruleset, or did not enforce all of it.
    #[error("Landlock: {0}")]
    Landlock(String),
}

/// What this kernel offers, with no effect on the caller: Landlock's own version query
/// (no domain, no no_new_privs) and seccomp's action query.
pub fn support() -> Support {
    Support { landlock_abi: kernel_abi(), seccomp: filter::available() }
}

fn kernel_abi() -> Option<u32> {
    // No flags and no no_new_privs: the crate only queries the version, it calls nothing else.
    let status = RestrictSelf::default().no_new_privs(false).apply().ok()?.landlock;
    match status {
        LandlockStatus::Available { effective_abi, kernel_abi } => {
            Some(kernel_abi.map_or(effective_abi as u32, |v| v as u32))
        }
        _ => None,
    }
}

fn effective_abi() -> ABI {
    match RestrictSelf::default().no_new_privs(false).apply() {
        Ok(status) => status.landlock.into(),
        Err(_) => ABI::Unsupported,
    }
}

/// The minimum Landlock ABI each asked-for layer needs; Err names the first one missing.
fn check_abi(policy: &Policy, abi: u32) -> Result<(), Error> {
    let needs: [(bool, u32, &str); 4] = [
        (policy.fs, 3, "filesystem rules (read-only must cover truncate(2))"),
        (policy.tcp_connect.is_some(), 4, "TCP connect rules"),
        (policy.scope_abstract_unix, 6, "abstract UNIX socket scoping"),
        (policy.scope_signals, 6, "signal scoping"),
    ];
    for (asked, min, what) in needs {
        if asked && abi < min {
            let have = if abi == 0 { "no Landlock".to_string() } else { format!("Landlock ABI {abi}") };
            return Err(Error::Unsupported(format!("Landlock {what} needs ABI {min}; this kernel has {have}")));
        }
    }
    Ok(())
}

fn wants_landlock(policy: &Policy) -> bool {
    policy.fs || policy.tcp_connect.is_some() || policy.scope_abstract_unix || policy.scope_signals
}

fn landlock_err(what: &str) -> impl Fn(landlock::RulesetError) -> Error + '_ {
    move |e| Error::Landlock(format!("{what}: {e}"))
}

/// Applies `policy` to the calling thread (call before exec, single-threaded: Landlock,
/// seccomp and capabilities are per thread; exec keeps only the caller). Fails closed: every
/// layer the policy asks for is fully enforced or this returns an error naming what is
/// missing. A failure may leave earlier layers applied: do not go on to run anything.
pub fn apply(policy: &Policy) -> Result<Applied, Error> {
    let mut applied =
        Applied { landlock_abi: None, fs: false, net: false, scopes: false, seccomp: false, caps_dropped: false };
    // Everything that can fail before any layer is in force is checked first.
    let seccomp_filters = filter::build(policy)?;
    if !seccomp_filters.is_empty() && !filter::available() {
        return Err(Error::Unsupported("seccomp filters are not available in this kernel".into()));
    }
    // First: unshare(2) wants a single thread and no seccomp filter forbidding it yet.
    if policy.private_mounts {
        mounts::make_private()?;
    }
    let mut ruleset = None;
    if wants_landlock(policy) {
        let abi = effective_abi();
        check_abi(policy, abi as u32)?;
        let hard = CompatLevel::HardRequirement;
        let mut builder = landlock::Ruleset::default().set_compatibility(hard);
        if policy.fs {
            builder = builder.handle_access(fs::all(abi)).map_err(landlock_err("filesystem rights"))?;
        }
        if policy.tcp_connect.is_some() {
            builder = builder.handle_access(AccessNet::ConnectTcp).map_err(landlock_err("TCP connect"))?;
        }
        let mut scopes: BitFlags<Scope> = BitFlags::EMPTY;
        if policy.scope_abstract_unix {
            scopes |= Scope::AbstractUnixSocket;
        }
        if policy.scope_signals {
            scopes |= Scope::Signal;
        }
        if !scopes.is_empty() {
            builder = builder.scope(scopes).map_err(landlock_err("scopes"))?;
        }
        let mut created = builder.create().map_err(landlock_err("creating the ruleset"))?;
        if policy.fs {
            for rule in fs::rules(policy, abi)? {
                created = created.add_rule(rule).map_err(landlock_err("a filesystem rule"))?;
            }
        }
        for &port in policy.tcp_connect.iter().flatten() {
            created =
                created.add_rule(NetPort::new(port, AccessNet::ConnectTcp)).map_err(landlock_err("a TCP port rule"))?;
        }
        ruleset = Some((created, abi));
    }
    // Capabilities go before the domain: grants were opened with them, nothing else needs them.
    if policy.drop_caps {
        caps::drop_all()?;
        applied.caps_dropped = true;
    }
    if let Some((created, abi)) = ruleset {
        let status = created.restrict_self().map_err(landlock_err("restricting this process"))?;
        if status.ruleset != RulesetStatus::FullyEnforced {
            return Err(Error::Landlock(format!("the ruleset was {:?}, not fully enforced", status.ruleset)));
        }
        applied.landlock_abi = kernel_abi().or(Some(abi as u32));
        applied.fs = policy.fs;
        applied.net = policy.tcp_connect.is_some();
        applied.scopes = policy.scope_abstract_unix || policy.scope_signals;
    }
    if !seccomp_filters.is_empty() {
        filter::install(&seccomp_filters)?;
        applied.seccomp = true;
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_landlock_layer_names_the_abi_it_needs_and_fails_closed_below_it() {
        let fs = Policy { fs: true, ..Policy::default() };
        assert!(check_abi(&fs, 3).is_ok());
        let err = check_abi(&fs, 2).unwrap_err().to_string();
        assert!(err.contains("filesystem") && err.contains("ABI 3") && err.contains("ABI 2"), "{err}");
        let err = check_abi(&fs, 0).unwrap_err().to_string();
        assert!(err.contains("no Landlock"), "{err}");
        let net = Policy { tcp_connect: Some(vec![443]), ..Policy::default() };
        assert!(check_abi(&net, 3).unwrap_err().to_string().contains("TCP connect rules needs ABI 4"));
        let unix = Policy { scope_abstract_unix: true, ..Policy::default() };
        assert!(check_abi(&unix, 5).unwrap_err().to_string().contains("abstract UNIX socket scoping needs ABI 6"));
        let signals = Policy { scope_signals: true, ..Policy::default() };
        assert!(check_abi(&signals, 5).unwrap_err().to_string().contains("signal scoping needs ABI 6"));
        assert!(check_abi(&signals, 7).is_ok());
        assert!(check_abi(&Policy::default(), 0).is_ok());
    }

    #[test]
    fn support_leaves_the_caller_unconfined() {
        let support = support();
        assert!(support.landlock_abi.is_some(), "this kernel has no Landlock");
        // SAFETY: integer arguments only.
        assert_eq!(unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) }, 0, "support() set no_new_privs");
        // SAFETY: integer arguments only.
        assert_eq!(unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) }, 0, "support() installed a filter");
    }

    #[test]
    fn a_misspelt_policy_field_is_an_error_and_absent_fields_are_off() {
        assert!(serde_json::from_str::<Policy>(r#"{"fs": true, "scope_signal": true}"#).is_err());
        let policy: Policy = serde_json::from_str(r#"{"seccomp": true}"#).unwrap();
        assert_eq!(policy, Policy { seccomp: true, ..Policy::default() });
    }
}

//! The seccomp filters of a policy, compiled by seccompiler.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch, sock_filter,
};

use crate::{Error, Policy};

/// seccomp filters that return an errno can be installed (SECCOMP_GET_ACTION_AVAIL; no effect).
pub(crate) fn available() -> bool {
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: the action is read by the kernel, nothing is installed.
    unsafe { libc::syscall(libc::SYS_seccomp, libc::SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0 }
}

fn seccomp_err(e: impl std::fmt::Display) -> Error {
    Error::Unsupported(format!("seccomp: {e}"))
}

/// `arg` (the low 32 bits, as the kernel reads an int) equals `value`.
fn arg_eq(arg: u8, value: u64) -> Result<SeccompRule, Error> {
    let condition =
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value).map_err(seccomp_err)?;
    SeccompRule::new(vec![condition]).map_err(seccomp_err)
}

/// `arg` has every bit of `mask` set.
fn arg_has(arg: u8, mask: u64) -> Result<SeccompRule, Error> {
    let condition =
        SeccompCondition::new(arg, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(mask), mask).map_err(seccomp_err)?;
    SeccompRule::new(vec![condition]).map_err(seccomp_err)
}

fn program(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32, arch: TargetArch) -> Result<BpfProgram, Error> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch)
        .map_err(seccomp_err)?;
    filter.try_into().map_err(seccomp_err)
}

/// x86_64 runs x32 syscalls (number | 0x4000_0000) under the same audit arch: refuse them all,
/// so `ptrace` cannot be reached by its x32 number.
fn no_x32() -> BpfProgram {
    let stmt = |code: u32, k: u32| sock_filter { code: code as u16, jt: 0, jf: 0, k };
    vec![
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0), // seccomp_data.nr
        sock_filter { code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16, jt: 0, jf: 1, k: 0x4000_0000 },
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ]
}

/// The filters `policy` asks for, compiled; empty when it asks for none.
pub(crate) fn build(policy: &Policy) -> Result<Vec<BpfProgram>, Error> {
    if !(policy.seccomp || policy.deny_unix_sockets || policy.deny_mounts) {
        return Ok(Vec::new());
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(seccomp_err)?;
    let mut eperm: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut enosys: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if policy.seccomp {
        // libc's ioctl request type is c_ulong on glibc and c_int on musl.
        #[allow(clippy::unnecessary_cast)]
        let ioctl = vec![arg_eq(1, libc::TIOCSTI as u64)?, arg_eq(1, libc::TIOCLINUX as u64)?];
        eperm.insert(libc::SYS_ioctl, ioctl);
        for nr in [libc::SYS_ptrace, libc::SYS_process_vm_readv, libc::SYS_process_vm_writev] {
            eperm.insert(nr, Vec::new());
        }
    }
    if policy.deny_unix_sockets {
        eperm.insert(libc::SYS_socket, vec![arg_eq(0, libc::AF_UNIX as u64)?]);
    }
    if policy.deny_mounts {
        for nr in [
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_pivot_root,
            libc::SYS_move_mount,
            libc::SYS_open_tree,
            libc::SYS_fsopen,
            libc::SYS_fsmount,
            libc::SYS_fsconfig,
            libc::SYS_mount_setattr,
        ] {
            eperm.insert(nr, Vec::new());
        }
        let newuser = libc::CLONE_NEWUSER as u64;
        eperm.insert(libc::SYS_unshare, vec![arg_has(0, newuser)?]);
        // clone's flags are its first argument on x86_64, aarch64 and riscv64.
        eperm.insert(libc::SYS_clone, vec![arg_has(0, newuser)?]);
        // clone3's flags are in memory: ENOSYS, and libc falls back to clone.
        enosys.insert(libc::SYS_clone3, Vec::new());
    }
    let mut programs = vec![program(eperm, libc::EPERM, arch)?];
    if !enosys.is_empty() {
        programs.push(program(enosys, libc::ENOSYS, arch)?);
    }
    if arch == TargetArch::x86_64 {
        programs.push(no_x32());
    }
    Ok(programs)
}

/// Installs every filter on the calling thread (seccompiler sets no_new_privs first).
pub(crate) fn install(programs: &[BpfProgram]) -> Result<(), Error> {
    for program in programs {
        seccompiler::apply_filter(program).map_err(|e| seccomp_err(format!("installing a filter: {e}")))?;
    }
    Ok(())
}

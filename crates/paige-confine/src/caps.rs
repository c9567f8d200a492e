//! Dropping every capability, then checking none is left.

use crate::Error;

// <linux/capability.h>: version 3 takes two 32-bit data words.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

// <linux/capability.h>
const CAP_SETPCAP: u32 = 8;

// <linux/securebits.h>
const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;

fn os(what: &'static str) -> Error {
    Error::Os { what, source: std::io::Error::last_os_error() }
}

fn prctl(option: libc::c_int, arg: libc::c_ulong) -> libc::c_int {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(option, arg, 0 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong) }
}

fn last_cap() -> libc::c_ulong {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(63)
}

fn capget() -> Result<[CapData; 2], Error> {
    let mut header = CapHeader { version: CAPABILITY_VERSION_3, pid: 0 };
    let mut data = [CapData::default(); 2];
    // SAFETY: header and two data words, as version 3 expects.
    if unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } != 0 {
        return Err(os("reading capabilities (capget)"));
    }
    Ok(data)
}

/// no_new_privs; securebits locked when allowed; ambient, bounding (when allowed), permitted,
/// effective, inheritable emptied; then every set checked empty.
pub(crate) fn drop_all() -> Result<(), Error> {
    if prctl(libc::PR_SET_NO_NEW_PRIVS, 1) != 0 {
        return Err(os("setting no_new_privs"));
    }
    let before = capget()?;
    let had_setpcap = before[0].effective & (1 << CAP_SETPCAP) != 0;
    if had_setpcap {
        // uid 0 gains nothing by exec or setuid, and none of this can be undone.
        let bits = SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_SETUID_FIXUP
            | SECBIT_NO_SETUID_FIXUP_LOCKED
            | SECBIT_KEEP_CAPS_LOCKED
            | SECBIT_NO_CAP_AMBIENT_RAISE
            | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if prctl(libc::PR_SET_SECUREBITS, bits) != 0 {
            return Err(os("locking securebits"));
        }
    }
    // SAFETY: integer arguments only.
    let cleared = unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) };
    if cleared != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return Err(os("clearing ambient capabilities"));
    }
    let last = last_cap();
    for cap in 0..=last {
        if prctl(libc::PR_CAPBSET_READ, cap) == 1 && prctl(libc::PR_CAPBSET_DROP, cap) != 0 && had_setpcap {
            return Err(os("dropping the capability bounding set"));
        }
    }
    let mut header = CapHeader { version: CAPABILITY_VERSION_3, pid: 0 };
    let data = [CapData::default(); 2];
    // SAFETY: header and two data words, as version 3 expects.
    if unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) } != 0 {
        return Err(os("emptying capabilities (capset)"));
    }
    // Checked, not assumed.
    let now = capget()?;
    if now.iter().any(|d| d.effective | d.permitted | d.inheritable != 0) {
        return Err(Error::Unsupported("capabilities are still held after capset".into()));
    }
    for cap in 0..=last {
        // SAFETY: integer arguments only.
        if unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_IS_SET, cap, 0, 0) } == 1 {
            return Err(Error::Unsupported(format!("ambient capability {cap} is still set")));
        }
        if had_setpcap && prctl(libc::PR_CAPBSET_READ, cap) == 1 {
            return Err(Error::Unsupported(format!("capability {cap} is still in the bounding set")));
        }
    }
    // SAFETY: integer arguments only.
    if unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) } != 1 {
        return Err(Error::Unsupported("no_new_privs is not set".into()));
    }
    Ok(())
}

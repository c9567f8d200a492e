//! `private_mounts`: what bubblewrap cannot do for the jail. Its view is a *slave* of the
//! machine's mounts, so a mount made outside later (an NFS or autofs remount, a USB stick, a
//! new bind under the project) arrives in the jail with its own flags — writable. A user
//! namespace and a mount namespace of our own, with every mount made private, cut that
//! propagation: what is mounted outside from now on never shows in here. The jail's mounts
//! stay locked read-only (they came from a more privileged namespace), and no capability
//! survives the exec for an ordinary user (uid ≠ 0 in the new namespace).

use std::io::Write;

use crate::Error;

fn os(what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Os { what, source }
}

/// Enters a new user and mount namespace (the caller's uid and gid mapped to themselves) and
/// makes every mount in it private. The process must be single-threaded (unshare(2) refuses
/// CLONE_NEWUSER otherwise).
pub(crate) fn make_private() -> Result<(), Error> {
    use rustix::thread::UnshareFlags;
    let (uid, gid) = (rustix::process::getuid().as_raw(), rustix::process::getgid().as_raw());
    // SAFETY: neither flag is CLONE_FILES; this thread shares no file table afterwards.
    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNS) }
        .map_err(|e| os("a user and mount namespace of its own")(e.into()))?;
    let write = |path: &str, text: String| {
        std::fs::OpenOptions::new().write(true).open(path).and_then(|mut f| f.write_all(text.as_bytes()))
    };
    write("/proc/self/setgroups", "deny".into()).map_err(os("/proc/self/setgroups"))?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1\n")).map_err(os("/proc/self/uid_map"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1\n")).map_err(os("/proc/self/gid_map"))?;
    use rustix::mount::MountPropagationFlags;
    rustix::mount::mount_change("/", MountPropagationFlags::PRIVATE | MountPropagationFlags::REC)
        .map_err(|e| os("making every mount private")(e.into()))?;
    Ok(())
}

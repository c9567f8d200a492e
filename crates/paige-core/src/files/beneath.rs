//! Race-free access beneath the project root. The root is opened once as a directory handle;
//! every later open resolves a checked, canonical relative path *from that handle* without
//! following any symlink (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on Linux, a
//! component-by-component `openat(O_NOFOLLOW)` walk elsewhere or where `openat2` is refused).
//! So swapping a directory or file for a symlink between the guard's check and the use makes
//! the use fail; it can never reach outside the project.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

/// The project root as an open directory handle (`O_PATH`: it grants lookups, no reads).
#[derive(Debug)]
pub(crate) struct RootDir {
    fd: OwnedFd,
}

/// Whether `openat2` works here: unknown, yes, or no (old kernel, or refused by a sandbox).
static OPENAT2: AtomicU8 = AtomicU8::new(0);
const UNKNOWN: u8 = 0;
const AVAILABLE: u8 = 1;
const UNAVAILABLE: u8 = 2;

/// Directory handles used for lookups only.
const DIR_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

impl RootDir {
    pub(crate) fn open(root: &Path) -> std::io::Result<RootDir> {
        let fd = rustix::fs::open(root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(RootDir { fd })
    }

    /// Opens `rel` (canonical: `/`-separated, no `.`/`..`, no symlink on the way) beneath the
    /// root. Any symlink met on the way fails with `ELOOP` (or `ENOTDIR` in the walk).
    pub(crate) fn open_at(&self, rel: &str, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
        check_components(rel)?;
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
        if OPENAT2.load(Ordering::Relaxed) != UNAVAILABLE {
            match open_beneath(self.fd.as_fd(), rel, flags, mode) {
                Err(Errno::NOSYS | Errno::PERM) if OPENAT2.load(Ordering::Relaxed) == UNKNOWN => {
                    tracing::debug!("openat2 is not available; walking paths component by component");
                    OPENAT2.store(UNAVAILABLE, Ordering::Relaxed);
                }
                result => {
                    OPENAT2.store(AVAILABLE, Ordering::Relaxed);
                    return result;
                }
            }
        }
        let (parent, name) = split(rel);
        let dir = self.walk(parent, false)?;
        rustix::fs::openat(self.dir_or_root(&dir), name, flags, mode)
    }

    /// Opens the folder `rel` beneath the root to read its entries (`""`: the root itself),
    /// never through a symlink; anything but a folder fails with `ENOTDIR` (or `ELOOP` for a
    /// symlink) before it is opened, so a FIFO cannot block.
    pub(crate) fn open_dir(&self, rel: &str) -> Result<OwnedFd, Errno> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK;
        if rel.is_empty() {
            return rustix::fs::openat(self.fd.as_fd(), ".", flags | OFlags::CLOEXEC, Mode::empty());
        }
        self.open_at(rel, flags, Mode::empty())
    }

    /// The directory that holds `rel`, opened beneath the root (created, with its missing
    /// ancestors, when `create`), and the file's name in it.
    pub(crate) fn parent_of<'a>(&self, rel: &'a str, create: bool) -> Result<(Option<OwnedFd>, &'a str), Errno> {
        check_components(rel)?;
        let (parent, name) = split(rel);
        Ok((self.walk(parent, create)?, name))
    }

    /// The handle to use for `*at` calls: a walked directory, or the root itself.
    pub(crate) fn dir_or_root<'a>(&'a self, dir: &'a Option<OwnedFd>) -> BorrowedFd<'a> {
        dir.as_ref().map_or(self.fd.as_fd(), |d| d.as_fd())
    }

    /// Opens each directory of `parent` in turn without following symlinks; `None` is the
    /// root. With `create`, a missing directory is made (mode 0777 less the umask).
    fn walk(&self, parent: &str, create: bool) -> Result<Option<OwnedFd>, Errno> {
        let mut dir: Option<OwnedFd> = None;
        for component in parent.split('/').filter(|c| !c.is_empty()) {
            let at = self.dir_or_root(&dir);
            let next = match rustix::fs::openat(at, component, DIR_FLAGS, Mode::empty()) {
                Err(Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(at, component, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(err) => return Err(err),
                    }
                    rustix::fs::openat(at, component, DIR_FLAGS, Mode::empty())?
                }
                result => result?,
            };
            dir = Some(next);
        }
        Ok(dir)
    }

    /// Removes the file `rel` (never a directory, never through a symlink).
    pub(crate) fn unlink(&self, rel: &str) -> Result<(), Errno> {
        let (dir, name) = self.parent_of(rel, false)?;
        rustix::fs::unlinkat(self.dir_or_root(&dir), name, AtFlags::empty())
    }
}

fn open_beneath(root: BorrowedFd<'_>, rel: &str, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    use rustix::fs::ResolveFlags;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    // EAGAIN: a rename raced the lookup; the kernel asks the caller to try again.
    let mut tries = 0;
    loop {
        match rustix::fs::openat2(root, rel, flags, mode, resolve) {
            Err(Errno::AGAIN) if tries < 8 => tries += 1,
            result => return result,
        }
    }
}

/// A checked relative path never holds these, but the walk relies on it, so say it again.
fn check_components(rel: &str) -> Result<(), Errno> {
    if rel.is_empty() || rel.starts_with('/') || rel.split('/').any(|c| c == ".." || c == "." || c.is_empty()) {
        return Err(Errno::INVAL);
    }
    Ok(())
}

fn split(rel: &str) -> (&str, &str) {
    rel.rsplit_once('/').unwrap_or(("", rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_with_dot_components_are_refused_before_any_lookup() {
        for bad in ["", "/etc/passwd", "a/../b", "./a", "a//b", "a/"] {
            assert_eq!(check_components(bad), Err(Errno::INVAL), "{bad:?}");
        }
        assert_eq!(check_components("src/main.rs"), Ok(()));
    }

    #[test]
    fn a_symlink_on_the_way_fails_in_both_resolution_modes() {
        let tmp = tempfile::tempdir().expect("tmp");
        let outside = tempfile::tempdir().expect("outside");
        std::fs::write(outside.path().join("secret"), "s").expect("write");
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("link")).expect("symlink");
        std::fs::create_dir(tmp.path().join("src")).expect("dir");
        std::fs::write(tmp.path().join("src/a.txt"), "a").expect("write");
        let root = RootDir::open(tmp.path()).expect("root");
        for mode in [UNKNOWN, UNAVAILABLE] {
            OPENAT2.store(mode, Ordering::Relaxed);
            assert!(root.open_at("link/secret", OFlags::RDONLY, Mode::empty()).is_err(), "mode {mode}");
            assert!(root.open_at("src/a.txt", OFlags::RDONLY, Mode::empty()).is_ok(), "mode {mode}");
        }
        OPENAT2.store(UNKNOWN, Ordering::Relaxed);
    }
}

//! The Landlock filesystem rules of a policy: grants opened `O_PATH`, write grants without
//! symlinks, and `hide` expanded into the siblings of each hidden path.

use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use landlock::{ABI, Access, AccessFs, BitFlags, PathBeneath};
use rustix::fs::{CWD, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::{Error, Policy};

/// Every filesystem right this ABI can restrict: what the ruleset handles.
pub(crate) fn all(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_all(abi)
}

fn read_rights(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_read(abi)
}

fn device_rights(abi: ABI) -> BitFlags<AccessFs> {
    let wanted = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::ReadDir | AccessFs::Truncate | AccessFs::IoctlDev;
    wanted & all(abi)
}

/// A rule for an opened path: directory rights are dropped for anything not a directory
/// (Landlock refuses them there).
fn rule(fd: OwnedFd, rights: BitFlags<AccessFs>, abi: ABI, path: &Path) -> Result<PathBeneath<OwnedFd>, Error> {
    let stat = rustix::fs::fstat(&fd).map_err(|e| path_err(path, format!("cannot stat it: {e}")))?;
    let rights = if FileType::from_raw_mode(stat.st_mode) == FileType::Directory {
        rights
    } else {
        rights & AccessFs::from_file(abi)
    };
    Ok(PathBeneath::new(fd, rights))
}

fn path_err(path: &Path, reason: String) -> Error {
    Error::Path { path: path.to_path_buf(), reason }
}

fn absolute(path: &Path, what: &str) -> Result<(), Error> {
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        return Err(path_err(path, format!("a {what} path must be absolute, without `..`")));
    }
    Ok(())
}

/// Opens `path` with O_PATH; `None` when it does not exist (a missing grant is skipped).
fn open_following(path: &Path) -> Result<Option<OwnedFd>, Error> {
    match rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(path_err(path, format!("cannot open it: {e}"))),
    }
}

/// Opens a write grant: O_PATH through openat2(RESOLVE_NO_SYMLINKS), so a symlink anywhere
/// in the path (one planted where a writable directory is expected) is refused.
fn open_write(path: &Path) -> Result<Option<OwnedFd>, Error> {
    // No O_NOFOLLOW: with O_PATH it would open a trailing symlink instead of refusing it.
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    match rustix::fs::openat2(CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS)
    {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOENT) => Ok(None),
        Err(Errno::LOOP) => Err(path_err(
            path,
            "a write grant through a symlink is refused (a symlink is on its path); grant its real path".into(),
        )),
        Err(e) => Err(path_err(path, format!("cannot open it: {e}"))),
    }
}

/// The path with its longest existing prefix resolved (symlinks followed); the rest as given.
fn resolved(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            return rest.iter().rev().fold(real, |p: PathBuf, c| p.join(c));
        }
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Every filesystem rule of `policy`, opened now.
pub(crate) fn rules(policy: &Policy, abi: ABI) -> Result<Vec<PathBeneath<OwnedFd>>, Error> {
    for path in policy.read.iter().chain(&policy.write).chain(&policy.hide).chain(&policy.devices) {
        absolute(path, "grant")?;
    }
    let hidden: Vec<PathBuf> = policy.hide.iter().map(|h| resolved(h)).collect();
    let mut rules = Vec::new();
    for path in &policy.write {
        let Some(fd) = open_write(path)? else { continue };
        // No symlink on the way: the path as given is its real path.
        if let Some(h) = hidden.iter().find(|h| h.starts_with(path)) {
            return Err(path_err(h, format!("cannot be hidden: it lies in the write grant {}", path.display())));
        }
        rules.push(rule(fd, all(abi), abi, path)?);
    }
    for path in &policy.devices {
        let Some(fd) = open_following(path)? else { continue };
        rules.push(rule(fd, device_rights(abi), abi, path)?);
    }
    for path in &policy.read {
        let Ok(root) = std::fs::canonicalize(path) else {
            if open_following(path)?.is_none() {
                continue;
            }
            return Err(path_err(path, "cannot resolve it".into()));
        };
        if hidden.contains(&root) {
            continue; // hidden wins; a grant strictly inside a hidden path is applied
        }
        let inside: Vec<&PathBuf> = hidden.iter().filter(|h| h.starts_with(&root)).collect();
        let Some(fd) = open_following(&root)? else { continue };
        if inside.is_empty() {
            rules.push(rule(fd, read_rights(abi), abi, &root)?);
        } else {
            // Listable (ReadDir is inherited by every directory beneath, hidden ones too) …
            rules.push(rule(fd, AccessFs::ReadDir.into(), abi, &root)?);
            // … and everything beside the way down to each hidden path readable.
            expand(&root, &inside, abi, &mut rules)?;
        }
    }
    Ok(rules)
}

/// Grants read on every entry of `dir` except hidden ones and those on the way to one
/// (descended into instead); symlinks are not granted (a rule on a link grants nothing,
/// and following one could grant a hidden target).
fn expand(dir: &Path, hidden: &[&PathBuf], abi: ABI, rules: &mut Vec<PathBeneath<OwnedFd>>) -> Result<(), Error> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(path_err(dir, format!("cannot list it to hide what is inside: {e}"))),
    };
    for entry in entries {
        let entry = entry.map_err(|e| path_err(dir, format!("cannot list it to hide what is inside: {e}")))?;
        let path = entry.path();
        if hidden.iter().any(|h| **h == path) {
            continue;
        }
        let on_the_way = hidden.iter().any(|h| h.starts_with(&path));
        let flags = OFlags::PATH | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        let fd = match rustix::fs::open(&path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(path_err(&path, format!("cannot open it: {e}"))),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| path_err(&path, format!("cannot stat it: {e}")))?;
        let kind = FileType::from_raw_mode(stat.st_mode);
        if kind == FileType::Symlink {
            continue;
        }
        if on_the_way && kind == FileType::Directory {
            expand(&path, hidden, abi, rules)?;
        } else {
            rules.push(rule(fd, read_rights(abi), abi, &path)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_path_is_compared_by_its_real_location_even_when_its_tail_does_not_exist() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let canonical = std::fs::canonicalize(&real).unwrap();
        assert_eq!(resolved(&dir.path().join("link/a/b")), canonical.join("a/b"));
        assert_eq!(resolved(&dir.path().join("link")), canonical);
    }
}

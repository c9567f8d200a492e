use std::io::Write;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::read::kind_name;
use super::{FileError, ProjectPath};

/// Prefix of the temp file a save writes beside its target before renaming it into place.
pub const TEMP_PREFIX: &str = ".paige-save-";

/// Prefix of the temp files Paige writes in `DATA_DIR` (settings, kept versions, and in `run/`
/// the run file and Claude Code's configs) before renaming them into place; the writer's pid
/// follows, so a sweep can tell a dead writer's.
pub(crate) const DATA_TEMP_PREFIX: &str = ".paige-tmp-";

/// This process's temp file prefix for `DATA_DIR`: `.paige-tmp-<pid>-`.
pub(crate) fn data_temp_prefix() -> String {
    format!("{DATA_TEMP_PREFIX}{}-", std::process::id())
}

/// Removes the temp files in `dir` (not below it) whose writer is gone — left by a crash
/// between creating and renaming — and a gone launch's `mcp-<pid>.json`/`settings-<pid>.json`
/// (issue 41: they piled up in `run/`). A live process's are left alone, as they are in use.
pub(crate) fn sweep_data_temp_files(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        // A launch's own files (`mcp-<pid>.json`, `settings-<pid>.json`: Claude Code's MCP
        // config and settings) once the process that wrote them is gone, and temp files.
        let launch = name.to_str().and_then(|n| n.strip_suffix(".json")).and_then(|n| {
            n.strip_prefix("mcp-").or_else(|| n.strip_prefix("settings-")).filter(|pid| pid.parse::<u32>().is_ok())
        });
        let Some(rest) = launch.or_else(|| name.to_str().and_then(|n| n.strip_prefix(DATA_TEMP_PREFIX))) else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|pid| pid.parse::<u32>().ok());
        let dead = pid.is_none_or(|pid| pid != std::process::id() && !process_alive(pid));
        if dead && entry.file_type().is_ok_and(|t| t.is_file()) {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(err) => tracing::warn!(file = ?entry.path(), "cannot remove a temp file a crash left: {err}"),
            }
        }
    }
    removed
}

/// Refuses a save (from the UI: `file:save`) to a path that is not the learner's to edit
/// through Paige: anything with a `.git` component at any depth (compared case-insensitively,
/// for case-insensitive file systems; a worktree's `.git` file too) — git's config and hooks
/// run code on the learner's next git command; Paige's own temp files (`.paige-save-*`,
/// `.paige-tmp-*`); and the audit ledger `.orchestration/agent_trace.jsonl`, which only
/// governance writes. `rel` is a resolved project path (`/`-separated, no `.` or `..`).
pub(crate) fn refuse_reserved(rel: &str) -> Result<(), FileError> {
    let refused = |why: &str| {
        let source = std::io::Error::new(std::io::ErrorKind::PermissionDenied, why);
        Err(FileError::Write { path: rel.to_owned(), source })
    };
    let ledger = format!("{}/{}", super::ORCHESTRATION_DIR, super::TRACE_FILE);
    for part in rel.split('/') {
        if part.eq_ignore_ascii_case(".git") {
            return refused("Paige does not save inside .git/ (git's own data: use git to change it)");
        }
        if part.starts_with(TEMP_PREFIX) || part.starts_with(DATA_TEMP_PREFIX) {
            return refused("this name is reserved for Paige's own temp files");
        }
    }
    if rel.eq_ignore_ascii_case(&ledger) {
        return refused("the audit ledger is written by governance only");
    }
    Ok(())
}

/// Writes `content` atomically: a temp file beside the target, synced, then renamed over it.
/// Creates missing parent directories. Every step works from the project root's directory
/// handle without following symlinks, so a path swapped for a symlink after the guard's check
/// fails instead of writing outside the project. An existing file keeps its permissions; a
/// new one gets 0666 less the umask, like any file an editor creates. Never reachable from MCP.
/// A path [`refuse_reserved`] names is refused and nothing is written.
pub fn write_file(path: &ProjectPath, content: &str) -> Result<(), FileError> {
    refuse_reserved(path.rel())?;
    write_bytes(path, content.as_bytes(), None)
}

/// [`write_file`] for any bytes; `mode` (permission bits) for the file, else an existing
/// file's own or 0666 less the umask. The change detector restores versions with it.
pub(crate) fn write_bytes(path: &ProjectPath, content: &[u8], mode: Option<u32>) -> Result<(), FileError> {
    let rel = path.rel();
    let err = |errno: Errno| match errno {
        Errno::LOOP | Errno::NOTDIR | Errno::XDEV => FileError::Changed(rel.to_owned()),
        Errno::ISDIR => FileError::IsDirectory(rel.to_owned()),
        other => FileError::Write { path: rel.to_owned(), source: other.into() },
    };
    let root = &path.handle().dir;
    let (dir, name) = root.parent_of(rel, true).map_err(err)?;
    let at = root.dir_or_root(&dir);
    let existing = match rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => Some(Mode::from_raw_mode(stat.st_mode & 0o7777)),
            FileType::Directory => return Err(FileError::IsDirectory(rel.to_owned())),
            // The guard resolved symlinks, so one here appeared after the check.
            FileType::Symlink => return Err(FileError::Changed(rel.to_owned())),
            other => return Err(FileError::NotRegular { path: rel.to_owned(), kind: kind_name(other) }),
        },
        Err(Errno::NOENT) => None,
        Err(errno) => return Err(err(errno)),
    };
    let existing = mode.map(Mode::from_raw_mode).or(existing);
    let (tmp_name, fd) = create_temp(at, existing.unwrap_or(Mode::from_raw_mode(0o666))).map_err(err)?;
    let written = (|| {
        if let Some(mode) = existing {
            // The umask may have cut bits at creation: an executable script stays executable.
            rustix::fs::fchmod(&fd, mode)?;
        }
        let mut file = std::fs::File::from(fd);
        file.write_all(content)?;
        file.sync_all()?;
        rustix::fs::renameat(at, &tmp_name, at, name)?;
        Ok::<(), std::io::Error>(())
    })();
    written.map_err(|source| {
        let _ = rustix::fs::unlinkat(at, &tmp_name, AtFlags::empty());
        match Errno::from_io_error(&source) {
            Some(errno) => err(errno),
            None => FileError::Write { path: rel.to_owned(), source },
        }
    })
}

/// Appends `content` to a regular file beneath the root in one `write`; a missing file is
/// created (0666 less the umask, with its parent directories) and starts with `header`.
/// Never through a symlink and never blocking: a FIFO, socket or device there is refused at
/// once. For the files Paige keeps in the project itself (the lessons file).
pub(crate) fn append_bytes(path: &ProjectPath, header: &[u8], content: &[u8]) -> Result<(), FileError> {
    let rel = path.rel();
    let err = |errno: Errno| match errno {
        Errno::LOOP | Errno::NOTDIR | Errno::XDEV => FileError::Changed(rel.to_owned()),
        Errno::ISDIR => FileError::IsDirectory(rel.to_owned()),
        // open(2) says ENXIO for a FIFO without a reader when asked not to block.
        Errno::NXIO => FileError::NotRegular { path: rel.to_owned(), kind: "a FIFO, socket or device" },
        other => FileError::Write { path: rel.to_owned(), source: other.into() },
    };
    let root = &path.handle().dir;
    let (dir, name) = root.parent_of(rel, true).map_err(err)?;
    let at = root.dir_or_root(&dir);
    let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let (fd, created) = match rustix::fs::openat(at, name, flags, Mode::empty()) {
        Ok(fd) => (fd, false),
        Err(Errno::NOENT) => {
            (rustix::fs::openat(at, name, flags | OFlags::CREATE, Mode::from_raw_mode(0o666)).map_err(err)?, true)
        }
        Err(errno) => return Err(err(errno)),
    };
    let stat = rustix::fs::fstat(&fd).map_err(err)?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => {}
        other => return Err(FileError::NotRegular { path: rel.to_owned(), kind: kind_name(other) }),
    }
    let bytes = if created { [header, content].concat() } else { content.to_vec() };
    std::fs::File::from(fd).write_all(&bytes).map_err(|source| FileError::Write { path: rel.to_owned(), source })
}

/// Removes a regular file (never through a symlink).
pub(crate) fn remove_file(path: &ProjectPath) -> Result<(), FileError> {
    let rel = path.rel();
    path.handle().dir.unlink(rel).map_err(|errno| match errno {
        Errno::LOOP | Errno::NOTDIR | Errno::XDEV => FileError::Changed(rel.to_owned()),
        other => FileError::Write { path: rel.to_owned(), source: other.into() },
    })
}

/// Sets a regular file's permission bits (never through a symlink).
pub(crate) fn set_mode(path: &ProjectPath, mode: u32) -> Result<(), FileError> {
    let (file, _) = super::read::open_regular(path)?;
    rustix::fs::fchmod(&file, Mode::from_raw_mode(mode & 0o7777))
        .map_err(|errno| FileError::Write { path: path.rel().to_owned(), source: errno.into() })
}

/// A new, exclusive `.paige-save-<random>` file in `dir`.
pub(crate) fn create_temp(dir: rustix::fd::BorrowedFd<'_>, mode: Mode) -> Result<(String, rustix::fd::OwnedFd), Errno> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    loop {
        let mut suffix = [0u8; 8];
        getrandom::fill(&mut suffix).map_err(|_| Errno::IO)?;
        let name = format!("{TEMP_PREFIX}{}", hex::encode(suffix));
        match rustix::fs::openat(dir, name.as_str(), flags, mode) {
            Err(Errno::EXIST) => continue,
            result => return result.map(|fd| (name, fd)),
        }
    }
}

/// Removes the temp files that saves cut short by a crash left in the project (regular
/// files named `.paige-save-*`, outside the excluded directories). Returns how many.
pub fn sweep_temp_files(root: &super::ProjectRoot) -> usize {
    let walker = ignore::WalkBuilder::new(root.path())
        .standard_filters(false)
        .filter_entry(|entry| {
            let excluded = entry.file_type().is_some_and(|t| t.is_dir())
                && super::EXCLUDED_DIRS.contains(&entry.file_name().to_string_lossy().as_ref());
            !excluded
        })
        .build();
    let mut removed = 0;
    for entry in walker.flatten() {
        let is_temp = entry.file_type().is_some_and(|t| t.is_file())
            && entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX);
        let Some(rel) = entry.path().strip_prefix(root.path()).ok().filter(|_| is_temp) else { continue };
        let rel = super::guard::to_slash(rel);
        match root.handle().dir.unlink(&rel) {
            Ok(()) => {
                tracing::info!(path = %rel, "removed a temp file left by an interrupted save");
                removed += 1;
            }
            Err(err) => tracing::warn!(path = %rel, "cannot remove a temp file left by an interrupted save: {err}"),
        }
    }
    removed
}

/// Whether process `pid` runs (as anyone).
pub(crate) fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // Signal 0 checks that the process exists without touching it; EPERM means it exists
    // but belongs to someone else.
    // SAFETY: kill with signal 0 sends nothing; it only reads the process table.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

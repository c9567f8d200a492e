//! Layer 1 of coach mode: Claude Code's own Bash sandbox (bubblewrap on Linux), with the
//! learner's files read-only. Claude Code's rules for it (2.1.x): `denyWrite` always wins over
//! `allowWrite`, paths written `//abs` are absolute, and on Linux only whole paths (no globs)
//! are honoured. So Paige denies exactly the learner's paths: a folder whose every entry is a
//! learner file is denied whole; a folder holding ignored entries (`target/`, `node_modules/`,
//! `__pycache__/`) is denied file by file and stays writable itself, so builds write where
//! they always do. What the sandbox cannot express — a *new* file in such a folder — is left
//! to the change detector (layer 3), which undoes it.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// More denied paths than this and Paige denies top-level folders only (the detector covers
/// the rest): a settings file with tens of thousands of mounts would slow every Bash call.
const MAX_DENIED_PATHS: usize = 2000;

/// Whether Claude Code's sandbox can run here: `bwrap` and `socat` on `path`, and bubblewrap
/// able to create its namespaces. `Err` says why not, for the doctor and the UI.
pub fn probe(path: Option<&OsStr>) -> Result<(), String> {
    let find = |program| crate::terminal::find_in_path(program, path);
    let missing: Vec<&str> = ["bwrap", "socat"].into_iter().filter(|p| find(p).is_none()).collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} not installed (Debian/Ubuntu: `sudo apt-get install bubblewrap socat`)",
            missing.join(" and ")
        ));
    }
    let bwrap = find("bwrap").unwrap_or_default();
    let args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user", "--unshare-pid"];
    try_bwrap(
        &bwrap,
        &[&args[..], &["--unshare-net", "--", "true"]].concat(),
        "create a sandbox here (user namespaces?)",
    )
}

/// Runs `bwrap` with `args` (a harmless command at their end), waiting up to 3 s: `Err`
/// says what it could not do (`cannot {what}`) with bubblewrap's own words.
pub(crate) fn try_bwrap(bwrap: &std::path::Path, args: &[&str], what: &str) -> Result<(), String> {
    let mut child = std::process::Command::new(bwrap)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|err| format!("cannot run bubblewrap: {err}"))?;
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(_)) => {
                let mut stderr = String::new();
                if let Some(mut pipe) = child.stderr.take() {
                    use std::io::Read;
                    let _ = pipe.read_to_string(&mut stderr);
                }
                return Err(format!("bubblewrap cannot {what}: {}", stderr.trim()));
            }
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("bubblewrap did not answer within 3 s".into());
            }
        }
    }
}

/// The `sandbox` block of Claude Code's settings for coach mode over `root`.
pub fn settings(root: &Path) -> serde_json::Value {
    let deny: Vec<String> = denied_paths(root).iter().map(|p| format!("/{}", p.display())).collect();
    serde_json::json!({
        "enabled": true,
        // Without a working sandbox Claude Code refuses to start rather than run unsandboxed;
        // Paige only asks for it after `probe` said it works.
        "failIfUnavailable": true,
        "allowUnsandboxedCommands": false,
        "filesystem": {"denyWrite": deny},
    })
}

/// The learner's paths under `root`, as few as express them exactly (absolute).
pub fn denied_paths(root: &Path) -> Vec<PathBuf> {
    let kept: HashSet<PathBuf> =
        crate::files::walker(root, root).build().flatten().filter(|e| e.depth() > 0).map(|e| e.into_path()).collect();
    let mut out = Vec::new();
    if deny_within(root, &kept, &mut out) {
        // The root stays writable even when all of it is the learner's: a build creates its
        // ignored output folder (`target/`) there on its first run.
        out = kept.iter().filter(|p| p.parent() == Some(root) && !p.is_symlink()).cloned().collect();
        out.sort();
    }
    if out.len() > MAX_DENIED_PATHS {
        out.retain(|p| p.parent() == Some(root));
        out.truncate(MAX_DENIED_PATHS);
    }
    out
}

/// Pushes the denied paths within `dir`; true (pushing nothing) when all of `dir` is the
/// learner's, so the caller denies `dir` whole.
fn deny_within(dir: &Path, kept: &HashSet<PathBuf>, out: &mut Vec<PathBuf>) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    let mut whole = true;
    let mut mine = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if !kept.contains(&path) {
            whole = false;
            continue;
        }
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            let mut inner = Vec::new();
            if deny_within(&path, kept, &mut inner) {
                mine.push(path);
            } else {
                whole = false;
                mine.extend(inner);
            }
        } else if kind.is_file() {
            mine.push(path);
        }
    }
    if !whole {
        out.extend(mine);
    }
    whole
}

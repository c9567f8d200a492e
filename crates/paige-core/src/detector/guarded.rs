//! Paths Claude Code's own sandbox guards. Where such a path does not exist, bubblewrap needs
//! a mount point for its read-only mount, so the sandbox creates an empty file (or folder)
//! there in the learner's project, and Claude Code removes it after the command. The detector
//! must leave these alone: removing the placeholder, or renaming a restored file over it,
//! detaches the read-only mount in a sandbox that may still be running, which can then write
//! the path (a SessionStart hook in `.claude/settings.json`).
//!
//! The list is Claude Code 2.1.330's (its sandbox runtime's dangerous files and folders, and
//! the settings files Claude Code adds to the sandbox's deny list), matched at any depth.

/// File names the sandbox denies writing at any depth.
const FILES: &[&str] = &[
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".profile",
    ".ripgreprc",
    ".mcp.json",
    ".claude.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".envrc",
    "bunfig.toml",
    ".bunfig.toml",
];

/// Folders the sandbox denies writing at any depth (everything under them too). `.claude`
/// holds the settings files, `commands/` and `agents/`; `.git` is never a learner path.
const DIRS: &[&str] = &[".claude", ".vscode", ".idea", ".git"];

/// Whether `rel` (a `/`-separated project path) is a path Claude Code's sandbox guards.
pub(crate) fn is_guarded(rel: &str) -> bool {
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        if DIRS.contains(&part) && !last {
            return true;
        }
        if last && (FILES.contains(&part) || DIRS.contains(&part)) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::is_guarded;

    #[test]
    fn the_sandboxs_guarded_paths_are_matched_at_any_depth_and_nothing_else() {
        for path in [
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".claude/commands/x.md",
            ".mcp.json",
            ".bashrc",
            "sub/.gitconfig",
            ".vscode/settings.json",
            "a/.idea/workspace.xml",
            ".git/hooks/pre-commit",
        ] {
            assert!(is_guarded(path), "{path}");
        }
        for path in ["src/main.rs", "claude/settings.json", ".bashrc.bak", "src/.claude_notes", "mcp.json"] {
            assert!(!is_guarded(path), "{path}");
        }
    }
}

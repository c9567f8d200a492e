//! What a governed Claude Code may write, by construction (issue 42): started for an intent
//! (`paige claude --intent INT-001`), it runs in the jail — the same launcher and layers as
//! coach mode — where only the folders of that intent's `owned_scope` are writable and the
//! rest of the project is read-only. A scope is glob patterns; the view is made of folders,
//! so each pattern gives the folder its literal part names (`src/weather/**` →
//! `src/weather/`, `src/*.rs` → `src/`). Inside those folders Paige's hooks still check each
//! write against the patterns themselves. A pattern with no literal folder (`**/*.md`, a new
//! file at the project's root) makes the whole project writable: the view then holds only
//! `.orchestration/` and `.git/` read-only, and the hooks hold the scope, as they do without
//! the jail. Under Landlock alone (no jail) those two stay writable inside a writable folder —
//! Landlock cannot carve a read-only path out of a write rule — and the hooks hold them.
//! Another intent's folders stay read-only: to work on another intent, Claude Code
//! is started again for it (`paige claude --intent INT-002 --continue`).

use std::path::{Component, Path, PathBuf};

/// Folders of the project the view keeps read-only even where a scope makes their parent
/// writable: Paige's own records, and git's (hooks and config run on the learner's next
/// git command).
pub const ALWAYS_READ_ONLY: [&str; 2] = [crate::files::ORCHESTRATION_DIR, ".git"];

/// The writable part of a governed Claude Code's view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub intent: String,
    /// Absolute, canonical, inside the project (files or folders).
    pub writable: Vec<PathBuf>,
    /// The patterns that needed the whole project writable (said in the banner).
    pub whole_project: Vec<String>,
}

impl View {
    /// The view before any intent is selected (the desktop app's governed mode starts here):
    /// the whole project read-only; the first select starts Claude Code again in its view.
    pub fn before_intent() -> View {
        View { intent: String::new(), writable: Vec::new(), whole_project: Vec::new() }
    }

    /// Whether no intent is selected in this view ([`View::before_intent`]).
    pub fn is_before_intent(&self) -> bool {
        self.intent.is_empty()
    }

    /// One line for the banner.
    pub fn describe(&self, project_dir: &Path) -> String {
        if self.is_before_intent() {
            return "no intent is selected yet, so the whole project is read-only until Claude Code selects one"
                .to_owned();
        }
        let shown: Vec<String> = self
            .writable
            .iter()
            .map(|p| {
                p.strip_prefix(project_dir).map_or_else(|_| p.display().to_string(), |r| format!("{}/", r.display()))
            })
            .collect();
        if self.whole_project.is_empty() {
            format!("{} can write only {}; the rest of the project is read-only", self.intent, shown.join(", "))
        } else {
            format!(
                "{}'s scope {} names no folder, so the whole project is writable but .orchestration/ and .git/; \
                 Paige's hooks hold the scope there",
                self.intent,
                self.whole_project.join(", ")
            )
        }
    }
}

/// The view for the intent `id` whose `owned_scope` is `scope`, in the project at `project_dir`. A scope folder that does not exist
/// yet is made (empty: a folder the intent owns, for the files it is to write). `Err`: a
/// pattern that leaves the project, or a folder that cannot be made or leads out of it.
pub fn for_intent(project_dir: &Path, id: &str, scope: &[String]) -> Result<View, String> {
    let root = std::fs::canonicalize(project_dir).map_err(|err| format!("{}: {err}", project_dir.display()))?;
    let mut writable: Vec<PathBuf> = Vec::new();
    let mut whole_project = Vec::new();
    for pattern in scope {
        let literal = literal_part(pattern)?;
        let target = match literal {
            Literal::Folder(rel) if rel.as_os_str().is_empty() => None,
            Literal::Folder(rel) => Some(made(&root, &rel)?),
            Literal::Path(rel) if root.join(&rel).exists() => Some(inside(&root, &root.join(&rel))?),
            // A file not written yet: its folder, unless that is the project's root.
            Literal::Path(rel) => match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
                Some(parent) => Some(made(&root, parent)?),
                None => None,
            },
        };
        match target {
            Some(path) if path != root => writable.push(path),
            _ => whole_project.push(pattern.clone()),
        }
    }
    if !whole_project.is_empty() {
        writable = vec![root];
    }
    writable.sort();
    writable.dedup();
    // A folder inside another writable one adds nothing.
    let all = writable.clone();
    writable.retain(|p| !all.iter().any(|other| other != p && p.starts_with(other)));
    Ok(View { intent: id.to_owned(), writable, whole_project })
}

/// The note typed into the Claude Code started again for `intent`.
pub fn go_on_note(intent: &str) -> String {
    format!(
        "[Paige] Claude Code runs again, now in {intent}'s view: {intent}'s folders are writable. Select {intent} and \
         go on with the task."
    )
}

enum Literal {
    /// The folder before the first component with a wildcard.
    Folder(PathBuf),
    /// A pattern without wildcards: a file or a folder, as it names it.
    Path(PathBuf),
}

fn literal_part(pattern: &str) -> Result<Literal, String> {
    let path = Path::new(pattern);
    if path.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(format!("the scope pattern {pattern:?} leaves the project"));
    }
    let wild = |c: &Component| c.as_os_str().to_string_lossy().contains(['*', '?', '[', '{']);
    let parts: Vec<Component> = path.components().filter(|c| *c != Component::CurDir).collect();
    match parts.iter().position(wild) {
        Some(at) => Ok(Literal::Folder(parts[..at].iter().collect())),
        None => Ok(Literal::Path(parts.iter().collect())),
    }
}

/// `root/rel` as a folder, made if missing; canonical and inside `root`.
fn made(root: &Path, rel: &Path) -> Result<PathBuf, String> {
    let path = root.join(rel);
    // Check the part that exists before making anything under it: a link out of the
    // project must not get folders made outside.
    let mut existing = path.as_path();
    while !existing.exists() {
        existing = existing.parent().unwrap_or(root);
    }
    inside(root, existing)?;
    if !path.exists() {
        std::fs::create_dir_all(&path).map_err(|err| format!("cannot make {}: {err}", path.display()))?;
    }
    let made = inside(root, &path)?;
    if !made.is_dir() {
        return Err(format!("{} is not a folder", path.display()));
    }
    Ok(made)
}

fn inside(root: &Path, path: &Path) -> Result<PathBuf, String> {
    let canonical = std::fs::canonicalize(path).map_err(|err| format!("{}: {err}", path.display()))?;
    if canonical.starts_with(root) {
        Ok(canonical)
    } else {
        Err(format!("{} leads out of the project (to {})", path.display(), canonical.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn for_scope(root: &Path, scope: &[&str]) -> Result<View, String> {
        for_intent(root, "INT-001", &scope.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn each_pattern_gives_the_folder_its_literal_part_names_made_if_missing() {
        let dir = tempfile::tempdir().expect("dir");
        let root = std::fs::canonicalize(dir.path()).expect("root");
        std::fs::create_dir_all(root.join("src/weather")).expect("mkdir");
        std::fs::write(root.join("README.md"), "r").expect("readme");
        let view = for_scope(&root, &["src/weather/**", "src/api/*.rs", "README.md", "docs/new.md"]).expect("view");
        assert_eq!(
            view.writable,
            vec![root.join("README.md"), root.join("docs"), root.join("src/api"), root.join("src/weather")]
        );
        assert!(root.join("src/api").is_dir() && root.join("docs").is_dir(), "missing scope folders are made");
        assert!(view.whole_project.is_empty());
        assert!(view.describe(&root).contains("INT-001 can write only README.md/, docs/, src/api/, src/weather/"));
    }

    #[test]
    fn a_pattern_without_a_folder_makes_the_whole_project_writable_and_says_so() {
        let dir = tempfile::tempdir().expect("dir");
        let root = std::fs::canonicalize(dir.path()).expect("root");
        let view = for_scope(&root, &["src/a/**", "**/*.md"]).expect("view");
        assert_eq!(view.writable, vec![root.clone()]);
        assert_eq!(view.whole_project, vec!["**/*.md".to_owned()]);
        assert!(view.describe(&root).contains("names no folder"), "{}", view.describe(&root));
    }

    #[test]
    fn a_pattern_or_a_link_that_leaves_the_project_is_refused_and_nothing_is_made_outside() {
        let dir = tempfile::tempdir().expect("dir");
        let outside = tempfile::tempdir().expect("outside");
        let root = std::fs::canonicalize(dir.path()).expect("root");
        std::os::unix::fs::symlink(outside.path(), root.join("out")).expect("link");
        for scope in ["../x/**", "/etc/**", "out/new/**", "out/**"] {
            assert!(for_scope(&root, &[scope]).is_err(), "{scope}");
        }
        assert!(!outside.path().join("new").exists(), "no folder made through the link");
    }

    /// The view's binds come after the read-only root, and `.orchestration/` and `.git/` are
    /// bound read-only again after a writable folder that holds them (bwrap applies its
    /// mounts in order: a later one covers an earlier).
    #[test]
    fn the_jail_binds_the_scope_writable_and_keeps_paiges_records_and_git_read_only_inside_it() {
        let dir = tempfile::tempdir().expect("dir");
        let root = std::fs::canonicalize(dir.path()).expect("root");
        for kept in ALWAYS_READ_ONLY {
            std::fs::create_dir_all(root.join(kept)).expect("mkdir");
        }
        let spec = |writable: Vec<PathBuf>| super::super::jail::JailSpec {
            bwrap: "/usr/bin/bwrap".into(),
            userns: true,
            project_dir: root.clone(),
            data_dir: "/nonexistent/data".into(),
            claude_config_dir: "/nonexistent/data/claude".into(),
            run_files: vec![],
            keep_under_tmp: vec![],
            gate: None,
            writable,
        };
        let words = |spec| -> Vec<String> {
            super::super::jail::args(&spec).iter().map(|w| w.to_string_lossy().into_owned()).collect()
        };
        let at = |words: &[String], flag: &str, path: &Path| {
            let path = path.display().to_string();
            words.windows(3).position(|w| w[0] == flag && w[1] == path && w[2] == path)
        };
        let scoped = words(spec(vec![root.join("src")]));
        let root_ro = scoped.windows(3).position(|w| w == ["--ro-bind", "/", "/"]).expect("ro root");
        assert!(at(&scoped, "--bind", &root.join("src")).expect("src writable") > root_ro);
        assert_eq!(at(&scoped, "--ro-bind", &root.join(".git")), None, "not inside src/");
        let whole = words(spec(vec![root.clone()]));
        let project = at(&whole, "--bind", &root).expect("the project writable");
        for kept in ALWAYS_READ_ONLY {
            assert!(at(&whole, "--ro-bind", &root.join(kept)).expect(kept) > project, "{kept} read-only after it");
        }
        assert_eq!(at(&words(spec(vec![])), "--bind", &root), None, "coach mode: nothing of the project writable");
    }
}

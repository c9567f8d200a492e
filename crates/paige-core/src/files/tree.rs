use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::guard::to_slash;
use super::ignore_rules::IgnoreRules;

/// Directories never shown or watched, whatever `.gitignore` says.
pub const EXCLUDED_DIRS: &[&str] = &["node_modules", ".git", "dist", "build", "coverage", ".next", ".cache"];

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeNodeKind {
    File,
    Directory,
}

/// One node of the project tree; `path` is relative to the root (`""` for the root itself).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeNode {
    pub name: String,
    pub path: String,
    #[serde(rename = "type")]
    pub kind: TreeNodeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub children: Option<Vec<TreeNode>>,
}

/// The walk the tree shows, from `start` inside `root`: excluded directories and ignored
/// paths left out (by rules Paige reads itself, [`IgnoreRules`]), symlinks not followed.
pub(crate) fn walker(root: &Path, start: &Path) -> ignore::WalkBuilder {
    let rules = IgnoreRules::new(root);
    let mut builder = ignore::WalkBuilder::new(start);
    builder.standard_filters(false).filter_entry(move |entry| {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        entry.depth() == 0 || !(is_excluded_name(entry.file_name()) || rules.is_ignored(entry.path(), is_dir))
    });
    builder
}

/// The directories the tree shows from `dir` (inside `root`), `dir` itself first: the ones
/// worth watching. A project's `node_modules` or `target` costs nothing here.
pub(crate) fn kept_dirs(root: &Path, dir: &Path) -> Vec<std::path::PathBuf> {
    walker(root, dir)
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_dir()))
        .map(|entry| entry.into_path())
        .collect()
}

/// The project's files and directories, directories first then by name, without the
/// excluded directories and without what `.gitignore` files ignore.
pub fn project_tree(root: &Path) -> TreeNode {
    let mut dirs: BTreeMap<String, Vec<TreeNode>> = BTreeMap::new();
    for entry in walker(root, root).build().flatten() {
        let Ok(rel) = entry.path().strip_prefix(root) else { continue };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let rel = to_slash(rel);
        let parent = rel.rsplit_once('/').map(|(p, _)| p.to_owned()).unwrap_or_default();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = if is_dir { TreeNodeKind::Directory } else { TreeNodeKind::File };
        dirs.entry(parent).or_default().push(TreeNode { name, path: rel, kind, children: None });
    }
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut node = TreeNode { name, path: String::new(), kind: TreeNodeKind::Directory, children: None };
    attach(&mut node, &mut dirs);
    node
}

pub(crate) fn is_excluded_name(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| EXCLUDED_DIRS.contains(&n))
}

fn attach(node: &mut TreeNode, dirs: &mut BTreeMap<String, Vec<TreeNode>>) {
    let mut children = dirs.remove(&node.path).unwrap_or_default();
    for child in children.iter_mut().filter(|c| c.kind == TreeNodeKind::Directory) {
        attach(child, dirs);
    }
    children.sort_by(|a, b| {
        (a.kind != TreeNodeKind::Directory, &a.name).cmp(&(b.kind != TreeNodeKind::Directory, &b.name))
    });
    node.children = Some(children);
}

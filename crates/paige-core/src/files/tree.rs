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
#[serde(rename_all = "camelCase")]
pub struct TreeNode {
    pub name: String,
    pub path: String,
    #[serde(rename = "type")]
    pub kind: TreeNodeKind,
    /// A listed directory's entries, directories first, then by name. Absent for a file, and
    /// for a directory not listed yet: `fs:list` lists it (answered by `fs:children`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub children: Option<Vec<TreeNode>>,
    /// Set when `children` holds only a directory's first entries: `fs:list` with this
    /// offset gives the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub next_offset: Option<u32>,
}

impl TreeNode {
    /// A node not listed (a file, or a directory whose entries `fs:list` gives).
    pub(crate) fn unlisted(name: String, path: String, kind: TreeNodeKind) -> TreeNode {
        TreeNode { name, path, kind, children: None, next_offset: None }
    }
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

/// The whole project's files and directories at once, directories first then by name,
/// without the excluded directories and without what `.gitignore` files ignore. It walks
/// every folder: a UI gets the tree a folder at a time instead ([`super::TreeCache`]); this is
/// the walk the tests and the `tree` benchmark compare the listings against.
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
        dirs.entry(parent).or_default().push(TreeNode::unlisted(name, rel, kind));
    }
    let mut node = TreeNode::unlisted(root_name(root), String::new(), TreeNodeKind::Directory);
    attach(&mut node, &mut dirs);
    node
}

pub(crate) fn is_excluded_name(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| EXCLUDED_DIRS.contains(&n))
}

/// The root node's name: the project folder's.
pub(crate) fn root_name(root: &Path) -> String {
    root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The tree's order: directories first, then by name.
pub(crate) fn tree_order(a: &TreeNode, b: &TreeNode) -> std::cmp::Ordering {
    (a.kind != TreeNodeKind::Directory, &a.name).cmp(&(b.kind != TreeNodeKind::Directory, &b.name))
}

fn attach(node: &mut TreeNode, dirs: &mut BTreeMap<String, Vec<TreeNode>>) {
    let mut children = dirs.remove(&node.path).unwrap_or_default();
    for child in children.iter_mut().filter(|c| c.kind == TreeNodeKind::Directory) {
        attach(child, dirs);
    }
    children.sort_by(tree_order);
    node.children = Some(children);
}

// The explorer's tree model: pure functions over `fs:tree` nodes, so `fs:tree_update` and
// `fs:children` handling is unit-tested without a DOM. A directory without `children` is not
// listed yet (`fs:list` lists it); one with `nextOffset` holds only its first entries.
import type { DirPage, ServerPayloads, TreeNode } from "./protocol";

/** The core's order: directories first, then by name as the core compares them (by code). */
export function compareNodes(a: TreeNode, b: TreeNode): number {
  if (a.type !== b.type) return a.type === "directory" ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Whether `node` is a directory whose entries the explorer holds (some, at least). */
export function isListed(node: TreeNode): boolean {
  return node.type === "directory" && node.children !== undefined;
}

/** Puts `node` into the listed `dir` in order. An entry that sorts after the last one of a
 * directory listed only in part is left to the page that brings it. */
function insert(dir: TreeNode, node: TreeNode): void {
  const children = (dir.children ??= []);
  const last = children.at(-1);
  if (dir.nextOffset !== undefined && last && compareNodes(node, last) > 0) return;
  const at = children.findIndex((c) => compareNodes(node, c) < 0);
  children.splice(at < 0 ? children.length : at, 0, node);
}

/** Removes the node at `path`; returns it, or null when absent (or in an unlisted folder). */
export function removeNode(root: TreeNode, path: string): TreeNode | null {
  const parent = findParent(root, path);
  if (!parent?.children) return null;
  const index = parent.children.findIndex((c) => c.path === path);
  if (index < 0) return null;
  return parent.children.splice(index, 1)[0] ?? null;
}

/** Adds `path` (a file unless `kind` says otherwise) where the tree is listed. Inside a folder
 * not listed yet nothing changes: its listing will hold it. A folder on the way the tree does
 * not hold is added, unlisted; one added as a file (the watcher does not say which) becomes
 * an unlisted folder. */
export function addNode(root: TreeNode, path: string, kind: TreeNode["type"] = "file", node?: TreeNode): void {
  const parts = path.split("/").filter(Boolean);
  let dir = root;
  for (let i = 0; i < parts.length; i++) {
    if (!dir.children) return;
    const sub = parts.slice(0, i + 1).join("/");
    const name = parts[i] ?? sub;
    const next = dir.children.find((c) => c.path === sub);
    if (i === parts.length - 1) {
      if (!next) insert(dir, node ?? { name, path: sub, type: kind });
      return;
    }
    if (!next) return insert(dir, { name, path: sub, type: "directory" });
    if (next.type === "file") {
      removeNode(root, sub);
      return insert(dir, { name, path: sub, type: "directory" });
    }
    dir = next;
  }
}

export function findNode(root: TreeNode, path: string): TreeNode | null {
  if (root.path === path) return root;
  for (const child of root.children ?? []) {
    if (path === child.path || path.startsWith(`${child.path}/`)) return findNode(child, path);
  }
  return null;
}

function findParent(root: TreeNode, path: string): TreeNode | null {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? root : findNode(root, path.slice(0, slash));
}

function rebase(node: TreeNode, path: string): void {
  node.path = path;
  node.name = path.split("/").pop() ?? path;
  for (const child of node.children ?? []) rebase(child, `${path}/${child.name}`);
}

/** Applies one `fs:tree_update` to `root` in place; what happens in unlisted folders is left
 * to their listing. */
export function applyTreeUpdate(root: TreeNode, update: ServerPayloads["fs:tree_update"]): void {
  switch (update.action) {
    case "add":
      addNode(root, update.path);
      break;
    case "unlink":
      removeNode(root, update.path);
      break;
    case "rename": {
      if (!update.newPath) break;
      const moved = removeNode(root, update.path);
      if (moved) {
        rebase(moved, update.newPath);
        addNode(root, update.newPath, moved.type, moved);
      } else addNode(root, update.newPath);
      break;
    }
    case "change":
      break;
  }
}

/** Puts one `fs:children` page into `root`: the first page lists the folder (keeping what is
 * listed below its sub-folders), a later one adds to it. False when the folder is not in the
 * tree, or a later page comes for a folder no longer listed. */
export function applyPage(root: TreeNode, page: DirPage): boolean {
  const dir = findNode(root, page.path);
  if (!dir || dir.type !== "directory") return false;
  if (page.offset === 0) {
    const before = new Map((dir.children ?? []).map((c) => [c.path, c]));
    dir.children = page.children.map((child) => {
      const old = before.get(child.path);
      return old && old.type === "directory" && child.type === "directory" ? old : { ...child };
    });
  } else if (dir.children) {
    const have = new Set(dir.children.map((c) => c.path));
    dir.children.push(...page.children.filter((c) => !have.has(c.path)));
  } else return false;
  if (page.nextOffset === undefined) delete dir.nextOffset;
  else dir.nextOffset = page.nextOffset;
  return true;
}

/** Every folder that holds one of `paths` at any depth ("src", "src/auth" for
 * "src/auth/login.rs"): a collapsed one shows it holds a hinted file. */
export function foldersHolding(paths: Iterable<string>): Set<string> {
  const folders = new Set<string>();
  for (const path of paths) {
    const parts = path.split("/").filter(Boolean);
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join("/"));
  }
  return folders;
}

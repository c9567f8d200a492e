// The explorer's tree model: pure functions over `fs:tree` nodes, so `fs:tree_update`
// handling is unit-tested without a DOM.
import type { ServerPayloads, TreeNode } from "./protocol";

function sortChildren(children: TreeNode[]): void {
  children.sort((a, b) =>
    a.type === b.type ? a.name.localeCompare(b.name) : a.type === "directory" ? -1 : 1,
  );
}

/** Removes the node at `path`; returns it, or null when absent. */
export function removeNode(root: TreeNode, path: string): TreeNode | null {
  const parent = findParent(root, path);
  if (!parent?.children) return null;
  const index = parent.children.findIndex((c) => c.path === path);
  if (index < 0) return null;
  return parent.children.splice(index, 1)[0] ?? null;
}

/** Adds `path` (a file unless `kind` says otherwise), creating missing parent directories. */
export function addNode(root: TreeNode, path: string, kind: TreeNode["type"] = "file", node?: TreeNode): void {
  const parts = path.split("/").filter(Boolean);
  let dir = root;
  for (let i = 0; i < parts.length; i++) {
    const sub = parts.slice(0, i + 1).join("/");
    dir.children ??= [];
    let next = dir.children.find((c) => c.path === sub);
    if (!next) {
      const last = i === parts.length - 1;
      next = last && node ? node : { name: parts[i] ?? sub, path: sub, type: last ? kind : "directory" };
      if (next.type === "directory") next.children ??= [];
      dir.children.push(next);
      sortChildren(dir.children);
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

/** Applies one `fs:tree_update` to `root` in place. */
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

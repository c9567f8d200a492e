import { describe, expect, it } from "vitest";
import type { TreeNode } from "../src/protocol";
import { applyTreeUpdate, findNode } from "../src/tree";

function tree(): TreeNode {
  return {
    name: "p",
    path: "",
    type: "directory",
    children: [
      { name: "src", path: "src", type: "directory", children: [{ name: "a.js", path: "src/a.js", type: "file" }] },
      { name: "README.md", path: "README.md", type: "file" },
    ],
  };
}

const names = (node: TreeNode | null) => (node?.children ?? []).map((c) => c.name);

describe("fs:tree_update", () => {
  it("add inserts the file sorted, directories first", () => {
    const root = tree();
    applyTreeUpdate(root, { action: "add", path: "src/0.js" });
    applyTreeUpdate(root, { action: "add", path: "CHANGELOG.md" });
    expect(names(findNode(root, "src"))).toEqual(["0.js", "a.js"]);
    expect(names(root)).toEqual(["src", "CHANGELOG.md", "README.md"]);
  });

  it("add creates missing parent directories", () => {
    const root = tree();
    applyTreeUpdate(root, { action: "add", path: "lib/deep/x.rs" });
    expect(findNode(root, "lib/deep")?.type).toBe("directory");
    expect(findNode(root, "lib/deep/x.rs")?.type).toBe("file");
  });

  it("unlink removes the node", () => {
    const root = tree();
    applyTreeUpdate(root, { action: "unlink", path: "src/a.js" });
    expect(names(findNode(root, "src"))).toEqual([]);
  });

  it("rename moves a directory with its children", () => {
    const root = tree();
    applyTreeUpdate(root, { action: "rename", path: "src", newPath: "lib" });
    expect(findNode(root, "src")).toBeNull();
    expect(findNode(root, "lib/a.js")?.path).toBe("lib/a.js");
  });

  it("change leaves the tree as it was", () => {
    const root = tree();
    applyTreeUpdate(root, { action: "change", path: "README.md" });
    expect(root).toEqual(tree());
  });
});

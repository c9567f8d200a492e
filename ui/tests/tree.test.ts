import { describe, expect, it } from "vitest";
import type { TreeNode } from "../src/protocol";
import { applyPage, applyTreeUpdate, findNode } from "../src/tree";

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

  it("add inside a folder the tree does not hold shows the folder, unlisted: its listing brings the rest", () => {
    const root = tree();
    applyTreeUpdate(root, { action: "add", path: "lib/deep/x.rs" });
    expect(findNode(root, "lib")).toEqual({ name: "lib", path: "lib", type: "directory" });
    expect(findNode(root, "lib/deep")).toBeNull();
  });

  it("add inside an unlisted folder changes nothing", () => {
    const root = tree();
    root.children!.unshift({ name: "docs", path: "docs", type: "directory" });
    const before = structuredClone(root);
    applyTreeUpdate(root, { action: "add", path: "docs/guide.md" });
    applyTreeUpdate(root, { action: "unlink", path: "docs/old.md" });
    expect(root).toEqual(before);
  });

  it("an entry added as a file that turns out to hold files becomes an unlisted folder", () => {
    const root = tree();
    applyTreeUpdate(root, { action: "add", path: "lib" });
    expect(findNode(root, "lib")?.type).toBe("file");
    applyTreeUpdate(root, { action: "add", path: "lib/x.rs" });
    expect(findNode(root, "lib")).toEqual({ name: "lib", path: "lib", type: "directory" });
    expect(names(root)).toEqual(["lib", "src", "README.md"]);
  });

  it("in a folder listed in part, an entry past the last one listed is left to its page", () => {
    const root = tree();
    root.nextOffset = 2;
    applyTreeUpdate(root, { action: "add", path: "zzz.txt" });
    applyTreeUpdate(root, { action: "add", path: "AAA.txt" });
    expect(names(root)).toEqual(["src", "AAA.txt", "README.md"]);
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

describe("fs:children", () => {
  const file = (path: string) => ({ name: path.split("/").pop()!, path, type: "file" as const });

  it("the first page lists an unlisted folder, later pages add to it, and the last clears nextOffset", () => {
    const root = tree();
    root.children!.unshift({ name: "docs", path: "docs", type: "directory" });
    expect(applyPage(root, { path: "docs", children: [file("docs/a.md")], offset: 0, total: 2, nextOffset: 1, capped: false })).toBe(true);
    expect(findNode(root, "docs")?.nextOffset).toBe(1);
    applyPage(root, { path: "docs", children: [file("docs/a.md"), file("docs/b.md")], offset: 1, total: 2, capped: false });
    expect(names(findNode(root, "docs"))).toEqual(["a.md", "b.md"]);
    expect(findNode(root, "docs")).not.toHaveProperty("nextOffset");
  });

  it("listing a folder again keeps what was listed below its sub-folders", () => {
    const root = tree();
    applyPage(root, { path: "", children: [{ name: "src", path: "src", type: "directory" }, file("NEW.md")], offset: 0, total: 2, capped: false });
    expect(names(root)).toEqual(["src", "NEW.md"]);
    expect(names(findNode(root, "src"))).toEqual(["a.js"]);
  });

  it("a page for a folder the tree does not hold, or a later page of an unlisted one, is dropped", () => {
    const root = tree();
    expect(applyPage(root, { path: "gone", children: [], offset: 0, total: 0, capped: false })).toBe(false);
    root.children!.unshift({ name: "docs", path: "docs", type: "directory" });
    expect(applyPage(root, { path: "docs", children: [file("docs/z.md")], offset: 2000, total: 2001, capped: false })).toBe(false);
    expect(findNode(root, "docs")?.children).toBeUndefined();
  });
});

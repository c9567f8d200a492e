// @vitest-environment happy-dom
// Issue 32: the explorer lists a folder when it is opened — "loading…" meanwhile, the error
// where it happened with a retry, "Show more" for a big folder — and asks for every folder on
// the way to a hinted one; a new tree lists the open folders again.
import { describe, expect, it } from "vitest";
import { Explorer } from "../src/explorer";
import type { TreeNode } from "../src/protocol";
import type { Transport } from "../src/transport";
import { byTestId, recordingTransport } from "./support";

function explorer(root: TreeNode) {
  const host = document.createElement("aside");
  const { sent, transport } = recordingTransport();
  const ui = new Explorer(host, transport as unknown as Transport, () => {});
  ui.setTree(root);
  const row = (path: string) => host.querySelector<HTMLElement>(`[data-testid="tree-item"][data-path="${path}"]`);
  const lists = () => sent.filter((m) => m.type === "fs:list").map((m) => m.payload);
  return { ui, host, sent, row, lists, ...byTestId(host) };
}

const dir = (path: string, children?: TreeNode[]): TreeNode => ({ name: path.split("/").pop()!, path, type: "directory", children });
const file = (path: string): TreeNode => ({ name: path.split("/").pop()!, path, type: "file" });
const page = (path: string, children: TreeNode[], offset = 0, nextOffset?: number) => ({ path, children, offset, total: children.length + offset, nextOffset, capped: false });

describe("the explorer lists folders as they open", () => {
  it("opening an unlisted folder asks for it once and shows loading… until its entries come", () => {
    const t = explorer(dir("", [dir("src"), file("README.md")]));
    expect(t.lists()).toEqual([]);
    t.row("src")!.click();
    expect(t.sent.map((m) => m.type)).toEqual(["explorer:expand_dir", "fs:list"]);
    expect(t.lists()).toEqual([{ path: "src" }]);
    expect(t.$("tree-loading")?.textContent).toBe("loading…");
    t.row("src")!.click();
    t.row("src")!.click();
    expect(t.lists()).toHaveLength(1);
    t.ui.children(page("src", [file("src/main.rs")]));
    expect(t.$("tree-loading")).toBeNull();
    expect(t.row("src/main.rs")).not.toBeNull();
  });

  it("a folder that cannot be listed says why where it is, and Retry asks again", () => {
    const t = explorer(dir("", [dir("src")]));
    t.row("src")!.click();
    t.ui.listFailed({ path: "src", error: "cannot list \"src\": Permission denied" });
    expect(t.$("tree-error")?.textContent).toContain("Permission denied");
    expect(t.$("tree-error")?.dataset.path).toBe("src");
    t.$("tree-retry")!.click();
    expect(t.lists()).toEqual([{ path: "src" }, { path: "src" }]);
    expect(t.$("tree-error")).toBeNull();
    expect(t.$("tree-loading")).not.toBeNull();
  });

  it("a big folder shows its first page and Show more asks for the next from what it holds", () => {
    const first = Array.from({ length: 3 }, (_, i) => file(`big/f${i}`));
    const t = explorer(dir("", [dir("big")]));
    t.row("big")!.click();
    t.ui.children(page("big", first, 0, 3));
    t.$("tree-more")!.click();
    expect(t.lists().at(-1)).toEqual({ path: "big", offset: 3 });
    expect(t.$("tree-more")?.textContent).toBe("loading…");
    t.ui.children(page("big", [file("big/f3")], 3));
    expect(t.$("tree-more")).toBeNull();
    expect(t.$$("tree-item").map((r) => r.dataset.path)).toEqual(["big", "big/f0", "big/f1", "big/f2", "big/f3"]);
  });

  it("a hint's folders are listed in turn, each as the one above it arrives", () => {
    const t = explorer(dir("", [dir("src")]));
    t.ui.setHints({ hints: [{ path: "src/auth/login.rs", style: "important", directories: ["src", "src/auth"] }] });
    expect(t.lists()).toEqual([{ path: "src" }]);
    t.ui.children(page("src", [dir("src/auth")]));
    expect(t.lists()).toEqual([{ path: "src" }, { path: "src/auth" }]);
    t.ui.children(page("src/auth", [file("src/auth/login.rs")]));
    expect(t.row("src/auth/login.rs")?.classList.contains("hint-glow")).toBe(true);
  });

  it("a new tree lists the open folders again; an update in an open folder shows at once", () => {
    const t = explorer(dir("", [dir("src", [file("src/a.rs")])]));
    t.row("src")!.click();
    expect(t.lists()).toEqual([]);
    t.ui.setTree(dir("", [dir("src"), file("new.md")]));
    expect(t.lists()).toEqual([{ path: "src" }]);
    t.ui.children(page("src", [file("src/a.rs")]));
    t.ui.update({ action: "add", path: "src/b.rs" });
    expect(t.row("src/b.rs")).not.toBeNull();
  });

  it("a root the core could not list is asked for, and its error shown with a retry", () => {
    const t = explorer(dir(""));
    expect(t.lists()).toEqual([{ path: "" }]);
    t.ui.listFailed({ path: "", error: "cannot list \"the project folder\": Permission denied" });
    expect(t.$("tree-error")).not.toBeNull();
    t.$("tree-retry")!.click();
    expect(t.lists()).toEqual([{ path: "" }, { path: "" }]);
  });
});

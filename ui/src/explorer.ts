// The explorer: the project tree from `fs:tree`, kept live by `fs:tree_update`, with the
// coach's hint glows (`explorer:hint_files`).
import type { HintStyle, ServerPayloads, TreeNode } from "./protocol";
import type { Transport } from "./transport";
import { applyTreeUpdate, foldersHolding } from "./tree";

export class Explorer {
  private root: TreeNode | null = null;
  private expanded = new Set<string>();
  private hints = new Map<string, HintStyle>();

  constructor(
    private readonly host: HTMLElement,
    private readonly transport: Transport,
    private readonly openFile: (path: string) => void,
  ) {
    this.render();
  }

  setTree(root: TreeNode): void {
    this.root = root;
    this.render();
  }

  update(change: ServerPayloads["fs:tree_update"]): void {
    if (!this.root) return;
    applyTreeUpdate(this.root, change);
    this.render();
  }

  setHints(msg: ServerPayloads["explorer:hint_files"]): void {
    for (const hint of msg.hints) {
      this.hints.set(hint.path, hint.style);
      for (const dir of hint.directories ?? []) {
        this.hints.set(dir, hint.style);
        this.expanded.add(dir);
      }
    }
    this.render();
  }

  clearHints(): void {
    this.hints.clear();
    this.render();
  }

  private toggle(node: TreeNode): void {
    if (this.expanded.has(node.path)) {
      this.expanded.delete(node.path);
      this.transport.send("explorer:collapse_dir", { path: node.path });
    } else {
      this.expanded.add(node.path);
      this.transport.send("explorer:expand_dir", { path: node.path });
    }
    this.render();
  }

  private render(): void {
    if (!this.root) {
      this.host.replaceChildren(Object.assign(document.createElement("div"), { className: "muted", textContent: "Loading project…" }));
      return;
    }
    const list = document.createElement("ul");
    list.className = "tree";
    const holding = foldersHolding(this.hints.keys());
    for (const child of this.root.children ?? []) list.append(this.renderNode(child, 0, holding));
    this.host.replaceChildren(list);
  }

  /** `holding`: the folders with a hinted file inside. */
  private renderNode(node: TreeNode, depth: number, holding: Set<string>): HTMLElement {
    const item = document.createElement("li");
    const row = document.createElement("div");
    row.className = `tree-row ${node.type}`;
    row.dataset.path = node.path;
    row.dataset.testid = "tree-item";
    row.style.paddingLeft = `${8 + depth * 14}px`;
    const hint = this.hints.get(node.path);
    if (hint) row.classList.add("hint-glow", `hint-${hint}`);
    const open = this.expanded.has(node.path);
    // A collapsed folder shows that it holds a hinted file (its hint would be hidden).
    if (node.type === "directory" && !open && holding.has(node.path)) {
      row.classList.add("hint-inside");
      row.dataset.hintInside = "true";
      row.title = "Holds a file the coach points to";
    }
    const icon = node.type === "directory" ? (open ? "▾" : "▸") : "·";
    row.append(
      Object.assign(document.createElement("span"), { className: "tree-icon", textContent: icon }),
      Object.assign(document.createElement("span"), { className: "tree-name", textContent: node.name }),
    );
    row.addEventListener("click", () => (node.type === "directory" ? this.toggle(node) : this.openFile(node.path)));
    item.append(row);
    if (node.type === "directory" && open) {
      const list = document.createElement("ul");
      for (const child of node.children ?? []) list.append(this.renderNode(child, depth + 1, holding));
      item.append(list);
    }
    return item;
  }
}

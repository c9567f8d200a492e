// The explorer: the project tree from `fs:tree`, a folder listed as it is opened (`fs:list`
// → `fs:children`, a page at a time), kept live by `fs:tree_update`, with the coach's hint
// glows (`explorer:hint_files`).
import type { DirPage, HintStyle, PathError, ServerPayloads, TreeNode } from "./protocol";
import type { Transport } from "./transport";
import { applyPage, applyTreeUpdate, foldersHolding } from "./tree";

export class Explorer {
  private root: TreeNode | null = null;
  private expanded = new Set<string>();
  private hints = new Map<string, HintStyle>();
  /** Folders with an `fs:list` on its way. */
  private loading = new Set<string>();
  /** Folders whose last `fs:list` failed, with why (shown where they are, with a retry). */
  private failed = new Map<string, string>();
  /** Folders with more entries than the core lists. */
  private capped = new Set<string>();

  constructor(
    private readonly host: HTMLElement,
    private readonly transport: Transport,
    private readonly openFile: (path: string) => void,
  ) {
    this.render();
  }

  /** A new tree (a connection, a session started): the open folders are listed again. */
  setTree(root: TreeNode): void {
    this.root = root;
    this.loading.clear();
    this.failed.clear();
    this.capped.clear();
    this.listOpenFolders();
    this.render();
  }

  update(change: ServerPayloads["fs:tree_update"]): void {
    if (!this.root) return;
    applyTreeUpdate(this.root, change);
    this.listOpenFolders();
    this.render();
  }

  /** One page of a folder's entries (`fs:children`). */
  children(page: DirPage): void {
    this.loading.delete(page.path);
    this.failed.delete(page.path);
    if (!this.root || !applyPage(this.root, page)) return;
    if (page.capped) this.capped.add(page.path);
    else this.capped.delete(page.path);
    this.listOpenFolders();
    this.render();
  }

  /** `fs:list_error`: shown in the folder that could not be listed. */
  listFailed(error: PathError): void {
    this.loading.delete(error.path);
    this.failed.set(error.path, error.error);
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
    this.listOpenFolders();
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
      this.listOpenFolders();
    }
    this.render();
  }

  /** Asks for every open folder on screen that is not listed yet: the root, a folder opened,
   * each folder on the way to a hinted one in turn as the one above it arrives. */
  private listOpenFolders(): void {
    const visit = (node: TreeNode): void => {
      if (node.type !== "directory" || (node !== this.root && !this.expanded.has(node.path))) return;
      if (!node.children) return this.list(node.path, 0);
      node.children.forEach(visit);
    };
    if (this.root) visit(this.root);
  }

  private list(path: string, offset: number): void {
    if (this.loading.has(path) || this.failed.has(path)) return;
    this.loading.add(path);
    this.transport.send("fs:list", offset > 0 ? { path, offset } : { path });
  }

  /** Lists `node` again after a failure: from the start, or the page that failed. */
  private retry(node: TreeNode): void {
    this.failed.delete(node.path);
    this.list(node.path, node.children?.length ?? 0);
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
    for (const row of this.folderRows(this.root, 0, holding)) list.append(row);
    this.host.replaceChildren(list);
  }

  /** An open folder's rows: its entries, or why they are not there yet, then what is left. */
  private folderRows(node: TreeNode, depth: number, holding: Set<string>): HTMLElement[] {
    const error = this.failed.get(node.path);
    if (!node.children) return [error !== undefined ? this.errorRow(node, depth, error) : this.noteRow("tree-loading", "loading…", depth)];
    const rows = node.children.map((child) => this.renderNode(child, depth, holding));
    if (error !== undefined) rows.push(this.errorRow(node, depth, error));
    else if (node.nextOffset !== undefined) rows.push(this.moreRow(node, depth));
    else if (this.capped.has(node.path)) rows.push(this.noteRow("tree-capped", "more entries not shown (the folder has over 100,000)", depth));
    return rows;
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
      list.append(...this.folderRows(node, depth + 1, holding));
      item.append(list);
    }
    return item;
  }

  private noteRow(testid: string, text: string, depth: number): HTMLElement {
    const item = document.createElement("li");
    const row = Object.assign(document.createElement("div"), { className: "tree-row tree-note muted", textContent: text });
    row.dataset.testid = testid;
    row.style.paddingLeft = `${22 + depth * 14}px`;
    item.append(row);
    return item;
  }

  private errorRow(node: TreeNode, depth: number, error: string): HTMLElement {
    const item = this.noteRow("tree-error", "", depth);
    const row = item.firstElementChild as HTMLElement;
    row.dataset.path = node.path;
    row.title = error;
    const retry = Object.assign(document.createElement("button"), { type: "button", textContent: "Retry" });
    retry.dataset.testid = "tree-retry";
    retry.addEventListener("click", () => this.retry(node));
    row.append(Object.assign(document.createElement("span"), { textContent: `Cannot list this folder: ${error}` }), retry);
    return item;
  }

  /** "Show more": the folder's next page, asked when clicked. */
  private moreRow(node: TreeNode, depth: number): HTMLElement {
    const loading = this.loading.has(node.path);
    const item = this.noteRow("tree-more", loading ? "loading…" : "Show more…", depth);
    const row = item.firstElementChild as HTMLElement;
    row.dataset.path = node.path;
    row.addEventListener("click", () => {
      this.list(node.path, node.children?.length ?? 0);
      this.render();
    });
    return item;
  }
}

// The desktop app's welcome and settings screen: open a project (native folder dialog or a
// recent one), the Anthropic API key, and the other MCP tools coach mode allows. Full screen on first run; an overlay from the
// workspace's top bar later. Opening a project replaces the open one, so the page reloads.
import { type AppState, type RecentEntry, call, errorText } from "./shell";

export interface PanelOptions {
  mode: "welcome" | "overlay";
  /** A project was opened: the workspace must (re)load. */
  onOpened: () => void;
  /** The overlay's close button. */
  onClose?: () => void;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = "", text = ""): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  return node;
}

// Made on first use: creating it loads ICU's data and i18n code (~4 MB PSS in the web process)
// that the workspace, importing this module for its overlay, would otherwise pay for at idle.
let relative: Intl.RelativeTimeFormat | undefined;

/** "5 minutes ago", "yesterday", "3 weeks ago". */
export function openedAgo(iso: string, now: number = Date.now()): string {
  const seconds = (Date.parse(iso) - now) / 1000;
  if (!Number.isFinite(seconds)) return "";
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ["second", 60],
    ["minute", 60],
    ["hour", 24],
    ["day", 7],
    ["week", 4.35],
    ["month", 12],
    ["year", Number.POSITIVE_INFINITY],
  ];
  let value = seconds;
  for (const [unit, size] of steps) {
    if (Math.abs(value) < size) {
      relative ??= new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
      return relative.format(Math.round(value), unit);
    }
    value /= size;
  }
  return "";
}

/** What the key section says about the key in use. */
export function keyStatus(state: AppState): string {
  const key = state.apiKey;
  switch (key.source) {
    case "environment":
      return `Using ANTHROPIC_API_KEY from the environment (…${key.lastFour ?? ""}); it takes precedence over a saved key.`;
    case "settings":
      return `A saved key ending in …${key.lastFour ?? ""} is in use.`;
    case "none":
      return "No key yet. Paige works without one; coaching that needs Claude stays off until you add it.";
  }
}

/** The MCP tools typed in the settings screen: one per line (or comma-separated), trimmed. */
export function parseToolList(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((tool) => tool.trim())
    .filter((tool) => tool.length > 0);
}

export class ProjectsPanel {
  private readonly root = el("section", "welcome");
  private readonly notice = el("p", "notice");
  private readonly recent = el("ul", "recent");
  private readonly keyState = el("p", "key-status");
  private readonly keyInput = el("input");
  private readonly removeKey = el("button", "secondary", "Remove saved key");
  private readonly keyPlace = el("p", "fine");
  private readonly mcpTools = el("textarea");
  private busy = false;

  constructor(
    host: HTMLElement,
    private readonly options: PanelOptions,
  ) {
    this.root.dataset.testid = "welcome";
    this.root.classList.toggle("overlay", options.mode === "overlay");
    const card = el("div", "welcome-card");
    const head = el("header", "welcome-head");
    head.append(el("h1", "", options.mode === "welcome" ? "Welcome to Paige" : "Projects and settings"));
    if (options.onClose) {
      const close = el("button", "close", "×");
      close.title = "Close";
      close.setAttribute("aria-label", "Close");
      close.addEventListener("click", () => options.onClose?.());
      head.append(close);
    }
    this.notice.setAttribute("role", "alert");
    this.notice.dataset.testid = "notice";

    const projects = el("div", "welcome-section");
    const choose = el("button", "primary", "Open folder…");
    choose.dataset.testid = "choose-project";
    choose.addEventListener("click", () => void this.choose());
    this.recent.dataset.testid = "recent-projects";
    projects.append(el("h2", "", "Open a project"), choose, this.recent);

    const settings = el("div", "welcome-section");
    const form = el("form", "key-form");
    form.dataset.testid = "key-form";
    this.keyInput.type = "password";
    this.keyInput.autocomplete = "off";
    this.keyInput.placeholder = "sk-ant-…";
    this.keyInput.setAttribute("aria-label", "Anthropic API key");
    const save = el("button", "primary", "Save key");
    save.type = "submit";
    this.removeKey.type = "button";
    form.append(this.keyInput, save, this.removeKey);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const key = this.keyInput.value.trim();
      if (key) void this.saveKey(key);
      else this.showNotice("Paste a key first, or use “Remove saved key”.");
    });
    this.removeKey.addEventListener("click", () => void this.saveKey(""));
    this.keyState.dataset.testid = "key-status";
    settings.append(el("h2", "", "Anthropic API key"), this.keyState, form, this.keyPlace);

    const coach = el("div", "welcome-section");
    const toolsForm = el("form", "tools-form");
    toolsForm.dataset.testid = "mcp-tools-form";
    this.mcpTools.rows = 3;
    this.mcpTools.placeholder = "mcp__server__tool or mcp__server__*, one per line";
    this.mcpTools.setAttribute("aria-label", "Other MCP tools coach mode allows");
    this.mcpTools.dataset.testid = "mcp-tools";
    const saveTools = el("button", "primary", "Save tools");
    saveTools.type = "submit";
    toolsForm.append(this.mcpTools, saveTools);
    toolsForm.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.update(() => call("save_allowed_mcp_tools", { tools: parseToolList(this.mcpTools.value) }));
    });
    coach.append(
      el("h2", "", "Other MCP tools in coach mode"),
      el(
        "p",
        "fine",
        "Claude Code may call these tools of other MCP servers while coaching; all others are refused. " +
          "Whatever they change in your files is still undone.",
      ),
      toolsForm,
    );

    card.append(head, this.notice, projects, settings, coach);
    this.root.append(card);
    if (options.onClose) {
      // Escape or a click beside the card closes the overlay, as dialogs do.
      const close = options.onClose;
      this.root.tabIndex = -1;
      this.root.addEventListener("keydown", (ev) => {
        if (ev.key === "Escape") close();
      });
      this.root.addEventListener("click", (ev) => {
        if (ev.target === this.root) close();
      });
    }
    if (options.mode === "welcome") host.replaceChildren(this.root);
    else host.append(this.root);
    if (options.onClose) this.root.focus();
  }

  /** Shows `state`: its notice, the recent projects and the key. */
  render(state: AppState): void {
    this.showNotice(state.notice);
    this.recent.replaceChildren(...state.recentProjects.map((entry) => this.recentRow(entry, state)));
    if (state.recentProjects.length === 0) this.recent.append(el("li", "muted", "No recent projects yet."));
    this.keyState.textContent = keyStatus(state);
    this.removeKey.hidden = state.apiKey.source !== "settings";
    this.keyPlace.textContent = `Saved in ${state.settingsPath}, readable only by you.`;
    this.mcpTools.value = state.allowedMcpTools.join("\n");
  }

  remove(): void {
    this.root.remove();
  }

  private recentRow(entry: RecentEntry, state: AppState): HTMLLIElement {
    const row = el("li", "recent-row");
    const open = el("button", "recent-open");
    open.append(el("strong", "", entry.name), el("small", "", entry.path));
    open.title = entry.path;
    const current = state.project?.path === entry.path;
    if (!entry.available) {
      open.disabled = true;
      row.classList.add("unavailable");
      open.append(el("small", "missing", "folder not found"));
    } else if (current) {
      open.disabled = true;
      open.append(el("small", "current", "open now"));
    }
    open.addEventListener("click", () => void this.run(() => call("open_project", { path: entry.path })));
    const when = el("span", "when", openedAgo(entry.openedAt));
    const forget = el("button", "forget", "×");
    forget.title = `Remove ${entry.name} from this list`;
    forget.setAttribute("aria-label", forget.title);
    forget.addEventListener("click", () => void this.update(() => call("forget_project", { path: entry.path })));
    row.append(open, when, forget);
    return row;
  }

  private async choose(): Promise<void> {
    await this.run(() => call("choose_project", {}));
  }

  private async saveKey(key: string): Promise<void> {
    await this.update(() => call("save_api_key", { key }));
    this.keyInput.value = "";
  }

  /** Opens a project; on success the workspace loads. */
  private async run(open: () => Promise<AppState | null>): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.root.classList.add("busy");
    try {
      const state = await open();
      if (state?.project) this.options.onOpened();
    } catch (err) {
      this.showNotice(`Could not open the project: ${errorText(err)}`);
    } finally {
      this.busy = false;
      this.root.classList.remove("busy");
    }
  }

  /** Changes a setting and shows the new state. */
  private async update(change: () => Promise<AppState>): Promise<void> {
    try {
      this.render(await change());
    } catch (err) {
      this.showNotice(errorText(err));
    }
  }

  private showNotice(text: string | null): void {
    this.notice.textContent = text ?? "";
    this.notice.hidden = !text;
  }
}

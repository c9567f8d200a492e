// Tabs over one Monaco editor: a model per open file, dirty markers, debounced
// `buffer:update`, save with Ctrl/Cmd+S, "Explain this" on a selection, and the coach's
// decorations, line highlights and hover hints.
import { explainRequest } from "./explain";
import { monaco } from "./monaco";
import type { EditorRange, FileContent, HintStyle, ServerPayloads, UserExplain } from "./protocol";
import type { Transport } from "./transport";

export const BUFFER_DEBOUNCE_MS = 300;

interface Tab {
  path: string;
  /** The core's language id for the file (what `user:explain` names). */
  language: string;
  model: monaco.editor.ITextModel;
  savedVersion: number;
  /** The version a pending save sent; becomes `savedVersion` on `fs:save_ack`. */
  savingVersion: number | null;
  element: HTMLElement;
  decorations: monaco.editor.IEditorDecorationsCollection | null;
  pending: { deco: monaco.editor.IModelDeltaDecoration[]; lines: monaco.editor.IModelDeltaDecoration[]; hovers: monaco.editor.IModelDeltaDecoration[] };
  timer: ReturnType<typeof setTimeout> | null;
}

export class EditorArea {
  private editor: monaco.editor.IStandaloneCodeEditor;
  private tabs = new Map<string, Tab>();
  private active: Tab | null = null;
  /** Highlights for files not open yet, applied when they open. */
  private waiting = new Map<string, monaco.editor.IModelDeltaDecoration[]>();
  onEmptyChange: (empty: boolean) => void = () => {};
  /** "Explain this" on a selection (the request is the panel's to send). */
  onExplain: (request: UserExplain) => void = () => {};

  constructor(
    private readonly transport: Transport,
    private readonly tabBar: HTMLElement,
    host: HTMLElement,
  ) {
    this.editor = monaco.editor.create(host, {
      model: null,
      automaticLayout: true,
      theme: "vs-dark",
      fontSize: 14,
      minimap: { enabled: false },
      glyphMargin: true,
    });
    this.editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyS, () => this.save());
    this.editor.addAction({
      id: "paige.explain",
      label: "Explain this",
      keybindings: [monaco.KeyMod.CtrlCmd | monaco.KeyMod.Shift | monaco.KeyCode.KeyE],
      precondition: "editorHasSelection",
      contextMenuGroupId: "navigation",
      contextMenuOrder: 0,
      run: () => this.explainSelection(),
    });
    this.editor.onDidChangeCursorSelection((e) => {
      const tab = this.active;
      if (!tab || e.selection.isEmpty()) return;
      this.transport.send("editor:selection", {
        path: tab.path,
        range: toRange(e.selection),
        textLength: tab.model.getValueInRange(e.selection).length,
      });
    });
  }

  /** Opens `path` (asks the core for it unless a tab has it already). */
  open(path: string): void {
    const tab = this.tabs.get(path);
    if (tab) this.activate(tab);
    else this.transport.send("file:open", { path });
  }

  /** Asks to explain the active tab's selection; nothing without a non-empty one. */
  explainSelection(): void {
    const tab = this.active;
    const selection = this.editor.getSelection();
    if (!tab || !selection || selection.isEmpty()) return;
    const request = explainRequest(tab.path, tab.language, tab.model.getLinesContent(), {
      startLine: selection.startLineNumber,
      startCol: selection.startColumn,
      endLine: selection.endLineNumber,
      endCol: selection.endColumn,
    });
    // Monaco's own text for the selection (its end-of-line sequence, not ours).
    this.onExplain({ ...request, selectedText: tab.model.getValueInRange(selection) });
  }

  openedPaths(): string[] {
    return [...this.tabs.keys()];
  }

  activePath(): string | null {
    return this.active?.path ?? null;
  }

  isDirty(path: string): boolean {
    const tab = this.tabs.get(path);
    return !!tab && tab.model.getAlternativeVersionId() !== tab.savedVersion;
  }

  /** The core sent a file's content (`fs:content`, `editor:open_file`). */
  showFile(file: FileContent): void {
    if (file.binary) return;
    let tab = this.tabs.get(file.path);
    if (!tab) {
      tab = this.createTab(file);
    } else if (!this.isDirty(file.path) && tab.model.getValue() !== file.content) {
      tab.model.setValue(file.content);
      tab.savedVersion = tab.model.getAlternativeVersionId();
    }
    this.activate(tab);
  }

  save(path = this.active?.path): void {
    const tab = path ? this.tabs.get(path) : undefined;
    if (!tab) return;
    this.flushBuffer(tab);
    tab.savingVersion = tab.model.getAlternativeVersionId();
    this.transport.send("file:save", { path: tab.path, content: tab.model.getValue() });
  }

  saveAcknowledged(ack: ServerPayloads["fs:save_ack"]): void {
    const tab = this.tabs.get(ack.path);
    if (!tab || !ack.success) return;
    if (tab.savingVersion !== null) tab.savedVersion = tab.savingVersion;
    tab.savingVersion = null;
    this.renderTab(tab);
  }

  close(path: string): void {
    const tab = this.tabs.get(path);
    if (!tab) return;
    this.flushBuffer(tab);
    this.tabs.delete(path);
    tab.element.remove();
    tab.model.dispose();
    this.transport.send("file:close", { path });
    if (this.active === tab) {
      this.active = null;
      const next = [...this.tabs.values()].pop();
      if (next) this.activate(next);
      else this.editor.setModel(null);
    }
    this.onEmptyChange(this.tabs.size === 0);
  }

  /** The file left the disk (deleted, or renamed away). The tab stays open — a save by
   * temp file and rename looks the same for a moment — and is marked until it is back. */
  fileGone(path: string, gone: boolean): void {
    const tab = this.tabs.get(path);
    if (!tab) return;
    tab.element.classList.toggle("gone", gone);
    tab.element.title = gone ? `${path} (not on disk)` : path;
  }

  setDecorations(msg: ServerPayloads["editor:decorations"]): void {
    this.withTab(msg.path, (tab) => {
      tab.pending.deco = msg.decorations.map((d) => ({
        range: toMonacoRange(d.range),
        options: {
          className: `paige-deco paige-deco-${d.style}`,
          hoverMessage: d.hoverText ? { value: d.hoverText } : undefined,
          overviewRuler: { color: styleColor(d.style), position: monaco.editor.OverviewRulerLane.Right },
        },
      }));
    });
  }

  clearDecorations(path?: string): void {
    this.forTabs(path, (tab) => (tab.pending.deco = []));
  }

  highlightLines(msg: ServerPayloads["editor:highlight_lines"]): void {
    const decoration = lineHighlight(msg.start, msg.end, msg.style, msg.hoverText);
    const tab = this.tabs.get(msg.path);
    if (!tab) {
      this.waiting.set(msg.path, [...(this.waiting.get(msg.path) ?? []), decoration]);
      return;
    }
    tab.pending.lines.push(decoration);
    this.applyDecorations(tab);
    if (tab === this.active) this.editor.revealLineInCenterIfOutsideViewport(msg.start);
  }

  clearHighlights(path?: string): void {
    if (path) this.waiting.delete(path);
    else this.waiting.clear();
    this.forTabs(path, (tab) => (tab.pending.lines = []));
  }

  hoverHint(msg: ServerPayloads["editor:hover_hint"]): void {
    this.withTab(msg.path, (tab) => {
      tab.pending.hovers.push({
        range: toMonacoRange(msg.range),
        options: { className: "paige-hover-hint", hoverMessage: { value: msg.hintText } },
      });
    });
  }

  /** Number of Paige decorations in the open file (for tests and the status bar). */
  decorationCount(path: string): number {
    const tab = this.tabs.get(path);
    return tab ? tab.pending.deco.length + tab.pending.lines.length + tab.pending.hovers.length : 0;
  }

  private withTab(path: string, change: (tab: Tab) => void): void {
    const tab = this.tabs.get(path);
    if (!tab) return;
    change(tab);
    this.applyDecorations(tab);
  }

  private forTabs(path: string | undefined, change: (tab: Tab) => void): void {
    for (const tab of this.tabs.values()) {
      if (path && tab.path !== path) continue;
      change(tab);
      this.applyDecorations(tab);
    }
  }

  private applyDecorations(tab: Tab): void {
    if (tab !== this.active) return;
    const all = [...tab.pending.deco, ...tab.pending.lines, ...tab.pending.hovers];
    if (!tab.decorations) tab.decorations = this.editor.createDecorationsCollection(all);
    else tab.decorations.set(all);
  }

  private createTab(file: FileContent): Tab {
    const uri = monaco.Uri.file(`/project/${file.path}`);
    monaco.editor.getModel(uri)?.dispose();
    const model = monaco.editor.createModel(file.content, monacoLanguage(file.language, file.path), uri);
    const element = document.createElement("div");
    element.className = "tab";
    element.dataset.path = file.path;
    element.title = file.path;
    const tab: Tab = {
      path: file.path,
      language: file.language,
      model,
      savedVersion: model.getAlternativeVersionId(),
      savingVersion: null,
      element,
      decorations: null,
      pending: { deco: [], lines: this.waiting.get(file.path) ?? [], hovers: [] },
      timer: null,
    };
    this.waiting.delete(file.path);
    element.addEventListener("click", (e) => {
      if ((e.target as HTMLElement).classList.contains("tab-close")) this.close(file.path);
      else this.activate(tab);
    });
    model.onDidChangeContent(() => {
      this.renderTab(tab);
      if (tab.timer) clearTimeout(tab.timer);
      tab.timer = setTimeout(() => this.flushBuffer(tab), BUFFER_DEBOUNCE_MS);
    });
    this.tabs.set(file.path, tab);
    this.tabBar.append(element);
    this.renderTab(tab);
    this.onEmptyChange(false);
    return tab;
  }

  private flushBuffer(tab: Tab): void {
    if (!tab.timer) return;
    clearTimeout(tab.timer);
    tab.timer = null;
    const position = tab === this.active ? this.editor.getPosition() : null;
    const selections = tab === this.active ? (this.editor.getSelections() ?? []) : [];
    this.transport.send("buffer:update", {
      path: tab.path,
      content: tab.model.getValue(),
      cursorPosition: { line: position?.lineNumber ?? 1, column: position?.column ?? 1 },
      selections: selections.filter((s) => !s.isEmpty()).map(toRange),
    });
  }

  private activate(tab: Tab): void {
    if (this.active === tab) return;
    const from = this.active;
    if (from) from.decorations?.clear();
    if (from) from.decorations = null;
    this.active = tab;
    this.editor.setModel(tab.model);
    this.applyDecorations(tab);
    for (const t of this.tabs.values()) t.element.classList.toggle("active", t === tab);
    this.transport.send("editor:tab_switch", { fromPath: from?.path ?? null, toPath: tab.path });
    this.editor.focus();
  }

  private renderTab(tab: Tab): void {
    const dirty = this.isDirty(tab.path);
    tab.element.classList.toggle("dirty", dirty);
    tab.element.dataset.dirty = String(dirty);
    const name = tab.path.split("/").pop() ?? tab.path;
    tab.element.replaceChildren(
      Object.assign(document.createElement("span"), { className: "tab-name", textContent: name }),
      Object.assign(document.createElement("span"), { className: "tab-dirty", textContent: dirty ? "●" : "" }),
      Object.assign(document.createElement("span"), { className: "tab-close", textContent: "×", title: "Close" }),
    );
  }
}

function toRange(s: monaco.Selection): EditorRange {
  return { startLine: s.startLineNumber, startColumn: s.startColumn, endLine: s.endLineNumber, endColumn: s.endColumn };
}

function toMonacoRange(r: EditorRange): monaco.Range {
  return new monaco.Range(r.startLine, r.startColumn, r.endLine, r.endColumn);
}

function lineHighlight(start: number, end: number, style: HintStyle, hoverText?: string): monaco.editor.IModelDeltaDecoration {
  return {
    range: new monaco.Range(start, 1, Math.max(start, end), 1),
    options: {
      isWholeLine: true,
      className: `paige-line paige-line-${style}`,
      glyphMarginClassName: `paige-glyph paige-glyph-${style}`,
      hoverMessage: hoverText ? { value: hoverText } : undefined,
      overviewRuler: { color: styleColor(style), position: monaco.editor.OverviewRulerLane.Full },
    },
  };
}

function styleColor(style: HintStyle): string {
  switch (style) {
    case "critical":
    case "warning":
      return "#e5534b";
    case "important":
      return "#d29922";
    case "focus":
      return "#539bf5";
    default:
      return "#57ab5a";
  }
}

/** The core's language ids are mostly Monaco's; a few differ. */
export function monacoLanguage(language: string, path: string): string {
  const aliases: Record<string, string> = { shell: "shell", bash: "shell", sh: "shell", text: "plaintext", plain: "plaintext", toml: "ini", jsx: "javascript", tsx: "typescript" };
  if (aliases[language]) return aliases[language];
  if (monaco.languages.getLanguages().some((l) => l.id === language)) return language;
  const ext = path.includes(".") ? `.${path.split(".").pop()}` : "";
  return monaco.languages.getLanguages().find((l) => l.extensions?.includes(ext))?.id ?? "plaintext";
}

// The editor area, loaded when first needed: Monaco (editor.ts, monaco.ts — a 3.3 MB
// chunk) is imported when a file is opened or the coach highlights one, or earlier when
// main.ts calls `preload` (the pointer or focus reaches the explorer), not at start. Until
// then no file is open, so every query has its empty answer and every change that only
// touches open files has nothing to do. Measured in the desktop app
// (scripts/measure-desktop.sh, sample project, no file open): WebKitWebProcess RSS
// 234 → 181 MB, first frame ~0.4 s sooner. A file opened without the preload (by the agent)
// waits ~0.4 s more the first time; after a preload it opens as fast as before (~150 ms).
import type { EditorArea } from "./editor";
import type { FileContent, ServerPayloads, UserExplain } from "./protocol";
import type { Transport } from "./transport";

export class LazyEditor {
  private area: EditorArea | null = null;
  /** Changes made while Monaco loads, applied in order once it has. */
  private queue: ((area: EditorArea) => void)[] | null = null;
  onEmptyChange: (empty: boolean) => void = () => {};
  /** "Explain this" on a selection: only ever from a loaded editor. */
  onExplain: (request: UserExplain) => void = () => {};

  constructor(
    private readonly transport: Transport,
    private readonly tabBar: HTMLElement,
    private readonly host: HTMLElement,
  ) {}

  /** Starts loading Monaco (the user is about to need it); harmless when it has. */
  preload(): void {
    if (this.area || this.queue) return;
    this.queue = [];
    import("./editor")
      .then(({ EditorArea }) => {
        const area = new EditorArea(this.transport, this.tabBar, this.host);
        area.onEmptyChange = (empty) => this.onEmptyChange(empty);
        area.onExplain = (request) => this.onExplain(request);
        for (const change of this.queue ?? []) change(area);
        this.queue = null;
        this.area = area;
      })
      .catch((err: unknown) => {
        this.queue = null;
        console.error("cannot load the editor", err);
      });
  }

  /** Runs `change` now, or after Monaco has loaded (loading it). */
  private withArea(change: (area: EditorArea) => void): void {
    if (this.area) return change(this.area);
    this.preload();
    this.queue?.push(change);
  }

  /** Runs `change` if Monaco is there or on its way; without it no file is open, so there
   * is nothing to change. */
  private ifLoaded(change: (area: EditorArea) => void): void {
    if (this.area) change(this.area);
    else this.queue?.push(change);
  }

  open(path: string): void {
    if (this.area || this.queue) return this.withArea((area) => area.open(path));
    // Nothing is open yet: ask for the file and load Monaco while the answer travels.
    this.preload();
    this.transport.send("file:open", { path });
  }

  showFile(file: FileContent): void {
    if (!file.binary) this.withArea((area) => area.showFile(file));
  }

  highlightLines(msg: ServerPayloads["editor:highlight_lines"]): void {
    // Kept for a file that is not open yet, as Monaco decorations: load it.
    this.withArea((area) => area.highlightLines(msg));
  }

  saveAcknowledged(ack: ServerPayloads["fs:save_ack"]): void {
    this.ifLoaded((area) => area.saveAcknowledged(ack));
  }

  fileGone(path: string, gone: boolean): void {
    this.ifLoaded((area) => area.fileGone(path, gone));
  }

  setDecorations(msg: ServerPayloads["editor:decorations"]): void {
    this.ifLoaded((area) => area.setDecorations(msg));
  }

  clearDecorations(path?: string): void {
    this.ifLoaded((area) => area.clearDecorations(path));
  }

  clearHighlights(path?: string): void {
    this.ifLoaded((area) => area.clearHighlights(path));
  }

  hoverHint(msg: ServerPayloads["editor:hover_hint"]): void {
    this.ifLoaded((area) => area.hoverHint(msg));
  }

  openedPaths(): string[] {
    return this.area?.openedPaths() ?? [];
  }

  activePath(): string | null {
    return this.area?.activePath() ?? null;
  }

  isDirty(path: string): boolean {
    return this.area?.isDirty(path) ?? false;
  }

  decorationCount(path: string): number {
    return this.area?.decorationCount(path) ?? 0;
  }
}

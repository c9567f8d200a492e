// "Export learning record" (issue 31): the learner's signed record (JSON Lines, a hash chain
// signed with an Ed25519 key Paige keeps in DATA_DIR), for a mentor, course or employer.
// Nothing leaves the machine unless the learner exports.
//
// In a browser (`paige serve`'s `/ws`) the core sends the record (`record:export` →
// `record:exported`) and the page downloads it as a file. In the desktop app the shell's
// `export_learning_record` command opens the native save dialog and writes the file itself
// (null: the learner cancelled). Either way the learner sees how many lines were saved and the
// public key a mentor can pin with `paige record verify FILE --key …`; a failure shows beside
// the button with a Retry.
import { el, errorMessage } from "./dom";
import { button, progress } from "./learning";
import type { SavedRecord } from "./bindings/shell";
import type { RecordError, RecordExported } from "./protocol";
import { call, errorText, inDesktop } from "./shell";
import type { Transport } from "./transport";

export type { SavedRecord };

/** `export_learning_record` through Tauri: where the record was saved, or null when the save
 * dialog was cancelled. */
export async function exportInDesktop(since: string | null): Promise<SavedRecord | null> {
  return call("export_learning_record", { since });
}

/** Saves `content` as `fileName` through the browser's download (a Blob and a temporary
 * `<a download>`). */
export function download(fileName: string, content: string): void {
  const url = URL.createObjectURL(new Blob([content], { type: "application/x-ndjson" }));
  const link = el("a");
  link.href = url;
  link.download = fileName;
  link.style.display = "none";
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked later: some browsers read the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** `paige record verify FILE --key KEY`: how a mentor checks the file against the pinned key. */
export function verifyCommand(file: string, publicKey: string): string {
  const quoted = /^[\w./@:+-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`;
  return `paige record verify ${quoted} --key ${publicKey}`;
}

type Status =
  | { kind: "idle" }
  | { kind: "exporting" }
  | { kind: "saved"; file: string; lines: number; sessions: number; publicKey: string }
  | { kind: "failed"; error: string };

export interface RecordOptions {
  /** Save through the desktop app's dialog (default: when inside the app). */
  desktop?: boolean;
}

/** The Export button and what came of it; `root` is mounted by the dashboard. */
export class RecordExporter {
  readonly root = el("div", "record-export");
  private status: Status = { kind: "idle" };
  private readonly desktop: boolean;

  constructor(
    private readonly transport: Pick<Transport, "send">,
    options: RecordOptions = {},
  ) {
    this.root.dataset.testid = "record-export";
    this.desktop = options.desktop ?? inDesktop();
    this.render();
  }

  /** Exports: the desktop app's save dialog, or `record:export` for a download. */
  export(): void {
    if (this.status.kind === "exporting") return;
    this.status = { kind: "exporting" };
    this.render();
    if (this.desktop) void this.saveInDesktop();
    else this.transport.send("record:export", {});
  }

  /** `record:exported` (to this UI only): downloaded, if this UI asked for it. */
  exported(msg: RecordExported): void {
    if (this.desktop || this.status.kind !== "exporting") return;
    try {
      download(msg.fileName, msg.content);
    } catch (err) {
      this.failed({ error: `The browser did not save the file.\n${errorText(err)}` });
      return;
    }
    this.status = { kind: "saved", file: msg.fileName, lines: msg.lines, sessions: msg.sessions, publicKey: msg.publicKey };
    this.render();
  }

  /** `record:error`, or a `connection:error` for `record:export`: shown beside the button;
   * false when no export was asked for. */
  failed(msg: RecordError): boolean {
    if (this.status.kind !== "exporting") return false;
    this.status = { kind: "failed", error: msg.error };
    this.render();
    return true;
  }

  private async saveInDesktop(): Promise<void> {
    try {
      const saved = await exportInDesktop(null);
      this.status = saved ? { kind: "saved", file: saved.path, lines: saved.lines, sessions: saved.sessions, publicKey: saved.publicKey } : { kind: "idle" };
    } catch (err) {
      this.status = { kind: "failed", error: errorText(err) };
    }
    this.render();
  }

  private render(): void {
    const status = this.status;
    const exporting = status.kind === "exporting";
    const go = button("Export learning record", "record-export-button", () => this.export());
    go.disabled = exporting;
    go.title = this.desktop
      ? "Save your signed learning record (sessions, checks, katas, reviews) to a file"
      : "Download your signed learning record (sessions, checks, katas, reviews)";
    const parts: HTMLElement[] = [go];
    if (exporting) parts.push(progress(this.desktop ? "Choose where to save it…" : "Exporting…", "record-exporting"));
    else if (status.kind === "failed") {
      const box = el("div", "panel-error record-error");
      box.dataset.testid = "record-error";
      box.setAttribute("role", "alert");
      box.append(...errorMessage(status.error, "Could not export the learning record: "), button("Retry", "record-retry", () => this.export()));
      parts.push(box);
    } else if (status.kind === "saved") parts.push(this.saved(status));
    this.root.replaceChildren(...parts);
  }

  private saved(saved: Extract<Status, { kind: "saved" }>): HTMLElement {
    const box = el("div", "record-saved");
    box.dataset.testid = "record-saved";
    box.setAttribute("role", "status");
    const sessions = `${saved.sessions} session${saved.sessions === 1 ? "" : "s"}`;
    const line = el("p", "", `Saved ${saved.lines} line${saved.lines === 1 ? "" : "s"} (${sessions}) ${this.desktop ? "to" : "as"} ${saved.file}.`);
    line.dataset.testid = "record-summary";
    const key = el("p", "", "Public key: ");
    const code = el("code", "record-key", saved.publicKey);
    code.dataset.testid = "record-key";
    key.append(code);
    const pin = el("p", "dash-quiet", "A mentor can pin it: ");
    const command = el("code", "record-verify", verifyCommand(saved.file, saved.publicKey));
    command.dataset.testid = "record-verify";
    pin.append(command);
    box.append(line, key, pin);
    return box;
  }
}

// Explain This: the learner selects code in the editor and asks "Explain this" (context menu
// or Ctrl/Cmd+Shift+E); Paige — its own model call, not Claude Code — answers in a read-only
// drawer: the explanation, key concepts, an analogy, how it bears on the phase, related files.
//
// Several requests may be in flight and answers carry only the path, so the drawer shows the
// latest request's answer: an answer for another path is stale and ignored, and while N
// requests for the same path are in flight the first N-1 answers for it are taken as the
// older ones' (the core answers in order unless the model's latencies cross). Closing the
// drawer forgets what was pending; another UI's answers are ignored unless this one waits
// for the same path.
import { el, errorMessage } from "./dom";
import { Drawer } from "./drawer";
import type { ExplainResponse, PathError, TextSelection, UserExplain } from "./protocol";
import type { Transport } from "./transport";

/** Lines of context sent either side of the selection. */
export const CONTEXT_LINES = 50;

/** The `user:explain` request for `selection` (1-based, end column exclusive, as Monaco
 * gives it) in a file whose lines are `lines`: the selected text and the lines around it,
 * at most `CONTEXT_LINES` either side, clamped at the file's edges. */
export function explainRequest(path: string, language: string, lines: readonly string[], selection: TextSelection): UserExplain {
  const last = Math.max(1, lines.length);
  const clamp = (line: number) => Math.min(Math.max(line, 1), last);
  const startLine = clamp(selection.startLine);
  const endLine = clamp(selection.endLine);
  const line = (n: number) => lines[n - 1] ?? "";
  let selectedText: string;
  if (startLine === endLine) {
    selectedText = line(startLine).slice(selection.startCol - 1, selection.endCol - 1);
  } else {
    const middle = lines.slice(startLine, endLine - 1);
    selectedText = [line(startLine).slice(selection.startCol - 1), ...middle, line(endLine).slice(0, selection.endCol - 1)].join("\n");
  }
  const from = clamp(startLine - CONTEXT_LINES);
  const to = clamp(endLine + CONTEXT_LINES);
  return {
    path,
    language,
    selection: { startLine, startCol: selection.startCol, endLine, endCol: selection.endCol },
    selectedText,
    surroundingContext: lines.slice(from - 1, to).join("\n"),
  };
}

type View =
  | { kind: "waiting" }
  | { kind: "answer"; answer: ExplainResponse }
  | { kind: "failed"; error: string };

/** The Explain This drawer: progress, then the answer or the error with a Retry. */
export class ExplainPanel {
  private readonly drawer: Drawer;
  /** The latest request and how many requests for its path are still unanswered. */
  private current: { request: UserExplain; awaiting: number } | null = null;

  constructor(
    host: HTMLElement,
    private readonly transport: Pick<Transport, "send">,
  ) {
    this.drawer = new Drawer(host, "explain", "Explain this");
    this.drawer.onClose = () => (this.current = null);
  }

  get isOpen(): boolean {
    return this.drawer.isOpen;
  }

  /** Sends `request` and shows the progress at once. */
  request(request: UserExplain): void {
    const samePath = this.current !== null && this.current.awaiting > 0 && this.current.request.path === request.path;
    this.current = { request, awaiting: samePath ? this.current!.awaiting + 1 : 1 };
    this.transport.send("user:explain", request);
    this.render({ kind: "waiting" });
  }

  /** `explain:response` (to any UI). */
  response(answer: ExplainResponse): void {
    if (this.answered(answer.path)) this.render({ kind: "answer", answer });
  }

  /** `explain:error` (to any UI, or to this one when the core refused at once). */
  error(msg: PathError): void {
    if (this.answered(msg.path)) this.render({ kind: "failed", error: msg.error });
  }

  close(): void {
    this.drawer.close();
  }

  /** Counts an answer for `path`; true when it is the latest request's. */
  private answered(path: string): boolean {
    const current = this.current;
    if (!current || current.awaiting === 0 || current.request.path !== path) return false;
    current.awaiting -= 1;
    return current.awaiting === 0;
  }

  private render(view: View): void {
    const request = this.current?.request;
    if (!request) return;
    const { startLine, endLine } = request.selection;
    const lines = startLine === endLine ? `line ${startLine}` : `lines ${startLine}–${endLine}`;
    const body = this.drawer.open(`Explain ${request.path}, ${lines}`);
    body.append(el("p", "drawer-note", "Paige explains the code you selected; it does not change it."));
    const quote = el("pre", "worked-example-code explain-selection", request.selectedText);
    quote.dataset.testid = "explain-selection";
    body.append(quote);
    if (view.kind === "waiting") {
      const status = el("p", "explain-status", "Paige is explaining…");
      status.dataset.testid = "explain-status";
      status.setAttribute("role", "status");
      body.append(status);
    } else if (view.kind === "failed") {
      const box = el("div", "panel-error");
      box.dataset.testid = "explain-error";
      box.append(...errorMessage(view.error));
      const retry = el("button", "secondary", "Retry");
      retry.type = "button";
      retry.dataset.testid = "explain-retry";
      retry.addEventListener("click", () => this.request(request));
      box.append(retry);
      body.append(box);
    } else {
      body.append(...this.answer(view.answer));
    }
  }

  private answer(answer: ExplainResponse): HTMLElement[] {
    const parts: HTMLElement[] = [];
    const explanation = el("p", "explain-explanation", answer.explanation);
    explanation.dataset.testid = "explain-explanation";
    parts.push(explanation);
    if (answer.keyConcepts.length) {
      const chips = el("ul", "explain-concepts");
      chips.dataset.testid = "explain-concepts";
      for (const concept of answer.keyConcepts) {
        const chip = el("li", "explain-concept", concept);
        chip.dataset.testid = "explain-concept";
        chips.append(chip);
      }
      parts.push(el("h3", "", "Key concepts"), chips);
    }
    if (answer.analogy) {
      const analogy = el("p", "explain-analogy", answer.analogy);
      analogy.dataset.testid = "explain-analogy";
      parts.push(el("h3", "", "Analogy"), analogy);
    }
    if (answer.phaseConnection) {
      const phase = el("p", "explain-phase", answer.phaseConnection);
      phase.dataset.testid = "explain-phase";
      parts.push(el("h3", "", "Your current phase"), phase);
    }
    if (answer.relatedFiles?.length) {
      const list = el("ul", "explain-related");
      list.dataset.testid = "explain-related";
      for (const path of answer.relatedFiles) {
        const link = el("button", "explain-related-file", path);
        link.type = "button";
        link.title = `Open ${path}`;
        link.dataset.testid = "explain-related-file";
        link.dataset.path = path;
        link.addEventListener("click", () => this.transport.send("file:open", { path }));
        const item = el("li", "");
        item.append(link);
        list.append(item);
      }
      parts.push(el("h3", "", "Related files"), list);
    }
    return parts;
  }
}

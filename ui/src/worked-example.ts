// "Just show me": when the learner is stuck on the phase in progress, Paige (its own model
// call, not Claude Code) makes a worked example — an analogous problem solved step by step —
// shown read-only in a drawer beside the editor. Never the learner's file, never a tab, never
// written anywhere: the code is text in a <pre>.
import type { ServerPayloads } from "./protocol";
import { el, errorMessage } from "./dom";
import { Drawer } from "./drawer";

type State = { kind: "idle" } | { kind: "preparing" } | { kind: "failed"; error: string };

/** The button, its progress and its error, inside the coaching panel. */
export class ShowMe {
  readonly root = el("div", "show-me");
  private state: State = { kind: "idle" };

  constructor(private readonly ask: () => void) {
    this.root.dataset.testid = "show-me-area";
    this.render();
  }

  get isPreparing(): boolean {
    return this.state.kind === "preparing";
  }

  /** The example arrived (for any UI's request): the progress ends. */
  arrived(): void {
    this.state = { kind: "idle" };
    this.render();
  }

  /** `coaching:worked_example_error`: shown here with a retry. */
  failed(error: string): void {
    this.state = { kind: "failed", error };
    this.render();
  }

  /** A new session or phase: nothing pending any more. */
  reset(): void {
    this.state = { kind: "idle" };
    this.render();
  }

  private request(): void {
    this.state = { kind: "preparing" };
    this.render();
    this.ask();
  }

  private render(): void {
    const button = el("button", "secondary show-me-button", "Just show me");
    button.type = "button";
    button.dataset.testid = "show-me";
    button.title = "Paige shows a worked example of a similar problem — not your code";
    button.disabled = this.state.kind === "preparing";
    button.addEventListener("click", () => this.request());
    const parts: HTMLElement[] = [button];
    if (this.state.kind === "preparing") {
      const status = el("p", "show-me-status", "Paige is preparing an example…");
      status.dataset.testid = "show-me-status";
      parts.push(status);
    } else if (this.state.kind === "failed") {
      const box = el("div", "panel-error");
      box.dataset.testid = "show-me-error";
      box.append(...errorMessage(this.state.error));
      const retry = el("button", "secondary", "Retry");
      retry.type = "button";
      retry.dataset.testid = "show-me-retry";
      retry.addEventListener("click", () => this.request());
      box.append(retry);
      parts.push(box);
    }
    this.root.replaceChildren(...parts);
  }
}

/** The read-only drawer over the right part of the layout; closable (× or Escape). */
export class WorkedExampleDrawer {
  private readonly drawer: Drawer;

  constructor(host: HTMLElement) {
    this.drawer = new Drawer(host, "worked-example", "Worked example");
  }

  get isOpen(): boolean {
    return this.drawer.isOpen;
  }

  show(example: ServerPayloads["coaching:worked_example"]): void {
    this.drawer.close(); // reopened on top of any other drawer
    const body = this.drawer.open(example.title);
    const note = el("p", "drawer-note", `A worked example for phase ${example.phase} — a similar problem, not your code. Apply the steps to your own files yourself.`);
    const explanation = el("p", "worked-example-explanation", example.explanation);
    explanation.dataset.testid = "worked-example-explanation";
    const steps = el("ol", "worked-example-steps");
    steps.dataset.testid = "worked-example-steps";
    for (const step of example.steps) steps.append(el("li", "", step));
    const pre = el("pre", "worked-example-code");
    pre.dataset.testid = "worked-example-code";
    pre.dataset.language = example.language;
    const code = el("code", "");
    code.textContent = example.exampleCode;
    pre.append(code);
    body.append(note, explanation);
    if (example.steps.length) body.append(el("h3", "", "Steps"), steps);
    body.append(el("h3", "", `Example (${example.language})`), pre);
  }

  close(): void {
    this.drawer.close();
  }
}

// The coaching side: issue context, phases with status, toasts for coaching messages and
// nudges, the observer's status with a mute toggle, and the empty-state dashboard.
import type { IssueContext, PhaseSummary, ServerPayloads } from "./protocol";
import type { Transport } from "./transport";

const TOAST_MS = 8000;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ""): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

export class CoachingPanel {
  private issue: IssueContext | null = null;
  private phases: PhaseSummary[] = [];

  constructor(private readonly host: HTMLElement) {
    this.render();
  }

  sessionStarted(msg: ServerPayloads["session:started"]): void {
    this.issue = msg.issueContext;
    this.phases = msg.phases;
    this.render();
  }

  sessionEnded(): void {
    this.issue = null;
    this.phases = [];
    this.render();
  }

  issueContext(issue: IssueContext): void {
    this.issue = issue;
    this.render();
  }

  planReady(msg: ServerPayloads["coaching:plan_ready"]): void {
    this.phases = msg.phases;
    this.render();
  }

  phaseUpdate(msg: ServerPayloads["coaching:phase_update"]): void {
    const phase = this.phases.find((p) => p.number === msg.phase);
    if (phase) {
      phase.status = msg.status;
      if (msg.description) phase.description = msg.description;
    }
    this.render();
  }

  private render(): void {
    const issue = el("section", "issue");
    issue.dataset.testid = "issue-context";
    if (this.issue) {
      issue.append(el("h3", "", `#${this.issue.number} ${this.issue.title}`), el("p", "", this.issue.summary));
      const labels = el("div", "labels");
      for (const label of this.issue.labels) labels.append(el("span", "label", label));
      issue.append(labels);
    } else {
      issue.append(el("p", "muted", "No issue selected yet."));
    }
    const phases = el("ol", "phases");
    phases.dataset.testid = "phases";
    for (const phase of this.phases) {
      const item = el("li", `phase phase-${phase.status}`);
      item.append(el("strong", "", phase.title), el("span", "phase-status", phase.status), el("p", "", phase.description));
      phases.append(item);
    }
    this.host.replaceChildren(el("h2", "panel-title", "Coaching"), issue, phases);
  }
}

export class Toasts {
  constructor(private readonly host: HTMLElement) {}

  show(message: string, kind: string): void {
    const toast = el("div", `toast toast-${kind}`, message);
    toast.dataset.testid = "toast";
    toast.addEventListener("click", () => toast.remove());
    this.host.append(toast);
    setTimeout(() => toast.remove(), TOAST_MS);
  }
}

/** Observer status in the top bar; the toggle sends `observer:mute`. */
export class ObserverStatus {
  private status: ServerPayloads["observer:status"] = { active: false, muted: false, lastEvaluation: null };
  private readonly label = el("span", "observer-label");
  private readonly button = el("button", "observer-mute");

  constructor(host: HTMLElement, private readonly transport: Transport) {
    this.button.dataset.testid = "observer-mute";
    this.button.addEventListener("click", () => {
      this.status = { ...this.status, muted: !this.status.muted };
      this.transport.send("observer:mute", { muted: this.status.muted });
      this.render();
    });
    host.append(this.label, this.button);
    this.render();
  }

  update(status: ServerPayloads["observer:status"]): void {
    this.status = status;
    this.render();
  }

  private render(): void {
    const state = this.status.muted ? "muted" : this.status.active ? "watching" : "idle";
    this.label.textContent = `Observer: ${state}`;
    this.label.dataset.state = state;
    this.button.textContent = this.status.muted ? "Unmute" : "Mute";
  }
}

export function dashboard(): HTMLElement {
  const root = el("div", "dashboard");
  root.dataset.testid = "dashboard";
  root.append(
    el("h1", "", "Welcome to Paige"),
    el("p", "", "Open a file from the explorer to start working. Paige watches your editor, files and terminal, and coaches — it never writes your code for you."),
    el("p", "muted", "Your progress, suggested issues and practice katas will appear here."),
  );
  return root;
}

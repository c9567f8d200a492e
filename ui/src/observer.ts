// The Observer in the top bar: its state exactly as the backend reports it
// (`observer:status`, also sent to every UI that connects) and a mute toggle that asks the
// backend (`observer:mute`) and shows the new state only once the backend confirms it.
// Nudges read as sentences (`nudgeText`).
import { el } from "./dom";
import type { ServerPayloads } from "./protocol";
import type { Transport } from "./transport";

type Status = ServerPayloads["observer:status"];

export class ObserverStatus {
  private status: Status = { active: false, muted: false, lastEvaluation: null };
  /** The mute state asked for and not yet confirmed. */
  private pending: boolean | null = null;
  private readonly label = el("span", "observer-label");
  private readonly button = el("button", "observer-mute");

  constructor(host: HTMLElement, private readonly transport: Transport) {
    this.label.dataset.testid = "observer-state";
    this.button.dataset.testid = "observer-mute";
    this.button.addEventListener("click", () => {
      if (!this.status.active || this.pending !== null) return;
      this.pending = !this.status.muted;
      this.transport.send("observer:mute", { muted: this.pending });
      this.render();
    });
    host.append(this.label, this.button);
    this.render();
  }

  update(status: Status): void {
    this.status = status;
    this.pending = null;
    this.render();
  }

  private render(): void {
    const state = !this.status.active ? "idle" : this.status.muted ? "muted" : "watching";
    this.label.textContent = `Observer: ${state}`;
    this.label.dataset.state = state;
    this.label.title = this.status.lastEvaluation ? `Last looked at ${this.status.lastEvaluation}` : "";
    this.button.textContent = this.pending !== null ? "…" : this.status.muted ? "Unmute" : "Mute";
    // Without a session there is no Observer to mute.
    this.button.disabled = !this.status.active || this.pending !== null;
  }
}

/** What the Observer noticed, as a sentence for the learner. */
export function nudgeText(nudge: ServerPayloads["observer:nudge"]): string {
  const c = nudge.context;
  const phase = c.phase_description ? ` (${c.phase_description})` : "";
  switch (nudge.signal) {
    case "wrong_file":
      return c.current_file && c.expected_file
        ? `You are in ${c.current_file}; this phase${phase} is about ${c.expected_file}.`
        : `This phase${phase} is about another file.`;
    case "scope_drift":
      return `These changes drift from the phase${phase}. Worth a look back at what it asks?`;
    case "idle":
      return `Stuck? Ask Claude Code in the terminal, or try "Just show me"${phase ? ` for${phase}` : ""}.`;
    case "phase_complete":
      return `This looks done${phase}. Ready for the next phase?`;
    case "edit_loop":
      return `You have been going back and forth${c.current_file ? ` in ${c.current_file}` : ""}. Step back and describe the problem in one sentence?`;
    default:
      return `Paige noticed something: ${nudge.signal}.`;
  }
}

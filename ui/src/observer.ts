// The Observer in the top bar: its state as the backend reports it (`observer:status`) and a
// mute toggle that sends `observer:mute`.
import { el } from "./dom";
import type { ServerPayloads } from "./protocol";
import type { Transport } from "./transport";

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

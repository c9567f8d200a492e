// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";
import { ObserverStatus, nudgeText } from "../src/observer";
import type { Transport } from "../src/transport";
import { recordingTransport } from "./support";

function setup() {
  const { sent, transport } = recordingTransport();
  const host = document.createElement("span");
  const status = new ObserverStatus(host, transport as unknown as Transport);
  const label = () => host.querySelector<HTMLElement>('[data-testid="observer-state"]')!;
  const button = () => host.querySelector<HTMLButtonElement>('[data-testid="observer-mute"]')!;
  return { sent, status, label, button };
}

describe("the observer's status", () => {
  it("without a session the observer is idle and cannot be muted", () => {
    const ui = setup();
    expect(ui.label().textContent).toBe("Observer: idle");
    expect(ui.button().disabled).toBe(true);
    ui.button().click();
    expect(ui.sent).toEqual([]);
  });

  it("mute asks the backend and shows muted only once the backend says so", () => {
    const ui = setup();
    ui.status.update({ active: true, muted: false, lastEvaluation: null });
    ui.button().click();
    expect(ui.sent).toEqual([{ type: "observer:mute", payload: { muted: true } }]);
    expect(ui.label().textContent).toBe("Observer: watching");
    expect(ui.button().textContent).toBe("…");
    ui.button().click();
    expect(ui.sent).toHaveLength(1);
    ui.status.update({ active: true, muted: true, lastEvaluation: "2026-11-23T09:00:00.000Z" });
    expect(ui.label().textContent).toBe("Observer: muted");
    expect(ui.button().textContent).toBe("Unmute");
  });

  it("a status from the backend wins over what this window last asked for", () => {
    const ui = setup();
    ui.status.update({ active: true, muted: true, lastEvaluation: null });
    expect(ui.label().dataset.state).toBe("muted");
    ui.status.update({ active: false, muted: false, lastEvaluation: null });
    expect(ui.label().dataset.state).toBe("idle");
  });
});

describe("nudges as sentences", () => {
  const context = { current_file: "src/notes.md", expected_file: "src/auth.rs", time_in_file: "3m12s", phase_description: "Find the callback" };

  it("a wrong file names both files and the phase", () => {
    expect(nudgeText({ signal: "wrong_file", confidence: 0.9, context })).toBe(
      "You are in src/notes.md; this phase (Find the callback) is about src/auth.rs.",
    );
  });

  it("each signal reads as advice, and an unknown one still says what it is", () => {
    for (const signal of ["scope_drift", "idle", "phase_complete", "edit_loop"]) {
      const text = nudgeText({ signal, confidence: 0.9, context });
      expect(text).not.toContain(signal);
      expect(text.length).toBeGreaterThan(20);
    }
    expect(nudgeText({ signal: "new_kind", confidence: 0.9, context })).toContain("new_kind");
  });
});

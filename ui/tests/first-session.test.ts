// @vitest-environment happy-dom
// Issue 28: what a first-time learner meets in the coaching panel — Claude Code's progress
// while it plans and "plan again", the plan first with the interview folded, the phase's own
// controls, both endings alike, an issue typed by hand, and the interview's skip, progress,
// hand-over and closed debug panel; the explorer's hinted folders.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CoachingPanel, REPLAN_AFTER_MS, activityLine } from "../src/coaching";
import { Dashboard } from "../src/dashboard";
import { Explorer } from "../src/explorer";
import { DEBUG_SETTING, FOCUS_TERMINAL_EVENT, IntakePanel, gateProgress } from "../src/intake";
import type { IntakeState, PhaseSummary, SessionStarted, TreeNode } from "../src/protocol";
import { parseIssueRef } from "../src/session-start";
import type { Transport } from "../src/transport";
import { foldersHolding } from "../src/tree";
import { byTestId, recordingTransport } from "./support";

const T0 = 1_800_000_000_000;

function setup() {
  const { sent, transport } = recordingTransport();
  const host = document.createElement("aside");
  const layout = document.createElement("main");
  layout.append(host);
  document.body.replaceChildren(layout);
  const clock = { t: T0 };
  const panel = new CoachingPanel(host, transport, layout, () => clock.t);
  const { $, $$ } = byTestId(host);
  return { sent, host, panel, clock, $, $$ };
}

function started(extra: Partial<SessionStarted> = {}): SessionStarted {
  return { sessionId: "s-1", issueContext: null, title: "Retry uploads", phases: [], hintLevel: "none", ...extra };
}

function phase(number: number, status: PhaseSummary["status"]): PhaseSummary {
  return { number, title: `Phase ${number}`, description: `Do step ${number}`, hintLevel: "file", status };
}

function intakeState(extra: Partial<IntakeState> = {}): IntakeState {
  const zero = { adaptability: 0, creativity: 0, reasoning: 0 };
  return {
    sessionId: "s-1",
    phase: "background",
    timeboxMs: 240_000,
    remainingMs: 240_000,
    atMs: T0,
    zeroRuns: 0,
    projectsUsed: 1,
    stopCheck: false,
    weights: zero,
    confidence: zero,
    tau: { adaptability: 0.7, creativity: 0.7, reasoning: 0.7 },
    reasons: [],
    transcript: [{ role: "interviewer", text: "Tell me about a project." }],
    awaitingAnswer: true,
    ...extra,
  };
}

describe("while Claude Code plans", () => {
  afterEach(() => vi.useRealTimers());

  it("the panel says Claude Code is reading the code and lists its tool calls as they arrive", () => {
    const ui = setup();
    ui.panel.sessionStarted(started());
    expect(ui.$("plan-waiting")?.textContent).toContain("Waiting for Claude Code to start on the plan");
    ui.panel.agentActivity({ sessionId: "s-1", tool: "Read", detail: "src/upload.rs" });
    ui.panel.agentActivity({ sessionId: "s-1", tool: "mcp__paige__paige_get_session_state", detail: "" });
    ui.panel.agentActivity({ sessionId: "s-other", tool: "Grep", detail: "retry" });
    expect(ui.$("plan-waiting")?.textContent).toContain("Claude Code is reading the code…");
    expect(ui.$$("agent-call").map((c) => c.textContent)).toEqual(["Read src/upload.rs", "paige_get_session_state"]);
    // Once the plan is there the phases say what happens: no more calls listed.
    ui.panel.planReady({ planId: "p-1", phases: [phase(1, "active")], memoryConnection: null, estimatedDifficulty: "beginner" });
    ui.panel.agentActivity({ sessionId: "s-1", tool: "Read", detail: "src/lib.rs" });
    expect(ui.$("plan-waiting")).toBeNull();
    expect(activityLine({ sessionId: "s", tool: "Bash", detail: "cargo test" })).toBe("Bash cargo test");
  });

  it("offers Ask Claude Code to plan again only after a few minutes without a plan; it sends coaching:replan", () => {
    vi.useFakeTimers();
    const ui = setup();
    ui.panel.sessionStarted(started());
    expect(ui.$("replan")).toBeNull();
    ui.clock.t += REPLAN_AFTER_MS - 1000;
    vi.advanceTimersByTime(REPLAN_AFTER_MS - 1000);
    expect(ui.$("replan")).toBeNull();
    ui.clock.t += 1000;
    vi.advanceTimersByTime(1000 + 100);
    const again = ui.$("replan");
    expect(again?.textContent).toBe("Ask Claude Code to plan again");
    again!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "coaching:replan", payload: {} });
    // Asked again: the wait starts over.
    expect(ui.$("replan")).toBeNull();
  });
});

describe("when the plan cannot become phases", () => {
  it("says why where the plan would be, details folded, and offers to plan again at once", () => {
    const ui = setup();
    ui.panel.sessionStarted(started());
    const message = "Paige could not turn Claude Code's plan into phases: the Anthropic API is overloaded — try again.\n529 overloaded_error";
    ui.panel.planFailed({ sessionId: "s-other", message });
    expect(ui.$("plan-error")).toBeNull();
    ui.panel.planFailed({ sessionId: "s-1", message });
    expect(ui.$("plan-error")?.textContent).toContain("the Anthropic API is overloaded");
    expect(ui.$("plan-error")?.querySelector("details")?.textContent).toContain("529 overloaded_error");
    const again = ui.$("replan");
    expect(again?.textContent).toBe("Ask Claude Code to plan again");
    again!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "coaching:replan", payload: {} });
    expect(ui.$("plan-error")).toBeNull();
    // A plan that comes after all clears it too.
    ui.panel.planFailed({ sessionId: "s-1", message });
    ui.panel.planReady({ planId: "p-1", phases: [phase(1, "active")], memoryConnection: null, estimatedDifficulty: "beginner" });
    expect(ui.$("plan-error")).toBeNull();
  });
});

describe("once the plan arrives", () => {
  let ui: ReturnType<typeof setup>;
  beforeEach(() => {
    ui = setup();
    ui.panel.sessionStarted(started());
    ui.panel.intake.state(intakeState());
    ui.panel.intake.transition({ sessionId: "s-1", reason: "gate", reasons: ["gate"], codingQuestion: "How would you start?" });
    ui.panel.planReady({ planId: "p-1", phases: [phase(1, "active"), phase(2, "pending")], memoryConnection: null, estimatedDifficulty: "beginner" });
  });

  it("the plan comes first and the finished interview folds away below it", () => {
    const order = [...ui.host.querySelectorAll<HTMLElement>('[data-testid="phases"], [data-testid="intake-fold"]')].map((e) => e.dataset.testid);
    expect(order).toEqual(["phases", "intake-fold"]);
    const fold = ui.$<HTMLDetailsElement>("intake-fold")!;
    expect(fold.open).toBe(false);
    expect(fold.querySelector('[data-testid="intake"]')).not.toBeNull();
  });

  it("the hint-level buttons and Mark phase done sit in the current phase; Mark done sends coaching:phase_done", () => {
    const current = ui.host.querySelector<HTMLElement>('[data-testid="phase"][data-current="true"]')!;
    expect(current.dataset.number).toBe("1");
    expect(current.querySelector('[data-testid="hint-levels"]')).not.toBeNull();
    expect(ui.$$("hint-levels")).toHaveLength(1);
    current.querySelector<HTMLElement>('[data-testid="phase-done"]')!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "coaching:phase_done", payload: { phase: 1 } });
  });

  it("a wrap-up Claude Code started looks as the End button's does, then the wrap-up's summary", () => {
    ui.panel.wrappingUp({ sessionId: "s-1" });
    expect(ui.$("wrapping-up")?.textContent).toBe("Wrapping up… Paige is noting what you learned.");
    expect(ui.$<HTMLButtonElement>("end-session")!.disabled).toBe(true);
    expect(ui.$("hint-levels")).toBeNull();
    ui.panel.sessionEnded({ summary: { sessionId: "s-1", status: "completed", durationMs: 1000, phasesCompleted: 1 } });
    expect(ui.$("wrapping-up")).not.toBeNull();
    ui.panel.sessionCompleted({ sessionId: "s-1", knowledgeGaps: 1, kataSpecs: 0, dreyfusUpdates: 0, memoriesStored: 2 });
    expect(ui.$("start-notice")?.textContent).toMatch(/^Session wrapped up: 1 knowledge gap/);
  });
});

describe("an issue typed by hand", () => {
  it("reads an issue's number, #number or URL, and nothing else", () => {
    expect(parseIssueRef("12")).toBe(12);
    expect(parseIssueRef(" #7 ")).toBe(7);
    expect(parseIssueRef("https://github.com/acme/app/issues/42")).toBe(42);
    expect(parseIssueRef("https://github.com/acme/app/issues/42#issuecomment-1")).toBe(42);
    expect(parseIssueRef("https://github.com/acme/app/pull/42")).toBeNull();
    expect(parseIssueRef("twelve")).toBeNull();
    expect(parseIssueRef("0")).toBeNull();
  });

  it("without gh the start view says so quietly and starts a session with the typed issue and words", () => {
    const ui = setup();
    ui.panel.connectionInit({ sessionId: null, capabilities: [], featureFlags: {} });
    ui.panel.sessionOptions({ issues: [], issuesError: "gh is not logged in", resumable: [] });
    expect(ui.$("issues-error")?.className).toBe("start-quiet");
    const field = ui.$<HTMLInputElement>("start-issue-ref")!;
    field.value = "not an issue";
    field.dispatchEvent(new Event("input"));
    const form = ui.$<HTMLFormElement>("start-form")!;
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    expect(ui.$("start-form-error")?.textContent).toMatch(/issue is its number/);
    expect(ui.sent.some((m) => m.type === "session:start")).toBe(false);
    const again = ui.$<HTMLInputElement>("start-issue-ref")!;
    again.value = "https://github.com/acme/app/issues/12";
    again.dispatchEvent(new Event("input"));
    const title = ui.$<HTMLInputElement>("start-title")!;
    title.value = "Retry uploads";
    title.dispatchEvent(new Event("input"));
    ui.$<HTMLFormElement>("start-form")!.dispatchEvent(new Event("submit", { cancelable: true }));
    expect(ui.sent.at(-1)).toEqual({ type: "session:start", payload: { issueNumber: 12, title: "Retry uploads" } });
  });
});

describe("the interview for a first-time learner", () => {
  function intake(options: { debugOpen?: boolean; terminal?: boolean } = {}) {
    const { sent, transport } = recordingTransport();
    const panel = new IntakePanel(transport, { now: () => T0, ...options });
    document.body.replaceChildren(panel.root);
    panel.setSession("s-1");
    return { sent, panel, ...byTestId(panel.root) };
  }
  afterEach(() => localStorage.removeItem(DEBUG_SETTING));

  it("the guard's debug panel is closed by default and open with the paige.debug setting", () => {
    const ui = intake();
    ui.panel.state(intakeState());
    expect(ui.$<HTMLDetailsElement>("intake-debug")!.open).toBe(false);
    localStorage.setItem(DEBUG_SETTING, "1");
    const dev = intake();
    dev.panel.state(intakeState());
    expect(dev.$<HTMLDetailsElement>("intake-debug")!.open).toBe(true);
  });

  it("shows progress toward the gate in the learner's words", () => {
    const ui = intake();
    ui.panel.state(intakeState({ confidence: { adaptability: 0.8, creativity: 0.35, reasoning: 0 }, remainingMs: 150_000 }));
    const progress = ui.$("intake-progress")!;
    expect(progress.textContent).toBe(
      "Paige has a picture of 1 of 3 things. Still to hear: how you come up with ideas and how you reason through a problem. At most 3 min left.",
    );
    expect(progress.querySelector("meter")!.value).toBeCloseTo(0.5, 5);
    const all = gateProgress({ confidence: { adaptability: 1, creativity: 1, reasoning: 1 }, tau: intakeState().tau });
    expect(all).toEqual({ fraction: 1, text: "Paige has heard enough: the coding starts after this answer." });
  });

  it("Skip for now sends intake:skip; the skipped hand-over offers the interview again", () => {
    const ui = intake();
    ui.panel.state(intakeState());
    ui.$("intake-skip")!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "intake:skip", payload: {} });
    ui.panel.transition({ sessionId: "s-1", reason: "skipped", reasons: ["skipped"], codingQuestion: "" });
    expect(ui.$("intake-coding-question")?.textContent).toContain("You skipped the interview for now");
    expect(ui.$("intake-coding-question")?.textContent).toContain("opens again with your next session");
    expect(ui.$("intake-input")).toBeNull();
    ui.$("intake-take-later")!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "intake:start", payload: {} });
    ui.panel.state(intakeState());
    expect(ui.$("intake-input")).not.toBeNull();
  });

  it("a skipped interview is offered again on the dashboard, and taking it there sends intake:start", () => {
    const ui = setup();
    const { sent, transport } = recordingTransport();
    const dashboard = new Dashboard(transport, { start: () => {}, interview: () => ui.panel.intake.begin(), openExternal: null });
    ui.panel.onInterviewSkipped = (skipped) => dashboard.offerInterview(skipped);
    const offer = () => dashboard.root.querySelector<HTMLElement>('[data-testid="dash-interview-start"]');
    ui.panel.sessionStarted(started());
    ui.panel.intake.state(intakeState());
    expect(offer()).toBeNull();
    ui.panel.intake.transition({ sessionId: "s-1", reason: "skipped", reasons: ["skipped"], codingQuestion: "" });
    offer()!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "intake:start", payload: {} });
    expect(offer()).toBeNull();
    expect(sent.some((m) => m.type === "intake:start")).toBe(false);
  });

  it("the hand-over to coding says where to answer, with a button that gives the terminal the keys", () => {
    const ui = intake();
    ui.panel.state(intakeState());
    ui.panel.transition({ sessionId: "s-1", reason: "timebox", reasons: ["timebox"], codingQuestion: "Tell me how you plan to start." });
    expect(ui.$("intake-next-step")?.textContent).toMatch(/^Next: answer in the terminal/);
    const asked = vi.fn();
    document.body.addEventListener(FOCUS_TERMINAL_EVENT, asked);
    ui.$("intake-go-terminal")!.click();
    expect(asked).toHaveBeenCalledTimes(1);
  });

  it("in a browser, which has no terminal, the hand-over points to paige claude's terminal and offers no Go to the terminal", () => {
    const ui = intake({ terminal: false });
    ui.panel.state(intakeState());
    ui.panel.transition({ sessionId: "s-1", reason: "timebox", reasons: ["timebox"], codingQuestion: "Tell me how you plan to start." });
    expect(ui.$("intake-next-step")?.textContent).toMatch(/^Next: answer in your own terminal, where `paige claude` runs Claude Code/);
    expect(ui.$("intake-go-terminal")).toBeNull();
  });

  it("the wait for a plan starts at the hand-over: a four-minute interview does not show No plan yet at once", () => {
    const ui = setup();
    ui.panel.sessionStarted(started());
    ui.panel.intake.state(intakeState());
    ui.clock.t += 4 * 60_000;
    ui.panel.intake.transition({ sessionId: "s-1", reason: "timebox", reasons: ["timebox"], codingQuestion: "How do you start?" });
    expect(ui.host.querySelector(".plan-slow")).toBeNull();
    expect(ui.$("replan")).toBeNull();
    ui.clock.t += 3 * 60_000;
    // Anything that redraws the panel (here the issue's context arriving).
    ui.panel.issueContext({ number: 1, title: "Retry uploads", summary: "", labels: [], url: "" });
    expect(ui.host.querySelector(".plan-slow")?.textContent).toBe("No plan yet after a few minutes.");
  });
});

describe("the explorer's hints", () => {
  const root: TreeNode = {
    name: "p",
    path: "",
    type: "directory",
    children: [
      { name: "src", path: "src", type: "directory", children: [{ name: "auth", path: "src/auth", type: "directory", children: [{ name: "login.rs", path: "src/auth/login.rs", type: "file" }] }] },
      { name: "docs", path: "docs", type: "directory", children: [] },
    ],
  };

  it("every folder above a hinted file holds it", () => {
    expect([...foldersHolding(["src/auth/login.rs", "README.md"])].sort()).toEqual(["src", "src/auth"]);
  });

  it("a collapsed folder shows it holds a hinted file; opened, the file itself glows", () => {
    const host = document.createElement("aside");
    const { transport } = recordingTransport();
    const explorer = new Explorer(host, transport as unknown as Transport, () => {});
    explorer.setTree(structuredClone(root));
    explorer.setHints({ hints: [{ path: "src/auth/login.rs", style: "important" }] });
    const row = (path: string) => host.querySelector<HTMLElement>(`[data-testid="tree-item"][data-path="${path}"]`);
    expect(row("src")?.dataset.hintInside).toBe("true");
    expect(row("docs")?.dataset.hintInside).toBeUndefined();
    row("src")!.click();
    expect(row("src")?.dataset.hintInside).toBeUndefined();
    expect(row("src/auth")?.dataset.hintInside).toBe("true");
    row("src/auth")!.click();
    expect(row("src/auth/login.rs")?.classList.contains("hint-glow")).toBe(true);
    explorer.clearHints();
    expect(host.querySelector('[data-hint-inside="true"]')).toBeNull();
  });
});

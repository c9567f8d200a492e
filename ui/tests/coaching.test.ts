// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { CoachingPanel, Toasts, completedText, currentPhase, progressText, stepCheckText } from "../src/coaching";
import type { PhaseSummary, ServerPayloads, SessionStarted, StepCheck } from "../src/protocol";
import { resumableLine, resumableTitle } from "../src/session-start";
import { byTestId, recordingTransport } from "./support";

function setup() {
  const { sent, transport } = recordingTransport();
  const host = document.createElement("aside");
  const layout = document.createElement("main");
  layout.append(host);
  document.body.replaceChildren(layout);
  const panel = new CoachingPanel(host, transport, layout);
  const { $, $$ } = byTestId(host);
  const drawer = () => layout.querySelector<HTMLElement>('[data-testid="worked-example"]');
  return { sent, host, layout, panel, $, $$, drawer };
}

const options: ServerPayloads["session:options"] = {
  issues: [
    { number: 12, title: "Retry failed uploads", labels: ["good first issue"] },
    { number: 9, title: "Dark mode", labels: [] },
  ],
  resumable: [
    { sessionId: "s-old", issueNumber: null, title: "Parse the config", startedAt: "2026-11-22T08:00:00Z", phasesCompleted: 2, phasesTotal: 5 },
  ],
};

function phase(number: number, status: PhaseSummary["status"], extra: Partial<PhaseSummary> = {}): PhaseSummary {
  return { number, title: `Phase ${number}`, description: `Do step ${number}`, hintLevel: "file", status, ...extra };
}

function started(extra: Partial<SessionStarted> = {}): SessionStarted {
  return { sessionId: "s-1", issueContext: null, title: "Retry uploads", phases: [], hintLevel: "none", ...extra };
}

function submit(form: HTMLFormElement) {
  form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
}

function type(input: HTMLInputElement | HTMLTextAreaElement, text: string) {
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

describe("the coaching panel without a session", () => {
  let ui: ReturnType<typeof setup>;
  beforeEach(() => {
    ui = setup();
    ui.panel.connectionInit({ sessionId: null, capabilities: [], featureFlags: {} });
  });

  it("asks for the session options once connected without a session", () => {
    expect(ui.sent).toEqual([{ type: "session:list", payload: {} }]);
    expect(ui.$("start-view")).not.toBeNull();
    expect(ui.$("start-next")?.textContent).toBe("Claude Code in the terminal plans the work; Paige turns the plan into phases here.");
  });

  it("lists the project's issues and the resumable sessions from session:options", () => {
    ui.panel.sessionOptions(options);
    const issues = ui.$$("start-issue");
    expect(issues.map((b) => b.dataset.number)).toEqual(["12", "9"]);
    expect(issues[0].textContent).toContain("Retry failed uploads");
    expect(issues[0].textContent).toContain("good first issue");
    const resumable = ui.$$("resume-session");
    expect(resumable).toHaveLength(1);
    expect(resumable[0].textContent).toContain("Parse the config");
    expect(resumable[0].textContent).toContain("2 of 5 phases done");
    expect(ui.$("issues-error")).toBeNull();
  });

  it("clicking an issue sends session:start with its number and shows it pending", () => {
    ui.panel.sessionOptions(options);
    ui.$$("start-issue")[1].click();
    expect(ui.sent.at(-1)).toEqual({ type: "session:start", payload: { issueNumber: 9 } });
    expect(ui.$("start-status")?.textContent).toMatch(/Starting/);
    expect(ui.$$("start-issue").every((b) => (b as HTMLButtonElement).disabled)).toBe(true);
  });

  it("clicking a resumable session sends session:resume with its id", () => {
    ui.panel.sessionOptions(options);
    ui.$$("resume-session")[0].click();
    expect(ui.sent.at(-1)).toEqual({ type: "session:resume", payload: { sessionId: "s-old" } });
  });

  it("the issues arriving while the learner types keep the field focused, its text and caret kept", () => {
    const title = ui.$<HTMLInputElement>("start-title")!;
    title.focus();
    type(title, "Refresh the");
    title.setSelectionRange(7, 7);
    ui.panel.sessionOptions(options);
    const again = ui.$<HTMLInputElement>("start-title")!;
    expect(again).not.toBe(title);
    expect(document.activeElement).toBe(again);
    expect([again.value, again.selectionStart]).toEqual(["Refresh the", 7]);
  });

  it("the typed form sends session:start with the title and the optional description, trimmed", () => {
    ui.panel.sessionOptions({ ...options, issues: [] });
    type(ui.$<HTMLInputElement>("start-title")!, "  Add a --verbose flag ");
    submit(ui.$<HTMLFormElement>("start-form")!);
    expect(ui.sent.at(-1)).toEqual({ type: "session:start", payload: { title: "Add a --verbose flag" } });

    ui = setup();
    ui.panel.connectionInit({ sessionId: null, capabilities: [], featureFlags: {} });
    type(ui.$<HTMLInputElement>("start-title")!, "Cache results");
    type(ui.$<HTMLTextAreaElement>("start-description")!, "Only for GET requests");
    submit(ui.$<HTMLFormElement>("start-form")!);
    expect(ui.sent.at(-1)).toEqual({ type: "session:start", payload: { title: "Cache results", description: "Only for GET requests" } });
  });

  it("an empty title sends nothing and says what is missing", () => {
    type(ui.$<HTMLInputElement>("start-title")!, "   ");
    submit(ui.$<HTMLFormElement>("start-form")!);
    expect(ui.sent.map((s) => s.type)).toEqual(["session:list"]);
    expect(ui.$("start-form-error")?.textContent).toMatch(/what you want to work on/);
  });

  it("without GitHub issues it says why quietly and keeps the typed form", () => {
    ui.panel.sessionOptions({ issues: [], issuesError: "gh is not installed", resumable: [] });
    expect(ui.$("issues-error")?.textContent).toBe(
      "No GitHub issues: gh is not installed. Type an issue number or URL below, or say what you want to work on.",
    );
    expect(ui.$$("start-issue")).toHaveLength(0);
    expect(ui.$("start-form")).not.toBeNull();
  });

  it("a refused start shows its message in the panel, and Retry sends the same request again", () => {
    type(ui.$<HTMLInputElement>("start-title")!, "Fix the parser");
    submit(ui.$<HTMLFormElement>("start-form")!);
    expect(ui.panel.requestFailed("session:start", "the database is locked")).toBe(true);
    expect(ui.$("start-error")?.textContent).toContain("the database is locked");
    expect(ui.$<HTMLInputElement>("start-title")!.value).toBe("Fix the parser");
    ui.$("start-retry")!.click();
    expect(ui.sent.filter((s) => s.type === "session:start")).toEqual([
      { type: "session:start", payload: { title: "Fix the parser" } },
      { type: "session:start", payload: { title: "Fix the parser" } },
    ]);
    expect(ui.$("start-error")).toBeNull();
  });

  it("other errors are not the panel's to show", () => {
    expect(ui.panel.requestFailed("file:open", "no such file")).toBe(false);
  });
});

describe("the coaching panel with a session", () => {
  let ui: ReturnType<typeof setup>;
  beforeEach(() => {
    ui = setup();
    ui.panel.connectionInit({ sessionId: null, capabilities: [], featureFlags: {} });
  });

  it("session:started shows the typed work and says the plan comes from Claude Code", () => {
    ui.panel.sessionStarted(started({ description: "Back off exponentially" }));
    expect(ui.$("start-view")).toBeNull();
    expect(ui.$("session-title")?.textContent).toBe("Retry uploads");
    expect(ui.$("session-head")?.textContent).toContain("Back off exponentially");
    expect(ui.$("plan-waiting")?.textContent).toContain("Claude Code in the terminal plans the work");
    expect(ui.$("show-me")).toBeNull();
  });

  it("a session on an issue shows its number and title", () => {
    ui.panel.sessionStarted(
      started({ issueContext: { number: 12, title: "Retry failed uploads", summary: "Uploads fail on flaky networks", labels: ["bug"], url: "" } }),
    );
    expect(ui.$("session-title")?.textContent).toBe("#12 Retry failed uploads");
    expect(ui.$("session-head")?.textContent).toContain("bug");
  });

  it("coaching:plan_ready shows the phases, the phase in progress marked, progress and the hint reason", () => {
    ui.panel.sessionStarted(started());
    ui.panel.planReady({
      planId: "p1",
      phases: [
        phase(1, "complete"),
        phase(2, "active", { hintLevel: "region", skillArea: "error handling", hintReason: "hints start at region for error handling: you asked for help last time" }),
        phase(3, "pending"),
      ],
      memoryConnection: null,
      estimatedDifficulty: "intermediate",
    });
    const phases = ui.$$("phase");
    expect(phases.map((p) => p.dataset.status)).toEqual(["complete", "active", "pending"]);
    expect(phases.map((p) => p.dataset.current ?? "")).toEqual(["", "true", ""]);
    expect(phases[1].textContent).toContain("in progress");
    expect(ui.$("progress")?.textContent).toBe("1 of 3 phases done");
    expect(ui.$$("hint-reason").map((r) => r.textContent)).toEqual([
      "hints start at region for error handling: you asked for help last time",
    ]);
    const chosen = ui.$$("hint-level").filter((b) => b.getAttribute("aria-checked") === "true");
    expect(chosen.map((b) => b.dataset.level)).toEqual(["region"]);
    expect(ui.$("show-me")).not.toBeNull();
  });

  it("session:started with phases (a resume) reflects the stored level of the phase in progress", () => {
    ui.panel.sessionResumed({ restoredState: started({ phases: [phase(1, "complete"), phase(2, "pending", { hintLevel: "line" })], hintLevel: "line" }) });
    expect(ui.$$("phase").map((p) => p.dataset.current ?? "")).toEqual(["", "true"]);
    expect(ui.$$("phase")[1].textContent).toContain("next");
    const chosen = ui.$$("hint-level").filter((b) => b.classList.contains("chosen"));
    expect(chosen.map((b) => b.dataset.level)).toEqual(["line"]);
  });

  it("choosing a hint level sends hints:level_change with the previous level and shows it chosen", () => {
    ui.panel.sessionStarted(started({ phases: [phase(1, "active", { hintLevel: "file" })], hintLevel: "file" }));
    ui.$$("hint-level").find((b) => b.dataset.level === "line")!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "hints:level_change", payload: { level: "line", previousLevel: "file" } });
    expect(ui.$$("hint-level").filter((b) => b.classList.contains("chosen")).map((b) => b.dataset.level)).toEqual(["line"]);
    const count = ui.sent.length;
    ui.$$("hint-level").find((b) => b.dataset.level === "line")!.click();
    expect(ui.sent.length).toBe(count);
  });

  it("coaching:phase_update moves the phase in progress and the progress", () => {
    ui.panel.sessionStarted(started({ phases: [phase(1, "active"), phase(2, "pending", { hintLevel: "none" })] }));
    ui.panel.phaseUpdate({ phase: 1, status: "complete", description: "" });
    ui.panel.phaseUpdate({ phase: 2, status: "active", description: "Now write the loop" });
    expect(ui.$("progress")?.textContent).toBe("1 of 2 phases done");
    expect(ui.$$("phase")[1].dataset.current).toBe("true");
    expect(ui.$$("phase")[1].textContent).toContain("Now write the loop");
    expect(ui.$$("hint-level").filter((b) => b.classList.contains("chosen")).map((b) => b.dataset.level)).toEqual(["none"]);
  });

  it("End session sends session:end and says Wrapping up… until session:completed, then the start view again", () => {
    ui.panel.sessionStarted(started({ phases: [phase(1, "active")] }));
    ui.$("end-session")!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "session:end", payload: {} });
    expect(ui.$("wrapping-up")?.textContent).toMatch(/Wrapping up…/);
    expect(ui.$<HTMLButtonElement>("end-session")!.disabled).toBe(true);
    // Another session's wrap-up (one set aside) does not end this one.
    ui.panel.sessionCompleted({ sessionId: "s-other", knowledgeGaps: 0, kataSpecs: 0, dreyfusUpdates: 0, memoriesStored: 0 });
    expect(ui.$("wrapping-up")).not.toBeNull();
    // session:ended comes before session:completed: the panel keeps waiting for the summary.
    ui.panel.sessionEnded({ summary: { sessionId: "s-1", status: "completed", durationMs: 60000, phasesCompleted: 1 } });
    expect(ui.$("wrapping-up")).not.toBeNull();
    ui.panel.sessionCompleted({ sessionId: "s-1", knowledgeGaps: 2, kataSpecs: 1, dreyfusUpdates: 1, memoriesStored: 3 });
    expect(ui.$("start-view")).not.toBeNull();
    expect(ui.$("start-notice")?.textContent).toBe(
      "Session wrapped up: 2 knowledge gaps, 1 practice kata, 1 skill assessment and 3 memories noted.",
    );
    expect(ui.sent.at(-1)).toEqual({ type: "session:list", payload: {} });
  });

  it("End on a session with no plan and no work: session:ended (abandoned) ends it at once and says nothing was wrapped up", () => {
    ui.panel.sessionStarted(started());
    ui.$("end-session")!.click();
    expect(ui.$("wrapping-up")).not.toBeNull();
    ui.panel.sessionEnded({ summary: { sessionId: "s-1", status: "abandoned", durationMs: 60000, phasesCompleted: 0 } });
    expect(ui.$("wrapping-up")).toBeNull();
    expect(ui.$("start-view")).not.toBeNull();
    expect(ui.$("start-notice")?.textContent).toBe(
      "Session ended. It had no plan and no work yet, so there was nothing to wrap up.",
    );
  });

  it("a refused end shows why beside the button, and Retry sends session:end again", () => {
    ui.panel.sessionStarted(started());
    ui.$("end-session")!.click();
    expect(ui.panel.requestFailed("session:end", "No active session")).toBe(true);
    expect(ui.$("wrapping-up")).toBeNull();
    expect(ui.$("end-error")?.textContent).toContain("No active session");
    ui.$("end-retry")!.click();
    expect(ui.sent.filter((s) => s.type === "session:end")).toHaveLength(2);
  });

  it("session:ended of a session set aside earlier leaves the new session in the panel; its own ends it", () => {
    const fresh = setup();
    fresh.panel.sessionStarted(started({ sessionId: "s-new", title: "New work" }));
    fresh.panel.sessionEnded({ summary: { sessionId: "s-old", status: "completed", durationMs: 1000, phasesCompleted: 0 } });
    expect(fresh.$("session-title")?.textContent).toBe("New work");
    fresh.panel.sessionEnded({ summary: { sessionId: "s-new", status: "abandoned", durationMs: 1000, phasesCompleted: 0 } });
    expect(fresh.$("start-view")).not.toBeNull();
  });

  it("a UI connecting mid-session shows the session Paige sends it and asks for nothing", () => {
    const fresh = setup();
    fresh.panel.sessionStarted(started({ sessionId: "s-live", title: "Live work" }));
    fresh.panel.connectionInit({ sessionId: "s-live", capabilities: [], featureFlags: {} });
    expect(fresh.$("session-title")?.textContent).toBe("Live work");
    expect(fresh.sent.filter((s) => s.type === "session:resume")).toHaveLength(0);
  });

  it("a hint level stored from another window shows here through coaching:phase_update", () => {
    const fresh = setup();
    fresh.panel.sessionStarted(started({ sessionId: "s-live", phases: [phase(1, "active"), phase(2, "pending")] }));
    fresh.panel.phaseUpdate({ phase: 1, status: "active", description: "Do step 1", hintLevel: "region" });
    const chosen = fresh.$$("hint-level").filter((b) => b.classList.contains("chosen"));
    expect(chosen.map((b) => b.dataset.level)).toEqual(["region"]);
  });
});

describe("the step check beside the phase", () => {
  let ui: ReturnType<typeof setup>;
  const check = (extra: Partial<StepCheck>): StepCheck => ({ phase: 2, status: "running", summary: "", consecutiveFailures: 0, ...extra });
  beforeEach(() => {
    ui = setup();
    ui.panel.sessionStarted(
      started({ phases: [phase(1, "complete"), phase(2, "active", { testFilter: "sum adds" }), phase(3, "pending")], hintLevel: "file" }),
    );
  });

  it("before any check the phase in progress says which test shows it done", () => {
    const lines = ui.$$("step-check");
    expect(lines.map((l) => l.dataset.status)).toEqual(["waiting"]);
    expect(ui.$$("phase")[1].contains(lines[0])).toBe(true);
    expect(lines[0].textContent).toContain("“sum adds”");
  });

  it("shows running…, then passed ✓ beside its phase, with the command as the tooltip", () => {
    ui.panel.stepCheck(check({ status: "running", summary: "running npm test -- 'sum adds'", command: "npm test -- 'sum adds'" }));
    const running = ui.$$("phase")[1].querySelector<HTMLElement>('[data-testid="step-check"]')!;
    expect(running.dataset.status).toBe("running");
    expect(running.textContent).toBe("Checking your step…");
    expect(running.title).toBe("npm test -- 'sum adds'");
    ui.panel.stepCheck(check({ status: "passed", summary: "1 test passed", durationMs: 1234 }));
    expect(ui.$$("step-check").map((l) => [l.dataset.status, l.textContent])).toEqual([["passed", "Passed ✓ 1 test passed (1.2 s)"]]);
  });

  it("a failure shows its summary and how many checks failed in a row", () => {
    ui.panel.stepCheck(check({ status: "failed", summary: "failing: sum adds: -1 !== 5", consecutiveFailures: 1 }));
    expect(ui.$("step-check")?.textContent).toBe("Failed ✗ failing: sum adds: -1 !== 5");
    ui.panel.stepCheck(check({ status: "failed", summary: "failing: sum adds: 6 !== 5", consecutiveFailures: 3 }));
    expect(ui.$("step-check")?.className).toContain("step-check-failed");
    expect(ui.$("step-check")?.textContent).toBe("Failed ✗ failing: sum adds: 6 !== 5 — 3 checks in a row");
  });

  it("an error says why the step was not checked", () => {
    ui.panel.stepCheck(check({ status: "error", summary: "the check took longer than 60 s, so Paige stopped it" }));
    expect(ui.$("step-check")?.dataset.status).toBe("error");
    expect(ui.$("step-check")?.textContent).toBe("Not checked: the check took longer than 60 s, so Paige stopped it");
  });

  it("a check of a phase the panel does not show is ignored, and a new plan clears the checks", () => {
    ui.panel.stepCheck(check({ phase: 9, status: "passed", summary: "1 test passed" }));
    expect(ui.$$("step-check").map((l) => l.dataset.status)).toEqual(["waiting"]);
    ui.panel.stepCheck(check({ status: "passed", summary: "1 test passed" }));
    ui.panel.planReady({ planId: "p2", phases: [phase(1, "active"), phase(2, "pending")], memoryConnection: null, estimatedDifficulty: "beginner" });
    expect(ui.$$("step-check")).toEqual([]);
  });
});

describe("just show me", () => {
  let ui: ReturnType<typeof setup>;
  const example: ServerPayloads["coaching:worked_example"] = {
    phase: 1,
    title: "Retrying a flaky sensor read",
    explanation: "A retry wraps the call that can fail.",
    language: "python",
    exampleCode: "def read_with_retry(read):\n    return read()  # <b>not html</b>\n",
    steps: ["Wrap the call", "Return on success"],
  };
  beforeEach(() => {
    ui = setup();
    ui.panel.sessionStarted(started({ phases: [phase(1, "active")] }));
  });

  it("shows progress with the button disabled until the example arrives", () => {
    ui.$("show-me")!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "coaching:show_me", payload: {} });
    expect(ui.$("show-me-status")?.textContent).toBe("Paige is preparing an example…");
    expect(ui.$<HTMLButtonElement>("show-me")!.disabled).toBe(true);
    expect(ui.drawer()).toBeNull();
  });

  it("coaching:worked_example opens a read-only drawer with the title, explanation, steps and code as text", () => {
    ui.$("show-me")!.click();
    ui.panel.workedExample(example);
    expect(ui.$("show-me-status")).toBeNull();
    expect(ui.$<HTMLButtonElement>("show-me")!.disabled).toBe(false);
    const drawer = ui.drawer()!;
    expect(drawer.querySelector('[data-testid="worked-example-title"]')?.textContent).toBe(example.title);
    expect(drawer.querySelector('[data-testid="worked-example-explanation"]')?.textContent).toBe(example.explanation);
    expect([...drawer.querySelectorAll('[data-testid="worked-example-steps"] li')].map((li) => li.textContent)).toEqual(example.steps);
    const code = drawer.querySelector<HTMLElement>('pre[data-testid="worked-example-code"]')!;
    expect(code.textContent).toBe(example.exampleCode);
    expect(code.querySelector("b")).toBeNull();
    expect(drawer.querySelector("textarea, input, [contenteditable]")).toBeNull();
    drawer.querySelector<HTMLElement>('[data-testid="worked-example-close"]')!.click();
    expect(ui.drawer()).toBeNull();
  });

  it("Escape closes the drawer", () => {
    ui.panel.workedExample(example);
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape" }));
    expect(ui.drawer()).toBeNull();
  });

  it("coaching:worked_example_error shows the error in the panel and Retry asks again", () => {
    ui.$("show-me")!.click();
    ui.panel.workedExampleError({ phase: 1, error: "Paige could not make an example: overloaded" });
    expect(ui.$("show-me-error")?.textContent).toContain("overloaded");
    expect(ui.$("show-me-status")).toBeNull();
    ui.$("show-me-retry")!.click();
    expect(ui.sent.filter((s) => s.type === "coaching:show_me")).toHaveLength(2);
    expect(ui.$("show-me-status")).not.toBeNull();
    expect(ui.$("show-me-error")).toBeNull();
  });

  it("is offered only while a phase is in progress", () => {
    ui.panel.phaseUpdate({ phase: 1, status: "complete", description: "" });
    expect(ui.$("show-me")).toBeNull();
  });
});

describe("panel text", () => {
  it("says each step check state in a line", () => {
    const base = { phase: 1, summary: "x", consecutiveFailures: 0 };
    expect(stepCheckText({ ...base, status: "running" })).toBe("Checking your step…");
    expect(stepCheckText({ ...base, status: "passed", durationMs: 850 })).toBe("Passed ✓ x (850 ms)");
    expect(stepCheckText({ ...base, status: "failed", consecutiveFailures: 2 })).toBe("Failed ✗ x — 2 checks in a row");
    expect(stepCheckText({ ...base, status: "error" })).toBe("Not checked: x");
  });

  it("counts the phases done", () => {
    expect(progressText([phase(1, "complete"), phase(2, "complete"), phase(3, "active"), phase(4, "pending"), phase(5, "pending")])).toBe(
      "2 of 5 phases done",
    );
    expect(progressText([phase(1, "pending")])).toBe("0 of 1 phase done");
  });
  it("the phase in progress is the active one, else the first pending one", () => {
    expect(currentPhase([phase(1, "complete"), phase(2, "pending"), phase(3, "active")])?.number).toBe(3);
    expect(currentPhase([phase(1, "complete"), phase(2, "pending"), phase(3, "pending")])?.number).toBe(2);
    expect(currentPhase([phase(1, "complete")])).toBeUndefined();
  });
  it("names a resumable session and how far it got", () => {
    const now = Date.parse("2026-11-22T11:00:00Z");
    const s = options.resumable[0];
    expect(resumableTitle(s)).toBe("Parse the config");
    expect(resumableTitle({ ...s, issueNumber: 4, title: "Dark mode" })).toBe("#4 Dark mode");
    expect(resumableLine(s, now)).toBe("started 3 h ago · 2 of 5 phases done");
    expect(resumableLine({ ...s, phasesTotal: 0, phasesCompleted: 0 }, now)).toBe("started 3 h ago · no plan yet");
  });
  it("says what a wrap-up noted, singular and plural", () => {
    expect(completedText({ sessionId: "s", knowledgeGaps: 1, kataSpecs: 0, dreyfusUpdates: 2, memoriesStored: 1 })).toBe(
      "Session wrapped up: 1 knowledge gap, 0 practice katas, 2 skill assessments and 1 memory noted.",
    );
  });
});

describe("toasts", () => {
  it("a notice already on screen is not shown twice, a different one is", () => {
    const host = document.createElement("div");
    const toasts = new Toasts(host);
    toasts.show("Coach mode: you write the code.", "info");
    toasts.show("Coach mode: you write the code.", "info");
    toasts.show("Wrapping up First task in the background.", "info");
    expect([...host.querySelectorAll(".toast")].map((t) => t.textContent)).toEqual([
      "Coach mode: you write the code.",
      "Wrapping up First task in the background.",
    ]);
  });

  it("an error notice shows its sentence, folds its details, and opening them does not dismiss it", () => {
    const host = document.createElement("div");
    const toasts = new Toasts(host);
    const text = "Paige could not turn Claude Code's plan into phases: the model took longer than 180 s to answer — retry in a moment.\nthe model call coach_agent did not finish within 180s";
    toasts.show(text, "error");
    toasts.show(text, "error");
    const shown = host.querySelectorAll<HTMLElement>(".toast");
    expect(shown.length).toBe(1);
    expect(shown[0]!.querySelector(".error-sentence")?.textContent).toMatch(/^Paige could not turn .* retry in a moment\.$/);
    shown[0]!.querySelector("summary")!.click();
    expect(host.querySelectorAll(".toast").length).toBe(1);
    shown[0]!.querySelector("p")!.click();
    expect(host.querySelectorAll(".toast").length).toBe(0);
  });

  it("a notice whose moment passed is dismissed by its start, and only it", () => {
    const host = document.createElement("div");
    const toasts = new Toasts(host);
    toasts.show("Turning Claude Code's plan into phases for you…", "info");
    toasts.show("Coach mode: you write the code.", "info");
    toasts.dismiss("Turning Claude Code's plan into phases");
    expect([...host.querySelectorAll(".toast")].map((t) => t.textContent)).toEqual(["Coach mode: you write the code."]);
  });

  it("a coaching message of several lines is shown whole, nothing folded", () => {
    const host = document.createElement("div");
    new Toasts(host).show("Look at login() first.\nThen the callback.", "hint");
    expect(host.querySelector(".toast")?.textContent).toBe("Look at login() first.\nThen the callback.");
    expect(host.querySelector("details")).toBeNull();
  });
});

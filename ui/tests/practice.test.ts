// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { PracticePanel, followUpText, progressLine } from "../src/practice";
import type { KataLoad, PracticeKata, ReviewResponse } from "../src/protocol";
import { byTestId, recordingTransport } from "./support";

function setup() {
  const { sent, transport } = recordingTransport();
  const layout = document.createElement("main");
  document.body.replaceChildren(layout);
  const panel = new PracticePanel(layout, transport);
  const { $, $$ } = byTestId(layout);
  return { sent, layout, panel, $, $$ };
}

function kata(extra: Partial<PracticeKata> = {}): PracticeKata {
  return { id: "k1", title: "Retry with backoff", description: "Write fetchWithRetry.", gapTopic: "async errors", bestLevel: 2, attempts: 1, constraints: 3, unlockedConstraints: 1, ...extra };
}

function load(id = "k1"): KataLoad {
  return {
    kata: { id, title: "Retry with backoff", description: "Write fetchWithRetry.", scaffoldingCode: "function retry() {\n}\n" },
    constraints: [{ title: "No loops", description: "use recursion", minLevel: 1 }],
  };
}

function review(extra: Partial<ReviewResponse> = {}): ReviewResponse {
  return {
    kataId: "k1",
    correct: true,
    feedback: "The wait doubles; a rejection still escapes.",
    level: 5,
    passed: true,
    followUp: { type: "constraint_escalation", constraint: "One await only", reason: "You are ready." },
    dreyfusSignal: "advancing",
    unlockedConstraints: [{ title: "One await", description: "a single await", minLevel: 5 }],
    ...extra,
  };
}

describe("practice texts", () => {
  it("the progress line says the best level, attempts and unlocked constraints, or that it is untried", () => {
    expect(progressLine(kata())).toBe("Best level 2/10 · 1 attempt · 1 of 3 constraints unlocked");
    expect(progressLine(kata({ bestLevel: 0, attempts: 0, constraints: 0, unlockedConstraints: 0 }))).toBe("Not attempted yet · 0 attempts");
  });

  it("the follow-up reads as a sentence for each type, and null without one", () => {
    expect(followUpText({ type: "constraint_escalation", constraint: "No loops", reason: "Ready." })).toBe("Next challenge: No loops. Ready.");
    expect(followUpText({ type: "retry_hint", reason: "Check the base case." })).toBe("Try again. Check the base case.");
    expect(followUpText({ type: "completed" })).toBe("Kata mastered.");
    expect(followUpText(null)).toBeNull();
  });
});

describe("the Practice drawer", () => {
  let ui: ReturnType<typeof setup>;
  beforeEach(() => {
    ui = setup();
  });

  /** Opens k1 through the list, as the learner would. */
  function openKata(): void {
    ui.panel.showList();
    ui.panel.katasListed({ katas: [kata()] });
    ui.$("practice-open")!.click();
    ui.panel.kataLoaded(load());
    ui.sent.length = 0;
  }

  it("asks for the list and shows progress, then the katas with their topic and progress", () => {
    ui.panel.showList();
    expect(ui.sent).toEqual([{ type: "practice:list", payload: {} }]);
    expect(ui.$("practice-status")?.textContent).toBe("Loading katas…");
    ui.panel.katasListed({ katas: [kata(), kata({ id: "k2", title: "Parse dates" })] });
    expect(ui.$("practice-status")).toBeNull();
    expect(ui.$$("practice-open").map((b) => b.textContent)).toEqual(["Retry with backoff", "Parse dates"]);
    expect(ui.$$("practice-progress")[0].textContent).toBe("Best level 2/10 · 1 attempt · 1 of 3 constraints unlocked");
    expect(ui.$("practice")?.textContent).toContain("async errors");
  });

  it("says how katas come about when there are none", () => {
    ui.panel.showList();
    ui.panel.katasListed({ katas: [] });
    expect(ui.$("practice-empty")?.textContent).toContain("when a coaching session wraps up");
  });

  it("opening a kata requests it and shows the scaffolding in a text area with the unlocked constraints as toggles", () => {
    ui.panel.showList();
    ui.panel.katasListed({ katas: [kata()] });
    ui.sent.length = 0;
    ui.$("practice-open")!.click();
    expect(ui.sent).toEqual([{ type: "practice:kata_request", payload: { kataId: "k1" } }]);
    expect(ui.$("practice-status")?.textContent).toBe("Opening the kata…");
    ui.panel.kataLoaded(load());
    expect(ui.$("practice-title")?.textContent).toBe("Retry with backoff");
    expect(ui.$<HTMLTextAreaElement>("practice-code")?.value).toBe("function retry() {\n}\n");
    expect(ui.$$("practice-constraint").map((c) => c.textContent)).toEqual(["No loops — use recursion"]);
    expect(ui.$("practice-constraints")?.textContent).toContain("2 more unlock as your level rises.");
  });

  it("ignores a kata it did not ask for (another UI's)", () => {
    ui.panel.showList();
    ui.panel.katasListed({ katas: [kata()] });
    ui.panel.kataLoaded(load("other"));
    expect(ui.$("practice-code")).toBeNull();
  });

  it("submit sends user:review with the edited code and the switched-on constraints, and shows the progress", () => {
    openKata();
    const code = ui.$<HTMLTextAreaElement>("practice-code")!;
    code.value = "const retry = () => retry();";
    code.dispatchEvent(new Event("input"));
    const toggle = ui.layout.querySelector<HTMLInputElement>('[data-title="No loops"]')!;
    toggle.checked = true;
    toggle.dispatchEvent(new Event("change"));
    ui.$("practice-submit")!.click();
    expect(ui.sent).toEqual([{ type: "user:review", payload: { kataId: "k1", userCode: "const retry = () => retry();", activeConstraintTitles: ["No loops"] } }]);
    expect(ui.$("practice-status")?.textContent).toBe("Paige is reviewing your solution…");
    expect(ui.$<HTMLButtonElement>("practice-submit")?.disabled).toBe(true);
  });

  it("submits empty code as it is", () => {
    openKata();
    const code = ui.$<HTMLTextAreaElement>("practice-code")!;
    code.value = "";
    code.dispatchEvent(new Event("input"));
    ui.$("practice-submit")!.click();
    expect(ui.sent[0].payload).toMatchObject({ userCode: "", activeConstraintTitles: [] });
  });

  it("the review shows level, verdict, feedback, follow-up and the newly unlocked constraint highlighted as a toggle, keeping the code", () => {
    openKata();
    const code = ui.$<HTMLTextAreaElement>("practice-code")!;
    code.value = "mine";
    code.dispatchEvent(new Event("input"));
    ui.$("practice-submit")!.click();
    ui.panel.reviewed(review());
    expect(ui.$("practice-status")).toBeNull();
    expect(ui.$("practice-verdict")?.textContent).toBe("Passed ✓ · level 5/10");
    expect(ui.$("practice-feedback")?.textContent).toBe("The wait doubles; a rejection still escapes.");
    expect(ui.$("practice-follow-up")?.textContent).toBe("Next challenge: One await only. You are ready.");
    expect(ui.$("practice-unlocked")?.textContent).toBe("One await (level 5)");
    const toggles = ui.$$("practice-constraint");
    expect(toggles.map((t) => t.classList.contains("practice-constraint-new"))).toEqual([false, true]);
    expect(ui.$<HTMLTextAreaElement>("practice-code")?.value).toBe("mine");
    expect(ui.$<HTMLButtonElement>("practice-submit")?.disabled).toBe(false);
  });

  it("a failed attempt reads as not passed, without follow-up or unlocked constraints when there are none", () => {
    openKata();
    ui.$("practice-submit")!.click();
    ui.panel.reviewed(review({ passed: false, level: 2, followUp: null, unlockedConstraints: [] }));
    expect(ui.$("practice-verdict")?.textContent).toBe("Not passed yet ✗ · level 2/10");
    expect(ui.$("practice-follow-up")).toBeNull();
    expect(ui.$("practice-unlocked")).toBeNull();
  });

  it("review:error shows the error inline and Retry resends the same submission", () => {
    openKata();
    ui.$("practice-submit")!.click();
    const first = ui.sent[0];
    ui.panel.reviewFailed({ kataId: "k1", error: "Paige could not review this solution: overloaded" });
    expect(ui.$("practice-error")?.textContent).toContain("overloaded");
    ui.sent.length = 0;
    ui.$("practice-retry")!.click();
    expect(ui.sent).toEqual([first]);
    expect(ui.$("practice-error")).toBeNull();
    expect(ui.$("practice-status")).not.toBeNull();
  });

  it("with two submissions in flight the first answer is the older one's; answers for other katas or unasked are ignored", () => {
    openKata();
    ui.panel.reviewed(review({ feedback: "another window's" }));
    expect(ui.$("practice-feedback")).toBeNull();
    ui.$("practice-submit")!.click();
    ui.$("practice-submit")!.removeAttribute("disabled");
    ui.$("practice-submit")!.click();
    ui.panel.reviewed(review({ kataId: "k2", feedback: "other kata" }));
    ui.panel.reviewed(review({ feedback: "older" }));
    expect(ui.$("practice-feedback")).toBeNull();
    ui.panel.reviewed(review({ feedback: "latest" }));
    expect(ui.$("practice-feedback")?.textContent).toBe("latest");
  });

  it("opens a kata straight from elsewhere (the dashboard): requested, then shown when it loads", () => {
    ui.panel.openKata("k1");
    expect(ui.sent).toEqual([{ type: "practice:kata_request", payload: { kataId: "k1" } }]);
    expect(ui.$("practice-status")?.textContent).toBe("Opening the kata…");
    ui.panel.kataLoaded(load());
    expect(ui.$<HTMLTextAreaElement>("practice-code")?.value).toBe("function retry() {\n}\n");
  });

  it("a kata opened from elsewhere that cannot be opened shows the error and asks for the list under it", () => {
    ui.panel.openKata("gone");
    ui.sent.length = 0;
    ui.panel.kataFailed({ kataId: "gone", error: "Kata not found" });
    expect(ui.$("practice-error")?.textContent).toContain("Kata not found");
    expect(ui.sent).toEqual([{ type: "practice:list", payload: {} }]);
    ui.panel.katasListed({ katas: [kata()] });
    expect(ui.$$("practice-open")).toHaveLength(1);
  });

  it("a kata that cannot be opened shows the error over the list with a Retry", () => {
    ui.panel.showList();
    ui.panel.katasListed({ katas: [kata()] });
    ui.$("practice-open")!.click();
    ui.panel.kataFailed({ kataId: "k1", error: "Kata not found" });
    expect(ui.$("practice-error")?.textContent).toContain("Kata not found");
    expect(ui.$$("practice-open")).toHaveLength(1);
    ui.sent.length = 0;
    ui.$("practice-retry")!.click();
    expect(ui.sent).toEqual([{ type: "practice:kata_request", payload: { kataId: "k1" } }]);
  });

  it("back to the list asks for it afresh; closing forgets the open kata so a late review does not reopen it", () => {
    openKata();
    ui.$("practice-back")!.click();
    expect(ui.sent).toEqual([{ type: "practice:list", payload: {} }]);
    expect(ui.$("practice-code")).toBeNull();
    ui.$("practice-open")!.click();
    ui.panel.kataLoaded(load());
    ui.$("practice-submit")!.click();
    ui.$("practice-close")!.click();
    ui.panel.reviewed(review());
    expect(ui.$("practice")).toBeNull();
  });
});

// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { CoachingPanel } from "../src/coaching";
import { Dashboard } from "../src/dashboard";
import { NUDGE_TEXT, PREPARING_TEXT, delegationDominates, relianceSummary } from "../src/learning";
import type { ComprehensionCheck, DashboardLearning, DashboardState, PhaseSummary, QuestionView, RelianceGauge } from "../src/protocol";
import { bucketLabel, chartSummary, learningView, relianceChart } from "../src/reliance-chart";
import { byTestId, recordingTransport } from "./support";

function phase(number: number, status: PhaseSummary["status"], extra: Partial<PhaseSummary> = {}): PhaseSummary {
  return { number, title: `Phase ${number}`, description: `Do step ${number}`, hintLevel: "file", status, ...extra };
}

/** A coaching panel in session s-1 with a plan of two phases (the first done). */
function setup() {
  const { sent, transport } = recordingTransport();
  const host = document.createElement("aside");
  host.className = "coaching";
  const elsewhere = document.createElement("textarea");
  elsewhere.dataset.testid = "elsewhere";
  document.body.replaceChildren(host, elsewhere);
  const panel = new CoachingPanel(host, transport);
  panel.sessionStarted({ sessionId: "s-1", issueContext: null, title: "Retry uploads", phases: [], hintLevel: "none" });
  panel.planReady({ planId: "p-1", phases: [phase(1, "complete"), phase(2, "active")], memoryConnection: null, estimatedDifficulty: "beginner" });
  const { $, $$ } = byTestId(host);
  const learning = panel.learning;
  return { sent, host, panel, learning, $, $$, elsewhere };
}

function question(id: string, extra: Partial<QuestionView> = {}): QuestionView {
  return {
    id,
    kind: "explain_line",
    question: `Why is line ${id} needed?`,
    quote: "if (!name) return null;",
    concept: "early return",
    status: "open",
    ...extra,
  };
}

function check(state: ComprehensionCheck["state"], questions: QuestionView[] = [], extra: Partial<ComprehensionCheck> = {}): ComprehensionCheck {
  return { sessionId: "s-1", phase: 1, phaseTitle: "Find the greeting", state, questions, ...extra };
}

function key(target: HTMLElement, init: KeyboardEventInit) {
  const event = new KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init });
  target.dispatchEvent(event);
  return event;
}

function gauge(counts: Partial<RelianceGauge>): RelianceGauge {
  return { delegation: 0, debuggingHelp: 0, conceptualQuestion: 0, verification: 0, other: 0, ...counts };
}

describe("the comprehension check card", () => {
  let ui: ReturnType<typeof setup>;
  beforeEach(() => {
    ui = setup();
  });

  it("preparing shows progress in the coaching panel, below the phases, not a modal", () => {
    ui.learning.check(check("preparing"));
    const card = ui.$("learning-check");
    expect(card?.dataset.state).toBe("preparing");
    expect(ui.$("learning-preparing")?.textContent).toBe(PREPARING_TEXT);
    expect(ui.$("learning-preparing")?.getAttribute("role")).toBe("status");
    // Below the phase list, inside the panel; the phases stay usable.
    const order = [...ui.host.querySelectorAll('[data-testid="phases"], [data-testid="learning-check"]')].map((e) => (e as HTMLElement).dataset.testid);
    expect(order).toEqual(["phases", "learning-check"]);
    expect(ui.$('phase-done')).not.toBeNull();
  });

  it("a ready check shows each question with its quote as code and an answer box", () => {
    ui.learning.check(check("ready", [question("q1", { kind: "edge_case" })]));
    expect(ui.$("learning-question-text")?.textContent).toBe("Why is line q1 needed?");
    expect(ui.$("learning-quote")?.querySelector("code")?.textContent).toBe("if (!name) return null;");
    expect(ui.$("learning-question")?.textContent).toContain("Edge case");
    expect(ui.$("learning-question")?.textContent).toContain("early return");
    expect(ui.$("learning-answer")).not.toBeNull();
  });

  it("Enter sends the answer and Shift+Enter does not", () => {
    ui.learning.check(check("ready", [question("q1")]));
    const input = ui.$<HTMLTextAreaElement>("learning-answer");
    if (!input) throw new Error("no answer box");
    input.value = "because a missing name";
    const shifted = key(input, { key: "Enter", shiftKey: true });
    expect(shifted.defaultPrevented).toBe(false);
    expect(ui.sent.filter((s) => s.type === "learning:answer")).toEqual([]);
    const enter = key(input, { key: "Enter" });
    expect(enter.defaultPrevented).toBe(true);
    expect(ui.sent.filter((s) => s.type === "learning:answer")).toEqual([
      { type: "learning:answer", payload: { questionId: "q1", answer: "because a missing name" } },
    ]);
    // Sent once: the box waits for the core's answer.
    expect(ui.$<HTMLTextAreaElement>("learning-answer")?.disabled).toBe(true);
    expect(ui.$("learning-sending")).not.toBeNull();
  });

  it("Enter on an empty box sends nothing", () => {
    ui.learning.check(check("ready", [question("q1")]));
    const input = ui.$<HTMLTextAreaElement>("learning-answer");
    if (!input) throw new Error("no answer box");
    input.value = "   ";
    key(input, { key: "Enter" });
    expect(ui.sent.filter((s) => s.type === "learning:answer")).toEqual([]);
  });

  it("grading shows progress, then the grade as a badge with words and the why", () => {
    ui.learning.check(check("ready", [question("q1", { status: "grading", answer: "because" })]));
    expect(ui.$("learning-grading")?.textContent).toBe("Grading your answer…");
    expect(ui.$("learning-answer")).toBeNull();
    ui.learning.check(check("done", [question("q1", { status: "graded", answer: "because", grade: "partial", why: "Half of it." })]));
    const badge = ui.$("learning-grade");
    expect(badge?.dataset.grade).toBe("partial");
    expect(badge?.textContent).toBe("◐ Partial");
    expect(badge?.classList.contains("grade-partial")).toBe(true);
    expect(ui.$("learning-why")?.textContent).toBe("Half of it.");
    expect(ui.$("learning-check")?.dataset.state).toBe("done");
  });

  it("failed shows the note's first line, folds the details, and Retry sends learning:retry", () => {
    ui.learning.check(check("failed", [], { note: "Paige could not write the questions for this phase.\nHTTP 529 overloaded" }));
    const failed = ui.$("learning-failed");
    expect(failed?.querySelector(".error-sentence")?.textContent).toBe("Paige could not write the questions for this phase.");
    expect(failed?.querySelector("details pre")?.textContent).toBe("HTTP 529 overloaded");
    ui.$("learning-retry")?.click();
    expect(ui.sent.at(-1)).toEqual({ type: "learning:retry", payload: { phase: 1 } });
    ui.learning.check(check("preparing"));
    expect(ui.$("learning-retry")).toBeNull();
    expect(ui.$("learning-preparing")).not.toBeNull();
  });

  it("nothing to ask shows its note quietly", () => {
    ui.learning.check(check("nothing_to_ask", [], { note: "Nothing changed in this phase's files, so there is nothing to ask about." }));
    expect(ui.$("learning-note")?.textContent).toBe("Nothing changed in this phase's files, so there is nothing to ask about.");
    expect(ui.$("learning-answer")).toBeNull();
    expect(ui.$("learning-skip")).toBeNull();
  });

  it("a grading error keeps the answer in the box and Retry sends it again", () => {
    ui.learning.check(check("ready", [question("q1", { answer: "because it stops early", error: "Paige could not grade this answer.\ntimeout" })]));
    const input = ui.$<HTMLTextAreaElement>("learning-answer");
    expect(input?.value).toBe("because it stops early");
    expect(input?.disabled).toBe(false);
    const error = ui.$("learning-answer-error");
    expect(error?.querySelector(".error-sentence")?.textContent).toBe("Paige could not grade this answer.");
    ui.$("learning-answer-retry")?.click();
    expect(ui.sent.at(-1)).toEqual({ type: "learning:answer", payload: { questionId: "q1", answer: "because it stops early" } });
  });

  it("Skip sends learning:skip for the phase", () => {
    ui.learning.check(check("ready", [question("q1"), question("q2")]));
    ui.$("learning-skip")?.click();
    expect(ui.sent.at(-1)).toEqual({ type: "learning:skip", payload: { phase: 1 } });
    ui.learning.check(check("done", [question("q1", { status: "skipped" }), question("q2", { status: "skipped" })]));
    expect(ui.$$("learning-unanswered").map((l) => l.textContent)).toEqual(["Skipped", "Skipped"]);
    expect(ui.$("learning-skip")).toBeNull();
  });

  it("the latest frame per phase replaces its card; other phases keep theirs", () => {
    ui.learning.check(check("preparing"));
    ui.learning.check(check("preparing", [], { phase: 2, phaseTitle: "Say bonjour" }));
    ui.learning.check(check("ready", [question("q1")]));
    const cards = ui.$$("learning-check");
    expect(cards.map((c) => [c.dataset.phase, c.dataset.state])).toEqual([["1", "ready"], ["2", "preparing"]]);
  });

  it("a check of another session is dropped", () => {
    ui.learning.check(check("preparing", [], { sessionId: "s-other" }));
    expect(ui.$("learning-check")).toBeNull();
  });

  it("what is typed survives a redraw of the panel and of the card, with the keys", () => {
    ui.learning.check(check("ready", [question("q1"), question("q2")]));
    const input = ui.$<HTMLTextAreaElement>("learning-answer");
    if (!input) throw new Error("no answer box");
    input.focus();
    input.value = "half an ans";
    // Another frame for the check (q2 graded in another window), and a phase update.
    ui.learning.check(check("ready", [question("q1"), question("q2", { status: "grading", answer: "x" })]));
    ui.panel.phaseUpdate({ phase: 2, status: "active", description: "Do step 2" });
    const now = ui.$<HTMLTextAreaElement>("learning-answer");
    expect(now).toBe(input);
    expect(now?.value).toBe("half an ans");
    expect(document.activeElement).toBe(input);
  });

  it("a check that becomes ready takes the focus to its first open question", () => {
    ui.learning.check(check("preparing"));
    ui.learning.check(check("ready", [question("q1", { status: "graded", grade: "correct" }), question("q2")]));
    expect(document.activeElement).toBe(ui.$$("learning-answer")[0]);
    expect((document.activeElement as HTMLElement).closest('[data-testid="learning-question"]')?.getAttribute("data-id")).toBe("q2");
  });

  it("a check that becomes ready does not take the focus from the learner typing elsewhere", () => {
    ui.elsewhere.focus();
    ui.learning.check(check("ready", [question("q1")]));
    expect(document.activeElement).toBe(ui.elsewhere);
  });

  it("learning:error appears beside its question, and a phase's on its card", () => {
    ui.learning.check(check("ready", [question("q1"), question("q2")]));
    const input = ui.$$("learning-answer")[1] as HTMLTextAreaElement;
    input.value = "an answer";
    key(input, { key: "Enter" });
    expect(ui.learning.error({ questionId: "q2", error: "This question was already answered, skipped or closed." })).toBe(true);
    const questions = ui.$$("learning-question");
    expect(questions[0].querySelector('[data-testid="learning-answer-error"]')).toBeNull();
    expect(questions[1].querySelector('[data-testid="learning-answer-error"]')?.textContent).toContain("already answered");
    // The box is usable again, with the answer kept.
    const again = questions[1].querySelector<HTMLTextAreaElement>('[data-testid="learning-answer"]');
    expect(again?.disabled).toBe(false);
    expect(again?.value).toBe("an answer");
    expect(ui.learning.error({ phase: 1, error: "There is no phase 1 in this session's plan." })).toBe(true);
    expect(ui.$("learning-phase-error")?.textContent).toContain("There is no phase 1");
    // Nothing on screen to show it beside: the caller says it elsewhere.
    expect(ui.learning.error({ phase: 7, error: "There is no phase 7 in this session's plan." })).toBe(false);
  });

  it("a new session clears the cards", () => {
    ui.learning.check(check("preparing"));
    ui.panel.sessionStarted({ sessionId: "s-2", issueContext: null, title: "Next", phases: [], hintLevel: "none" });
    expect(ui.$("learning-check")).toBeNull();
  });
});

describe("the reliance gauge", () => {
  let ui: ReturnType<typeof setup>;
  beforeEach(() => {
    ui = setup();
  });

  it("renders the session's counts as a stacked bar with a legend and a summary for screen readers", () => {
    ui.learning.signals({ sessionId: "s-1", reliance: gauge({ delegation: 2, conceptualQuestion: 1, other: 1 }), solutionsShown: 0 });
    const box = ui.$("learning-gauge");
    expect(box?.textContent).toContain("How you asked Claude Code");
    expect(box?.dataset.total).toBe("4");
    expect(ui.$$("reliance-seg").map((s) => [s.dataset.class, s.dataset.count])).toEqual([
      ["conceptualQuestion", "1"],
      ["other", "1"],
      ["delegation", "2"],
    ]);
    expect(ui.$("reliance-bar")?.getAttribute("aria-label")).toBe(
      "How you asked Claude Code this session: 4 prompts: 2 asked for the code, 1 asked how or why, 1 other",
    );
    expect(ui.$$("reliance-legend").map((l) => l.textContent)).toEqual(["Asked how or why 1", "Other 1", "Asked for the code 2"]);
    expect(ui.$("solutions-shown")).toBeNull();
    expect(ui.$("reliance-nudge")).toBeNull();
  });

  it("says how many solutions were shown, then typed", () => {
    ui.learning.signals({ sessionId: "s-1", reliance: gauge({}), solutionsShown: 2 });
    expect(ui.$("solutions-shown")?.textContent).toBe("2 solutions shown, then typed");
    expect(ui.$("reliance-bar")).toBeNull();
  });

  it("shows nothing before any prompt", () => {
    ui.learning.signals({ sessionId: "s-1", reliance: gauge({}), solutionsShown: 0 });
    expect(ui.$("learning-gauge")).toBeNull();
  });

  it("nudges gently when asking for the code dominates the phase in progress", () => {
    const session = gauge({ delegation: 3, conceptualQuestion: 4 });
    ui.learning.signals({ sessionId: "s-1", reliance: session, solutionsShown: 0, phase: 2, phaseReliance: gauge({ delegation: 3, other: 2 }) });
    expect(ui.$("reliance-nudge")?.textContent).toBe(NUDGE_TEXT);
    ui.learning.signals({ sessionId: "s-1", reliance: session, solutionsShown: 0, phase: 2, phaseReliance: gauge({ delegation: 3, conceptualQuestion: 3 }) });
    expect(ui.$("reliance-nudge")).toBeNull();
  });

  it("delegation dominates from 3 prompts and more than half", () => {
    expect(delegationDominates(gauge({ delegation: 2 }))).toBe(false);
    expect(delegationDominates(gauge({ delegation: 3 }))).toBe(true);
    expect(delegationDominates(gauge({ delegation: 3, verification: 3 }))).toBe(false);
    expect(delegationDominates(undefined)).toBe(false);
    expect(relianceSummary(gauge({}))).toBe("No prompts yet");
  });
});

describe("the hint reason of a phase update", () => {
  it("shows why the next phase's hints moved after a comprehension check", () => {
    const ui = setup();
    ui.panel.phaseUpdate({ phase: 2, status: "active", description: "Do step 2", hintLevel: "region", hintReason: "hints start at region for phase 2: your answer about early return in phase 1 was not right" });
    const current = ui.host.querySelector<HTMLElement>('[data-testid="phase"][data-number="2"]');
    expect(current?.querySelector('[data-testid="hint-reason"]')?.textContent).toBe(
      "hints start at region for phase 2: your answer about early return in phase 1 was not right",
    );
    expect(current?.querySelector('[data-testid="hint-level"][data-level="region"]')?.getAttribute("aria-checked")).toBe("true");
  });
});

const EMPTY: DashboardLearning = { reliance: [], solutionsShown: 0, comprehension: { correct: 0, partial: 0, incorrect: 0, skipped: 0 } };
const WITH_DATA: DashboardLearning = {
  reliance: [
    { label: "2026-11-21", counts: gauge({ conceptualQuestion: 1, delegation: 3 }) },
    { label: "2026-11-22", counts: gauge({ conceptualQuestion: 2, debuggingHelp: 1, delegation: 1 }) },
  ],
  solutionsShown: 3,
  comprehension: { correct: 2, partial: 1, incorrect: 0, skipped: 1 },
};

describe("the dashboard's learning signals", () => {
  function dashboard(learning: DashboardLearning) {
    const { transport } = recordingTransport();
    const dash = new Dashboard(transport, { start: () => {}, openExternal: null });
    document.body.replaceChildren(dash.root);
    const state: DashboardState = {
      dreyfus: [],
      stats: { period: "all", sessionsCompleted: 0, totalCoachingMinutes: 0, issuesWorkedOn: 0, knowledgeGapsIdentified: 0, knowledgeGapsAddressed: 0, hintsUsed: 0, apiCostTotal: 0 },
      inProgressSessions: [],
      katas: [],
      learning,
      reviewsDue: 0,
    };
    dash.setState(state);
    return byTestId(dash.root);
  }

  it("the chart renders a stacked bar per bucket, asking how or why at the bottom", () => {
    const { $, $$ } = dashboard(WITH_DATA);
    expect($("dash-learning")?.textContent).toContain("Learning signals");
    const bars = $$("reliance-bucket");
    expect(bars.map((b) => [b.dataset.label, b.dataset.total])).toEqual([["2026-11-21", "4"], ["2026-11-22", "4"]]);
    const segments = [...bars[0].querySelectorAll<SVGRectElement>(".rc-seg")];
    expect(segments.map((s) => s.dataset.class)).toEqual(["conceptualQuestion", "delegation"]);
    // 1 of 4 at the bottom (a quarter of 120), 3 of 4 above it.
    expect(segments.map((s) => s.getAttribute("height"))).toEqual(["30", "90"]);
    expect(Number(segments[0].getAttribute("y"))).toBeGreaterThan(Number(segments[1].getAttribute("y")));
    // The classes the chart does not contrast are muted.
    expect(bars[1].querySelector('[data-class="debuggingHelp"]')?.classList.contains("rc-muted")).toBe(true);
    expect([...bars[0].querySelectorAll(".rc-label")].map((t) => t.textContent)).toEqual(["Nov 21"]);
  });

  it("the chart has a text alternative: a summary and a table of the counts", () => {
    const { $ } = dashboard(WITH_DATA);
    expect($("reliance-chart")?.getAttribute("aria-label")).toBe(
      "How you asked Claude Code over 2 days: 8 prompts, 38% asking how or why, 50% asking for the code",
    );
    const rows = [...($("reliance-table")?.querySelectorAll("tbody tr") ?? [])].map((r) => [...r.children].map((c) => c.textContent));
    expect(rows).toEqual([
      ["2026-11-21", "1", "0", "0", "0", "3", "4"],
      ["2026-11-22", "2", "0", "1", "0", "1", "4"],
    ]);
  });

  it("shows the solutions shown then typed and the comprehension tally", () => {
    const { $ } = dashboard(WITH_DATA);
    expect($("dash-solutions-shown")?.textContent).toBe("3");
    expect($("comprehension-tally")?.textContent).toBe("2 correct · 1 partial · 0 incorrect · 1 skipped");
  });

  it("shows a friendly empty state instead of an empty chart", () => {
    const { $ } = dashboard(EMPTY);
    expect($("learning-empty")?.textContent).toMatch(/^No learning signals yet\./);
    expect($("reliance-chart")).toBeNull();
    expect($("comprehension-tally")).toBeNull();
  });

  it("without prompts in the period still shows the tally, and says there were none", () => {
    const { $ } = dashboard({ ...EMPTY, comprehension: { correct: 1, partial: 0, incorrect: 0, skipped: 0 } });
    expect($("reliance-none")?.textContent).toBe("No prompts to Claude Code in this period.");
    expect($("reliance-chart")).toBeNull();
    expect($("comprehension-tally")?.textContent).toBe("1 correct · 0 partial · 0 incorrect · 0 skipped");
  });

  it("labels days and weeks briefly, and labels every n-th bucket when there are many", () => {
    expect(bucketLabel("2026-11-02")).toBe("Nov 2");
    expect(bucketLabel("2026-W47")).toBe("W47");
    expect(chartSummary([{ label: "2026-W47", counts: gauge({ other: 1 }) }])).toBe(
      "How you asked Claude Code over 1 week: 1 prompt, 0% asking how or why, 0% asking for the code",
    );
    const many = Array.from({ length: 30 }, (_, i) => ({ label: `2026-11-${String(i + 1).padStart(2, "0")}`, counts: gauge({ other: 1 }) }));
    const chart = relianceChart(many);
    expect(chart.querySelectorAll(".rc-label")).toHaveLength(10);
    expect(learningView(undefined)[0].dataset.testid).toBe("learning-empty");
  });
});

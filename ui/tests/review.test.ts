// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

// The desktop shell's commands as the window has them: `export_learning_record` answers
// with what the test sets.
const invoke = vi.fn();
vi.mock("@tauri-apps/api/core", () => ({ invoke: (...args: unknown[]) => invoke(...args) }));

const { Dashboard, OPEN_KATA_EVENT } = await import("../src/dashboard");
const { ASKING_TEXT, CAUGHT_UP_TEXT, GRADING_TEXT, ReviewPanel, comesBack } = await import("../src/review");
const { verifyCommand } = await import("../src/record");
const { byTestId, recordingTransport } = await import("./support");
import type { DashboardState, ReviewDue, ReviewGraded, ReviewItemView, ReviewQuestion } from "../src/protocol";
import type { RecordOptions } from "../src/record";

type RecordHook = { record?: RecordOptions };

function item(id: string, kind: string, topic: string, extra: Partial<ReviewItemView> = {}): ReviewItemView {
  return { id, kind, topic, due: "2026-03-01T09:00:00Z", ...extra };
}

const GAP = item("r-1", "gap", "async error handling");
const CONCEPT = item("r-2", "concept", "const bindings", { skillArea: "javascript" });
const KATA = item("r-3", "kata", "Backoff kata");

function due(...items: ReviewItemView[]): ReviewDue {
  return { dueCount: items.length, items };
}

function question(itemId: string, extra: Partial<ReviewQuestion> = {}): ReviewQuestion {
  return { itemId, kind: "gap", topic: "async error handling", question: "What does the caller see when an awaited promise rejects?", concept: "promise rejection", ...extra };
}

function graded(itemId: string, extra: Partial<ReviewGraded> = {}): ReviewGraded {
  return { itemId, grade: "correct", why: "Right: the await throws in the caller.", rating: "good", intervalDays: 3, nextDue: "2026-03-04T09:00:00Z", addressed: false, ...extra };
}

function state(reviewsDue: number): DashboardState {
  return {
    dreyfus: [],
    stats: { period: "all", sessionsCompleted: 1, totalCoachingMinutes: 20, issuesWorkedOn: 1, knowledgeGapsIdentified: 1, knowledgeGapsAddressed: 0, hintsUsed: 0, apiCostTotal: 0 },
    inProgressSessions: [],
    katas: [],
    learning: { reliance: [], solutionsShown: 0, comprehension: { correct: 0, partial: 0, incorrect: 1, skipped: 0 } },
    reviewsDue,
  };
}

/** A dashboard whose "N reviews due" opens the review drawer over `layout`. */
function setup(hooks: RecordHook = { record: { desktop: false } }) {
  const { sent, transport } = recordingTransport();
  const layout = document.createElement("main");
  const elsewhere = document.createElement("textarea");
  elsewhere.dataset.testid = "elsewhere";
  document.body.replaceChildren(layout, elsewhere);
  const panel = new ReviewPanel(layout, transport);
  const dash = new Dashboard(transport, { start: () => {}, openExternal: null, openReviews: () => panel.show(), ...hooks });
  layout.append(dash.root);
  const { $, $$ } = byTestId(document.body);
  const sentOf = (type: string) => sent.filter((s) => s.type === type).map((s) => s.payload);
  return { sent, sentOf, panel, dash, layout, elsewhere, $, $$ };
}

function key(target: Element, init: KeyboardEventInit) {
  const event = new KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init });
  target.dispatchEvent(event);
  return event;
}

/** The drawer opened from the dashboard with GAP and CONCEPT due, GAP's question on screen. */
function answering() {
  const ui = setup();
  ui.dash.setState(state(2));
  ui.$("reviews-due")!.click();
  ui.panel.dueList(due(GAP, CONCEPT));
  ui.$("review-open")!.click();
  ui.panel.question(question("r-1"));
  return ui;
}

afterEach(() => {
  invoke.mockReset();
  vi.restoreAllMocks();
  delete (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__;
});

describe("reviews due on the dashboard", () => {
  it("the due count from the state is a button that opens the review drawer on the due items", () => {
    const ui = setup();
    ui.dash.setState(state(2));
    const button = ui.$("reviews-due");
    expect(button?.textContent).toBe("2 reviews due");
    expect(ui.$("review")).toBeNull();
    button!.click();
    expect(ui.panel.isOpen).toBe(true);
    expect(ui.sentOf("reviews:list").length).toBeGreaterThanOrEqual(1);
    expect(ui.$("review-loading")?.textContent).toBe("Loading the reviews due…");
    ui.panel.dueList(due(GAP, CONCEPT));
    const rows = ui.$$("review-item");
    expect(rows.map((r) => r.dataset.itemId)).toEqual(["r-1", "r-2"]);
    expect(rows.map((r) => r.querySelector('[data-testid="review-open"]')?.textContent)).toEqual(["async error handling", "const bindings"]);
    // The kind as a word, not a colour alone.
    expect(rows.map((r) => r.querySelector('[data-testid="review-kind"]')?.textContent)).toEqual(["Knowledge gap", "Concept"]);
    expect(rows[1].textContent).toContain("javascript");
    expect(ui.$("review-count")?.textContent).toBe("2 reviews due");
  });

  it("a state asks for the reviews due, whose answer updates the count; none shows a quiet line, not a button", () => {
    const ui = setup();
    ui.dash.setState(state(0));
    // reviews:list makes items of what is new since; its reviews:due has the count.
    expect(ui.sentOf("reviews:list")).toEqual([{}]);
    expect(ui.$("reviews-due")).toBeNull();
    expect(ui.$("reviews-none")?.textContent).toBe("No reviews due");
    ui.dash.setReviewsDue(due(GAP));
    expect(ui.$("reviews-due")?.textContent).toBe("1 review due");
    ui.dash.setReviewsDue(due());
    expect(ui.$("reviews-due")).toBeNull();
  });
});

describe("the review drawer", () => {
  it("opening an item sends reviews:start and shows progress, then the question with the keys in the answer box", () => {
    const ui = setup();
    ui.dash.setState(state(2));
    ui.$("reviews-due")!.click();
    ui.panel.dueList(due(GAP, CONCEPT));
    // The keys on the first item: Enter opens it.
    expect(document.activeElement).toBe(ui.$("review-open"));
    ui.$("review-open")!.click();
    expect(ui.sentOf("reviews:start")).toEqual([{ itemId: "r-1" }]);
    expect(ui.$("review-asking")?.textContent).toBe(ASKING_TEXT);
    expect(ui.$("review-asking")?.getAttribute("role")).toBe("status");
    expect(ui.$("review-topic")?.textContent).toBe("async error handling");
    expect(ui.$("review-answer")).toBeNull();
    ui.panel.question(question("r-1"));
    expect(ui.$("review-asking")).toBeNull();
    expect(ui.$("review-question")?.textContent).toBe("What does the caller see when an awaited promise rejects?");
    expect(ui.$("review-card")?.textContent).toContain("promise rejection");
    expect(document.activeElement).toBe(ui.$("review-answer"));
  });

  it("Enter sends the answer and shows progress while it is graded; Shift+Enter does not send", () => {
    const ui = answering();
    const box = ui.$<HTMLTextAreaElement>("review-answer")!;
    box.value = "It throws in the caller,";
    const shifted = key(box, { key: "Enter", shiftKey: true });
    expect(shifted.defaultPrevented).toBe(false);
    expect(ui.sentOf("reviews:answer")).toEqual([]);
    box.value = "It throws in the caller,\nat the await";
    const enter = key(box, { key: "Enter" });
    expect(enter.defaultPrevented).toBe(true);
    expect(ui.sentOf("reviews:answer")).toEqual([{ itemId: "r-1", answer: "It throws in the caller,\nat the await" }]);
    expect(ui.$("review-grading")?.textContent).toBe(GRADING_TEXT);
    expect(ui.$("review-answer-echo")?.textContent).toBe("It throws in the caller,\nat the await");
    expect(ui.$("review-answer")).toBeNull();
    // Enter again sends nothing more; an empty box sends nothing either.
    key(box, { key: "Enter" });
    expect(ui.sentOf("reviews:answer").length).toBe(1);
  });

  it("an empty answer is not sent", () => {
    const ui = answering();
    const box = ui.$<HTMLTextAreaElement>("review-answer")!;
    box.value = "   ";
    key(box, { key: "Enter" });
    expect(ui.sentOf("reviews:answer")).toEqual([]);
  });

  it("a graded answer shows the grade with its sign, why and when the item comes back; Next review has the keys and opens the next item", () => {
    const ui = answering();
    const box = ui.$<HTMLTextAreaElement>("review-answer")!;
    box.value = "It throws at the await";
    key(box, { key: "Enter" });
    ui.panel.graded(graded("r-1"));
    const badge = ui.$("review-grade");
    expect(badge?.textContent).toBe("✓ Correct");
    expect(badge?.dataset.grade).toBe("correct");
    expect(ui.$("review-why")?.textContent).toBe("Right: the await throws in the caller.");
    expect(ui.$("review-comes-back")?.textContent).toBe("Again in 3 days");
    expect(ui.$("review-comes-back")?.dataset.addressed).toBe("false");
    // The fresh due list follows the grade; the item answered is gone from it.
    ui.panel.dueList(due(CONCEPT));
    const next = ui.$("review-next");
    expect(next?.textContent).toBe("Next review");
    expect(document.activeElement).toBe(next);
    next!.click();
    expect(ui.sentOf("reviews:start")).toEqual([{ itemId: "r-1" }, { itemId: "r-2" }]);
    expect(ui.$("review-topic")?.textContent).toBe("const bindings");
    expect(ui.$("review-asking")).not.toBeNull();
  });

  it("a stable interval says the gap is remembered and counts as addressed; Again says tomorrow", () => {
    const ui = answering();
    const box = ui.$<HTMLTextAreaElement>("review-answer")!;
    box.value = "It throws at the await";
    key(box, { key: "Enter" });
    ui.panel.graded(graded("r-1", { rating: "easy", intervalDays: 12, nextDue: "2026-03-13T09:00:00Z", addressed: true }));
    expect(ui.$("review-comes-back")?.textContent).toBe("Again in 12 days — remembered: this gap counts as addressed");
    expect(ui.$("review-comes-back")?.dataset.addressed).toBe("true");
    expect(comesBack({ intervalDays: 1, addressed: false }, "concept")).toBe("Again tomorrow");
    expect(comesBack({ intervalDays: 9, addressed: true }, "concept")).toBe("Again in 9 days — remembered: this concept counts as addressed");
  });

  it("partial and incorrect grades carry their sign as well as their colour", () => {
    for (const [grade, text] of [["partial", "◐ Partial"], ["incorrect", "✗ Incorrect"]]) {
      const ui = answering();
      const box = ui.$<HTMLTextAreaElement>("review-answer")!;
      box.value = "not sure";
      key(box, { key: "Enter" });
      ui.panel.graded(graded("r-1", { grade, rating: grade === "partial" ? "hard" : "again", intervalDays: 1, why: "Half of it." }));
      expect(ui.$("review-grade")?.textContent).toBe(text);
      expect(ui.$("review-comes-back")?.textContent).toBe("Again tomorrow");
      ui.panel.close();
    }
  });

  it("with nothing left due the drawer says All caught up", () => {
    const ui = answering();
    const box = ui.$<HTMLTextAreaElement>("review-answer")!;
    box.value = "It throws at the await";
    key(box, { key: "Enter" });
    ui.panel.graded(graded("r-1"));
    ui.panel.dueList(due());
    expect(ui.$("review-next")).toBeNull();
    expect(ui.$("review-caught-up")?.textContent).toContain(CAUGHT_UP_TEXT);
    // The list view says the same.
    ui.$("review-back")!.click();
    expect(ui.$("review-caught-up")?.textContent).toContain(CAUGHT_UP_TEXT);
    expect(ui.$$("review-item")).toEqual([]);
  });

  it("an error while writing the question shows beside the item, its details folded, with a Retry that asks again", () => {
    const ui = setup();
    ui.panel.show();
    ui.panel.dueList(due(GAP, CONCEPT));
    ui.$("review-open")!.click();
    expect(ui.panel.error({ itemId: "r-1", error: "Paige could not write the review question: the model is overloaded.\nHTTP 529 overloaded_error" })).toBe(true);
    const error = ui.$("review-error");
    expect(error?.closest('[data-testid="review-card"]')?.getAttribute("data-item-id")).toBe("r-1");
    expect(error?.querySelector(".error-sentence")?.textContent).toBe("Paige could not write the review question: the model is overloaded.");
    expect(error?.querySelector('[data-testid="error-details"]')?.textContent).toContain("HTTP 529");
    ui.$("review-retry")!.click();
    expect(ui.sentOf("reviews:start")).toEqual([{ itemId: "r-1" }, { itemId: "r-1" }]);
    expect(ui.$("review-asking")).not.toBeNull();
    expect(ui.$("review-error")).toBeNull();
  });

  it("an error while grading keeps the answer in its box, beside it a Retry that resends it", () => {
    const ui = answering();
    const box = ui.$<HTMLTextAreaElement>("review-answer")!;
    box.value = "It throws at the await";
    key(box, { key: "Enter" });
    ui.panel.error({ itemId: "r-1", error: "Paige could not grade this answer; try again." });
    expect(ui.$("review-error")?.textContent).toContain("Paige could not grade this answer");
    expect(ui.$<HTMLTextAreaElement>("review-answer")?.value).toBe("It throws at the await");
    expect(ui.$("review-question")).not.toBeNull();
    ui.$("review-retry")!.click();
    expect(ui.sentOf("reviews:answer")).toEqual([
      { itemId: "r-1", answer: "It throws at the await" },
      { itemId: "r-1", answer: "It throws at the await" },
    ]);
    expect(ui.$("review-grading")).not.toBeNull();
  });

  it("a list that cannot be loaded says so in the drawer with a Retry", () => {
    const ui = setup();
    ui.panel.show();
    expect(ui.panel.error({ error: "Paige cannot read its database.\nlocked" })).toBe(true);
    expect(ui.$("review-list-error")?.querySelector(".error-sentence")?.textContent).toBe("Paige cannot read its database.");
    ui.$("review-list-retry")!.click();
    expect(ui.sentOf("reviews:list")).toEqual([{}, {}]);
  });

  it("replies for an item the learner left are dropped; an error with the drawer closed is left to the caller", () => {
    const ui = answering();
    ui.$("review-back")!.click();
    ui.panel.question(question("r-1"));
    expect(ui.$("review-question")).toBeNull();
    expect(ui.panel.error({ itemId: "r-1", error: "late" })).toBe(false);
    ui.panel.close();
    expect(ui.panel.error({ itemId: "r-2", error: "closed" })).toBe(false);
  });

  it("a kata's review offers to open the kata in Practice", () => {
    const ui = setup();
    ui.panel.show();
    ui.panel.dueList(due(KATA));
    ui.$("review-open")!.click();
    ui.panel.question(question("r-3", { kind: "kata", topic: "Backoff kata", kataId: "k-7" }));
    const opened: string[] = [];
    ui.layout.addEventListener(OPEN_KATA_EVENT, (e) => opened.push((e as CustomEvent<{ kataId: string }>).detail.kataId));
    ui.$("review-open-kata")!.click();
    expect(opened).toEqual(["k-7"]);
    // Other kinds have no such button.
    const other = answering();
    expect(other.$("review-open-kata")).toBeNull();
  });

  it("a question that arrives while the learner types elsewhere leaves the keys there", () => {
    const ui = setup();
    ui.panel.show();
    ui.panel.dueList(due(GAP));
    ui.$("review-open")!.click();
    ui.elsewhere.focus();
    ui.panel.question(question("r-1"));
    expect(document.activeElement).toBe(ui.elsewhere);
  });

  it("Escape closes the drawer", () => {
    const ui = answering();
    expect(ui.$("review")).not.toBeNull();
    key(ui.$("review-answer")!, { key: "Escape" });
    expect(ui.$("review")).toBeNull();
    expect(ui.panel.isOpen).toBe(false);
  });
});

describe("exporting the learning record", () => {
  const exported = { fileName: "paige-record-2026-03-01.jsonl", content: '{"line":1}\n{"line":2}\n', lines: 2, sessions: 1, publicKey: "ab".repeat(32) };

  beforeEach(() => {
    vi.spyOn(URL, "revokeObjectURL").mockImplementation(() => {});
  });

  it("in the browser sends record:export and downloads the content under its file name, then says what was saved and the key to pin", async () => {
    const blobs: Blob[] = [];
    vi.spyOn(URL, "createObjectURL").mockImplementation((blob) => {
      blobs.push(blob as Blob);
      return "blob:record";
    });
    const clicks: { download: string; href: string; connected: boolean }[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
      clicks.push({ download: this.download, href: this.href, connected: this.isConnected });
    });
    const ui = setup();
    ui.$("record-export-button")!.click();
    expect(ui.sentOf("record:export")).toEqual([{}]);
    expect(ui.$("record-exporting")?.textContent).toBe("Exporting…");
    expect(ui.$<HTMLButtonElement>("record-export-button")?.disabled).toBe(true);
    ui.dash.record.exported(exported);
    expect(clicks).toEqual([{ download: "paige-record-2026-03-01.jsonl", href: "blob:record", connected: true }]);
    expect(await blobs[0].text()).toBe(exported.content);
    expect(document.querySelectorAll("a[download]").length).toBe(0);
    expect(ui.$("record-summary")?.textContent).toBe("Saved 2 lines (1 session) as paige-record-2026-03-01.jsonl.");
    expect(ui.$("record-key")?.textContent).toBe(exported.publicKey);
    expect(ui.$("record-verify")?.textContent).toBe(`paige record verify paige-record-2026-03-01.jsonl --key ${exported.publicKey}`);
  });

  it("an export error shows beside the button with a Retry that asks again", () => {
    const ui = setup();
    ui.$("record-export-button")!.click();
    expect(ui.dash.record.failed({ error: "The record key has loose permissions (0644): run chmod 600.\n/home/u/.paige/record-key" })).toBe(true);
    const error = ui.$("record-error");
    expect(error?.closest('[data-testid="record-export"]')).not.toBeNull();
    expect(error?.querySelector(".error-sentence")?.textContent).toBe("Could not export the learning record: The record key has loose permissions (0644): run chmod 600.");
    ui.$("record-retry")!.click();
    expect(ui.sentOf("record:export")).toEqual([{}, {}]);
    // A record that nobody asked for is not downloaded.
    const click = vi.spyOn(HTMLAnchorElement.prototype, "click");
    ui.dash.record.failed({ error: "again" });
    ui.dash.record.exported(exported);
    expect(click).not.toHaveBeenCalled();
  });

  it("in the desktop app invokes export_learning_record, which saves through its dialog, and shows where", async () => {
    (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__ = {};
    invoke.mockResolvedValueOnce({ path: "/home/u/My record.jsonl", lines: 7, sessions: 2, publicKey: "cd".repeat(32) });
    const ui = setup({});
    ui.$("record-export-button")!.click();
    expect(ui.$("record-exporting")?.textContent).toBe("Choose where to save it…");
    await vi.waitFor(() => expect(invoke).toHaveBeenCalledWith("export_learning_record", { since: null }));
    expect(ui.sentOf("record:export")).toEqual([]);
    await vi.waitFor(() => expect(ui.$("record-summary")?.textContent).toBe("Saved 7 lines (2 sessions) to /home/u/My record.jsonl."));
    expect(ui.$("record-verify")?.textContent).toBe(`paige record verify '/home/u/My record.jsonl' --key ${"cd".repeat(32)}`);
  });

  it("in the desktop app a cancelled dialog saves nothing and says nothing; a failed command shows beside the button with Retry", async () => {
    (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__ = {};
    invoke.mockResolvedValueOnce(null);
    const ui = setup({});
    ui.$("record-export-button")!.click();
    await vi.waitFor(() => expect(ui.$<HTMLButtonElement>("record-export-button")?.disabled).toBe(false));
    expect(ui.$("record-saved")).toBeNull();
    expect(ui.$("record-error")).toBeNull();
    invoke.mockRejectedValueOnce({ code: "dialog", message: "The save dialog could not open." });
    ui.$("record-export-button")!.click();
    await vi.waitFor(() => expect(ui.$("record-error")?.textContent).toContain("The save dialog could not open."));
    invoke.mockResolvedValueOnce({ path: "/tmp/r.jsonl", lines: 1, sessions: 0, publicKey: "ef".repeat(32) });
    ui.$("record-retry")!.click();
    await vi.waitFor(() => expect(ui.$("record-summary")?.textContent).toBe("Saved 1 line (0 sessions) to /tmp/r.jsonl."));
    expect(invoke).toHaveBeenCalledTimes(3);
  });

  it("the verify command quotes a file name the shell would split", () => {
    expect(verifyCommand("record.jsonl", "k")).toBe("paige record verify record.jsonl --key k");
    expect(verifyCommand("it's mine.jsonl", "k")).toBe("paige record verify 'it'\\''s mine.jsonl' --key k");
  });
});

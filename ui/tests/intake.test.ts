// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CoachingPanel } from "../src/coaching";
import { IntakePanel, TICK_MS, TYPING_REPEAT_MS, countdownText, reasonText } from "../src/intake";
import type { IntakeState, PhaseSummary } from "../src/protocol";
import { byTestId, recordingTransport } from "./support";

const T0 = 1_800_000_000_000;

function setup(sessionId: string | null = "s-1") {
  const { sent, transport } = recordingTransport();
  const clock = { t: T0 };
  const panel = new IntakePanel(transport, { now: () => clock.t });
  document.body.replaceChildren(panel.root);
  panel.setSession(sessionId);
  const { $, $$ } = byTestId(panel.root);
  const input = () => $<HTMLTextAreaElement>("intake-input")!;
  const lines = () => $$("intake-line").map((l) => `${l.dataset.role}: ${l.querySelector(".intake-text")?.textContent}`);
  return { sent, clock, panel, $, $$, input, lines };
}

function state(extra: Partial<IntakeState> = {}): IntakeState {
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
    transcript: [],
    awaitingAnswer: false,
    ...extra,
  };
}

function type(input: HTMLTextAreaElement, text: string) {
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

function press(input: HTMLTextAreaElement, key: string, shiftKey = false): boolean {
  return input.dispatchEvent(new KeyboardEvent("keydown", { key, shiftKey, bubbles: true, cancelable: true }));
}

/** The interviewer asked the first question and waits for an answer. */
function asked(ui: ReturnType<typeof setup>, question = "What have you built lately?") {
  ui.panel.state(state());
  ui.panel.sentence({ turn: 1, text: question });
  ui.panel.replyDone({ turn: 1, text: question });
}

describe("the interview's transcript", () => {
  it("streamed sentences build the interviewer's reply and reply_done replaces it with the final text", () => {
    const ui = setup();
    ui.panel.state(state());
    ui.panel.sentence({ turn: 1, text: "Hi, I'm Paige." });
    expect(ui.lines()).toEqual(["interviewer: Hi, I'm Paige."]);
    expect(ui.$("intake-line")?.dataset.streaming).toBe("true");
    ui.panel.sentence({ turn: 1, text: "What have you built lately?" });
    expect(ui.lines()).toEqual(["interviewer: Hi, I'm Paige. What have you built lately?"]);
    ui.panel.replyDone({ turn: 1, text: "Hi, I'm Paige! What have you built lately?" });
    expect(ui.lines()).toEqual(["interviewer: Hi, I'm Paige! What have you built lately?"]);
    expect(ui.$("intake-line")?.dataset.streaming).toBeUndefined();
    expect(ui.input().disabled).toBe(false);
  });

  it("a reload rebuilds the transcript from the state, and the reply cut off keeps streaming into its line", () => {
    const ui = setup();
    ui.panel.state(
      state({
        transcript: [
          { role: "interviewer", text: "What have you built lately?" },
          { role: "learner", text: "A chess engine." },
          { role: "interviewer", text: "Nice." },
        ],
        awaitingAnswer: false,
      }),
    );
    expect(ui.lines()).toEqual(["interviewer: What have you built lately?", "learner: A chess engine.", "interviewer: Nice."]);
    expect(ui.$("intake-thinking")).toBeNull();
    ui.panel.sentence({ turn: 2, text: "How did you test it?" });
    expect(ui.lines().at(-1)).toBe("interviewer: Nice. How did you test it?");
    expect(ui.$$("intake-line")).toHaveLength(3);
  });

  it("a state with a transcript the panel does not have replaces the panel's lines", () => {
    const ui = setup();
    asked(ui, "First question?");
    ui.panel.state(state({ transcript: [{ role: "interviewer", text: "Another question?" }], awaitingAnswer: true }));
    expect(ui.lines()).toEqual(["interviewer: Another question?"]);
  });

  it("a state that lags behind the panel keeps the panel's lines and the answer just sent", () => {
    const ui = setup();
    asked(ui);
    type(ui.input(), "A chess engine.");
    press(ui.input(), "Enter");
    ui.panel.state(state({ transcript: [{ role: "interviewer", text: "What have you built lately?" }], awaitingAnswer: true }));
    expect(ui.lines()).toEqual(["interviewer: What have you built lately?", "learner: A chess engine."]);
    expect(ui.input().disabled).toBe(true);
    expect(ui.$("intake-thinking")).not.toBeNull();
  });
});

describe("answering", () => {
  it("typing:true is sent once for a burst of keystrokes, and typing:false when the input is emptied without sending", () => {
    const ui = setup();
    asked(ui);
    type(ui.input(), "A");
    type(ui.input(), "A c");
    type(ui.input(), "A chess");
    expect(ui.sent).toEqual([{ type: "intake:typing", payload: { typing: true } }]);
    type(ui.input(), "");
    expect(ui.sent.at(-1)).toEqual({ type: "intake:typing", payload: { typing: false } });
    type(ui.input(), "B");
    expect(ui.sent.map((s) => s.payload)).toEqual([{ typing: true }, { typing: false }, { typing: true }]);
  });

  it("while keystrokes continue typing:true is sent again at most every TYPING_REPEAT_MS, and not at all when they stop", () => {
    const ui = setup();
    asked(ui);
    const typings = () => ui.sent.filter((s) => s.type === "intake:typing").map((s) => s.payload);
    let text = "";
    const key = (ms: number) => {
      ui.clock.t += ms;
      text += "a";
      type(ui.input(), text);
    };
    key(0);
    expect(typings()).toEqual([{ typing: true }]);
    // A key a second: no repeat before 5 s have passed since the last typing:true...
    for (let i = 0; i < 4; i++) key(1000);
    expect(typings()).toHaveLength(1);
    key(999);
    expect(typings()).toHaveLength(1);
    // ...then one at the first key on or after 5 s, and the next 5 s counted from it.
    key(1);
    expect(typings()).toEqual([{ typing: true }, { typing: true }]);
    key(4999);
    expect(typings()).toHaveLength(2);
    key(1);
    expect(typings()).toHaveLength(3);
    // Without keystrokes nothing more goes up, however long the pause.
    ui.clock.t += 60_000;
    expect(typings()).toHaveLength(3);
    // After a pause the next key repeats it at once (the server may count the learner done).
    key(0);
    expect(typings()).toHaveLength(4);
    // After sending, the next answer's first key sends it at once, whatever the time.
    ui.$("intake-send")!.click();
    ui.panel.sentence({ turn: 2, text: "And then?" });
    ui.panel.replyDone({ turn: 2, text: "And then?" });
    text = "";
    key(1);
    expect(typings()).toHaveLength(5);
    expect(TYPING_REPEAT_MS).toBe(5000);
  });

  it("the answer box keeps the keys and the caret while the guard's state arrives mid-answer", () => {
    const ui = setup();
    asked(ui);
    const input = ui.input();
    input.focus();
    type(input, "A chess");
    input.setSelectionRange(2, 2);
    // The server answers typing:true with a state; the panel redraws around the box.
    ui.panel.state(state({ transcript: [{ role: "interviewer", text: "What have you built lately?" }], awaitingAnswer: true }));
    expect(document.activeElement).toBe(ui.input());
    expect(ui.input().value).toBe("A chess");
    expect([ui.input().selectionStart, ui.input().selectionEnd]).toEqual([2, 2]);
  });

  it("Send sends the trimmed answer, clears the input, shows the learner's line and Paige thinking until the next sentence", () => {
    const ui = setup();
    asked(ui);
    type(ui.input(), "  A chess engine in Rust.\n");
    ui.$("intake-send")!.click();
    expect(ui.sent.at(-1)).toEqual({ type: "intake:answer", payload: { text: "A chess engine in Rust." } });
    expect(ui.input().value).toBe("");
    expect(ui.lines()).toEqual(["interviewer: What have you built lately?", "learner: A chess engine in Rust."]);
    expect(ui.$("intake-thinking")?.textContent).toBe("Paige is thinking…");
    expect(ui.input().disabled).toBe(true);
    ui.panel.sentence({ turn: 2, text: "How did you search the moves?" });
    expect(ui.$("intake-thinking")).toBeNull();
    expect(ui.lines().at(-1)).toBe("interviewer: How did you search the moves?");
    // The next answer starts typing afresh.
    ui.panel.replyDone({ turn: 2, text: "How did you search the moves?" });
    type(ui.input(), "M");
    expect(ui.sent.filter((s) => s.type === "intake:typing").map((s) => s.payload)).toEqual([{ typing: true }, { typing: true }]);
  });

  it("Enter sends the answer and Shift+Enter leaves a new line to the textarea", () => {
    const ui = setup();
    asked(ui);
    type(ui.input(), "Line one");
    expect(press(ui.input(), "Enter", true)).toBe(true);
    expect(ui.sent.some((s) => s.type === "intake:answer")).toBe(false);
    type(ui.input(), "Line one\nLine two");
    expect(press(ui.input(), "Enter")).toBe(false);
    expect(ui.sent.at(-1)).toEqual({ type: "intake:answer", payload: { text: "Line one\nLine two" } });
  });

  it("a blank answer is not sent", () => {
    const ui = setup();
    asked(ui);
    type(ui.input(), "   ");
    press(ui.input(), "Enter");
    ui.$<HTMLButtonElement>("intake-send")!.click();
    expect(ui.sent.map((s) => s.type)).toEqual(["intake:typing"]);
    expect(ui.$<HTMLButtonElement>("intake-send")!.disabled).toBe(true);
  });

  it("the input is disabled while the interviewer is writing and nothing can be sent", () => {
    const ui = setup();
    ui.panel.state(state({ awaitingAnswer: false }));
    expect(ui.input().disabled).toBe(true);
    expect(ui.$("intake-thinking")).not.toBeNull();
    ui.panel.sentence({ turn: 1, text: "Hello." });
    expect(ui.input().disabled).toBe(true);
    ui.input().value = "sneaky";
    press(ui.input(), "Enter");
    expect(ui.sent).toEqual([]);
  });
});

describe("the guard's debug panel", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("the countdown shows 04:00, ticks every 250 ms on the panel's clock and stops at 00:00", () => {
    const ui = setup();
    ui.panel.state(state({ remainingMs: 240_000, atMs: T0 }));
    const countdown = () => ui.$("intake-countdown")!.textContent;
    expect(countdown()).toBe("04:00");
    ui.clock.t = T0 + 1_500;
    expect(countdown()).toBe("04:00");
    vi.advanceTimersByTime(TICK_MS);
    expect(countdown()).toBe("03:59");
    ui.clock.t = T0 + 61_000;
    vi.advanceTimersByTime(TICK_MS);
    expect(countdown()).toBe("02:59");
    ui.clock.t = T0 + 300_000;
    vi.advanceTimersByTime(TICK_MS);
    expect(countdown()).toBe("00:00");
  });

  it("the countdown counts from the state's atMs, so a state that took a while to arrive is not behind", () => {
    const ui = setup();
    ui.clock.t = T0 + 2_000;
    ui.panel.state(state({ remainingMs: 100_000, atMs: T0 }));
    expect(ui.$("intake-countdown")!.textContent).toBe("01:38");
  });

  it("before the first question the countdown waits at the full timebox", () => {
    const ui = setup();
    ui.panel.state(state({ phase: "not_started", remainingMs: 240_000 }));
    ui.clock.t = T0 + 10_000;
    vi.advanceTimersByTime(TICK_MS * 4);
    expect(ui.$("intake-countdown")!.textContent).toBe("04:00");
    expect(ui.$("intake-thinking")).not.toBeNull();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the debug fields, confidence bars and latest pillars show the state", () => {
    const ui = setup();
    ui.panel.state(
      state({
        zeroRuns: 1,
        projectsUsed: 2,
        stopCheck: true,
        weights: { adaptability: 4.67, creativity: 0.5, reasoning: 2.33 },
        confidence: { adaptability: 0.7, creativity: 0.2, reasoning: 0.54 },
        tau: { adaptability: 0.7, creativity: 0.7, reasoning: 0.6 },
        lastPillars: {
          adaptability: { score: 80, rationale: "“we switched to SQLite”" },
          creativity: { score: 0, rationale: "no new idea" },
          reasoning: { score: 55, rationale: "“because the locks were slow”" },
        },
      }),
    );
    expect(ui.$("intake-debug")).toBeInstanceOf(HTMLDetailsElement);
    expect(ui.$("intake-zero-runs")!.textContent).toBe("1");
    expect(ui.$("intake-projects")!.textContent).toBe("2");
    expect(ui.$("intake-stop-check")!.textContent).toBe("true");
    expect(ui.$("intake-reason")!.textContent).toBe("–");
    const bar = (trait: string) => {
      const row = ui.$(`intake-conf-${trait}`)!;
      return {
        fill: row.querySelector<HTMLElement>(".intake-bar-fill")!.style.width,
        tau: row.querySelector<HTMLElement>(".intake-bar-tau")!.style.left,
        text: row.querySelector(".intake-conf-value")!.textContent,
        met: row.classList.contains("intake-conf-met"),
      };
    };
    expect(bar("adaptability")).toEqual({ fill: "70%", tau: "70%", text: "0.70 / τ 0.70", met: true });
    expect(bar("creativity")).toEqual({ fill: "20%", tau: "70%", text: "0.20 / τ 0.70", met: false });
    expect(bar("reasoning")).toEqual({ fill: "54%", tau: "60%", text: "0.54 / τ 0.60", met: false });
    const pillars = ui.$("intake-pillars")!.querySelectorAll("li");
    expect([...pillars].map((p) => p.textContent)).toEqual([
      "adaptability 80“we switched to SQLite”",
      "creativity 0no new idea",
      "reasoning 55“because the locks were slow”",
    ]);
  });

  it("before any answer is scored the pillars say so", () => {
    const ui = setup();
    ui.panel.state(state());
    expect(ui.$("intake-pillars")!.textContent).toBe("No answer scored yet.");
  });
});

describe("the transition and errors", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("the coding question shows once, in its box, though the state after the transition has it as the transcript's last line", () => {
    const ui = setup();
    asked(ui);
    const codingQuestion = "Now let's switch to coding. Add retries to the uploader.";
    ui.panel.transition({ sessionId: "s-1", reason: "timebox", reasons: ["timebox"], codingQuestion });
    ui.panel.state(
      state({
        phase: "coding",
        reason: "timebox",
        reasons: ["timebox"],
        transcript: [
          { role: "interviewer", text: "What have you built lately?" },
          { role: "interviewer", text: codingQuestion },
        ],
      }),
    );
    expect(ui.lines()).toEqual(["interviewer: What have you built lately?"]);
    expect(ui.$("intake-coding-question")!.textContent).toContain(codingQuestion);
  });

  it("the transition shows the coding question and its reason, freezes the countdown and takes the input away", () => {
    const ui = setup();
    asked(ui);
    type(ui.input(), "half an answer");
    ui.clock.t = T0 + 200_000;
    ui.panel.transition({ sessionId: "s-1", reason: "timebox", reasons: ["timebox", "gate"], codingQuestion: "Add retries to the uploader." });
    const question = ui.$("intake-coding-question")!;
    expect(question.textContent).toContain("Add retries to the uploader.");
    expect(question.textContent).toContain("Next: answer in the terminal, where Claude Code has this task");
    expect(question.textContent).toContain("time is up");
    expect(ui.$("intake-reason")!.textContent).toBe("timebox (also: gate)");
    expect(ui.$("intake-input")).toBeNull();
    expect(ui.$("intake-send")).toBeNull();
    expect(ui.$("intake-countdown")!.textContent).toBe("00:40");
    ui.clock.t = T0 + 230_000;
    vi.advanceTimersByTime(TICK_MS * 4);
    expect(ui.$("intake-countdown")!.textContent).toBe("00:40");
    expect(vi.getTimerCount()).toBe(0);
    // A late state cannot reopen the interview.
    ui.panel.state(state({ phase: "background", awaitingAnswer: true, atMs: ui.clock.t, transcript: [{ role: "interviewer", text: "What have you built lately?" }] }));
    expect(ui.$("intake-input")).toBeNull();
    expect(ui.$("intake-coding-question")).not.toBeNull();
    expect(ui.$("intake-countdown")!.textContent).toBe("00:40");
  });

  it("a state in the coding phase shows the interview over, its reason and the countdown where it stopped", () => {
    const ui = setup();
    ui.panel.state(state({ phase: "coding", remainingMs: 0, reason: "projects_cap", reasons: ["projects_cap"], transcript: [{ role: "interviewer", text: "Thanks!" }] }));
    expect(ui.$("intake-coding-question")!.textContent).toContain("two projects");
    expect(ui.$("intake-reason")!.textContent).toBe("projects_cap");
    expect(ui.$("intake-countdown")!.textContent).toBe("00:00");
    expect(ui.$("intake-input")).toBeNull();
  });

  it("an error shows in the panel, and Retry sends intake:start", () => {
    const ui = setup();
    asked(ui);
    ui.panel.error({ message: "the model is overloaded", retryable: true });
    expect(ui.$("intake-error")!.textContent).toContain("the model is overloaded");
    ui.$("intake-retry")!.click();
    expect(ui.sent).toEqual([{ type: "intake:start", payload: {} }]);
    expect(ui.$("intake-error")).toBeNull();
  });

  it("an error that retrying cannot fix has no Retry", () => {
    const ui = setup();
    ui.panel.error({ message: "no session", retryable: false });
    expect(ui.$("intake-error")!.textContent).toContain("no session");
    expect(ui.$("intake-retry")).toBeNull();
  });

  it("ending the session stops the countdown's timer and forgets the interview", () => {
    const ui = setup();
    ui.panel.state(state());
    expect(vi.getTimerCount()).toBe(1);
    ui.panel.setSession(null);
    expect(vi.getTimerCount()).toBe(0);
    expect(ui.panel.known).toBe(false);
  });
});

describe("the interview in the coaching panel", () => {
  function coaching() {
    const { sent, transport } = recordingTransport();
    const host = document.createElement("aside");
    document.body.replaceChildren(host);
    const panel = new CoachingPanel(host, transport);
    panel.connectionInit({ sessionId: null, capabilities: [], featureFlags: {} });
    panel.sessionStarted({ sessionId: "s-1", issueContext: null, title: "Retry uploads", phases: [], hintLevel: "none" });
    return { sent, host, panel, ...byTestId(host) };
  }
  const phase: PhaseSummary = { number: 1, title: "Find the uploader", description: "Read it", hintLevel: "file", status: "active" };

  it("a session without an interview or a plan offers Interview me first, which sends intake:start", () => {
    const ui = coaching();
    const button = ui.$<HTMLButtonElement>("intake-start")!;
    expect(button.textContent).toBe("Interview me first");
    button.click();
    expect(ui.sent.at(-1)).toEqual({ type: "intake:start", payload: {} });
    expect(ui.$<HTMLButtonElement>("intake-start")!.disabled).toBe(true);
    expect(ui.$("intake-starting")).not.toBeNull();
    ui.panel.intake.error({ message: "the model is unreachable", retryable: true });
    expect(ui.$("intake-error")!.textContent).toContain("the model is unreachable");
    expect(ui.$<HTMLButtonElement>("intake-start")!.disabled).toBe(false);
  });

  it("a refused intake:start (connection:error) shows in the panel with Retry", () => {
    const ui = coaching();
    ui.$("intake-start")!.click();
    expect(ui.panel.requestFailed("intake:start", "intake:start is not implemented yet")).toBe(true);
    expect(ui.$("intake-error")!.textContent).toContain("intake:start is not implemented yet");
    ui.$("intake-retry")!.click();
    expect(ui.sent.filter((s) => s.type === "intake:start")).toHaveLength(2);
  });

  it("a refused answer goes back into the input, with the reason shown", () => {
    const ui = coaching();
    ui.panel.intake.state(state({ transcript: [{ role: "interviewer", text: "Hello?" }], awaitingAnswer: true }));
    const input = ui.$<HTMLTextAreaElement>("intake-input")!;
    type(input, "A chess engine.");
    press(input, "Enter");
    expect(ui.panel.requestFailed("intake:answer", "no interview is running")).toBe(true);
    expect(ui.$("intake-error")!.textContent).toContain("no interview is running");
    expect(ui.$$("intake-line").map((l) => l.dataset.role)).toEqual(["interviewer"]);
    expect(input.value).toBe("A chess engine.");
    expect(input.disabled).toBe(false);
    expect(ui.$("intake-thinking")).toBeNull();
  });

  it("once a plan arrives the offer goes away", () => {
    const ui = coaching();
    ui.panel.planReady({ planId: "p-1", phases: [phase], estimatedDifficulty: "low", memoryConnection: null });
    expect(ui.$("intake-start")).toBeNull();
    expect(ui.$("intake")).toBeNull();
  });

  it("an interview's state shows its panel in the session view instead of the plan's waiting line", () => {
    const ui = coaching();
    ui.panel.intake.state(state({ phase: "not_started" }));
    expect(ui.$("intake-start")).toBeNull();
    expect(ui.$("intake-transcript")).not.toBeNull();
    expect(ui.$("plan-waiting")).toBeNull();
    expect(ui.$("progress")).toBeNull();
    ui.panel.intake.transition({ sessionId: "s-1", reason: "gate", reasons: ["gate"], codingQuestion: "Add retries." });
    expect(ui.$("intake-coding-question")).not.toBeNull();
    expect(ui.$("plan-waiting")).not.toBeNull();
  });

  it("a state for another session is not shown, and a new session starts without the last one's interview", () => {
    const ui = coaching();
    ui.panel.intake.state(state({ sessionId: "s-other" }));
    expect(ui.$("intake-transcript")).toBeNull();
    ui.panel.intake.state(state({ transcript: [{ role: "interviewer", text: "Hello?" }], awaitingAnswer: true }));
    expect(ui.$("intake-transcript")).not.toBeNull();
    ui.panel.sessionStarted({ sessionId: "s-2", issueContext: null, title: "Next", phases: [], hintLevel: "none" });
    expect(ui.$("intake-transcript")).toBeNull();
    expect(ui.$("intake-start")).not.toBeNull();
  });

  it("the answer box keeps the keys when the coaching panel re-renders around it", () => {
    const ui = coaching();
    ui.panel.intake.state(state({ transcript: [{ role: "interviewer", text: "Hello?" }], awaitingAnswer: true }));
    const input = ui.$<HTMLTextAreaElement>("intake-input")!;
    input.focus();
    ui.panel.issueContext({ number: 3, title: "Retry uploads", summary: "", labels: [], url: "" });
    expect(document.activeElement).toBe(input);
  });
});

describe("countdown and reason text", () => {
  it("mm:ss rounds up to whole seconds and never goes below 00:00", () => {
    expect(countdownText(240_000)).toBe("04:00");
    expect(countdownText(239_001)).toBe("04:00");
    expect(countdownText(59_000)).toBe("00:59");
    expect(countdownText(1)).toBe("00:01");
    expect(countdownText(0)).toBe("00:00");
    expect(countdownText(-5_000)).toBe("00:00");
    expect(countdownText(3_600_000)).toBe("60:00");
  });

  it("the reason names the others that applied at once", () => {
    expect(reasonText("gate", ["gate"])).toBe("gate");
    expect(reasonText("timebox", ["timebox", "projects_cap", "gate"])).toBe("timebox (also: projects_cap, gate)");
  });
});

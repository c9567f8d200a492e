// The learning signals in the coaching panel (issue 30): each phase's comprehension check as
// a card — one or two questions about the learner's own change, answered in place (Enter
// sends, Shift+Enter a new line) and graded — and a gauge of how the learner asks Claude Code.
// Nothing here blocks: a check is a card below the phases, never a modal, and the next phase
// is open while it waits; Skip is always there.
//
// The core sends a check whole on every change (`learning:check`): the panel keeps the latest
// per phase and draws it. Answers, skips and retries go back as `learning:answer`,
// `learning:skip` and `learning:retry`; a refusal (`learning:error`) shows beside its question
// or on its phase's card.
import { el, errorMessage, keepFocus } from "./dom";
import type { ComprehensionCheck, LearningErrorView, LearningSignals, QuestionView, RelianceGauge } from "./protocol";
import type { Transport } from "./transport";

export type RelianceClass = keyof RelianceGauge;

/** The five reliance classes, in the order they are stacked: asking how or why first,
 * asking for the code last. */
export const RELIANCE_CLASSES: { key: RelianceClass; label: string; title: string }[] = [
  { key: "conceptualQuestion", label: "Asked how or why", title: "Questions about how or why something works" },
  { key: "verification", label: "Asked to check", title: "Asked to have your own work checked" },
  { key: "debuggingHelp", label: "Debugging help", title: "Brought a failure or an error to debug" },
  { key: "other", label: "Other", title: "Greetings, thanks, “continue”, slash-commands" },
  { key: "delegation", label: "Asked for the code", title: "Asked Claude Code to write or change the code" },
];

export const PREPARING_TEXT = "Writing a question about your change…";
export const NUDGE_TEXT = "Try asking why, not just for the code.";

const KINDS: Record<string, string> = {
  predict_output: "Predict the output",
  explain_line: "Explain a line",
  edge_case: "Edge case",
};

/** A grade as a badge says it: a sign and a word, so it never rests on colour alone. */
export const GRADES: Record<string, string> = { correct: "✓ Correct", partial: "◐ Partial", incorrect: "✗ Incorrect" };

export function kindLabel(kind: string): string {
  return KINDS[kind] ?? kind;
}

export function gradeLabel(grade: string): string {
  return GRADES[grade] ?? grade;
}

export function relianceTotal(gauge: RelianceGauge): number {
  return RELIANCE_CLASSES.reduce((sum, { key }) => sum + (gauge[key] ?? 0), 0);
}

/** "4 prompts: 2 asked for the code, 1 asked how or why, 1 other"; classes without a prompt
 * are left out. */
export function relianceSummary(gauge: RelianceGauge): string {
  const total = relianceTotal(gauge);
  if (total === 0) return "No prompts yet";
  const parts = [...RELIANCE_CLASSES]
    .filter(({ key }) => gauge[key] > 0)
    .sort((a, b) => gauge[b.key] - gauge[a.key])
    .map(({ key, label }) => `${gauge[key]} ${label.toLowerCase()}`);
  return `${total} prompt${total === 1 ? "" : "s"}: ${parts.join(", ")}`;
}

/** Whether asking for the code dominates a phase: at least 3 such prompts, and more than half. */
export function delegationDominates(gauge: RelianceGauge | undefined): boolean {
  if (!gauge) return false;
  return gauge.delegation >= 3 && gauge.delegation * 2 > relianceTotal(gauge);
}

/** "1 solution shown, then typed". */
export function solutionsText(count: number): string {
  return `${count} solution${count === 1 ? "" : "s"} shown, then typed`;
}

/** The gauge as a horizontal stacked bar of the classes with prompts (each segment titled
 * with its class and count) and, for screen readers, the counts in a sentence. */
export function relianceBar(gauge: RelianceGauge, about = "this session"): HTMLElement {
  const bar = el("div", "reliance-bar");
  bar.dataset.testid = "reliance-bar";
  bar.setAttribute("role", "img");
  bar.setAttribute("aria-label", `How you asked Claude Code ${about}: ${relianceSummary(gauge)}`);
  for (const { key, label } of RELIANCE_CLASSES) {
    const count = gauge[key];
    if (!count) continue;
    const segment = el("span", `reliance-seg reliance-${key}`);
    segment.dataset.testid = "reliance-seg";
    segment.dataset.class = key;
    segment.dataset.count = String(count);
    segment.style.flexGrow = String(count);
    segment.title = `${label}: ${count}`;
    bar.append(segment);
  }
  return bar;
}

/** The classes with prompts, each a swatch, its name and its count. */
function relianceLegend(gauge: RelianceGauge): HTMLElement {
  const list = el("ul", "reliance-legend");
  for (const { key, label, title } of RELIANCE_CLASSES) {
    if (!gauge[key]) continue;
    const item = el("li", "");
    item.title = title;
    item.dataset.testid = "reliance-legend";
    item.dataset.class = key;
    item.append(el("span", `reliance-swatch reliance-${key}`), document.createTextNode(`${label} ${gauge[key]}`));
    list.append(item);
  }
  return list;
}

/** A progress line (a spinner and `text`), announced as a status. */
export function progress(text: string, testid: string): HTMLElement {
  const line = el("p", "learning-progress");
  line.dataset.testid = testid;
  line.setAttribute("role", "status");
  const spinner = el("span", "learning-spinner");
  spinner.setAttribute("aria-hidden", "true");
  line.append(spinner, document.createTextNode(text));
  return line;
}

/** A button (`type="button"`) with its testid and click handler. */
export function button(label: string, testid: string, onClick: () => void, className = "secondary"): HTMLButtonElement {
  const node = el("button", className, label);
  node.type = "button";
  node.dataset.testid = testid;
  node.addEventListener("click", onClick);
  return node;
}

/** Keyboard first in an answer box: Enter sends (`send`), Shift+Enter is a new line; a key
 * that ends an IME composition is left to the IME. */
export function enterSends(input: HTMLTextAreaElement, send: () => void): void {
  input.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    send();
  });
}

export class LearningPanel {
  /** Mounted by the coaching panel below the phases; empty (and hidden) with nothing to show. */
  readonly root = el("div", "learning");
  private sessionId: string | null = null;
  /** The latest check of each phase, by phase number. */
  private checks = new Map<number, ComprehensionCheck>();
  private gauge: LearningSignals | null = null;
  /** Each open question's answer box, kept across redraws (it keeps what is typed). */
  private inputs = new Map<string, HTMLTextAreaElement>();
  /** Questions whose answer was sent, until the check shows it grading (or it is refused). */
  private sending = new Set<string>();
  /** Refusals (`learning:error`) beside their question, or on their phase's card. */
  private questionErrors = new Map<string, string>();
  private phaseErrors = new Map<number, string>();

  /** `scope`: where the focus may be when a new check takes it (the coaching panel); the
   * learner typing anywhere else (the editor, the terminal) keeps the keys. */
  constructor(
    private readonly transport: Pick<Transport, "send">,
    private readonly scope?: () => Element | null,
  ) {
    this.root.dataset.testid = "learning";
  }

  /** The coaching panel's session (`null` without one): what another session sent is dropped. */
  setSession(sessionId: string | null): void {
    this.sessionId = sessionId;
    this.checks.clear();
    this.gauge = null;
    this.inputs.clear();
    this.sending.clear();
    this.questionErrors.clear();
    this.phaseErrors.clear();
    this.render();
  }

  /** `learning:check`: replaces the phase's card. A check that becomes ready takes the focus
   * to its first open question, unless the learner is typing elsewhere. */
  check(msg: ComprehensionCheck): void {
    if (msg.sessionId !== this.sessionId) return;
    const before = this.checks.get(msg.phase);
    this.checks.set(msg.phase, msg);
    this.phaseErrors.delete(msg.phase);
    for (const q of msg.questions) {
      if (q.status !== "open" || q.error) this.sending.delete(q.id);
      if (q.status !== "open") {
        this.inputs.delete(q.id);
        this.questionErrors.delete(q.id);
      }
    }
    this.render();
    if (msg.state === "ready" && before?.state !== "ready") this.focusOpen(msg.phase);
  }

  /** `learning:signals`: the session's gauge. */
  signals(msg: LearningSignals): void {
    if (msg.sessionId !== this.sessionId) return;
    this.gauge = msg;
    this.render();
  }

  /** `learning:error`: shown beside its question, else on its phase's card; false when
   * neither is on screen (the caller says it elsewhere). */
  error(msg: LearningErrorView): boolean {
    const question = msg.questionId;
    if (question !== undefined && [...this.checks.values()].some((c) => c.questions.some((q) => q.id === question))) {
      this.sending.delete(question);
      this.questionErrors.set(question, msg.error);
    } else if (msg.phase !== undefined && this.checks.has(msg.phase)) {
      this.phaseErrors.set(msg.phase, msg.error);
    } else return false;
    this.render();
    return true;
  }

  /** Sends the answer typed for `questionId` (nothing for an empty box). */
  private answer(questionId: string): void {
    const input = this.inputs.get(questionId);
    const answer = input?.value.trim() ?? "";
    if (!answer || this.sending.has(questionId)) return;
    this.sending.add(questionId);
    this.questionErrors.delete(questionId);
    this.transport.send("learning:answer", { questionId, answer });
    this.render();
    // Keyboard first: the next open question of the same check gets the keys.
    const check = [...this.checks.values()].find((c) => c.questions.some((q) => q.id === questionId));
    if (check) this.focusOpen(check.phase);
  }

  /** `learning:skip` or `learning:retry` for `phase`; its next check shows what came of it. */
  private ask(type: "learning:skip" | "learning:retry", phase: number): void {
    this.phaseErrors.delete(phase);
    this.transport.send(type, { phase });
    this.render();
  }

  /** Focuses the first open question of `phase` not being sent, when the learner is not
   * typing outside the coaching panel. */
  private focusOpen(phase: number): void {
    const open = this.checks.get(phase)?.questions.find((q) => q.status === "open" && !this.sending.has(q.id));
    const input = open && this.inputs.get(open.id);
    if (!input?.isConnected || !this.mayTakeFocus()) return;
    input.focus();
  }

  private mayTakeFocus(): boolean {
    const active = document.activeElement;
    if (!active || active === document.body || active === document.documentElement) return true;
    const scope = this.scope ? this.scope() : this.root.parentElement;
    return scope?.contains(active) ?? false;
  }

  private render(): void {
    const restore = keepFocus(this.root);
    const parts: HTMLElement[] = [...this.checks.values()].sort((a, b) => a.phase - b.phase).map((c) => this.renderCheck(c));
    const gauge = this.gauge && this.renderGauge(this.gauge);
    if (gauge) parts.push(gauge);
    this.root.replaceChildren(...parts);
    restore();
  }

  private renderCheck(check: ComprehensionCheck): HTMLElement {
    const card = el("section", `learning-check learning-${check.state}`);
    card.dataset.testid = "learning-check";
    card.dataset.phase = String(check.phase);
    card.dataset.state = check.state;
    card.setAttribute("aria-label", `Check your understanding of phase ${check.phase}`);
    const head = el("header", "learning-check-head");
    head.append(
      el("h4", "", check.state === "done" ? "Your answers" : "Check your understanding"),
      el("span", "learning-check-phase", `Phase ${check.phase}: ${check.phaseTitle}`),
    );
    card.append(head);
    switch (check.state) {
      case "preparing":
        card.append(progress(PREPARING_TEXT, "learning-preparing"));
        break;
      case "failed": {
        const failed = el("div", "learning-failed");
        failed.dataset.testid = "learning-failed";
        failed.append(...errorMessage(check.note ?? "Paige could not write the questions for this phase."));
        failed.append(button("Retry", "learning-retry", () => this.ask("learning:retry", check.phase)));
        card.append(failed);
        break;
      }
      case "nothing_to_ask": {
        const note = el("p", "learning-quiet", check.note?.split("\n")[0] ?? "Nothing to ask about this phase.");
        note.dataset.testid = "learning-note";
        card.append(note);
        break;
      }
      case "ready":
        card.append(el("p", "learning-lead", "About what you wrote. Answer or skip — nothing waits on it."));
        for (const q of check.questions) card.append(this.renderQuestion(q, false));
        if (check.questions.some((q) => q.status === "open")) {
          const skip = button("Skip", "learning-skip", () => this.ask("learning:skip", check.phase));
          skip.title = "Skip these questions (Paige notes it; nothing is held back)";
          const row = el("div", "learning-actions");
          row.append(skip);
          card.append(row);
        }
        break;
      case "done":
        for (const q of check.questions) card.append(this.renderQuestion(q, true));
        break;
    }
    const refused = this.phaseErrors.get(check.phase);
    if (refused) {
      const box = el("div", "learning-error");
      box.dataset.testid = "learning-phase-error";
      box.setAttribute("role", "alert");
      box.append(...errorMessage(refused));
      card.append(box);
    }
    return card;
  }

  /** One question; `compact` (a done check) leaves out the quote and the answer. */
  private renderQuestion(q: QuestionView, compact: boolean): HTMLElement {
    const box = el("div", `learning-question learning-q-${q.status}`);
    box.dataset.testid = "learning-question";
    box.dataset.id = q.id;
    box.dataset.status = q.status;
    const meta = el("p", "learning-q-meta", kindLabel(q.kind));
    if (q.concept) meta.append(el("span", "learning-concept", ` · ${q.concept}`));
    const text = el("p", "learning-q-text", q.question);
    text.dataset.testid = "learning-question-text";
    box.append(meta, text);
    if (!compact && q.quote) {
      const quote = el("pre", "learning-quote");
      quote.dataset.testid = "learning-quote";
      quote.append(el("code", "", q.quote));
      box.append(quote);
    }
    if (!compact && q.answer && q.status !== "open") box.append(el("p", "learning-answer-echo", q.answer));
    switch (q.status) {
      case "open":
        box.append(...this.renderAnswerBox(q));
        break;
      case "grading":
        box.append(progress("Grading your answer…", "learning-grading"));
        break;
      case "graded": {
        const grade = q.grade ?? "";
        const badge = el("span", `learning-grade grade-${grade}`, gradeLabel(grade));
        badge.dataset.testid = "learning-grade";
        badge.dataset.grade = grade;
        const result = el("p", "learning-result");
        result.append(badge);
        if (q.why) {
          const why = el("span", "learning-why", q.why);
          why.dataset.testid = "learning-why";
          result.append(why);
        }
        box.append(result);
        break;
      }
      case "skipped":
      case "expired": {
        const line = el("p", "learning-quiet", q.status === "skipped" ? "Skipped" : "Not answered before the session ended");
        line.dataset.testid = "learning-unanswered";
        box.append(line);
        break;
      }
    }
    return box;
  }

  private renderAnswerBox(q: QuestionView): HTMLElement[] {
    const input = this.inputFor(q);
    const sending = this.sending.has(q.id);
    input.disabled = sending;
    const parts: HTMLElement[] = [input];
    const error = this.questionErrors.get(q.id) ?? q.error;
    if (sending) parts.push(progress("Sending your answer…", "learning-sending"));
    else if (error) {
      const box = el("div", "learning-error");
      box.dataset.testid = "learning-answer-error";
      box.setAttribute("role", "alert");
      box.append(...errorMessage(error), button("Retry", "learning-answer-retry", () => this.answer(q.id)));
      parts.push(box);
    } else parts.push(el("small", "learning-keys", "Enter sends · Shift+Enter for a new line"));
    return parts;
  }

  /** The question's answer box: the one already on screen (with what is typed in it), else a
   * new one holding the answer the core kept (a grading that failed). */
  private inputFor(q: QuestionView): HTMLTextAreaElement {
    const kept = this.inputs.get(q.id);
    if (kept) return kept;
    const input = el("textarea", "learning-input");
    input.dataset.testid = "learning-answer";
    input.rows = 2;
    input.placeholder = "Your answer…";
    input.setAttribute("aria-label", `Your answer: ${q.question}`);
    input.value = q.answer ?? "";
    enterSends(input, () => this.answer(q.id));
    this.inputs.set(q.id, input);
    return input;
  }

  private renderGauge(signals: LearningSignals): HTMLElement | null {
    const total = relianceTotal(signals.reliance);
    const nudge = delegationDominates(signals.phaseReliance);
    if (total === 0 && signals.solutionsShown === 0) return null;
    const box = el("section", "learning-gauge");
    box.dataset.testid = "learning-gauge";
    box.dataset.total = String(total);
    box.append(el("h4", "learning-gauge-title", "How you asked Claude Code"));
    if (total > 0) box.append(relianceBar(signals.reliance), relianceLegend(signals.reliance));
    if (signals.solutionsShown > 0) {
      const shown = el("p", "learning-solutions", solutionsText(signals.solutionsShown));
      shown.dataset.testid = "solutions-shown";
      shown.title = "Code Claude Code showed you that your next edits typed in";
      box.append(shown);
    }
    if (nudge) {
      const line = el("p", "learning-nudge", NUDGE_TEXT);
      line.dataset.testid = "reliance-nudge";
      line.title = `Most of your prompts in phase ${signals.phase} asked for the code`;
      box.append(line);
    }
    return box;
  }
}

// Spaced review (issue 31) in a side drawer: what the learner found hard — knowledge gaps,
// katas not yet mastered, concepts answered wrong — comes back until it sticks.
//
// The drawer lists what is due (`reviews:list` → `reviews:due`). Opening an item sends
// `reviews:start`; Paige's model writes a short question (`reviews:question`, progress
// meanwhile), answered in place — Enter sends (`reviews:answer`), Shift+Enter a new line —
// and graded (`reviews:graded`: the grade and why, and when the item comes back), followed by
// a fresh `reviews:due`. "Next review" (focused: Enter) opens the next due item; with none
// left, "All caught up". A refusal (`reviews:error`) shows where it happened with a Retry:
// beside the item's question (resending the kept answer) or in place of the question that
// could not be written (asking again). Escape closes the drawer (drawer.ts).
//
// Every reply goes to the UI that asked, so only the open item's replies are drawn; the
// others are stale (the learner moved on) and dropped.
import { OPEN_KATA_EVENT, type OpenKataDetail, dueText } from "./dashboard";
import { el, errorMessage, keepFocus } from "./dom";
import { Drawer } from "./drawer";
import { button, enterSends, gradeLabel, progress } from "./learning";
import type { ReviewDue, ReviewErrorView, ReviewGraded, ReviewItemView, ReviewQuestion } from "./protocol";
import type { Transport } from "./transport";

export const ASKING_TEXT = "Writing a question…";
export const GRADING_TEXT = "Grading your answer…";
export const CAUGHT_UP_TEXT = "All caught up: nothing else is due for review.";

/** An item's kind as its badge says it (a word, not a colour). */
const KINDS: Record<string, { label: string; noun: string; title: string }> = {
  gap: { label: "Knowledge gap", noun: "gap", title: "Something a coaching session found you did not know yet" },
  kata: { label: "Kata", noun: "kata", title: "A practice kata you have not mastered yet" },
  concept: { label: "Concept", noun: "concept", title: "A concept you answered wrong in a comprehension check" },
};

export function kindLabel(kind: string): string {
  return KINDS[kind]?.label ?? kind;
}

/** When a graded item comes back: "Again tomorrow", "Again in 3 days", and when its interval
 * is stable, "… — remembered: this gap counts as addressed". */
export function comesBack(graded: Pick<ReviewGraded, "intervalDays" | "addressed">, kind: string): string {
  const days = graded.intervalDays;
  const when = days <= 0 ? "Again later today" : days === 1 ? "Again tomorrow" : `Again in ${days} days`;
  if (!graded.addressed) return when;
  return `${when} — remembered: this ${KINDS[kind]?.noun ?? "item"} counts as addressed`;
}

/** A review's stage: its question being written (or refused), answered, graded. */
type Stage =
  | { kind: "asking" }
  | { kind: "ask-failed"; error: string }
  | { kind: "answering"; question: ReviewQuestion; error: string | null }
  | { kind: "grading"; question: ReviewQuestion }
  | { kind: "graded"; question: ReviewQuestion; graded: ReviewGraded };

interface OpenItem {
  item: ReviewItemView;
  stage: Stage;
  /** The answer box, kept across redraws (it keeps what is typed). */
  input: HTMLTextAreaElement | null;
  /** The answer sent last (shown while grading and after). */
  sent: string;
}

export class ReviewPanel {
  private readonly drawer: Drawer;
  /** The latest `reviews:due`; null until one arrives. */
  private due: ReviewDue | null = null;
  /** Why the list could not be loaded. */
  private listError: string | null = null;
  private open: OpenItem | null = null;
  /** Items answered since the drawer opened: "Next review" skips them even while the due
   * list that follows a grade is on its way. */
  private done = new Set<string>();
  private body: HTMLElement | null = null;
  /** The drawer was just opened: the first item listed takes the keys. */
  private focusList = false;

  constructor(
    host: HTMLElement,
    private readonly transport: Pick<Transport, "send">,
  ) {
    this.drawer = new Drawer(host, "review", "Spaced review");
    this.drawer.onClose = () => {
      this.open = null;
      this.body = null;
      this.done.clear();
    };
  }

  get isOpen(): boolean {
    return this.drawer.isOpen;
  }

  /** Opens the drawer on the list of due items (asked for afresh), the keys on the first. */
  show(): void {
    this.open = null;
    this.listError = null;
    this.done.clear();
    this.focusList = true;
    this.transport.send("reviews:list", {});
    this.render();
  }

  close(): void {
    this.drawer.close();
  }

  /** `reviews:due`: the list, redrawn when it is on screen; after a grade it decides whether
   * there is a next review. */
  dueList(msg: ReviewDue): void {
    this.due = msg;
    this.listError = null;
    if (!this.drawer.isOpen) return;
    if (!this.open || this.open.stage.kind === "graded") this.render();
  }

  /** `reviews:question`, for the open item. */
  question(msg: ReviewQuestion): void {
    const open = this.open;
    if (!this.drawer.isOpen || !open || open.item.id !== msg.itemId || open.stage.kind !== "asking") return;
    open.stage = { kind: "answering", question: msg, error: null };
    this.render();
    if (open.input?.isConnected && this.mayTakeFocus()) open.input.focus();
  }

  /** `reviews:graded`, for the open item: the grade, why, when it comes back; the keys go to
   * "Next review". */
  graded(msg: ReviewGraded): void {
    const open = this.open;
    if (!this.drawer.isOpen || !open || open.item.id !== msg.itemId || open.stage.kind !== "grading") return;
    const takeFocus = this.mayTakeFocus();
    open.stage = { kind: "graded", question: open.stage.question, graded: msg };
    open.input = null;
    this.done.add(msg.itemId);
    this.render();
    if (takeFocus) this.body?.querySelector<HTMLElement>('[data-testid="review-next"], [data-testid="review-done"]')?.focus();
  }

  /** `reviews:error`: beside the open item's question or answer, or over the list; false when
   * the drawer shows neither (the caller says it elsewhere). */
  error(msg: ReviewErrorView): boolean {
    if (!this.drawer.isOpen) return false;
    const open = this.open;
    if (msg.itemId === undefined) {
      if (open) return false;
      this.listError = msg.error;
      this.render();
      return true;
    }
    if (!open || open.item.id !== msg.itemId) return false;
    const stage = open.stage;
    if (stage.kind === "asking") open.stage = { kind: "ask-failed", error: msg.error };
    else if (stage.kind === "grading") open.stage = { kind: "answering", question: stage.question, error: msg.error };
    else if (stage.kind === "answering") stage.error = msg.error;
    else return false;
    this.render();
    return true;
  }

  /** A `connection:error` for a request of the drawer (an older Paige without reviews); true
   * when shown here. */
  requestFailed(type: string, message: string): boolean {
    if (!type.startsWith("reviews:")) return false;
    const open = this.open;
    const itemId = type === "reviews:list" || !open ? undefined : open.item.id;
    return this.error({ itemId, error: message });
  }

  /** Opens `item`: its question is asked for (`reviews:start`). */
  private start(item: ReviewItemView): void {
    this.open = { item, stage: { kind: "asking" }, input: null, sent: "" };
    this.transport.send("reviews:start", { itemId: item.id });
    this.render();
  }

  /** Sends the answer typed (nothing for an empty box, or while one is being graded). */
  private answer(): void {
    const open = this.open;
    if (!open || open.stage.kind !== "answering") return;
    const answer = open.input?.value.trim() ?? "";
    if (!answer) return;
    open.sent = answer;
    open.stage = { kind: "grading", question: open.stage.question };
    this.transport.send("reviews:answer", { itemId: open.item.id, answer });
    this.render();
  }

  /** The first due item not answered since the drawer opened, or null. */
  private nextItem(): ReviewItemView | null {
    return this.due?.items.find((item) => !this.done.has(item.id) && item.id !== this.open?.item.id) ?? null;
  }

  private backToList(): void {
    this.open = null;
    this.render();
    this.body?.querySelector<HTMLElement>('[data-testid="review-open"], [data-testid="review-done"]')?.focus();
  }

  /** Whether a reply may take the keys: nothing has them, or something in the drawer does (the
   * learner typing in the editor keeps them). */
  private mayTakeFocus(): boolean {
    const active = document.activeElement;
    if (!active || active === document.body || active === document.documentElement) return true;
    return this.body?.parentElement?.contains(active) ?? false;
  }

  /** Redraws the drawer. The keys stay where they were: on the same element (the answer box is
   * kept across redraws), else on its replacement (the same data-testid); the drawer just
   * opened gives them to the first item listed. */
  private render(): void {
    const active = document.activeElement;
    const inside = this.body && active instanceof HTMLElement && this.body.contains(active) ? active.dataset.testid : undefined;
    const restore = this.body ? keepFocus(this.body) : () => {};
    const body = this.drawer.open("Spaced review");
    this.body = body;
    if (this.open) this.renderItem(body, this.open);
    else this.renderList(body);
    restore();
    if (inside && !body.contains(document.activeElement)) body.querySelector<HTMLElement>(`[data-testid="${inside}"]`)?.focus();
    if (this.focusList && !this.open) {
      const first = body.querySelector<HTMLElement>('[data-testid="review-open"], [data-testid="review-done"]');
      if (first) {
        this.focusList = false;
        first.focus();
      }
    } else if (this.open) this.focusList = false;
  }

  private renderList(body: HTMLElement): void {
    body.append(el("p", "drawer-note", "What you found hard comes back until it sticks. Answer in a sentence or two; Paige grades it and schedules the next review."));
    if (this.listError) {
      const error = el("div", "panel-error");
      error.dataset.testid = "review-list-error";
      error.setAttribute("role", "alert");
      error.append(...errorMessage(this.listError), button("Retry", "review-list-retry", () => this.show()));
      body.append(error);
    }
    const due = this.due;
    if (!due) {
      if (!this.listError) body.append(progress("Loading the reviews due…", "review-loading"));
      return;
    }
    const items = due.items.filter((item) => !this.done.has(item.id));
    if (!items.length) {
      body.append(this.caughtUp());
      return;
    }
    const count = el("p", "review-count", dueText(Math.max(due.dueCount - this.doneListed(due), items.length)));
    count.dataset.testid = "review-count";
    body.append(count);
    const list = el("ul", "review-list");
    list.dataset.testid = "review-list";
    for (const item of items) {
      const row = el("li", "review-item");
      row.dataset.testid = "review-item";
      row.dataset.itemId = item.id;
      row.dataset.kind = item.kind;
      const open = button(item.topic, "review-open", () => this.start(item), "review-open");
      open.title = "Review this now";
      row.append(open, this.badge(item.kind));
      if (item.skillArea) row.append(el("small", "review-area", item.skillArea));
      list.append(row);
    }
    body.append(list);
  }

  /** How many of the items answered since the drawer opened the due list still counts. */
  private doneListed(due: ReviewDue): number {
    return due.items.filter((item) => this.done.has(item.id)).length;
  }

  /** "All caught up", and Close (with `more` beside it). */
  private caughtUp(...more: HTMLElement[]): HTMLElement {
    const box = el("div", "review-caught-up");
    box.dataset.testid = "review-caught-up";
    box.setAttribute("role", "status");
    const actions = el("div", "review-actions");
    actions.append(button("Close", "review-done", () => this.close()), ...more);
    box.append(el("p", "", CAUGHT_UP_TEXT), actions);
    return box;
  }

  private badge(kind: string): HTMLElement {
    const badge = el("span", `label review-kind review-kind-${kind}`, kindLabel(kind));
    badge.dataset.testid = "review-kind";
    badge.dataset.kind = kind;
    badge.title = KINDS[kind]?.title ?? "";
    return badge;
  }

  private renderItem(body: HTMLElement, open: OpenItem): void {
    const card = el("section", `review-card review-${open.stage.kind}`);
    card.dataset.testid = "review-card";
    card.dataset.itemId = open.item.id;
    card.dataset.stage = open.stage.kind;
    const head = el("header", "review-card-head");
    const topic = el("h3", "review-topic", open.item.topic);
    topic.dataset.testid = "review-topic";
    head.append(topic, this.badge(open.item.kind));
    card.append(head);
    const stage = open.stage;
    switch (stage.kind) {
      case "asking":
        card.append(progress(ASKING_TEXT, "review-asking"));
        break;
      case "ask-failed": {
        const box = el("div", "learning-error");
        box.dataset.testid = "review-error";
        box.setAttribute("role", "alert");
        box.append(...errorMessage(stage.error), button("Retry", "review-retry", () => this.start(open.item)));
        card.append(box);
        break;
      }
      case "answering":
        card.append(...this.renderQuestion(stage.question), ...this.renderAnswerBox(open, stage.error));
        break;
      case "grading":
        card.append(...this.renderQuestion(stage.question), this.echo(open.sent), progress(GRADING_TEXT, "review-grading"));
        break;
      case "graded":
        card.append(...this.renderQuestion(stage.question), this.echo(open.sent), ...this.renderGrade(open.item, stage.graded));
        break;
    }
    body.append(card);
    if (stage.kind === "asking" || stage.kind === "grading") return;
    const all = button("All reviews", "review-back", () => this.backToList());
    const next = stage.kind === "graded" ? this.nextItem() : null;
    if (stage.kind === "graded" && !next) {
      body.append(this.caughtUp(all));
      return;
    }
    const actions = el("div", "review-actions");
    if (next) {
      const go = button("Next review", "review-next", () => this.start(next), "primary");
      go.title = `Next: ${next.topic}`;
      actions.append(go);
    }
    actions.append(all);
    body.append(actions);
  }

  private renderQuestion(question: ReviewQuestion): HTMLElement[] {
    const text = el("p", "review-question", question.question);
    text.dataset.testid = "review-question";
    const parts: HTMLElement[] = [text];
    const concept = question.concept.trim();
    if (concept && concept.toLowerCase() !== question.topic.trim().toLowerCase()) parts.push(el("p", "learning-q-meta", `About: ${question.concept}`));
    if (question.kataId) {
      const kataId = question.kataId;
      const practise = button("Open the kata in Practice", "review-open-kata", () => {
        const detail: OpenKataDetail = { kataId };
        this.body?.dispatchEvent(new CustomEvent(OPEN_KATA_EVENT, { detail, bubbles: true }));
      });
      practise.title = "Practise the kata itself (this review stays open underneath)";
      parts.push(practise);
    }
    return parts;
  }

  private renderAnswerBox(open: OpenItem, error: string | null): HTMLElement[] {
    const input = this.inputFor(open);
    const parts: HTMLElement[] = [input];
    if (error) {
      const box = el("div", "learning-error");
      box.dataset.testid = "review-error";
      box.setAttribute("role", "alert");
      box.append(...errorMessage(error), button("Retry", "review-retry", () => this.answer()));
      parts.push(box);
    } else parts.push(el("small", "learning-keys", "Enter sends · Shift+Enter for a new line"));
    return parts;
  }

  private inputFor(open: OpenItem): HTMLTextAreaElement {
    if (open.input) return open.input;
    const input = el("textarea", "review-input");
    input.dataset.testid = "review-answer";
    input.rows = 3;
    input.placeholder = "Your answer…";
    input.setAttribute("aria-label", "Your answer");
    input.value = open.sent;
    enterSends(input, () => this.answer());
    open.input = input;
    return input;
  }

  private echo(answer: string): HTMLElement {
    const echo = el("p", "learning-answer-echo", answer);
    echo.dataset.testid = "review-answer-echo";
    return echo;
  }

  private renderGrade(item: ReviewItemView, graded: ReviewGraded): HTMLElement[] {
    const badge = el("span", `learning-grade grade-${graded.grade}`, gradeLabel(graded.grade));
    badge.dataset.testid = "review-grade";
    badge.dataset.grade = graded.grade;
    const result = el("p", "learning-result");
    result.append(badge);
    if (graded.why) {
      const why = el("span", "learning-why", graded.why);
      why.dataset.testid = "review-why";
      result.append(why);
    }
    const back = el("p", graded.addressed ? "review-back-when review-addressed" : "review-back-when", comesBack(graded, item.kind));
    back.dataset.testid = "review-comes-back";
    back.dataset.addressed = String(graded.addressed);
    const date = new Date(graded.nextDue);
    if (!Number.isNaN(date.getTime())) back.title = `Next review ${date.toLocaleDateString()} (rated ${graded.rating})`;
    return [result, back];
  }
}

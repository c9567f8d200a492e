// Practice: the katas Paige made from the learner's knowledge gaps, in a read-only drawer.
// The list (practice:list → practice:katas), then one kata (practice:kata_request →
// practice:kata_load): its description, the learner's solution in a text area — text in the
// UI only, never a file in the project — the unlocked constraints as toggles, and Submit
// (user:review) with its progress; the review (level, passed, feedback, follow-up, newly
// unlocked constraints highlighted) or the error with a Retry of the same submission.
//
// Reviews go to every UI and carry only the kata's id: the drawer shows the answer to its
// own latest submission for the open kata (while N are in flight the first N-1 answers are
// the older ones'), and ignores the rest.
import { el, errorMessage } from "./dom";
import { Drawer } from "./drawer";
import type { FollowUp, KataConstraint, KataError, KataLoad, PracticeKata, PracticeKatas, ReviewResponse, UserReview } from "./protocol";
import type { Transport } from "./transport";

/** "Best level 4/10 · 2 attempts · 1 of 3 constraints unlocked". */
export function progressLine(kata: PracticeKata): string {
  const best = kata.bestLevel > 0 ? `Best level ${kata.bestLevel}/10` : "Not attempted yet";
  const attempts = `${kata.attempts} attempt${kata.attempts === 1 ? "" : "s"}`;
  const constraints = kata.constraints ? ` · ${kata.unlockedConstraints} of ${kata.constraints} constraints unlocked` : "";
  return `${best} · ${attempts}${constraints}`;
}

/** The follow-up in a sentence, or null. */
export function followUpText(followUp: FollowUp | null): string | null {
  if (!followUp) return null;
  const reason = followUp.reason ? ` ${followUp.reason}` : "";
  switch (followUp.type) {
    case "constraint_escalation":
      return `Next challenge: ${followUp.constraint ?? "a harder constraint"}.${reason}`;
    case "retry_hint":
      return `Try again.${reason}`;
    case "completed":
      return `Kata mastered.${reason}`;
  }
}

type Status = { kind: "editing" } | { kind: "reviewing" } | { kind: "reviewed"; review: ReviewResponse } | { kind: "failed"; error: string };

interface OpenKata {
  load: KataLoad;
  constraints: KataConstraint[];
  active: Set<string>;
  /** Titles unlocked by this drawer's reviews, highlighted. */
  fresh: Set<string>;
  code: string;
  status: Status;
  /** The latest submission and how many of this drawer's submissions are unanswered. */
  last: UserReview | null;
  awaiting: number;
  /** Constraints the list said the kata has, to tell how many are still locked. */
  total: number | null;
}

export class PracticePanel {
  private readonly drawer: Drawer;
  private katas: PracticeKata[] | null = null;
  private open: OpenKata | null = null;
  /** The kata asked for, until it loads or fails. */
  private requested: string | null = null;
  /** Why the kata asked for last could not be opened, shown over the list. */
  private failure: { error: string; retry: string } | null = null;
  private status: HTMLElement | null = null;
  private constraintsBox: HTMLElement | null = null;
  private submitButton: HTMLButtonElement | null = null;

  constructor(
    host: HTMLElement,
    private readonly transport: Pick<Transport, "send">,
  ) {
    this.drawer = new Drawer(host, "practice", "Practice");
    this.drawer.onClose = () => {
      this.open = null;
      this.requested = null;
      this.failure = null;
    };
  }

  get isOpen(): boolean {
    return this.drawer.isOpen;
  }

  /** Opens the drawer on the list of katas (asked for afresh). */
  showList(): void {
    this.open = null;
    this.requested = null;
    this.failure = null;
    this.transport.send("practice:list", {});
    this.renderList();
  }

  /** Opens one kata straight away (the dashboard's Practise button). */
  openKata(kataId: string): void {
    this.open = null;
    this.request(kataId);
  }

  /** `practice:katas` (the answer to this UI's practice:list). */
  katasListed(msg: PracticeKatas): void {
    this.katas = msg.katas;
    if (this.drawer.isOpen && !this.open && !this.requested) this.renderList();
  }

  /** `practice:kata_load`: opens the kata if this drawer asked for it. */
  kataLoaded(load: KataLoad): void {
    if (!this.drawer.isOpen || this.requested !== load.kata.id) return;
    this.requested = null;
    const listed = this.katas?.find((k) => k.id === load.kata.id);
    this.open = {
      load,
      constraints: [...load.constraints],
      active: new Set(),
      fresh: new Set(),
      code: load.kata.scaffoldingCode,
      status: { kind: "editing" },
      last: null,
      awaiting: 0,
      total: listed?.constraints ?? null,
    };
    this.renderKata();
  }

  /** `practice:kata_error`: the kata asked for could not be opened. */
  kataFailed(msg: KataError): void {
    if (!this.drawer.isOpen || this.requested !== msg.kataId) return;
    // Opened from elsewhere, the list was never asked for: it follows under the error.
    if (this.katas === null) this.transport.send("practice:list", {});
    this.requested = null;
    this.failure = { error: msg.error, retry: msg.kataId };
    this.renderList();
  }

  /** `review:response` (to any UI). */
  reviewed(review: ReviewResponse): void {
    const open = this.open;
    if (!open || !this.answered(review.kataId)) return;
    for (const unlocked of review.unlockedConstraints) {
      if (!open.constraints.some((c) => c.title === unlocked.title)) open.constraints.push(unlocked);
      open.fresh.add(unlocked.title);
    }
    open.status = { kind: "reviewed", review };
    this.renderConstraints();
    this.renderStatus();
  }

  /** `review:error` (to any UI, or to this one when the core refused at once). */
  reviewFailed(msg: KataError): void {
    const open = this.open;
    if (!open || !this.answered(msg.kataId)) return;
    open.status = { kind: "failed", error: msg.error };
    this.renderStatus();
  }

  close(): void {
    this.drawer.close();
  }

  /** Counts an answer for `kataId`; true when it answers this drawer's latest submission. */
  private answered(kataId: string): boolean {
    const open = this.open;
    if (!open || open.awaiting === 0 || open.load.kata.id !== kataId) return false;
    open.awaiting -= 1;
    return open.awaiting === 0;
  }

  private request(kataId: string): void {
    this.requested = kataId;
    this.failure = null;
    this.transport.send("practice:kata_request", { kataId });
    const body = this.drawer.open("Practice");
    body.append(this.statusLine("practice-status", "Opening the kata…"));
  }

  private submit(review?: UserReview): void {
    const open = this.open;
    if (!open) return;
    const request: UserReview = review ?? {
      kataId: open.load.kata.id,
      userCode: open.code,
      activeConstraintTitles: open.constraints.filter((c) => open.active.has(c.title)).map((c) => c.title),
    };
    open.last = request;
    open.awaiting += 1;
    open.status = { kind: "reviewing" };
    this.transport.send("user:review", request);
    this.renderStatus();
  }

  private renderList(): void {
    const failure = this.failure;
    const body = this.drawer.open("Practice");
    body.append(el("p", "drawer-note", "Katas Paige made from what you found hard. Your solutions stay here: nothing is written to your project."));
    if (failure) {
      body.append(this.errorBox(failure.error, () => this.request(failure.retry)));
    }
    if (this.katas === null) {
      body.append(this.statusLine("practice-status", "Loading katas…"));
      return;
    }
    if (!this.katas.length) {
      const none = el("p", "practice-empty", "No katas yet. Paige makes them when a coaching session wraps up.");
      none.dataset.testid = "practice-empty";
      body.append(none);
      return;
    }
    const list = el("ul", "practice-list");
    list.dataset.testid = "practice-list";
    for (const kata of this.katas) {
      const item = el("li", "practice-item");
      item.dataset.testid = "practice-kata";
      item.dataset.kataId = kata.id;
      const open = el("button", "practice-open", kata.title);
      open.type = "button";
      open.dataset.testid = "practice-open";
      open.addEventListener("click", () => this.request(kata.id));
      item.append(open);
      if (kata.gapTopic) item.append(el("span", "label", kata.gapTopic));
      item.append(el("p", "practice-description", kata.description));
      const progress = el("p", "practice-progress", progressLine(kata));
      progress.dataset.testid = "practice-progress";
      item.append(progress);
      list.append(item);
    }
    body.append(list);
  }

  private renderKata(): void {
    const open = this.open!;
    const kata = open.load.kata;
    const body = this.drawer.open(kata.title);
    const back = el("button", "secondary practice-back", "← All katas");
    back.type = "button";
    back.dataset.testid = "practice-back";
    back.addEventListener("click", () => this.showList());
    body.append(back);
    const description = el("p", "practice-description", kata.description);
    description.dataset.testid = "practice-kata-description";
    body.append(description);
    body.append(el("h3", "", "Your solution"));
    const code = el("textarea", "practice-code");
    code.dataset.testid = "practice-code";
    code.spellcheck = false;
    code.setAttribute("aria-label", "Your solution");
    code.value = open.code;
    code.addEventListener("input", () => (open.code = code.value));
    code.addEventListener("keydown", (event) => {
      if (event.key !== "Tab" || event.shiftKey) return;
      event.preventDefault();
      code.setRangeText("  ", code.selectionStart, code.selectionEnd, "end");
      open.code = code.value;
    });
    body.append(code);
    body.append(el("h3", "", "Constraints"));
    this.constraintsBox = el("div", "practice-constraints");
    this.constraintsBox.dataset.testid = "practice-constraints";
    body.append(this.constraintsBox);
    const submit = el("button", "primary practice-submit", "Submit for review");
    submit.type = "button";
    submit.dataset.testid = "practice-submit";
    submit.addEventListener("click", () => this.submit());
    this.submitButton = submit;
    body.append(submit);
    this.status = el("div", "practice-result");
    body.append(this.status);
    this.renderConstraints();
    this.renderStatus();
  }

  private renderConstraints(): void {
    const open = this.open;
    const box = this.constraintsBox;
    if (!open || !box) return;
    box.replaceChildren();
    if (!open.constraints.length) {
      box.append(el("p", "drawer-note", "None unlocked yet: a higher level unlocks extra challenges."));
    }
    for (const constraint of open.constraints) {
      const label = el("label", open.fresh.has(constraint.title) ? "practice-constraint practice-constraint-new" : "practice-constraint");
      label.dataset.testid = "practice-constraint";
      const toggle = el("input");
      toggle.type = "checkbox";
      toggle.checked = open.active.has(constraint.title);
      toggle.dataset.title = constraint.title;
      toggle.addEventListener("change", () => {
        if (toggle.checked) open.active.add(constraint.title);
        else open.active.delete(constraint.title);
      });
      label.append(toggle, el("strong", "", constraint.title), el("span", "", ` — ${constraint.description}`));
      if (open.fresh.has(constraint.title)) label.append(el("span", "label practice-new", "new"));
      box.append(label);
    }
    const locked = open.total === null ? 0 : open.total - open.constraints.length;
    if (locked > 0) box.append(el("p", "drawer-note", `${locked} more unlock as your level rises.`));
  }

  private renderStatus(): void {
    const open = this.open;
    const box = this.status;
    if (!open || !box) return;
    box.replaceChildren();
    if (this.submitButton) this.submitButton.disabled = open.status.kind === "reviewing";
    const status = open.status;
    if (status.kind === "reviewing") {
      box.append(this.statusLine("practice-status", "Paige is reviewing your solution…"));
    } else if (status.kind === "failed") {
      const last = open.last;
      box.append(this.errorBox(status.error, () => last && this.submit(last)));
    } else if (status.kind === "reviewed") {
      box.append(...this.review(status.review));
    }
  }

  private review(review: ReviewResponse): HTMLElement[] {
    const verdict = el("p", review.passed ? "practice-verdict passed" : "practice-verdict", `${review.passed ? "Passed ✓" : "Not passed yet ✗"} · level ${review.level}/10`);
    verdict.dataset.testid = "practice-verdict";
    const feedback = el("p", "practice-feedback", review.feedback);
    feedback.dataset.testid = "practice-feedback";
    const parts: HTMLElement[] = [el("h3", "", "Review"), verdict, feedback];
    const next = followUpText(review.followUp);
    if (next) {
      const follow = el("p", "practice-follow-up", next);
      follow.dataset.testid = "practice-follow-up";
      parts.push(follow);
    }
    if (review.unlockedConstraints.length) {
      const unlocked = el("ul", "practice-unlocked");
      unlocked.dataset.testid = "practice-unlocked";
      for (const c of review.unlockedConstraints) unlocked.append(el("li", "", `${c.title} (level ${c.minLevel})`));
      parts.push(el("h3", "", "Newly unlocked constraints"), unlocked);
    }
    return parts;
  }

  private statusLine(testid: string, text: string): HTMLElement {
    const status = el("p", "explain-status", text);
    status.dataset.testid = testid;
    status.setAttribute("role", "status");
    return status;
  }

  private errorBox(error: string, retry: () => void): HTMLElement {
    const box = el("div", "panel-error");
    box.dataset.testid = "practice-error";
    box.append(...errorMessage(error));
    const button = el("button", "secondary", "Retry");
    button.type = "button";
    button.dataset.testid = "practice-retry";
    button.addEventListener("click", retry);
    box.append(button);
    return box;
  }
}

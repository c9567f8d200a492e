// The coaching panel without a session: what the learner can start from — the project's
// GitHub issues, sessions left open (a crash, a closed window), or work typed in a small
// form — and what happens next. Sends `session:start` / `session:resume`; a refusal comes
// back as `connection:error` and is shown here, with a retry.
import type { ClientPayloads, SessionOptions } from "./protocol";
import { el } from "./dom";

export const NEXT_STEP = "Claude Code in the terminal plans the work; Paige turns the plan into phases here.";

/** What the learner last asked for, kept so a refused request can be retried as it was. */
export type StartRequest =
  | { type: "session:start"; payload: ClientPayloads["session:start"] }
  | { type: "session:resume"; payload: ClientPayloads["session:resume"] };

export interface StartViewActions {
  /** Sends the request; the view shows it pending until `sessionStarted`/`failed`. */
  request(request: StartRequest): void;
  /** Asks for the options again (`session:list`). */
  refresh(): void;
}

/** "Started 3 hours ago · 2 of 5 phases done", from a resumable session. */
export function resumableLine(session: SessionOptions["resumable"][number], now: number = Date.now()): string {
  const parts: string[] = [];
  const started = Date.parse(session.startedAt);
  if (Number.isFinite(started)) parts.push(`started ${ago(now - started)}`);
  if (session.phasesTotal > 0) parts.push(`${session.phasesCompleted} of ${session.phasesTotal} phases done`);
  else parts.push("no plan yet");
  return parts.join(" · ");
}

/** The issue a learner typed: "12", "#12" or the issue's URL (…/issues/12); null when it
 * is none of these. */
export function parseIssueRef(text: string): number | null {
  const typed = text.trim();
  const match = /^#?(\d+)$/.exec(typed) ?? /^https?:\/\/\S+\/issues\/(\d+)(?:[/?#]\S*)?$/.exec(typed);
  const number = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(number) && number > 0 ? number : null;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago". */
export function ago(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/** The name a resumable session goes by in the list. */
export function resumableTitle(session: SessionOptions["resumable"][number]): string {
  if (session.issueNumber !== null) return `#${session.issueNumber} ${session.title ?? ""}`.trim();
  return session.title ?? "Untitled session";
}

export class StartView {
  readonly root = el("section", "start-view");
  private options: SessionOptions | null = null;
  private pending: StartRequest | null = null;
  private error: { message: string; request: StartRequest | null } | null = null;
  /** A line about the session just wrapped up, shown above the options. */
  private notice: string | null = null;
  private title = "";
  private description = "";
  private issueRef = "";

  constructor(private readonly actions: StartViewActions) {
    this.root.dataset.testid = "start-view";
    this.render();
  }

  /** The options arrived (`session:options`). */
  setOptions(options: SessionOptions): void {
    this.options = options;
    this.render();
  }

  /** Back to the start view with nothing pending; the options are asked for again. */
  reset(notice: string | null = null): void {
    this.pending = null;
    this.error = null;
    this.notice = notice;
    this.options = null;
    this.render();
    this.actions.refresh();
  }

  /** A request was refused (`connection:error` for `session:start`/`session:resume`). */
  failed(message: string): void {
    this.error = { message, request: this.pending };
    this.pending = null;
    this.render();
  }

  get isPending(): boolean {
    return this.pending !== null;
  }

  /** Sends `request` and shows it pending (also for a restore the panel starts itself). */
  request(request: StartRequest): void {
    this.pending = request;
    this.error = null;
    this.render();
    this.actions.request(request);
  }

  private render(): void {
    const busy = this.pending !== null;
    const parts: HTMLElement[] = [];
    if (this.notice) {
      const notice = el("p", "start-notice", this.notice);
      notice.dataset.testid = "start-notice";
      parts.push(notice);
    }
    parts.push(el("p", "start-lead", "Start a coaching session: pick an issue or say what you want to work on."));
    parts.push(this.renderIssues(busy), this.renderResumable(busy), this.renderForm(busy));
    if (busy) {
      const status = el("p", "start-status", "Starting the session…");
      status.dataset.testid = "start-status";
      parts.push(status);
    }
    if (this.error) parts.push(this.renderError(this.error));
    const next = el("p", "start-next", NEXT_STEP);
    next.dataset.testid = "start-next";
    parts.push(next);
    // The issues arriving while the learner types re-render the form: the field they were
    // in keeps the focus and the caret (its text is kept on every keystroke).
    const focused = document.activeElement;
    const typing = focused instanceof HTMLInputElement || focused instanceof HTMLTextAreaElement;
    const was = typing && this.root.contains(focused) ? focused : null;
    this.root.replaceChildren(...parts);
    if (was?.dataset.testid) {
      const again = this.root.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[data-testid="${was.dataset.testid}"]`);
      if (again && !again.disabled) {
        again.focus();
        again.setSelectionRange(was.selectionStart, was.selectionEnd, was.selectionDirection ?? undefined);
      }
    }
  }

  private renderIssues(busy: boolean): HTMLElement {
    const section = el("div", "start-issues");
    section.dataset.testid = "start-issues";
    if (!this.options) {
      section.append(el("p", "start-quiet", "Looking for the project's issues…"));
      return section;
    }
    if (this.options.issuesError) {
      // Not an error to fix before starting: the issue can be typed in the form below.
      const quiet = el("p", "start-quiet", `No GitHub issues: ${this.options.issuesError.replace(/\.?$/, ".")} Type an issue number or URL below, or say what you want to work on.`);
      quiet.dataset.testid = "issues-error";
      section.append(quiet);
      return section;
    }
    if (this.options.issues.length === 0) {
      section.append(el("p", "start-quiet", "The project has no open issues."));
      return section;
    }
    section.append(el("h3", "start-heading", "Issues"));
    const list = el("ul", "start-list");
    for (const issue of this.options.issues) {
      const button = el("button", "start-option");
      button.type = "button";
      button.dataset.testid = "start-issue";
      button.dataset.number = String(issue.number);
      button.disabled = busy;
      button.append(el("strong", "", `#${issue.number}`), document.createTextNode(` ${issue.title}`));
      for (const label of issue.labels) button.append(el("span", "label", label));
      button.addEventListener("click", () => this.request({ type: "session:start", payload: { issueNumber: issue.number } }));
      const item = el("li");
      item.append(button);
      list.append(item);
    }
    section.append(list);
    return section;
  }

  private renderResumable(busy: boolean): HTMLElement {
    const section = el("div", "start-resumable");
    const sessions = this.options?.resumable ?? [];
    if (sessions.length === 0) return section;
    section.append(el("h3", "start-heading", "Pick up where you left off"));
    const list = el("ul", "start-list");
    for (const session of sessions) {
      const button = el("button", "start-option");
      button.type = "button";
      button.dataset.testid = "resume-session";
      button.dataset.sessionId = session.sessionId;
      button.disabled = busy;
      button.append(el("strong", "", resumableTitle(session)), el("small", "", resumableLine(session)));
      button.addEventListener("click", () => this.request({ type: "session:resume", payload: { sessionId: session.sessionId } }));
      const item = el("li");
      item.append(button);
      list.append(item);
    }
    section.append(list);
    return section;
  }

  private renderForm(busy: boolean): HTMLElement {
    const form = el("form", "start-form");
    form.dataset.testid = "start-form";
    const label = el("label", "start-heading", "What do you want to work on?");
    const title = el("input", "start-title");
    title.dataset.testid = "start-title";
    title.name = "title";
    title.placeholder = "e.g. Retry failed uploads";
    title.value = this.title;
    title.disabled = busy;
    title.id = "start-title";
    label.htmlFor = title.id;
    title.addEventListener("input", () => (this.title = title.value));
    const description = el("textarea", "start-description");
    description.dataset.testid = "start-description";
    description.name = "description";
    description.rows = 3;
    description.placeholder = "More detail (optional)";
    description.value = this.description;
    description.disabled = busy;
    description.addEventListener("input", () => (this.description = description.value));
    const issueLabel = el("label", "start-quiet", "GitHub issue (optional): number or URL");
    const issue = el("input", "start-issue-field");
    issue.dataset.testid = "start-issue-ref";
    issue.name = "issue";
    issue.id = "start-issue-ref";
    issue.placeholder = "e.g. 12 or https://github.com/owner/repo/issues/12";
    issue.value = this.issueRef;
    issue.disabled = busy;
    issueLabel.htmlFor = issue.id;
    issue.addEventListener("input", () => (this.issueRef = issue.value));
    const submit = el("button", "primary", "Start");
    submit.type = "submit";
    submit.dataset.testid = "start-submit";
    submit.disabled = busy;
    const hint = el("p", "start-form-error");
    hint.dataset.testid = "start-form-error";
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const typed = this.title.trim();
      const more = this.description.trim();
      const ref = this.issueRef.trim();
      const issueNumber = ref ? parseIssueRef(ref) : null;
      if (ref && issueNumber === null) {
        hint.textContent = "An issue is its number (12, #12) or its URL (…/issues/12).";
        issue.focus();
        return;
      }
      if (!typed && issueNumber === null) {
        hint.textContent = "Say in a few words what you want to work on, or give an issue.";
        title.focus();
        return;
      }
      // With an issue, Paige reads it with `gh` when it can; the typed words stand in otherwise.
      const payload: ClientPayloads["session:start"] = {};
      if (issueNumber !== null) payload.issueNumber = issueNumber;
      if (typed) payload.title = typed;
      if (more) payload.description = more;
      this.request({ type: "session:start", payload });
    });
    form.append(label, title, description, issueLabel, issue, hint, submit);
    return form;
  }

  private renderError(error: { message: string; request: StartRequest | null }): HTMLElement {
    const box = el("div", "panel-error");
    box.dataset.testid = "start-error";
    box.append(el("p", "", `Could not start: ${error.message}`));
    const retry = el("button", "secondary", "Retry");
    retry.type = "button";
    retry.dataset.testid = "start-retry";
    retry.addEventListener("click", () => {
      if (error.request) this.request(error.request);
      else this.reset();
    });
    box.append(retry);
    return box;
  }
}

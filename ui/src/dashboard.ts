// The launch screen, shown in the editor area while no file is open (spec Story 12): the
// Dreyfus radar, stat cards with a period switcher, the learning signals (reliance-chart.ts),
// in-progress sessions (Resume), the project's issues ranked for this learner (Start), katas
// and learning materials.
//
// Loads progressively: `dashboard:request` is answered at once with `dashboard:state`
// (radar, stats, sessions, katas); the issues and the materials arrive later, each on its
// own, so their sections show skeletons until then, and an error inline with a Retry
// (issues: `dashboard:refresh_issues`; materials: a new `dashboard:request`).
//
// Starting and resuming go through the coaching panel (`DashboardHooks.start`), which shows
// the request pending and any refusal. Opening a kata belongs to Practice: the dashboard
// dispatches `paige:open-kata` (bubbling, `detail: {kataId}`) from its root.
//
// Spaced review (issue 31): "3 reviews due" (from the state's `reviewsDue`, then each
// `reviews:due`) opens the review drawer (`DashboardHooks.openReviews`, review.ts); beside it
// "Export learning record" (record.ts).
import { PERIODS, SUITABILITY, dueText, greeting, rankIssues, statCards } from "./dashboard-text";
import { el, errorMessage } from "./dom";
import { type OpenExternal, desktopOpener, externalLink } from "./links";
import type {
  DashboardIssue,
  DashboardState,
  KataSummary,
  LearningResource,
  MaterialRecommendation,
  Period,
  ServerPayloads,
} from "./protocol";
import { radarChart, stageName } from "./radar";
import { type RecordOptions, RecordExporter } from "./record";
import { learningView } from "./reliance-chart";
import { type StartRequest, ago } from "./session-start";
import type { Transport } from "./transport";

/** The event a kata's Open button dispatches (Practice opens the kata). */
export const OPEN_KATA_EVENT = "paige:open-kata";
export type OpenKataDetail = { kataId: string };

/** How long the materials' skeleton waits before saying there are none: Paige sends nothing
 * when no knowledge gap is left to research (spec EC-85), and the state cannot always tell. */
export const MATERIALS_QUIET_MS = 120_000;

export { PERIODS, SUITABILITY, dueText, greeting, minutesText, rankIssues, statCards } from "./dashboard-text";

export interface DashboardHooks {
  /** Starts or resumes a session through the coaching panel. */
  start(request: StartRequest): void;
  /** Opens an https: link outside the app; `null` in the browser (links open a new tab). */
  openExternal?: OpenExternal | null;
  /** Now, for "started 3 h ago" (tests). */
  now?: () => number;
  /** Takes the interview the learner skipped (through the coaching panel). */
  interview?: () => void;
  /** Opens the review drawer on what is due. */
  openReviews?: () => void;
  /** How the learning record is exported (tests: the desktop app's way or the browser's). */
  record?: RecordOptions;
}

/** A section still waiting, answered, or failed. */
type Slot<T> = { kind: "loading" } | { kind: "ready"; value: T } | { kind: "error"; error: string } | { kind: "none" };

export class Dashboard {
  readonly root = el("div", "dashboard");
  private period: Period = "all";
  private state: DashboardState | null = null;
  /** Whether the stats shown are for an older period than the one asked for. */
  private statsPending = false;
  private issues: Slot<DashboardIssue[]> = { kind: "loading" };
  private materials: Slot<MaterialRecommendation[]> = { kind: "loading" };
  private stateError: string | null = null;
  private linkError: string | null = null;
  /** The session's interview was skipped: offered again here. */
  private interviewOffered = false;
  private quiet: ReturnType<typeof setTimeout> | null = null;
  /** Reviews due now: the state's count, then each `reviews:due`'s; null before either. */
  private reviewsDue: number | null = null;
  /** "Export learning record" and what came of it (`record:exported`, `record:error`). */
  readonly record: RecordExporter;
  private readonly openExternal: OpenExternal | null;
  private readonly now: () => number;

  constructor(
    private readonly transport: Pick<Transport, "send">,
    private readonly hooks: DashboardHooks,
  ) {
    this.root.dataset.testid = "dashboard";
    this.openExternal = hooks.openExternal === undefined ? desktopOpener() : hooks.openExternal;
    this.now = hooks.now ?? Date.now;
    this.record = new RecordExporter(transport, hooks.record);
    this.render();
  }

  /** Asks for everything again (`dashboard:request`) for `period`: the state answers at once,
   * issues and materials follow (Paige keeps its answers until a session completes or a day
   * passes). What is on screen stays until its replacement arrives. */
  load(period: Period = this.period): void {
    this.request(period, false);
  }

  /** Asks Paige to rank the issues and look for materials again instead of sending the
   * answers it keeps (`dashboard:request` with `refresh`). */
  refresh(): void {
    this.request(this.period, true);
  }

  private request(period: Period, refresh: boolean): void {
    this.period = period;
    this.statsPending = true;
    this.stateError = null;
    if (refresh || this.issues.kind === "error") this.issues = { kind: "loading" };
    if (refresh || this.materials.kind !== "ready") this.waitForMaterials();
    this.transport.send("dashboard:request", refresh ? { statsPeriod: period, refresh } : { statsPeriod: period });
    this.render();
  }

  /** Whether to offer the interview the learner skipped in the active session. */
  offerInterview(offer: boolean): void {
    if (offer === this.interviewOffered) return;
    this.interviewOffered = offer;
    this.render();
  }

  /** `dashboard:state`, to this UI. Stats for another period than the one chosen last are
   * an older answer: the rest of it is still news. */
  setState(state: DashboardState): void {
    const shown = state.stats.period === this.period ? null : this.state;
    this.statsPending = state.stats.period !== this.period;
    // The learning signals are the period's too: an older answer keeps the ones shown.
    this.state = shown ? { ...state, stats: shown.stats, learning: shown.learning } : state;
    this.reviewsDue = state.reviewsDue;
    // The state counts the review items there are; `reviews:list` first makes items of what is
    // new (a session's gaps, a wrong answer) and its `reviews:due` brings the count up to date.
    this.transport.send("reviews:list", {});
    // With every gap addressed, all time, Paige skips the materials and sends nothing.
    if (this.materials.kind === "loading" && state.stats.period === "all" && state.stats.knowledgeGapsIdentified === state.stats.knowledgeGapsAddressed) {
      this.materials = { kind: "none" };
      this.stopWaiting();
    }
    this.render();
  }

  /** `reviews:due` (to this UI): how many reviews are due now. */
  setReviewsDue(due: ServerPayloads["reviews:due"]): void {
    if (due.dueCount === this.reviewsDue) return;
    this.reviewsDue = due.dueCount;
    this.render();
  }

  /** `dashboard:issues` (to every UI). */
  setIssues(msg: ServerPayloads["dashboard:issues"]): void {
    this.issues = { kind: "ready", value: rankIssues(msg.issues) };
    this.render();
  }

  issuesFailed(msg: ServerPayloads["dashboard:issues_error"]): void {
    this.issues = { kind: "error", error: msg.error };
    this.render();
  }

  /** `dashboard:materials` (to every UI). */
  setMaterials(msg: ServerPayloads["dashboard:materials"]): void {
    this.stopWaiting();
    this.materials = { kind: "ready", value: msg.recommendations };
    this.render();
  }

  materialsFailed(msg: ServerPayloads["dashboard:materials_error"]): void {
    this.stopWaiting();
    this.materials = { kind: "error", error: msg.error };
    this.render();
  }

  /** A `connection:error` for a request of the dashboard; true when shown here. */
  requestFailed(type: string, message: string): boolean {
    if (type === "dashboard:request") {
      this.statsPending = false;
      this.stateError = message;
    } else if (type === "dashboard:refresh_issues") {
      this.issues = { kind: "error", error: message };
    } else if (type === "record:export") {
      return this.record.failed({ error: message });
    } else return false;
    this.render();
    return true;
  }

  private refreshIssues(): void {
    this.issues = { kind: "loading" };
    this.transport.send("dashboard:refresh_issues", {});
    this.render();
  }

  private retryMaterials(): void {
    this.materials = { kind: "loading" };
    this.load();
  }

  private waitForMaterials(): void {
    this.materials = { kind: "loading" };
    this.stopWaiting();
    this.quiet = setTimeout(() => {
      this.quiet = null;
      if (this.materials.kind !== "loading") return;
      this.materials = { kind: "none" };
      this.render();
    }, MATERIALS_QUIET_MS);
  }

  private stopWaiting(): void {
    if (this.quiet) clearTimeout(this.quiet);
    this.quiet = null;
  }

  private link(url: string, text: string): HTMLElement {
    return externalLink(url, text, this.openExternal, (message) => {
      this.linkError = message;
      this.render();
    });
  }

  private render(): void {
    const head = el("header", "dash-head");
    const refresh = el("button", "secondary dash-refresh", "Refresh suggestions");
    refresh.type = "button";
    refresh.dataset.testid = "dash-refresh";
    refresh.title = "Ask the model again for the issues to work on and the learning materials";
    refresh.addEventListener("click", () => this.refresh());
    head.append(el("h1", "", greeting(this.state)), this.renderPeriods(), refresh);
    const parts: HTMLElement[] = [head];
    if (this.linkError) {
      const error = el("p", "dash-link-error", this.linkError);
      error.dataset.testid = "link-error";
      error.setAttribute("role", "alert");
      parts.push(error);
    }
    if (this.stateError) parts.push(errorBox("state-error", `Could not load the dashboard: ${this.stateError}`, () => this.load()));
    if (this.interviewOffered && this.hooks.interview) parts.push(this.renderInterviewOffer(this.hooks.interview));
    const top = el("div", "dash-top");
    top.append(this.renderSkills(), this.renderStats());
    parts.push(top, this.renderReviews(), this.renderLearning(), this.renderSessions(), this.renderIssues(), this.renderKatas(), this.renderMaterials());
    this.root.replaceChildren(...parts);
  }

  private renderInterviewOffer(interview: () => void): HTMLElement {
    const box = el("section", "dash-interview");
    box.dataset.testid = "dash-interview";
    box.append(el("p", "dash-quiet", "You skipped Paige's short interview. A few minutes about your past projects help the coaching start where you are."));
    const take = el("button", "secondary", "Take the interview");
    take.type = "button";
    take.dataset.testid = "dash-interview-start";
    take.addEventListener("click", interview);
    box.append(take);
    return box;
  }

  private renderPeriods(): HTMLElement {
    const box = el("div", "dash-periods");
    box.dataset.testid = "period-switcher";
    box.setAttribute("role", "radiogroup");
    box.setAttribute("aria-label", "Stats period");
    for (const { period, label } of PERIODS) {
      const button = el("button", "dash-period", label);
      button.type = "button";
      button.dataset.testid = "period";
      button.dataset.period = period;
      const chosen = period === this.period;
      button.classList.toggle("chosen", chosen);
      button.setAttribute("role", "radio");
      button.setAttribute("aria-checked", String(chosen));
      button.addEventListener("click", () => {
        if (period !== this.period || this.stateError) this.load(period);
      });
      box.append(button);
    }
    return box;
  }

  private renderSkills(): HTMLElement {
    const box = section("skills", "Skills");
    if (!this.state) return withSkeleton(box, "skills-skeleton", 1);
    box.append(radarChart(this.state.dreyfus));
    if (!this.state.dreyfus.length) {
      box.append(el("p", "dash-quiet", "Paige assesses your stage in each skill area when a coaching session wraps up."));
      return box;
    }
    const list = el("ul", "dash-stages");
    for (const item of this.state.dreyfus) {
      const row = el("li", "", `${item.skillArea}: `);
      row.append(el("strong", "", stageName(item.stage)));
      list.append(row);
    }
    box.append(list);
    return box;
  }

  private renderStats(): HTMLElement {
    const box = section("stats", "Progress");
    if (!this.state) return withSkeleton(box, "stats-skeleton", 3);
    const grid = el("div", "dash-cards");
    grid.classList.toggle("dash-stale", this.statsPending);
    grid.setAttribute("aria-busy", String(this.statsPending));
    for (const card of statCards(this.state.stats)) {
      const node = el("div", "dash-card");
      node.dataset.testid = "stat-card";
      node.dataset.stat = card.key;
      node.append(el("span", "dash-card-value", card.value), el("span", "dash-card-label", card.label));
      grid.append(node);
    }
    box.append(grid);
    return box;
  }

  /** Reviews due (a button opening the drawer) and the record's export. */
  private renderReviews(): HTMLElement {
    const box = section("reviews", "Review and record");
    const row = el("div", "dash-reviews-row");
    const count = this.reviewsDue;
    if (count !== null && count > 0 && this.hooks.openReviews) {
      const open = el("button", "primary dash-reviews-due", dueText(count));
      open.type = "button";
      open.dataset.testid = "reviews-due";
      open.dataset.count = String(count);
      open.title = "Answer a short question about what you found hard; Paige schedules the next review";
      open.addEventListener("click", this.hooks.openReviews);
      row.append(open);
    } else if (count !== null) {
      const none = el("p", "dash-quiet", "No reviews due");
      none.dataset.testid = "reviews-none";
      row.append(none);
    }
    row.append(this.record.root);
    box.append(row);
    return box;
  }

  private renderLearning(): HTMLElement {
    const box = section("learning", "Learning signals");
    if (!this.state) return withSkeleton(box, "learning-skeleton", 2);
    box.classList.toggle("dash-stale", this.statsPending);
    box.setAttribute("aria-busy", String(this.statsPending));
    box.append(...learningView(this.state.learning));
    return box;
  }

  private renderSessions(): HTMLElement {
    const box = section("sessions", "In progress");
    if (!this.state) return withSkeleton(box, "sessions-skeleton", 1);
    const sessions = this.state.inProgressSessions;
    if (!sessions.length) {
      box.append(el("p", "dash-quiet", "No session in progress."));
      return box;
    }
    const list = el("ul", "dash-list");
    // The live session first: it is the one being coached now, not one to resume.
    for (const session of [...sessions].sort((a, b) => Number(b.live ?? false) - Number(a.live ?? false))) {
      const item = el("li", "dash-row");
      item.dataset.testid = "in-progress-session";
      item.dataset.sessionId = session.id;
      const name = session.issueNumber !== null ? `#${session.issueNumber} ${session.issueTitle ?? ""}`.trim() : (session.issueTitle ?? "Untitled session");
      const text = el("div", "dash-row-text");
      text.append(el("strong", "", name));
      const started = Date.parse(session.startedAt);
      if (Number.isFinite(started)) text.append(el("small", "", `started ${ago(this.now() - started)}`));
      if (session.live) {
        item.dataset.live = "true";
        const progress = session.phasesTotal ? `${session.phasesCompleted} of ${session.phasesTotal} phases done` : "planning";
        const live = el("small", "dash-live", `Now · ${progress} · $${(session.costSoFar ?? 0).toFixed(2)} so far`);
        live.dataset.testid = "live-session";
        text.append(live);
        item.append(text);
      } else {
        item.append(text, this.action("Resume", "resume-session", { type: "session:resume", payload: { sessionId: session.id } }));
      }
      list.append(item);
    }
    box.append(list);
    return box;
  }

  private renderIssues(): HTMLElement {
    const box = section("issues", "Issues for you");
    const slot = this.issues;
    if (slot.kind === "loading" || slot.kind === "none") {
      box.append(el("p", "dash-quiet", "Paige is reading the project's issues…"));
      return withSkeleton(box, "issues-skeleton", 3);
    }
    if (slot.kind === "error") {
      // Without `gh` (or not logged in) the issues are not an error to fix first: a quiet
      // note, and the coaching panel takes an issue number or URL typed by hand.
      const note = withError(box, "dash-issues-error", `No GitHub issues here: ${slot.error}`, () => this.refreshIssues());
      note.querySelector(".panel-error")?.classList.replace("panel-error", "dash-quiet-error");
      note.append(el("p", "dash-quiet", "You can still start: type an issue number or URL, or say what to work on, in the coaching panel."));
      return note;
    }
    if (!slot.value.length) {
      box.append(el("p", "dash-quiet", "The project has no open issues."));
      return box;
    }
    const list = el("ol", "dash-list dash-issues");
    for (const issue of slot.value) list.append(this.renderIssue(issue));
    box.append(list);
    return box;
  }

  private renderIssue(issue: DashboardIssue): HTMLElement {
    const item = el("li", "dash-issue");
    item.dataset.testid = "dash-issue";
    item.dataset.number = String(issue.number);
    const line = el("div", "dash-issue-line");
    const badge = el("span", `dash-badge suitability-${issue.suitability}`, SUITABILITY[issue.suitability].label);
    badge.dataset.testid = "suitability";
    badge.dataset.suitability = issue.suitability;
    badge.title = issue.suitabilityReason;
    // `gh` gives each issue's URL; a payload that carries it makes the title a link.
    const url = issue.url;
    const title = `#${issue.number} ${issue.title}`;
    line.append(typeof url === "string" ? this.link(url, title) : el("strong", "", title), badge, el("span", "dash-difficulty", issue.estimatedDifficulty));
    item.append(line, el("p", "dash-summary", issue.summary));
    if (issue.suitabilityReason) item.append(el("p", "dash-reason", issue.suitabilityReason));
    if (issue.relevantSkills.length) {
      const skills = el("div", "labels");
      for (const skill of issue.relevantSkills) skills.append(el("span", "label", skill));
      item.append(skills);
    }
    if (issue.learningOpportunities.length) {
      item.append(el("p", "dash-learn", `You would learn: ${issue.learningOpportunities.join("; ")}`));
    }
    item.append(this.action("Start a session", "start-issue", { type: "session:start", payload: { issueNumber: issue.number } }));
    return item;
  }

  private renderKatas(): HTMLElement {
    const box = section("katas", "Practice katas");
    if (!this.state) return withSkeleton(box, "katas-skeleton", 2);
    if (!this.state.katas.length) {
      box.append(el("p", "dash-quiet", "No katas yet: Paige makes them from what you found hard when a session wraps up."));
      return box;
    }
    const list = el("ul", "dash-list");
    for (const kata of this.state.katas) list.append(this.renderKata(kata));
    box.append(list);
    return box;
  }

  private renderKata(kata: KataSummary): HTMLElement {
    const item = el("li", "dash-row");
    item.dataset.testid = "dash-kata";
    item.dataset.kataId = kata.id;
    const text = el("div", "dash-row-text");
    const tries = `${kata.attemptsCount} attempt${kata.attemptsCount === 1 ? "" : "s"}`;
    const best = kata.bestLevel === null ? "not passed yet" : `best level ${kata.bestLevel}/10`;
    const progress = el("small", "", `${kata.topic} · ${tries} · ${best}`);
    progress.dataset.testid = "kata-progress";
    text.append(el("strong", "", kata.title), progress);
    const open = el("button", "secondary", "Practise");
    open.type = "button";
    open.dataset.testid = "open-kata";
    open.addEventListener("click", () => {
      const detail: OpenKataDetail = { kataId: kata.id };
      this.root.dispatchEvent(new CustomEvent(OPEN_KATA_EVENT, { detail, bubbles: true }));
    });
    item.append(text, open);
    return item;
  }

  private renderMaterials(): HTMLElement {
    const box = section("materials", "Learning materials");
    const slot = this.materials;
    if (slot.kind === "loading") {
      box.append(el("p", "dash-quiet", "Paige is searching the web for material on your knowledge gaps…"));
      return withSkeleton(box, "materials-skeleton", 2);
    }
    if (slot.kind === "error") return withError(box, "materials-error", slot.error, () => this.retryMaterials());
    if (slot.kind === "none" || !slot.value.length) {
      const none = el("p", "dash-quiet", "No learning materials: Paige suggests some once a session finds a knowledge gap.");
      none.dataset.testid = "materials-none";
      box.append(none);
      return box;
    }
    for (const rec of slot.value) {
      const gap = el("article", "dash-gap");
      gap.dataset.testid = "material";
      gap.append(el("h4", "", rec.knowledgeGap));
      if (rec.studyOrder) gap.append(el("p", "dash-summary", rec.studyOrder));
      const list = el("ul", "dash-resources");
      for (const resource of rec.resources) list.append(this.renderResource(resource));
      if (rec.resources.length) gap.append(list);
      else gap.append(el("p", "dash-quiet", "The search found no resource for this gap."));
      if (rec.practiceConnection) gap.append(el("p", "dash-learn", rec.practiceConnection));
      box.append(gap);
    }
    return box;
  }

  private renderResource(resource: LearningResource): HTMLElement {
    const item = el("li", "dash-resource");
    item.dataset.relevance = resource.relevance;
    const line = el("div", "");
    line.append(this.link(resource.url, resource.title), el("span", "label", resource.type));
    if (resource.estimatedTime) line.append(el("small", "", ` ${resource.estimatedTime}`));
    item.append(line);
    if (resource.description) item.append(el("p", "dash-summary", resource.description));
    return item;
  }

  private action(label: string, testid: string, request: StartRequest): HTMLButtonElement {
    const button = el("button", "primary", label);
    button.type = "button";
    button.dataset.testid = testid;
    button.addEventListener("click", () => this.hooks.start(request));
    return button;
  }
}

function section(name: string, title: string): HTMLElement {
  const box = el("section", `dash-section dash-${name}`);
  box.dataset.testid = `dash-${name}`;
  box.append(el("h2", "dash-title", title));
  return box;
}

function withSkeleton(box: HTMLElement, testid: string, lines: number): HTMLElement {
  const skeleton = el("div", "skeleton");
  skeleton.dataset.testid = testid;
  skeleton.setAttribute("aria-busy", "true");
  for (let i = 0; i < lines; i++) skeleton.append(el("div", "skeleton-line"));
  box.append(skeleton);
  return box;
}

function withError(box: HTMLElement, testid: string, message: string, retry: () => void): HTMLElement {
  box.append(errorBox(testid, message, retry));
  return box;
}

function errorBox(testid: string, message: string, retry: () => void): HTMLElement {
  const error = el("div", "panel-error");
  error.dataset.testid = testid;
  error.setAttribute("role", "alert");
  error.append(...errorMessage(message));
  const button = el("button", "secondary", "Retry");
  button.type = "button";
  button.dataset.testid = `${testid}-retry`;
  button.addEventListener("click", retry);
  error.append(button);
  return error;
}

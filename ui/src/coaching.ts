// The coaching side: the coaching panel (the start view without a session; with one its
// title, the intake interview, the plan's phases, the hint level, progress, "just show me"
// and the end of the session), and toasts for coaching messages and nudges. The learning
// signals (comprehension checks, the reliance gauge) are learning.ts's, mounted below the plan.
import { el, errorMessage, keepFocus } from "./dom";
import { IntakePanel } from "./intake";
import { LearningPanel } from "./learning";
import type { ConnectionInit, HintLevel, IssueContext, PhaseSummary, ServerPayloads, SessionStarted, StepCheck } from "./protocol";
import { NEXT_STEP, type StartRequest, StartView } from "./session-start";
import type { Transport } from "./transport";
import { ShowMe, WorkedExampleDrawer } from "./worked-example";

const TOAST_MS = 8000;
/** After this long without a plan the panel offers to ask Claude Code to plan again. */
export const REPLAN_AFTER_MS = 3 * 60_000;
/** The tool calls kept to show while Claude Code plans, newest last. */
const ACTIVITY_KEPT = 6;

export const HINT_LEVELS: { level: HintLevel; label: string; title: string }[] = [
  { level: "none", label: "None", title: "No hints: find your own way" },
  { level: "file", label: "File", title: "Which files to look at" },
  { level: "region", label: "Region", title: "Which part of those files" },
  { level: "line", label: "Line", title: "Which lines" },
];

const STATUS_TEXT: Record<PhaseSummary["status"], string> = { pending: "to do", active: "in progress", complete: "done" };

/** The phase in progress: the active one, else the first pending one (as the core picks it). */
export function currentPhase(phases: PhaseSummary[]): PhaseSummary | undefined {
  return phases.find((p) => p.status === "active") ?? phases.find((p) => p.status === "pending");
}

/** "2 of 5 phases done". */
export function progressText(phases: PhaseSummary[]): string {
  const done = phases.filter((p) => p.status === "complete").length;
  return `${done} of ${phases.length} phase${phases.length === 1 ? "" : "s"} done`;
}

/** "1.2 s", "850 ms". */
function durationText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The phase's step check, in a line: running…, passed ✓, failed ✗ with why, or why it
 * could not run. */
export function stepCheckText(check: StepCheck): string {
  const took = check.durationMs === undefined ? "" : ` (${durationText(check.durationMs)})`;
  switch (check.status) {
    case "running":
      return "Checking your step…";
    case "passed":
      return `Passed ✓ ${check.summary}${took}`;
    case "failed": {
      const again = check.consecutiveFailures > 1 ? ` — ${check.consecutiveFailures} checks in a row` : "";
      return `Failed ✗ ${check.summary}${again}`;
    }
    case "error":
      return `Not checked: ${check.summary}`;
  }
}

/** What a finished session's wrap-up noted, in a sentence. */
export function completedText(msg: ServerPayloads["session:completed"]): string {
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  return (
    `Session wrapped up: ${n(msg.knowledgeGaps, "knowledge gap", "knowledge gaps")}, ` +
    `${n(msg.kataSpecs, "practice kata", "practice katas")}, ${n(msg.dreyfusUpdates, "skill assessment", "skill assessments")} ` +
    `and ${n(msg.memoriesStored, "memory", "memories")} noted.`
  );
}

interface Session {
  id: string;
  issue: IssueContext | null;
  title: string | null;
  description: string | null;
}

type Mode = "connecting" | "start" | "session" | "wrapping";

const NOTHING_TO_WRAP_UP = "Session ended. It had no plan and no work yet, so there was nothing to wrap up.";

/** What Claude Code is doing while the session waits for its plan, in a line. */
export function planWaitText(activity: ServerPayloads["coaching:agent_activity"][]): string {
  if (activity.length === 0) return "Waiting for Claude Code to start on the plan…";
  return "Claude Code is reading the code…";
}

/** One tool call, as shown in the waiting list: "Read src/main.rs". */
export function activityLine(activity: ServerPayloads["coaching:agent_activity"]): string {
  const tool = activity.tool.replace(/^mcp__paige__/, "");
  return activity.detail ? `${tool} ${activity.detail}` : tool;
}

export class CoachingPanel {
  private mode: Mode = "connecting";
  private session: Session | null = null;
  private phases: PhaseSummary[] = [];
  /** Each phase's latest step check, by phase number. */
  private checks = new Map<number, StepCheck>();
  private level: HintLevel = "none";
  private plan: { difficulty: string; memoryConnection: string | null } | null = null;
  private endError: string | null = null;
  /** Claude Code's tool calls while the session waits for its plan, newest last. */
  private activity: ServerPayloads["coaching:agent_activity"][] = [];
  /** Since when (local clock) the session has waited for a plan; reset by a replan. */
  private waitingSince = 0;
  /** Why the last plan could not become phases (`coaching:plan_failed`), until a new try. */
  private planError: string | null = null;
  private replanTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly now: () => number;
  private readonly start: StartView;
  private readonly showMe: ShowMe;
  private readonly drawer: WorkedExampleDrawer;
  /** The session's intake interview (intake.ts); main routes the intake:* frames to it. */
  readonly intake: IntakePanel;
  /** The session's comprehension checks and reliance gauge (learning.ts); main routes the
   * learning:* frames to it. */
  readonly learning: LearningPanel;
  /** Told after each redraw whether the session's interview was skipped (the dashboard
   * offers it again). */
  onInterviewSkipped: (skipped: boolean) => void = () => {};

  constructor(
    private readonly host: HTMLElement,
    private readonly transport: Pick<Transport, "send">,
    drawerHost: HTMLElement = host,
    now: () => number = Date.now,
  ) {
    this.now = now;
    this.start = new StartView({
      request: (request: StartRequest) => this.sendStart(request),
      refresh: () => this.transport.send("session:list", {}),
    });
    this.showMe = new ShowMe(() => this.transport.send("coaching:show_me", {}));
    this.drawer = new WorkedExampleDrawer(drawerHost);
    this.intake = new IntakePanel(transport, {
      onChange: () => this.render(),
      terminal: (transport as Partial<Transport>).hasTerminal ?? true,
      // The wait for a plan starts when the interview hands over, not at the session's start.
      onHandOver: () => {
        this.waitingSince = this.now();
      },
    });
    this.learning = new LearningPanel(transport, () => this.host);
    this.render();
  }

  /** `connection:init`: without a session the start view. With one, Paige has already sent
   * this UI alone its `session:started` (a reload, a second window): nothing to ask for. */
  connectionInit(msg: ConnectionInit): void {
    if (msg.sessionId === null) {
      if (this.mode === "wrapping") return;
      this.toStart(null);
    }
  }

  sessionOptions(msg: ServerPayloads["session:options"]): void {
    this.start.setOptions(msg);
  }

  sessionStarted(msg: SessionStarted): void {
    this.session = {
      id: msg.sessionId,
      issue: msg.issueContext,
      title: msg.title ?? msg.issueContext?.title ?? null,
      description: msg.description ?? null,
    };
    this.phases = msg.phases.map((p) => ({ ...p }));
    this.checks.clear();
    this.level = currentPhase(this.phases)?.hintLevel ?? msg.hintLevel;
    this.plan = null;
    this.endError = null;
    this.activity = [];
    this.waitingSince = this.now();
    this.planError = null;
    this.mode = "session";
    this.showMe.reset();
    this.drawer.close();
    this.intake.setSession(msg.sessionId);
    this.learning.setSession(msg.sessionId);
    this.render();
  }

  sessionResumed(msg: ServerPayloads["session:resumed"]): void {
    this.sessionStarted(msg.restoredState);
  }

  /** `session:wrapping_up`: the session's wrap-up started — from this panel's End button,
   * another window's, or Claude Code (`paige_end_session`, its SessionEnd): all look alike. */
  wrappingUp(msg: ServerPayloads["session:wrapping_up"]): void {
    if (this.session?.id !== msg.sessionId || this.mode !== "session") return;
    this.mode = "wrapping";
    this.endError = null;
    this.render();
  }

  /** `coaching:agent_activity`: a tool call Claude Code made while the plan is awaited. */
  agentActivity(msg: ServerPayloads["coaching:agent_activity"]): void {
    if (this.session?.id !== msg.sessionId || this.phases.length > 0) return;
    this.activity = [...this.activity, msg].slice(-ACTIVITY_KEPT);
    this.render();
  }

  /** `coaching:plan_failed`: Claude Code's plan could not become phases; the panel says why
   * where the plan would be and offers to plan again at once. */
  planFailed(msg: ServerPayloads["coaching:plan_failed"]): void {
    if (this.session?.id !== msg.sessionId || this.phases.length > 0) return;
    this.planError = msg.message;
    this.render();
  }

  /** `session:ended`: this panel's session is over. Not while this panel waits for its own
   * wrap-up (`session:completed` follows), and not for a session set aside earlier. A session
   * ended with no plan and no work is not wrapped up: it ends `abandoned`, and this is the end. */
  sessionEnded(msg: ServerPayloads["session:ended"]): void {
    if (this.session?.id !== msg.summary.sessionId) return;
    const abandoned = msg.summary.status === "abandoned";
    if (this.mode === "wrapping" && !abandoned) return;
    this.toStart(this.mode === "wrapping" ? NOTHING_TO_WRAP_UP : null);
  }

  /** `session:completed`: the wrap-up of this panel's session is done (another's — a
   * session set aside — only had its toast). */
  sessionCompleted(msg: ServerPayloads["session:completed"]): void {
    if (this.session?.id !== msg.sessionId) return;
    this.toStart(completedText(msg));
  }

  issueContext(issue: IssueContext): void {
    if (!this.session) return;
    this.session.issue = issue;
    this.session.title ??= issue.title;
    this.render();
  }

  planReady(msg: ServerPayloads["coaching:plan_ready"]): void {
    this.phases = msg.phases.map((p) => ({ ...p }));
    this.checks.clear();
    this.level = currentPhase(this.phases)?.hintLevel ?? this.level;
    this.plan = { difficulty: msg.estimatedDifficulty, memoryConnection: msg.memoryConnection };
    this.planError = null;
    this.showMe.reset();
    this.render();
  }

  phaseUpdate(msg: ServerPayloads["coaching:phase_update"]): void {
    const before = currentPhase(this.phases)?.number;
    const phase = this.phases.find((p) => p.number === msg.phase);
    if (phase) {
      phase.status = msg.status;
      if (msg.description) phase.description = msg.description;
      if (msg.hintLevel) phase.hintLevel = msg.hintLevel;
      if (msg.hintReason) phase.hintReason = msg.hintReason;
    }
    const now = currentPhase(this.phases);
    if (now && (now.number !== before || now.number === msg.phase)) this.level = now.hintLevel;
    this.render();
  }

  /** `coaching:step_check`: shown beside its phase. */
  stepCheck(msg: StepCheck): void {
    if (!this.session || !this.phases.some((p) => p.number === msg.phase)) return;
    this.checks.set(msg.phase, msg);
    this.render();
  }

  workedExample(msg: ServerPayloads["coaching:worked_example"]): void {
    this.showMe.arrived();
    this.drawer.show(msg);
  }

  workedExampleError(msg: ServerPayloads["coaching:worked_example_error"]): void {
    this.showMe.failed(msg.error);
  }

  /** A `connection:error` about a session or interview request; true when the panel showed it. */
  requestFailed(type: string, message: string): boolean {
    if (type.startsWith("intake:")) return this.intake.requestFailed(type, message);
    if (type === "session:start" || type === "session:resume") {
      if (this.mode === "session" || this.mode === "wrapping") return false;
      this.mode = "start";
      this.start.failed(message);
      this.render();
      return true;
    }
    if (type === "session:end" && this.mode === "wrapping") {
      this.mode = "session";
      this.endError = message;
      this.render();
      return true;
    }
    return false;
  }

  /** A start or resume asked for elsewhere (the dashboard): without a session it shows
   * pending and refused here, as if picked in the start view (ignored while one is pending);
   * during one it sets that session aside, and a refusal is a toast. */
  requestStart(request: StartRequest): void {
    const inSession = this.mode === "session" || this.mode === "wrapping";
    if (!inSession && this.start.isPending) return;
    this.start.request(request);
  }

  private sendStart(request: StartRequest): void {
    if (request.type === "session:start") this.transport.send("session:start", request.payload);
    else this.transport.send("session:resume", request.payload);
  }

  private toStart(notice: string | null): void {
    this.session = null;
    this.activity = [];
    this.phases = [];
    this.checks.clear();
    this.plan = null;
    this.endError = null;
    this.mode = "start";
    this.showMe.reset();
    this.intake.setSession(null);
    this.learning.setSession(null);
    this.render();
    this.start.reset(notice);
  }

  private endSession(): void {
    this.mode = "wrapping";
    this.endError = null;
    this.render();
    this.transport.send("session:end", {});
  }

  private replan(): void {
    this.transport.send("coaching:replan", {});
    this.planError = null;
    this.activity = [];
    this.waitingSince = this.now();
    this.render();
  }

  /** The learner marks the phase in progress done (as Claude Code's `paige_update_phase`). */
  private markDone(phase: PhaseSummary): void {
    this.transport.send("coaching:phase_done", { phase: phase.number });
  }

  private changeLevel(level: HintLevel): void {
    const phase = currentPhase(this.phases);
    if (!phase || level === this.level) return;
    this.transport.send("hints:level_change", { level, previousLevel: this.level });
    this.level = level;
    phase.hintLevel = level;
    this.render();
  }

  private render(): void {
    // Re-rendering moves the interview's and the questions' answer boxes: they keep the keys.
    const restoreFocus = keepFocus(this.intake.root, this.learning.root);
    const title = el("h2", "panel-title", "Coaching");
    if (this.mode === "connecting") {
      this.host.replaceChildren(title, el("p", "muted", "Connecting…"));
    } else if (this.mode === "start" || !this.session) {
      this.host.replaceChildren(title, this.start.root);
    } else {
      this.host.replaceChildren(title, ...this.renderSession(this.session));
    }
    this.host.dataset.mode = this.mode;
    this.onInterviewSkipped(this.mode === "session" && this.intake.skipped);
    restoreFocus();
  }

  private renderSession(session: Session): HTMLElement[] {
    const head = el("section", "session-head");
    head.dataset.testid = "session-head";
    const name = session.issue ? `#${session.issue.number} ${session.issue.title}` : (session.title ?? "Coaching session");
    const heading = el("h3", "", name);
    heading.dataset.testid = "session-title";
    head.append(heading);
    const about = session.issue?.summary || session.description;
    if (about) head.append(el("p", "session-about", about));
    if (session.issue?.labels.length) {
      const labels = el("div", "labels");
      for (const label of session.issue.labels) labels.append(el("span", "label", label));
      head.append(labels);
    }
    const parts: HTMLElement[] = [head];
    const hasPlan = this.phases.length > 0;
    this.syncReplanTimer(!hasPlan && !this.intake.interviewing && this.mode === "session");
    if (hasPlan) {
      parts.push(...this.renderPlan());
      // The plan comes first; a finished interview folds away below it.
      if (this.intake.shown(true)) parts.push(this.intake.interviewing ? this.intake.root : this.foldedIntake());
    } else {
      if (this.intake.shown(false)) parts.push(this.intake.root);
      if (!this.intake.interviewing) parts.push(this.renderWaiting(), this.learning.root);
    }
    parts.push(this.renderFooter());
    return parts;
  }

  private foldedIntake(): HTMLElement {
    const fold = el("details", "intake-fold");
    fold.dataset.testid = "intake-fold";
    fold.append(el("summary", "", "Getting to know you (done)"), this.intake.root);
    return fold;
  }

  /** While Claude Code plans: what it does, and after a few minutes "plan again". */
  private renderWaiting(): HTMLElement {
    const box = el("div", "session-waiting");
    box.dataset.testid = "plan-waiting";
    box.setAttribute("role", "status");
    box.append(el("p", "plan-wait-text", planWaitText(this.activity)));
    if (this.activity.length > 0) {
      const list = el("ul", "agent-activity");
      list.dataset.testid = "agent-activity";
      for (const call of this.activity) {
        const item = el("li", "", activityLine(call));
        item.dataset.testid = "agent-call";
        list.append(item);
      }
      box.append(list);
    }
    box.append(el("p", "muted", NEXT_STEP));
    if (this.planError !== null) {
      const failed = el("div", "plan-error");
      failed.dataset.testid = "plan-error";
      failed.setAttribute("role", "alert");
      failed.append(...errorMessage(this.planError));
      box.append(failed);
    }
    const slow = this.now() - this.waitingSince >= REPLAN_AFTER_MS;
    if ((slow || this.planError !== null) && this.mode === "session") {
      if (this.planError === null) box.append(el("p", "plan-slow", "No plan yet after a few minutes."));
      const again = el("button", "secondary", "Ask Claude Code to plan again");
      again.type = "button";
      again.dataset.testid = "replan";
      again.addEventListener("click", () => this.replan());
      box.append(again);
    }
    return box;
  }

  /** Re-renders when the "plan again" offer is due (only while a plan is awaited). */
  private syncReplanTimer(waiting: boolean): void {
    if (this.replanTimer !== null) clearTimeout(this.replanTimer);
    this.replanTimer = null;
    const due = this.waitingSince + REPLAN_AFTER_MS - this.now();
    if (waiting && due > 0) this.replanTimer = setTimeout(() => this.render(), due + 50);
  }

  private renderPlan(): HTMLElement[] {
    const current = currentPhase(this.phases);
    const progress = el("p", "progress", progressText(this.phases));
    progress.dataset.testid = "progress";
    const list = el("ol", "phases");
    list.dataset.testid = "phases";
    for (const phase of this.phases) {
      const item = el("li", `phase phase-${phase.status}`);
      item.dataset.testid = "phase";
      item.dataset.number = String(phase.number);
      item.dataset.status = phase.status;
      const isCurrent = phase === current;
      if (isCurrent) {
        item.classList.add("phase-current");
        item.dataset.current = "true";
        item.setAttribute("aria-current", "step");
      }
      const line = el("div", "phase-line");
      line.append(el("strong", "", phase.title), el("span", "phase-status", isCurrent && phase.status === "pending" ? "next" : STATUS_TEXT[phase.status]));
      item.append(line);
      if (phase.skillArea) item.append(el("span", "phase-skill", phase.skillArea));
      if (isCurrent || phase.status !== "complete") item.append(el("p", "phase-description", phase.description));
      if (phase.hintReason) {
        const reason = el("p", "hint-reason", phase.hintReason);
        reason.dataset.testid = "hint-reason";
        item.append(reason);
      }
      if (isCurrent && this.mode === "session") item.append(this.renderLevels(), this.renderPhaseActions(phase));
      const check = this.checks.get(phase.number);
      if (check) item.append(this.renderCheck(check));
      else if (isCurrent && phase.testFilter) {
        const done = el("p", "step-check step-check-waiting", `Done when the test “${phase.testFilter}” passes: saving an expected file checks it.`);
        done.dataset.testid = "step-check";
        done.dataset.status = "waiting";
        item.append(done);
      }
      list.append(item);
    }
    // The checks of the phases done, and the gauge, right below the phases.
    const parts: HTMLElement[] = [progress, list, this.learning.root];
    if (current && this.mode === "session") parts.push(this.showMe.root);
    if (this.plan) {
      const meta = el("p", "plan-meta", `Difficulty: ${this.plan.difficulty}`);
      if (this.plan.memoryConnection) meta.append(el("br"), document.createTextNode(this.plan.memoryConnection));
      parts.push(meta);
    }
    return parts;
  }

  private renderPhaseActions(phase: PhaseSummary): HTMLElement {
    const row = el("div", "phase-actions");
    const done = el("button", "secondary", "Mark phase done");
    done.type = "button";
    done.dataset.testid = "phase-done";
    done.title = "Tell Paige and Claude Code you finished this phase";
    done.addEventListener("click", () => this.markDone(phase));
    row.append(done);
    return row;
  }

  private renderCheck(check: StepCheck): HTMLElement {
    const line = el("p", `step-check step-check-${check.status}`, stepCheckText(check));
    line.dataset.testid = "step-check";
    line.dataset.status = check.status;
    line.setAttribute("role", "status");
    if (check.command) line.title = check.command;
    return line;
  }

  private renderLevels(): HTMLElement {
    const box = el("div", "hint-levels");
    box.dataset.testid = "hint-levels";
    box.setAttribute("role", "radiogroup");
    box.setAttribute("aria-label", "Hint level");
    box.append(el("span", "hint-levels-label", "Hints:"));
    for (const { level, label, title } of HINT_LEVELS) {
      const button = el("button", "hint-level", label);
      button.type = "button";
      button.title = title;
      button.dataset.testid = "hint-level";
      button.dataset.level = level;
      const chosen = level === this.level;
      button.classList.toggle("chosen", chosen);
      button.setAttribute("role", "radio");
      button.setAttribute("aria-checked", String(chosen));
      button.addEventListener("click", () => this.changeLevel(level));
      box.append(button);
    }
    return box;
  }

  private renderFooter(): HTMLElement {
    const footer = el("div", "session-footer");
    const end = el("button", "secondary", "End session");
    end.type = "button";
    end.dataset.testid = "end-session";
    end.disabled = this.mode === "wrapping";
    end.addEventListener("click", () => this.endSession());
    footer.append(end);
    if (this.mode === "wrapping") {
      const wrapping = el("p", "wrapping", "Wrapping up… Paige is noting what you learned.");
      wrapping.dataset.testid = "wrapping-up";
      footer.append(wrapping);
    }
    if (this.endError) {
      const box = el("div", "panel-error");
      box.dataset.testid = "end-error";
      box.append(el("p", "", `Could not end the session: ${this.endError}`));
      const retry = el("button", "secondary", "Retry");
      retry.type = "button";
      retry.dataset.testid = "end-retry";
      retry.addEventListener("click", () => this.endSession());
      box.append(retry);
      footer.append(box);
    }
    return footer;
  }
}

export class Toasts {
  constructor(private readonly host: HTMLElement) {}

  /** Shows `message`; one already on screen is not shown twice (a notice can reach a window
   * both when its terminal starts and in the hello that follows). */
  show(message: string, kind: string): void {
    const showing = [...this.host.querySelectorAll<HTMLElement>(".toast")].some(
      (t) => t.dataset.message === message && t.classList.contains(`toast-${kind}`),
    );
    if (showing) return;
    // An error's details fold below its sentence; any other notice shows whole.
    const toast = el("div", `toast toast-${kind}`, kind === "error" ? "" : message);
    if (kind === "error") toast.append(...errorMessage(message));
    toast.dataset.message = message;
    toast.dataset.testid = "toast";
    // A click dismisses it, but not one that opens its details.
    toast.addEventListener("click", (e) => {
      if (!(e.target instanceof Element && e.target.closest("details"))) toast.remove();
    });
    this.host.append(toast);
    setTimeout(() => toast.remove(), TOAST_MS);
  }

  /** Removes the toasts whose message starts with `prefix` (a notice whose moment passed). */
  dismiss(prefix: string): void {
    for (const toast of this.host.querySelectorAll<HTMLElement>(".toast")) {
      if (toast.dataset.message?.startsWith(prefix)) toast.remove();
    }
  }
}

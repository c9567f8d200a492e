// Boots the UI: one transport, the panels, and the routing of every server frame.
import "./style.css";
import { CoachingPanel, Toasts } from "./coaching";
import { Dashboard, OPEN_KATA_EVENT } from "./dashboard";
import { ExplainPanel } from "./explain";
import { Explorer } from "./explorer";
import { FOCUS_TERMINAL_EVENT } from "./intake";
import { LazyEditor } from "./lazy-editor";
import { ObserverStatus, nudgeText } from "./observer";
import { PracticePanel } from "./practice";
import { type AnyFrame, type ServerFrame, encodeFrame } from "./protocol";
import { ReviewPanel } from "./review";
import { call, errorText, inDesktop } from "./shell";
import { mountTerminal, showAgentCommand } from "./terminal";
import { connect } from "./transport";
import { ProjectsPanel } from "./welcome";

const app = document.getElementById("app");
if (!app) throw new Error("#app missing from index.html");
app.innerHTML = `
  <header class="topbar">
    <span class="brand">Paige</span>
    <button class="project-button hidden" data-testid="project-button" title="Projects and settings"></button>
    <span class="conn" data-testid="conn-status"></span>
    <span class="spacer"></span>
    <button class="dashboard-button" data-testid="dashboard-button" title="Your progress, reviews and what to work on next">Dashboard</button>
    <button class="practice-button" data-testid="practice-button" title="Practise katas made from what you found hard">Practice</button>
    <span class="observer" data-testid="observer"></span>
  </header>
  <main class="layout">
    <aside class="explorer" data-testid="explorer"></aside>
    <section class="center">
      <div class="tabs" data-testid="tabs"></div>
      <div class="editor-wrap">
        <div class="editor" data-testid="editor"></div>
        <div class="empty"></div>
      </div>
      <div class="terminal-pane" data-testid="terminal"></div>
    </section>
    <aside class="coaching" data-testid="coaching"></aside>
  </main>
  <div class="toasts"></div>`;

const q = (selector: string): HTMLElement => {
  const node = app.querySelector<HTMLElement>(selector);
  if (!node) throw new Error(`${selector} missing`);
  return node;
};

const transport = connect(() =>
  encodeFrame("connection:hello", {
    version: "0.1.0",
    platform: navigator.platform || "unknown",
    windowSize: { width: window.innerWidth, height: window.innerHeight },
  }),
);

const conn = q(".conn");
transport.onState((state) => {
  conn.dataset.state = state;
  conn.textContent = state === "open" ? "connected" : state === "refused" ? "address out of date" : state;
  if (state === "refused") showRefused();
});

/** The page's token no longer opens Paige: say why and what to do, once. */
function showRefused(): void {
  if (document.querySelector(".refused-banner")) return;
  const banner = document.createElement("div");
  banner.className = "refused-banner";
  banner.setAttribute("role", "alert");
  banner.textContent =
    "This address no longer opens Paige: its tokens were rotated, or Paige was restarted and keeps its UI token " +
    "in memory only (no OS layer guards Claude Code). Open the ui: address Paige printed last.";
  document.body.prepend(banner);
}

// In the desktop app the project's name opens the projects and settings overlay.
if (inDesktop()) {
  const button = q(".project-button");
  button.classList.remove("hidden");
  button.textContent = document.title.replace(/ — Paige$/, "");
  button.addEventListener("click", () => void showProjects());
}
async function showProjects(): Promise<void> {
  if (document.querySelector(".welcome.overlay")) return;
  try {
    const state = await call("app_state", {});
    const panel = new ProjectsPanel(document.body, {
      mode: "overlay",
      onOpened: () => window.location.reload(),
      onClose: () => panel.remove(),
    });
    panel.render(state);
  } catch (err) {
    toasts.show(`Cannot show the projects: ${errorText(err)}`, "error");
  }
}

const empty = q(".empty");
const editor = new LazyEditor(transport, q(".tabs"), q(".editor"));
// The dashboard shows where the editor is while no file is open; with files open the
// topbar's Dashboard shows it over the editor until a tab or a file is chosen.
let editorEmpty = true;
let dashboardOver = false;
const showDashboard = (over: boolean): void => {
  dashboardOver = over && !editorEmpty;
  empty.classList.toggle("hidden", !editorEmpty && !dashboardOver);
  q(".dashboard-button").classList.toggle("chosen", dashboardOver || editorEmpty);
};
editor.onEmptyChange = (isEmpty) => {
  editorEmpty = isEmpty;
  showDashboard(false);
};
q(".tabs").addEventListener("click", () => showDashboard(false));
const explorer = new Explorer(q(".explorer"), transport, (path) => {
  showDashboard(false);
  editor.open(path);
});
// Monaco loads as the user heads for a file, so the first one opens without the wait.
for (const event of ["pointerenter", "focusin"]) q(".explorer").addEventListener(event, () => editor.preload(), { once: true });
const coaching = new CoachingPanel(q(".coaching"), transport, q(".layout"));
// The launch screen, while no file is open; Start and Resume go through the coaching panel.
// Its "N reviews due" opens the spaced-review drawer.
const reviews = new ReviewPanel(q(".layout"), transport);
const dashboard = new Dashboard(transport, {
  start: (request) => coaching.requestStart(request),
  interview: () => coaching.intake.begin(),
  openReviews: () => reviews.show(),
});
coaching.onInterviewSkipped = (skipped) => dashboard.offerInterview(skipped);
empty.append(dashboard.root);
const explain = new ExplainPanel(q(".layout"), transport);
editor.onExplain = (request) => explain.request(request);
const practice = new PracticePanel(q(".layout"), transport);
q(".practice-button").addEventListener("click", () => practice.showList());
q(".dashboard-button").addEventListener("click", () => {
  showDashboard(!dashboardOver);
  if (dashboardOver) dashboard.load();
});
// A kata's Practise button on the dashboard opens it in the Practice drawer.
app.addEventListener(OPEN_KATA_EVENT, (event) => practice.openKata((event as CustomEvent<{ kataId: string }>).detail.kataId));
const observer = new ObserverStatus(q(".observer"), transport);
const toasts = new Toasts(q(".toasts"));
/** The notice `coaching/pipeline.rs` sends while it turns Claude Code's plan into phases. */
const PLANNING_NOTICE = "Turning Claude Code's plan into phases";
const terminal = mountTerminal(q(".terminal-pane"), transport);
// The interview's hand-over: "Go to the terminal" gives it the keys.
app.addEventListener(FOCUS_TERMINAL_EVENT, () => {
  q(".terminal-pane").scrollIntoView({ block: "nearest" });
  terminal.focus();
});

function route(frame: ServerFrame): void {
  switch (frame.type) {
    case "fs:tree":
      return explorer.setTree(frame.payload.root);
    case "fs:children":
      return explorer.children(frame.payload);
    case "fs:list_error":
      return explorer.listFailed(frame.payload);
    case "fs:tree_update":
      explorer.update(frame.payload);
      if (frame.payload.action === "unlink" || frame.payload.action === "rename") editor.fileGone(frame.payload.path, true);
      if (frame.payload.action === "add" || frame.payload.action === "change") editor.fileGone(frame.payload.path, false);
      if (frame.payload.action === "rename" && frame.payload.newPath) editor.fileGone(frame.payload.newPath, false);
      return;
    case "fs:content":
    case "editor:open_file":
      return editor.showFile(frame.payload);
    case "fs:save_ack":
      return editor.saveAcknowledged(frame.payload);
    case "fs:save_error":
      return toasts.show(`Could not save ${frame.payload.path}: ${frame.payload.error}`, "error");
    case "editor:decorations":
      return editor.setDecorations(frame.payload);
    case "editor:clear_decorations":
      return editor.clearDecorations(frame.payload.path);
    case "editor:highlight_lines":
      return editor.highlightLines(frame.payload);
    case "editor:clear_highlights":
      return editor.clearHighlights(frame.payload.path);
    case "editor:hover_hint":
      return editor.hoverHint(frame.payload);
    case "explorer:hint_files":
      return explorer.setHints(frame.payload);
    case "explorer:clear_hints":
      return explorer.clearHints();
    case "session:started":
      coaching.sessionStarted(frame.payload);
      for (const path of frame.payload.openFiles ?? []) editor.open(path);
      return;
    case "session:resumed":
      coaching.sessionResumed(frame.payload);
      // The files the session had open (`file:open` each; the core answers fs:content).
      for (const path of frame.payload.restoredState.openFiles ?? []) editor.open(path);
      return;
    case "session:options":
      return coaching.sessionOptions(frame.payload);
    case "session:ended":
      return coaching.sessionEnded(frame.payload);
    case "session:completed":
      return coaching.sessionCompleted(frame.payload);
    case "session:wrapping_up":
      return coaching.wrappingUp(frame.payload);
    case "coaching:agent_activity":
      return coaching.agentActivity(frame.payload);
    case "coaching:issue_context":
      return coaching.issueContext(frame.payload);
    // The "Turning Claude Code's plan into phases…" notice is over once the plan (or why
    // there is none) shows in the panel: it does not linger over the terminal.
    case "coaching:plan_ready":
      toasts.dismiss(PLANNING_NOTICE);
      return coaching.planReady(frame.payload);
    case "coaching:plan_failed":
      toasts.dismiss(PLANNING_NOTICE);
      return coaching.planFailed(frame.payload);
    case "coaching:phase_update":
      return coaching.phaseUpdate(frame.payload);
    case "coaching:worked_example":
      return coaching.workedExample(frame.payload);
    case "coaching:worked_example_error":
      return coaching.workedExampleError(frame.payload);
    case "coaching:step_check":
      return coaching.stepCheck(frame.payload);
    case "learning:check":
      return coaching.learning.check(frame.payload);
    case "learning:signals":
      return coaching.learning.signals(frame.payload);
    case "learning:error":
      // Beside its question or on its phase's card; without either on screen, a toast.
      if (!coaching.learning.error(frame.payload)) toasts.show(frame.payload.error, "error");
      return;
    case "coaching:message":
      return toasts.show(frame.payload.message, frame.payload.type);
    case "intake:state":
      return coaching.intake.state(frame.payload);
    case "intake:sentence":
      return coaching.intake.sentence(frame.payload);
    case "intake:reply_done":
      return coaching.intake.replyDone(frame.payload);
    case "intake:transition":
      return coaching.intake.transition(frame.payload);
    case "intake:error":
      coaching.intake.error(frame.payload);
      // Shown in the interview's panel; without a session view to show it in, a toast.
      if (!coaching.intake.root.isConnected) toasts.show(frame.payload.message, "error");
      return;
    case "explain:response":
      return explain.response(frame.payload);
    case "explain:error":
      return explain.error(frame.payload);
    case "practice:katas":
      return practice.katasListed(frame.payload);
    case "practice:kata_load":
      return practice.kataLoaded(frame.payload);
    case "practice:kata_error":
      return practice.kataFailed(frame.payload);
    case "review:response":
      return practice.reviewed(frame.payload);
    case "review:error":
      return practice.reviewFailed(frame.payload);
    case "dashboard:state":
      return dashboard.setState(frame.payload);
    case "reviews:due":
      dashboard.setReviewsDue(frame.payload);
      return reviews.dueList(frame.payload);
    case "reviews:question":
      return reviews.question(frame.payload);
    case "reviews:graded":
      return reviews.graded(frame.payload);
    case "reviews:error":
      // Where it happened in the drawer; with the drawer closed (or moved on), a toast.
      if (!reviews.error(frame.payload)) toasts.show(frame.payload.error.split("\n")[0], "error");
      return;
    case "record:exported":
      return dashboard.record.exported(frame.payload);
    case "record:error":
      if (!dashboard.record.failed(frame.payload)) toasts.show(frame.payload.error.split("\n")[0], "error");
      return;
    case "dashboard:issues":
      return dashboard.setIssues(frame.payload);
    case "dashboard:issues_error":
      return dashboard.issuesFailed(frame.payload);
    case "dashboard:materials":
      return dashboard.setMaterials(frame.payload);
    case "dashboard:materials_error":
      return dashboard.materialsFailed(frame.payload);
    case "observer:nudge":
      return toasts.show(nudgeText(frame.payload), "hint");
    case "observer:status":
      return observer.update(frame.payload);
    case "connection:error": {
      // A refused session request is shown in the coaching panel, where it was made.
      const context = frame.payload.context as { type?: unknown } | null;
      if (typeof context?.type === "string" && coaching.requestFailed(context.type, frame.payload.message)) return;
      if (typeof context?.type === "string" && dashboard.requestFailed(context.type, frame.payload.message)) return;
      if (typeof context?.type === "string" && reviews.requestFailed(context.type, frame.payload.message)) return;
      if (frame.payload.code !== "NOT_IMPLEMENTED") toasts.show(frame.payload.message, "error");
      else console.info(frame.payload.message);
      return;
    }
    case "connection:init":
      // A new connection (start-up, a reconnect): the dashboard asks afresh.
      dashboard.load();
      showAgentCommand(terminal, transport, frame.payload.agentCommand);
      return coaching.connectionInit(frame.payload);
    case "dashboard:dreyfus":
    case "practice:solution_review":
      // Not for this UI: the radar comes in dashboard:state, and the practice panel submits
      // with review:request (answered by review:response); the spec's pair stays for clients.
      return;
    default:
      // Every server message type is routed: a new one the switch lacks fails to compile.
      return unrouted(frame);
  }
}

/** A frame of a type `route` does not know (an older UI talking to a newer Paige): logged. */
function unrouted(frame: never): void {
  console.warn("a frame of an unknown type", (frame as { type?: unknown }).type);
}

// The payloads of the last few frames of each type received, newest last (for debugging).
const FRAMES_KEPT = 5;
const recentFrames = new Map<string, unknown[]>();

transport.onFrame((frame: AnyFrame) => {
  const kept = recentFrames.get(frame.type) ?? [];
  kept.push(frame.payload);
  recentFrames.set(frame.type, kept.slice(-FRAMES_KEPT));
  route(frame as ServerFrame);
});

// Test and debugging hook: what the UI holds, without reaching into Monaco's DOM.
(window as unknown as { paige: unknown }).paige = {
  framesOf: (type: string) => [...(recentFrames.get(type) ?? [])],
  openTabs: () => editor.openedPaths(),
  activePath: () => editor.activePath(),
  isDirty: (path: string) => editor.isDirty(path),
  decorationCount: (path: string) => editor.decorationCount(path),
};

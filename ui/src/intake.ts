// The intake interview (issue 18): a short, time-boxed conversation about the learner's past
// projects before a session's coding, in its own panel inside the coaching panel's session
// view. The interviewer's replies stream in sentence by sentence; the learner's typing and
// answers go up (`intake:typing`, `intake:answer`); progress toward the gate shows in words,
// the guard's state in a closed debug panel (`intake-guard.ts`, FR-005) with a countdown that
// ticks locally. "Skip for now" ends it (`intake:skip`; it can be taken later). At the
// transition the panel shows Paige's scripted coding question and the next step. Without an
// interview (and without a plan) it offers "Interview me first".
import { el, errorMessage } from "./dom";
import { GuardDebug, debugSetting, gateProgress } from "./intake-guard";
import type { IntakeError, IntakePhase, IntakeReason, IntakeReplyDone, IntakeSentence, IntakeState, IntakeTransition } from "./protocol";
import type { Transport } from "./transport";

export { DEBUG_SETTING, TRAITS, countdownText, gateProgress, reasonText } from "./intake-guard";

/** How often the countdown is redrawn between states. */
export const TICK_MS = 250;
/** While keystrokes continue, `intake:typing {typing:true}` is sent again at most this often:
 * the server counts a learner quiet for 20 s as finished speaking, and a repeat keeps them
 * counted as typing. */
export const TYPING_REPEAT_MS = 5000;
/** A state's `atMs` further than this from the local clock is another machine's clock: the
 * countdown then counts from when the state arrived. */
const SKEW_MS = 5000;


const REASON_TEXT: Record<IntakeReason, string> = {
  timebox: "time is up",
  projects_cap: "we talked about two projects",
  gate: "Paige has heard enough to start",
  skipped: "you skipped it for now",
};

export interface IntakeOptions {
  /** The clock the countdown reads (ms since the epoch, as the server's `atMs`). */
  now?: () => number;
  /** Called when whether the panel has anything to show may have changed, so its host can
   * re-render around it. */
  onChange?: () => void;
  /** Whether the guard's debug panel starts open (default: the `paige.debug` setting). */
  debugOpen?: boolean;
  /** Whether this window has a terminal running Claude Code (the app's; the browser UI has
   * none: Claude Code runs in the learner's own terminal under `paige claude`). */
  terminal?: boolean;
  /** Called when the interview hands over to the coding (its end, or a skip). */
  onHandOver?: () => void;
}

interface Line {
  role: string;
  text: string;
  /** The interviewer's reply number, when known (lines rebuilt from a state have none). */
  turn?: number;
  /** False while an interviewer reply is still streaming. */
  done: boolean;
}

export class IntakePanel {
  readonly root = el("section", "intake");
  private sessionId: string | null = null;
  /** The interview's phase; null while this session has none (as far as this UI knows). */
  private phase: IntakePhase | null = null;
  private lines: Line[] = [];
  private awaitingAnswer = false;
  private guard: IntakeState | null = null;
  private ended: IntakeTransition | null = null;
  private failure: IntakeError | null = null;
  /** `intake:start` sent, nothing back yet. */
  private pending = false;
  /** The answer last sent, until a reply to it starts. */
  private sentAnswer: string | null = null;
  /** When (local clock) `intake:typing {typing:true}` was last sent for the answer being
   * typed; null: not sent (or `typing:false` since). */
  private typingAt: number | null = null;
  /** The countdown: `remainingMs` at local time `at`, or `frozen` once it stops. */
  private clock: { remainingMs: number; at: number; frozen: number | null } | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly now: () => number;
  private readonly onChange: () => void;
  private readonly transcript = el("div", "intake-transcript");
  private readonly input = el("textarea", "intake-input");
  private readonly send = el("button", "primary intake-send", "Send");
  private readonly form = el("form", "intake-form");
  private readonly debug: GuardDebug;

  private readonly onHandOver: () => void;
  private readonly terminal: boolean;

  constructor(
    private readonly transport: Pick<Transport, "send">,
    options: IntakeOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.onChange = options.onChange ?? (() => {});
    this.onHandOver = options.onHandOver ?? (() => {});
    this.terminal = options.terminal ?? true;
    this.debug = new GuardDebug(options.debugOpen ?? debugSetting());
    this.root.dataset.testid = "intake";
    this.transcript.dataset.testid = "intake-transcript";
    this.transcript.setAttribute("role", "log");
    this.transcript.setAttribute("aria-live", "polite");
    this.buildForm();
    this.render();
  }

  /** Whether this session has an interview (running or over). */
  get known(): boolean {
    return this.phase !== null;
  }

  /** Whether the learner skipped this session's interview (and has not taken it since). */
  get skipped(): boolean {
    return this.ended?.reason === "skipped";
  }

  /** Starts (or takes up again) the interview: `intake:start`. */
  begin(): void {
    this.start();
  }

  /** Whether the interview is still before its transition. */
  get interviewing(): boolean {
    return this.phase !== null && this.phase !== "coding";
  }

  /** Whether the host shows the panel: during and after an interview, with an error or a
   * start pending, and as the "Interview me first" offer while the session has no plan. */
  shown(hasPlan: boolean): boolean {
    return this.known || this.failure !== null || this.pending || !hasPlan;
  }

  /** The coaching panel's session (null: none). Another session starts from nothing. */
  setSession(sessionId: string | null): void {
    if (sessionId === this.sessionId) return;
    this.change(() => {
      this.sessionId = sessionId;
      this.phase = null;
      this.lines = [];
      this.awaitingAnswer = false;
      this.guard = null;
      this.ended = null;
      this.failure = null;
      this.pending = false;
      this.typingAt = null;
      this.sentAnswer = null;
      this.clock = null;
      this.input.value = "";
    });
  }

  /** `intake:state`: the guard after a change; also what a UI connecting mid-interview gets. */
  state(msg: IntakeState): void {
    if (this.sessionId !== null && msg.sessionId !== this.sessionId) return;
    this.change(() => {
      this.sessionId = msg.sessionId;
      this.phase = this.ended ? "coding" : msg.phase;
      this.guard = msg;
      this.pending = false;
      this.failure = null;
      // The server has not seen an answer this UI just sent: it is not waiting for one.
      const answerInFlight = this.lines.length > msg.transcript.length && this.lines.at(-1)?.role === "learner";
      this.adoptTranscript(msg);
      this.awaitingAnswer = msg.awaitingAnswer && !answerInFlight;
      this.setClock(msg);
    });
  }

  /** `intake:sentence`: the next checked sentence of the interviewer's reply `turn`. */
  sentence(msg: IntakeSentence): void {
    if (this.ended) return;
    this.change(() => {
      // A reply implies an interview, even if its state has not arrived yet.
      this.phase ??= "background";
      const line = this.replyLine(msg.turn);
      line.text = joinSentence(line.text, msg.text);
      this.sentAnswer = null;
      this.awaitingAnswer = false;
      this.failure = null;
      this.pending = false;
    });
  }

  /** `intake:reply_done`: the reply `turn` is finished; its text is the one to keep. */
  replyDone(msg: IntakeReplyDone): void {
    const line = this.replyLine(msg.turn);
    line.text = msg.text;
    line.done = true;
    if (!this.ended) this.awaitingAnswer = true;
    this.render();
  }

  /** `intake:transition`: the interview is over; the scripted coding question follows. */
  transition(msg: IntakeTransition): void {
    if (this.sessionId !== null && msg.sessionId !== this.sessionId) return;
    // Before the host renders around the hand-over.
    this.onHandOver();
    this.change(() => {
      this.sessionId = msg.sessionId;
      this.ended = msg;
      this.phase = "coding";
      this.awaitingAnswer = false;
      this.failure = null;
      this.pending = false;
      for (const line of this.lines) line.done = true;
      if (this.clock && this.clock.frozen === null) this.clock.frozen = this.remaining();
    });
  }

  /** `intake:error`: shown in the panel, with Retry when starting again may help. */
  error(msg: IntakeError): void {
    this.change(() => {
      this.failure = msg;
      this.pending = false;
    });
  }

  /** A `connection:error` for a request this panel sent; true when the panel showed it. A
   * refused answer goes back into the input, to send again. */
  requestFailed(type: string, message: string): boolean {
    if (type === "intake:start") {
      this.error({ message, retryable: true });
      return true;
    }
    if (type !== "intake:answer") return false;
    this.change(() => {
      const last = this.lines.at(-1);
      if (last?.role === "learner" && last.text === this.sentAnswer && this.interviewing) {
        this.lines.pop();
        if (!this.input.value) this.input.value = last.text;
        this.awaitingAnswer = true;
      }
      this.sentAnswer = null;
      this.failure = { message: `your answer did not reach Paige (${message})`, retryable: false };
    });
    return true;
  }

  private change(update: () => void): void {
    const before = this.shape();
    update();
    this.render();
    if (this.shape() !== before) this.onChange();
  }

  /** What the host's layout depends on. */
  private shape(): string {
    return [this.phase, this.failure !== null, this.pending].join("|");
  }

  private start(): void {
    this.transport.send("intake:start", {});
    this.change(() => {
      // Taking a skipped interview after all: its state follows.
      if (this.ended?.reason === "skipped") {
        this.ended = null;
        this.phase = null;
      }
      this.pending = true;
      this.failure = null;
    });
  }

  /** Keeps this UI's transcript when the state's is a prefix of it (a reply still
   * streaming, an answer just sent); otherwise the state's is the one to show. */
  private adoptTranscript(msg: IntakeState): void {
    const theirs = msg.transcript;
    const consistent =
      theirs.length <= this.lines.length &&
      theirs.every((line, i) => {
        const ours = this.lines[i];
        if (ours.role !== line.role) return false;
        if (ours.text === line.text) return true;
        return i === theirs.length - 1 && !ours.done && ours.text.startsWith(line.text);
      });
    if (consistent) return;
    const old = this.lines;
    this.lines = theirs.map((line, i) => ({
      role: line.role,
      text: line.text,
      turn: old[i]?.role === line.role ? old[i].turn : undefined,
      done: true,
    }));
    // A reply cut off by the reload keeps streaming into its line.
    const last = this.lines.at(-1);
    if (last && last.role === "interviewer" && !msg.awaitingAnswer && msg.phase !== "coding") last.done = false;
  }

  /** The line of reply `turn`: its own, the open reply a reload left without a number, or a
   * new one. */
  private replyLine(turn: number): Line {
    const own = this.lines.find((l) => l.role === "interviewer" && l.turn === turn);
    if (own) return own;
    const last = this.lines.at(-1);
    if (last && last.role === "interviewer" && !last.done && last.turn === undefined) {
      last.turn = turn;
      return last;
    }
    const line: Line = { role: "interviewer", text: "", turn, done: false };
    this.lines.push(line);
    return line;
  }

  private setClock(msg: IntakeState): void {
    const local = this.now();
    const at = Math.abs(local - msg.atMs) <= SKEW_MS ? msg.atMs : local;
    // Before the first question the timebox has not started; after the transition it stops
    // (a background state arriving after the transition keeps the value frozen then).
    let frozen: number | null = null;
    if (msg.phase !== "background") frozen = Math.max(0, msg.remainingMs);
    else if (this.ended) frozen = this.clock?.frozen ?? Math.max(0, msg.remainingMs - (local - at));
    this.clock = { remainingMs: msg.remainingMs, at, frozen };
  }

  private remaining(): number {
    if (!this.clock) return 0;
    if (this.clock.frozen !== null) return this.clock.frozen;
    return Math.max(0, this.clock.remainingMs - (this.now() - this.clock.at));
  }

  private syncTimer(): void {
    const ticking = this.clock !== null && this.clock.frozen === null && this.phase === "background";
    if (ticking && this.timer === null) this.timer = setInterval(() => this.debug.countdown(this.remaining(), this.clock !== null), TICK_MS);
    if (!ticking) this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private submit(): void {
    const text = this.input.value.trim();
    if (!text || !this.canAnswer()) return;
    this.transport.send("intake:answer", { text });
    this.sentAnswer = text;
    this.failure = null;
    this.input.value = "";
    this.typingAt = null;
    this.lines.push({ role: "learner", text, done: true });
    this.awaitingAnswer = false;
    this.render();
  }

  private typed(): void {
    const empty = this.input.value.length === 0;
    const now = this.now();
    if (!empty && (this.typingAt === null || now - this.typingAt >= TYPING_REPEAT_MS)) {
      this.typingAt = now;
      this.transport.send("intake:typing", { typing: true });
    } else if (empty && this.typingAt !== null) {
      this.typingAt = null;
      this.transport.send("intake:typing", { typing: false });
    }
    this.send.disabled = !this.canAnswer() || this.input.value.trim() === "";
  }

  private canAnswer(): boolean {
    return this.interviewing && this.awaitingAnswer;
  }

  private buildForm(): void {
    this.input.dataset.testid = "intake-input";
    this.input.rows = 3;
    this.input.placeholder = "Your answer (Enter sends, Shift+Enter for a new line)";
    this.input.setAttribute("aria-label", "Your answer");
    this.send.type = "submit";
    this.send.dataset.testid = "intake-send";
    this.input.addEventListener("input", () => this.typed());
    this.input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
      event.preventDefault();
      this.submit();
    });
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.form.append(this.input, this.send);
  }

  private render(): void {
    this.syncTimer();
    // Redrawing takes the answer box out of the page for a moment, which drops its focus:
    // noted here, given back once the parts are in place (a state arrives mid-answer).
    const focused = document.activeElement === this.input;
    const caret = [this.input.selectionStart, this.input.selectionEnd] as const;
    if (!this.known) {
      this.root.replaceChildren(...this.renderOffer());
      this.root.dataset.phase = "none";
      return;
    }
    this.root.dataset.phase = this.phase ?? "none";
    const parts: HTMLElement[] = [el("h3", "intake-title", "Getting to know you")];
    if (this.interviewing) {
      parts.push(el("p", "intake-lead", "A few minutes about projects you have worked on; then the coding starts."));
    }
    this.renderTranscript();
    parts.push(this.transcript);
    if (this.thinking()) {
      const thinking = el("p", "intake-thinking", "Paige is thinking…");
      thinking.dataset.testid = "intake-thinking";
      thinking.setAttribute("role", "status");
      parts.push(thinking);
    }
    if (this.failure) parts.push(this.renderFailure(this.failure));
    if (this.phase === "coding") parts.push(this.renderCoding());
    else {
      this.input.disabled = !this.canAnswer();
      this.send.disabled = !this.canAnswer() || this.input.value.trim() === "";
      if (this.guard) parts.push(this.renderProgress(this.guard));
      parts.push(this.form, this.renderSkip());
    }
    this.debug.render(this.guard, this.ended, this.remaining(), this.clock !== null);
    parts.push(this.debug.root);
    this.root.replaceChildren(...parts);
    // The learner's turn: the answer box they were typing in keeps (or takes back) the keys.
    if (this.phase !== "coding" && this.canAnswer() && (focused || document.activeElement === document.body)) {
      this.input.focus();
      if (focused) this.input.setSelectionRange(caret[0], caret[1]);
    }
  }

  private renderOffer(): HTMLElement[] {
    const parts: HTMLElement[] = [];
    const offer = el("div", "intake-offer");
    const button = el("button", "secondary", "Interview me first");
    button.type = "button";
    button.dataset.testid = "intake-start";
    button.disabled = this.pending;
    button.addEventListener("click", () => this.start());
    offer.append(button, el("p", "intake-lead", "A few minutes about your past projects before the coding, so Paige knows where to start."));
    if (this.pending) {
      const status = el("p", "intake-starting", "Starting the interview…");
      status.dataset.testid = "intake-starting";
      offer.append(status);
    }
    parts.push(offer);
    if (this.failure) parts.push(this.renderFailure(this.failure));
    return parts;
  }

  /** Waiting for the interviewer: an answer sent (or the interview starting) and no sentence
   * of the reply yet. */
  private thinking(): boolean {
    if (!this.interviewing || this.awaitingAnswer || this.failure) return false;
    const last = this.lines.at(-1);
    return !(last && last.role === "interviewer" && !last.done);
  }

  private renderTranscript(): void {
    // After the transition the server's transcript ends with the coding question, which its
    // own box below shows.
    const coding = this.ended?.codingQuestion;
    const shown = this.lines.filter((line, i) => !(i === this.lines.length - 1 && line.role === "interviewer" && line.text === coding));
    const items = shown.map((line) => {
      const item = el("div", `intake-line intake-line-${line.role}`);
      item.dataset.testid = "intake-line";
      item.dataset.role = line.role;
      if (line.turn !== undefined) item.dataset.turn = String(line.turn);
      if (!line.done) item.dataset.streaming = "true";
      item.append(el("span", "intake-who", line.role === "learner" ? "You" : line.role === "interviewer" ? "Paige" : line.role));
      item.append(el("p", "intake-text", line.text));
      return item;
    });
    this.transcript.replaceChildren(...items);
    this.transcript.scrollTop = this.transcript.scrollHeight;
  }

  private renderFailure(failure: IntakeError): HTMLElement {
    const box = el("div", "panel-error");
    box.dataset.testid = "intake-error";
    box.setAttribute("role", "alert");
    box.append(...errorMessage(failure.message, "The interview hit a problem: "));
    if (failure.retryable) {
      const retry = el("button", "secondary", "Retry");
      retry.type = "button";
      retry.dataset.testid = "intake-retry";
      retry.addEventListener("click", () => this.start());
      box.append(retry);
    }
    return box;
  }

  private renderProgress(guard: IntakeState): HTMLElement {
    const box = el("div", "intake-progress");
    box.dataset.testid = "intake-progress";
    const { fraction, text } = gateProgress(guard);
    const meter = el("meter");
    meter.min = 0;
    meter.max = 1;
    meter.value = fraction;
    meter.setAttribute("aria-label", "How close Paige is to starting the coding");
    const minutes = Math.max(1, Math.ceil(this.remaining() / 60_000));
    box.append(meter, el("p", "", `${text} At most ${minutes} min left.`));
    return box;
  }

  private renderSkip(): HTMLElement {
    const skip = el("button", "link intake-skip", "Skip for now");
    skip.type = "button";
    skip.dataset.testid = "intake-skip";
    skip.title = "Go straight to the coding; you can take the interview later";
    skip.addEventListener("click", () => this.transport.send("intake:skip", {}));
    return skip;
  }

  private renderCoding(): HTMLElement {
    const box = el("section", "intake-coding");
    box.dataset.testid = "intake-coding-question";
    const reason = this.ended?.reason ?? this.guard?.reason;
    if (reason === "skipped") {
      box.append(el("p", "intake-why", "You skipped the interview for now: Claude Code plans from the work itself, and the interview opens again with your next session."));
      const again = el("button", "secondary", "Take the interview now");
      again.type = "button";
      again.dataset.testid = "intake-take-later";
      again.addEventListener("click", () => this.start());
      box.append(again);
      return box;
    }
    box.append(el("h4", "", "Your coding task"));
    if (this.ended) box.append(el("p", "intake-question", this.ended.codingQuestion));
    // A step the learner can take: where to answer, and what happens then.
    const next = el("p", "intake-next");
    next.dataset.testid = "intake-next-step";
    next.textContent = this.terminal
      ? "Next: answer in the terminal, where Claude Code has this task — type how you would start and press Enter. " +
        "Claude Code plans with you, and the phases appear here."
      : "Next: answer in your own terminal, where `paige claude` runs Claude Code with this task — type how you would " +
        "start and press Enter. Claude Code plans with you, and the phases appear here.";
    box.append(next);
    // Only a window with a terminal has one to go to.
    if (this.terminal) {
      const go = el("button", "primary", "Go to the terminal");
      go.type = "button";
      go.dataset.testid = "intake-go-terminal";
      go.addEventListener("click", () => this.root.dispatchEvent(new CustomEvent(FOCUS_TERMINAL_EVENT, { bubbles: true })));
      box.append(go);
    }
    if (reason) box.append(el("p", "intake-why", `The interview ended because ${REASON_TEXT[reason]}.`));
    return box;
  }

}

/** Asks the page to put the keys in the terminal (main.ts listens). */
export const FOCUS_TERMINAL_EVENT = "paige:focus-terminal";

/** Sentences as they stream, one space between them unless they bring their own. */
function joinSentence(text: string, sentence: string): string {
  if (!text) return sentence;
  if (/\s$/.test(text) || /^\s/.test(sentence)) return text + sentence;
  return `${text} ${sentence}`;
}

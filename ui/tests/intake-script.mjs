// The intake interview as the UI's end-to-end scripts play it (smoke.mjs in Chromium,
// desktop-e2e.mjs in the real window), with the server's timebox at TIMEBOX_MS: the fake
// model's replies, a recorder the page runs, and what the recording must show.
//
// The learner answers the first question; CONTROL scores the answer at once; the interviewer
// then streams its reply in pieces PAUSE_MS apart, so it is still streaming when the timebox
// ends: the transition must wait for the reply's end, then come within a second.
import { textStream, userText } from "./fake-anthropic.mjs";

export const TIMEBOX_MS = 5000;
export const ANSWER = "I built a chess engine in Rust and rewrote the move search twice.";
/** The reply's first sentence shows at once (the next one has begun); the rest follows in
 * pieces PAUSE_MS apart, 5.6 s in all: past the timebox even when the answer came at once. */
const PIECES = [{ text: "That sounds like a hard problem. How", pauseMs: 0 }, " did you", " decide what", " to try", " first?"];
const PAUSE_MS = 1400;
/** The interviewer's reply as the panel must show it once finished. */
export const REPLY = PIECES.map((p) => p.text ?? p).join("");

/** The fake's replies for the interview's two call types. CONTROL's rationales quote the
 * answer (Paige rejects scores that do not); an unexpected answer gets a 400 (a failed call). */
export const intakeReplies = {
  intake_control: (body) => {
    if (!userText(body).includes(ANSWER)) throw new Error("CONTROL was not asked about the scripted answer");
    return {
      adaptability: { score: 40, rationale: '"rewrote the move search twice" shows a change of course.' },
      creativity: { score: 30, rationale: '"a chess engine in Rust" is an ambitious pick.' },
      reasoning: { score: 0, rationale: "No reasoning given for the rewrites." },
      new_project: false,
      project_name: "the chess engine",
    };
  },
  intake_interviewer: textStream(PIECES, PAUSE_MS),
};

/** Words of an invitation to code, which no interviewer line may contain. */
const INVITATION = /\b(cod(e|ing)|program(ming)?|implement|exercise|let'?s (write|build))\b/i;

/** Page script: records a snapshot of the intake panel (its lines, the countdown, whether the
 * coding question shows) at every change, with Date.now(), into window.__intakeLog. */
export const RECORDER = `
  const root = document.querySelector('[data-testid="intake"]');
  const log = (window.__intakeLog = []);
  const snap = () => {
    const lines = [...root.querySelectorAll('[data-testid="intake-line"]')].map((l) => ({
      role: l.dataset.role,
      streaming: l.dataset.streaming === "true",
      text: l.querySelector(".intake-text")?.textContent ?? "",
    }));
    const countdown = root.querySelector('[data-testid="intake-countdown"]');
    const coding = root.querySelector('[data-testid="intake-coding-question"] .intake-question');
    log.push({ t: Date.now(), lines, remainingMs: countdown ? Number(countdown.dataset.remainingMs) : null, coding: coding?.textContent ?? null });
  };
  new MutationObserver(snap).observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
  snap();
  return true;
`;

/** Page script: the debug panel's facts after the transition. */
export const DEBUG_FACTS = `
  const q = (id) => document.querySelector('[data-testid="' + id + '"]');
  const conf = (t) => ({ conf: Number(q("intake-conf-" + t)?.dataset.conf), tau: Number(q("intake-conf-" + t)?.dataset.tau) });
  return {
    open: q("intake-debug")?.open ?? null,
    zeroRuns: q("intake-zero-runs")?.textContent ?? null,
    projects: q("intake-projects")?.textContent ?? null,
    stopCheck: q("intake-stop-check")?.dataset.value ?? null,
    reason: q("intake-reason")?.textContent ?? null,
    why: document.querySelector('[data-testid="intake-coding-question"] .intake-why')?.textContent ?? null,
    conf: { adaptability: conf("adaptability"), creativity: conf("creativity"), reasoning: conf("reasoning") },
  };
`;

/** What the recording must show, as a list of problems (empty: all well). `streamEndedAt`
 * is when the fake sent the reply's message_stop (same clock as the page's Date.now()). */
export function judgeRecording(log, streamEndedAt) {
  const problems = [];
  const codingAt = log.findIndex((s) => s.coding !== null);
  if (codingAt < 0) return ["the coding question never showed"];
  const coding = log[codingAt];
  const before = log.slice(0, codingAt);
  const isReply = (l) => l.role === "interviewer" && l.text === REPLY;
  // The timebox ran out (the countdown at 00:00) while the reply was still streaming.
  const heldOpen = before.some((s) => s.remainingMs === 0 && s.lines.some((l) => l.role === "interviewer" && l.streaming));
  if (!heldOpen) problems.push("the countdown never reached 00:00 while the interviewer's reply was streaming");
  // The reply finished whole before the coding question showed, and the transition followed
  // within a second.
  const finished = before.find((s) => s.lines.some((l) => isReply(l) && !l.streaming));
  if (!finished) problems.push(`the reply never showed finished before the coding question (last lines: ${JSON.stringify(before.at(-1)?.lines)})`);
  else if (coding.t - finished.t > 1000) problems.push(`the transition came ${coding.t - finished.t} ms after the reply finished`);
  if (streamEndedAt === undefined) problems.push("the fake never finished streaming the reply");
  else if (coding.t < streamEndedAt) problems.push(`the coding question showed ${streamEndedAt - coding.t} ms before the reply's stream ended`);
  // No interviewer line ever invited coding (the coding question itself is the hand-over).
  const invitations = new Set(
    log.flatMap((s) => s.lines.filter((l) => l.role === "interviewer" && l.text !== coding.coding && INVITATION.test(l.text)).map((l) => l.text)),
  );
  if (invitations.size) problems.push(`interviewer lines invited coding: ${JSON.stringify([...invitations])}`);
  return problems;
}

/** What the debug panel must show after the timebox transition, as a list of problems. */
export function judgeDebug(facts) {
  const problems = [];
  // A developer's panel: closed unless asked for (its facts are there all the same).
  if (facts.open !== false) problems.push(`the debug panel is not closed by default (open: ${facts.open})`);
  if (!facts.reason?.startsWith("timebox")) problems.push(`reason ${JSON.stringify(facts.reason)}`);
  if (!facts.why?.includes("time is up")) problems.push(`the coding question's why: ${JSON.stringify(facts.why)}`);
  if (facts.zeroRuns !== "0" || facts.projects !== "1" || facts.stopCheck !== "false") {
    problems.push(`zeroRuns ${facts.zeroRuns}, projectsUsed ${facts.projects}, stopCheck ${facts.stopCheck}`);
  }
  // CONTROL scored 40 / 30 / 0: the bars keep that order, none reaches its τ.
  const { adaptability: a, creativity: c, reasoning: r } = facts.conf;
  const ordered = a.conf > c.conf && c.conf > 0 && r.conf === 0;
  const belowTau = [a, c, r].every((x) => x.tau > 0 && x.conf < x.tau);
  if (!ordered || !belowTau) problems.push(`confidence bars ${JSON.stringify(facts.conf)}`);
  return problems;
}

// The intake guard's state for people: the developer's debug panel (FR-005: countdown,
// zeroRuns, projectsUsed, stopCheck, the reason, confidence bars with τ, the latest pillars),
// closed unless asked for, and the learner's view of it — progress toward the gate in words.
import { el } from "./dom";
import type { IntakeReason, IntakeState, IntakeTransition } from "./protocol";

export const TRAITS = ["adaptability", "creativity", "reasoning"] as const;

/** `mm:ss`, whole seconds rounded up (so 00:00 means the time is over); minutes grow past 59. */
export function countdownText(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${pad(Math.floor(seconds / 60))}:${pad(seconds % 60)}`;
}

/** "timebox", or "timebox (also: gate)" when several criteria applied at once. */
export function reasonText(reason: IntakeReason, reasons: IntakeReason[]): string {
  const also = reasons.filter((r) => r !== reason);
  return also.length ? `${reason} (also: ${also.join(", ")})` : reason;
}

/** What each trait the guard scores means, in the learner's words. */
const TRAIT_WORDS: Record<(typeof TRAITS)[number], string> = {
  adaptability: "how you adapt when things change",
  creativity: "how you come up with ideas",
  reasoning: "how you reason through a problem",
};

/** The key in localStorage that opens the guard's debug panel by default ("1"). */
export const DEBUG_SETTING = "paige.debug";

/** How close the interview is to its gate, in the learner's words, and as a fraction (0–1):
 * each trait counts up to its threshold τ. */
export function gateProgress(state: Pick<IntakeState, "confidence" | "tau">): { fraction: number; text: string } {
  const share = (t: (typeof TRAITS)[number]) => (state.tau[t] > 0 ? Math.min(1, state.confidence[t] / state.tau[t]) : 1);
  const fraction = TRAITS.reduce((sum, t) => sum + share(t), 0) / TRAITS.length;
  const missing = TRAITS.filter((t) => share(t) < 1);
  if (missing.length === 0) return { fraction, text: "Paige has heard enough: the coding starts after this answer." };
  const heard = TRAITS.length - missing.length;
  const words = missing.map((t) => TRAIT_WORDS[t]);
  const list = words.length > 1 ? `${words.slice(0, -1).join(", ")} and ${words.at(-1)}` : words[0];
  return { fraction, text: `Paige has a picture of ${heard} of ${TRAITS.length} things. Still to hear: ${list}.` };
}

/** Whether the debug panel starts open: the `paige.debug` setting. */
export function debugSetting(): boolean {
  try {
    return globalThis.localStorage?.getItem(DEBUG_SETTING) === "1";
  } catch {
    return false;
  }
}

/** The guard's debug panel: a `<details>` the host places; closed unless asked for. */
export class GuardDebug {
  readonly root = el("details", "intake-debug");
  private readonly fields = {
    countdown: el("span", "intake-countdown"),
    zeroRuns: el("span"),
    projects: el("span"),
    stopCheck: el("span"),
    reason: el("span"),
    bars: el("div", "intake-bars"),
    pillars: el("ul", "intake-pillars"),
  };

  constructor(open: boolean) {
    this.root.open = open;
    this.build();
  }

  private build(): void {
    // A developer aid (FR-005): closed unless asked for (its summary, or the setting
    // `localStorage["paige.debug"] = "1"`); the learner sees progress in words instead.
    this.root.dataset.testid = "intake-debug";
    const f = this.fields;
    f.countdown.dataset.testid = "intake-countdown";
    f.zeroRuns.dataset.testid = "intake-zero-runs";
    f.projects.dataset.testid = "intake-projects";
    f.stopCheck.dataset.testid = "intake-stop-check";
    f.reason.dataset.testid = "intake-reason";
    f.pillars.dataset.testid = "intake-pillars";
    const facts = el("dl", "intake-facts");
    const fact = (label: string, value: HTMLElement) => {
      const dd = el("dd");
      dd.append(value);
      facts.append(el("dt", "", label), dd);
    };
    fact("Time left", f.countdown);
    fact("zeroRuns", f.zeroRuns);
    fact("projectsUsed", f.projects);
    fact("stopCheck", f.stopCheck);
    fact("Reason", f.reason);
    this.root.append(el("summary", "", "Interview guard"), facts, el("h4", "", "Confidence per trait (marker: τ)"), f.bars, el("h4", "", "Latest pillars"), f.pillars);
  }

  /** The countdown alone (it ticks between states): `remaining` ms, "–" without a clock. */
  countdown(remaining: number, hasClock: boolean): void {
    this.fields.countdown.textContent = hasClock ? countdownText(remaining) : "–";
    this.fields.countdown.dataset.remainingMs = String(Math.round(remaining));
    this.fields.countdown.classList.toggle("intake-countdown-low", remaining <= 30_000);
  }

  /** Everything from the guard's latest state `g` and the transition, if any. */
  render(g: IntakeState | null, ended: IntakeTransition | null, remaining: number, hasClock: boolean): void {
    const f = this.fields;
    this.countdown(remaining, hasClock);
    f.zeroRuns.textContent = g ? String(g.zeroRuns) : "–";
    f.projects.textContent = g ? String(g.projectsUsed) : "–";
    f.stopCheck.textContent = g ? String(g.stopCheck) : "–";
    f.stopCheck.dataset.value = g ? String(g.stopCheck) : "";
    const reason = ended ? reasonText(ended.reason, ended.reasons) : g?.reason ? reasonText(g.reason, g.reasons) : "–";
    f.reason.textContent = reason;
    f.bars.replaceChildren(...TRAITS.map((trait) => confBar(trait, g?.confidence[trait] ?? 0, g?.tau[trait] ?? 0, g?.weights[trait] ?? 0)));
    const pillars = g?.lastPillars;
    if (!pillars) {
      f.pillars.replaceChildren(el("li", "intake-quiet", "No answer scored yet."));
      return;
    }
    f.pillars.replaceChildren(
      ...TRAITS.map((trait) => {
        const item = el("li");
        item.dataset.trait = trait;
        item.append(el("strong", "", `${trait} ${pillars[trait].score}`), el("span", "intake-rationale", pillars[trait].rationale));
        return item;
      }),
    );
  }
}

/** One trait's confidence as a bar, with a marker at its threshold τ and the numbers beside. */
function confBar(trait: string, conf: number, tau: number, weight: number): HTMLElement {
  const row = el("div", "intake-conf");
  row.dataset.testid = `intake-conf-${trait}`;
  row.dataset.conf = String(conf);
  row.dataset.tau = String(tau);
  const met = conf >= tau && tau > 0;
  row.classList.toggle("intake-conf-met", met);
  const bar = el("div", "intake-bar");
  bar.setAttribute("role", "meter");
  bar.setAttribute("aria-label", `${trait} confidence`);
  bar.setAttribute("aria-valuemin", "0");
  bar.setAttribute("aria-valuemax", "1");
  bar.setAttribute("aria-valuenow", String(conf));
  bar.title = `W = ${weight.toFixed(2)}, conf = ${conf.toFixed(2)}, τ = ${tau.toFixed(2)}`;
  const fill = el("span", "intake-bar-fill");
  fill.style.width = `${percent(conf)}%`;
  const marker = el("span", "intake-bar-tau");
  marker.style.left = `${percent(tau)}%`;
  bar.append(fill, marker);
  const value = el("span", "intake-conf-value", `${conf.toFixed(2)} / τ ${tau.toFixed(2)}`);
  row.append(el("span", "intake-conf-trait", trait), value, bar);
  return row;
}

function percent(fraction: number): number {
  return Math.round(Math.min(1, Math.max(0, fraction)) * 1000) / 10;
}

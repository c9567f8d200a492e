// What the dashboard says, as plain functions of its data (dashboard.ts draws them): counts,
// durations, the greeting, the stat cards, the periods and the issues' ranking.
import type { DashboardIssue, DashboardState, DashboardStats, Period, Suitability } from "./protocol";

/** "1 review due", "3 reviews due". */
export function dueText(count: number): string {
  return `${count} review${count === 1 ? "" : "s"} due`;
}

export const PERIODS: { period: Period; label: string }[] = [
  { period: "7d", label: "7 days" },
  { period: "30d", label: "30 days" },
  { period: "all", label: "All time" },
];

export const SUITABILITY: Record<Suitability, { label: string; rank: number }> = {
  good_fit: { label: "Good fit", rank: 0 },
  stretch: { label: "Stretch", rank: 1 },
  too_advanced: { label: "Too advanced", rank: 2 },
};

/** The issues best first: highest priority, then the better fit, then the lower number. */
export function rankIssues(issues: DashboardIssue[]): DashboardIssue[] {
  return [...issues].sort(
    (a, b) =>
      b.priorityScore - a.priorityScore ||
      SUITABILITY[a.suitability].rank - SUITABILITY[b.suitability].rank ||
      a.number - b.number,
  );
}

/** "45 min", "3 h 20 min". */
export function minutesText(minutes: number): string {
  const m = Math.round(minutes);
  if (m < 60) return `${m} min`;
  const rest = m % 60;
  return rest ? `${Math.floor(m / 60)} h ${rest} min` : `${m / 60} h`;
}

/** "Welcome back" only to a learner Paige has coached before: on the very first launch
 * there is no session (but the live one, just started), kata or assessment yet. */
export function greeting(state: DashboardState | null): string {
  const none =
    state !== null &&
    state.stats.sessionsCompleted === 0 &&
    state.inProgressSessions.every((s) => s.live) &&
    state.katas.length === 0 &&
    state.dreyfus.length === 0;
  return none ? "Welcome to Paige" : "Welcome back to Paige";
}

/** The stat cards: label, value, and what it counts. */
export function statCards(stats: DashboardStats): { key: string; label: string; value: string }[] {
  return [
    { key: "sessions", label: "Sessions completed", value: String(stats.sessionsCompleted) },
    { key: "time", label: "Time coached", value: minutesText(stats.totalCoachingMinutes) },
    { key: "issues", label: "Issues worked on", value: String(stats.issuesWorkedOn) },
    { key: "gaps", label: "Gaps addressed", value: `${stats.knowledgeGapsAddressed} of ${stats.knowledgeGapsIdentified}` },
    { key: "hints", label: "Hints used", value: String(stats.hintsUsed) },
    { key: "cost", label: "API cost", value: `$${stats.apiCostTotal.toFixed(2)}` },
  ];
}

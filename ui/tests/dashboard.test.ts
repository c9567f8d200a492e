// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CoachingPanel } from "../src/coaching";
import { Dashboard, MATERIALS_QUIET_MS, OPEN_KATA_EVENT, type OpenKataDetail, greeting, minutesText, rankIssues } from "../src/dashboard";
import { externalLink } from "../src/links";
import type { ClientType, DashboardIssue, DashboardState, DreyfusItem, MaterialRecommendation } from "../src/protocol";
import { DEFAULT_GEOMETRY, radarChart, radarPoints, ringRadius, stageLevel } from "../src/radar";
import { byTestId, recordingTransport } from "./support";

const NOW = Date.parse("2025-06-01T12:00:00Z");

function setup(openExternal: ((url: string) => Promise<void>) | null = null) {
  const { sent, transport } = recordingTransport();
  const host = document.createElement("div");
  const coachingHost = document.createElement("aside");
  document.body.replaceChildren(host, coachingHost);
  const coaching = new CoachingPanel(coachingHost, transport);
  coaching.connectionInit({ sessionId: null } as never);
  const dash = new Dashboard(transport, { start: (r) => coaching.requestStart(r), openExternal, now: () => NOW });
  host.append(dash.root);
  const { $, $$ } = byTestId(dash.root);
  const sentOf = (type: ClientType) => sent.filter((s) => s.type === type);
  return { sent, sentOf, dash, coachingHost, $, $$ };
}

const dreyfus = (...pairs: [string, string][]): DreyfusItem[] =>
  pairs.map(([skillArea, stage]) => ({ skillArea, stage, confidence: 0.8, assessedAt: "2025-05-30T10:00:00Z" }));

function state(extra: Partial<DashboardState> = {}, period = "all"): DashboardState {
  return {
    dreyfus: dreyfus(["testing", "competent"], ["async", "novice"], ["error handling", "advanced_beginner"]),
    stats: {
      period,
      sessionsCompleted: 4,
      totalCoachingMinutes: 200,
      issuesWorkedOn: 3,
      knowledgeGapsIdentified: 5,
      knowledgeGapsAddressed: 2,
      hintsUsed: 7,
      apiCostTotal: 0.4213,
    },
    inProgressSessions: [{ id: "s-1", issueNumber: 42, issueTitle: "Retry uploads", startedAt: "2025-06-01T09:00:00Z", live: false, phasesCompleted: 0, phasesTotal: 0, costSoFar: 0 }],
    katas: [{ id: "k-1", title: "Backoff kata", topic: "retries", attemptsCount: 2, bestLevel: 6, constraintCount: 3 }],
    learning: { reliance: [], solutionsShown: 0, comprehension: { correct: 0, partial: 0, incorrect: 0, skipped: 0 } },
    reviewsDue: 0,
    ...extra,
  };
}

function issue(number: number, priorityScore: number, suitability: DashboardIssue["suitability"]): DashboardIssue {
  return {
    number,
    title: `Issue ${number}`,
    summary: `Summary of ${number}`,
    suitability,
    suitabilityReason: `Why ${number} is ${suitability}`,
    estimatedDifficulty: "intermediate",
    relevantSkills: ["rust"],
    priorityScore,
    priorityFactors: { userTagged: false, similarToRecentWork: true, addressesKnowledgeGap: false, teamUrgency: "low" },
    learningOpportunities: ["lifetimes"],
  };
}

const materials: MaterialRecommendation[] = [
  {
    knowledgeGap: "async error handling",
    studyOrder: "Read the chapter, then try the exercise.",
    practiceConnection: "The Backoff kata uses it.",
    resources: [
      { type: "documentation", title: "The Rust Book: errors", url: "https://doc.rust-lang.org/book/ch09-00-error-handling.html", description: "The chapter", relevance: "direct", estimatedTime: "30 min" },
      { type: "article", title: "A made-up local link", url: "javascript:alert(1)", description: "", relevance: "supplementary", estimatedTime: "" },
    ],
  },
];

afterEach(() => vi.useRealTimers());

describe("progressive loading", () => {
  it("renders the state first with skeletons for issues and materials still to come", () => {
    const { dash, $, $$, sentOf } = setup();
    expect($("skills-skeleton")).not.toBeNull();
    dash.load();
    expect(sentOf("dashboard:request")).toEqual([{ type: "dashboard:request", payload: { statsPeriod: "all" } }]);
    dash.setState(state());
    expect($("skills-skeleton")).toBeNull();
    expect($("radar")).not.toBeNull();
    expect($$("stat-card").map((c) => c.dataset.stat)).toEqual(["sessions", "time", "issues", "gaps", "hints", "cost"]);
    expect(dash.root.querySelector('[data-stat="time"]')?.textContent).toContain("3 h 20 min");
    expect(dash.root.querySelector('[data-stat="cost"]')?.textContent).toContain("$0.42");
    expect($("in-progress-session")?.textContent).toContain("#42 Retry uploads");
    expect($("in-progress-session")?.textContent).toContain("started 3 h ago");
    expect($("kata-progress")?.textContent).toBe("retries · 2 attempts · best level 6/10");
    expect($("issues-skeleton")).not.toBeNull();
    expect($("materials-skeleton")).not.toBeNull();
  });

  it("shows the live session as it goes on: now, its phases done, its cost so far, and no Resume", () => {
    const { dash, $, $$ } = setup();
    dash.load();
    const live = { id: "s-live", issueNumber: null, issueTitle: "Say bonjour", startedAt: "2025-06-01T11:50:00Z", live: true, phasesCompleted: 0, phasesTotal: 0, costSoFar: 0 };
    const waiting = { id: "s-old", issueNumber: 7, issueTitle: "Old work", startedAt: "2025-05-01T09:00:00Z", live: false, phasesCompleted: 1, phasesTotal: 3, costSoFar: 0.2 };
    dash.setState(state({ inProgressSessions: [waiting, live] }));
    expect($$("in-progress-session").map((r) => r.dataset.sessionId)).toEqual(["s-live", "s-old"]);
    expect($("live-session")?.textContent).toBe("Now · planning · $0.00 so far");
    expect($$("resume-session")).toHaveLength(1);
    // Pushed again as it goes on: the plan came, one phase is done, the model cost grew.
    dash.setState(state({ inProgressSessions: [{ ...live, phasesCompleted: 1, phasesTotal: 2, costSoFar: 0.034 }] }));
    expect($("live-session")?.textContent).toBe("Now · 1 of 2 phases done · $0.03 so far");
    expect($$("resume-session")).toHaveLength(0);
  });

  it("renders issues ranked by priority with their suitability badges when they arrive", () => {
    const { dash, $, $$ } = setup();
    dash.load();
    dash.setState(state());
    dash.setIssues({ issues: [issue(7, 0.3, "good_fit"), issue(3, 0.9, "too_advanced"), issue(5, 0.6, "stretch")] });
    expect($("issues-skeleton")).toBeNull();
    expect($$("dash-issue").map((i) => i.dataset.number)).toEqual(["3", "5", "7"]);
    const badges = $$("suitability");
    expect(badges.map((b) => b.textContent)).toEqual(["Too advanced", "Stretch", "Good fit"]);
    expect(badges[0].title).toBe("Why 3 is too_advanced");
    expect($("materials-skeleton")).not.toBeNull();
  });

  it("renders materials with their links once they arrive, non-https ones as plain text", () => {
    const { dash, $, $$ } = setup();
    dash.load();
    dash.setState(state());
    dash.setMaterials({ recommendations: materials });
    expect($("materials-skeleton")).toBeNull();
    expect($("material")?.textContent).toContain("async error handling");
    const links = $$("external-link") as HTMLAnchorElement[];
    expect(links.map((a) => a.href)).toEqual(["https://doc.rust-lang.org/book/ch09-00-error-handling.html"]);
    expect(dash.root.querySelector(".link-plain")?.textContent).toBe("A made-up local link");
    expect(dash.root.querySelector('a[href^="javascript"]')).toBeNull();
  });

  it("ranks ties by fit, then by issue number", () => {
    const ranked = rankIssues([issue(9, 0.5, "stretch"), issue(4, 0.5, "stretch"), issue(8, 0.5, "good_fit")]);
    expect(ranked.map((i) => i.number)).toEqual([8, 4, 9]);
  });

  it("shows no materials at once when every gap of all time is addressed (Paige then sends none)", () => {
    const { dash, $ } = setup();
    dash.load();
    dash.setState(state({}, "all"));
    expect($("materials-skeleton")).not.toBeNull();
    const stats = { ...state().stats, knowledgeGapsIdentified: 2, knowledgeGapsAddressed: 2 };
    dash.setState({ ...state(), stats });
    expect($("materials-skeleton")).toBeNull();
    expect($("materials-none")).not.toBeNull();
  });

  it("stops waiting for materials after a quiet spell when the period cannot tell", () => {
    vi.useFakeTimers();
    const { dash, $ } = setup();
    dash.load("7d");
    dash.setState(state({}, "7d"));
    vi.advanceTimersByTime(MATERIALS_QUIET_MS - 1);
    expect($("materials-skeleton")).not.toBeNull();
    vi.advanceTimersByTime(1);
    expect($("materials-none")).not.toBeNull();
  });
});

describe("errors inline with a retry", () => {
  it("shows an issues error in place and Retry sends dashboard:refresh_issues", () => {
    const { dash, $, sentOf } = setup();
    dash.load();
    dash.setState(state());
    dash.issuesFailed({ error: "gh is not installed" });
    expect($("dash-issues-error")?.textContent).toContain("gh is not installed");
    $("dash-issues-error-retry")?.click();
    expect(sentOf("dashboard:refresh_issues")).toEqual([{ type: "dashboard:refresh_issues", payload: {} }]);
    expect($("dash-issues-error")).toBeNull();
    expect($("issues-skeleton")).not.toBeNull();
    dash.setIssues({ issues: [issue(1, 0.5, "good_fit")] });
    expect($("dash-issue")).not.toBeNull();
  });

  it("shows a materials error in place and Retry sends a new dashboard:request for the period", () => {
    const { dash, $, sentOf } = setup();
    dash.load("30d");
    dash.setState(state({}, "30d"));
    dash.materialsFailed({ error: "Paige could not find learning materials: overloaded" });
    expect($("materials-error")?.textContent).toContain("overloaded");
    $("materials-error-retry")?.click();
    expect(sentOf("dashboard:request").map((s) => s.payload)).toEqual([{ statsPeriod: "30d" }, { statsPeriod: "30d" }]);
    expect($("materials-skeleton")).not.toBeNull();
  });

  it("Refresh suggestions asks Paige to rank and research again, showing skeletons until they come", () => {
    const { dash, $, sentOf } = setup();
    dash.load("7d");
    dash.setState(state({}, "7d"));
    dash.setIssues({ issues: [issue(1, 0.5, "good_fit")] });
    dash.setMaterials({ recommendations: materials });
    $("dash-refresh")?.click();
    expect(sentOf("dashboard:request").map((s) => s.payload)).toEqual([{ statsPeriod: "7d" }, { statsPeriod: "7d", refresh: true }]);
    expect($("issues-skeleton")).not.toBeNull();
    expect($("materials-skeleton")).not.toBeNull();
    dash.setIssues({ issues: [issue(2, 0.5, "good_fit")] });
    expect($("dash-issue")?.textContent).toContain("Issue 2");
  });

  it("shows a refused dashboard:request with a Retry", () => {
    const { dash, $, sentOf } = setup();
    dash.load();
    expect(dash.requestFailed("dashboard:request", "database is locked")).toBe(true);
    expect($("state-error")?.textContent).toContain("database is locked");
    $("state-error-retry")?.click();
    expect(sentOf("dashboard:request")).toHaveLength(2);
    expect(dash.requestFailed("session:start", "nope")).toBe(false);
  });
});

describe("the period switcher", () => {
  it("sends dashboard:request with the period chosen and marks it chosen", () => {
    const { dash, $$, sentOf } = setup();
    dash.load();
    dash.setState(state());
    const button = (period: string) => $$("period").find((b) => b.dataset.period === period);
    button("7d")?.click();
    button("30d")?.click();
    expect(sentOf("dashboard:request").map((s) => s.payload)).toEqual([{ statsPeriod: "all" }, { statsPeriod: "7d" }, { statsPeriod: "30d" }]);
    expect(button("30d")?.getAttribute("aria-checked")).toBe("true");
    expect(button("all")?.getAttribute("aria-checked")).toBe("false");
  });

  it("keeps issues shown while the new period loads and ignores stats of an older period", () => {
    const { dash, $, $$ } = setup();
    dash.load();
    dash.setState(state());
    dash.setIssues({ issues: [issue(1, 0.5, "good_fit")] });
    $$("period").find((b) => b.dataset.period === "7d")?.click();
    expect($("dash-issue")).not.toBeNull();
    const stale = { ...state().stats, sessionsCompleted: 99 };
    dash.setState({ ...state(), stats: stale });
    expect(dash.root.querySelector('[data-stat="sessions"]')?.textContent).toContain("4");
    dash.setState(state({ stats: { ...state().stats, period: "7d", sessionsCompleted: 1 } }));
    expect(dash.root.querySelector('[data-stat="sessions"]')?.textContent).toContain("1");
  });
});

describe("the radar chart", () => {
  const { size, radius } = DEFAULT_GEOMETRY;
  const c = size / 2;
  const dist = (p: { x: number; y: number }) => Math.hypot(p.x - c, p.y - c);

  it("puts each area on its stage's ring, first axis up and then clockwise", () => {
    const points = radarPoints(dreyfus(["a", "novice"], ["b", "advanced_beginner"], ["c", "competent"], ["d", "expert"]));
    expect(points.map((p) => p.level)).toEqual([1, 2, 3, 5]);
    expect(points[0]).toMatchObject({ x: c, y: c - radius / 5 });
    expect(points[1]).toMatchObject({ x: c + (2 * radius) / 5, y: c });
    expect(points[2]).toMatchObject({ x: c, y: c + (3 * radius) / 5 });
    expect(points[3]).toMatchObject({ x: c - radius, y: c });
    for (const p of points) expect(dist(p)).toBeCloseTo(ringRadius(p.level), 1);
  });

  it("draws five rings, and a polygon through the points for three or more areas", () => {
    const chart = radarChart(dreyfus(["a", "proficient"], ["b", "competent"], ["c", "novice"]));
    expect([...chart.querySelectorAll(".radar-ring")].map((r) => r.getAttribute("r"))).toEqual(["18", "36", "54", "72", "90"]);
    const polygon = chart.querySelector("polygon")?.getAttribute("points")?.split(" ") ?? [];
    const points = radarPoints(dreyfus(["a", "proficient"], ["b", "competent"], ["c", "novice"]));
    expect(polygon).toEqual(points.map((p) => `${p.x},${p.y}`));
    expect(dist(points[0])).toBeCloseTo(ringRadius(4), 1);
  });

  it("draws one or two areas as dots on their axes without a polygon, and none as empty rings", () => {
    const one = radarChart(dreyfus(["testing", "competent"]));
    expect(one.querySelector("polygon")).toBeNull();
    expect(one.querySelectorAll('[data-testid="radar-point"]')).toHaveLength(1);
    expect(one.querySelector('[data-testid="radar-point"]')?.getAttribute("cy")).toBe(String(c - ringRadius(3)));
    const two = radarPoints(dreyfus(["a", "expert"], ["b", "novice"]));
    expect(two[0]).toMatchObject({ x: c, y: c - radius });
    expect(two[1]).toMatchObject({ x: c, y: c + radius / 5 });
    const none = radarChart([]);
    expect(none.querySelectorAll(".radar-ring")).toHaveLength(5);
    expect(none.querySelectorAll("circle.radar-point")).toHaveLength(0);
    expect(none.textContent).toContain("No assessments yet");
  });

  it("maps unknown stages to the centre", () => {
    expect(stageLevel("wizard")).toBe(0);
    expect(stageLevel("expert")).toBe(5);
  });
});

describe("starting, resuming and practising", () => {
  it("Start on an issue sends session:start with its number through the coaching panel", () => {
    const { dash, $, sentOf, coachingHost } = setup();
    dash.load();
    dash.setState(state());
    dash.setIssues({ issues: [issue(12, 0.8, "good_fit")] });
    $("start-issue")?.click();
    expect(sentOf("session:start")).toEqual([{ type: "session:start", payload: { issueNumber: 12 } }]);
    expect(coachingHost.querySelector('[data-testid="start-status"]')?.textContent).toContain("Starting the session");
    $("start-issue")?.click();
    expect(sentOf("session:start")).toHaveLength(1);
  });

  it("Resume on an in-progress session sends session:resume with its id", () => {
    const { dash, $, sentOf } = setup();
    dash.load();
    dash.setState(state());
    $("resume-session")?.click();
    expect(sentOf("session:resume")).toEqual([{ type: "session:resume", payload: { sessionId: "s-1" } }]);
  });

  it("a kata's Practise dispatches paige:open-kata with its id", () => {
    const { dash, $ } = setup();
    dash.load();
    dash.setState(state());
    const opened: string[] = [];
    document.addEventListener(OPEN_KATA_EVENT, (e) => opened.push((e as CustomEvent<OpenKataDetail>).detail.kataId), { once: true });
    $("open-kata")?.click();
    expect(opened).toEqual(["k-1"]);
  });
});

describe("links out", () => {
  let opened: string[];
  beforeEach(() => (opened = []));

  it("in the desktop go through the opener and never navigate the webview", () => {
    const { dash, $ } = setup(async (url) => void opened.push(url));
    dash.load();
    dash.setMaterials({ recommendations: materials });
    const link = $<HTMLAnchorElement>("external-link");
    expect(link?.target).toBe("");
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    link?.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(opened).toEqual(["https://doc.rust-lang.org/book/ch09-00-error-handling.html"]);
  });

  it("in the desktop show why the opener failed", async () => {
    const { dash, $ } = setup(() => Promise.reject({ code: "opener", message: "xdg-open not found" }));
    dash.load();
    dash.setMaterials({ recommendations: materials });
    $("external-link")?.click();
    await vi.waitFor(() => expect($("link-error")?.textContent).toContain("xdg-open not found"));
  });

  it("in the browser open in a new tab without an opener reference", () => {
    const { dash, $ } = setup(null);
    dash.load();
    dash.setMaterials({ recommendations: materials });
    const link = $<HTMLAnchorElement>("external-link");
    expect(link?.target).toBe("_blank");
    expect(link?.rel.split(" ")).toContain("noopener");
  });

  it("make an issue's title a link when the payload carries its URL", () => {
    const { dash, $ } = setup(null);
    dash.load();
    dash.setIssues({ issues: [{ ...issue(3, 0.5, "good_fit"), url: "https://github.com/o/r/issues/3" } as DashboardIssue] });
    expect($<HTMLAnchorElement>("external-link")?.href).toBe("https://github.com/o/r/issues/3");
  });

  it("never make a link of http:, file: or relative URLs", () => {
    for (const url of ["http://example.com/", "file:///etc/passwd", "/docs", "javascript:alert(1)"]) {
      const node = externalLink(url, "x", async (u) => void opened.push(u), () => {});
      expect(node.tagName).toBe("SPAN");
      node.click();
    }
    expect(opened).toEqual([]);
  });
});

describe("text", () => {
  it("says coaching time in hours and minutes", () => {
    expect(minutesText(45)).toBe("45 min");
    expect(minutesText(120)).toBe("2 h");
    expect(minutesText(200.4)).toBe("3 h 20 min");
  });
});

describe("the greeting", () => {
  it("welcomes a learner back only once Paige has coached them: never on the very first launch", () => {
    const first = state({ dreyfus: [], inProgressSessions: [], katas: [], stats: { ...state().stats, sessionsCompleted: 0 } });
    expect(greeting(first)).toBe("Welcome to Paige");
    // The first session, live now: still the first time.
    const live = { id: "s-live", issueNumber: null, issueTitle: "Say bonjour", startedAt: "2025-06-01T11:50:00Z", live: true, phasesCompleted: 0, phasesTotal: 0, costSoFar: 0 };
    expect(greeting({ ...first, inProgressSessions: [live] })).toBe("Welcome to Paige");
    expect(greeting(state())).toBe("Welcome back to Paige");
    // Nothing this week, but coached before: still back.
    expect(greeting(state({ inProgressSessions: [], katas: [], stats: { ...state().stats, sessionsCompleted: 0 } }))).toBe(
      "Welcome back to Paige",
    );
    const { dash } = setup();
    dash.setState(first);
    expect(dash.root.querySelector("h1")?.textContent).toBe("Welcome to Paige");
  });
});

describe("the radar's labels", () => {
  it("wrap long skill areas onto lines instead of running off the chart", async () => {
    const { labelLines, radarChart } = await import("../src/radar");
    expect(labelLines("javascript object destructuring")).toEqual(["javascript", "object", "destructuring"]);
    expect(labelLines("Rust")).toEqual(["Rust"]);
    expect(labelLines("a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n o p q r")).toHaveLength(3);
    const chart = radarChart([
      { skillArea: "javascript object destructuring", stage: "competent", confidence: 0.7, assessedAt: "2025-06-01T00:00:00Z" },
      { skillArea: "Rust", stage: "novice", confidence: 0.5, assessedAt: "2025-06-01T00:00:00Z" },
      { skillArea: "SQL", stage: "expert", confidence: 0.9, assessedAt: "2025-06-01T00:00:00Z" },
    ]);
    const label = chart.querySelector('[data-testid="radar-label"]')!;
    expect([...label.querySelectorAll("tspan")].map((t) => t.textContent)).toEqual(["javascript", "object", "destructuring"]);
    expect(label.querySelector("title")?.textContent).toBe("javascript object destructuring");
    expect(chart.getAttribute("viewBox")).toBe("-70 0 400 260");
  });
});

// The dashboard's learning signals (issue 30): how the learner asked Claude Code per day (per
// week for all time) as 100 % stacked bars — asking how or why at the bottom, asking for the
// code on top, the other classes muted between — with the counts as a table for screen
// readers and anyone who wants the numbers; then solutions shown then typed, and how the
// comprehension answers came out. Drawn as SVG here, no chart library (as radar.ts).
import { el } from "./dom";
import { RELIANCE_CLASSES, type RelianceClass, relianceTotal } from "./learning";
import type { DashboardLearning, GradeCounts, RelianceBucket } from "./protocol";

const SVG = "http://www.w3.org/2000/svg";

/** The classes the chart contrasts; the others are drawn muted. */
const CONTRASTED: RelianceClass[] = ["conceptualQuestion", "delegation"];

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

export interface ChartGeometry {
  barWidth: number;
  gap: number;
  /** The bars' full height (100 %). */
  plotHeight: number;
  /** Above the bars: each bar's prompt count. */
  top: number;
  /** Below the bars: the bucket labels. */
  bottom: number;
}

export const CHART_GEOMETRY: ChartGeometry = { barWidth: 22, gap: 10, plotHeight: 120, top: 16, bottom: 20 };

/** At most this many bucket labels under the bars; with more buckets every n-th is labelled. */
const MAX_LABELS = 12;

/** "2026-11-22" → "Nov 22", "2026-W47" → "W47"; anything else as given. */
export function bucketLabel(label: string): string {
  const week = /^\d{4}-(W\d{1,2})$/.exec(label);
  if (week) return week[1];
  const day = /^\d{4}-(\d{2})-(\d{2})$/.exec(label);
  if (day) return `${MONTHS[Number(day[1]) - 1] ?? day[1]} ${Number(day[2])}`;
  return label;
}

function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((100 * part) / whole);
}

/** What the chart shows, in a sentence. */
export function chartSummary(buckets: RelianceBucket[]): string {
  const totals = Object.fromEntries(RELIANCE_CLASSES.map(({ key }) => [key, 0])) as Record<RelianceClass, number>;
  for (const bucket of buckets) for (const { key } of RELIANCE_CLASSES) totals[key] += bucket.counts[key];
  const all = relianceTotal(totals);
  const week = buckets.some((b) => /-W\d/.test(b.label));
  const span = `${buckets.length} ${week ? "week" : "day"}${buckets.length === 1 ? "" : "s"}`;
  return (
    `How you asked Claude Code over ${span}: ${all} prompt${all === 1 ? "" : "s"}, ` +
    `${percent(totals.conceptualQuestion, all)}% asking how or why, ${percent(totals.delegation, all)}% asking for the code`
  );
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

/** One 100 % stacked bar per bucket, oldest first, its prompt count above it. */
export function relianceChart(buckets: RelianceBucket[], geometry: ChartGeometry = CHART_GEOMETRY): SVGSVGElement {
  const { barWidth, gap, plotHeight, top, bottom } = geometry;
  const width = Math.max(buckets.length * (barWidth + gap) + gap, 120);
  const height = top + plotHeight + bottom;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: "reliance-chart", role: "img" });
  root.dataset.testid = "reliance-chart";
  root.dataset.buckets = String(buckets.length);
  const summary = chartSummary(buckets);
  root.setAttribute("aria-label", summary);
  const title = svg("title", {});
  title.textContent = summary;
  root.append(title);
  root.append(svg("line", { x1: 0, y1: top + plotHeight, x2: width, y2: top + plotHeight, class: "rc-axis" }));
  const every = Math.ceil(buckets.length / MAX_LABELS);
  buckets.forEach((bucket, i) => {
    const x = gap + i * (barWidth + gap);
    const total = relianceTotal(bucket.counts);
    const bar = svg("g", { class: "rc-bar" });
    bar.dataset.testid = "reliance-bucket";
    bar.dataset.label = bucket.label;
    bar.dataset.total = String(total);
    let y = top + plotHeight;
    for (const { key, label } of RELIANCE_CLASSES) {
      const count = bucket.counts[key];
      if (!count) continue;
      const h = (plotHeight * count) / total;
      y -= h;
      const muted = CONTRASTED.includes(key) ? "" : " rc-muted";
      const rect = svg("rect", { x, y: round(y), width: barWidth, height: round(h), class: `rc-seg reliance-${key}${muted}` });
      rect.dataset.class = key;
      rect.dataset.count = String(count);
      const tip = svg("title", {});
      tip.textContent = `${bucket.label}: ${count} ${label.toLowerCase()} (${percent(count, total)}%)`;
      rect.append(tip);
      bar.append(rect);
    }
    if (total === 0) bar.append(svg("rect", { x, y: top, width: barWidth, height: plotHeight, class: "rc-none" }));
    const count = svg("text", { x: x + barWidth / 2, y: top - 4, "text-anchor": "middle", class: "rc-count" });
    count.textContent = String(total);
    bar.append(count);
    if (i % every === 0) {
      const name = svg("text", { x: x + barWidth / 2, y: top + plotHeight + 14, "text-anchor": "middle", class: "rc-label" });
      name.textContent = bucketLabel(bucket.label);
      bar.append(name);
    }
    root.append(bar);
  });
  return root;
}

/** The chart's numbers as a table: a row per bucket, a column per class. */
function relianceTable(buckets: RelianceBucket[]): HTMLElement {
  const fold = el("details", "rc-table");
  fold.append(el("summary", "", "Show as a table"));
  const table = el("table", "");
  table.dataset.testid = "reliance-table";
  const head = el("tr", "");
  for (const name of ["Period", ...RELIANCE_CLASSES.map((c) => c.label), "Total"]) head.append(el("th", "", name));
  const thead = el("thead", "");
  const tbody = el("tbody", "");
  thead.append(head);
  table.append(thead, tbody);
  for (const bucket of buckets) {
    const row = el("tr", "");
    row.append(el("th", "", bucket.label));
    for (const { key } of RELIANCE_CLASSES) row.append(el("td", "", String(bucket.counts[key])));
    row.append(el("td", "", String(relianceTotal(bucket.counts))));
    tbody.append(row);
  }
  fold.append(table);
  return fold;
}

function legend(): HTMLElement {
  const list = el("ul", "reliance-legend rc-legend");
  for (const { key, label, title } of RELIANCE_CLASSES) {
    const item = el("li", CONTRASTED.includes(key) ? "" : "rc-muted");
    item.title = title;
    item.append(el("span", `reliance-swatch reliance-${key}`), document.createTextNode(label));
    list.append(item);
  }
  return list;
}

/** "3 correct · 1 partial · 0 incorrect · 2 skipped". */
export function tallyText(tally: GradeCounts): string {
  return `${tally.correct} correct · ${tally.partial} partial · ${tally.incorrect} incorrect · ${tally.skipped} skipped`;
}

function hasSignals(learning: DashboardLearning): boolean {
  const { correct, partial, incorrect, skipped } = learning.comprehension;
  const prompts = learning.reliance.some((b) => relianceTotal(b.counts) > 0);
  return prompts || learning.solutionsShown > 0 || correct + partial + incorrect + skipped > 0;
}

/** The dashboard section's content; a friendly line when there is nothing yet. */
export function learningView(learning: DashboardLearning | undefined): HTMLElement[] {
  if (!learning || !hasSignals(learning)) {
    const empty = el(
      "p",
      "dash-quiet",
      "No learning signals yet. As you work, Paige notes how you ask Claude Code, and after each phase asks a question or two about what you wrote.",
    );
    empty.dataset.testid = "learning-empty";
    return [empty];
  }
  const parts: HTMLElement[] = [];
  const buckets = learning.reliance.filter((b) => relianceTotal(b.counts) > 0);
  if (buckets.length) {
    parts.push(el("h3", "rc-heading", "How you asked Claude Code"));
    const scroll = el("div", "rc-scroll");
    scroll.append(relianceChart(learning.reliance));
    parts.push(scroll, legend(), relianceTable(learning.reliance));
  } else {
    const none = el("p", "dash-quiet", "No prompts to Claude Code in this period.");
    none.dataset.testid = "reliance-none";
    parts.push(none);
  }
  const facts = el("dl", "rc-facts");
  const shown = el("dd", "", String(learning.solutionsShown));
  shown.dataset.testid = "dash-solutions-shown";
  const tally = el("dd", "", tallyText(learning.comprehension));
  tally.dataset.testid = "comprehension-tally";
  const shownTerm = el("dt", "", "Solutions shown, then typed");
  shownTerm.title = "Code Claude Code showed you that your next edits typed in";
  facts.append(shownTerm, shown, el("dt", "", "Comprehension answers"), tally);
  parts.push(facts);
  return parts;
}

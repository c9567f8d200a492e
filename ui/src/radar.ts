// The Dreyfus radar chart: one axis per skill area, five rings for the five stages (novice
// at the centre's first ring, expert on the outermost). Drawn as SVG here, no chart library.
// Three or more areas make a polygon; one or two areas cannot, so they are drawn as their
// axes with a dot on the stage's ring; none shows the empty rings and a line of text.
import type { DreyfusItem } from "./protocol";

const SVG = "http://www.w3.org/2000/svg";

export const STAGES = ["novice", "advanced_beginner", "competent", "proficient", "expert"] as const;

const STAGE_NAMES: Record<string, string> = {
  novice: "Novice",
  advanced_beginner: "Advanced beginner",
  competent: "Competent",
  proficient: "Proficient",
  expert: "Expert",
};

/** A stage's ring, 1 (novice) … 5 (expert); 0 for a stage Paige does not know. */
export function stageLevel(stage: string): number {
  return STAGES.indexOf(stage as (typeof STAGES)[number]) + 1;
}

/** "Advanced beginner", or the stage as given when unknown. */
export function stageName(stage: string): string {
  return STAGE_NAMES[stage] ?? stage;
}

export interface RadarGeometry {
  /** The chart's width and height (it is square). */
  size: number;
  /** The outermost ring's radius (expert). */
  radius: number;
}

export const DEFAULT_GEOMETRY: RadarGeometry = { size: 260, radius: 90 };

export interface RadarPoint {
  area: string;
  stage: string;
  level: number;
  /** The axis's angle in radians: the first axis points up, then clockwise. */
  angle: number;
  x: number;
  y: number;
  /** Where the axis ends (the expert ring). */
  axisX: number;
  axisY: number;
}

/** The radius of ring `level` (1…5). */
export function ringRadius(level: number, geometry: RadarGeometry = DEFAULT_GEOMETRY): number {
  return (geometry.radius * level) / STAGES.length;
}

/** One point per area, on its axis at its stage's ring. Areas are drawn in the order given. */
export function radarPoints(items: DreyfusItem[], geometry: RadarGeometry = DEFAULT_GEOMETRY): RadarPoint[] {
  const c = geometry.size / 2;
  return items.map((item, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / items.length;
    const level = stageLevel(item.stage);
    const r = ringRadius(level, geometry);
    return {
      area: item.skillArea,
      stage: item.stage,
      level,
      angle,
      x: round(c + r * Math.cos(angle)),
      y: round(c + r * Math.sin(angle)),
      axisX: round(c + geometry.radius * Math.cos(angle)),
      axisY: round(c + geometry.radius * Math.sin(angle)),
    };
  });
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

/** The chart for `items`, with a title for screen readers naming every area's stage. */
export function radarChart(items: DreyfusItem[], geometry: RadarGeometry = DEFAULT_GEOMETRY): SVGSVGElement {
  const { size } = geometry;
  const c = size / 2;
  // Room at the sides for the axis labels, which wrap onto up to three lines.
  const root = svg("svg", {
    viewBox: `${-LABEL_ROOM} 0 ${size + 2 * LABEL_ROOM} ${size}`,
    width: size + 2 * LABEL_ROOM,
    height: size,
    class: "radar",
    role: "img",
  });
  root.dataset.testid = "radar";
  root.dataset.areas = String(items.length);
  const title = svg("title", {});
  title.textContent = items.length
    ? `Skill stages: ${items.map((i) => `${i.skillArea} ${stageName(i.stage)}`).join(", ")}`
    : "No skill assessments yet";
  root.append(title);
  for (let level = 1; level <= STAGES.length; level++) {
    const ring = svg("circle", { cx: c, cy: c, r: ringRadius(level, geometry), class: "radar-ring" });
    ring.dataset.stage = STAGES[level - 1];
    root.append(ring);
  }
  const points = radarPoints(items, geometry);
  for (const p of points) {
    root.append(svg("line", { x1: c, y1: c, x2: p.axisX, y2: p.axisY, class: "radar-axis" }));
    const label = svg("text", labelAttrs(p, geometry));
    label.dataset.testid = "radar-label";
    const lines = labelLines(p.area);
    lines.forEach((line, i) => {
      // Centred on the axis's end: the first line up by half the block's height.
      const dy = i === 0 ? `${-(lines.length - 1) * 0.55}em` : "1.1em";
      const span = svg("tspan", { x: labelAttrs(p, geometry).x, dy });
      span.textContent = line;
      label.append(span);
    });
    const whole = svg("title", {});
    whole.textContent = p.area;
    label.append(whole);
    root.append(label);
  }
  if (points.length >= 3) {
    const shape = svg("polygon", { points: points.map((p) => `${p.x},${p.y}`).join(" "), class: "radar-shape" });
    shape.dataset.testid = "radar-shape";
    root.append(shape);
  }
  for (const p of points) {
    const dot = svg("circle", { cx: p.x, cy: p.y, r: 4, class: "radar-point" });
    dot.dataset.testid = "radar-point";
    dot.dataset.area = p.area;
    dot.dataset.level = String(p.level);
    const tip = svg("title", {});
    tip.textContent = `${p.area}: ${stageName(p.stage)}`;
    dot.append(tip);
    root.append(dot);
  }
  if (!points.length) {
    const empty = svg("text", { x: c, y: c, "text-anchor": "middle", "dominant-baseline": "middle", class: "radar-empty" });
    empty.textContent = "No assessments yet";
    root.append(empty);
  }
  return root;
}

/** How much wider than the chart the SVG is on each side, for the labels. */
const LABEL_ROOM = 70;
/** The longest line of a label, in characters. */
const LABEL_LINE = 16;

/** A skill area's name in lines of at most [`LABEL_LINE`] characters (words kept whole where
 * they fit), three at most, the last cut with an ellipsis only when more remains. */
export function labelLines(area: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of area.split(/\s+/).filter(Boolean)) {
    const next = line ? `${line} ${word}` : word;
    if (next.length <= LABEL_LINE) {
      line = next;
      continue;
    }
    if (line) lines.push(line);
    line = word;
    while (line.length > LABEL_LINE) {
      lines.push(line.slice(0, LABEL_LINE));
      line = line.slice(LABEL_LINE);
    }
  }
  if (line) lines.push(line);
  if (lines.length > 3) return [...lines.slice(0, 2), `${lines[2].slice(0, LABEL_LINE - 1)}…`];
  return lines;
}

/** A label just past the axis's end, anchored away from the centre. */
function labelAttrs(p: RadarPoint, geometry: RadarGeometry): Record<string, string | number> {
  const c = geometry.size / 2;
  const r = geometry.radius + 14;
  const x = round(c + r * Math.cos(p.angle));
  const y = round(c + r * Math.sin(p.angle));
  const cos = Math.cos(p.angle);
  const anchor = Math.abs(cos) < 0.2 ? "middle" : cos > 0 ? "start" : "end";
  return { x, y, "text-anchor": anchor, "dominant-baseline": "middle", class: "radar-label" };
}

// The UI protocol as the core speaks it (paige_core::protocol): every frame is the envelope
// {type, payload, id?, timestamp}. Names and payload shapes follow the spec's catalog.

export type HintStyle = "suggested" | "important" | "critical" | "hint" | "focus" | "warning";
export type HintLevel = "none" | "file" | "region" | "line";
export type PhaseStatus = "pending" | "active" | "complete";

export interface EditorRange {
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
}

export interface ClientPayloads {
  "connection:hello": { version: string; platform: string; windowSize: { width: number; height: number } };
  "dashboard:request": { statsPeriod?: "7d" | "30d" | "all" };
  "dashboard:refresh_issues": Record<string, never>;
  "session:start": { issueNumber: number };
  "session:resume": { sessionId: string };
  "session:end": Record<string, never>;
  "file:open": { path: string };
  "file:save": { path: string; content: string };
  "file:close": { path: string };
  "buffer:update": {
    path: string;
    content: string;
    cursorPosition: { line: number; column: number };
    selections: EditorRange[];
  };
  "editor:tab_switch": { fromPath: string | null; toPath: string };
  "editor:selection": { path: string; range: EditorRange; textLength: number };
  "explorer:expand_dir": { path: string };
  "explorer:collapse_dir": { path: string };
  "hints:level_change": { level: HintLevel; previousLevel: HintLevel };
  "user:explain": {
    path: string;
    language: string;
    selection: { startLine: number; startCol: number; endLine: number; endCol: number };
    selectedText: string;
    surroundingContext: string;
  };
  "user:review": { kataId: string; userCode: string; activeConstraintTitles: string[] };
  "user:idle_start": { lastActionTimestamp: number };
  "user:idle_end": Record<string, never>;
  "observer:mute": { muted: boolean };
  "practice:submit_solution": { kataId: string; code: string; activeConstraints: string[] };
  "terminal:input": { input: string };
  "terminal:resize": { cols: number; rows: number };
}
export type ClientType = keyof ClientPayloads;

export interface TreeNode {
  name: string;
  path: string;
  type: "file" | "directory";
  children?: TreeNode[];
}
export interface FileContent {
  path: string;
  content: string;
  language: string;
  lineCount: number;
  binary: boolean;
}
export interface PhaseSummary {
  number: number;
  title: string;
  description: string;
  hintLevel: HintLevel;
  status: PhaseStatus;
}
export interface IssueContext {
  number: number;
  title: string;
  summary: string;
  labels: string[];
  url: string;
}

export interface ServerPayloads {
  "connection:init": { sessionId: string | null; capabilities: string[]; featureFlags: Record<string, boolean> };
  "connection:error": { code: string; message: string; context: unknown };
  "fs:tree": { root: TreeNode };
  "fs:tree_update": { action: "add" | "change" | "unlink" | "rename"; path: string; newPath?: string };
  "fs:content": FileContent;
  "fs:save_ack": { path: string; success: boolean; timestamp: number };
  "fs:save_error": { path: string; error: string };
  "editor:decorations": {
    path: string;
    decorations: { range: EditorRange; style: HintStyle; hoverText?: string }[];
  };
  "editor:clear_decorations": { path?: string };
  "editor:hover_hint": { path: string; range: EditorRange; hintText: string };
  "editor:open_file": FileContent;
  "editor:highlight_lines": { path: string; start: number; end: number; style: HintStyle; hoverText?: string };
  "editor:clear_highlights": { path?: string };
  "explorer:hint_files": { hints: { path: string; style: HintStyle; directories?: string[] }[] };
  "explorer:clear_hints": Record<string, never>;
  "session:started": {
    issueContext: IssueContext | null;
    phases: PhaseSummary[];
    hintLevel: HintLevel;
    openFiles?: string[];
  };
  "session:ended": { summary: { sessionId: string; status: string; durationMs: number; phasesCompleted: number } };
  "coaching:phase_update": { phase: number; status: PhaseStatus; description: string };
  "coaching:message": {
    message: string;
    type: "info" | "success" | "warning" | "error" | "hint";
    anchor?: { path: string; line: number };
  };
  "coaching:issue_context": IssueContext;
  "coaching:plan_ready": {
    planId: string;
    phases: PhaseSummary[];
    memoryConnection: string | null;
    estimatedDifficulty: string;
  };
  "observer:nudge": { signal: string; confidence: number; context: Record<string, unknown> };
  "observer:status": { active: boolean; muted: boolean; lastEvaluation: string | null };
}
export type ServerType = keyof ServerPayloads;

/** One frame as it arrives: known types are typed, others pass through untyped. */
export type ServerFrame = { [T in ServerType]: { type: T; payload: ServerPayloads[T]; id?: string; timestamp: number } }[ServerType];

export interface AnyFrame {
  type: string;
  payload: unknown;
  id?: string;
  timestamp: number;
}

export function encodeFrame<T extends ClientType>(type: T, payload: ClientPayloads[T], id?: string): string {
  const frame: AnyFrame = { type, payload, timestamp: Date.now() };
  if (id !== undefined) frame.id = id;
  return JSON.stringify(frame);
}

/** Parses a server frame; `null` for anything that is not an envelope. */
export function decodeFrame(text: string): AnyFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.type !== "string") return null;
  return { type: v.type, payload: v.payload ?? {}, id: typeof v.id === "string" ? v.id : undefined, timestamp: Number(v.timestamp ?? 0) };
}

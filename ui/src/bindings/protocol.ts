// Generated from paige-core's Rust types by ts-rs (crates/paige-core/src/protocol/bindings.rs).
// Do not edit; regenerate with `PAIGE_BLESS=1 cargo test -p paige-core --test it bindings`.

/** Every client → core message type and its payload. */
export interface ClientPayloads {
  "connection:hello": Hello;
  "dashboard:request": DashboardRequest;
  "dashboard:refresh_issues": Empty;
  "session:start": SessionStart;
  "session:resume": SessionResume;
  "session:end": Empty;
  "session:list": Empty;
  "coaching:show_me": Empty;
  "coaching:phase_done": PhaseDone;
  "coaching:replan": Empty;
  "file:open": PathPayload;
  "file:save": FileSave;
  "file:close": PathPayload;
  "buffer:update": BufferUpdate;
  "editor:tab_switch": TabSwitch;
  "editor:selection": EditorSelection;
  "fs:list": FsList;
  "explorer:expand_dir": PathPayload;
  "explorer:collapse_dir": PathPayload;
  "hints:level_change": HintsLevelChange;
  "user:explain": UserExplain;
  "user:review": UserReview;
  "user:idle_start": IdleStart;
  "user:idle_end": Empty;
  "observer:mute": ObserverMute;
  "practice:submit_solution": PracticeSubmit;
  "practice:list": Empty;
  "practice:kata_request": KataRequest;
  "intake:start": Empty;
  "intake:typing": IntakeTyping;
  "intake:answer": IntakeAnswer;
  "intake:skip": Empty;
  "learning:answer": LearningAnswer;
  "learning:skip": LearningPhase;
  "learning:retry": LearningPhase;
  "reviews:list": Empty;
  "reviews:start": ReviewStart;
  "reviews:answer": ReviewAnswer;
  "record:export": RecordExport;
  "terminal:input": TerminalInput;
  "terminal:resize": TerminalSize;
}

/** Every core → client message type and its payload. */
export interface ServerPayloads {
  "connection:init": ConnectionInit;
  "connection:error": ConnectionError;
  "dashboard:dreyfus": DashboardDreyfus;
  "dashboard:state": DashboardState;
  "dashboard:issues": DashboardIssues;
  "dashboard:issues_error": ErrorText;
  "dashboard:materials": DashboardMaterials;
  "dashboard:materials_error": ErrorText;
  "fs:tree": FsTree;
  "fs:tree_update": FsChange;
  "fs:children": DirPage;
  "fs:list_error": PathError;
  "fs:content": FileContent;
  "fs:save_ack": SaveAck;
  "fs:save_error": PathError;
  "editor:decorations": Decorations;
  "editor:clear_decorations": OptionalPath;
  "editor:hover_hint": HoverHint;
  "editor:open_file": FileContent;
  "editor:highlight_lines": HighlightLines;
  "editor:clear_highlights": OptionalPath;
  "explorer:hint_files": HintFiles;
  "explorer:clear_hints": Empty;
  "session:started": SessionStarted;
  "session:resumed": SessionResumed;
  "session:ended": SessionEnded;
  "session:completed": SessionCompleted;
  "session:wrapping_up": WrappingUp;
  "coaching:phase_update": PhaseUpdate;
  "coaching:message": CoachingMessage;
  "coaching:issue_context": IssueContext;
  "coaching:plan_ready": PlanReady;
  "session:options": SessionOptions;
  "coaching:worked_example": WorkedExample;
  "coaching:worked_example_error": WorkedExampleError;
  "coaching:step_check": StepCheck;
  "coaching:agent_activity": AgentActivity;
  "coaching:plan_failed": PlanFailed;
  "observer:nudge": ObserverNudge;
  "observer:status": ObserverStatus;
  "explain:response": ExplainResponse;
  "explain:error": PathError;
  "review:response": ReviewResponse;
  "review:error": KataError;
  "practice:kata_load": KataLoad;
  "practice:solution_review": SolutionReview;
  "practice:katas": PracticeKatas;
  "practice:kata_error": KataError;
  "intake:sentence": IntakeSentence;
  "intake:reply_done": IntakeReplyDone;
  "intake:state": IntakeState;
  "intake:transition": IntakeTransition;
  "intake:error": IntakeError;
  "learning:check": ComprehensionCheck;
  "learning:signals": LearningSignals;
  "learning:error": LearningErrorView;
  "reviews:due": ReviewDue;
  "reviews:question": ReviewQuestion;
  "reviews:graded": ReviewGraded;
  "reviews:error": ReviewErrorView;
  "record:exported": RecordExported;
  "record:error": RecordError;
}

/**
 * `coaching:agent_activity`: what Claude Code is doing while the session waits for its plan
 * (issue 28) — one tool call as its PreToolUse hook or MCP call reaches Paige, so the panel
 * shows progress instead of an open-ended wait. Sent only while the session has no plan.
 */
export type AgentActivity = { sessionId: string, 
/**
 * The tool's name as Claude Code calls it (`Read`, `Grep`, `paige_get_session_state`…).
 */
tool: string, 
/**
 * What it works on, in a few words: a path, a pattern, a command (may be empty).
 */
detail: string, };

/**
 * Where an anchored comment balloon points.
 */
export type Anchor = { path: string, line: number, };

export type BufferUpdate = { path: string, content: string, cursorPosition: CursorPosition, selections: Array<EditorRange>, };

export type CheckState = "preparing" | "ready" | "failed" | "nothing_to_ask" | "done";

/**
 * How a phase's check last ended.
 */
export type CheckStatus = "running" | "passed" | "failed" | "error";

export type CoachingMessage = { message: string, type: MessageKind, anchor?: Anchor, };

/**
 * `learning:check`: a phase's comprehension check as it stands — being prepared, its
 * questions (each with its answer and grade once there), or why there is none. Sent whole on
 * every change, so a UI only ever draws the latest.
 */
export type ComprehensionCheck = { sessionId: string, phase: number, phaseTitle: string, state: CheckState, 
/**
 * Why there are no questions (nothing changed, the model failed…), or what went wrong;
 * its first line is the sentence to show.
 */
note?: string, questions: Array<QuestionView>, };

export type ConnectionError = { code: ErrorCode, message: string, context: unknown, };

export type ConnectionInit = { 
/**
 * The active coaching session, if any.
 */
sessionId: string | null, 
/**
 * The client message types this server handles fully.
 */
capabilities: Array<string>, featureFlags: { [key in string]: boolean }, 
/**
 * The command that runs Claude Code for this Paige from a terminal (`paige serve`'s
 * browser UI shows it where the desktop app has its terminal).
 */
agentCommand?: string, };

/**
 * A cursor position; 1-based as in Monaco.
 */
export type CursorPosition = { line: number, column: number, };

export type DashboardDreyfus = { skillAreas: Array<SkillArea>, overallStage: string, };

export type DashboardIssue = { number: number, title: string, summary: string, suitability: Suitability, suitabilityReason: string, estimatedDifficulty: Difficulty, relevantSkills: Array<string>, priorityScore: number, priorityFactors: PriorityFactors, learningOpportunities: Array<string>, 
/**
 * Paige's extension: the issue's page, as `gh` gives it (opened in the system browser).
 */
url?: string, };

export type DashboardIssues = { issues: Array<DashboardIssue>, };

/**
 * The dashboard's learning signals for its period.
 */
export type DashboardLearning = { 
/**
 * Prompts per reliance class in buckets (days for 7d and 30d, weeks for all), oldest first.
 */
reliance: Array<RelianceBucket>, solutionsShown: number, comprehension: GradeCounts, };

export type DashboardMaterials = { recommendations: Array<MaterialRecommendation>, };

export type DashboardRequest = { statsPeriod?: Period, 
/**
 * Paige's extension: ask the model again instead of sending the answers kept since the
 * last completed session (at most a day old).
 */
refresh?: boolean, };

export type DashboardState = { dreyfus: Array<DreyfusItem>, stats: DashboardStats, inProgressSessions: Array<InProgressSession>, katas: Array<KataSummary>, 
/**
 * Paige's extension (issue 30): reliance on the AI, solutions shown, comprehension.
 */
learning: DashboardLearning, 
/**
 * Paige's extension (issue 31): spaced reviews due now.
 */
reviewsDue: number, };

export type DashboardStats = { period: string, sessionsCompleted: number, totalCoachingMinutes: number, issuesWorkedOn: number, knowledgeGapsIdentified: number, knowledgeGapsAddressed: number, hintsUsed: number, apiCostTotal: number, };

export type Decoration = { range: EditorRange, style: HintStyle, hoverText?: string, };

export type Decorations = { path: string, decorations: Array<Decoration>, };

/**
 * How hard a piece of work is for this learner.
 */
export type Difficulty = "beginner" | "intermediate" | "advanced";

/**
 * One page of a folder's entries: the payload of `fs:children`.
 */
export type DirPage = { 
/**
 * The folder, relative to the root (`""`: the root).
 */
path: string, 
/**
 * Its entries from `offset` on, at most 2,000; directories among them are not listed.
 */
children: Array<TreeNode>, offset: number, 
/**
 * How many entries the folder lists in all.
 */
total: number, 
/**
 * Where the next page starts, when there is one.
 */
nextOffset?: number, 
/**
 * The folder holds more than the 100,000 entries Paige lists; the rest are not shown.
 */
capped: boolean, };

export type DreyfusItem = { skillArea: string, stage: string, confidence: number, assessedAt: string, };

/**
 * Which way a practice attempt moves the learner's Dreyfus stage.
 */
export type DreyfusSignal = "advancing" | "stable" | "struggling";

/**
 * A range in a file; 1-based lines and columns, as in Monaco.
 */
export type EditorRange = { startLine: number, startColumn: number, endLine: number, endColumn: number, };

export type EditorSelection = { path: string, range: EditorRange, textLength: number, };

/**
 * A payload with no fields (`{}`); unknown fields are ignored.
 */
export type Empty = Record<symbol, never>;

/**
 * Machine-readable error classes for `connection:error`.
 */
export type ErrorCode = "NOT_IMPLEMENTED" | "INVALID_JSON" | "INVALID_MESSAGE" | "INVALID_PAYLOAD" | "PATH_REJECTED" | "FILE_NOT_FOUND" | "FILE_ERROR" | "BINARY_FILE" | "TOO_LARGE" | "NOT_REGULAR_FILE" | "INTERNAL";

export type ErrorText = { error: string, };

export type ExplainResponse = { path: string, explanation: string, keyConcepts: Array<string>, analogy: string | null, relatedFiles: Array<string> | null, phaseConnection: string | null, };

/**
 * A file as the editor sees it. Binary files carry no content.
 */
export type FileContent = { path: string, content: string, language: string, lineCount: number, binary: boolean, };

export type FileHint = { path: string, style: HintStyle, directories?: Array<string>, };

export type FileSave = { path: string, content: string, };

export type FollowUp = { type: FollowUpKind, constraint?: string, reason?: string, };

export type FollowUpKind = "constraint_escalation" | "retry_hint" | "completed";

/**
 * One change in the project, paths relative to the root.
 */
export type FsChange = { action: FsChangeAction, path: string, newPath?: string, };

export type FsChangeAction = "add" | "change" | "unlink" | "rename";

/**
 * `fs:list`: the folder `path` (`""`: the project root), from entry `offset` (0 when absent).
 */
export type FsList = { path: string, offset?: number, };

/**
 * The project tree as far as it is listed: the root's first page of entries, and the
 * entries of the small folders under it; deeper folders come by `fs:list`.
 */
export type FsTree = { root: TreeNode, };

export type GradeCounts = { correct: number, partial: number, incorrect: number, 
/**
 * Skipped, or never answered before the session ended.
 */
skipped: number, };

export type Hello = { version: string, platform: string, windowSize: WindowSize, };

export type HighlightLines = { path: string, start: number, end: number, style: HintStyle, hoverText?: string, };

export type HintFiles = { hints: Array<FileHint>, };

/**
 * How much the coach reveals in a phase (coach-agent schema).
 */
export type HintLevel = "none" | "file" | "region" | "line";

/**
 * File hints use suggested/important/critical; line hints use hint/focus/warning.
 */
export type HintStyle = "suggested" | "important" | "critical" | "hint" | "focus" | "warning";

export type HintsLevelChange = { level: HintLevel, previousLevel: HintLevel, };

export type HoverHint = { path: string, range: EditorRange, hintText: string, };

export type IdleStart = { 
/**
 * Unix milliseconds of the learner's last action.
 */
lastActionTimestamp: number, };

export type InProgressSession = { id: string, issueNumber: number | null, issueTitle: string | null, startedAt: string, 
/**
 * Paige's extension (issue 40): the session being coached now (the others wait to be
 * resumed), its plan's phases done and in all, and what its model calls cost so far.
 */
live: boolean, phasesCompleted: number, phasesTotal: number, costSoFar: number, };

/**
 * `intake:answer`: the learner submitted an answer — the spec's end of speech.
 */
export type IntakeAnswer = { text: string, };

/**
 * `intake:error`: something the interview needs failed (no session, the model); shown in
 * the panel. `retryable` offers a Retry that sends `intake:start` again.
 */
export type IntakeError = { message: string, retryable: boolean, };

/**
 * One line of the interview transcript.
 */
export type IntakeLine = { 
/**
 * `interviewer` or `learner`.
 */
role: string, text: string, };

/**
 * Where the interview is.
 */
export type IntakePhase = "not_started" | "background" | "coding";

/**
 * One pillar of a CONTROL result: its score 0–100 and the rationale quoting the answer.
 */
export type IntakePillar = { score: number, rationale: string, };

/**
 * The pillars of the latest CONTROL result, one per trait.
 */
export type IntakePillars = { adaptability: IntakePillar, creativity: IntakePillar, reasoning: IntakePillar, };

/**
 * Why the interview handed over to coding.
 */
export type IntakeReason = "timebox" | "projects_cap" | "gate" | "skipped";

/**
 * `intake:reply_done`: the interviewer's reply `turn` finished (the spec's `response.done`);
 * `text` is the whole reply as shown.
 */
export type IntakeReplyDone = { turn: number, text: string, };

/**
 * A number per CONTROL trait.
 */
export type IntakeScores = { adaptability: number, creativity: number, reasoning: number, };

/**
 * `intake:sentence`: one sentence of the interviewer's reply `turn`, shown only after the
 * coding-invitation check passed it.
 */
export type IntakeSentence = { turn: number, text: string, };

/**
 * `intake:state`: the guard as the debug panel shows it (FR-005), after every change.
 */
export type IntakeState = { sessionId: string, phase: IntakePhase, 
/**
 * The timebox, and how much of it is left at `atMs` (the server's clock, ms since the
 * epoch): the panel counts down from there.
 */
timeboxMs: number, remainingMs: number, atMs: number, zeroRuns: number, projectsUsed: number, stopCheck: boolean, 
/**
 * Evidence mass W per trait, its confidence W/(W+prior) and the threshold τ.
 */
weights: IntakeScores, confidence: IntakeScores, tau: IntakeScores, lastPillars?: IntakePillars, reason?: IntakeReason, 
/**
 * Every reason that applied at the transition, by priority.
 */
reasons: Array<IntakeReason>, 
/**
 * The interview so far, oldest first, for a UI that connects mid-interview.
 */
transcript: Array<IntakeLine>, 
/**
 * Whether the learner's answer is awaited (no reply is being written).
 */
awaitingAnswer: boolean, };

/**
 * `intake:transition`: the interview is over; `codingQuestion` is Paige's scripted task.
 */
export type IntakeTransition = { sessionId: string, reason: IntakeReason, reasons: Array<IntakeReason>, codingQuestion: string, };

/**
 * `intake:typing`: the learner started (`true`) or stopped (`false`, the input cleared)
 * typing an answer — the spec's "user speaking".
 */
export type IntakeTyping = { typing: boolean, };

export type IssueContext = { number: number, title: string, summary: string, labels: Array<string>, url: string, };

export type IssueOption = { number: number, title: string, labels: Array<string>, };

/**
 * An extra rule the learner may switch on once their level reaches `min_level`.
 */
export type KataConstraint = { title: string, description: string, 
/**
 * 1–10.
 */
minLevel: number, };

export type KataError = { kataId: string, error: string, };

export type KataLoad = { kata: KataView, constraints: Array<KataConstraint>, };

/**
 * `practice:kata_request`: open one kata; answered with `practice:kata_load`, or
 * `practice:kata_error` when there is no such kata.
 */
export type KataRequest = { kataId: string, };

export type KataSummary = { id: string, title: string, topic: string, attemptsCount: number, bestLevel: number | null, constraintCount: number, };

export type KataView = { id: string, title: string, description: string, scaffoldingCode: string, };

/**
 * `learning:answer`: the learner's answer to one question (Enter sends it).
 */
export type LearningAnswer = { questionId: string, answer: string, };

/**
 * `learning:error`: a `learning:*` request refused — said where it happened (the question or
 * the phase), to the sender only.
 */
export type LearningErrorView = { questionId?: string, phase?: number, error: string, };

/**
 * `learning:skip` (skip the phase's open questions) and `learning:retry` (ask for the
 * questions again after a failure).
 */
export type LearningPhase = { phase: number, };

export type LearningResource = { type: ResourceKind, title: string, url: string, description: string, relevance: Relevance, estimatedTime: string, };

/**
 * `learning:signals`: the active session's reliance gauge and solutions shown then typed,
 * after each prompt the learner types to Claude Code and each solution found.
 */
export type LearningSignals = { sessionId: string, reliance: RelianceGauge, solutionsShown: number, 
/**
 * The phase in progress (its number) and its own gauge: where delegation dominating a
 * phase shows.
 */
phase?: number, phaseReliance?: RelianceGauge, };

export type MaterialRecommendation = { knowledgeGap: string, resources: Array<LearningResource>, studyOrder: string, practiceConnection: string | null, };

export type MessageKind = "info" | "success" | "warning" | "error" | "hint";

/**
 * Snake-case keys, as the spec gives them.
 */
export type NudgeContext = { current_file: string | null, expected_file: string | null, 
/**
 * As the spec's example gives it: "3m12s".
 */
time_in_file: string | null, phase_description: string | null, };

export type ObserverMute = { muted: boolean, };

export type ObserverNudge = { signal: string, confidence: number, context: NudgeContext, };

export type ObserverStatus = { active: boolean, muted: boolean, lastEvaluation: string | null, };

export type OptionalPath = { path?: string, };

export type PathError = { path: string, error: string, };

export type PathPayload = { path: string, };

/**
 * Dashboard statistics window.
 */
export type Period = "7d" | "30d" | "all";

/**
 * `coaching:phase_done`: the learner marks a phase of the current plan done.
 */
export type PhaseDone = { phase: number, };

export type PhaseStatus = "pending" | "active" | "complete";

export type PhaseSummary = { number: number, title: string, description: string, hintLevel: HintLevel, status: PhaseStatus, 
/**
 * The skill area the phase exercises (the coach agent names it).
 */
skillArea?: string, 
/**
 * Why the phase's hints start where they do, when the learner's history moved them.
 */
hintReason?: string, 
/**
 * The test whose pass shows the phase is done (its step check runs it on save).
 */
testFilter?: string, };

export type PhaseUpdate = { phase: number, status: PhaseStatus, description: string, 
/**
 * Paige's extension: the phase's hint level, so every UI shows the one stored.
 */
hintLevel?: HintLevel, 
/**
 * Paige's extension: why the hints start where they do, when the learner's history (or
 * a comprehension check) moved them.
 */
hintReason?: string, };

/**
 * `coaching:plan_failed`: Paige could not turn Claude Code's plan into phases (the coach
 * model failed or ran out of time). The panel shows `message` — what is wrong and what to
 * do, then the details — where the plan would be, with "Ask Claude Code to plan again".
 */
export type PlanFailed = { sessionId: string, message: string, };

export type PlanReady = { planId: string, phases: Array<PhaseSummary>, memoryConnection: string | null, estimatedDifficulty: string, };

/**
 * One kata in the practice list.
 */
export type PracticeKata = { id: string, title: string, description: string, 
/**
 * The knowledge gap the kata practises (absent if it cannot be read).
 */
gapTopic?: string, 
/**
 * The best level any reviewed attempt reached, 1–10; 0 before any.
 */
bestLevel: number, 
/**
 * Reviewed attempts.
 */
attempts: number, 
/**
 * All of the kata's constraints, and how many of them the best level unlocked.
 */
constraints: number, unlockedConstraints: number, };

/**
 * `practice:katas`: every kata (the answer to `practice:list`), newest first.
 */
export type PracticeKatas = { katas: Array<PracticeKata>, };

export type PracticeSubmit = { kataId: string, code: string, activeConstraints: Array<string>, };

export type PriorityFactors = { userTagged: boolean, similarToRecentWork: boolean, addressesKnowledgeGap: boolean, teamUrgency: Urgency, };

export type QuestionView = { id: string, 
/**
 * `predict_output`, `explain_line` or `edge_case`.
 */
kind: string, question: string, 
/**
 * The learner's own lines the question is about.
 */
quote: string, concept: string, 
/**
 * `open`, `grading`, `graded`, `skipped` or `expired`.
 */
status: string, answer?: string, 
/**
 * `correct`, `partial` or `incorrect`.
 */
grade?: string, why?: string, 
/**
 * The grading failed: what to show beside the answer, with Retry (send it again).
 */
error?: string, };

/**
 * `record:error`: the record could not be exported, and why.
 */
export type RecordError = { error: string, };

/**
 * `record:export`: the learner asks for their learning record (the browser UI downloads it;
 * the desktop app saves it through its own dialog instead).
 */
export type RecordExport = { 
/**
 * `YYYY-MM-DD`: only what happened since that day.
 */
since?: string, };

/**
 * `record:exported`: the signed record (JSON Lines) to save under `file_name`.
 */
export type RecordExported = { fileName: string, content: string, lines: number, sessions: number, 
/**
 * The key a mentor can pin (`paige record verify FILE --key …`).
 */
publicKey: string, };

export type Relevance = "direct" | "deep_dive" | "supplementary";

export type RelianceBucket = { 
/**
 * `2026-11-22` or `2026-W47`.
 */
label: string, counts: RelianceGauge, };

/**
 * Prompts per reliance class.
 */
export type RelianceGauge = { delegation: number, debuggingHelp: number, conceptualQuestion: number, verification: number, other: number, };

export type ResourceKind = "documentation" | "article" | "video" | "tutorial";

export type ResumableSession = { sessionId: string, issueNumber: number | null, title: string | null, 
/**
 * ISO 8601.
 */
startedAt: string, phasesCompleted: number, phasesTotal: number, };

/**
 * `reviews:answer`: the learner's answer (Enter sends it).
 */
export type ReviewAnswer = { itemId: string, answer: string, };

/**
 * `reviews:due`: how many reviews are due now and the first of them (the answer to
 * `reviews:list`, and after each review).
 */
export type ReviewDue = { dueCount: number, items: Array<ReviewItemView>, };

/**
 * `reviews:error`: a review request failed — where (the item), why, and Retry.
 */
export type ReviewErrorView = { itemId?: string, error: string, };

/**
 * `reviews:graded`: the answer's grade, the FSRS rating it made and when the item comes back.
 */
export type ReviewGraded = { itemId: string, 
/**
 * `correct`, `partial` or `incorrect`.
 */
grade: string, why: string, 
/**
 * `again`, `hard`, `good` or `easy`.
 */
rating: string, intervalDays: number, 
/**
 * ISO 8601.
 */
nextDue: string, 
/**
 * The interval is stable: the item (and its gap) is addressed.
 */
addressed: boolean, };

export type ReviewItemView = { id: string, 
/**
 * `gap`, `kata` or `concept`.
 */
kind: string, topic: string, skillArea?: string, 
/**
 * ISO 8601.
 */
due: string, };

/**
 * `reviews:question`: the review's question.
 */
export type ReviewQuestion = { itemId: string, kind: string, topic: string, question: string, concept: string, 
/**
 * A kata's review can open the kata in Practice.
 */
kataId?: string, };

export type ReviewResponse = { kataId: string, correct: boolean, feedback: string, level: number, passed: boolean, followUp: FollowUp | null, dreyfusSignal: DreyfusSignal, unlockedConstraints: Array<KataConstraint>, };

/**
 * `reviews:start`: open a review (its question follows as `reviews:question`).
 */
export type ReviewStart = { itemId: string, };

export type SaveAck = { path: string, success: boolean, 
/**
 * Unix milliseconds.
 */
timestamp: number, };

export type SessionCompleted = { sessionId: string, knowledgeGaps: number, kataSpecs: number, dreyfusUpdates: number, memoriesStored: number, };

export type SessionEnded = { summary: SessionSummary, };

/**
 * `session:options`: what the coaching panel offers to start from.
 */
export type SessionOptions = { 
/**
 * The project's open issues (`gh issue list`), newest first; empty when `gh` does not
 * work in the project (`issuesError` says why).
 */
issues: Array<IssueOption>, issuesError?: string, 
/**
 * Sessions left `active` (a crash, a closed window) that can be resumed, newest first.
 */
resumable: Array<ResumableSession>, };

export type SessionResume = { sessionId: string, };

/**
 * What a resumed session restores in the UI.
 */
export type SessionResumed = { restoredState: SessionStarted, };

export type SessionStart = { 
/**
 * The issue to work on; without one, `title` says what the work is (Paige's extension).
 */
issueNumber?: number, title?: string, description?: string, };

export type SessionStarted = { 
/**
 * Paige's extension: which session (resume and the panel need it).
 */
sessionId: string, issueContext: IssueContext | null, 
/**
 * Paige's extension: work without an issue, as the learner typed it (for an issue, its
 * title).
 */
title?: string, description?: string, phases: Array<PhaseSummary>, hintLevel: HintLevel, openFiles?: Array<string>, };

export type SessionStatus = "active" | "completed" | "abandoned";

export type SessionSummary = { sessionId: string, status: SessionStatus, durationMs: number, phasesCompleted: number, };

export type SkillArea = { name: string, stage: string, score: number, };

export type SolutionReview = { review: string, level: number, passed: boolean, constraintsUnlocked: Array<KataConstraint>, };

/**
 * `coaching:step_check`: the phase's check — the project's own test runner with the phase's
 * test filter, run when the learner saves one of its expected files — is running, or how it
 * ended. Shown beside the phase in the coaching panel.
 */
export type StepCheck = { phase: number, status: CheckStatus, 
/**
 * One line: what runs, which test fails and why, or why there is no check.
 */
summary: string, 
/**
 * Failed checks of this phase in a row (0 after a pass).
 */
consecutiveFailures: number, 
/**
 * How long the check ran (absent while running, or when nothing ran).
 */
durationMs?: number, 
/**
 * The command, as the learner would type it (absent when there is none).
 */
command?: string, };

/**
 * Whether an issue suits the learner now.
 */
export type Suitability = "good_fit" | "stretch" | "too_advanced";

export type TabSwitch = { 
/**
 * `None` when no tab was open before.
 */
fromPath: string | null, toPath: string, };

export type TerminalInput = { input: string, };

export type TerminalSize = { cols: number, rows: number, };

/**
 * A selection as `user:explain` sends it (Story 11).
 */
export type TextSelection = { startLine: number, startCol: number, endLine: number, endCol: number, };

/**
 * One node of the project tree; `path` is relative to the root (`""` for the root itself).
 */
export type TreeNode = { name: string, path: string, type: TreeNodeKind, 
/**
 * A listed directory's entries, directories first, then by name. Absent for a file, and
 * for a directory not listed yet: `fs:list` lists it (answered by `fs:children`).
 */
children?: Array<TreeNode>, 
/**
 * Set when `children` holds only a directory's first entries: `fs:list` with this
 * offset gives the next page.
 */
nextOffset?: number, };

export type TreeNodeKind = "file" | "directory";

/**
 * How pressing an issue is for the team.
 */
export type Urgency = "low" | "medium" | "high";

export type UserExplain = { path: string, language: string, selection: TextSelection, selectedText: string, 
/**
 * About 50 lines either side of the selection.
 */
surroundingContext: string, };

export type UserReview = { kataId: string, userCode: string, activeConstraintTitles: Array<string>, };

export type WindowSize = { width: number, height: number, };

/**
 * `coaching:worked_example`: an analogous worked example for the current phase — never the
 * learner's file, never written into the project.
 */
export type WorkedExample = { phase: number, title: string, explanation: string, language: string, exampleCode: string, steps: Array<string>, };

/**
 * `coaching:worked_example_error`: the example could not be made; the panel offers a retry.
 */
export type WorkedExampleError = { phase: number | null, error: string, };

/**
 * `session:wrapping_up`: the session's wrap-up started — from the panel's End button, Claude
 * Code's `paige_end_session` or its SessionEnd — so every ending looks the same;
 * `session:ended` and `session:completed` follow.
 */
export type WrappingUp = { sessionId: string, };

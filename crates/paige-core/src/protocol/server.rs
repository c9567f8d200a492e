//! The server→client messages: the Story 5 catalog (32) plus the additive revisions of
//! Stories 9, 11 and 12 (`session:completed`, `explain:error`, `review:error`,
//! `dashboard:materials`, `dashboard:materials_error`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::client::EditorRange;
use super::dashboard::{DashboardDreyfus, DashboardIssues, DashboardMaterials, DashboardState};
use crate::db::{HintLevel, HintStyle, KataConstraint, PhaseStatus};
use crate::files::{DirPage, FileContent, FsChange, TreeNode};
pub use crate::vocab::DreyfusSignal;

macro_rules! server_messages {
    ($($(#[$doc:meta])* $variant:ident($payload:ty) = $name:literal,)+) => {
        /// A message to UI clients. `type` and `payload` are the spec's names.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(tag = "type", content = "payload")]
        pub enum ServerMessage {
            $($(#[$doc])* #[serde(rename = $name)] $variant($payload),)+
        }

        impl ServerMessage {
            /// Every server message type, as sent on the wire.
            pub const TYPES: &'static [&'static str] = &[$($name),+];

            pub fn type_name(&self) -> &'static str {
                match self { $(ServerMessage::$variant(_) => $name,)+ }
            }
        }
        payload_bindings!(ServerMessage; $($payload = $name,)+);
    };
}

server_messages! {
    ConnectionInit(ConnectionInit) = "connection:init",
    ConnectionError(ConnectionError) = "connection:error",
    DashboardDreyfus(DashboardDreyfus) = "dashboard:dreyfus",
    DashboardState(DashboardState) = "dashboard:state",
    DashboardIssues(DashboardIssues) = "dashboard:issues",
    DashboardIssuesError(ErrorText) = "dashboard:issues_error",
    DashboardMaterials(DashboardMaterials) = "dashboard:materials",
    DashboardMaterialsError(ErrorText) = "dashboard:materials_error",
    FsTree(FsTree) = "fs:tree",
    FsTreeUpdate(FsChange) = "fs:tree_update",
    /// Paige's extension: a page of one folder's entries, answering `fs:list` (issue 32).
    FsChildren(DirPage) = "fs:children",
    /// Paige's extension: `fs:list` refused — outside the project, not a folder, left out.
    FsListError(PathError) = "fs:list_error",
    FsContent(FileContent) = "fs:content",
    FsSaveAck(SaveAck) = "fs:save_ack",
    FsSaveError(PathError) = "fs:save_error",
    EditorDecorations(Decorations) = "editor:decorations",
    EditorClearDecorations(OptionalPath) = "editor:clear_decorations",
    EditorHoverHint(HoverHint) = "editor:hover_hint",
    EditorOpenFile(FileContent) = "editor:open_file",
    EditorHighlightLines(HighlightLines) = "editor:highlight_lines",
    EditorClearHighlights(OptionalPath) = "editor:clear_highlights",
    ExplorerHintFiles(HintFiles) = "explorer:hint_files",
    ExplorerClearHints(super::client::Empty) = "explorer:clear_hints",
    SessionStarted(SessionStarted) = "session:started",
    SessionResumed(SessionResumed) = "session:resumed",
    SessionEnded(SessionEnded) = "session:ended",
    SessionCompleted(SessionCompleted) = "session:completed",
    SessionWrappingUp(super::WrappingUp) = "session:wrapping_up",
    CoachingPhaseUpdate(PhaseUpdate) = "coaching:phase_update",
    CoachingMessage(CoachingMessage) = "coaching:message",
    CoachingIssueContext(IssueContext) = "coaching:issue_context",
    CoachingPlanReady(PlanReady) = "coaching:plan_ready",
    SessionOptions(super::SessionOptions) = "session:options",
    CoachingWorkedExample(super::WorkedExample) = "coaching:worked_example",
    CoachingWorkedExampleError(super::WorkedExampleError) = "coaching:worked_example_error",
    CoachingStepCheck(super::StepCheck) = "coaching:step_check",
    CoachingAgentActivity(super::AgentActivity) = "coaching:agent_activity",
    CoachingPlanFailed(super::PlanFailed) = "coaching:plan_failed",
    ObserverNudge(ObserverNudge) = "observer:nudge",
    ObserverStatus(ObserverStatus) = "observer:status",
    ExplainResponse(ExplainResponse) = "explain:response",
    ExplainError(PathError) = "explain:error",
    ReviewResponse(ReviewResponse) = "review:response",
    ReviewError(KataError) = "review:error",
    PracticeKataLoad(KataLoad) = "practice:kata_load",
    PracticeSolutionReview(SolutionReview) = "practice:solution_review",
    PracticeKatas(super::PracticeKatas) = "practice:katas",
    PracticeKataError(KataError) = "practice:kata_error",
    IntakeSentence(super::IntakeSentence) = "intake:sentence",
    IntakeReplyDone(super::IntakeReplyDone) = "intake:reply_done",
    IntakeState(super::IntakeState) = "intake:state",
    IntakeTransition(super::IntakeTransition) = "intake:transition",
    IntakeError(super::IntakeError) = "intake:error",
    /// Paige's extension: a phase's comprehension check as it stands (issue 30).
    LearningCheck(super::ComprehensionCheck) = "learning:check",
    /// Paige's extension: the reliance gauge and solutions shown then typed (issue 30).
    LearningSignals(super::LearningSignals) = "learning:signals",
    /// Paige's extension: a `learning:*` request refused, to the sender.
    LearningError(super::LearningErrorView) = "learning:error",
    /// Paige's extension: the reviews due now (issue 31).
    ReviewsDue(super::ReviewDue) = "reviews:due",
    /// Paige's extension: a spaced review's question.
    ReviewsQuestion(super::ReviewQuestion) = "reviews:question",
    /// Paige's extension: a spaced review's grade and next date.
    ReviewsGraded(super::ReviewGraded) = "reviews:graded",
    /// Paige's extension: a spaced review request failed, with why.
    ReviewsError(super::ReviewErrorView) = "reviews:error",
    /// Paige's extension: the signed learning record, to save (issue 31).
    RecordExported(super::RecordExported) = "record:exported",
    /// Paige's extension: the learning record could not be exported.
    RecordError(super::RecordError) = "record:error",
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionInit {
    /// The active coaching session, if any.
    pub session_id: Option<String>,
    /// The client message types this server handles fully.
    pub capabilities: Vec<String>,
    pub feature_flags: std::collections::BTreeMap<String, bool>,
    /// The command that runs Claude Code for this Paige from a terminal (`paige serve`'s
    /// browser UI shows it where the desktop app has its terminal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub agent_command: Option<String>,
}

/// Machine-readable error classes for `connection:error`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The spec's answer for a stub handler (FR-062). Paige has none left; the server's
    /// completeness test fails if any message is answered with it.
    NotImplemented,
    InvalidJson,
    InvalidMessage,
    InvalidPayload,
    PathRejected,
    FileNotFound,
    FileError,
    BinaryFile,
    /// A file, buffer or message over one of Paige's size caps (the message names it).
    TooLarge,
    /// Not a regular file: a FIFO, socket or device (Paige never opens those).
    NotRegularFile,
    Internal,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectionError {
    pub code: ErrorCode,
    pub message: String,
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub context: Value,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorText {
    pub error: String,
}

/// The project tree as far as it is listed: the root's first page of entries, and the
/// entries of the small folders under it; deeper folders come by `fs:list`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FsTree {
    pub root: TreeNode,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveAck {
    pub path: String,
    pub success: bool,
    /// Unix milliseconds.
    pub timestamp: i64,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathError {
    pub path: String,
    pub error: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KataError {
    pub kata_id: String,
    pub error: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionalPath {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub path: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decorations {
    pub path: String,
    pub decorations: Vec<Decoration>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decoration {
    pub range: EditorRange,
    pub style: HintStyle,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub hover_text: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HoverHint {
    pub path: String,
    pub range: EditorRange,
    pub hint_text: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HighlightLines {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub style: HintStyle,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub hover_text: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HintFiles {
    pub hints: Vec<FileHint>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileHint {
    pub path: String,
    pub style: HintStyle,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub directories: Option<Vec<String>>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStarted {
    /// Paige's extension: which session (resume and the panel need it).
    pub session_id: String,
    pub issue_context: Option<IssueContext>,
    /// Paige's extension: work without an issue, as the learner typed it (for an issue, its
    /// title).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub description: Option<String>,
    pub phases: Vec<PhaseSummary>,
    pub hint_level: HintLevel,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub open_files: Option<Vec<String>>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseSummary {
    pub number: i64,
    pub title: String,
    pub description: String,
    pub hint_level: HintLevel,
    pub status: PhaseStatus,
    /// The skill area the phase exercises (the coach agent names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub skill_area: Option<String>,
    /// Why the phase's hints start where they do, when the learner's history moved them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub hint_reason: Option<String>,
    /// The test whose pass shows the phase is done (its step check runs it on save).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub test_filter: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompleted {
    pub session_id: String,
    pub knowledge_gaps: u32,
    pub kata_specs: u32,
    pub dreyfus_updates: u32,
    pub memories_stored: u32,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseUpdate {
    pub phase: i64,
    pub status: PhaseStatus,
    pub description: String,
    /// Paige's extension: the phase's hint level, so every UI shows the one stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub hint_level: Option<HintLevel>,
    /// Paige's extension: why the hints start where they do, when the learner's history (or
    /// a comprehension check) moved them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub hint_reason: Option<String>,
}

impl PhaseUpdate {
    pub fn of(phase: &crate::db::Phase) -> PhaseUpdate {
        PhaseUpdate {
            phase: phase.number,
            status: phase.status,
            description: phase.description.clone(),
            hint_level: Some(phase.hint_level),
            hint_reason: phase.hint_reason.clone(),
        }
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageKind {
    Info,
    Success,
    Warning,
    Error,
    Hint,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoachingMessage {
    pub message: String,
    #[serde(rename = "type")]
    pub kind: MessageKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub anchor: Option<Anchor>,
}

impl ServerMessage {
    /// A notice in the coaching panel, anchored nowhere (Paige's own state: the watcher,
    /// the sandbox, what the change detector undid).
    pub fn notice(kind: MessageKind, message: impl Into<String>) -> ServerMessage {
        ServerMessage::CoachingMessage(CoachingMessage { message: message.into(), kind, anchor: None })
    }
}

/// Where an anchored comment balloon points.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    pub path: String,
    pub line: u32,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueContext {
    pub number: i64,
    pub title: String,
    pub summary: String,
    pub labels: Vec<String>,
    pub url: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanReady {
    pub plan_id: String,
    pub phases: Vec<PhaseSummary>,
    pub memory_connection: Option<String>,
    pub estimated_difficulty: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObserverNudge {
    pub signal: String,
    pub confidence: f64,
    pub context: NudgeContext,
}

/// Snake-case keys, as the spec gives them.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NudgeContext {
    pub current_file: Option<String>,
    pub expected_file: Option<String>,
    /// As the spec's example gives it: "3m12s".
    pub time_in_file: Option<String>,
    pub phase_description: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObserverStatus {
    pub active: bool,
    pub muted: bool,
    pub last_evaluation: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SolutionReview {
    pub review: String,
    pub level: u8,
    pub passed: bool,
    pub constraints_unlocked: Vec<KataConstraint>,
}

/// What a resumed session restores in the UI.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionResumed {
    pub restored_state: SessionStarted,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEnded {
    pub summary: SessionSummary,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub session_id: String,
    pub status: crate::db::SessionStatus,
    pub duration_ms: i64,
    pub phases_completed: u32,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplainResponse {
    pub path: String,
    pub explanation: String,
    pub key_concepts: Vec<String>,
    pub analogy: Option<String>,
    pub related_files: Option<Vec<String>>,
    pub phase_connection: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowUpKind {
    ConstraintEscalation,
    RetryHint,
    Completed,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FollowUp {
    #[serde(rename = "type")]
    pub kind: FollowUpKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub constraint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reason: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewResponse {
    pub kata_id: String,
    pub correct: bool,
    pub feedback: String,
    pub level: u8,
    pub passed: bool,
    pub follow_up: Option<FollowUp>,
    pub dreyfus_signal: DreyfusSignal,
    pub unlocked_constraints: Vec<KataConstraint>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KataLoad {
    pub kata: KataView,
    pub constraints: Vec<KataConstraint>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KataView {
    pub id: String,
    pub title: String,
    pub description: String,
    pub scaffolding_code: String,
}

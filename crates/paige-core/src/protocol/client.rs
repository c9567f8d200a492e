//! The client→server messages: the spec Story 5 catalog (23, with the Story 11 and 12
//! upgrades) and Paige's extensions (`session:list`, `coaching:show_me`, `fs:list`…).

use serde::{Deserialize, Serialize};

use crate::db::HintLevel;

macro_rules! client_messages {
    ($($(#[$doc:meta])* $variant:ident($payload:ty) = $name:literal,)+) => {
        /// A message from a UI client. `type` and `payload` are the spec's names.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type", content = "payload")]
        pub enum ClientMessage {
            $($(#[$doc])* #[serde(rename = $name)] $variant($payload),)+
        }

        impl ClientMessage {
            /// Every client message type, as sent on the wire.
            pub const TYPES: &'static [&'static str] = &[$($name),+];

            pub fn type_name(&self) -> &'static str {
                match self { $(ClientMessage::$variant(_) => $name,)+ }
            }

            /// Deserializes the payload of a message of type `type_name` straight from
            /// `deserializer` (no intermediate value); `None` for an unknown type.
            pub(crate) fn deserialize_payload<'de, D: serde::Deserializer<'de>>(
                type_name: &str,
                deserializer: D,
            ) -> Option<Result<ClientMessage, D::Error>> {
                match type_name {
                    $($name => Some(<$payload as Deserialize>::deserialize(deserializer).map(ClientMessage::$variant)),)+
                    _ => None,
                }
            }

            /// Decodes the payload of a message of type `type_name`; `None` for an unknown type.
            pub fn from_parts(type_name: &str, payload: &str) -> Option<Result<ClientMessage, serde_json::Error>> {
                match type_name {
                    $($name => Some(serde_json::from_str::<$payload>(payload).map(ClientMessage::$variant)),)+
                    _ => None,
                }
            }
        }
        payload_bindings!(ClientMessage; $($payload = $name,)+);
    };
}

client_messages! {
    Hello(Hello) = "connection:hello",
    DashboardRequest(DashboardRequest) = "dashboard:request",
    DashboardRefreshIssues(Empty) = "dashboard:refresh_issues",
    SessionStart(SessionStart) = "session:start",
    SessionResume(SessionResume) = "session:resume",
    SessionEnd(Empty) = "session:end",
    /// Paige's extension: the issues and resumable sessions to start from (`session:options`).
    SessionList(Empty) = "session:list",
    /// Paige's extension: "just show me" — a worked example for the current phase.
    CoachingShowMe(Empty) = "coaching:show_me",
    /// Paige's extension: the learner marks a phase done (as `paige_update_phase` would).
    CoachingPhaseDone(super::PhaseDone) = "coaching:phase_done",
    /// Paige's extension: ask Claude Code to plan again (the kickoff, delivered again).
    CoachingReplan(Empty) = "coaching:replan",
    FileOpen(PathPayload) = "file:open",
    FileSave(FileSave) = "file:save",
    FileClose(PathPayload) = "file:close",
    BufferUpdate(BufferUpdate) = "buffer:update",
    EditorTabSwitch(TabSwitch) = "editor:tab_switch",
    EditorSelection(EditorSelection) = "editor:selection",
    /// Paige's extension: one page of a folder's entries (`fs:children`, or `fs:list_error`),
    /// asked for when the explorer expands it (issue 32).
    FsList(FsList) = "fs:list",
    ExplorerExpandDir(PathPayload) = "explorer:expand_dir",
    ExplorerCollapseDir(PathPayload) = "explorer:collapse_dir",
    HintsLevelChange(HintsLevelChange) = "hints:level_change",
    UserExplain(UserExplain) = "user:explain",
    UserReview(UserReview) = "user:review",
    UserIdleStart(IdleStart) = "user:idle_start",
    UserIdleEnd(Empty) = "user:idle_end",
    ObserverMute(ObserverMute) = "observer:mute",
    PracticeSubmitSolution(PracticeSubmit) = "practice:submit_solution",
    /// Paige's extension: the katas to practise (`practice:katas`).
    PracticeList(Empty) = "practice:list",
    /// Paige's extension: open one kata (`practice:kata_load`).
    PracticeKataRequest(super::KataRequest) = "practice:kata_request",
    /// Paige's extension: start (or rejoin) the intake interview of the active session.
    IntakeStart(Empty) = "intake:start",
    /// Paige's extension: the learner started or stopped typing an interview answer.
    IntakeTyping(super::IntakeTyping) = "intake:typing",
    /// Paige's extension: the learner's interview answer.
    IntakeAnswer(super::IntakeAnswer) = "intake:answer",
    /// Paige's extension: skip the interview for now (it can be taken later).
    IntakeSkip(Empty) = "intake:skip",
    /// Paige's extension: the learner's answer to a comprehension question (issue 30).
    LearningAnswer(super::LearningAnswer) = "learning:answer",
    /// Paige's extension: skip a phase's comprehension questions.
    LearningSkip(super::LearningPhase) = "learning:skip",
    /// Paige's extension: ask for a phase's comprehension questions again after a failure.
    LearningRetry(super::LearningPhase) = "learning:retry",
    /// Paige's extension: the spaced reviews due now (`reviews:due`, issue 31).
    ReviewsList(Empty) = "reviews:list",
    /// Paige's extension: open a review (`reviews:question` follows).
    ReviewsStart(super::ReviewStart) = "reviews:start",
    /// Paige's extension: answer a review (`reviews:graded` follows).
    ReviewsAnswer(super::ReviewAnswer) = "reviews:answer",
    /// Paige's extension: export the signed learning record (`record:exported`, issue 31).
    RecordExport(super::RecordExport) = "record:export",
    TerminalInput(TerminalInput) = "terminal:input",
    TerminalResize(TerminalSize) = "terminal:resize",
}

/// A payload with no fields (`{}`); unknown fields are ignored.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    pub version: String,
    pub platform: String,
    pub window_size: WindowSize,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowSize {
    pub width: u32,
    pub height: u32,
}

/// Dashboard statistics window.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Period {
    #[serde(rename = "7d")]
    Week,
    #[serde(rename = "30d")]
    Month,
    #[default]
    #[serde(rename = "all")]
    All,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DashboardRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub stats_period: Option<Period>,
    /// Paige's extension: ask the model again instead of sending the answers kept since the
    /// last completed session (at most a day old).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub refresh: Option<bool>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStart {
    /// The issue to work on; without one, `title` says what the work is (Paige's extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub issue_number: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub description: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionResume {
    pub session_id: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathPayload {
    pub path: String,
}

/// `fs:list`: the folder `path` (`""`: the project root), from entry `offset` (0 when absent).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsList {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub offset: Option<u32>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSave {
    pub path: String,
    pub content: String,
}

/// A cursor position; 1-based as in Monaco.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursorPosition {
    pub line: u32,
    pub column: u32,
}

/// A range in a file; 1-based lines and columns, as in Monaco.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditorRange {
    pub start_line: u32,
    pub start_column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BufferUpdate {
    pub path: String,
    pub content: String,
    #[serde(default)]
    pub cursor_position: CursorPosition,
    #[serde(default)]
    pub selections: Vec<EditorRange>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TabSwitch {
    /// `None` when no tab was open before.
    #[serde(default)]
    pub from_path: Option<String>,
    pub to_path: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditorSelection {
    pub path: String,
    pub range: EditorRange,
    pub text_length: u64,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HintsLevelChange {
    pub level: HintLevel,
    pub previous_level: HintLevel,
}

/// A selection as `user:explain` sends it (Story 11).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextSelection {
    pub start_line: u32,
    pub start_col: u32,
    pub end_line: u32,
    pub end_col: u32,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserExplain {
    pub path: String,
    pub language: String,
    pub selection: TextSelection,
    pub selected_text: String,
    /// About 50 lines either side of the selection.
    pub surrounding_context: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserReview {
    pub kata_id: String,
    pub user_code: String,
    #[serde(default)]
    pub active_constraint_titles: Vec<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdleStart {
    /// Unix milliseconds of the learner's last action.
    pub last_action_timestamp: i64,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObserverMute {
    pub muted: bool,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PracticeSubmit {
    pub kata_id: String,
    pub code: String,
    #[serde(default)]
    pub active_constraints: Vec<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalInput {
    pub input: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalSize {
    pub cols: u16,
    pub rows: u16,
}

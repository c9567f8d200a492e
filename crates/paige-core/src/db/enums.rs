//! Closed sets of values stored as TEXT. Each maps one-to-one to its spec spelling, in SQL
//! and in JSON alike.

macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(format!("unknown {} {other:?}", stringify!($name))),
                }
            }
        }

        impl rusqlite::types::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                value.as_str()?.parse().map_err(|err: String| rusqlite::types::FromSqlError::Other(err.into()))
            }
        }
    };
}

text_enum!(SessionStatus { Active => "active", Completed => "completed", Abandoned => "abandoned" });
text_enum!(PhaseStatus { Pending => "pending", Active => "active", Complete => "complete" });
text_enum!(
    /// How much the coach reveals in a phase (coach-agent schema).
    HintLevel { None => "none", File => "file", Region => "region", Line => "line" }
);
text_enum!(HintType { File => "file", Line => "line" });
text_enum!(
    /// File hints use suggested/important/critical; line hints use hint/focus/warning.
    HintStyle {
        Suggested => "suggested", Important => "important", Critical => "critical",
        Hint => "hint", Focus => "focus", Warning => "warning",
    }
);
text_enum!(DreyfusStage {
    Novice => "novice", AdvancedBeginner => "advanced_beginner", Competent => "competent",
    Proficient => "proficient", Expert => "expert",
});
text_enum!(Severity { Low => "low", Medium => "medium", High => "high" });
text_enum!(ProgressEventType {
    HintUsed => "hint_used", HintEscalated => "hint_escalated",
    ReviewRequested => "review_requested", ReviewPassed => "review_passed",
});
text_enum!(
    /// The kinds of entry in the action timeline (Story 4, Stories 9, 11 and 12, and Paige's
    /// `worked_example`: the learner asked "just show me"; the intake interview's
    /// `intake_*`).
    ActionType {
        FileOpen => "file_open", FileSave => "file_save", FileClose => "file_close",
        BufferSummary => "buffer_summary", BufferSignificantChange => "buffer_significant_change",
        TabSwitch => "tab_switch", Selection => "selection",
        HintLevelChange => "hint_level_change",
        ExplainRequested => "explain_requested", ReviewRequested => "review_requested",
        IdleStart => "idle_start", IdleEnd => "idle_end",
        SessionStarted => "session_started", SessionResumed => "session_resumed", SessionEnded => "session_ended",
        PhaseStarted => "phase_started", PhaseCompleted => "phase_completed",
        CoachingMessage => "coaching_message",
        NudgeSent => "nudge_sent", NudgeSuppressed => "nudge_suppressed", ObserverMuted => "observer_muted",
        McpToolCall => "mcp_tool_call",
        DecorationsApplied => "decorations_applied", FileHintsApplied => "file_hints_applied",
        ExplainCompleted => "explain_completed", ReviewCompleted => "review_completed",
        DashboardLoaded => "dashboard_loaded",
        ChangeReverted => "change_reverted",
        CoachingPipeline => "coaching_pipeline",
        WorkedExample => "worked_example",
        IntakeStarted => "intake_started", IntakeTurn => "intake_turn", IntakeTransition => "intake_transition",
        ComprehensionCheck => "comprehension_check", SolutionShown => "solution_shown",
    }
);

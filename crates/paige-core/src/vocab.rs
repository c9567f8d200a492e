//! The shared vocabulary of model answers and UI payloads, defined once: the model's
//! structured output and the UI protocol spell these the same way.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How hard a piece of work is for this learner.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Difficulty {
    Beginner,
    Intermediate,
    Advanced,
}

/// How much a memory matters when it is recalled later.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Importance {
    Low,
    #[default]
    Medium,
    High,
}

impl Importance {
    pub fn as_str(self) -> &'static str {
        match self {
            Importance::Low => "low",
            Importance::Medium => "medium",
            Importance::High => "high",
        }
    }
}

impl std::str::FromStr for Importance {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "low" => Ok(Importance::Low),
            "medium" => Ok(Importance::Medium),
            "high" => Ok(Importance::High),
            other => Err(format!("importance must be low, medium or high, not {other:?}")),
        }
    }
}

/// Whether an issue suits the learner now.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Suitability {
    GoodFit,
    Stretch,
    TooAdvanced,
}

/// How pressing an issue is for the team.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Urgency {
    Low,
    Medium,
    High,
}

/// Which way a practice attempt moves the learner's Dreyfus stage.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DreyfusSignal {
    Advancing,
    Stable,
    Struggling,
}

/// How a phase's check last ended.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Running,
    Passed,
    Failed,
    /// The check could not run (no test runner, a missing tool, a timeout).
    Error,
}

impl CheckStatus {
    /// As sent to the UI and put in the Observer's context: `running`, `passed`, `failed`, `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Running => "running",
            CheckStatus::Passed => "passed",
            CheckStatus::Failed => "failed",
            CheckStatus::Error => "error",
        }
    }
}

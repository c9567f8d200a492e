//! Paige's typed extensions of the catalog for practice katas (issue 17, spec Story 11 Flow 2):
//! the catalog has a kata's load (`practice:kata_load`) and its review, but no way to list the
//! katas or ask for one. Additive: a spec client that never sends these never receives them.

use serde::{Deserialize, Serialize};

/// `practice:kata_request`: open one kata; answered with `practice:kata_load`, or
/// `practice:kata_error` when there is no such kata.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KataRequest {
    pub kata_id: String,
}

/// `practice:katas`: every kata (the answer to `practice:list`), newest first.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PracticeKatas {
    pub katas: Vec<PracticeKata>,
}

/// One kata in the practice list.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PracticeKata {
    pub id: String,
    pub title: String,
    pub description: String,
    /// The knowledge gap the kata practises (absent if it cannot be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub gap_topic: Option<String>,
    /// The best level any reviewed attempt reached, 1–10; 0 before any.
    pub best_level: u8,
    /// Reviewed attempts.
    pub attempts: u32,
    /// All of the kata's constraints, and how many of them the best level unlocked.
    pub constraints: u32,
    pub unlocked_constraints: u32,
}

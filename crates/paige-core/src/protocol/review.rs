//! Paige's typed extensions of the catalog for spaced review (issue 31): what is due, a
//! review's question and its grade. Prefixed `reviews:` (the catalog's `review:*` is the
//! practice kata's review). Additive: a spec client that never sends these never receives them.

use serde::{Deserialize, Serialize};

/// `reviews:due`: how many reviews are due now and the first of them (the answer to
/// `reviews:list`, and after each review).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewDue {
    pub due_count: u32,
    pub items: Vec<ReviewItemView>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewItemView {
    pub id: String,
    /// `gap`, `kata` or `concept`.
    pub kind: String,
    pub topic: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub skill_area: Option<String>,
    /// ISO 8601.
    pub due: String,
}

/// `reviews:start`: open a review (its question follows as `reviews:question`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStart {
    pub item_id: String,
}

/// `reviews:question`: the review's question.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewQuestion {
    pub item_id: String,
    pub kind: String,
    pub topic: String,
    pub question: String,
    pub concept: String,
    /// A kata's review can open the kata in Practice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub kata_id: Option<String>,
}

/// `reviews:answer`: the learner's answer (Enter sends it).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewAnswer {
    pub item_id: String,
    pub answer: String,
}

/// `reviews:graded`: the answer's grade, the FSRS rating it made and when the item comes back.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewGraded {
    pub item_id: String,
    /// `correct`, `partial` or `incorrect`.
    pub grade: String,
    pub why: String,
    /// `again`, `hard`, `good` or `easy`.
    pub rating: String,
    pub interval_days: i64,
    /// ISO 8601.
    pub next_due: String,
    /// The interval is stable: the item (and its gap) is addressed.
    pub addressed: bool,
}

/// `reviews:error`: a review request failed — where (the item), why, and Retry.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewErrorView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub item_id: Option<String>,
    pub error: String,
}

/// `record:export`: the learner asks for their learning record (the browser UI downloads it;
/// the desktop app saves it through its own dialog instead).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordExport {
    /// `YYYY-MM-DD`: only what happened since that day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub since: Option<String>,
}

/// `record:exported`: the signed record (JSON Lines) to save under `file_name`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordExported {
    pub file_name: String,
    pub content: String,
    pub lines: u64,
    pub sessions: u64,
    /// The key a mentor can pin (`paige record verify FILE --key …`).
    pub public_key: String,
}

/// `record:error`: the record could not be exported, and why.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordError {
    pub error: String,
}

//! What Paige reads from Claude Code's session transcript (JSON lines): the model in use and
//! the tokens spent, for the ledger and the token budget.

use std::path::Path;

use serde_json::Value;

fn lines(path: &Path) -> Option<Vec<Value>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
}

/// The model of the latest assistant message in the transcript.
pub(crate) fn model(path: &Path) -> Option<String> {
    lines(path)?.iter().rev().find_map(|l| l.pointer("/message/model").and_then(Value::as_str).map(str::to_owned))
}

/// Tokens used so far in the transcript: input + output of every assistant message.
pub(crate) fn tokens(path: &Path) -> Option<i64> {
    let lines = lines(path)?;
    let total = lines
        .iter()
        .filter_map(|l| l.pointer("/message/usage"))
        .map(|u| {
            ["input_tokens", "output_tokens", "cache_creation_input_tokens"]
                .iter()
                .filter_map(|k| u.get(k).and_then(Value::as_i64))
                .sum::<i64>()
        })
        .sum();
    Some(total)
}

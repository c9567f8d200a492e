//! What one `200` answer of the Messages API comes to: the structured answer with the
//! web-search URLs found on the way, a turn the API paused, or why it is neither.

use serde::Deserialize;
use serde_json::Value;

use super::{ApiError, Sourced, StructuredOutput};

/// A turn the model ended, or one the API paused (`pause_turn`) for the caller to send back.
pub(super) enum Turn<T> {
    Answer(Sourced<T>),
    /// The paused turn's content blocks, verbatim, and the search URLs among them.
    Paused {
        content: Vec<Value>,
        search_urls: Vec<String>,
    },
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub(super) struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

pub(super) fn parse_answer<T: StructuredOutput>(bytes: &[u8], max_tokens: u32) -> Result<(Turn<T>, Usage), ApiError> {
    let response: MessageResponse = serde_json::from_slice(bytes)
        .map_err(|err| ApiError::InvalidResponse { reason: format!("not a Messages API response: {err}") })?;
    let search_urls = search_urls(&response.content);
    let mut texts = response.content.iter().filter(|block| block["type"] == "text").filter_map(|b| b["text"].as_str());
    match response.stop_reason.as_deref() {
        Some("refusal") => return Err(ApiError::Refusal { text: texts.collect::<Vec<_>>().join("\n") }),
        Some("max_tokens") => return Err(ApiError::MaxTokens { max_tokens }),
        Some("pause_turn") => {
            return Ok((Turn::Paused { content: response.content, search_urls }, response.usage));
        }
        Some("end_turn" | "stop_sequence") => {}
        other => {
            return Err(ApiError::InvalidResponse { reason: format!("unexpected stop_reason {other:?}") });
        }
    }
    // Server-tool turns (web search) come before the answer: the final text block is the JSON.
    let Some(answer) = texts.next_back() else {
        return Err(ApiError::InvalidResponse { reason: "the response has no text block".into() });
    };
    let answer = serde_json::from_str::<T>(answer).map_err(|err| ApiError::InvalidResponse {
        reason: format!("the answer does not match {}: {err}", std::any::type_name::<T>()),
    })?;
    Ok((Turn::Answer(Sourced { answer, search_urls }), response.usage))
}

/// The URLs of the `web_search_result`s in `content`; an error result holds an object, not a
/// list: no URLs.
fn search_urls(content: &[Value]) -> Vec<String> {
    content
        .iter()
        .filter(|block| block["type"] == "web_search_tool_result")
        .filter_map(|block| block["content"].as_array())
        .flatten()
        .filter(|result| result["type"] == "web_search_result")
        .filter_map(|result| result["url"].as_str().map(str::to_owned))
        .collect()
}

#[derive(Deserialize)]
struct MessageResponse {
    content: Vec<Value>,
    stop_reason: Option<String>,
    usage: Usage,
}

use std::time::Duration;

/// Why a model call failed: a closed set a caller can match on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    /// No `ANTHROPIC_API_KEY`: features that need the model are unavailable, the app runs on.
    #[error("Anthropic API key not configured (set ANTHROPIC_API_KEY)")]
    NotConfigured,
    /// 401 or 403: the key is wrong or lacks permission. Never retried (EC-38).
    #[error("the Anthropic API rejected the key (HTTP {status}): {message}")]
    Authentication { status: u16, message: String },
    /// 429, after the transport retries (EC-39).
    #[error("rate limited by the Anthropic API (HTTP 429): {message}")]
    RateLimited { retry_after: Option<Duration>, message: String },
    /// 5xx (including 529 overloaded), or 408/409, which the API asks clients to retry.
    #[error("the Anthropic API failed (HTTP {status}): {message}")]
    Server { status: u16, message: String },
    /// Any other 4xx: the request itself is wrong (or, with `status: None`, could not be built).
    #[error("the Anthropic API rejected the request{}: {message}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    InvalidRequest { status: Option<u16>, message: String },
    /// The connection failed or was dropped (EC-42).
    #[error("cannot reach the Anthropic API: {message}")]
    Transport { message: String },
    #[error("the Anthropic API did not answer within {after:?}")]
    Timeout { after: Duration },
    /// `stop_reason: "refusal"` (EC-40), with whatever the model said.
    #[error("the model refused to answer: {text}")]
    Refusal { text: String },
    /// `stop_reason: "max_tokens"`: the answer was cut off (EC-41); retry with a larger budget.
    #[error("the answer was cut off at max_tokens ({max_tokens})")]
    MaxTokens { max_tokens: u32 },
    /// The response was not a Messages API answer, or its JSON did not fit the response type.
    #[error("invalid response from the Anthropic API: {reason}")]
    InvalidResponse { reason: String },
}

impl ApiError {
    /// Worth trying again later: rate limits, server errors, transport failures, timeouts.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ApiError::RateLimited { .. }
                | ApiError::Server { .. }
                | ApiError::Transport { .. }
                | ApiError::Timeout { .. }
        )
    }

    /// A machine-readable name for the UI and logs.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::NotConfigured => "not_configured",
            ApiError::Authentication { .. } => "authentication",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::Server { .. } => "server",
            ApiError::InvalidRequest { .. } => "invalid_request",
            ApiError::Transport { .. } => "transport",
            ApiError::Timeout { .. } => "timeout",
            ApiError::Refusal { .. } => "refusal",
            ApiError::MaxTokens { .. } => "max_tokens",
            ApiError::InvalidResponse { .. } => "invalid_response",
        }
    }

    /// Classifies a non-200 answer; `body` is the API's `{"type":"error","error":{...}}` or anything else.
    pub(crate) fn from_status(status: u16, body: &str, retry_after: Option<Duration>) -> ApiError {
        let message = error_message(body);
        match status {
            401 | 403 => ApiError::Authentication { status, message },
            429 => ApiError::RateLimited { retry_after, message },
            408 | 409 | 500.. => ApiError::Server { status, message },
            _ => ApiError::InvalidRequest { status: Some(status), message },
        }
    }
}

fn error_message(body: &str) -> String {
    let parsed: Option<(String, String)> = serde_json::from_str::<serde_json::Value>(body).ok().and_then(|v| {
        let error = v.get("error")?;
        Some((error.get("type")?.as_str()?.to_owned(), error.get("message")?.as_str()?.to_owned()))
    });
    match parsed {
        Some((kind, message)) => format!("{kind}: {message}"),
        None => body.chars().take(300).collect(),
    }
}

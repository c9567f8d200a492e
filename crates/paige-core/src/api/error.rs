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
    /// The call's overall deadline passed, its retries and continuations included; `var` is
    /// the setting that moves it. Not retried: the deadline already covered the retries.
    #[error("the model call {call_type} did not finish within {after:?} (set {var} to wait longer)")]
    Deadline { call_type: String, after: Duration, var: &'static str },
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
            ApiError::Deadline { .. } => "deadline",
            ApiError::Refusal { .. } => "refusal",
            ApiError::MaxTokens { .. } => "max_tokens",
            ApiError::InvalidResponse { .. } => "invalid_response",
        }
    }

    /// What went wrong and what the learner can do, in one sentence.
    pub fn advice(&self) -> String {
        let advice = match self {
            ApiError::NotConfigured => "Paige has no Anthropic API key — add one in Settings, or set ANTHROPIC_API_KEY",
            ApiError::Authentication { .. } => "the Anthropic API rejected Paige's key — check the key in Settings",
            ApiError::RateLimited { .. } => {
                "the Anthropic API is limiting how often Paige may call it — wait a minute, then retry"
            }
            ApiError::Server { status: 529, .. } => {
                "the Anthropic API is overloaded right now — wait a moment, then retry"
            }
            ApiError::Server { .. } => "the Anthropic API had a problem of its own — retry in a moment",
            ApiError::InvalidRequest { .. } => {
                "the Anthropic API refused Paige's request — retry, and if it happens again report it with the details"
            }
            ApiError::Transport { .. } => "Paige cannot reach the Anthropic API — check your connection, then retry",
            ApiError::Timeout { .. } => "the Anthropic API stopped answering — retry in a moment",
            ApiError::Deadline { after, .. } => {
                let after = match after.as_millis() {
                    ms if ms < 1000 => format!("{ms} ms"),
                    ms if ms % 1000 == 0 => format!("{} s", ms / 1000),
                    _ => format!("{:.1} s", after.as_secs_f64()),
                };
                return format!("the model took longer than {after} to answer — retry in a moment");
            }
            ApiError::Refusal { .. } => "the model declined to answer this — try asking about something else",
            ApiError::MaxTokens { .. } => "the model's answer was too long and was cut off — retry",
            ApiError::InvalidResponse { .. } => "the model's answer was not in the shape Paige expects — retry",
        };
        advice.to_owned()
    }

    /// The error as a UI shows it: `what` failed, [`ApiError::advice`], then the full error as
    /// the details (see [`crate::protocol::error_text`]).
    pub fn readable(&self, what: &str) -> String {
        crate::protocol::error_text(&format!("{what}: {}.", self.advice()), &self.to_string())
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

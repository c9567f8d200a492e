//! Streamed plain-text replies (issue 18): the intake interviewer's turns arrive delta by
//! delta, so the end of a reply is a real event and each sentence can be checked before the
//! learner sees it.
//!
//! [`ApiClient::stream_chat`] posts a `"stream": true` request and reads its server-sent
//! events (sse-stream over reqwest's byte stream). Like [`ApiClient::call`] it writes one
//! `api_call_log` row per HTTP attempt and retries transient failures, but only while no text
//! has reached the caller: a reply is never delivered twice. Everything runs inside the
//! returned future, so dropping it closes the connection.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use sse_stream::SseStream;

use super::{
    ApiClient, ApiError, CallOptions, DEFAULT_MAX_TOKENS, RequestMessage, ServerTool, input_hash, latency_ms,
    retry_after,
};
use crate::db::{Db, NewApiCall};
use crate::models::Model;

/// A streamed reply that ended with `message_stop`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamedText {
    /// Every text delta in order: exactly what `on_text` was given.
    pub text: String,
    /// `end_turn`, `stop_sequence`, or `max_tokens`, which means the reply was cut off: the
    /// caller decides whether a cut-off reply will do.
    pub stop_reason: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Who said a turn of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    User,
    Assistant,
}

/// One earlier turn of a conversation, sent before the new user message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage { role: ChatRole::User, content: content.into() }
    }

    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage { role: ChatRole::Assistant, content: content.into() }
    }
}

impl ApiClient {
    /// A plain-text streaming call (no output schema): `on_text` gets every text delta as it
    /// arrives, and the whole reply comes back once the stream has ended.
    pub async fn stream_text(
        &self,
        db: &Db,
        options: &CallOptions<'_>,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<StreamedText, ApiError> {
        self.stream_chat(db, options, &[], on_text).await
    }

    /// [`ApiClient::stream_text`] with the conversation so far: `history` is the earlier
    /// turns, oldest first, and `options.user_message` the new one after them. The API wants
    /// the turns to start with the user's and alternate; it answers 400 when they do not.
    ///
    /// Failures: an HTTP error is mapped as [`ApiClient::call`] maps it; an `error` event in
    /// the stream (e.g. `overloaded_error`) as the status the API gives that error type; a
    /// stream that ends before `message_stop` is [`ApiError::InvalidResponse`]; no event for
    /// `stream_idle_timeout` is [`ApiError::Timeout`]; `stop_reason: "refusal"` is
    /// [`ApiError::Refusal`]. Transient failures are retried like `call` retries them, but
    /// only when no text was delivered. Every attempt writes one `api_call_log` row: a
    /// success its latency and the stream's token counts, a failure `latency_ms = -1`. The
    /// call type's deadline covers every attempt: then [`ApiError::Deadline`]. A paused turn
    /// (`pause_turn`, only with server tools, which no streamed call sends) is returned as
    /// its stop reason, not continued.
    pub async fn stream_chat(
        &self,
        db: &Db,
        options: &CallOptions<'_>,
        history: &[ChatMessage],
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<StreamedText, ApiError> {
        self.within_deadline(options.call_type, self.stream_retried(db, options, history, on_text)).await
    }

    async fn stream_retried(
        &self,
        db: &Db,
        options: &CallOptions<'_>,
        history: &[ChatMessage],
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<StreamedText, ApiError> {
        let model = self.settings.models.resolve(options.model);
        let log = |latency_ms: i64, input_tokens: u64, output_tokens: u64| {
            log_attempt(db, options, model, latency_ms, input_tokens, output_tokens);
        };
        let Some(api_key) = self.api_key() else {
            log(-1, 0, 0);
            return Err(ApiError::NotConfigured);
        };
        let messages = history
            .iter()
            .map(|turn| RequestMessage { role: turn.role.as_str(), content: &turn.content })
            .chain([RequestMessage { role: "user", content: options.user_message }])
            .collect();
        let body = StreamRequest {
            model: &model.id,
            max_tokens: options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system: options.system_prompt,
            messages,
            stream: true,
            tools: options.tools,
        };
        let body = match super::encode(&body) {
            Ok(body) => body,
            Err(err) => {
                log(-1, 0, 0);
                return Err(err);
            }
        };

        let mut retry = 0;
        loop {
            let started = Instant::now();
            let mut unfinished = UnfinishedRow { log: &log, finished: false };
            let attempt = self.stream_attempt(&api_key, options.call_type, &body, on_text).await;
            unfinished.finished = true;
            let error = match attempt.outcome {
                Ok(reply) if reply.stop_reason.as_deref() == Some("refusal") => ApiError::Refusal { text: reply.text },
                Ok(reply) => {
                    log(latency_ms(started.elapsed()), reply.input_tokens, reply.output_tokens);
                    return Ok(reply);
                }
                Err(error) => error,
            };
            log(-1, 0, 0);
            let retryable = !attempt.delivered_text && attempt.should_retry.unwrap_or_else(|| error.is_transient());
            if !retryable || retry >= self.settings.max_retries {
                return Err(error);
            }
            let delay = self.retry_delay(retry, attempt.retry_after);
            tracing::warn!(call_type = options.call_type, attempt = retry + 1, ?delay, "retrying the stream: {error}");
            tokio::time::sleep(delay).await;
            retry += 1;
        }
    }

    /// One HTTP attempt: the request, then its events until `message_stop` or a failure.
    async fn stream_attempt(
        &self,
        api_key: &str,
        call_type: &str,
        body: &[u8],
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> StreamAttempt {
        let idle = self.settings.stream_idle_timeout;
        let failed = |error: ApiError, should_retry: Option<bool>| StreamAttempt {
            outcome: Err(error),
            retry_after: None,
            should_retry,
            delivered_text: false,
        };
        let http = match self.http() {
            Ok(http) => http,
            Err(err) => return failed(err, Some(false)),
        };
        let url = format!("{}/v1/messages", self.settings.base_url.trim_end_matches('/'));
        let request = http
            .post(url)
            .headers(self.headers(api_key, call_type))
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .body(body.to_vec());
        let response = match tokio::time::timeout(idle, request.send()).await {
            Err(_) => return failed(ApiError::Timeout { after: idle }, None),
            Ok(Err(err)) => return failed(self.transport_error(&err), None),
            Ok(Ok(response)) => response,
        };
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let should_retry = should_retry(response.headers());
        if status != 200 {
            let error = match tokio::time::timeout(idle, response.text()).await {
                Err(_) => ApiError::Timeout { after: idle },
                Ok(Err(err)) => self.transport_error(&err),
                Ok(Ok(text)) => ApiError::from_status(status, &text, retry_after),
            };
            return StreamAttempt { outcome: Err(error), retry_after, should_retry, delivered_text: false };
        }
        let mut reply = StreamedText::default();
        let read = self.read_events(response, idle, on_text, &mut reply).await;
        let delivered_text = !reply.text.is_empty();
        let outcome = read.map(|()| reply);
        StreamAttempt { outcome, retry_after, should_retry, delivered_text }
    }

    /// Reads events into `reply` until `message_stop`; text deltas go to `on_text` first.
    async fn read_events(
        &self,
        response: reqwest::Response,
        idle: Duration,
        on_text: &mut (dyn FnMut(&str) + Send),
        reply: &mut StreamedText,
    ) -> Result<(), ApiError> {
        let mut events = SseStream::from_bytes_stream(response.bytes_stream());
        loop {
            let event = match tokio::time::timeout(idle, events.next()).await {
                Err(_) => return Err(ApiError::Timeout { after: idle }),
                Ok(None) => {
                    return Err(ApiError::InvalidResponse {
                        reason: format!(
                            "the stream ended before message_stop, after {} characters of text",
                            reply.text.chars().count()
                        ),
                    });
                }
                Ok(Some(Err(err))) => return Err(self.event_stream_error(err)),
                Ok(Some(Ok(event))) => event,
            };
            let Some(data) = event.data else { continue };
            let parsed = serde_json::from_str::<StreamEvent>(&data).map_err(|err| ApiError::InvalidResponse {
                reason: format!("not a Messages API stream event: {err}"),
            })?;
            match parsed {
                StreamEvent::MessageStart { message } => {
                    reply.input_tokens = message.usage.input_tokens.unwrap_or(0);
                    reply.output_tokens = message.usage.output_tokens.unwrap_or(0);
                }
                StreamEvent::ContentBlockDelta { delta: Delta::TextDelta { text } } if !text.is_empty() => {
                    on_text(&text);
                    reply.text.push_str(&text);
                }
                StreamEvent::MessageDelta { delta, usage } => {
                    reply.stop_reason = delta.stop_reason;
                    // Cumulative counts: the last ones are the message's.
                    reply.input_tokens = usage.input_tokens.unwrap_or(reply.input_tokens);
                    reply.output_tokens = usage.output_tokens.unwrap_or(reply.output_tokens);
                }
                StreamEvent::MessageStop => return Ok(()),
                StreamEvent::Error { error } => return Err(error_event(&error.kind, &data)),
                StreamEvent::ContentBlockDelta { .. } | StreamEvent::Other => {}
            }
        }
    }

    /// A failure of the body (dropped connection, the whole-request timeout) or of its syntax.
    fn event_stream_error(&self, err: sse_stream::Error) -> ApiError {
        match err {
            sse_stream::Error::Body(inner) => match inner.downcast_ref::<reqwest::Error>() {
                Some(err) => self.transport_error(err),
                None => ApiError::Transport { message: inner.to_string() },
            },
            other => ApiError::InvalidResponse { reason: format!("malformed event stream: {other}") },
        }
    }
}

impl ChatRole {
    fn as_str(self) -> &'static str {
        match self {
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
        }
    }
}

/// What one attempt came to, before logging.
struct StreamAttempt {
    outcome: Result<StreamedText, ApiError>,
    retry_after: Option<Duration>,
    should_retry: Option<bool>,
    /// Some text reached `on_text`: retrying would deliver it twice.
    delivered_text: bool,
}

/// Logs an attempt as failed when the call is dropped before the attempt ends: the request
/// was sent, so it still gets its row.
pub(super) struct UnfinishedRow<'a> {
    pub log: &'a (dyn Fn(i64, u64, u64) + Sync),
    pub finished: bool,
}

impl Drop for UnfinishedRow<'_> {
    fn drop(&mut self) {
        if !self.finished {
            (self.log)(-1, 0, 0);
        }
    }
}

/// One `api_call_log` row, as [`ApiClient::call`] writes it: a failure (`latency_ms < 0`) costs nothing.
pub(super) fn log_attempt(
    db: &Db,
    options: &CallOptions<'_>,
    model: &Model,
    latency_ms: i64,
    input_tokens: u64,
    output_tokens: u64,
) {
    let failed = latency_ms < 0;
    let (input_tokens, output_tokens) = if failed { (0, 0) } else { (input_tokens, output_tokens) };
    let row = NewApiCall {
        session_id: options.session_id.map(str::to_owned),
        call_type: options.call_type.to_owned(),
        model: model.id.clone(),
        input_hash: input_hash(options.user_message),
        latency_ms,
        input_tokens: i64::try_from(input_tokens).unwrap_or(i64::MAX),
        output_tokens: i64::try_from(output_tokens).unwrap_or(i64::MAX),
        cost_estimate: if failed { 0.0 } else { model.price.cost(input_tokens, output_tokens) },
    };
    if let Err(err) = db.log_api_call(row) {
        tracing::error!(call_type = options.call_type, "cannot log the API call: {err}");
    }
}

/// The server's `x-should-retry`, when it sent one.
fn should_retry(headers: &HeaderMap) -> Option<bool> {
    headers.get("x-should-retry").and_then(|v| match v.as_bytes() {
        b"true" => Some(true),
        b"false" => Some(false),
        _ => None,
    })
}

/// An `error` event is classified by the HTTP status the API gives its error type outside a
/// stream; an unknown type counts as a server failure.
fn error_event(kind: &str, data: &str) -> ApiError {
    let status = match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    };
    ApiError::from_status(status, data, None)
}

#[derive(Serialize)]
struct StreamRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    system: &'a str,
    messages: Vec<RequestMessage<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [ServerTool],
}

/// The events of a streamed message; `ping`, block starts and stops change nothing here.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: StartedMessage,
    },
    ContentBlockDelta {
        delta: Delta,
    },
    MessageDelta {
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: StreamUsage,
    },
    MessageStop,
    Error {
        error: ErrorBody,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartedMessage {
    #[serde(default)]
    usage: StreamUsage,
}

#[derive(Deserialize, Default)]
struct StreamUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    TextDelta {
        text: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(rename = "type")]
    kind: String,
}

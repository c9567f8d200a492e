//! The Claude API client (spec Story 7, D68, D83): the only way Paige calls a model.
//!
//! [`ApiClient::call`] posts one structured-output request to the Messages API, turns the
//! answer into the caller's Rust type, and writes one `api_call_log` row per HTTP attempt —
//! success or failure — before it returns. Transport failures are retried like the official
//! SDKs do; [`ApiClient::call_with_retry`] adds the one extra attempt of D68 on top. A turn
//! the API pauses (`stop_reason: "pause_turn"`, a long web search) is sent back to be
//! continued, at most [`MAX_PAUSE_CONTINUATIONS`] times. Each call, all its attempts and
//! continuations together, ends by its call type's deadline (`deadline.rs`).
//! [`ApiClient::stream_text`] (`stream.rs`) streams a plain-text reply delta by delta.

mod answer;
mod deadline;
mod error;
mod schema;
mod stream;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::db::Db;

pub use crate::models::{HAIKU_MODEL, Model, ModelMap, ModelTier, PRICES, Price, SONNET_MODEL, UnknownModel, price_of};
use answer::{Turn, Usage, parse_answer};
pub use deadline::ModelDeadlines;
pub use error::ApiError;
pub use schema::structured_schema;
pub use stream::{ChatMessage, ChatRole, StreamedText};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Default `max_tokens` (FR-092).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// Tells the fake Messages API in tests which call this is; the real API ignores it.
pub const CALL_TYPE_HEADER: &str = "x-paige-call-type";
/// How often one call sends a paused turn (`pause_turn`) back to be continued.
pub const MAX_PAUSE_CONTINUATIONS: usize = 3;
/// The most web searches one request may make (the tool's `max_uses`).
pub const WEB_SEARCH_MAX_USES: u32 = 5;

/// A response type the model answers in: deserializable, with its structured-output schema.
///
/// The prompt modules implement it for their response types; the schema is generated once
/// from the Rust type by [`structured_schema`].
pub trait StructuredOutput: DeserializeOwned {
    fn output_schema() -> &'static Value;
}

/// A server-side tool the API runs itself (e.g. web search, D83); passed through as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerTool {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    /// The most times the model may use the tool in one request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_uses: Option<u32>,
}

impl ServerTool {
    /// `{"type":"web_search_20250305","name":"web_search","max_uses":5}`.
    pub fn web_search() -> ServerTool {
        ServerTool {
            kind: "web_search_20250305".into(),
            name: "web_search".into(),
            max_uses: Some(WEB_SEARCH_MAX_USES),
        }
    }
}

/// A structured answer and the URLs of the web-search results the API returned on the way
/// (server tools, D83): what the answer's links may be checked against (SC-086).
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    pub answer: T,
    pub search_urls: Vec<String>,
}

/// One model call (FR-083). The response type is the type parameter of [`ApiClient::call`].
#[derive(Debug, Clone)]
pub struct CallOptions<'a> {
    /// Logged as `call_type`, e.g. `coach_agent`, `observer_triage`.
    pub call_type: &'a str,
    pub model: ModelTier,
    pub system_prompt: &'a str,
    pub user_message: &'a str,
    pub session_id: Option<&'a str>,
    /// [`DEFAULT_MAX_TOKENS`] when `None`.
    pub max_tokens: Option<u32>,
    pub tools: &'a [ServerTool],
}

impl<'a> CallOptions<'a> {
    /// Options with no session, the default `max_tokens` and no tools.
    pub fn new(call_type: &'a str, model: ModelTier, system_prompt: &'a str, user_message: &'a str) -> CallOptions<'a> {
        CallOptions { call_type, model, system_prompt, user_message, session_id: None, max_tokens: None, tools: &[] }
    }
}

/// How the client reaches the API and how patiently it retries.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    /// `None` runs Paige without model features: every call fails with [`ApiError::NotConfigured`].
    pub api_key: Option<String>,
    pub base_url: String,
    pub models: ModelMap,
    /// Transport-level retries after the first attempt (the SDKs' default: 2).
    pub max_retries: u32,
    /// Backoff before retry `n` (0-based) is `base × 2ⁿ`, capped at `retry_max_delay`, minus up to 25 % jitter.
    pub retry_base_delay: Duration,
    pub retry_max_delay: Duration,
    /// A `retry-after` longer than this is ignored in favour of the backoff.
    pub max_retry_after: Duration,
    /// D68: the pause before [`ApiClient::call_with_retry`]'s extra attempt.
    pub transient_retry_delay: Duration,
    /// Per attempt, whole request and response.
    pub timeout: Duration,
    /// Per call, every attempt and continuation included, by call type.
    pub deadlines: ModelDeadlines,
    /// A streamed reply ([`ApiClient::stream_text`]) with no event for this long has stalled.
    pub stream_idle_timeout: Duration,
}

impl ApiSettings {
    /// The SDK defaults against the real API.
    pub fn new(api_key: Option<String>) -> ApiSettings {
        ApiSettings {
            api_key,
            base_url: DEFAULT_BASE_URL.into(),
            models: ModelMap::default(),
            max_retries: 2,
            retry_base_delay: Duration::from_millis(500),
            retry_max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
            transient_retry_delay: Duration::from_secs(1),
            timeout: Duration::from_secs(600),
            deadlines: ModelDeadlines::default(),
            stream_idle_timeout: Duration::from_secs(60),
        }
    }
}

/// The Messages API client: one connection pool for the app's lifetime (FR-093). Cheap to clone.
#[derive(Clone)]
pub struct ApiClient {
    /// Built on first use: loading the system's TLS roots costs tens of milliseconds, which
    /// start-up should not pay before any model call is made.
    http: Arc<std::sync::OnceLock<reqwest::Client>>,
    settings: Arc<ApiSettings>,
    /// The key in use: `settings.api_key` at first, replaced by [`ApiClient::set_api_key`]
    /// when the user saves another one in the desktop app's settings.
    api_key: Arc<std::sync::RwLock<Option<String>>>,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("base_url", &self.settings.base_url)
            .field("api_key", &self.api_key().map(|_| "<redacted>"))
            .finish()
    }
}

/// What one HTTP attempt came to, before logging.
struct Attempt<T> {
    outcome: Result<(Turn<T>, Usage), ApiError>,
    /// The server's `retry-after` / `retry-after-ms`, when it sent one.
    retry_after: Option<Duration>,
    /// The server's `x-should-retry`, when it sent one.
    should_retry: Option<bool>,
}

impl ApiClient {
    pub fn new(settings: ApiSettings) -> Result<ApiClient, ApiError> {
        let api_key = Arc::new(std::sync::RwLock::new(settings.api_key.clone()));
        Ok(ApiClient { http: Arc::new(std::sync::OnceLock::new()), settings: Arc::new(settings), api_key })
    }

    /// The one connection pool, created on the first call.
    fn http(&self) -> Result<&reqwest::Client, ApiError> {
        if let Some(client) = self.http.get() {
            return Ok(client);
        }
        let client = reqwest::Client::builder()
            .timeout(self.settings.timeout)
            .build()
            .map_err(|err| ApiError::Transport { message: format!("cannot create the HTTP client: {err}") })?;
        Ok(self.http.get_or_init(|| client))
    }

    pub fn settings(&self) -> &ApiSettings {
        &self.settings
    }

    pub fn is_configured(&self) -> bool {
        self.api_key().is_some()
    }

    /// Replaces the key for every later call; `None` (or an empty key) turns model features off.
    pub fn set_api_key(&self, key: Option<String>) {
        let key = key.filter(|key| !key.trim().is_empty());
        *self.api_key.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = key;
    }

    fn api_key(&self) -> Option<String> {
        self.api_key.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// Calls the model and returns its structured answer as `T` (Scenarios 7.1–7.13).
    ///
    /// Retries transient failures (408, 409, 429, 5xx, connection errors, timeouts) up to
    /// `max_retries` times with exponential backoff and jitter, honouring `retry-after`;
    /// never retries 401/403, refusals, truncation or invalid answers. Every attempt writes
    /// one `api_call_log` row before the next step: a success its latency, tokens and cost;
    /// a failure `latency_ms = -1` and zeros.
    pub async fn call<T: StructuredOutput>(&self, db: &Db, options: &CallOptions<'_>) -> Result<T, ApiError> {
        self.call_sourced(db, options).await.map(|sourced| sourced.answer)
    }

    /// [`ApiClient::call`], keeping the URLs of the `web_search_tool_result` blocks that came
    /// before the answer.
    pub async fn call_sourced<T: StructuredOutput>(
        &self,
        db: &Db,
        options: &CallOptions<'_>,
    ) -> Result<Sourced<T>, ApiError> {
        self.within_deadline(options.call_type, self.call_continued(db, options)).await
    }

    /// D68: [`ApiClient::call`], and once more after `transient_retry_delay` if it failed
    /// transiently (network, 429 or 5xx after the transport retries). Each attempt is logged;
    /// one deadline covers both.
    pub async fn call_with_retry<T: StructuredOutput>(
        &self,
        db: &Db,
        options: &CallOptions<'_>,
    ) -> Result<T, ApiError> {
        self.call_with_retry_sourced(db, options).await.map(|sourced| sourced.answer)
    }

    /// [`ApiClient::call_with_retry`] with the web-search result URLs ([`Sourced`]).
    pub async fn call_with_retry_sourced<T: StructuredOutput>(
        &self,
        db: &Db,
        options: &CallOptions<'_>,
    ) -> Result<Sourced<T>, ApiError> {
        let call = async {
            match self.call_continued(db, options).await {
                Err(error) if error.is_transient() => {
                    tracing::warn!(call_type = options.call_type, "transient failure, one more try: {error}");
                    tokio::time::sleep(self.settings.transient_retry_delay).await;
                    self.call_continued(db, options).await
                }
                result => result,
            }
        };
        self.within_deadline(options.call_type, call).await
    }

    /// `call`, or [`ApiError::Deadline`] once the call type's deadline has passed. Dropping
    /// `call` then logs its attempt in flight as failed.
    async fn within_deadline<R>(
        &self,
        call_type: &str,
        call: impl Future<Output = Result<R, ApiError>>,
    ) -> Result<R, ApiError> {
        let (after, var) = self.settings.deadlines.for_call(call_type);
        match tokio::time::timeout(after, call).await {
            Ok(result) => result,
            Err(_) => {
                tracing::warn!(call_type, ?after, "the model call's deadline passed");
                Err(ApiError::Deadline { call_type: call_type.to_owned(), after, var })
            }
        }
    }

    /// The request, then the paused turn sent back until the model ends it (`pause_turn`,
    /// as the API documents: the paused content as the assistant's turn, nothing added).
    async fn call_continued<T: StructuredOutput>(
        &self,
        db: &Db,
        options: &CallOptions<'_>,
    ) -> Result<Sourced<T>, ApiError> {
        let model = self.settings.models.resolve(options.model);
        let log = |latency_ms: i64, input_tokens: u64, output_tokens: u64| {
            stream::log_attempt(db, options, model, latency_ms, input_tokens, output_tokens);
        };
        let Some(api_key) = self.api_key() else {
            log(-1, 0, 0);
            return Err(ApiError::NotConfigured);
        };
        let max_tokens = options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        let mut messages = vec![json!({ "role": "user", "content": options.user_message })];
        let mut search_urls = Vec::new();
        let mut continued = 0;
        loop {
            let body = RequestBody {
                model: &model.id,
                max_tokens,
                system: options.system_prompt,
                messages: &messages,
                output_config: OutputConfig {
                    format: OutputFormat { kind: "json_schema", schema: T::output_schema() },
                },
                tools: options.tools,
            };
            let body = match encode(&body) {
                Ok(body) => body,
                Err(err) => {
                    log(-1, 0, 0);
                    return Err(err);
                }
            };
            match self.retried::<T>(&api_key, options.call_type, &body, max_tokens, &log).await? {
                Turn::Answer(sourced) => {
                    search_urls.extend(sourced.search_urls);
                    return Ok(Sourced { answer: sourced.answer, search_urls });
                }
                Turn::Paused { content, search_urls: found } => {
                    search_urls.extend(found);
                    if continued == MAX_PAUSE_CONTINUATIONS {
                        return Err(ApiError::InvalidResponse {
                            reason: format!(
                                "the model paused its turn (pause_turn) {} times; Paige stopped continuing it",
                                continued + 1
                            ),
                        });
                    }
                    continued += 1;
                    tracing::info!(call_type = options.call_type, continued, "continuing a paused turn");
                    // One assistant turn, however often it paused: its blocks so far, in order.
                    match messages.last_mut().and_then(|last| last["content"].as_array_mut()) {
                        Some(blocks) if continued > 1 => blocks.extend(content),
                        _ => messages.push(json!({ "role": "assistant", "content": content })),
                    }
                }
            }
        }
    }

    /// One request, retried on transient failures (the SDKs' schedule); every attempt logged,
    /// one dropped mid-flight too.
    async fn retried<T: StructuredOutput>(
        &self,
        api_key: &str,
        call_type: &str,
        body: &[u8],
        max_tokens: u32,
        log: &(dyn Fn(i64, u64, u64) + Sync),
    ) -> Result<Turn<T>, ApiError> {
        let mut retry = 0;
        loop {
            let started = Instant::now();
            let mut unfinished = stream::UnfinishedRow { log, finished: false };
            let attempt = self.attempt::<T>(api_key, call_type, body, max_tokens).await;
            unfinished.finished = true;
            match attempt.outcome {
                Ok((turn, usage)) => {
                    log(latency_ms(started.elapsed()), usage.input_tokens, usage.output_tokens);
                    return Ok(turn);
                }
                Err(error) => {
                    log(-1, 0, 0);
                    let retryable = attempt.should_retry.unwrap_or_else(|| error.is_transient());
                    if !retryable || retry >= self.settings.max_retries {
                        return Err(error);
                    }
                    let delay = self.retry_delay(retry, attempt.retry_after);
                    tracing::warn!(call_type, attempt = retry + 1, ?delay, "retrying: {error}");
                    tokio::time::sleep(delay).await;
                    retry += 1;
                }
            }
        }
    }

    /// Checks the key with the cheapest authenticated request there is: listing one model.
    /// No model runs and nothing is billed, so nothing is logged to `api_call_log`.
    pub async fn check_key(&self) -> Result<(), ApiError> {
        let api_key = self.api_key().ok_or(ApiError::NotConfigured)?;
        let url = format!("{}/v1/models?limit=1", self.settings.base_url.trim_end_matches('/'));
        let response = self
            .http()?
            .get(url)
            .headers(self.headers(&api_key, "doctor"))
            .send()
            .await
            .map_err(|err| self.transport_error(&err))?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|err| self.transport_error(&err))?;
        if status == 200 { Ok(()) } else { Err(ApiError::from_status(status, &text, None)) }
    }

    async fn attempt<T: StructuredOutput>(
        &self,
        api_key: &str,
        call_type: &str,
        body: &[u8],
        max_tokens: u32,
    ) -> Attempt<T> {
        let url = format!("{}/v1/messages", self.settings.base_url.trim_end_matches('/'));
        let http = match self.http() {
            Ok(http) => http,
            Err(err) => return Attempt { outcome: Err(err), retry_after: None, should_retry: Some(false) },
        };
        let sent = http.post(url).headers(self.headers(api_key, call_type)).body(body.to_vec()).send().await;
        let response = match sent {
            Ok(response) => response,
            Err(err) => {
                return Attempt { outcome: Err(self.transport_error(&err)), retry_after: None, should_retry: None };
            }
        };
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let should_retry = response.headers().get("x-should-retry").and_then(|v| match v.as_bytes() {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        });
        let outcome = match response.bytes().await {
            Err(err) => Err(self.transport_error(&err)),
            Ok(bytes) if status != 200 => {
                Err(ApiError::from_status(status, &String::from_utf8_lossy(&bytes), retry_after))
            }
            Ok(bytes) => parse_answer::<T>(&bytes, max_tokens),
        };
        Attempt { outcome, retry_after, should_retry }
    }

    fn headers(&self, api_key: &str, call_type: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Ok(mut key) = HeaderValue::from_str(api_key) {
            key.set_sensitive(true);
            headers.insert("x-api-key", key);
        }
        headers.insert("anthropic-version", HeaderValue::from_static(ANTHROPIC_VERSION));
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        if let Ok(call_type) = HeaderValue::from_str(call_type) {
            headers.insert(CALL_TYPE_HEADER, call_type);
        }
        headers
    }

    fn transport_error(&self, err: &reqwest::Error) -> ApiError {
        if err.is_timeout() {
            ApiError::Timeout { after: self.settings.timeout }
        } else {
            // The chain carries the useful part ("connection refused", "connection closed").
            let mut message = err.to_string();
            let mut source = std::error::Error::source(err);
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            ApiError::Transport { message }
        }
    }

    /// The SDKs' schedule: `retry-after` when the server sent a sensible one, else
    /// `base × 2ⁿ` capped at the maximum, minus up to 25 % random jitter.
    fn retry_delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(delay) = retry_after.filter(|d| *d <= self.settings.max_retry_after) {
            return delay;
        }
        let backoff = self.settings.retry_base_delay.saturating_mul(2u32.saturating_pow(retry));
        let backoff = backoff.min(self.settings.retry_max_delay);
        let jitter = f64::from(getrandom::u32().unwrap_or(0)) / f64::from(u32::MAX) * 0.25;
        backoff.mul_f64(1.0 - jitter)
    }
}

/// First 16 hex characters of the SHA-256 of the user message (FR-088).
pub fn input_hash(user_message: &str) -> String {
    let digest = Sha256::digest(user_message.as_bytes());
    hex::encode(&digest[..8])
}

/// Whole milliseconds, rounded up so that a completed call never logs 0 (or the failure's -1).
fn latency_ms(elapsed: Duration) -> i64 {
    i64::try_from(elapsed.as_micros().div_ceil(1000)).unwrap_or(i64::MAX).max(1)
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<f64>().ok());
    let delay = match (get("retry-after-ms"), get("retry-after")) {
        (Some(ms), _) => ms / 1000.0,
        (None, Some(secs)) => secs,
        (None, None) => return None,
    };
    (delay.is_finite() && delay >= 0.0).then(|| Duration::from_secs_f64(delay))
}

#[derive(Serialize)]
struct RequestBody<'a> {
    model: &'a str,
    max_tokens: u32,
    system: &'a str,
    messages: &'a [Value],
    output_config: OutputConfig<'a>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [ServerTool],
}

#[derive(Serialize)]
struct RequestMessage<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Serialize)]
struct OutputConfig<'a> {
    format: OutputFormat<'a>,
}

#[derive(Serialize)]
struct OutputFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    schema: &'a Value,
}

/// A request body as JSON, or why it cannot be sent.
pub(crate) fn encode(body: &impl serde::Serialize) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(body)
        .map_err(|err| ApiError::InvalidRequest { status: None, message: format!("cannot encode the request: {err}") })
}

//! A local fake of the Anthropic Messages API for tests: real HTTP/1.1 on `127.0.0.1:0`.
//!
//! Each test starts its own [`FakeAnthropic`], scripts replies with [`FakeAnthropic::once`] and
//! [`FakeAnthropic::always`], points the real client at [`FakeAnthropic::base_url`], and then
//! asserts on [`FakeAnthropic::requests`].
//!
//! Scripting: rules are tried in the order they were added; the first whose [`Matcher`] accepts
//! the request answers it. A `once` rule is used up by its first match, so several `once` rules
//! with the same matcher answer successive calls in order (429, then success). An `always` rule
//! answers every match. A request no rule matches gets a 400 `invalid_request_error` naming its
//! call type, so a forgotten script fails fast instead of being retried.
//!
//! The call type is visible to the fake through the [`CALL_TYPE_HEADER`] request header that
//! Paige's client sends (the real API ignores it); [`Matcher::SystemContains`] matches on the
//! system prompt instead.
//!
//! A [`Reply`] can be a message (answered as JSON, or as SSE events when the request has
//! `"stream": true`), an HTTP error in the API's error shape (401, 429 with `retry-after`, 500,
//! 529, …), a dropped connection, or any of these after a delay.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// The request header carrying Paige's call type (`coach_agent`, `observer_triage`, …).
pub const CALL_TYPE_HEADER: &str = "x-paige-call-type";

/// Usage reported by a scripted message unless [`Reply::with_usage`] says otherwise.
pub const DEFAULT_INPUT_TOKENS: u64 = 100;
pub const DEFAULT_OUTPUT_TOKENS: u64 = 50;

/// A running fake server. Dropping it stops the server and closes its connections.
pub struct FakeAnthropic {
    addr: SocketAddr,
    state: Arc<State>,
    stop: CancellationToken,
}

/// Which requests a rule answers.
#[derive(Clone)]
pub enum Matcher {
    Any,
    /// The [`CALL_TYPE_HEADER`] equals this.
    CallType(String),
    /// The request's `system` prompt contains this text.
    SystemContains(String),
    /// The request's `model` equals this.
    Model(String),
    Custom(Arc<dyn Fn(&RecordedRequest) -> bool + Send + Sync>),
}

/// What the fake answers.
#[derive(Clone, Debug)]
pub enum Reply {
    Message(MessageReply),
    Error {
        status: u16,
        error_type: String,
        message: String,
        headers: Vec<(String, String)>,
    },
    /// Reads the request, then closes the connection without answering.
    Drop,
    /// Waits, then answers.
    Delay(Duration, Box<Reply>),
}

#[derive(Clone, Debug)]
pub struct MessageReply {
    /// Content blocks in API shape (`{"type":"text","text":...}`, `server_tool_use`, …).
    pub content: Vec<Value>,
    pub stop_reason: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The `model` to report; the request's model when `None`.
    pub model: Option<String>,
}

/// One request as the fake received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::Null` when empty or not JSON).
    pub body: Value,
}

impl FakeAnthropic {
    /// Binds `127.0.0.1:0` and serves until dropped. Must be called inside a Tokio runtime.
    pub async fn start() -> std::io::Result<FakeAnthropic> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State::default());
        let stop = CancellationToken::new();
        tokio::spawn(accept_loop(listener, state.clone(), stop.clone()));
        Ok(FakeAnthropic { addr, state, stop })
    }

    /// `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// From now on, a request whose `x-api-key` is not `key` gets 401 `authentication_error`.
    pub fn require_api_key(&self, key: &str) {
        *lock(&self.state.api_key) = Some(key.to_owned());
    }

    /// Answers the next matching request with `reply`, then this rule is used up.
    pub fn once(&self, matcher: Matcher, reply: Reply) {
        lock(&self.state.rules).push(Rule { matcher, reply, once: true, used: false });
    }

    /// Answers every matching request with `reply`.
    pub fn always(&self, matcher: Matcher, reply: Reply) {
        lock(&self.state.rules).push(Rule { matcher, reply, once: false, used: false });
    }

    /// Every request received so far (any path), oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state.requests).clone()
    }

    /// The `POST /v1/messages` requests received so far, oldest first.
    pub fn message_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(|r| r.method == "POST" && r.path == "/v1/messages").collect()
    }
}

impl Drop for FakeAnthropic {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Matcher {
    pub fn call_type(call_type: &str) -> Matcher {
        Matcher::CallType(call_type.to_owned())
    }

    pub fn system_contains(text: &str) -> Matcher {
        Matcher::SystemContains(text.to_owned())
    }

    pub fn custom(f: impl Fn(&RecordedRequest) -> bool + Send + Sync + 'static) -> Matcher {
        Matcher::Custom(Arc::new(f))
    }

    pub fn matches(&self, request: &RecordedRequest) -> bool {
        match self {
            Matcher::Any => true,
            Matcher::CallType(want) => request.call_type() == Some(want.as_str()),
            Matcher::SystemContains(text) => request.system().is_some_and(|s| s.contains(text.as_str())),
            Matcher::Model(model) => request.body.get("model").and_then(Value::as_str) == Some(model.as_str()),
            Matcher::Custom(f) => f(request),
        }
    }
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Matcher::Any => write!(f, "Any"),
            Matcher::CallType(t) => write!(f, "CallType({t:?})"),
            Matcher::SystemContains(t) => write!(f, "SystemContains({t:?})"),
            Matcher::Model(m) => write!(f, "Model({m:?})"),
            Matcher::Custom(_) => write!(f, "Custom(..)"),
        }
    }
}

impl Reply {
    /// A successful structured-output answer: one text block holding `value` as JSON.
    pub fn json(value: &Value) -> Reply {
        Reply::text(&value.to_string())
    }

    /// A successful answer with one text block.
    pub fn text(text: &str) -> Reply {
        Reply::message(vec![json!({"type": "text", "text": text})], "end_turn")
    }

    /// `stop_reason: "refusal"` with the model's refusal text.
    pub fn refusal(text: &str) -> Reply {
        Reply::message(vec![json!({"type": "text", "text": text})], "refusal")
    }

    /// `stop_reason: "max_tokens"` with a truncated answer.
    pub fn max_tokens(partial: &str) -> Reply {
        Reply::message(vec![json!({"type": "text", "text": partial})], "max_tokens")
    }

    pub fn message(content: Vec<Value>, stop_reason: &str) -> Reply {
        Reply::Message(MessageReply {
            content,
            stop_reason: stop_reason.to_owned(),
            input_tokens: DEFAULT_INPUT_TOKENS,
            output_tokens: DEFAULT_OUTPUT_TOKENS,
            model: None,
        })
    }

    /// An HTTP error in the API's shape: `{"type":"error","error":{"type":...,"message":...}}`.
    pub fn error(status: u16, error_type: &str, message: &str) -> Reply {
        Reply::Error { status, error_type: error_type.to_owned(), message: message.to_owned(), headers: Vec::new() }
    }

    /// 401 `authentication_error`.
    pub fn unauthorized() -> Reply {
        Reply::error(401, "authentication_error", "invalid x-api-key")
    }

    /// 429 `rate_limit_error` with a `retry-after` header in whole seconds.
    pub fn rate_limited(retry_after_secs: u64) -> Reply {
        Reply::error(429, "rate_limit_error", "rate limited").with_header("retry-after", &retry_after_secs.to_string())
    }

    /// 500 `api_error`.
    pub fn server_error() -> Reply {
        Reply::error(500, "api_error", "internal server error")
    }

    /// 529 `overloaded_error`.
    pub fn overloaded() -> Reply {
        Reply::error(529, "overloaded_error", "overloaded")
    }

    /// Closes the connection without an answer.
    pub fn dropped() -> Reply {
        Reply::Drop
    }

    /// The same reply after `delay`.
    pub fn delayed(self, delay: Duration) -> Reply {
        Reply::Delay(delay, Box::new(self))
    }

    /// Sets the usage of a message reply.
    pub fn with_usage(self, input_tokens: u64, output_tokens: u64) -> Reply {
        self.map_message(|m| {
            m.input_tokens = input_tokens;
            m.output_tokens = output_tokens;
        })
    }

    /// Reports `model` instead of echoing the request's.
    pub fn with_model(self, model: &str) -> Reply {
        self.map_message(|m| m.model = Some(model.to_owned()))
    }

    /// Puts `blocks` (e.g. [`web_search_blocks`]) before the message's own content.
    pub fn with_blocks_before(self, blocks: Vec<Value>) -> Reply {
        self.map_message(|m| {
            let mut content = blocks.clone();
            content.append(&mut m.content);
            m.content = content;
        })
    }

    /// Adds a response header to an error reply.
    pub fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Error { status, error_type, message, mut headers } => {
                headers.push((name.to_owned(), value.to_owned()));
                Reply::Error { status, error_type, message, headers }
            }
            Reply::Delay(d, inner) => Reply::Delay(d, Box::new(inner.with_header(name, value))),
            other => other,
        }
    }

    fn map_message(self, f: impl FnOnce(&mut MessageReply)) -> Reply {
        match self {
            Reply::Message(mut m) => {
                f(&mut m);
                Reply::Message(m)
            }
            Reply::Delay(d, inner) => Reply::Delay(d, Box::new(inner.map_message(f))),
            other => other,
        }
    }
}

/// A `server_tool_use` block and its `web_search_tool_result`, as a web-search turn returns
/// before the final text block.
pub fn web_search_blocks(query: &str) -> Vec<Value> {
    vec![
        json!({"type": "server_tool_use", "id": "srvtoolu_fake_1", "name": "web_search", "input": {"query": query}}),
        json!({
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_fake_1",
            "content": [{
                "type": "web_search_result",
                "url": "https://doc.rust-lang.org/book/",
                "title": "The Rust Programming Language",
                "encrypted_content": "fake",
                "page_age": null
            }]
        }),
        json!({"type": "text", "text": "I found some resources."}),
    ]
}

impl RecordedRequest {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn call_type(&self) -> Option<&str> {
        self.header(CALL_TYPE_HEADER)
    }

    /// The `system` prompt, whether sent as a string or as text blocks (first block).
    pub fn system(&self) -> Option<&str> {
        match self.body.get("system")? {
            Value::String(s) => Some(s),
            Value::Array(blocks) => blocks.first()?.get("text")?.as_str(),
            _ => None,
        }
    }

    /// The text of the first user message.
    pub fn user_message(&self) -> Option<&str> {
        let content = self.body.get("messages")?.get(0)?.get("content")?;
        match content {
            Value::String(s) => Some(s),
            Value::Array(blocks) => blocks.first()?.get("text")?.as_str(),
            _ => None,
        }
    }

    pub fn is_stream(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool) == Some(true)
    }
}

// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct State {
    rules: Mutex<Vec<Rule>>,
    requests: Mutex<Vec<RecordedRequest>>,
    api_key: Mutex<Option<String>>,
    message_ids: AtomicU64,
}

struct Rule {
    matcher: Matcher,
    reply: Reply,
    once: bool,
    used: bool,
}

/// A poisoned lock only means another test thread panicked; the data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

const MAX_HEAD: usize = 64 * 1024;

async fn accept_loop(listener: TcpListener, state: Arc<State>, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let (state, stop) = (state.clone(), stop.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        _ = stop.cancelled() => {}
                        result = serve_connection(stream, &state) => {
                            if let Err(err) = result {
                                tracing::debug!("fake-anthropic: connection ended: {err}");
                            }
                        }
                    }
                });
            }
            Err(err) => tracing::warn!("fake-anthropic: accept failed: {err}"),
        }
    }
}

/// Serves HTTP/1.1 requests on one keep-alive connection until the client closes it.
async fn serve_connection(stream: TcpStream, state: &State) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    loop {
        let Some(request) = read_request(&mut read).await? else { return Ok(()) };
        lock(&state.requests).push(request.clone());
        let mut reply = match answer(state, &request) {
            Answer::Reply(reply) => reply,
            Answer::Models => {
                write_json(&mut write, 200, &models_json(), &[]).await?;
                continue;
            }
        };
        while let Reply::Delay(delay, inner) = reply {
            tokio::time::sleep(delay).await;
            reply = *inner;
        }
        match reply {
            Reply::Drop => return Ok(()),
            Reply::Error { status, error_type, message, headers } => {
                let body = json!({"type": "error", "error": {"type": error_type, "message": message}});
                write_json(&mut write, status, &body, &headers).await?;
            }
            Reply::Message(message) => {
                let id = state.message_ids.fetch_add(1, Ordering::Relaxed) + 1;
                let model = message
                    .model
                    .clone()
                    .or_else(|| request.body.get("model").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_default();
                if request.is_stream() {
                    write_sse(&mut write, id, &model, &message).await?;
                } else {
                    write_json(&mut write, 200, &message_json(id, &model, &message), &[]).await?;
                }
            }
            Reply::Delay(..) => unreachable!("delays are unwrapped above"),
        }
    }
}

/// Decides the reply: built-in checks (API key, version header, routes), then the script.
fn answer(state: &State, request: &RecordedRequest) -> Answer {
    if let Some(key) = lock(&state.api_key).as_deref()
        && request.header("x-api-key") != Some(key)
    {
        return Answer::Reply(Reply::unauthorized());
    }
    if request.header("anthropic-version").is_none() {
        return Answer::Reply(Reply::error(400, "invalid_request_error", "anthropic-version header is required"));
    }
    match (request.method.as_str(), request.path.split('?').next().unwrap_or_default()) {
        ("POST", "/v1/messages") => {}
        ("GET", "/v1/models") => return Answer::Models,
        (method, path) => {
            return Answer::Reply(Reply::error(404, "not_found_error", &format!("no route for {method} {path}")));
        }
    }
    let mut rules = lock(&state.rules);
    Answer::Reply(match rules.iter_mut().find(|rule| !(rule.once && rule.used) && rule.matcher.matches(request)) {
        Some(rule) => {
            rule.used = true;
            rule.reply.clone()
        }
        None => Reply::error(
            400,
            "invalid_request_error",
            &format!("fake-anthropic: no scripted reply for call type {:?}", request.call_type().unwrap_or("<none>")),
        ),
    })
}

enum Answer {
    Reply(Reply),
    /// `GET /v1/models`: a one-page list (what `paige doctor` asks to check the key).
    Models,
}

fn models_json() -> Value {
    json!({
        "data": [{"type": "model", "id": "claude-haiku-4-5-20251001", "display_name": "Claude Haiku 4.5",
                  "created_at": "2025-10-01T00:00:00Z"}],
        "has_more": false, "first_id": "claude-haiku-4-5-20251001", "last_id": "claude-haiku-4-5-20251001"
    })
}

fn message_json(id: u64, model: &str, message: &MessageReply) -> Value {
    json!({
        "id": format!("msg_fake_{id}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": message.content,
        "stop_reason": message.stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": message.input_tokens,
            "output_tokens": message.output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0
        }
    })
}

async fn read_request(
    read: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
) -> std::io::Result<Option<RecordedRequest>> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = read.read_until(b'\n', &mut line).await?;
        if n == 0 {
            // Closed between requests is normal; closed mid-head is not worth reporting.
            return Ok(None);
        }
        if line == b"\r\n" || line == b"\n" {
            if head.is_empty() {
                continue;
            }
            break;
        }
        head.push(String::from_utf8_lossy(&line).trim_end().to_owned());
        if head.iter().map(String::len).sum::<usize>() > MAX_HEAD {
            return Err(std::io::Error::other("request head too large"));
        }
    }
    let mut parts = head[0].split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = head[1..]
        .iter()
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length =
        headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse::<usize>().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    read.read_exact(&mut body).await?;
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok(Some(RecordedRequest { method, path, headers, body }))
}

async fn write_json(
    write: &mut (impl AsyncWriteExt + Unpin),
    status: u16,
    body: &Value,
    extra: &[(String, String)],
) -> std::io::Result<()> {
    let body = body.to_string();
    let mut out = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nrequest-id: req_fake\r\n",
        reason(status),
        body.len()
    );
    for (k, v) in extra {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&body);
    write.write_all(out.as_bytes()).await?;
    write.flush().await
}

/// The Messages API's streaming shape: message_start, ping, per block start/deltas/stop,
/// message_delta (stop_reason, output usage), message_stop — in chunked transfer encoding.
async fn write_sse(
    write: &mut (impl AsyncWriteExt + Unpin),
    id: u64,
    model: &str,
    message: &MessageReply,
) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                transfer-encoding: chunked\r\nrequest-id: req_fake\r\n\r\n";
    write.write_all(head.as_bytes()).await?;
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {
                "id": format!("msg_fake_{id}"), "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": message.input_tokens, "output_tokens": 1}
            }}),
        ),
        ("ping", json!({"type": "ping"})),
    ];
    for (index, block) in message.content.iter().enumerate() {
        let text = block.get("text").and_then(Value::as_str).filter(|_| block.get("type") == Some(&json!("text")));
        let start = match text {
            Some(_) => json!({"type": "text", "text": ""}),
            None => block.clone(),
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        if let Some(text) = text {
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(16) {
                let piece: String = piece.iter().collect();
                events.push((
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
                ));
            }
        }
        events.push(("content_block_stop", json!({"type": "content_block_stop", "index": index})));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": message.stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": message.output_tokens}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    for (name, data) in events {
        let event = format!("event: {name}\ndata: {data}\n\n");
        write.write_all(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes()).await?;
        write.flush().await?;
    }
    write.write_all(b"0\r\n\r\n").await?;
    write.flush().await
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

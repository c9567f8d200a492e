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
//! 529, …), a dropped connection, or any of these after a delay (a long wait for the first
//! byte). A streamed message can be shaped further ([`StreamScript`]): its exact text deltas,
//! a pause between them, and an end other than `message_stop` (cut off, an `error` event,
//! silence); a plain answer that is to stall sends half its body, then nothing more.
//! [`Reply::pause_turn`] is a web-search turn the API paused, as the real API pauses long
//! ones: the client is to send it back as the assistant's turn to have it continued.

mod server;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use server::{State, accept_loop};

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
    /// Made from the request when it arrives: a fake that can answer only with what the
    /// request actually carries (see [`Reply::computed`]).
    Computed(Responder),
}

/// A function from the request to the reply ([`Reply::Computed`]).
#[derive(Clone)]
pub struct Responder(pub Arc<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>);

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder(..)")
    }
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
    /// How a `"stream": true` request gets it; a plain request ignores it.
    pub stream: StreamScript,
}

/// How a message is streamed: which text deltas, how fast, and how the stream ends.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamScript {
    /// The pieces a text block is sent in when they add up to its text (see
    /// [`Reply::text_deltas`]); otherwise 16-character pieces.
    pub text_deltas: Option<Vec<String>>,
    /// Waited before every text delta but the first, so a client can be seen to get the
    /// first deltas before the stream ends.
    pub delta_pause: Duration,
    pub end: StreamEnd,
}

/// How a streamed message ends. Every end but [`StreamEnd::Complete`] comes after `n` text
/// deltas, or in place of `message_delta` when the message has no more than `n`.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum StreamEnd {
    /// `message_delta` (stop reason, output usage), then `message_stop`.
    #[default]
    Complete,
    /// The body ends cleanly without `message_delta` or `message_stop`: a cut-off stream.
    CutAfter(usize),
    /// An `event: error` (as the API reports an overload mid-stream), then the body ends.
    ErrorAfter { deltas: usize, error_type: String, message: String },
    /// The connection stays open and silent until the client gives up. A plain (not
    /// streamed) answer sends its head and half its body first.
    StallAfter(usize),
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
    /// When its body had arrived (the gaps between a client's requests time its work).
    pub at: std::time::Instant,
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
        self.state.require_api_key(key);
    }

    /// Answers the next matching request with `reply`, then this rule is used up.
    pub fn once(&self, matcher: Matcher, reply: Reply) {
        self.state.add_rule(matcher, reply, true);
    }

    /// Answers every matching request with `reply`.
    pub fn always(&self, matcher: Matcher, reply: Reply) {
        self.state.add_rule(matcher, reply, false);
    }

    /// Every request received so far (any path), oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests()
    }

    /// The `POST /v1/messages` requests received so far, oldest first.
    pub fn message_requests(&self) -> Vec<RecordedRequest> {
        // Claude Code posts to `/v1/messages?beta=true`; the query does not change the call.
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path.split('?').next() == Some("/v1/messages"))
            .collect()
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
    /// A reply made from each request as it arrives.
    pub fn computed(f: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) -> Reply {
        Reply::Computed(Responder(Arc::new(f)))
    }

    pub fn text(text: &str) -> Reply {
        Reply::message(vec![json!({"type": "text", "text": text})], "end_turn")
    }

    /// A successful answer with one text block, streamed in exactly these deltas.
    pub fn text_deltas(deltas: &[&str]) -> Reply {
        Reply::text(&deltas.concat()).map_message(|m| {
            m.stream.text_deltas = Some(deltas.iter().map(|d| (*d).to_owned()).collect());
        })
    }

    /// `stop_reason: "refusal"` with the model's refusal text.
    pub fn refusal(text: &str) -> Reply {
        Reply::message(vec![json!({"type": "text", "text": text})], "refusal")
    }

    /// A web-search turn the API paused (`stop_reason: "pause_turn"`): the search's
    /// `server_tool_use` and results, no answer yet.
    pub fn pause_turn(query: &str) -> Reply {
        let mut blocks = web_search_blocks(query);
        blocks.retain(|block| block["type"] != "text");
        Reply::message(blocks, "pause_turn")
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
            stream: StreamScript::default(),
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

    /// Streamed, waits `pause` before each text delta after the first.
    pub fn with_delta_pause(self, pause: Duration) -> Reply {
        self.map_message(|m| m.stream.delta_pause = pause)
    }

    /// Streamed, the body ends after `deltas` text deltas, before `message_stop`.
    pub fn cut_after(self, deltas: usize) -> Reply {
        self.map_message(|m| m.stream.end = StreamEnd::CutAfter(deltas))
    }

    /// Streamed, an `error` event of `error_type` (`overloaded_error`, `api_error`, …) follows
    /// `deltas` text deltas, and the body ends.
    pub fn error_event_after(self, deltas: usize, error_type: &str, message: &str) -> Reply {
        self.map_message(|m| {
            m.stream.end =
                StreamEnd::ErrorAfter { deltas, error_type: error_type.to_owned(), message: message.to_owned() }
        })
    }

    /// Streamed, nothing more is sent after `deltas` text deltas; the connection stays open.
    /// Not streamed, half the JSON body is sent, then nothing more.
    pub fn stall_after(self, deltas: usize) -> Reply {
        self.map_message(|m| m.stream.end = StreamEnd::StallAfter(deltas))
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

    /// The request's `messages` (role and content), oldest first.
    pub fn messages(&self) -> &[Value] {
        self.body.get("messages").and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }

    pub fn is_stream(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool) == Some(true)
    }
}

//! The fake's HTTP side: accepting connections, reading requests, answering each by the
//! first matching rule as JSON, SSE, an API error or a dropped connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::{Matcher, MessageReply, RecordedRequest, Reply, StreamEnd};

#[derive(Default)]
pub(crate) struct State {
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

impl State {
    pub(crate) fn require_api_key(&self, key: &str) {
        *lock(&self.api_key) = Some(key.to_owned());
    }

    pub(crate) fn add_rule(&self, matcher: Matcher, reply: Reply, once: bool) {
        lock(&self.rules).push(Rule { matcher, reply, once, used: false });
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }
}

/// A poisoned lock only means another test thread panicked; the data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

const MAX_HEAD: usize = 64 * 1024;

pub(crate) async fn accept_loop(listener: TcpListener, state: Arc<State>, stop: CancellationToken) {
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
        loop {
            match reply {
                Reply::Delay(delay, inner) => {
                    tokio::time::sleep(delay).await;
                    reply = *inner;
                }
                Reply::Computed(responder) => reply = (responder.0)(&request),
                _ => break,
            }
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
                } else if let StreamEnd::StallAfter(_) = message.stream.end {
                    write_stalled_json(&mut write, &message_json(id, &model, &message)).await?;
                } else {
                    write_json(&mut write, 200, &message_json(id, &model, &message), &[]).await?;
                }
            }
            Reply::Delay(..) | Reply::Computed(_) => unreachable!("unwrapped above"),
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
    Ok(Some(RecordedRequest { method, path, headers, body, at: std::time::Instant::now() }))
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

/// The head of a complete JSON answer and half its body; then silence until the fake is
/// dropped, as a connection that stalls mid-answer.
async fn write_stalled_json(write: &mut (impl AsyncWriteExt + Unpin), body: &Value) -> std::io::Result<()> {
    let body = body.to_string();
    let head = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", body.len());
    write.write_all(head.as_bytes()).await?;
    write.write_all(&body.as_bytes()[..body.len() / 2]).await?;
    write.flush().await?;
    std::future::pending().await
}

/// The Messages API's streaming shape: message_start, ping, per block start/deltas/stop,
/// message_delta (stop_reason, output usage), message_stop — in chunked transfer encoding,
/// as the message's [`StreamScript`](crate::StreamScript) paces and ends it.
async fn write_sse(
    write: &mut (impl AsyncWriteExt + Unpin),
    id: u64,
    model: &str,
    message: &MessageReply,
) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                transfer-encoding: chunked\r\nrequest-id: req_fake\r\n\r\n";
    write.write_all(head.as_bytes()).await?;
    let script = &message.stream;
    let cut_at = match &script.end {
        StreamEnd::Complete => None,
        StreamEnd::CutAfter(n) | StreamEnd::ErrorAfter { deltas: n, .. } | StreamEnd::StallAfter(n) => Some(*n),
    };
    let mut text_deltas_sent = 0;
    for (name, data) in sse_events(id, model, message) {
        let is_text_delta = data["delta"]["type"] == "text_delta";
        if cut_at.is_some_and(|n| (is_text_delta && text_deltas_sent == n) || name == "message_delta") {
            return end_stream(write, &script.end).await;
        }
        if is_text_delta {
            if text_deltas_sent > 0 && !script.delta_pause.is_zero() {
                tokio::time::sleep(script.delta_pause).await;
            }
            text_deltas_sent += 1;
        }
        write_event(write, name, &data).await?;
    }
    write.write_all(b"0\r\n\r\n").await?;
    write.flush().await
}

/// Every event of a complete stream of `message`, in order.
fn sse_events(id: u64, model: &str, message: &MessageReply) -> Vec<(&'static str, Value)> {
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
        // As the real API streams: text in text deltas; a tool call's input in JSON deltas.
        let tool_input = block.get("input").filter(|_| block.get("type") == Some(&json!("tool_use")));
        let start = match (text, tool_input) {
            (Some(_), _) => json!({"type": "text", "text": ""}),
            (None, Some(_)) => {
                let mut start = block.clone();
                start["input"] = json!({});
                start
            }
            (None, None) => block.clone(),
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        if let Some(text) = text {
            for piece in text_pieces(text, message.stream.text_deltas.as_deref()) {
                events.push((
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
                ));
            }
        }
        if let Some(input) = tool_input {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            ));
        }
        events.push(("content_block_stop", json!({"type": "content_block_stop", "index": index})));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": message.stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": message.output_tokens}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events
}

/// The scripted deltas when they add up to `text`, else 16-character pieces.
fn text_pieces(text: &str, scripted: Option<&[String]>) -> Vec<String> {
    if let Some(deltas) = scripted.filter(|deltas| deltas.concat() == text) {
        return deltas.to_vec();
    }
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(16).map(|piece| piece.iter().collect()).collect()
}

/// Ends a stream early as scripted: cut off, after an `error` event, or never.
async fn end_stream(write: &mut (impl AsyncWriteExt + Unpin), end: &StreamEnd) -> std::io::Result<()> {
    match end {
        StreamEnd::Complete | StreamEnd::CutAfter(_) => {}
        StreamEnd::ErrorAfter { error_type, message, .. } => {
            let data = json!({"type": "error", "error": {"type": error_type, "message": message}});
            write_event(write, "error", &data).await?;
        }
        // Silent until the fake is dropped, which cancels this connection's task.
        StreamEnd::StallAfter(_) => std::future::pending().await,
    }
    write.write_all(b"0\r\n\r\n").await?;
    write.flush().await
}

/// One SSE event as one HTTP chunk, flushed at once.
async fn write_event(write: &mut (impl AsyncWriteExt + Unpin), name: &str, data: &Value) -> std::io::Result<()> {
    let event = format!("event: {name}\ndata: {data}\n\n");
    write.write_all(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes()).await?;
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

//! Ordinary clients that reuse their connection and tune nothing (no TCP_NODELAY, no
//! QUICKACK): a plain HTTP/1.1 keep-alive client on both MCP eras, and a plain WebSocket.
//! Nagle's algorithm meeting a delayed ACK — the server's Nagle holding an SSE event back
//! until the client ACKs the headers, or a WebSocket client's holding its second frame back
//! until the server ACKs the first — costs ~40 ms per call; these catch either (the rmcp
//! client, which sets TCP_NODELAY, hides both).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::{Running, TOKEN, running};

const CALLS: usize = 200;
const P50_LIMIT: Duration = Duration::from_millis(5);

/// One kept-alive HTTP/1.1 connection, written and read by hand.
struct Plain {
    reader: BufReader<TcpStream>,
}

impl Plain {
    fn connect(server: &Running) -> Plain {
        let stream = TcpStream::connect(server.base.trim_start_matches("http://")).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        Plain { reader: BufReader::new(stream) }
    }

    /// POSTs `body` to /mcp; the response's headers (lower-cased names) and body.
    fn post_mcp(&mut self, body: &Value, version: &str, session: Option<&str>) -> (Vec<(String, String)>, String) {
        let body = body.to_string();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {version}\r\nContent-Length: {}\r\n",
            body.len()
        );
        let message: Value = serde_json::from_str(&body).expect("json");
        if let Some(method) = message["method"].as_str() {
            head.push_str(&format!("Mcp-Method: {method}\r\n"));
        }
        if let Some(name) = message["params"]["name"].as_str() {
            head.push_str(&format!("Mcp-Name: {name}\r\n"));
        }
        if let Some(id) = session {
            head.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
        }
        head.push_str("\r\n");
        // Head and body in one write, as ordinary clients (Python's http.client, Node, curl)
        // send a small request.
        head.push_str(&body);
        self.reader.get_mut().write_all(head.as_bytes()).expect("request");
        self.response()
    }

    fn response(&mut self) -> (Vec<(String, String)>, String) {
        let mut status = String::new();
        self.reader.read_line(&mut status).expect("status line");
        assert!(status.starts_with("HTTP/1.1 2"), "{status}");
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("header line");
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
        let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        let mut body = Vec::new();
        if let Some(length) = header("content-length") {
            body.resize(length.parse().expect("length"), 0);
            self.reader.read_exact(&mut body).expect("body");
        } else if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).expect("chunk size");
                let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).expect("chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        }
        (headers, String::from_utf8(body).expect("utf-8"))
    }
}

fn tools_call(id: usize, meta: Option<Value>) -> Value {
    let mut params = json!({"name": "paige_get_open_files", "arguments": {}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn p50(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_keep_alive_client_gets_prompt_replies_in_both_mcp_eras() {
    let server = running().await;
    let server = std::sync::Arc::new(server);
    let s = server.clone();
    let (stateless, sessions) = tokio::task::spawn_blocking(move || {
        // 2026-07-28: stateless requests with plain JSON replies.
        let mut plain = Plain::connect(&s);
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "plain", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        let stateless: Vec<Duration> = (0..CALLS)
            .map(|i| {
                let started = Instant::now();
                let (_, body) = plain.post_mcp(&tools_call(i, Some(meta.clone())), "2026-07-28", None);
                assert!(body.contains("\"result\""), "{body}");
                started.elapsed()
            })
            .collect();
        // 2025-11-25: a session, replies as SSE events.
        let mut plain = Plain::connect(&s);
        let (headers, _) = plain.post_mcp(&crate::initialize_body(), "2025-11-25", None);
        let session = headers.iter().find(|(n, _)| n == "mcp-session-id").expect("session id").1.clone();
        plain.post_mcp(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), "2025-11-25", Some(&session));
        let sessions: Vec<Duration> = (0..CALLS)
            .map(|i| {
                let started = Instant::now();
                let (_, body) = plain.post_mcp(&tools_call(i + 1, None), "2025-11-25", Some(&session));
                assert!(body.contains("\"result\""), "{body}");
                started.elapsed()
            })
            .collect();
        (p50(stateless), p50(sessions))
    })
    .await
    .expect("client");
    eprintln!("{CALLS} calls on one kept-alive connection: p50 stateless {stateless:?}, sessions (SSE) {sessions:?}");
    assert!(stateless < P50_LIMIT, "stateless p50 {stateless:?}");
    assert!(sessions < P50_LIMIT, "sessions p50 {sessions:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_websocket_gets_prompt_replies_to_messages_sent_back_to_back() {
    let server = running().await;
    let url = format!("{}/ws", server.base.replace("http://", "ws://"));
    let mut request = url.into_client_request().expect("request");
    request.headers_mut().insert("Authorization", format!("Bearer {TOKEN}").parse().expect("header"));
    // `disable_nagle: false`: the socket as an ordinary client leaves it.
    let (mut socket, _) =
        tokio_tungstenite::connect_async_with_config(request, None, false).await.expect("ws connects");
    std::fs::write(server.fixture.core.project_root().path().join("a.txt"), "a\n").expect("file");
    let mut samples = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let started = Instant::now();
        // A buffer update (no reply) right before a message that is answered: the pattern
        // that waits on the delayed ACK when Nagle holds the second write back.
        let update = json!({"type": "buffer:update", "payload": {"path": "a.txt", "content": format!("a{i}\n"), "cursorPosition": {"line": 1, "column": 1}}});
        socket.send(Message::Text(update.to_string().into())).await.expect("send");
        let ask = json!({"type": "file:close", "id": format!("c{i}"), "payload": {"path": "../outside"}});
        socket.send(Message::Text(ask.to_string().into())).await.expect("send");
        loop {
            let Some(Ok(Message::Text(text))) = socket.next().await else { panic!("socket closed") };
            let frame: Value = serde_json::from_str(text.as_str()).expect("json");
            if frame["id"] == format!("c{i}") {
                break;
            }
        }
        samples.push(started.elapsed());
    }
    let p50 = p50(samples);
    eprintln!("{CALLS} /ws round trips: p50 {p50:?}");
    assert!(p50 < P50_LIMIT, "/ws p50 {p50:?}");
}

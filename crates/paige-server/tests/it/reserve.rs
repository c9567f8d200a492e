//! Hooks and MCP keep reserved capacity: no flood of other connections — idle authenticated
//! WebSockets, idle keep-alive HTTP, half-sent heads, requests stuck in flight — keeps
//! `paige hook` (3 s deadline) or Claude Code's MCP calls from an answer.

use std::time::{Duration, Instant};

use paige_core::Limits;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::{Running, TOKEN, initialize_body, post_mcp, running_with};

/// Well inside `paige hook`'s 3 s deadline, with room for a loaded 2-core machine.
const PROMPT: Duration = Duration::from_secs(1);

fn limits(max_connections: usize) -> Limits {
    // Long timeouts: only the admission policy, not a timeout, may make room here.
    Limits {
        max_connections,
        header_read_timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        ..Limits::default()
    }
}

fn addr(server: &Running) -> String {
    server.base.trim_start_matches("http://").to_owned()
}

enum Upgrade {
    Open(Box<crate::ws::Socket>),
    Refused(u16, String),
}

async fn open_ws(server: &Running) -> Upgrade {
    let url = format!("{}/ws", server.base.replace("http://", "ws://"));
    let mut request = url.into_client_request().expect("request");
    request.headers_mut().insert("Authorization", format!("Bearer {TOKEN}").parse().expect("header"));
    match tokio::time::timeout(Duration::from_secs(5), tokio_tungstenite::connect_async(request)).await {
        Ok(Ok((socket, _))) => Upgrade::Open(Box::new(socket)),
        Ok(Err(tokio_tungstenite::tungstenite::Error::Http(response))) => {
            let body = response.body().as_ref().map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
            Upgrade::Refused(response.status().as_u16(), body)
        }
        Ok(Err(err)) => panic!("the upgrade failed without an answer: {err}"),
        Err(_) => panic!("the upgrade hung"),
    }
}

/// A hook POST and an MCP initialize on fresh connections: their statuses and the slower time.
async fn hook_and_mcp(server: &Running) -> (u16, u16, Duration) {
    let started = Instant::now();
    let hook = reqwest::Client::new()
        .post(format!("{}/hooks/stop", server.base))
        .bearer_auth(TOKEN)
        .json(&json!({"session_id": "s", "hook_event_name": "Stop"}))
        .timeout(Duration::from_secs(3))
        .send()
        .await
        .expect("the hook is answered");
    let hook_took = started.elapsed();
    let started = Instant::now();
    let auth = format!("Bearer {TOKEN}");
    let mcp = tokio::time::timeout(
        Duration::from_secs(3),
        post_mcp(&server.base, &initialize_body(), &[("Authorization", &auth)]),
    )
    .await
    .expect("the MCP call is answered");
    (hook.status().as_u16(), mcp.status().as_u16(), hook_took.max(started.elapsed()))
}

/// A connection that sent one request and read its answer, then sits idle (keep-alive).
async fn idle_keep_alive(addr: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.expect("request");
    let mut buf = [0u8; 512];
    let _ = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await;
    stream
}

/// An authenticated upload that never finishes: its request stays in flight.
async fn stuck_upload(addr: &str, path: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"content\": \""
    );
    stream.write_all(head.as_bytes()).await.expect("head");
    stream
}

/// What a raw request on a fresh connection gets: the status line, or how it ended.
async fn raw_status(addr: &str, request: &str) -> (String, Duration) {
    let started = Instant::now();
    let Ok(mut stream) = TcpStream::connect(addr).await else { return ("refused".into(), started.elapsed()) };
    let _ = stream.write_all(request.as_bytes()).await;
    let mut reply = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(3), stream.read_to_end(&mut reply)).await;
    let text = String::from_utf8_lossy(&reply).into_owned();
    let outcome = match read {
        Err(_) => "hung".to_owned(),
        Ok(_) if text.is_empty() => "closed".to_owned(),
        Ok(_) => text,
    };
    (outcome, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_idle_websockets_is_refused_clearly_and_hooks_and_mcp_still_answer() {
    let server = running_with(limits(256)).await;
    // As many authenticated WebSockets as the server takes, and 20 more.
    let mut open = Vec::new();
    let mut refusals = Vec::new();
    while refusals.len() < 20 {
        assert!(open.len() <= 256, "the server took {} WebSockets", open.len());
        let started = Instant::now();
        match open_ws(&server).await {
            Upgrade::Open(socket) => open.push(socket),
            Upgrade::Refused(status, body) => refusals.push((status, body, started.elapsed())),
        }
    }
    assert_eq!(open.len(), 64, "a quarter of the 256 places");
    for (status, body, took) in &refusals {
        assert_eq!(*status, 503, "{body}");
        assert!(body.contains("too many WebSockets"), "{body}");
        assert!(*took < PROMPT, "a refusal took {took:?}");
    }
    let (hook, mcp, took) = hook_and_mcp(&server).await;
    assert_eq!((hook, mcp), (200, 200));
    assert!(took < PROMPT, "hook and MCP took {took:?} beside {} WebSockets", open.len());

    // Then every other kind of flood on top: idle keep-alive connections and half-sent heads,
    // more than the places left.
    let addr = addr(&server);
    let mut flood = Vec::new();
    for _ in 0..220 {
        flood.push(idle_keep_alive(&addr).await);
    }
    for _ in 0..100 {
        let mut stream = TcpStream::connect(&addr).await.expect("connect");
        stream.write_all(b"POST /hooks/pre-tool-use HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.expect("half a head");
        flood.push(stream);
    }
    let (hook, mcp, took) = hook_and_mcp(&server).await;
    assert_eq!((hook, mcp), (200, 200));
    assert!(took < PROMPT, "hook and MCP took {took:?} under the flood");
    eprintln!(
        "WebSockets: {} taken, 20 refused (slowest {:?}); hook+MCP under the flood: {took:?}",
        open.len(),
        refusals.iter().map(|r| r.2).max().unwrap_or_default()
    );

    // Closing a WebSocket gives its place back.
    drop(open.pop());
    let mut reopened = false;
    for _ in 0..20 {
        if let Upgrade::Open(socket) = open_ws(&server).await {
            open.push(socket);
            reopened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(reopened, "a closed WebSocket's place is free again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_place_busy_hooks_and_mcp_are_served_from_the_reserve_and_others_refused() {
    // 64 places: 16 WebSockets at most, a reserve of 4.
    let server = running_with(limits(64)).await;
    let addr = addr(&server);
    let mut stuck = Vec::new();
    for _ in 0..64 {
        stuck.push(stuck_upload(&addr, "/api/memory/add").await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (hook, mcp, took) = hook_and_mcp(&server).await;
    assert_eq!((hook, mcp), (200, 200), "hooks and MCP are answered from the reserve");
    assert!(took < PROMPT, "hook and MCP took {took:?}");
    let (refused, took) = raw_status(&addr, "GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("only hooks and MCP are served now"), "{refused}");
    assert!(took < PROMPT, "the refusal took {took:?}");
    let (refused, _) = raw_status(
        &addr,
        &format!("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"),
    )
    .await;
    assert!(refused.starts_with("HTTP/1.1 503"), "no WebSocket from the reserve: {refused}");

    // The reserve too held by requests in flight: a new connection is closed at once, not left
    // hanging.
    for _ in 0..4 {
        stuck.push(stuck_upload(&addr, "/hooks/pre-tool-use").await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (outcome, took) = raw_status(&addr, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await;
    assert!(outcome == "closed" || outcome.starts_with("refused"), "{outcome}");
    assert!(took < PROMPT, "closing took {took:?}");

    // Once the stuck uploads go, everything is served again.
    drop(stuck);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, _) = raw_status(
        &addr,
        &format!(
            "GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
        ),
    )
    .await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}

//! Hostile clients over real sockets: slow and idle connections, floods past the connection
//! limit, special and huge files over `/ws` and MCP, symlink races through MCP, tokens in URLs,
//! unguarded paths in tool arguments. Plain std sockets stand in for ordinary clients.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures_util::SinkExt;
use paige_core::Limits;
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use crate::tools::{call, error_text, ok, session_client};
use crate::ws::{connect, next, send};
use crate::{Running, TOKEN, running_with};

fn address(server: &Running) -> String {
    server.base.trim_start_matches("http://").to_owned()
}

/// `GET /health` on a fresh plain connection; the status line, or why not, within `within`.
fn health(server: &Running, within: Duration) -> Result<String, String> {
    let mut stream = TcpStream::connect(address(server)).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(within)).map_err(|e| e.to_string())?;
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).map_err(|e| e.to_string())?;
    reply.lines().next().map(str::to_owned).ok_or_else(|| "no reply".into())
}

/// Whether the server closed `stream` (EOF or reset) within `within`.
fn closed_by_server(mut stream: &TcpStream, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 1024];
    while Instant::now() < deadline {
        stream.set_read_timeout(Some(Duration::from_millis(100))).expect("timeout");
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(err) if matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

/// Whether the server has closed `stream` by now (EOF or reset waiting to be read).
fn closed_now(mut stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).expect("nonblocking");
    let mut buf = [0u8; 64];
    match stream.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(err) => err.kind() != std::io::ErrorKind::WouldBlock,
    }
}

/// A WebSocket that still works: hello is answered with init.
async fn assert_answers_hello(socket: &mut crate::ws::Socket) {
    let hello = json!({"type": "connection:hello", "id": "h", "timestamp": 0,
        "payload": {"version": "0.1.0", "platform": "linux", "windowSize": {"width": 1, "height": 1}}});
    send(socket, hello).await;
    assert_eq!(next(socket).await["type"], "connection:init", "the socket still answers");
}

fn tight_limits() -> Limits {
    Limits {
        max_connections: 256,
        header_read_timeout: Duration::from_millis(500),
        idle_timeout: Duration::from_millis(1000),
        ..Limits::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_connections_are_closed_and_health_answers_throughout() {
    let server = running_with(tight_limits()).await;
    let addr = address(&server);
    let server = Arc::new(server);
    let probe = server.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        // 300 half-sent requests: more than the 256-connection limit.
        let mut slow: Vec<TcpStream> = (0..300)
            .map(|_| {
                let mut s = TcpStream::connect(&addr).expect("connect");
                s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n").expect("half a head");
                s
            })
            .collect();
        // /health keeps answering while they hang, and while a few trickle a byte at a time.
        let mut worst = Duration::ZERO;
        for round in 0..10 {
            for s in slow.iter_mut().take(5) {
                let _ = s.write_all(b"X");
            }
            let started = Instant::now();
            let status = health(&probe, Duration::from_secs(2)).unwrap_or_else(|e| format!("round {round}: {e}"));
            assert!(status.contains("200"), "/health during the flood: {status}");
            worst = worst.max(started.elapsed());
            std::thread::sleep(Duration::from_millis(100));
        }
        // Every half-sent request is closed by the server: timed out (500 ms) or evicted.
        let open = slow.iter().filter(|s| !closed_by_server(s, Duration::from_secs(3))).count();
        (worst, open)
    })
    .await
    .expect("probe");
    let (worst, still_open) = outcome;
    eprintln!("/health worst {worst:?} during 300 slowloris connections");
    assert_eq!(still_open, 0, "half-sent requests left open");
    // Answering is the property; a 1 s SYN retransmit on a loaded machine is not a stall.
    assert!(worst < Duration::from_secs(3), "/health took {worst:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_is_closed_but_a_websocket_lives_on() {
    let server = running_with(tight_limits()).await;
    let mut socket = connect(&server).await;
    let addr = address(&server);
    let idle_closed = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").expect("request");
        let mut buf = [0u8; 512];
        stream.set_read_timeout(Some(Duration::from_secs(2))).expect("timeout");
        let n = stream.read(&mut buf).expect("reply");
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
        let kept_alive = !closed_by_server(&stream, Duration::from_millis(500));
        (kept_alive, closed_by_server(&stream, Duration::from_secs(3)))
    })
    .await
    .expect("client");
    assert_eq!(idle_closed, (true, true), "kept alive while fresh, closed once idle for 1 s");
    // The WebSocket sat idle just as long, and still answers.
    assert_answers_hello(&mut socket).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_limit_idle_connections_make_room_and_a_websocket_is_kept() {
    let limits = Limits { idle_timeout: Duration::from_secs(60), ..tight_limits() };
    let server = running_with(limits).await;
    let mut socket = connect(&server).await;
    let addr = address(&server);
    let server = Arc::new(server);
    let probe = server.clone();
    let evicted = tokio::task::spawn_blocking(move || {
        let idle: Vec<TcpStream> = (0..400).map(|_| TcpStream::connect(&addr).expect("connect")).collect();
        let status = health(&probe, Duration::from_secs(2)).expect("/health at the limit");
        assert!(status.contains("200"), "{status}");
        std::thread::sleep(Duration::from_millis(300));
        idle.iter().filter(|s| closed_now(s)).count()
    })
    .await
    .expect("clients");
    // 400 idle + the socket + /health against 256 places: at least 146 idle ones made room.
    assert!(evicted >= 146, "only {evicted} idle connections were closed");
    assert_answers_hello(&mut socket).await;
}

#[tokio::test]
async fn a_ws_message_over_the_frame_cap_closes_that_socket_only() {
    let server = running_with(Limits { max_ws_frame_bytes: 1 << 20, ..Limits::default() }).await;
    let mut big = connect(&server).await;
    let mut other = connect(&server).await;
    let content = "x".repeat(2 << 20);
    let _ = big
        .send(Message::Text(
            json!({"type": "buffer:update", "payload": {"path": "a.txt", "content": content, "cursorPosition": {"line": 1, "column": 1}}})
                .to_string()
                .into(),
        ))
        .await;
    let closed = tokio::time::timeout(Duration::from_secs(2), async {
        use futures_util::StreamExt;
        loop {
            match big.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return true,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert_eq!(closed, Ok(true), "the oversized message closed its socket");
    assert_eq!(server.fixture.core.buffer("a.txt").expect("path"), None, "nothing of it was kept");
    assert_answers_hello(&mut other).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_and_huge_files_get_clear_errors_over_ws_and_mcp_while_health_answers() {
    let server = running_with(Limits::default()).await;
    let root = server.fixture.core.project_root().path().to_owned();
    for fifo in ["fifo.txt", "fifo"] {
        rustix::fs::mknodat(rustix::fs::CWD, root.join(fifo), rustix::fs::FileType::Fifo, 0o644.into(), 0)
            .expect("mkfifo");
    }
    std::fs::File::create(root.join("big.log")).expect("create").set_len(1 << 30).expect("sparse 1 GiB");
    let mut socket = connect(&server).await;
    for (path, code) in [("fifo.txt", "NOT_REGULAR_FILE"), ("fifo", "NOT_REGULAR_FILE"), ("big.log", "TOO_LARGE")] {
        send(&mut socket, json!({"type": "file:open", "id": path, "payload": {"path": path}})).await;
        let reply = next(&mut socket).await;
        assert_eq!(reply["payload"]["code"], code, "{path}: {reply}");
    }
    send(&mut socket, json!({"type": "buffer:update", "id": "b", "payload": {"path": "fifo", "content": "x", "cursorPosition": {"line": 1, "column": 1}}})).await;
    assert_eq!(next(&mut socket).await["payload"]["code"], "NOT_REGULAR_FILE");

    let client = session_client(&server).await;
    let started = Instant::now();
    let fifo = error_text(&call(&client, "paige_open_file", json!({"path": "fifo.txt"})).await);
    assert!(fifo.contains("not a regular file"), "{fifo}");
    let big = error_text(&call(&client, "paige_open_file", json!({"path": "big.log"})).await);
    assert!(big.contains("too large to open in Paige"), "{big}");
    let diff = call(&client, "paige_get_diff", json!({"path": "fifo"})).await;
    assert_ne!(diff.is_error, None, "answered: {diff:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "MCP calls took {:?}", started.elapsed());
    let addr_server = Arc::new(server);
    let probe = addr_server.clone();
    let status = tokio::task::spawn_blocking(move || health(&probe, Duration::from_secs(2))).await.expect("probe");
    assert!(status.expect("/health").contains("200"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_open_file_never_shows_a_file_outside_the_project_during_a_symlink_swap() {
    let server = running_with(Limits::default()).await;
    let root = server.fixture.core.project_root().path().to_owned();
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("f.txt"), "SECRET").expect("secret");
    std::fs::create_dir(root.join("d")).expect("d");
    std::fs::write(root.join("d/f.txt"), "inside").expect("inside");
    std::os::unix::fs::symlink(outside.path(), root.join("s")).expect("symlink");
    server.fixture.core.coaching().start_session(Some(1), None).expect("session");
    let mut ui = crate::tools::ui(&server).await;
    let client = session_client(&server).await;
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (a, b, stop) = (root.join("d"), root.join("s"), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let cwd = rustix::fs::CWD;
                rustix::fs::renameat_with(cwd, &a, cwd, &b, rustix::fs::RenameFlags::EXCHANGE).expect("exchange");
            }
        })
    };
    let (mut opened, mut refused) = (0, 0);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        let result = call(&client, "paige_open_file", json!({"path": "d/f.txt"})).await;
        if result.is_error == Some(true) { refused += 1 } else { opened += 1 }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");
    let shown = crate::tools::frames_of(&mut ui, "editor:open_file", Duration::from_millis(500)).await;
    eprintln!("{opened} opened, {refused} refused, {} editor:open_file frames", shown.len());
    assert!(opened > 0 && refused > 0, "the swap never met a call; the test proves nothing");
    assert_eq!(shown.len(), opened, "every opened file reached the UI");
    assert!(shown.iter().all(|f| f["content"] == "inside"), "a file outside the project reached the UI");
}

#[tokio::test]
async fn the_token_is_taken_from_the_url_on_ws_only_and_the_scheme_in_any_case() {
    let server = running_with(Limits::default()).await;
    let http = reqwest::Client::new();
    let by_query = http.get(format!("{}/api/session?token={TOKEN}", server.base)).send().await.expect("sent");
    assert_eq!(by_query.status(), 401, "a token in the URL of a plain request");
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let response = http
            .get(format!("{}/api/session", server.base))
            .header("Authorization", format!("{scheme} {TOKEN}"))
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), 200, "{scheme}");
    }
}

#[tokio::test]
async fn hint_directories_and_message_anchors_pass_the_path_guard() {
    let server = running_with(Limits::default()).await;
    std::fs::create_dir_all(server.fixture.core.project_root().path().join("src")).expect("src");
    std::fs::write(server.fixture.core.project_root().path().join("src/a.rs"), "fn a() {}\n").expect("a");
    server.fixture.core.coaching().start_session(Some(1), None).expect("session");
    let mut ui = crate::tools::ui(&server).await;
    let client = session_client(&server).await;
    let hint = call(
        &client,
        "paige_hint_files",
        json!({"hints": [{"path": "src/a.rs", "style": "suggested", "directories": ["../../etc"]}]}),
    )
    .await;
    assert!(error_text(&hint).contains(".."), "{hint:?}");
    let fine = call(
        &client,
        "paige_hint_files",
        json!({"hints": [{"path": "src/a.rs", "style": "suggested", "directories": ["./src"]}]}),
    )
    .await;
    assert_eq!(ok(&fine)["success"], true);
    let shown = crate::tools::frames_of(&mut ui, "explorer:hint_files", Duration::from_millis(500)).await;
    assert_eq!(shown.len(), 1, "only the guarded hint reached the UI");
    assert_eq!(shown[0]["hints"][0]["directories"], json!(["src"]));
    let anchored = call(
        &client,
        "paige_show_message",
        json!({"message": "look", "type": "hint", "anchor": {"path": "/etc/passwd", "line": 1}}),
    )
    .await;
    assert!(error_text(&anchored).contains("outside the project"), "{anchored:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_session_outlives_the_idle_timeout() {
    let server = running_with(tight_limits()).await;
    let client = session_client(&server).await;
    ok(&call(&client, "paige_get_open_files", json!({})).await);
    // Longer than the idle timeout (1 s): the session's SSE stream stays open, and a call on a
    // closed kept-alive connection simply goes out on a new one.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    ok(&call(&client, "paige_get_open_files", json!({})).await);
    assert_eq!(server.sessions.count().await, 1, "still the one session");
}

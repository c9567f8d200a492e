//! `buffer:update` ingest rate over `/ws` on a 5,000-line file, with a session active so
//! action logging is on (target ≥ 2,000 msg/s). `cargo bench -p paige-server --bench ws_ingest`

mod common;

use std::sync::Arc;
use std::time::Instant;

use futures_util::{SinkExt, StreamExt};
use paige_core::{Config, Core, SystemClock};
use tokio_tungstenite::tungstenite::Message;

const MESSAGES: usize = 4000;

#[tokio::main]
async fn main() {
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    let content: String = (0..5000).map(|i| format!("    let value_{i} = compute({i}, \"line {i}\");\n")).collect();
    std::fs::write(project.path().join("big.rs"), &content).expect("file");
    let config = Config::new(project.path().to_owned(), data.path().to_owned(), "bench");
    let core = Arc::new(Core::open(config, Arc::new(SystemClock)).expect("core"));
    core.coaching().start_session(None, None).expect("session");
    let (mut socket, served) = common::serve(core.clone()).await;
    socket.send(Message::Text(r#"{"type":"file:open","payload":{"path":"big.rs"}}"#.into())).await.expect("open");
    // Every 10th update is a large paste, so significant-change rows are written too.
    let frames: Vec<String> = (0..MESSAGES)
        .map(|i| {
            let mut edited = content.clone();
            edited.push_str(&"x".repeat(if i % 10 == 0 { 600 } else { i % 7 }));
            serde_json::json!({"type": "buffer:update", "timestamp": 0, "payload": {
                "path": "big.rs", "content": edited, "cursorPosition": {"line": 5000, "column": 1}, "selections": []}})
            .to_string()
        })
        .collect();

    let started = Instant::now();
    for frame in frames {
        socket.send(Message::Text(frame.into())).await.expect("send");
    }
    // Frames are handled in order: the reply to this one means every update was ingested.
    socket.send(Message::Text(r#"{"type":"connection:hello","payload":{"version":"b","platform":"b","windowSize":{"width":1,"height":1}}}"#.into())).await.expect("hello");
    while let Some(Ok(message)) = socket.next().await {
        if let Message::Text(text) = message
            && text.contains("connection:init")
        {
            break;
        }
    }
    let elapsed = started.elapsed();
    let session = core.active_session().expect("session").id;
    let logged = core
        .db()
        .recent_actions(&session, 100_000, Some(paige_core::db::ActionType::BufferSignificantChange))
        .expect("rows")
        .len();
    println!("buffer:update over /ws, 5,000-line file ({} KiB per message), {MESSAGES} messages", content.len() / 1024);
    println!(
        "  {:.0} msg/s   ({:.1} MiB/s, {:.3} ms per message, {logged} significant-change rows logged)   (target ≥ 2,000 msg/s)",
        MESSAGES as f64 / elapsed.as_secs_f64(),
        (content.len() * MESSAGES) as f64 / elapsed.as_secs_f64() / (1 << 20) as f64,
        elapsed.as_secs_f64() * 1000.0 / MESSAGES as f64
    );
    drop(socket);
    served.stop().await;
}

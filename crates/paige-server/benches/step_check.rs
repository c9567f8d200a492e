//! Time from a save to the step check's result, as a UI sees it: `file:save` over `/ws` until
//! the `coaching:step_check` that is not `running` arrives — for a Node project whose check
//! (`npm test -- 'sum adds'`, its test waiting 600 ms) takes about 1 s. The baseline, run
//! in the same run and interleaved: the same command started directly, waited for and read.
//! The difference is Paige's share (target ≤ 100 ms): the bus, the change detector's window
//! before and after, spawning, reading and summarising, the frame.
//!   cargo bench -p paige-server --bench step_check

mod common;
use common::percentile;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use paige_core::{Config, Core, SystemClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

const RUNS: usize = 10;
const TOKEN: &str = "bench-token-0123456789";

fn write(root: &std::path::Path, path: &str, content: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
    std::fs::write(full, content).expect("write");
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One save of `src/sum.js` (alternating between two passing versions) until its result.
async fn through_paige(socket: &mut Socket, n: usize) -> f64 {
    let contents = ["exports.sum = (a, b) => a + b;\n", "exports.sum = (a, b) => b + a;\n"];
    let frame = json!({"type": "file:save", "payload": {"path": "src/sum.js", "content": contents[n % 2]}});
    let started = Instant::now();
    socket.send(Message::Text(frame.to_string().into())).await.expect("send");
    loop {
        let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout(Duration::from_secs(60), socket.next()).await
        else {
            panic!("no step check result");
        };
        let frame: Value = serde_json::from_str(text.as_str()).expect("json");
        if frame["type"] == "coaching:step_check" && frame["payload"]["status"] != "running" {
            assert_eq!(frame["payload"]["status"], "passed", "{frame}");
            return started.elapsed().as_secs_f64() * 1000.0;
        }
    }
}

#[tokio::main]
async fn main() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let phase = json!({
        "number": 1, "title": "Make sum add", "description": "Make sum add.",
        "expected_files": ["src/sum.js"], "hint_level": "file",
        "hints": {"file_hints": [], "line_hints": []}, "knowledge_gap_opportunities": [],
        "skill_area": "testing", "test_filter": "sum adds"
    });
    let reply = json!({"phases": [phase], "memory_connection": null, "estimated_difficulty": "beginner"});
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&reply));
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    let root = project.path();
    write(
        root,
        "package.json",
        r#"{"name": "sum", "private": true, "scripts": {"test": "node --test --test-name-pattern"}}"#,
    );
    write(root, "src/sum.js", "exports.sum = (a, b) => a + b;\n");
    write(
        root,
        "test/sum.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('../src/sum.js');\n\
         test('sum adds', async () => { await new Promise((r) => setTimeout(r, 600)); assert.strictEqual(sum(2, 3), 5); });\n",
    );
    // A project of some size: the change detector's window walks it before and after.
    for i in 0..200 {
        write(root, &format!("docs/note{i}.md"), &format!("note {i}\n"));
    }
    let config = Config {
        anthropic_base_url: Some(fake.base_url()),
        token: Some(TOKEN.into()),
        ..Config::new(root.to_owned(), data.path().to_owned(), "bench")
    };
    let core = Arc::new(Core::open(config, Arc::new(SystemClock)).expect("core"));
    core.start_watcher().expect("watcher");
    core.coaching().start_session(None, None).expect("session");
    let input = paige_core::coaching::PipelineInput {
        plan_text: "1. make sum add".into(),
        issue_summary: "sum".into(),
        issue_number: None,
    };
    core.coaching().run_coaching_pipeline(input).await.expect("pipeline");
    let server = paige_server::app(core.clone(), TOKEN);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let stop = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(paige_server::serve(listener, server, stop.clone()));
    let url = format!("ws://127.0.0.1:{port}/ws?token={TOKEN}");
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.expect("ws");

    let directly = || {
        let root = root.to_owned();
        async move {
            tokio::task::spawn_blocking(move || {
                let started = Instant::now();
                let out = std::process::Command::new("npm")
                    .args(["test", "--", "sum adds"])
                    .current_dir(&root)
                    .env("CI", "1")
                    .env("NO_COLOR", "1")
                    .stdin(std::process::Stdio::null())
                    .output()
                    .expect("npm runs");
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
                started.elapsed().as_secs_f64() * 1000.0
            })
            .await
            .expect("baseline")
        }
    };
    // Warm up both: npm's and node's caches, the detector's first (full) walk.
    directly().await;
    through_paige(&mut socket, 1).await;
    let (mut paige, mut baseline) = (Vec::new(), Vec::new());
    for n in 0..RUNS {
        baseline.push(directly().await);
        paige.push(through_paige(&mut socket, n).await);
    }
    let mut overhead: Vec<f64> = paige.iter().zip(&baseline).map(|(p, b)| p - b).collect();
    println!("step check, {RUNS} saves interleaved with {RUNS} direct runs (Node project, 201 learner files)");
    println!(
        "  the command directly        p50 {:7.1} ms  p99 {:7.1} ms",
        percentile(&mut baseline, 0.5),
        percentile(&mut baseline, 0.99)
    );
    println!(
        "  save → result over /ws      p50 {:7.1} ms  p99 {:7.1} ms",
        percentile(&mut paige, 0.5),
        percentile(&mut paige, 0.99)
    );
    println!(
        "  Paige's share (pairwise)    p50 {:7.1} ms  p99 {:7.1} ms (target ≤ 100 ms)",
        percentile(&mut overhead, 0.5),
        percentile(&mut overhead, 0.99)
    );
    stop.cancel();
    let _ = serving.await;
    core.shutdown().await.expect("shutdown");
}

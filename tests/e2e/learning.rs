//! Solutions shown, end to end through the real `claude` binary, offline (issue 30): the
//! fake Messages API scripts Claude Code's turn — a reply in words with a code block, as a
//! model that ignores the coach persona would write — and Claude Code's Stop hook hands
//! Paige the turn; the learner (a `/ws` client, Paige's editor) opens the file and types the
//! block with names of their own; the dashboard then counts one solution shown, then typed.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::claude::{Runner, claude, claude_runs};

const SHOWN: &str = "fn parse_port(raw: &str) -> Result<u16, String> {\n    let trimmed = raw.trim();\n    if trimmed.is_empty() {\n        return Err(\"no port given\".to_string());\n    }\n    trimmed.parse::<u16>().map_err(|e| format!(\"bad port {trimmed}: {e}\"))\n}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_shows_a_solution_the_learner_types_and_the_dashboard_counts_it() {
    let Some(claude) = claude() else { return };
    // `claude -p` ends its session when it exits; the coaching session stays open (issue 40).
    // Should a wrap-up start meanwhile, the model takes a minute over it, as a real one may:
    // the session is still live while the learner types.
    let fake = paige_fake_anthropic::FakeAnthropic::start().await.expect("fake");
    for call in ["knowledge_gap_extraction", "dreyfus_assessment", "memory_summarisation"] {
        let slow = paige_fake_anthropic::Reply::error(529, "overloaded_error", "busy").delayed(Duration::from_secs(60));
        fake.always(paige_fake_anthropic::Matcher::call_type(call), slow);
    }
    let mut world = crate::World::ready();
    world.set("ANTHROPIC_BASE_URL", &fake.base_url());
    std::fs::create_dir_all(world.project().join("src")).expect("src");
    std::fs::write(world.project().join("src/config.rs"), "pub fn load() {}\n").expect("file");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let (status, stdout, stderr) = world.run(&["session", "start", "--title", "Read the port"]);
    assert!(status.success(), "{stdout}{stderr}");
    let info = paige.run_info(&world.data_dir());
    let url = format!("ws://127.0.0.1:{}/ws?token={}", info["port"], info["token"].as_str().expect("token"));
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.expect("ws");
    let reply = format!("Here is how you could write it:\n\n```rust\n{SHOWN}\n```\n\nThen call it from `load`.");
    let turns = [format!("say: {reply}")];
    let turns: Vec<&str> = turns.iter().map(String::as_str).collect();
    let (world, events, _) = claude_runs(world, claude, &turns, Runner::default(), &fake, &[]).await;
    assert!(events.iter().any(|e| e["type"] == "result"), "the turn finished: {events:?}");

    // Claude Code's Stop hook may still be on its way when `claude -p` exits: the learner
    // starts once Paige has noted the code it showed.
    let db = paige_core::db::Db::open(&world.data_dir().join("paige.db"), std::sync::Arc::new(paige_core::SystemClock))
        .expect("db");
    let session = db.sessions().expect("sessions").into_iter().next().expect("the session");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let noted = db.recent_actions(&session.id, 50, Some(paige_core::db::ActionType::CoachingMessage)).expect("log");
        if noted.iter().any(|a| a.data.as_ref().is_some_and(|d| d["kind"] == "code_shown")) {
            break;
        }
        assert!(Instant::now() < deadline, "Claude Code's Stop never reached Paige with its code block");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The learner opens the file in Paige's editor and types the block, names their own.
    let typed = format!("pub fn load() {{}}\n\n{}\n", SHOWN.replace("raw", "input").replace("trimmed", "t"));
    let send = |kind: &str, payload: Value| Message::Text(json!({"type": kind, "payload": payload}).to_string().into());
    socket.send(send("file:open", json!({"path": "src/config.rs"}))).await.expect("open");
    let update = json!({"path": "src/config.rs", "content": typed, "cursorPosition": {"line": 9, "column": 1}});
    socket.send(send("buffer:update", update)).await.expect("type");
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut asked = false;
    let learning = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame = match tokio::time::timeout(left, socket.next()).await {
            Ok(Some(Ok(message))) => message.to_text().ok().and_then(|t| serde_json::from_str::<Value>(t).ok()),
            other => {
                let asked: Vec<String> = fake
                    .message_requests()
                    .iter()
                    .map(|r| {
                        format!("tools={} msgs={}", r.body["tools"].as_array().map_or(0, Vec::len), r.messages().len())
                    })
                    .collect();
                panic!("no dashboard with the solution: {other:?}\nrequests: {asked:?}\n{}", paige.output())
            }
        };
        let Some(frame) = frame else { continue };
        if frame["type"] == "learning:signals" && frame["payload"]["solutionsShown"] == 1 && !asked {
            asked = true;
            socket.send(send("dashboard:request", json!({"statsPeriod": "all"}))).await.expect("dashboard");
        }
        if frame["type"] == "dashboard:state" && asked {
            break frame["payload"]["learning"].clone();
        }
    };
    assert_eq!(learning["solutionsShown"], 1, "{learning}");
    assert_eq!(db.solutions_shown(None, Some(&session.id)).expect("count"), 1);
    // Nothing was written to the learner's file but by the learner (the buffer is unsaved).
    assert_eq!(std::fs::read_to_string(world.project().join("src/config.rs")).expect("file"), "pub fn load() {}\n");
    paige.signal("TERM");
}

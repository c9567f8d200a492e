//! A coaching session end to end through the real `claude` binary, offline: the fake
//! Messages API scripts Claude Code's turns (the pipeline, then a phase update) and answers
//! Paige's own model calls; a `/ws` client is the learner's UI; Claude Code's exit fires
//! SessionEnd, which leaves the session open for the learner to end (issue 40).

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};

use crate::World;
use crate::claude::{Runner, claude, claude_runs};

fn script_paiges_calls(fake: &FakeAnthropic) {
    let coach = json!({
        "phases": [{
            "number": 1, "title": "Find the callback", "description": "Read the callback first.",
            "expected_files": ["src/auth.rs"], "hint_level": "line",
            "hints": {"file_hints": [{"path": "src/auth.rs", "style": "important"}],
                      "line_hints": [{"path": "src/auth.rs", "start": 2, "end": 2, "style": "focus", "hover_text": "Here"}]},
            "knowledge_gap_opportunities": []
        }],
        "memory_connection": null,
        "estimated_difficulty": "beginner"
    });
    let gaps = json!({
        "knowledge_gaps": [{"topic": "Async ordering", "evidence": "raced the redirect", "severity": "medium", "related_concepts": []}],
        "kata_specs": [],
        "session_summary": {"phases_completed": 1, "total_time_minutes": 5, "hints_used": 0, "independent_completions": 1}
    });
    let dreyfus = json!({"assessments": [{"skill_area": "Async", "stage": "novice", "previous_stage": null,
        "confidence": 0.6, "evidence": "first session", "recommendation": "line hints"}]});
    let memories = json!({"memories": [{"content": "Awaited the OAuth token before redirecting", "tags": ["oauth"], "importance": "high"}]});
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach));
    fake.always(Matcher::call_type("knowledge_gap_extraction"), Reply::json(&gaps));
    fake.always(Matcher::call_type("dreyfus_assessment"), Reply::json(&dreyfus));
    fake.always(Matcher::call_type("memory_summarisation"), Reply::json(&memories));
}

/// A fake Messages API answering Paige's own calls, and a world whose Paige talks to it (with
/// the embedding model when the test script provides one).
pub(crate) async fn coaching_world() -> (FakeAnthropic, World) {
    let fake = FakeAnthropic::start().await.expect("fake");
    script_paiges_calls(&fake);
    let mut world = World::ready();
    world.set("ANTHROPIC_BASE_URL", &fake.base_url());
    if let Ok(models) = std::env::var("PAIGE_MODEL_DIR") {
        world.set("PAIGE_MODEL_DIR", &models);
    }
    (fake, world)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_runs_the_coaching_pipeline_moves_a_phase_and_exits_and_the_learner_ends_the_session() {
    let Some(claude) = claude() else { return };
    let (fake, world) = coaching_world().await;
    std::fs::create_dir_all(world.project().join("src")).expect("src");
    std::fs::write(world.project().join("src/auth.rs"), "fn login() {}\nfn callback() {}\n").expect("file");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let (ok, stdout, stderr) = {
        let (status, out, err) = world.run(&["session", "start", "--title", "Login race"]);
        (status.success(), out, err)
    };
    assert!(ok, "{stdout}{stderr}");
    // The learner's UI, collecting every frame.
    let info = paige.run_info(&world.data_dir());
    let url = format!("ws://127.0.0.1:{}/ws?token={}", info["port"], info["token"].as_str().expect("token"));
    let (socket, _) = tokio_tungstenite::connect_async(&url).await.expect("ws");
    let frames = tokio::spawn(async move {
        let mut seen: Vec<Value> = Vec::new();
        let mut socket = socket;
        while let Ok(Some(Ok(message))) = tokio::time::timeout(Duration::from_secs(60), socket.next()).await {
            if let Ok(text) = message.to_text()
                && let Ok(frame) = serde_json::from_str::<Value>(text)
            {
                let done = frame["type"] == "session:completed";
                seen.push(frame);
                if done {
                    break;
                }
            }
        }
        seen
    });
    let turns = [
        r#"mcp__paige__paige_run_coaching_pipeline {"planText": "1. Find the callback", "issueSummary": "Login races the token"}"#,
        r#"mcp__paige__paige_update_phase {"phase": 1, "status": "complete"}"#,
    ];
    let allowed = ["mcp__paige__paige_run_coaching_pipeline", "mcp__paige__paige_update_phase"];
    let (world, events, _) = claude_runs(world, claude, &turns, Runner::default(), &fake, &allowed).await;
    let results: Vec<&Value> = events.iter().filter(|e| e["type"] == "user").collect();
    assert!(!results.is_empty(), "claude ran the tools: {events:?}");
    // Claude Code exited (its SessionEnd answered): the session is still the learner's, open.
    let (status, shown, _) = world.run(&["session", "show"]);
    assert!(status.success() && shown.contains("active"), "Claude Code exiting does not end the session: {shown}");
    // The learner ends it from the panel (another window of theirs); the wrap-up follows.
    let (mut panel, _) = tokio_tungstenite::connect_async(&url).await.expect("ws");
    let end = json!({"type": "session:end", "payload": {}}).to_string();
    futures_util::SinkExt::send(&mut panel, tokio_tungstenite::tungstenite::Message::Text(end.into()))
        .await
        .expect("end");
    let frames = tokio::time::timeout(Duration::from_secs(60), frames).await.expect("ui frames").expect("collector");
    let kinds: Vec<&str> = frames.iter().filter_map(|f| f["type"].as_str()).collect();
    for kind in ["coaching:plan_ready", "editor:highlight_lines", "explorer:hint_files", "session:completed"] {
        assert!(kinds.contains(&kind), "the UI got {kind}: {kinds:?}");
    }
    let ready = frames.iter().find(|f| f["type"] == "coaching:plan_ready").expect("plan_ready");
    assert_eq!(ready["payload"]["phases"][0]["title"], "Find the callback");
    // What the database keeps: the plan with its phase moved, the session completed, the gap.
    let db = paige_core::db::Db::open(&world.data_dir().join("paige.db"), std::sync::Arc::new(paige_core::SystemClock))
        .expect("db");
    let session = db.sessions().expect("sessions").into_iter().next().expect("the session");
    assert_eq!(session.status, paige_core::db::SessionStatus::Completed);
    let plans = db.plans_for_session(&session.id).expect("plans");
    let phases = db.phases_for_plan(&plans[0].id).expect("phases");
    assert_eq!(phases[0].status, paige_core::db::PhaseStatus::Complete);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let gaps = db.knowledge_gaps(&paige_core::db::GapFilter::default()).expect("gaps");
        if gaps.iter().any(|g| g.topic == "Async ordering") {
            break;
        }
        assert!(Instant::now() < deadline, "the wrap-up stored no gap");
        std::thread::sleep(Duration::from_millis(50));
    }
    paige.signal("TERM");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_ends_the_session_with_paige_end_session_and_gets_the_wrap_up_summary() {
    let Some(claude) = claude() else { return };
    let (fake, world) = coaching_world().await;
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let (status, stdout, stderr) = world.run(&["session", "start", "--title", "Login race"]);
    assert!(status.success(), "{stdout}{stderr}");
    // Planned first: a session with no plan and no work is not wrapped up (issue 40).
    let turns = [
        r#"mcp__paige__paige_run_coaching_pipeline {"planText": "1. Find the callback", "issueSummary": "Login races the token"}"#,
        r#"mcp__paige__paige_end_session {"sessionTranscript": "The learner awaited the token before redirecting."}"#,
    ];
    let allowed = ["mcp__paige__paige_run_coaching_pipeline", "mcp__paige__paige_end_session"];
    let (world, events, sent) = claude_runs(world, claude, &turns, Runner::default(), &fake, &allowed).await;
    // The tool's answer reached Claude Code: the model's next request carries it.
    let summary = r#"\"knowledgeGaps\":1"#;
    assert!(sent.iter().any(|body| body.contains(summary)), "the summary went back to the model: {events:?}");
    let db = paige_core::db::Db::open(&world.data_dir().join("paige.db"), std::sync::Arc::new(paige_core::SystemClock))
        .expect("db");
    let session = db.sessions().expect("sessions").into_iter().next().expect("the session");
    assert_eq!(session.status, paige_core::db::SessionStatus::Completed);
    let calls: Vec<String> = fake.message_requests().iter().filter_map(|r| r.call_type().map(str::to_owned)).collect();
    assert_eq!(
        calls.iter().filter(|c| c.as_str() == "knowledge_gap_extraction").count(),
        1,
        "wrapped up once: {calls:?}"
    );
    paige.signal("TERM");
}

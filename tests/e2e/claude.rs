//! The real `claude` binary (Claude Code) driving `paige hook`, offline: without credentials
//! `claude -p` still fires SessionStart and UserPromptSubmit. Runs when PAIGE_TEST_CLAUDE
//! names a `claude` executable (`scripts/test.sh` installs one from npm and sets it).

use std::process::Command;

use serde_json::Value;

use crate::{PAIGE, World, read_json};

fn claude() -> Option<String> {
    std::env::var("PAIGE_TEST_CLAUDE").ok().filter(|p| !p.is_empty())
}

/// Runs `claude -p hello` in the project with Paige's generated settings and the PTY
/// environment Paige gives it (PAIGE_URL, PAIGE_TOKEN); returns the stream-json events.
fn claude_prompt(claude: &str, world: &World) -> Vec<Value> {
    claude_prompt_with(claude, world, &[])
}

/// [`claude_prompt`] with extra environment (e.g. the fake Messages API and a key).
fn claude_prompt_with(claude: &str, world: &World, env: &[(&str, &str)]) -> Vec<Value> {
    let info = read_json(&world.data_dir().join("run/server.json"));
    let settings = paige_core::governance::claude_settings(PAIGE);
    let settings_path = world.root.path().join("claude-settings.json");
    std::fs::write(&settings_path, settings.to_string()).expect("settings");
    let home = world.root.path().join("claude-home");
    std::fs::create_dir_all(&home).expect("home");
    let output = Command::new(claude)
        .args(["-p", "hello", "--verbose", "--output-format", "stream-json", "--settings"])
        .arg(&settings_path)
        .current_dir(world.project())
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PAIGE_URL", format!("http://127.0.0.1:{}", info["port"]))
        .env("PAIGE_TOKEN", info["token"].as_str().expect("token"))
        .envs(env.iter().copied())
        .output()
        .expect("claude runs");
    let events: Vec<Value> =
        String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    if events.is_empty() {
        eprintln!("claude printed no events; stderr:\n{}", String::from_utf8_lossy(&output.stderr));
    }
    events
}

fn hook_output<'a>(events: &'a [Value], event: &str) -> Option<&'a str> {
    events
        .iter()
        .find(|e| e["subtype"] == "hook_response" && e["hook_event"] == event)
        .and_then(|e| e["stdout"].as_str())
}

#[test]
fn real_claude_session_start_receives_paiges_coach_context() {
    let Some(claude) = claude() else { return };
    let world = World::ready();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready", std::time::Duration::from_secs(10));
    let events = claude_prompt(&claude, &world);
    let stdout = hook_output(&events, "SessionStart").unwrap_or_else(|| panic!("no SessionStart hook: {events:?}"));
    let out: Value = serde_json::from_str(stdout).expect("paige printed json");
    let context = out["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
    assert!(context.contains("Session state"), "{context}");
}

#[test]
fn real_claude_prompt_is_blocked_by_paige_in_fail_safe() {
    let Some(claude) = claude() else { return };
    let world = World::ready();
    let project = world.project().display().to_string();
    assert!(world.run(&["intents", "init", "--project", &project]).0.success());
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready", std::time::Duration::from_secs(10));
    // The first session enables governance (Paige sees .orchestration/); then it is deleted.
    let first = claude_prompt(&claude, &world);
    assert!(hook_output(&first, "SessionStart").is_some_and(|s| s.contains("Reasoning Intercept")), "{first:?}");
    std::fs::remove_dir_all(world.project().join(".orchestration")).expect("rm");
    let events = claude_prompt(&claude, &world);
    let result = events.iter().find(|e| e["type"] == "result").expect("a result");
    let text = result["result"].as_str().expect("text");
    assert!(
        text.contains("UserPromptSubmit operation blocked by hook") && text.contains("paige intents init"),
        "{text}"
    );
}

#[test]
fn real_claude_init_only_fires_session_start_through_paige_hook() {
    let Some(claude) = claude() else { return };
    let world = World::ready();
    let project = world.project().display().to_string();
    assert!(world.run(&["intents", "init", "--project", &project]).0.success());
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready", std::time::Duration::from_secs(10));
    let info = read_json(&world.data_dir().join("run/server.json"));
    let settings_path = world.root.path().join("claude-settings.json");
    std::fs::write(&settings_path, paige_core::governance::claude_settings(PAIGE).to_string()).expect("settings");
    let home = world.root.path().join("claude-home");
    std::fs::create_dir_all(&home).expect("home");
    let status = Command::new(&claude)
        .args(["--init-only", "--settings"])
        .arg(&settings_path)
        .current_dir(world.project())
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PAIGE_URL", format!("http://127.0.0.1:{}", info["port"]))
        .env("PAIGE_TOKEN", info["token"].as_str().expect("token"))
        .status()
        .expect("claude runs");
    assert!(status.success());
    // Only a hook that reached Paige can have recorded the project as governed: with the
    // sidecar gone, a Write is now denied by the fail-safe rather than by coach mode.
    std::fs::remove_dir_all(world.project().join(".orchestration")).expect("rm");
    let payload = serde_json::json!({"session_id": "x", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": world.project().join("a.rs"), "content": "x"}});
    let (status, _, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &payload.to_string());
    assert_eq!(status.code(), Some(2));
    assert!(stderr.starts_with("Fail-Safe"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_gets_the_learners_unsaved_changes_cut_at_the_hook_context_cap() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let Some(claude) = claude() else { return };
    let mut world = World::ready();
    world.set("PAIGE_MAX_HOOK_CONTEXT_BYTES", "2048");
    std::fs::write(world.project().join("big.txt"), "old line\n".repeat(2000)).expect("file");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready", std::time::Duration::from_secs(10));
    // The learner's editor holds a large unsaved change (a buffer:update over /ws).
    let info = read_json(&world.data_dir().join("run/server.json"));
    let url = format!("ws://127.0.0.1:{}/ws?token={}", info["port"], info["token"].as_str().expect("token"));
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.expect("ws");
    let update = serde_json::json!({"type": "buffer:update", "payload": {"path": "big.txt",
        "content": "new line\n".repeat(2000), "cursorPosition": {"line": 1, "column": 1}}});
    socket.send(Message::Text(update.to_string().into())).await.expect("send");
    // Frames are handled in order: the reply to a later one means the update is in.
    let sync = serde_json::json!({"type": "file:close", "id": "sync", "payload": {"path": "../x"}});
    socket.send(Message::Text(sync.to_string().into())).await.expect("send");
    while let Some(Ok(message)) = socket.next().await {
        if message.to_text().is_ok_and(|t| t.contains("\"sync\"")) {
            break;
        }
    }
    // Claude Code talks to the fake Messages API; Paige's UserPromptSubmit context rides in
    // the prompt it sends.
    let fake = paige_fake_anthropic::FakeAnthropic::start().await.expect("fake");
    fake.always(paige_fake_anthropic::Matcher::Any, paige_fake_anthropic::Reply::text("ok"));
    let base = fake.base_url();
    let (world, events) = tokio::task::spawn_blocking(move || {
        let events =
            claude_prompt_with(&claude, &world, &[("ANTHROPIC_BASE_URL", &base), ("ANTHROPIC_API_KEY", "sk-ant-e2e")]);
        (world, events)
    })
    .await
    .expect("claude");
    assert!(events.iter().any(|e| e["type"] == "result" && e["result"] == "ok"), "claude got the fake's answer");
    let sent: Vec<String> = fake.message_requests().iter().map(|r| r.body.to_string()).collect();
    let with_context = sent
        .iter()
        .find(|body| body.contains("unsaved changes"))
        .unwrap_or_else(|| panic!("no request to the model carried Paige's prompt context: {} requests", sent.len()));
    assert!(
        with_context.contains("a/big.txt") && with_context.contains("-old line"),
        "the unsaved diff reaches the model"
    );
    assert!(with_context.contains("context cut at 2048 bytes"), "the context is cut at the cap");
    assert!(!with_context.contains("+new line"), "not the whole 36 KB diff: its additions were cut");
    drop(world);
}

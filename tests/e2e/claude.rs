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
        .output()
        .expect("claude runs");
    String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
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

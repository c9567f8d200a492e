//! The built binaries with two tokens: `paige hook` finds the agent token in the run file and
//! is answered; a tool holding only the agent token (what Paige's terminal holds) cannot
//! drive the UI's routes — `paige session` with it is refused, with the UI token it works.

use std::time::Duration;

use serde_json::json;

use crate::{World, read_json};

#[test]
fn the_run_files_agent_token_lets_paige_hook_in_and_keeps_the_ui_routes_shut() {
    let mut world = World::ready();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let info = read_json(&world.data_dir().join("run/server.json"));
    let (ui, agent) = (info["token"].as_str().expect("token"), info["agentToken"].as_str().expect("agentToken"));
    assert_ne!(ui, agent);

    // `paige hook` with only DATA_DIR: the run file's agent token reaches Paige, which denies
    // a write in coach mode (not the fail-closed denial of an unanswered hook).
    let write = json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Write",
                       "tool_input": {"file_path": world.project().join("a.rs"), "content": "x"}});
    let (status, _, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &write.to_string());
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("coach mode") && !stderr.contains("fail closed"), "{stderr}");

    // As in Paige's terminal: PAIGE_URL and the agent token.
    world.set("PAIGE_URL", &format!("http://127.0.0.1:{}", info["port"])).set("PAIGE_TOKEN", agent);
    let (status, _, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &write.to_string());
    assert!(status.code() == Some(2) && stderr.contains("coach mode"), "{stderr}");
    let (status, _, stderr) = world.run(&["session", "start", "--issue", "1", "--title", "t"]);
    assert!(!status.success());
    assert!(stderr.contains("the agent token may only post hook events and call MCP tools"), "{stderr}");
    world.set("PAIGE_TOKEN", ui);
    let (status, stdout, stderr) = world.run(&["session", "show"]);
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "no active session");
}

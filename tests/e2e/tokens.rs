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
    let (status, stdout, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &write.to_string());
    let reason = crate::refusal(status, &stdout, &stderr);
    assert!(reason.contains("coach mode") && !reason.contains("fail closed"), "{reason}");

    // As in Paige's terminal: PAIGE_URL and the agent token.
    world.set("PAIGE_URL", &format!("http://127.0.0.1:{}", info["port"])).set("PAIGE_TOKEN", agent);
    let (status, stdout, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &write.to_string());
    assert!(crate::refusal(status, &stdout, &stderr).contains("coach mode"), "{stdout}");
    let (status, _, stderr) = world.run(&["session", "start", "--issue", "1", "--title", "t"]);
    assert!(!status.success());
    assert!(stderr.contains("the agent token may only post hook events and call MCP tools"), "{stderr}");
    world.set("PAIGE_TOKEN", ui);
    let (status, stdout, stderr) = world.run(&["session", "show"]);
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "no active session");
}

/// `paige token rotate` on a running Paige: it prints the new `ui:` address, `paige session`
/// (which reads the run file) keeps working, and a client holding the old UI token is refused.
/// Without a running Paige it replaces the kept tokens, which the next start uses.
#[test]
fn paige_token_rotate_replaces_the_tokens_of_a_running_paige_and_of_the_next_start() {
    let mut world = World::ready();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let before = read_json(&world.data_dir().join("run/server.json"));
    let old = before["token"].as_str().expect("token").to_owned();
    let (status, stdout, stderr) = world.run(&["token", "rotate"]);
    assert!(status.success(), "{stderr}");
    let new =
        stdout.lines().find_map(|l| l.strip_prefix("ui: ")).and_then(|u| u.split("token=").nth(1)).expect(&stdout);
    assert_ne!(new, old);
    let (status, _, stderr) = world.run(&["session", "show"]);
    assert!(status.success(), "paige session finds the new token: {stderr}");
    world.set("PAIGE_URL", &format!("http://127.0.0.1:{}", before["port"])).set("PAIGE_TOKEN", &old);
    let (status, _, stderr) = world.run(&["session", "show"]);
    assert!(!status.success() && stderr.contains("invalid bearer token"), "the old token is refused: {stderr}");
    world.unset("PAIGE_URL").unset("PAIGE_TOKEN");
    paige.signal("TERM");
    assert!(paige.wait_exit(Duration::from_secs(20)).success());

    let (status, stdout, stderr) = world.run(&["token", "rotate"]);
    assert!(status.success() && stdout.contains("tokens.json"), "{stdout}{stderr}");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let after = read_json(&world.data_dir().join("run/server.json"));
    assert_ne!(after["token"].as_str(), Some(new), "the next start uses the tokens rotated while it was down");
}

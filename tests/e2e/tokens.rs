//! The built binaries with three tokens: `paige hook` finds the agent token in the run file and
//! is answered; a tool holding only the agent token (what Paige's terminal holds) cannot
//! drive the UI's routes; `paige session` finds the local tools' token there, which opens its
//! routes but not `/ws`. Here no OS layer hides `DATA_DIR` from Claude Code (`World::ready`),
//! so the UI token is in no file at all: `paige token` needs it given (issue 39).

use std::time::Duration;

use serde_json::json;

use crate::{World, read_json};

#[test]
fn the_run_files_agent_token_lets_paige_hook_in_and_keeps_the_ui_routes_shut() {
    let mut world = World::ready();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let info = paige.run_info(&world.data_dir());
    let (ui, agent) = (info["token"].as_str().expect("token"), info["agentToken"].as_str().expect("agentToken"));
    let local = info["localToken"].as_str().expect("localToken");
    assert!(ui != agent && ui != local && agent != local);

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
    assert!(stderr.contains("the agent token may only post hook events, call MCP tools"), "{stderr}");
    world.set("PAIGE_TOKEN", ui);
    let (status, stdout, stderr) = world.run(&["session", "show"]);
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "no active session");

    // With only DATA_DIR, `paige session` uses the run file's local token: its routes open,
    // `/ws` (which saves files) and the rotation (which answers with the UI token) do not.
    world.unset("PAIGE_URL").unset("PAIGE_TOKEN");
    let (status, stdout, stderr) = world.run(&["session", "start", "--issue", "1", "--title", "t"]);
    assert!(status.success(), "{stdout}{stderr}");
    let port = info["port"].as_u64().expect("port");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    for (token, opens) in [(local, false), (agent, false), (ui, true)] {
        let url = format!("ws://127.0.0.1:{port}/ws?token={token}");
        let opened = runtime.block_on(tokio_tungstenite::connect_async(url)).is_ok();
        assert_eq!(opened, opens, "/ws with the {} token", if token == ui { "UI" } else { "other" });
    }
    let rotate = |token: &str| {
        let client = reqwest::blocking::Client::new();
        let url = format!("http://127.0.0.1:{port}/api/token/rotate");
        client.post(url).bearer_auth(token).send().expect("rotate answered").status().as_u16()
    };
    assert_eq!((rotate(local), rotate(agent)), (403, 403), "only the UI token rotates");
}

/// `paige token rotate` on a running Paige: with no UI token in any file it says how to give
/// it; given it (for that command only), it prints the new `ui:` address, `paige session`
/// (which reads the run file) keeps working, and a client holding the old UI token is
/// refused. Without a running Paige it replaces the kept tokens, which the next start uses.
#[test]
fn paige_token_rotate_replaces_the_tokens_of_a_running_paige_and_of_the_next_start() {
    let mut world = World::ready();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let before = paige.run_info(&world.data_dir());
    let old = before["token"].as_str().expect("token").to_owned();
    let (status, _, stderr) = world.run(&["token", "rotate"]);
    assert!(!status.success() && stderr.contains("PAIGE_TOKEN=<token> paige"), "{stderr}");
    let mut given = World { root: tempfile::tempdir().expect("dir"), env: world.env.clone() };
    std::fs::create_dir_all(given.cwd()).expect("cwd");
    given.set("PAIGE_TOKEN", &old);
    let (status, stdout, stderr) = given.run(&["token", "rotate"]);
    assert!(status.success(), "{stderr}");
    let new =
        stdout.lines().find_map(|l| l.strip_prefix("ui: ")).and_then(|u| u.split("token=").nth(1)).expect(&stdout);
    assert_ne!(new, old);
    let (status, _, stderr) = world.run(&["session", "show"]);
    assert!(status.success(), "paige session finds the new local token: {stderr}");
    assert_ne!(read_json(&world.data_dir().join("run/server.json"))["localToken"], before["localToken"]);
    world.set("PAIGE_URL", &format!("http://127.0.0.1:{}", before["port"])).set("PAIGE_TOKEN", &old);
    let (status, _, stderr) = world.run(&["session", "show"]);
    assert!(!status.success() && stderr.contains("invalid bearer token"), "the old token is refused: {stderr}");
    world.set("PAIGE_TOKEN", new);
    let (status, _, stderr) = world.run(&["session", "show"]);
    assert!(status.success(), "the new UI token opens: {stderr}");
    world.unset("PAIGE_URL").unset("PAIGE_TOKEN");
    paige.signal("TERM");
    assert!(paige.wait_exit(Duration::from_secs(20)).success());

    let (status, stdout, stderr) = world.run(&["token", "rotate"]);
    assert!(status.success() && stdout.contains("tokens.json"), "{stdout}{stderr}");
    let kept = read_json(&world.data_dir().join("tokens.json"));
    assert_eq!(kept.get("ui"), None, "no UI token kept where Claude Code could read it: {kept}");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let after = paige.run_info(&world.data_dir());
    assert_eq!(after["agentToken"], kept["agent"], "the next start uses the tokens rotated while it was down");
    assert_eq!(after["localToken"], kept["local"]);
    assert_ne!(after["token"].as_str(), Some(new));
}

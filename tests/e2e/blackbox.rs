//! Paige's MCP endpoint seen from other ecosystems: the Python `mcp` SDK and the real
//! Claude Code CLI. They need tools installed outside cargo, so `scripts/test.sh` installs
//! them and points at them with PAIGE_TEST_PYTHON (a Python with `mcp`) and
//! PAIGE_TEST_CLAUDE (the `claude` binary); without those variables the tests say so and
//! pass without checking.

use std::process::Command;
use std::time::Duration;

use crate::{Running, World, read_json};

fn tool_from_env(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(path) if !path.is_empty() => Some(path),
        _ => {
            crate::skipped(&format!("{var} is not set: scripts/test.sh sets it; not checked in this run"));
            None
        }
    }
}

/// A running `paige serve` with a fixed token and its URL.
fn serve(world: &mut World) -> (Running, String, String) {
    let token = "blackbox-token-0123456789";
    world.set("PAIGE_TOKEN", token);
    std::fs::create_dir_all(world.project().join("src")).expect("src");
    std::fs::write(world.project().join("src/app.py"), "print('hello')\n").expect("file");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    let info = read_json(&world.data_dir().join("run/server.json"));
    (paige, format!("http://127.0.0.1:{}/mcp", info["port"]), token.to_owned())
}

#[test]
fn python_mcp_sdk_lists_and_calls_tools_with_the_token() {
    let Some(python) = tool_from_env("PAIGE_TEST_PYTHON") else { return };
    let mut world = World::ready();
    let (_paige, url, token) = serve(&mut world);
    let (status, stdout, stderr) = world.run(&["session", "start", "--issue", "12", "--title", "Greet the user"]);
    assert!(status.success() && stdout.contains("active — issue #12: Greet the user"), "{stdout}{stderr}");

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/blackbox/mcp_client.py");
    let output = Command::new(python).arg(script).arg(&url).arg(&token).output().expect("python runs");
    assert!(output.status.success(), "python client failed: {}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_eq!(report["server"], "paige");
    // Coach mode: Paige's coaching tools, not the governed handshake.
    assert_eq!(report["tools"].as_array().map(Vec::len), Some(14), "{report}");
    assert_eq!(report["open_file"]["structured"]["path"], "src/app.py");
    assert_eq!(report["diff"]["structured"]["diffs"], serde_json::json!([]));
    assert_eq!(report["state"]["structured"]["session"]["issueNumber"], 12);
    assert_eq!(report["state"]["structured"]["open_files"], serde_json::json!(["src/app.py"]));
    assert_eq!(report["traversal"]["is_error"], true);
    assert!(
        report["without_token"].as_str().is_some_and(|s| s.starts_with("refused") && s.contains("401")),
        "{report}"
    );
}

#[test]
fn claude_mcp_list_shows_paige_connected_with_the_token_header() {
    let Some(claude) = tool_from_env("PAIGE_TEST_CLAUDE") else { return };
    let mut world = World::ready();
    let (_paige, url, token) = serve(&mut world);
    let home = world.root.path().join("home");
    let claude_cmd = |args: &[&str]| {
        let output = Command::new(&claude)
            .args(args)
            .current_dir(world.project())
            .env("HOME", &home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env_remove("ANTHROPIC_API_KEY")
            .output()
            .expect("claude runs");
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
    };
    claude_cmd(&[
        "mcp",
        "add",
        "--transport",
        "http",
        "paige",
        &url,
        "--header",
        &format!("Authorization: Bearer {token}"),
    ]);
    claude_cmd(&["mcp", "add", "--transport", "http", "stranger", &url, "--header", "Authorization: Bearer wrong"]);
    let listed = claude_cmd(&["mcp", "list"]);
    let line = |name: &str| listed.lines().find(|l| l.starts_with(&format!("{name}:"))).unwrap_or_default().to_owned();
    assert!(line("paige").contains("✔ Connected"), "{listed}");
    assert!(line("stranger").contains("Failed") && line("stranger").contains("401"), "{listed}");
}

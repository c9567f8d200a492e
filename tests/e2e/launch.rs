//! `paige claude`: the real Claude Code launched for a running `paige serve` exactly as the
//! app's terminal launches it, offline against the fake Messages API. Runs when
//! PAIGE_TEST_CLAUDE names a `claude` executable (`scripts/test.sh` installs one).

use std::process::Command;
use std::time::Duration;

use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::Value;

use crate::{PAIGE, World};

/// Runs `paige claude -p go` with Bash allowed by Claude Code's own prompt (so only Paige's
/// layers decide) and `turns` as the model's scripted Bash commands; returns what Claude Code
/// told the model after each (the tool results), and its stream-json events.
async fn paige_claude(world: &World, claude: &str, turns: &[&str], extra_env: &[(&str, &str)]) -> (String, Vec<Value>) {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    let agent_loop =
        || Matcher::custom(|r| r.body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty()));
    for (i, command) in turns.iter().enumerate() {
        let call = serde_json::json!({"type": "tool_use", "id": format!("toolu_{i:02}"), "name": "Bash",
            "input": {"command": command, "description": "scripted"}});
        fake.once(agent_loop(), Reply::message(vec![call], "tool_use"));
    }
    fake.always(Matcher::Any, Reply::text("done"));
    let claude_dir = std::path::Path::new(claude).parent().expect("claude's dir").to_owned();
    let path = format!("{}:{}", claude_dir.display(), std::env::var("PATH").unwrap_or_default());
    let base = fake.base_url();
    let mut command = Command::new(PAIGE);
    command
        .args(["claude", "-p", "go", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"])
        .current_dir(world.cwd())
        .env_clear()
        .envs(world.env.iter().cloned())
        .env("PATH", path)
        .env("ANTHROPIC_BASE_URL", &base)
        .env("ANTHROPIC_API_KEY", "sk-ant-e2e")
        .envs(extra_env.iter().copied());
    let output = tokio::task::spawn_blocking(move || command.output().expect("paige claude runs")).await.expect("join");
    let events: Vec<Value> =
        String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(!events.is_empty(), "no events; stderr:\n{}", String::from_utf8_lossy(&output.stderr));
    let told = fake.message_requests().iter().map(|r| r.body.to_string()).collect::<Vec<_>>().join("\n");
    (told, events)
}

fn learner_project(world: &World) {
    let project = world.project();
    std::fs::create_dir_all(project.join("src")).expect("src");
    std::fs::write(project.join("src/main.rs"), "fn main() {}\n").expect("main");
    std::fs::write(project.join(".gitignore"), "target/\n").expect("ignore");
}

/// In coach mode, with the read-only view and Claude Code's own Bash sandbox inside it: a
/// command runs (the nested sandbox works), a write to the learner's file fails with
/// "Read-only file system", nothing changes, and a hook answered (Paige saw the turn).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paige_claude_runs_bash_in_the_read_only_view_and_no_learner_file_changes() {
    let Some(claude) = crate::claude::claude() else { return };
    if let Err(why) = paige_core::launch::jail::probe(std::env::var_os("PATH").as_deref()) {
        eprintln!("bubblewrap cannot run here ({why}); scripts/test.sh installs it");
        return;
    }
    let world = World::ready();
    learner_project(&world);
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    // `ls` is read-only: Paige's hooks let it through, so it runs inside the jail. The append
    // goes through `sh -c`, which the hooks may deny; either way the file must not change.
    let turns = ["ls src && echo listed-in-jail", "sh -c 'echo x >> src/main.rs' ; echo rc=$?"];
    let (told, events) = paige_claude(&world, &claude, &turns, &[]).await;
    assert!(told.contains("listed-in-jail"), "a read-only command ran in the jail: {told:.3000}");
    assert_eq!(std::fs::read_to_string(world.project().join("src/main.rs")).expect("main"), "fn main() {}\n");
    assert!(
        events.iter().any(|e| e["subtype"] == "hook_response" && e["hook_event"] == "SessionStart"),
        "Paige's hooks ran inside the jail"
    );
    drop(paige);
}

/// `PAIGE_JAIL=0` launches Claude Code without the read-only view: the same read-only
/// command still runs (the other layers decide), and `paige claude --dry-run` shows the
/// command without bubblewrap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paige_claude_without_the_jail_runs_claude_directly_and_the_hooks_still_hold() {
    let Some(claude) = crate::claude::claude() else { return };
    let world = World::ready();
    learner_project(&world);
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    let claude_dir = std::path::Path::new(&claude).parent().expect("dir").display().to_string();
    let path = format!("{claude_dir}:{}", std::env::var("PATH").unwrap_or_default());
    let mut dry = world.command(&["claude", "--dry-run"]);
    let out = dry.env("PATH", &path).env("PAIGE_JAIL", "0").output().expect("dry run");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("--permission-mode default") && !shown.contains("bwrap"), "{shown}");
    let (told, _) = paige_claude(&world, &claude, &["ls src && echo listed-plain"], &[("PAIGE_JAIL", "0")]).await;
    assert!(told.contains("listed-plain"), "{told:.3000}");
    drop(paige);
}

/// Without a running Paige, `paige claude` says how to start one and exits 1.
#[test]
fn paige_claude_without_a_running_paige_says_how_to_start_one() {
    let world = World::ready();
    let (status, _, stderr) = world.run(&["claude", "--dry-run"]);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no running Paige found") && stderr.contains("paige serve"), "{stderr}");
}

//! The real `claude` binary (Claude Code) driving `paige hook`, offline: without credentials
//! `claude -p` still fires SessionStart and UserPromptSubmit. Runs when PAIGE_TEST_CLAUDE
//! names a `claude` executable (`scripts/test.sh` installs one from npm and sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::{PAIGE, World, read_json};

pub(crate) fn claude() -> Option<String> {
    let claude = std::env::var("PAIGE_TEST_CLAUDE").ok().filter(|p| !p.is_empty());
    if claude.is_none() {
        crate::skipped("PAIGE_TEST_CLAUDE names no real `claude` (scripts/test.sh installs one)");
    }
    claude
}

/// Runs `claude -p hello` in the project with Paige's generated settings and the PTY
/// environment Paige gives it (PAIGE_URL, PAIGE_TOKEN); returns the stream-json events.
pub(crate) fn claude_prompt(claude: &str, world: &World) -> Vec<Value> {
    claude_prompt_with(claude, world, &[])
}

/// [`claude_prompt`] with extra environment (e.g. the fake Messages API and a key).
fn claude_prompt_with(claude: &str, world: &World, env: &[(&str, &str)]) -> Vec<Value> {
    claude_prompt_args(claude, world, &paige_core::governance::claude_settings(PAIGE), &[], env, None)
}

/// [`claude_prompt_with`] with these `--settings` and extra arguments for `claude`, run as
/// `as_user` (uid, gid) when given, who then owns the settings and Claude Code's HOME.
fn claude_prompt_args(
    claude: &str,
    world: &World,
    settings: &Value,
    args: &[&str],
    env: &[(&str, &str)],
    as_user: Option<(u32, u32)>,
) -> Vec<Value> {
    let info = read_json(&world.data_dir().join("run/server.json"));
    let settings_path = world.root.path().join("claude-settings.json");
    std::fs::write(&settings_path, settings.to_string()).expect("settings");
    let home = world.root.path().join("claude-home");
    std::fs::create_dir_all(&home).expect("home");
    let mut command = match as_user {
        Some(user) => {
            chown_tree(&home, user);
            chown_tree(&settings_path, user);
            command_as(claude, user)
        }
        None => Command::new(claude),
    };
    let output = command
        .args(["-p", "hello", "--verbose", "--output-format", "stream-json", "--settings"])
        .arg(&settings_path)
        .args(args)
        .current_dir(world.project())
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PAIGE_URL", format!("http://127.0.0.1:{}", info["port"]))
        .env("PAIGE_TOKEN", info["agentToken"].as_str().expect("agent token"))
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

pub(crate) fn hook_output<'a>(events: &'a [Value], event: &str) -> Option<&'a str> {
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
    paige.wait_for("ready in", std::time::Duration::from_secs(10));
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
    paige.wait_for("ready in", std::time::Duration::from_secs(10));
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
    paige.wait_for("ready in", std::time::Duration::from_secs(10));
    let info = paige.run_info(&world.data_dir());
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
        .env("PAIGE_TOKEN", info["agentToken"].as_str().expect("agent token"))
        .status()
        .expect("claude runs");
    assert!(status.success());
    // Only a hook that reached Paige can have recorded the project as governed: with the
    // sidecar gone, a Write is now denied by the fail-safe rather than by coach mode.
    std::fs::remove_dir_all(world.project().join(".orchestration")).expect("rm");
    let payload = serde_json::json!({"session_id": "x", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": world.project().join("a.rs"), "content": "x"}});
    let (status, stdout, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &payload.to_string());
    let reason = crate::refusal(status, &stdout, &stderr);
    assert!(reason.starts_with("Fail-Safe"), "{reason}");
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
    paige.wait_for("ready in", std::time::Duration::from_secs(10));
    // The learner's editor holds a large unsaved change (a buffer:update over /ws).
    let info = paige.run_info(&world.data_dir());
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

/// How [`claude_runs`] starts Claude Code.
#[derive(Clone, Copy, Default)]
pub(crate) struct Runner {
    /// Coach mode's Bash sandbox on, as Paige's terminal turns it on where it can run.
    pub sandboxed: bool,
    /// Run `claude` (and so the `paige hook` and the Bash it spawns) as this (uid, gid),
    /// through `setpriv`; the test must be root.
    pub as_user: Option<(u32, u32)>,
}

/// Claude Code in print mode with Bash allowed (its own permission prompt would refuse it
/// before Paige's hooks matter); `turns` are the model's scripted tool calls, in order.
async fn claude_runs_bash(
    world: World,
    claude: String,
    turns: &[&str],
    runner: Runner,
) -> (World, Vec<Value>, Vec<String>) {
    let fake = paige_fake_anthropic::FakeAnthropic::start().await.expect("fake");
    claude_runs(world, claude, turns, runner, &fake, &["Bash", "mcp__files__paige_get_open_files"]).await
}

/// [`claude_runs_bash`] against `fake` (which may also answer Paige's own model calls),
/// with `allowed` tools. `turns` entries `mcp__server__tool {json}` or `Tool {json}` script
/// that tool's call; `say: <text>` a reply in words that ends the turn; anything else is a
/// Bash command. After the turns the model answers "done".
pub(crate) async fn claude_runs(
    world: World,
    claude: String,
    turns: &[&str],
    runner: Runner,
    fake: &paige_fake_anthropic::FakeAnthropic,
    allowed: &[&str],
) -> (World, Vec<Value>, Vec<String>) {
    use paige_fake_anthropic::{Matcher, Reply};
    // Only the agent loop's requests carry tools; side requests (titles) get plain text.
    let agent_loop =
        || Matcher::custom(|r| r.body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty()));
    for (i, command) in turns.iter().enumerate() {
        if let Some(text) = command.strip_prefix("say: ") {
            fake.once(agent_loop(), Reply::text(text));
            continue;
        }
        // `mcp__server__tool {json}` or `ToolName {json}`: a tool call; else a Bash command.
        let tool = |name: &str, input: &str| {
            name.starts_with("mcp__")
                || (name.starts_with(|c: char| c.is_ascii_uppercase())
                    && name.chars().all(char::is_alphanumeric)
                    && input.starts_with('{'))
        };
        let (name, input) = match command.split_once(' ').filter(|(name, input)| tool(name, input)) {
            Some((name, input)) => (name.to_owned(), serde_json::from_str(input).expect("tool input")),
            None => ("Bash".to_owned(), serde_json::json!({"command": command, "description": "scripted"})),
        };
        let call = serde_json::json!({"type": "tool_use", "id": format!("toolu_{i:02}"), "name": name, "input": input});
        fake.once(agent_loop(), Reply::message(vec![call], "tool_use"));
    }
    fake.always(Matcher::Any, Reply::text("done"));
    let base = fake.base_url();
    let allowed: Vec<String> = allowed.iter().map(|t| t.to_string()).collect();
    let (world, events) = tokio::task::spawn_blocking(move || {
        let env = [("ANTHROPIC_BASE_URL", base.as_str()), ("ANTHROPIC_API_KEY", "sk-ant-e2e")];
        let info = read_json(&world.data_dir().join("run/server.json"));
        let server = paige_core::launch::AgentServer {
            port: info["port"].as_u64().expect("port") as u16,
            token: info["agentToken"].as_str().expect("agent token").into(),
            hook_command: None,
        };
        let mcp = paige_core::launch::write_mcp_config(&world.root.path().join("run"), &server).expect("mcp config");
        // Paige's server again, as another server (`files`): what coach mode must refuse.
        let mut config: Value = read_json(&mcp);
        config["mcpServers"]["files"] = config["mcpServers"]["paige"].clone();
        std::fs::write(&mcp, config.to_string()).expect("mcp config");
        if let Some(user) = runner.as_user {
            // The config is private to its owner (0600 in a 0700 directory), as Paige writes
            // it for the user it runs as: here that user is Claude Code's.
            chown_tree(mcp.parent().expect("run dir"), user);
        }
        let mcp = mcp.display().to_string();
        let mut settings = paige_core::governance::claude_settings(PAIGE);
        if runner.sandboxed {
            // As Paige's terminal launches coach mode where the sandbox can run.
            settings["sandbox"] = paige_core::sandbox::settings(&world.project().canonicalize().expect("project"));
        }
        let mut args: Vec<&str> = vec!["--allowedTools"];
        args.extend(allowed.iter().map(String::as_str));
        args.extend(["--mcp-config", &mcp]);
        let events = claude_prompt_args(&claude, &world, &settings, &args, &env, runner.as_user);
        (world, events)
    })
    .await
    .expect("claude");
    let sent = fake.message_requests().iter().map(|r| r.body.to_string()).collect();
    (world, events, sent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_in_coach_mode_leaves_the_learners_files_byte_for_byte_unchanged_and_is_told_why() {
    coach_mode_keeps_the_learners_files(Runner::default()).await;
}

/// The same turn with Claude Code's Bash sandbox on (bubblewrap).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_in_sandboxed_coach_mode_cannot_write_the_learners_files() {
    if let Err(why) = paige_core::sandbox::probe(std::env::var_os("PATH").as_deref()) {
        eprintln!("the sandbox cannot run here ({why}); scripts/test.sh installs bubblewrap and socat");
        return;
    }
    coach_mode_keeps_the_learners_files(Runner { sandboxed: true, as_user: None }).await;
}

/// The sandboxed turn again with Claude Code, `paige hook` and Bash run by an unprivileged
/// user who owns the project: bubblewrap then needs an unprivileged user namespace, which
/// root (as CI runs) never does. Runs wherever the tests run as root with `setpriv`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_in_sandboxed_coach_mode_run_by_an_unprivileged_owner_still_cannot_write_the_learners_files() {
    let Some(user) = unprivileged_user() else { return };
    if let Err(why) = paige_core::sandbox::probe(std::env::var_os("PATH").as_deref()) {
        eprintln!("the sandbox cannot run here ({why}); scripts/test.sh installs bubblewrap and socat");
        return;
    }
    coach_mode_keeps_the_learners_files(Runner { sandboxed: true, as_user: Some(user) }).await;
}

async fn coach_mode_keeps_the_learners_files(runner: Runner) {
    let Some(claude) = claude() else { return };
    let world = World::ready();
    let project = world.project();
    std::fs::create_dir_all(project.join("src")).expect("mkdir");
    std::fs::write(project.join("src/main.rs"), "fn main() {}\n").expect("main");
    // A project script Paige cannot read into: coach mode does not run it.
    std::fs::write(project.join("tool.sh"), "#!/bin/sh\necho '// tool' >> src/main.rs\ntouch src/extra.rs\n")
        .expect("script");
    std::fs::write(project.join(".gitignore"), "target/\n").expect("ignore");
    let snapshot = |root: &std::path::Path| -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> =
            walk(root).into_iter().map(|p| (p.clone(), std::fs::read(root.join(&p)).expect("read"))).collect();
        files.sort();
        files
    };
    if let Some(user) = runner.as_user {
        hand_over(&world, &claude, user);
    }
    let before = snapshot(&project);
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", std::time::Duration::from_secs(10));
    let turns = [
        "echo x >> src/main.rs",
        "python3 -c \"open('src/main.rs','w').write('')\"",
        "env sh -c 'rm -rf src'",
        "sh tool.sh",
        "wc -c src/main.rs",
    ];
    let (world, events, sent) = claude_runs_bash(world, claude, &turns, runner).await;
    assert!(events.iter().any(|e| e["type"] == "result"), "the turn finished: {events:?}");
    assert_eq!(snapshot(&world.project()), before, "the learner's files are byte-for-byte unchanged");
    let told = sent.join("\n");
    assert!(told.contains("13 src/main.rs"), "a read-only command ran and its output reached the model");
    assert!(told.contains("would change files"), "the model hears why a command was denied");
    // Unknown is denied: the script does not run, and the model is told to suggest it.
    assert!(told.contains("Suggest the command to the learner, say what it does"), "{told:.3000}");
    assert!(!told.contains("Paige undid"), "nothing that could write ran: nothing to undo");
    drop(paige);
}

/// The unprivileged user (nobody) to run `claude` as, when this process is root and has
/// `setpriv` (util-linux); `None`, said on stderr, anywhere else: only root switches users.
fn unprivileged_user() -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to this process's effective user.
    if std::fs::metadata("/proc/self").map(|m| m.uid()).ok() != Some(0) {
        crate::skipped("not root: cannot run claude as another user, so the non-root sandbox test is skipped");
        return None;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if !std::env::split_paths(&path).any(|dir| dir.join("setpriv").is_file()) {
        crate::skipped("no setpriv on PATH (util-linux): the non-root sandbox test is skipped");
        return None;
    }
    Some((65534, 65534))
}

/// `program` run as `user` (uid, gid) with no supplementary groups.
fn command_as(program: impl AsRef<std::ffi::OsStr>, (uid, gid): (u32, u32)) -> Command {
    let mut command = Command::new("setpriv");
    command.arg(format!("--reuid={uid}")).arg(format!("--regid={gid}")).args(["--clear-groups", "--"]).arg(program);
    command
}

/// Gives the project to `user` and checks what running as them needs: the world is
/// traversable, `paige` and `claude` run, the sandbox probe passes as them, and — the
/// control — they can write the learner's files when no sandbox is in the way.
fn hand_over(world: &World, claude: &str, user: (u32, u32)) {
    use std::os::unix::fs::PermissionsExt;
    // tempfile makes the world 0700: only root could reach the project inside it.
    std::fs::set_permissions(world.root.path(), std::fs::Permissions::from_mode(0o711)).expect("chmod world");
    let project = world.project();
    chown_tree(&project, user);
    let home = world.root.path().join("claude-home");
    std::fs::create_dir_all(&home).expect("home");
    chown_tree(&home, user);
    let run = |program: &str, args: &[&str]| {
        let output = command_as(program, user)
            .args(args)
            .current_dir(&project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .output()
            .unwrap_or_else(|err| panic!("setpriv runs {program}: {err}"));
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        (output.status, text)
    };
    let (status, text) = run(claude, &["--version"]);
    assert!(status.success(), "uid {} cannot run {claude} (make the install world-readable): {text}", user.0);
    // The doctor's sandbox line comes first and needs no configuration.
    let (_, text) = run(PAIGE, &["doctor"]);
    assert!(text.contains("ok    sandbox"), "the sandbox probe fails as uid {}:\n{text}", user.0);
    let main = project.join("src/main.rs");
    let original = std::fs::read(&main).expect("main");
    let (status, text) = run("sh", &["-c", "echo x >> src/main.rs && touch src/new.rs && rm src/new.rs"]);
    assert!(status.success(), "without the sandbox uid {} can write the learner's files: {text}", user.0);
    assert_eq!(std::fs::read(&main).expect("main"), [original.as_slice(), b"x\n"].concat(), "the control wrote");
    std::fs::write(&main, original).expect("restore main");
}

/// Makes `path` and everything under it `user`'s (uid, gid), not following symlinks.
fn chown_tree(path: &Path, (uid, gid): (u32, u32)) {
    let mut stack: Vec<PathBuf> = vec![path.to_owned()];
    while let Some(path) = stack.pop() {
        std::os::unix::fs::lchown(&path, Some(uid), Some(gid))
            .unwrap_or_else(|err| panic!("chown {}: {err}", path.display()));
        if path.is_dir() && !path.is_symlink() {
            stack.extend(std::fs::read_dir(&path).expect("read_dir").flatten().map(|e| e.path()));
        }
    }
}

/// Every file under `root`, relative, `/`-separated.
fn walk(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir").flatten() {
            let path = entry.path();
            if entry.file_type().expect("type").is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(root).expect("rel").to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_in_governed_mode_has_bash_writes_in_scope_ledgered_with_their_hash_and_the_rest_undone() {
    let Some(claude) = claude() else { return };
    let world = crate::hook::governed_world();
    let project = world.project();
    std::fs::create_dir_all(project.join("src/weather")).expect("mkdir");
    std::fs::create_dir_all(project.join("src/auth")).expect("mkdir");
    std::fs::write(project.join("src/weather/w.rs"), "w1\n").expect("w");
    std::fs::write(project.join("src/auth/a.rs"), "a1\n").expect("a");
    std::fs::write(project.join("edit.sh"), "echo w2 > src/weather/w.rs\necho a2 > src/auth/a.rs\n").expect("script");
    // `npm test` names no file it writes (it runs the project's tests), so it passes the check
    // of what a command names (issue 42); what the test script then writes is watched.
    std::fs::write(project.join("package.json"), r#"{"scripts": {"test": "sh edit.sh"}}"#).expect("package.json");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", std::time::Duration::from_secs(10));
    let turns = [r#"mcp__paige__select_active_intent {"intent_id": "INT-001"}"#, "npm test"];
    let (world, events, sent) = claude_runs_bash(world, claude, &turns, Runner::default()).await;
    assert!(events.iter().any(|e| e["type"] == "result"), "the turn finished");
    let project = world.project();
    assert_eq!(std::fs::read_to_string(project.join("src/weather/w.rs")).expect("w"), "w2\n", "inside the scope: kept");
    assert_eq!(std::fs::read_to_string(project.join("src/auth/a.rs")).expect("a"), "a1\n", "outside: undone");
    let trace = std::fs::read_to_string(project.join(".orchestration/agent_trace.jsonl")).expect("trace");
    let entries: Vec<Value> = trace.lines().map(|l| serde_json::from_str(l).expect("entry")).collect();
    let kept = entries.iter().find(|e| e["file"] == "src/weather/w.rs").unwrap_or_else(|| panic!("{trace}"));
    assert_eq!(kept["kind"], "mutation");
    assert_eq!(kept["intent_id"], "INT-001");
    assert_eq!(kept["file_hash"].as_str(), Some(paige_core::governance::ledger::sha256_hex(b"w2\n").as_str()));
    let undone = entries.iter().find(|e| e["file"] == "src/auth/a.rs").unwrap_or_else(|| panic!("{trace}"));
    assert_eq!(undone["kind"], "denial");
    assert!(
        entries.iter().filter(|e| e["kind"] == "mutation").all(|e| e["file_hash"].is_string()),
        "every mutation is hashed (SC-002): {trace}"
    );
    assert!(sent.join("\n").contains("outside the bound intent"), "the model is told what was undone");
    assert!(world.run(&["ledger", "verify", "--project", &project.display().to_string()]).0.success());
    drop(paige);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_is_stopped_by_the_circuit_breaker_on_the_fourth_identical_call() {
    let Some(claude) = claude() else { return };
    let world = crate::hook::governed_world();
    let project = world.project();
    std::fs::create_dir_all(project.join("src/weather")).expect("mkdir");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", std::time::Duration::from_secs(10));
    let select = r#"mcp__paige__select_active_intent {"intent_id": "INT-001"}"#;
    let turns = [select, "ls src", "ls src", "ls src", "ls src", "ls src"];
    let (world, events, sent) = claude_runs_bash(world, claude, &turns, Runner::default()).await;
    let yaml = std::fs::read_to_string(world.project().join(".orchestration/active_intents.yaml")).expect("yaml");
    assert!(yaml.contains("BLOCKED"), "{yaml}");
    let trace = std::fs::read_to_string(world.project().join(".orchestration/agent_trace.jsonl")).expect("trace");
    assert_eq!(trace.lines().filter(|l| l.contains("\"kind\":\"breaker\"")).count(), 1, "{trace}");
    // The session ends at the fourth call: the model is not asked again with its result.
    assert_eq!(sent.len(), 5, "the select, three ls and the fourth, then nothing");
    let results = events.iter().flat_map(|e| e["message"]["content"].as_array().cloned().unwrap_or_default());
    let denied: Vec<Value> = results.filter(|c| c["type"] == "tool_result").collect();
    assert!(denied.last().is_some_and(|r| r.to_string().contains("Circuit Breaker: loop detected")), "{denied:?}");
    drop(paige);
}

/// Claude Code's tools beyond Bash: `Monitor` runs a shell command (classified as Bash),
/// `CronCreate` schedules a durable prompt into `.claude/`, `EnterWorktree` writes a worktree;
/// each is refused and the model hears why. (Every tool 2.1.330 offers is one Paige knows, and
/// it answers a name it does not offer before any hook, so a tool Paige does not know is
/// proved in governance.rs and hook.rs.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_in_coach_mode_is_refused_monitor_cron_create_and_enter_worktree() {
    let Some(claude) = claude() else { return };
    let world = World::ready();
    std::fs::write(world.project().join("notes.md"), "mine\n").expect("notes");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", std::time::Duration::from_secs(10));
    let turns = [
        r#"Monitor {"command": "while true; do echo x >> notes.md; sleep 1; done", "description": "watch"}"#,
        r#"Monitor {"command": "make watch", "description": "watch"}"#,
        r#"CronCreate {"cron": "*/5 * * * *", "prompt": "append to notes.md", "recurring": true, "durable": true}"#,
        r#"EnterWorktree {"name": "scratch"}"#,
        "make",
    ];
    let allowed = ["Bash", "Monitor", "CronCreate", "EnterWorktree"];
    let fake = paige_fake_anthropic::FakeAnthropic::start().await.expect("fake");
    let (world, events, sent) = claude_runs(world, claude, &turns, Runner::default(), &fake, &allowed).await;
    assert!(events.iter().any(|e| e["type"] == "result"), "the turn finished: {events:?}");
    let told = sent.join("\n");
    assert!(told.contains("would change files"), "Monitor's writing command was denied: {told:.3000}");
    assert!(told.contains("Suggest the command to the learner"), "unknown commands are denied: {told:.3000}");
    assert!(told.contains("CronCreate is refused"), "CronCreate was refused: {told:.3000}");
    assert!(told.contains("EnterWorktree is refused"), "EnterWorktree was refused: {told:.3000}");
    assert_eq!(std::fs::read_to_string(world.project().join("notes.md")).expect("notes"), "mine\n");
    assert!(!world.project().join(".claude/scheduled_tasks.json").exists(), "nothing was scheduled");
    drop(paige);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_in_coach_mode_is_refused_another_servers_tool_until_the_learner_allows_it() {
    let Some(claude) = claude() else { return };
    let world = World::ready();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", std::time::Duration::from_secs(10));
    let turns = ["mcp__files__paige_get_open_files {}"];
    let (world, _, sent) = claude_runs_bash(world, claude.clone(), &turns, Runner::default()).await;
    assert!(sent.join("\n").contains("another server's tool"), "coach mode refused mcp__files__*");
    // The learner allows the server's tools in the settings: the same call now runs.
    let mut settings = paige_core::settings::Settings::load(&world.data_dir()).expect("settings");
    settings.coach.allowed_mcp_tools = vec!["mcp__files__*".into()];
    settings.save(&world.data_dir()).expect("save");
    let (_world, _, sent) = claude_runs_bash(world, claude, &turns, Runner::default()).await;
    let told = sent.join("\n");
    // The tool's own answer (no open files) reached the model.
    assert!(!told.contains("another server's tool") && told.contains(r#"{\"files\":[]}"#), "{told:.2000}");
    drop(paige);
}

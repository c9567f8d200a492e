//! The real `claude` killed mid-command (the window closed), then the learner edits through
//! Paige's editor and their own: the next Claude Code session's turn leaves every edit in
//! place, byte for byte — the detector's window lost its end and is closed without undoing.
//! Runs when PAIGE_TEST_CLAUDE names a `claude` executable.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::claude::{Runner, claude, claude_runs};
use crate::hook::payload;
use crate::{PAIGE, World};

/// A project command Paige cannot read into: it runs, watched, and writes only at its end.
const SLOW: &str = "mkdir -p target\necho $$ > target/pid\nsleep 30\necho '// late' >> src/main.rs\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_killed_mid_command_then_the_learners_edits_survive_the_next_turn() {
    use futures_util::{SinkExt, StreamExt};
    use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
    use tokio_tungstenite::tungstenite::Message;
    let Some(claude) = claude() else { return };
    let world = World::ready();
    let project = world.project();
    std::fs::create_dir_all(project.join("src")).expect("mkdir");
    std::fs::write(project.join("src/main.rs"), "fn main() {}\n").expect("main");
    std::fs::write(project.join("notes.md"), "# notes\n").expect("notes");
    std::fs::write(project.join(".gitignore"), "target/\n").expect("ignore");
    std::fs::write(project.join("slow.sh"), SLOW).expect("script");
    // Coach mode runs only commands it knows to be read-only; a project's own test script is
    // one (it runs the learner's code, watched), and here it is the slow writer.
    std::fs::write(project.join("package.json"), r#"{"name": "p", "scripts": {"test": "sh slow.sh"}}"#)
        .expect("package.json");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    let info = paige.run_info(&world.data_dir());
    let token = info["token"].as_str().expect("token").to_owned();

    // Claude Code runs the slow command; it is killed while the command sleeps.
    let fake = FakeAnthropic::start().await.expect("fake");
    let agent_loop =
        || Matcher::custom(|r| r.body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty()));
    let call = json!({"type": "tool_use", "id": "toolu_slow", "name": "Bash",
                      "input": {"command": "npm test", "description": "scripted"}});
    fake.once(agent_loop(), Reply::message(vec![call], "tool_use"));
    fake.always(Matcher::Any, Reply::text("done"));
    let settings_path = world.root.path().join("claude-settings.json");
    std::fs::write(&settings_path, paige_core::governance::claude_settings(PAIGE).to_string()).expect("settings");
    let home = world.root.path().join("claude-home");
    std::fs::create_dir_all(&home).expect("home");
    let mut first = Command::new(&claude)
        .args(["-p", "hello", "--verbose", "--output-format", "stream-json", "--allowedTools", "Bash", "--settings"])
        .arg(&settings_path)
        .current_dir(&project)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PAIGE_URL", format!("http://127.0.0.1:{}", info["port"]))
        .env("PAIGE_TOKEN", &token)
        .env("ANTHROPIC_BASE_URL", fake.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-e2e")
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("claude runs");
    let pid_file = project.join("target/pid");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&pid_file).map_or(true, |p| p.trim().is_empty()) {
        assert!(Instant::now() < deadline, "the slow command never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let shell: i32 = std::fs::read_to_string(&pid_file).expect("pid").trim().parse().expect("a pid");
    // The window closed: Claude Code's process group, and the command wherever it runs.
    let group = first.id() as i32;
    // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
        libc::kill(shell, libc::SIGKILL);
    }
    first.wait().expect("claude is gone");

    // The learner saves src/main.rs in Paige's editor, edits notes.md in their own and
    // creates src/new.rs.
    let url = format!("ws://127.0.0.1:{}/ws?token={token}", info["port"]);
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.expect("ws");
    let save = json!({"type": "file:save", "payload": {"path": "src/main.rs", "content": "fn main() { learner() }\n"}});
    socket.send(Message::Text(save.to_string().into())).await.expect("send");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let frame = tokio::time::timeout_at(deadline, socket.next()).await.expect("the save is acknowledged");
        if frame.is_some_and(|m| m.is_ok_and(|m| m.to_text().is_ok_and(|t| t.contains("fs:save_ack")))) {
            break;
        }
    }
    std::fs::write(project.join("notes.md"), "# notes\nthe learner's own editor\n").expect("edit");
    std::fs::write(project.join("src/new.rs"), "// the learner's new file\n").expect("create");

    // A new Claude Code session's turn ends.
    let fake = FakeAnthropic::start().await.expect("fake");
    let (world, events, _) = claude_runs(world, claude, &[], Runner::default(), &fake, &["Bash"]).await;
    assert!(events.iter().any(|e| e["type"] == "result"), "the turn finished: {events:?}");
    let read = |rel: &str| std::fs::read_to_string(world.project().join(rel)).ok();
    assert_eq!(read("src/main.rs").as_deref(), Some("fn main() { learner() }\n"));
    assert_eq!(read("notes.md").as_deref(), Some("# notes\nthe learner's own editor\n"));
    assert_eq!(read("src/new.rs").as_deref(), Some("// the learner's new file\n"));
    paige.wait_for("lost its end", Duration::from_secs(10));
    drop(socket);
    drop(paige);
}

/// Through `paige hook` and `paige restore` as Claude Code and the learner run them: a new
/// file a command made is moved into the version store and restored with its folder; a
/// command whose PostToolUse never came leaves the learner's later edits at the Stop.
#[test]
fn through_paige_hook_a_new_file_is_restorable_and_a_lost_end_undoes_nothing() {
    let (world, mut paige) = serving_a_project();
    let project = world.project();
    let bash = |fixture: &str, id: &str| {
        let patch = json!({"tool_use_id": id, "tool_input": {"command": "cargo build", "description": "scripted"}});
        world.run_stdin(&["hook", fixture], &payload(&world, fixture_name(fixture), patch))
    };
    fn fixture_name(slug: &str) -> &'static str {
        match slug {
            "pre-tool-use" => "PreToolUse-Bash",
            _ => "PostToolUse-Bash",
        }
    }
    // An unknown command runs, watched.
    crate::let_through(bash("pre-tool-use", "t1"));
    std::fs::create_dir_all(project.join("src/gen")).expect("mkdir");
    std::fs::write(project.join("src/gen/new.rs"), "// generated\n").expect("new");
    let (_, stdout, stderr) = bash("post-tool-use", "t1");
    assert!(format!("{stdout}{stderr}").contains("src/gen/new.rs (created): undone"), "{stdout}{stderr}");
    assert!(!project.join("src/gen/new.rs").exists());
    std::fs::remove_dir(project.join("src/gen")).expect("rmdir");
    let project_arg = project.display().to_string();
    let (status, listing, _) = world.run(&["restore", "--project", &project_arg, "--file", "src/gen/new.rs"]);
    assert!(status.success());
    let line = listing.lines().find(|l| l.contains("undone")).unwrap_or_else(|| panic!("{listing}"));
    assert!(line.contains("(not in the project now)"), "{line}");
    let id = line.split_whitespace().next().expect("id");
    assert!(world.run(&["restore", "--project", &project_arg, id]).0.success());
    assert_eq!(std::fs::read_to_string(project.join("src/gen/new.rs")).ok().as_deref(), Some("// generated\n"));

    // Interrupted: no PostToolUse. The learner edits and creates; then the turn's Stop.
    crate::let_through(bash("pre-tool-use", "t2"));
    std::fs::write(project.join("src/main.rs"), "fn main() { learner() }\n").expect("edit");
    std::fs::write(project.join("src/mine.rs"), "// the learner's\n").expect("create");
    let (status, _, _) = world.run_stdin(&["hook", "stop"], &payload(&world, "Stop", json!({})));
    assert_eq!(status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(project.join("src/main.rs")).ok().as_deref(), Some("fn main() { learner() }\n"));
    assert_eq!(std::fs::read_to_string(project.join("src/mine.rs")).ok().as_deref(), Some("// the learner's\n"));
    paige.wait_for("lost its end", Duration::from_secs(10));
}

/// A call that creates 90,000 files (a generator, an unpacked archive), then another call,
/// through `paige hook` as Claude Code runs it. While Paige undoes them, no hook is ever
/// answered fail-open: each PreToolUse is either answered (the call runs, watched) or denied
/// because Paige could not check it in time — and a PreToolUse Paige only gets to after its
/// hook stopped waiting opens no window (Claude Code never runs that call, so no PostToolUse
/// would close it, and the next call's changes would be taken for an interrupted one's).
/// Here the hooks wait 500 ms, so the undo outlasts them. Once it is done, the files are in
/// the version store, the next call is watched, and the learner's file is as it was. The file
/// count is `PAIGE_BIG_CALL_FILES` (5,000 when unset, as in CI; 90,000 for the full case).
#[test]
fn a_call_that_creates_many_files_never_lets_the_next_call_through_unwatched() {
    let files: usize = std::env::var("PAIGE_BIG_CALL_FILES").ok().and_then(|n| n.parse().ok()).unwrap_or(5_000);
    let (world, paige) = serving_a_project();
    let project = world.project();
    let bash = |fixture: &str, id: &str, wait_ms: &str| {
        let name = if fixture == "pre-tool-use" { "PreToolUse-Bash" } else { "PostToolUse-Bash" };
        let patch = json!({"tool_use_id": id, "tool_input": {"command": "cargo build", "description": "scripted"}});
        let started = std::time::Instant::now();
        let mut hook = Command::new(PAIGE);
        hook.args(["hook", fixture]).env_clear().envs(world.env.iter().cloned());
        hook.env("PAIGE_HOOK_TIMEOUT_MS", wait_ms).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = hook.spawn().expect("paige hook");
        let _ = child.stdin.take().expect("stdin").write_all(payload(&world, name, patch).as_bytes());
        let out = child.wait_with_output().expect("paige hook ends");
        let told = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.code(), told, started.elapsed())
    };
    let (code, told, _) = bash("pre-tool-use", "big", "3000");
    assert_eq!(code, Some(0), "{told}");
    let made = std::time::Instant::now();
    for i in 0..files {
        let dir = project.join(format!("gen/d{:03}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir_all(&dir).expect("mkdir");
        }
        std::fs::write(dir.join(format!("f{i}.txt")), i.to_string()).expect("write");
    }
    eprintln!("{files} files made in {:?}", made.elapsed());
    let settle = std::time::Instant::now();
    let (_, told, took) = bash("post-tool-use", "big", "500");
    eprintln!("PostToolUse after {files} new files: {took:?}: {:.200}", told);
    let deadline = std::time::Instant::now() + Duration::from_secs(900);
    let (mut calls, mut denied) = (0, 0);
    loop {
        calls += 1;
        let id = format!("next{calls}");
        let (code, told, took) = bash("pre-tool-use", &id, "500");
        // Paige's refusal is Claude Code's structured decision (exit 0); the hook's own, when
        // Paige did not answer in time, is exit 2.
        let refused = told.contains(r#""permissionDecision":"deny""#);
        match code {
            Some(0) if !refused => {
                assert!(!told.contains("did not answer"), "answered fail-open: {told}");
                std::fs::write(project.join("src/extra.rs"), "// the next call's\n").expect("write");
                let (_, told, _) = bash("post-tool-use", &id, "30000");
                assert!(told.contains("src/extra.rs (created): undone"), "the next call is watched: {told:.2000}");
                eprintln!(
                    "the next call ran, watched, {:?} after the PostToolUse ({took:?}); {denied} denied before it",
                    settle.elapsed()
                );
                break;
            }
            // Denied, never run: either the hook stopped waiting (fail closed), or Paige got to
            // it past the hook's deadline and said so instead of opening a window.
            Some(0 | 2) => {
                let late = told.contains("answered after the hook had stopped waiting");
                assert!(told.contains("denied (fail closed)") || late, "{told}");
                denied += 1;
            }
            other => panic!("the next PreToolUse exited {other:?}: {told}"),
        }
        assert!(std::time::Instant::now() < deadline, "the undo of {files} files never ended");
    }
    assert!(denied > 0, "the undo outlasted the hooks' wait, as this test needs");
    assert_eq!(walkdir_count(&project.join("gen")), 0, "every generated file was undone");
    assert_eq!(std::fs::read_to_string(project.join("src/main.rs")).ok().as_deref(), Some("fn main() {}\n"));
    drop(paige);
}

/// A project holding `src/main.rs` and a `paige serve` for it.
fn serving_a_project() -> (World, crate::Running) {
    let world = World::ready();
    std::fs::create_dir_all(world.project().join("src")).expect("mkdir");
    std::fs::write(world.project().join("src/main.rs"), "fn main() {}\n").expect("main");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    (world, paige)
}

/// Regular files under `dir` (0 when it is gone).
fn walkdir_count(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries.flatten().map(|e| if e.file_type().is_ok_and(|t| t.is_dir()) { walkdir_count(&e.path()) } else { 1 }).sum()
}

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

/// A `paige serve` for the learner's project that runs Claude Code in the jail (Paige decides
/// at its start, so bwrap must be on its PATH); `None`, said why, where bubblewrap cannot run.
fn jailing_paige() -> Option<(World, crate::Running)> {
    if !crate::guard::jail_runs() {
        return None;
    }
    let mut world = World::ready();
    world.set("PATH", &std::env::var("PATH").unwrap_or_default());
    learner_project(&world);
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    Some((world, paige))
}

pub(crate) fn learner_project(world: &World) {
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
    let Some((world, paige)) = jailing_paige() else { return };
    // The project's test script is read-only to the hooks (it runs the learner's code,
    // watched) — and here it writes the learner's file: the jail is what stops it, so the
    // detector finds nothing to undo.
    let script = r#"{"name": "p", "scripts": {"test": "echo x >> src/main.rs; echo append-rc=$?"}}"#;
    std::fs::write(world.project().join("package.json"), script).expect("package.json");
    // The outputs are computed, so the model's own request (the command) never holds them.
    let turns = ["ls src && echo listed-in-$((6*7))", "npm test"];
    let (told, events) = paige_claude(&world, &claude, &turns, &[]).await;
    let results: Vec<&str> =
        told.match_indices("tool_result").map(|(i, _)| &told[i..(i + 400).min(told.len())]).collect();
    assert!(told.contains("main.rs") && told.contains("listed-in-42"), "a read-only command ran: {results:?}");
    assert!(told.contains("src/main.rs: Read-only file system") && !told.contains("append-rc=0"), "{results:?}");
    assert!(!told.contains("Paige undid"), "nothing reached the project for the detector to undo: {told:.4000}");
    assert_eq!(std::fs::read_to_string(world.project().join("src/main.rs")).expect("main"), "fn main() {}\n");
    assert!(
        events.iter().any(|e| e["subtype"] == "hook_response" && e["hook_event"] == "SessionStart"),
        "Paige's hooks ran inside the jail"
    );
    drop(paige);
}

/// A Paige started with `PAIGE_JAIL=0` has `paige claude` launch Claude Code without the
/// read-only view but under Landlock (`paige confine`, the layer that needs no user
/// namespace): the same read-only command still runs through the real Claude Code, and
/// `paige claude --dry-run` shows the command without bubblewrap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paige_claude_without_the_jail_runs_claude_directly_and_the_hooks_still_hold() {
    let Some(claude) = crate::claude::claude() else { return };
    let mut world = World::ready();
    world.set("PATH", &std::env::var("PATH").unwrap_or_default()).set("PAIGE_JAIL", "0").set("PAIGE_LANDLOCK", "1");
    learner_project(&world);
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    let claude_dir = std::path::Path::new(&claude).parent().expect("dir").display().to_string();
    let path = format!("{claude_dir}:{}", std::env::var("PATH").unwrap_or_default());
    let mut dry = world.command(&["claude", "--dry-run"]);
    let out = dry.env("PATH", &path).output().expect("dry run");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("--permission-mode default") && !shown.contains("bwrap"), "{shown}");
    assert!(shown.contains(" confine --policy "), "Landlock and seccomp instead: {shown}");
    // It says which layers are in force, and "read-only" because it is true.
    let said = String::from_utf8_lossy(&out.stderr);
    for layer in ["read-only", "jail off", "Landlock on", "seccomp on", "capabilities on", "hooks on"] {
        assert!(said.contains(layer), "{layer:?} in {said}");
    }
    let (told, _) = paige_claude(&world, &claude, &["ls src && echo listed-plain-$((6*7))"], &[]).await;
    assert!(told.contains("listed-plain-42"), "{told:.3000}");
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

/// A *literal* model: it calls `paige_run_coaching_pipeline` only when the learner's side of
/// the conversation (the last user message) tells it to, and otherwise answers in words.
pub(crate) fn script_literal_model(fake: &FakeAnthropic) {
    let told_to_plan = |r: &paige_fake_anthropic::RecordedRequest| {
        let has_tools = r.body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
        has_tools && just_told(&r.body).contains("Call paige_run_coaching_pipeline once")
    };
    let plan = serde_json::json!({"type": "tool_use", "id": "toolu_plan", "name": "mcp__paige__paige_run_coaching_pipeline",
        "input": {"planText": "1. Find the callback in src/auth.rs", "issueSummary": "Login races the token"}});
    fake.once(Matcher::custom(told_to_plan), Reply::message(vec![plan], "tool_use"));
    fake.always(Matcher::custom(|r| r.call_type().is_none()), Reply::text("Let's look at the code together."));
}

/// What a literal model was just told: the prompt it was sent (the last user message) and the
/// context that prompt's UserPromptSubmit hook attached (Claude Code 2.1.330 sends hook
/// contexts in a trailing system message, each after its "… hook additional context:" label).
/// Not the SessionStart context: that is background, not an instruction. Empty for a request
/// that carries a tool's result.
pub(crate) fn just_told(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages.iter().rposition(|m| m["role"] == "user") else { return String::new() };
    let mut told = match &messages[last]["content"] {
        Value::String(text) => text.clone(),
        blocks => {
            blocks.as_array().into_iter().flatten().filter(|b| b["type"] == "text").map(|b| b.to_string()).collect()
        }
    };
    // A tool's result is not a prompt: nothing new was said, whatever context is still attached.
    if told.trim().is_empty() {
        return told;
    }
    for later in &messages[last..] {
        let text = later.to_string();
        if let Some((_, attached)) = text.split_once("UserPromptSubmit hook additional context:") {
            told.push_str(attached);
        }
    }
    told
}

fn plans(world: &World) -> usize {
    let db = paige_core::db::Db::open(&world.data_dir().join("paige.db"), std::sync::Arc::new(paige_core::SystemClock))
        .expect("db");
    db.sessions().expect("sessions").iter().map(|s| db.plans_for_session(&s.id).expect("plans").len()).sum()
}

/// Issue 28: nothing but Paige tells Claude Code to plan. A session started without a UI,
/// `paige claude` started with no prompt of the learner's: Claude Code's first message is
/// Paige's kickoff, and a literal model plans from it — the plan is stored. The control: with
/// a prompt of the learner's own and no kickoff, the same model never plans.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paige_claude_starts_a_planless_session_with_the_kickoff_and_a_literal_model_plans_it() {
    let Some(claude) = crate::claude::claude() else { return };
    let (fake, world) = crate::coaching::coaching_world().await;
    learner_project(&world);
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let (status, out, err) = world.run(&["session", "start", "--title", "Login race"]);
    assert!(status.success(), "{out}{err}");
    script_literal_model(&fake);
    let claude_dir = std::path::Path::new(&claude).parent().expect("dir").display().to_string();
    let path = format!("{claude_dir}:{}", std::env::var("PATH").unwrap_or_default());
    let base = fake.base_url();
    let run = |args: &[&str]| {
        let mut command = world.command(args);
        command.env("PATH", &path).env("ANTHROPIC_BASE_URL", &base).env("ANTHROPIC_API_KEY", "sk-ant-e2e");
        command
    };
    let common = ["--output-format", "stream-json", "--verbose", "--allowedTools", "mcp__paige__*"];
    // The control first: the learner's own prompt, no kickoff.
    let mut own = run(&[&["claude", "-p", "hello"][..], &common].concat());
    let out = tokio::task::spawn_blocking(move || own.output().expect("claude")).await.expect("join");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(plans(&world), 0, "a literal model told nothing does not plan");
    // Claude Code's exit leaves that session open; the learner starts another (the open one
    // is wrapped up in the background).
    let (status, out, err) = world.run(&["session", "start", "--title", "Login race"]);
    assert!(status.success(), "{out}{err}");
    // Without a plan, the first prompt is Paige's one readable line.
    let dry_run = || {
        let out = run(&["claude", "--kickoff", "--dry-run"]).output().expect("dry run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dry = dry_run();
    assert!(dry.contains("[Paige] Let's plan this session: Login race."), "{dry}");
    let mut kicked = run(&[&["claude", "--kickoff", "-p"][..], &common].concat());
    let out = tokio::task::spawn_blocking(move || kicked.output().expect("claude")).await.expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Claude Code starts by planning it"), "{stderr}");
    assert_eq!(plans(&world), 1, "the kickoff made the literal model plan: {}", String::from_utf8_lossy(&out.stdout));
    // With a plan there is no kickoff any more.
    let dry = dry_run();
    assert!(dry.contains("claude") && !dry.contains("[Paige] Let's plan this session"), "{dry}");
    drop(paige);
}

/// The running Paige decides whether Claude Code runs in the read-only view, and `paige
/// claude` never launches it another way: where bubblewrap cannot make the view (here: not on
/// the launching shell's PATH) it refuses, says why and what to do, and exits 1; a run file
/// that does not say (an older Paige) is refused too.
#[test]
fn paige_claude_refuses_to_launch_unjailed_for_a_paige_that_jails() {
    let Some((world, paige)) = jailing_paige() else { return };
    // A PATH with `claude` (any executable by that name) but no bwrap.
    let bin = tempfile::tempdir().expect("bin");
    let fake_claude = bin.path().join("claude");
    std::fs::write(&fake_claude, "#!/bin/sh\nexit 0\n").expect("claude");
    std::fs::set_permissions(&fake_claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let mut dry = world.command(&["claude", "--dry-run"]);
    let out = dry.env("PATH", bin.path()).output().expect("paige claude");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("runs Claude Code in a read-only view") && stderr.contains("PAIGE_JAIL=0"), "{stderr}");
    drop(paige);

    // A run file without the decision: refused, with what to do.
    let run_file = world.data_dir().join("run/server.json");
    let mut info: Value = serde_json::from_str(&std::fs::read_to_string(&run_file).unwrap_or_default())
        .unwrap_or_else(|_| serde_json::json!({}));
    if info.get("pid").is_none() {
        // `paige serve` removed its run file on exit: write one as an older Paige would.
        info = serde_json::json!({"pid": std::process::id(), "port": 9, "token": "t", "agentToken": "a",
            "projectDir": world.project(), "startedAt": "2026-11-26T00:00:00Z"});
    } else {
        info.as_object_mut().expect("object").remove("jail");
    }
    std::fs::create_dir_all(run_file.parent().expect("run dir")).expect("mkdir");
    std::fs::write(&run_file, info.to_string()).expect("run file");
    let out = world.command(&["claude", "--dry-run"]).env("PATH", bin.path()).output().expect("paige claude");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("older than this paige claude") && stderr.contains("restart it"), "{stderr}");
}

/// Issue 40, order: `paige claude` started in the learner's terminal *before* the session.
/// Claude Code, idle at its prompt, hears of the session only through what Paige types into
/// it: `paige claude` runs it in a PTY of its own and, once it is quiet, takes what Paige has
/// for it — the kickoff, pasted whole and submitted, once. A `claude` on PATH stands in: it
/// puts its terminal in raw mode, draws a prompt and keeps what it is typed.
#[test]
fn paige_claude_started_before_the_session_is_typed_the_kickoff_once_when_it_is_quiet() {
    // Where Claude Code may write, in the jail too: its own config dir.
    let (world, paige) = world_with_standin_claude("exec cat > \"$CLAUDE_CONFIG_DIR/typed\"");
    let typed = world.data_dir().join("claude/typed");
    // In a terminal (`script`), its input held open: the learner's terminal.
    let screen = std::fs::File::create(world.root.path().join("screen")).expect("screen");
    let mut claude = paige_claude_in_script(&world, screen.into()).spawn().expect("paige claude starts");
    let screen = || std::fs::read_to_string(world.root.path().join("screen")).unwrap_or_default();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !typed.exists() {
        assert!(std::time::Instant::now() < deadline, "Claude Code never started: {}", screen());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&typed).expect("typed"), "", "no session yet: nothing typed");
    // Now the session, as the browser starts it.
    let (status, _, stderr) = world.run(&["session", "start", "--title", "Greet the user"]);
    assert!(status.success(), "{stderr}");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let got = loop {
        let got = std::fs::read_to_string(&typed).unwrap_or_default();
        if got.contains("\u{1b}[201~\r") {
            break got;
        }
        assert!(std::time::Instant::now() < deadline, "the kickoff never reached Claude Code: {got:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    // One line the learner can read; the kickoff itself comes with it as context.
    assert!(got.starts_with("\u{1b}[200~[Paige] Let's plan this session"), "{got:?}");
    assert!(got.contains("Greet the user"), "{got:?}");
    // Once: a later look finds nothing more to type.
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(std::fs::read_to_string(&typed).expect("typed").matches("\u{1b}[200~").count(), 1);
    let _ = claude.kill();
    let _ = claude.wait();
    drop(paige);
}

/// The learner closes the terminal `paige claude` runs in: its Claude Code is hung up as a
/// closed terminal would hang it up, and nothing of it stays running with no one to see it
/// (before, `paige claude` and its Claude Code waited forever on a terminal that was gone).
/// `script` plays the terminal and is killed; a `claude` on PATH stands in, writing its pid.
#[test]
fn closing_the_terminal_paige_claude_runs_in_ends_it_and_its_claude_code() {
    use std::os::unix::process::CommandExt;
    let (world, paige) = world_with_standin_claude("touch \"$CLAUDE_CONFIG_DIR/pid\"; exec sleep 300");
    let pid_file = world.data_dir().join("claude/pid");
    let mut terminal = paige_claude_in_script(&world, std::process::Stdio::null());
    terminal.process_group(0);
    // The shell in that terminal ignores hang-ups (started under `nohup`, as CI runs are):
    // when the terminal goes, no SIGHUP reaches `paige claude`; only its input ends.
    // SAFETY: signal(2) between fork and exec, async-signal-safe.
    unsafe {
        terminal.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        })
    };
    let mut terminal = terminal.spawn().expect("paige claude starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !pid_file.exists() {
        assert!(std::time::Instant::now() < deadline, "Claude Code never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    // What runs for this world's Claude Code: every process whose environment names its
    // config dir (`paige claude`'s jail and Claude Code in it, seen from outside too).
    let marker = format!("CLAUDE_CONFIG_DIR={}", world.data_dir().join("claude").display());
    let running = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .expect("proc")
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                environ.split(|b| *b == 0).any(|var| var == marker.as_bytes())
            })
            .collect()
    };
    assert!(!running().is_empty(), "Claude Code runs");
    // The terminal goes away (its window closed): `script` and its group, killed.
    // SAFETY: kill(2) on the process group `script` leads (ours).
    unsafe { libc::kill(-(terminal.id() as i32), libc::SIGKILL) };
    let _ = terminal.wait();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !running().is_empty() {
        assert!(std::time::Instant::now() < deadline, "left running after the terminal closed: {:?}", running());
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(paige);
}

/// A ready world whose `claude` on PATH is a stand-in — it puts its terminal in raw mode,
/// draws a prompt, then runs `then` — and its `paige serve`, started.
fn world_with_standin_claude(then: &str) -> (World, crate::Running) {
    use std::os::unix::fs::PermissionsExt;
    let mut world = World::ready();
    learner_project(&world);
    let bin = world.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let script = format!("#!/bin/sh\nstty raw -echo\nprintf '> '\n{then}\n");
    std::fs::write(bin.join("claude"), script).expect("claude");
    std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    world.set("PATH", &format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()));
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    (world, paige)
}

/// `paige claude` in a terminal `script` makes, its input held open, its screen to `screen`.
fn paige_claude_in_script(world: &World, screen: std::process::Stdio) -> std::process::Command {
    let line = format!("{} claude", crate::PAIGE);
    let mut terminal = std::process::Command::new("script");
    terminal
        .args(["-qec", &line, "/dev/null"])
        .current_dir(world.cwd())
        .env_clear()
        .envs(world.env.iter().cloned())
        .stdin(std::process::Stdio::piped())
        .stdout(screen)
        .stderr(std::process::Stdio::null());
    terminal
}

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use paige_core::launch::{AgentMode, AgentServer, agent_command};
use paige_core::protocol::TerminalSize;
use paige_core::terminal::{AgentCommand, Terminal, take_utf8};

const COACH: AgentMode = AgentMode::Coach { sandbox: false };

fn server() -> AgentServer {
    AgentServer { port: 4321, token: "tok-123".into(), hook_command: Some("/opt/paige app/paige".into()) }
}

fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    (tempfile::tempdir().expect("project"), tempfile::tempdir().expect("run dir"))
}

#[test]
fn paige_agent_cmd_overrides_the_command_word_by_word() {
    let (project, run) = dirs();
    let cmd =
        agent_command(project.path(), run.path(), &server(), COACH, Some(" bash  --norc "), None, None).expect("cmd");
    assert_eq!((cmd.program, cmd.args), (OsString::from("bash"), vec![OsString::from("--norc")]));
    assert_eq!(cmd.cwd, project.path());
    assert!(std::fs::read_dir(run.path()).expect("run dir").next().is_none(), "no MCP config for an override");
}

#[test]
fn claude_gets_the_generated_mcp_config_persona_and_coach_mode_limits() {
    let (project, run) = dirs();
    let bin = tempfile::tempdir().expect("bin dir");
    let claude = bin.path().join("claude");
    std::fs::write(&claude, "#!/bin/sh\n").expect("fake claude");
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let cmd = agent_command(project.path(), run.path(), &server(), COACH, None, Some(bin.path().as_os_str()), None)
        .expect("cmd");
    assert_eq!(cmd.program, claude.as_os_str());
    let args: Vec<String> = cmd.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let after = |flag: &str| args.iter().position(|a| a == flag).map(|i| args[i + 1].clone()).expect(flag);
    assert_eq!(args[0], "--mcp-config");
    assert_eq!(after("--append-system-prompt"), paige_core::prompts::coach_persona::SYSTEM_PROMPT);
    let denied = args.iter().position(|a| a == "--disallowedTools").expect("coach limits");
    assert_eq!(args[denied + 1..denied + 4], ["Edit", "Write", "NotebookEdit"], "only tools Claude Code has");
    let settings_path = after("--settings");
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).expect("settings")).expect("json");
    let events = settings["hooks"].as_object().expect("hooks");
    assert_eq!(events.len(), 8, "every hook event is wired: {settings}");
    assert_eq!(settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "'/opt/paige app/paige' hook pre-tool-use");
    assert_eq!(settings["permissions"]["allow"], serde_json::json!(["mcp__paige__*"]));
    assert_eq!(std::fs::metadata(&settings_path).expect("settings").permissions().mode() & 0o777, 0o600);
    let env: std::collections::HashMap<String, String> =
        cmd.env.iter().map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned())).collect();
    assert_eq!(env["PAIGE_URL"], "http://127.0.0.1:4321", "paige hook finds this Paige through the environment");
    assert_eq!(env["PAIGE_TOKEN"], "tok-123");

    let config_path = std::path::Path::new(&args[1]);
    assert!(config_path.starts_with(run.path()), "MCP config lives in the run dir, not the project");
    let mode = std::fs::metadata(config_path).expect("config").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(config_path).expect("read")).expect("json");
    assert_eq!(
        config,
        serde_json::json!({"mcpServers": {"paige": {"type": "http", "url": "http://127.0.0.1:4321/mcp",
            "headers": {"Authorization": "Bearer tok-123"}}}})
    );
    assert!(std::fs::read_dir(project.path()).expect("project").next().is_none(), "nothing written to the project");
}

#[test]
fn without_claude_the_terminal_opens_the_users_shell_with_an_install_hint() {
    let (project, run) = dirs();
    let empty = tempfile::tempdir().expect("empty PATH dir");
    let cmd = agent_command(
        project.path(),
        run.path(),
        &server(),
        COACH,
        None,
        Some(empty.path().as_os_str()),
        Some("/bin/zsh"),
    )
    .expect("cmd");
    assert_eq!(cmd.program, OsString::from("/bin/zsh"));
    assert!(cmd.banner.expect("hint").contains("npm install -g @anthropic-ai/claude-code"));
    let fallback = agent_command(project.path(), run.path(), &server(), COACH, None, None, None).expect("cmd");
    assert_eq!(fallback.program, OsString::from("/bin/sh"));
}

fn sh(script: &str) -> AgentCommand {
    AgentCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: std::env::temp_dir(),
        banner: Some("banner\r\n".into()),
        env: vec![("PAIGE_PROBE".into(), "from-paige".into())],
        accepts_nudges: false,
        clear_env: false,
    }
}

fn collect_until(rx: &mpsc::Receiver<String>, needle: &str) -> String {
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen.contains(needle) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => seen += &chunk,
            Err(_) => panic!("never saw {needle:?}; got {seen:?}"),
        }
    }
    seen
}

#[test]
fn terminal_streams_output_takes_input_and_passes_the_environment() {
    let (tx, rx) = mpsc::channel();
    let terminal = Terminal::spawn(
        &sh("read line; echo \"got:$line:$PAIGE_PROBE\""),
        TerminalSize { cols: 80, rows: 24 },
        move |s| {
            let _ = tx.send(s);
        },
    )
    .expect("spawn");
    terminal.write(b"hello\n").expect("write");
    let seen = collect_until(&rx, "got:hello:from-paige");
    assert!(seen.starts_with("banner\r\n"), "{seen:?}");
}

#[test]
fn resize_reaches_the_child() {
    let (tx, rx) = mpsc::channel();
    let terminal = Terminal::spawn(&sh("read x; stty size"), TerminalSize { cols: 80, rows: 24 }, move |s| {
        let _ = tx.send(s);
    })
    .expect("spawn");
    terminal.resize(TerminalSize { cols: 132, rows: 50 }).expect("resize");
    terminal.write(b"\n").expect("write");
    collect_until(&rx, "50 132");
}

/// Running (a zombie waiting for its reaper counts as dead).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

#[test]
fn kill_ends_the_childs_whole_process_group() {
    let (tx, rx) = mpsc::channel();
    let terminal =
        Terminal::spawn(&sh("sleep 300 & echo bg:$!; wait"), TerminalSize { cols: 80, rows: 24 }, move |s| {
            let _ = tx.send(s);
        })
        .expect("spawn");
    let mut seen = collect_until(&rx, "bg:");
    while !seen.split("bg:").nth(1).is_some_and(|rest| rest.contains('\n')) {
        seen += &collect_until(&rx, "");
        seen += &rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
    }
    let pid: i32 = seen
        .split("bg:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {seen:?}"));
    assert!(alive(pid));
    terminal.kill();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "the grandchild {pid} outlived the terminal");
}

/// The process group of `pid`.
fn pgrp(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.split_whitespace().nth(2)?.parse().ok()
}

#[test]
fn kill_ends_a_background_job_in_a_process_group_of_its_own() {
    // `set -m`: job control, as in an interactive shell — each job gets its own group.
    let (tx, rx) = mpsc::channel();
    let terminal =
        Terminal::spawn(&sh("set -m; sleep 120 & echo bg:$!:; wait"), TerminalSize { cols: 80, rows: 24 }, move |s| {
            let _ = tx.send(s);
        })
        .expect("spawn");
    let seen = collect_until(&rx, ":\r");
    let pid: i32 = seen
        .split("bg:")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {seen:?}"));
    let shell = terminal.pid().and_then(|p| i32::try_from(p).ok()).expect("shell pid");
    assert!(alive(pid));
    assert_ne!(pgrp(pid), Some(shell), "the job has a process group of its own");
    // On a thread: a kill that waits for the job would otherwise hang the test.
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        terminal.kill();
        let _ = done_tx.send(());
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "the job {pid} outlived the terminal");
    assert!(done.recv_timeout(Duration::from_secs(5)).is_ok(), "kill returns");
}

#[test]
fn utf8_split_across_reads_is_held_back_until_complete() {
    let bytes = "é€".as_bytes();
    let mut pending = bytes[..3].to_vec(); // "é" and the first byte of "€"
    assert_eq!(take_utf8(&mut pending), "é");
    pending.extend_from_slice(&bytes[3..]);
    assert_eq!(take_utf8(&mut pending), "€");
    let mut invalid = vec![b'a', 0xff, b'b'];
    assert_eq!(take_utf8(&mut invalid), "a\u{fffd}b");
}

#[test]
fn disconnecting_a_connection_kills_its_terminal() {
    let t = super::test_core(&[]);
    let conn = t.core.connect();
    t.core.open_terminal(conn, &sh("sleep 300")).expect("terminal opens");
    assert!(t.core.has_terminal(conn));
    t.core.disconnect(conn);
    assert!(!t.core.has_terminal(conn));
}

#[test]
fn hello_says_terminal_exactly_when_the_ui_has_one_and_memory_only_with_a_store() {
    let t = super::test_core(&[]);
    let hello = serde_json::json!({"type": "connection:hello", "timestamp": 0,
        "payload": {"version": "0.1.0", "platform": "linux", "windowSize": {"width": 1, "height": 1}}})
    .to_string();
    let flags = |conn| {
        let reply: serde_json::Value =
            serde_json::from_str(&t.core.handle_text(conn, &hello).expect("init")).expect("json");
        reply["payload"]["featureFlags"].clone()
    };
    let browser = t.core.connect();
    let window = t.core.connect();
    t.core.open_terminal(window, &sh("sleep 300")).expect("terminal opens");
    assert_eq!(flags(browser)["terminal"], false, "a UI without a terminal");
    let with_terminal = flags(window);
    assert_eq!(with_terminal["terminal"], true, "a desktop window with its PTY");
    // Every feature is built; this core has no memory store, so `memory` is false.
    for built in ["sessions", "observer", "explain", "practice", "review", "dashboard"] {
        assert_eq!(with_terminal[built], true, "{built} is built");
    }
    assert_eq!(with_terminal["memory"], false, "no memory store here");
    t.core.disconnect(window);
}

#[test]
fn a_flood_of_terminal_output_loses_no_ui_message_and_no_output() {
    let t = super::test_core(&[]);
    let mut events = t.core.subscribe();
    let window = t.core.connect();
    let mut output = t.core.open_terminal(window, &sh("yes | head -c 50000000")).expect("terminal opens");
    // The window reads the flood at its own pace while the core broadcasts to the UIs, until
    // the notice that the child ended (the channel stays open for a restart).
    let reader = std::thread::spawn(move || {
        let mut bytes = 0usize;
        while let Some(chunk) = output.blocking_recv() {
            if chunk.contains("Press Enter to start it again") {
                break;
            }
            bytes += chunk.len();
        }
        bytes
    });
    let sent = 3000;
    for i in 0..sent {
        t.core.broadcast(paige_core::protocol::ServerMessage::FsSaveAck(paige_core::protocol::SaveAck {
            path: format!("f{i}"),
            success: true,
            timestamp: 0,
        }));
    }
    let mut received = 0;
    loop {
        match events.try_recv() {
            Ok(paige_core::Event::Ui(_)) => received += 1,
            Ok(_) => {}
            Err(tokio::sync::broadcast::error::TryRecvError::Empty) => break,
            Err(err) => panic!("a UI subscriber lost messages: {err:?}"),
        }
    }
    assert_eq!(received, sent, "every UI message arrived");
    // The child ends when `head` does; every byte of output came through its own channel
    // (a PTY turns each "\n" into "\r\n": 25,000,000 lines of "y").
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !reader.is_finished() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    t.core.close_terminal(window);
    let bytes = reader.join().expect("reader");
    assert!(bytes >= 50_000_000, "{bytes} bytes of output");
}

#[test]
fn a_terminal_whose_output_nobody_reads_still_closes_at_once() {
    let t = super::test_core(&[]);
    let window = t.core.connect();
    let _unread = t.core.open_terminal(window, &sh("yes")).expect("terminal opens");
    // Its channel fills and its reader waits for room; closing must not wait with it.
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    t.core.close_terminal(window);
    assert!(started.elapsed() < Duration::from_secs(2), "closing took {:?}", started.elapsed());
}

#[test]
fn governed_projects_launch_claude_with_all_its_tools_and_no_coach_persona() {
    let (project, run) = dirs();
    let bin = tempfile::tempdir().expect("bin dir");
    std::fs::write(bin.path().join("claude"), "#!/bin/sh\n").expect("fake claude");
    std::fs::set_permissions(bin.path().join("claude"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let cmd = agent_command(
        project.path(),
        run.path(),
        &server(),
        AgentMode::Governed,
        None,
        Some(bin.path().as_os_str()),
        None,
    )
    .expect("cmd");
    let args: Vec<String> = cmd.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    assert!(!args.iter().any(|a| a == "--disallowedTools" || a == "--append-system-prompt"), "{args:?}");
    let settings_at = args.iter().position(|a| a == "--settings").expect("hooks are wired");
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&args[settings_at + 1]).expect("settings")).expect("json");
    assert!(settings["hooks"]["PreToolUse"].is_array());
    assert!(settings.get("sandbox").is_none(), "the OS sandbox is coach mode's");
    // Without a `paige` to run the hooks nothing would check its writes: no write tools then.
    let unhooked = AgentServer { hook_command: None, ..server() };
    let path = Some(bin.path().as_os_str());
    let cmd = agent_command(project.path(), run.path(), &unhooked, AgentMode::Governed, None, path, None).expect("cmd");
    let args: Vec<String> = cmd.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    assert!(args.iter().any(|a| a == "--disallowedTools"), "{args:?}");
}

#[test]
fn the_coach_sandbox_denies_writes_to_exactly_the_learners_paths() {
    let (project, run) = dirs();
    let root = project.path().canonicalize().expect("root");
    for (path, content) in [
        (".gitignore", "target/\nnode_modules/\n"),
        ("Cargo.toml", "[package]\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/bin/tool.rs", "fn main() {}\n"),
        ("web/index.js", "x\n"),
        ("web/node_modules/dep/index.js", "x\n"),
        ("target/debug/app", "x"),
        (".git/HEAD", "ref: refs/heads/main\n"),
    ] {
        std::fs::create_dir_all(root.join(path).parent().expect("parent")).expect("mkdir");
        std::fs::write(root.join(path), content).expect("write");
    }
    let bin = tempfile::tempdir().expect("bin dir");
    std::fs::write(bin.path().join("claude"), "#!/bin/sh\n").expect("fake claude");
    std::fs::set_permissions(bin.path().join("claude"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mode = AgentMode::Coach { sandbox: true };
    let cmd = agent_command(&root, run.path(), &server(), mode, None, Some(bin.path().as_os_str()), None).expect("cmd");
    let args: Vec<String> = cmd.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let settings_at = args.iter().position(|a| a == "--settings").expect("settings");
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&args[settings_at + 1]).expect("settings")).expect("json");
    let sandbox = &settings["sandbox"];
    assert_eq!(sandbox["enabled"], true);
    assert_eq!(sandbox["failIfUnavailable"], true, "never unsandboxed when Paige asked for the sandbox");
    assert_eq!(sandbox["allowUnsandboxedCommands"], false);
    let mut deny: Vec<String> = sandbox["filesystem"]["denyWrite"]
        .as_array()
        .expect("denyWrite")
        .iter()
        .map(|p| p.as_str().expect("path").to_owned())
        .collect();
    deny.sort();
    let abs = |rel: &str| format!("/{}", root.join(rel).display());
    // `src` is all the learner's: denied whole. `web` holds an ignored folder: its learner
    // file is denied, the folder stays writable. Ignored and excluded paths are not denied.
    assert_eq!(deny, [abs(".gitignore"), abs("Cargo.toml"), abs("src"), abs("web/index.js")]);
}

/// The jail runs Claude Code under `bwrap --die-with-parent` (PR_SET_PDEATHSIG), which fires
/// when the *thread* that started it ends. The app opens its terminal from a runtime's
/// blocking-pool thread, which ends after 10 s idle: Claude Code was killed 10 s into every
/// desktop session. A child with a parent-death signal, its terminal opened from a thread
/// that ends at once, keeps running.
#[test]
fn a_child_that_dies_with_its_parent_outlives_the_thread_that_opened_its_terminal() {
    if std::process::Command::new("setpriv").arg("--version").output().is_err() {
        super::skipped("no setpriv (util-linux)");
        return;
    }
    let (tx, rx) = mpsc::channel();
    let command = AgentCommand {
        program: "setpriv".into(),
        args: ["--pdeathsig", "KILL", "--", "sh", "-c", "echo started; read line; echo \"still here: $line\""]
            .map(OsString::from)
            .to_vec(),
        ..sh("")
    };
    // The opening thread ends once the child is running (its parent-death signal set).
    let (terminal, rx) = std::thread::spawn(move || {
        let terminal = Terminal::spawn(&command, TerminalSize { cols: 80, rows: 24 }, move |s| {
            let _ = tx.send(s);
        })
        .expect("spawn");
        collect_until(&rx, "started");
        (terminal, rx)
    })
    .join()
    .expect("the opening thread");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!terminal.has_exited(), "the child was killed when the opening thread ended");
    terminal.write(b"yes\n").expect("write");
    collect_until(&rx, "still here: yes");
}

/// Claude Code asks the terminal about its features when it starts (device attributes, a
/// mode report, its background colour) and hears of focus changes; xterm.js answers through
/// the same input as the learner's keys. Those answers are not the learner typing: a
/// terminal that got only them still takes the kickoff and nudges. Text or an arrow key
/// (a recalled prompt) is typing, and holds them back until Enter.
#[test]
fn the_terminals_own_replies_are_not_the_learner_typing_but_keys_are() {
    let (tx, rx) = mpsc::channel();
    let command = AgentCommand { accepts_nudges: true, ..sh("stty raw -echo; echo drawn; cat > /dev/null") };
    let terminal = Terminal::spawn(&command, TerminalSize { cols: 80, rows: 24 }, move |s| {
        let _ = tx.send(s);
    })
    .expect("spawn");
    collect_until(&rx, "drawn");
    let quiet = Duration::from_millis(50);
    std::thread::sleep(Duration::from_millis(100));
    assert!(terminal.ready_for_nudge(quiet), "drawn and quiet");
    let replies: [&[u8]; 7] = [
        b"\x1b[?1;2c",                             // device attributes
        b"\x1b[?2026;2$y",                         // a mode report (synchronized output)
        b"\x1b[12;40R",                            // cursor position
        b"\x1b[I\x1b[O",                           // focus in, focus out
        b"\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\",       // background colour (OSC, ST)
        b"\x1b]10;rgb:d4d4/d4d4/d4d4\x07\x1b[?0u", // OSC with BEL, keyboard flags
        b"\x1b[<64;10;5M",                         // a wheel event (SGR mouse)
    ];
    for reply in replies {
        terminal.write_input(reply).expect("write");
        assert!(terminal.ready_for_nudge(quiet), "{reply:?} is the terminal's own reply");
    }
    for key in [&b"fix it"[..], b"\x1b[A", b"\x1bOP", b"\x1b[Z"] {
        terminal.write_input(key).expect("write");
        assert!(!terminal.ready_for_nudge(quiet), "{key:?} is the learner's");
        terminal.write_input(b"\r").expect("enter");
        assert!(terminal.ready_for_nudge(quiet), "Enter ends the line");
    }
}

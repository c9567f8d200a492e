//! `paige hook`, `paige intents` and `paige blame` as real processes: fail-closed denials
//! when Paige is down, slow or broken; decisions from a real `paige serve`; the ledger
//! surviving a kill -9 during appends.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Running, World, read_json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/claude-code-hooks");
const START: Duration = Duration::from_secs(10);

/// A recorded payload with the project path rewritten, one session id, and `patch` applied.
pub(crate) fn payload(world: &World, fixture: &str, patch: Value) -> String {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{fixture}.json")).expect("fixture");
    let text = text.replace("/home/learner/project", &world.project().display().to_string());
    let mut value: Value = serde_json::from_str(&text).expect("json");
    value["session_id"] = json!("e2e-session");
    value["transcript_path"] = json!(world.root.path().join("transcript-e2e.jsonl"));
    if let Value::Object(patch) = patch {
        for (k, v) in patch {
            value[k] = v;
        }
    }
    if value["hook_event_name"] == "PreToolUse" {
        record_call(&value);
    }
    value.to_string()
}

/// Writes the call a PreToolUse payload names into its transcript, as Claude Code does beside
/// running the hook: Paige watches only calls the transcript shows.
pub(crate) fn record_call(payload: &Value) {
    let (Some(path), Some(id)) = (payload["transcript_path"].as_str(), payload["tool_use_id"].as_str()) else {
        return;
    };
    let line = json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": id, "name": payload["tool_name"], "input": payload["tool_input"]}]}});
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("transcript");
    writeln!(file, "{line}").expect("transcript line");
}

impl World {
    /// Runs `paige <args>` with `stdin`: (status, stdout, stderr).
    pub fn run_stdin(&self, args: &[&str], stdin: &str) -> (ExitStatus, String, String) {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("paige runs");
        // A command that refuses its arguments may exit before reading stdin at all.
        if let Err(err) = child.stdin.take().expect("stdin").write_all(stdin.as_bytes()) {
            assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {err}");
        }
        let output = child.wait_with_output().expect("output");
        (output.status, String::from_utf8_lossy(&output.stdout).into(), String::from_utf8_lossy(&output.stderr).into())
    }

    fn serve(&self) -> Running {
        let mut paige = self.spawn(&["serve"]);
        paige.wait_for("ready in", START);
        paige
    }
}

fn write_payload(world: &World) -> String {
    payload(world, "PreToolUse-Write", json!({}))
}

fn read_payload(world: &World) -> String {
    payload(world, "PreToolUse-Write", json!({"tool_name": "Read", "tool_input": {"file_path": "/x"}}))
}

/// A server that answers every connection with `reply` after `delay`.
fn fake_paige(reply: &'static [u8], delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                let _ = stream.read(&mut buf);
                std::thread::sleep(delay);
                let _ = stream.write_all(reply);
            });
        }
    });
    url
}

fn assert_fail_closed(world: &World, why: &str) {
    let started = Instant::now();
    let (status, stdout, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &write_payload(world));
    assert_eq!(status.code(), Some(2), "{why}: a Write is denied; stderr: {stderr}");
    assert!(stdout.is_empty(), "{why}: nothing on stdout, got {stdout}");
    assert!(stderr.contains("denied (fail closed)"), "{why}: {stderr}");
    assert!(started.elapsed() < Duration::from_secs(3), "{why}: took {:?}", started.elapsed());
    let (status, stdout, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &read_payload(world));
    assert_eq!(status.code(), Some(0), "{why}: a Read is not denied; stderr: {stderr}");
    assert!(stdout.is_empty(), "{why}: no decision printed for a Read, got {stdout}");
}

#[test]
fn hook_denies_a_write_when_paige_is_not_running() {
    let mut world = World::ready();
    let data = world.data_dir().display().to_string();
    world.set("DATA_DIR", &data);
    assert_fail_closed(&world, "no run file");
    let port = TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    world.set("PAIGE_URL", &format!("http://127.0.0.1:{port}")).set("PAIGE_TOKEN", "t");
    assert_fail_closed(&world, "nothing listening");
}

#[test]
fn hook_denies_a_write_when_paige_is_slower_than_the_timeout() {
    let mut world = World::ready();
    let url =
        fake_paige(b"HTTP/1.1 200 OK\r\nContent-Length: 19\r\n\r\n{\"decision\":\"none\"}", Duration::from_secs(10));
    world.set("PAIGE_URL", &url).set("PAIGE_TOKEN", "t").set("PAIGE_HOOK_TIMEOUT_MS", "300");
    assert_fail_closed(&world, "slow server");
}

#[test]
fn hook_denies_a_write_when_paige_answers_garbage_or_fails() {
    let replies: [&'static [u8]; 4] = [
        b"not http at all",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 18\r\n\r\nhook engine failed",
        b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"decision\":",
    ];
    for reply in replies {
        let mut world = World::ready();
        world.set("PAIGE_URL", &fake_paige(reply, Duration::ZERO)).set("PAIGE_TOKEN", "t");
        assert_fail_closed(&world, &String::from_utf8_lossy(reply));
    }
}

#[test]
fn without_paige_every_shell_command_and_unknown_tool_is_denied_and_reads_pass() {
    let mut world = World::ready();
    let port = TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    world.set("PAIGE_URL", &format!("http://127.0.0.1:{port}")).set("PAIGE_TOKEN", "t");
    let pre = |tool: &str, input: Value| {
        let body = payload(&world, "PreToolUse-Write", json!({"tool_name": tool, "tool_input": input}));
        world.run_stdin(&["hook", "pre-tool-use"], &body)
    };
    // Read-only or not: with nobody to watch, no shell command runs.
    for (tool, input) in [
        ("Bash", json!({"command": "ls"})),
        ("Monitor", json!({"command": "tail -f log"})),
        ("FrobnicateFiles", json!({"path": "a"})),
        ("CronCreate", json!({"cron": "* * * * *", "prompt": "x"})),
    ] {
        let (status, stdout, stderr) = pre(tool, input);
        assert_eq!(status.code(), Some(2), "{tool} is denied; stderr: {stderr}");
        assert!(stdout.is_empty() && stderr.contains("denied (fail closed)"), "{tool}: {stderr}");
    }
    for (tool, input) in [
        ("Read", json!({"file_path": "/x"})),
        ("Grep", json!({"pattern": "x"})),
        ("Glob", json!({"pattern": "*"})),
        ("mcp__paige__get_buffer", json!({"path": "a"})),
    ] {
        let (status, stdout, stderr) = pre(tool, input);
        assert_eq!(status.code(), Some(0), "{tool} passes; stderr: {stderr}");
        assert!(stdout.is_empty(), "{tool}: no decision printed, got {stdout}");
    }
}

#[test]
fn hook_denies_a_pre_tool_use_whose_payload_is_not_json() {
    let world = World::ready();
    let (status, _, stderr) = world.run_stdin(&["hook", "pre-tool-use"], "{not json");
    assert_eq!(status.code(), Some(2), "{stderr}");
}

#[test]
fn hook_rejects_an_unknown_event_by_name() {
    let world = World::ready();
    let (status, _, stderr) = world.run_stdin(&["hook", "pre-tool"], "{}");
    assert_eq!(status.code(), Some(1));
    assert!(stderr.contains("unknown hook event \"pre-tool\"") && stderr.contains("pre-tool-use"), "{stderr}");
}

#[test]
fn in_coach_mode_a_running_paige_denies_writes_and_prints_nothing_for_reads() {
    let world = World::ready();
    let _paige = world.serve();
    let (status, stdout, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &write_payload(&world));
    let reason = crate::refusal(status, &stdout, &stderr);
    assert!(reason.contains("coach mode"), "{reason}");
    let (status, stdout, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &read_payload(&world));
    assert_eq!((status.code(), stdout.as_str()), (Some(0), ""), "{stderr}");
    let (status, stdout, _) = world.run_stdin(&["hook", "session-start"], &payload(&world, "SessionStart", json!({})));
    assert_eq!(status.code(), Some(0));
    let out: Value = serde_json::from_str(&stdout).expect("json on stdout");
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(out["hookSpecificOutput"]["additionalContext"].as_str().expect("context").contains("Session state"));
    let (status, stdout, _) = world.run_stdin(&["hook", "stop"], &payload(&world, "Stop", json!({})));
    assert_eq!((status.code(), stdout.as_str()), (Some(0), ""), "no objection prints nothing, never allow");
}

#[test]
fn hook_finds_paige_through_paige_url_and_token_and_a_wrong_token_fails_closed() {
    let world = World::ready();
    let _paige = world.serve();
    let info = read_json(&world.data_dir().join("run/server.json"));
    let url = format!("http://127.0.0.1:{}", info["port"]);
    let mut direct = World::ready();
    direct.root = tempfile::tempdir().expect("dir");
    std::fs::create_dir_all(direct.cwd()).expect("cwd");
    direct.set("PAIGE_URL", &url).set("PAIGE_TOKEN", info["agentToken"].as_str().expect("agentToken"));
    let (status, stdout, stderr) = direct.run_stdin(&["hook", "PreToolUse"], &write_payload(&world));
    assert!(crate::refusal(status, &stdout, &stderr).contains("coach mode"), "reached paige: {stdout}");
    direct.set("PAIGE_TOKEN", "wrong");
    let (status, _, stderr) = direct.run_stdin(&["hook", "pre-tool-use"], &write_payload(&world));
    assert_eq!(status.code(), Some(2));
    assert!(stderr.contains("fail closed") && stderr.contains("401"), "{stderr}");
}

/// A project under governance: `paige intents init`, then one intent, INT-001, owning
/// `src/weather/**`.
pub(crate) fn governed_world() -> World {
    let world = World::ready();
    let project = world.project().display().to_string();
    let (status, stdout, stderr) = world.run(&["intents", "init", "--project", &project]);
    assert!(status.success(), "{stderr}");
    assert!(stdout.contains("created") && stdout.contains("active_intents.yaml"), "{stdout}");
    std::fs::write(
        world.project().join(".orchestration/active_intents.yaml"),
        "active_intents:\n  - id: INT-001\n    name: Weather\n    status: IN_PROGRESS\n    owned_scope: [\"src/weather/**\"]\n",
    )
    .expect("yaml");
    world
}

#[test]
fn governed_handshake_write_and_blame_through_the_binary() {
    let world = governed_world();
    let project = world.project().display().to_string();
    let _paige = world.serve();
    let hook =
        |event: &str, fixture: &str, patch: Value| world.run_stdin(&["hook", event], &payload(&world, fixture, patch));
    let (_, stdout, _) = hook("user-prompt-submit", "UserPromptSubmit", json!({}));
    assert!(stdout.contains("INT-001") && stdout.contains("select_active_intent"), "{stdout}");
    let (status, stdout, stderr) = hook("pre-tool-use", "PreToolUse-Write", json!({}));
    let reason = crate::refusal(status, &stdout, &stderr);
    assert!(reason.starts_with("State Violation: Reasoning Intercept Required"), "{reason}");
    let select = json!({"tool_name": "mcp__paige__select_active_intent", "tool_input": {"intent_id": "INT-001"}});
    let (status, stdout, stderr) = hook("pre-tool-use", "PreToolUse-mcp-check", select.clone());
    assert_eq!((status.code(), stdout.as_str()), (Some(0), ""), "{stderr}");
    hook("post-tool-use", "PostToolUse-mcp-check", select);
    let file = world.project().join("src/weather/w.rs");
    let write = json!({"tool_input": {"file_path": file, "content": "fn w() {}\n"}});
    crate::let_through(hook("pre-tool-use", "PreToolUse-Write", write.clone()));
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    std::fs::write(&file, "fn w() {}\n").expect("write");
    hook("post-tool-use", "PostToolUse-Write-create", write);
    std::fs::write(&file, "// moved down\nfn w() {}\n").expect("move");
    let (status, stdout, _) = world.run(&["blame", "src/weather/w.rs:2", "--project", &project]);
    assert!(status.success() && stdout.contains("intent INT-001") && stdout.contains("exact content hash"), "{stdout}");
    let (status, stdout, _) = world.run(&["blame", "src/weather/w.rs:1", "--project", &project]);
    assert!(!status.success() && stdout.contains("no mutation"), "{stdout}");
    let (_, stdout, _) = world.run(&["intents", "show", "INT-001", "--project", &project]);
    assert!(stdout.contains("src/weather/w.rs lines 1-1"), "{stdout}");
}

#[test]
fn intents_list_and_reset_work_on_the_files() {
    let world = governed_world();
    let project = world.project().display().to_string();
    let yaml = world.project().join(".orchestration/active_intents.yaml");
    std::fs::write(&yaml, std::fs::read_to_string(&yaml).expect("read").replace("IN_PROGRESS", "BLOCKED")).expect("w");
    let (_, stdout, _) = world.run(&["intents", "list", "--project", &project]);
    assert_eq!(stdout.trim(), "INT-001\tBLOCKED\tWeather\tsrc/weather/**");
    let (status, stdout, stderr) = world.run(&["intents", "reset", "INT-001", "--project", &project]);
    assert!(status.success(), "{stderr}");
    assert!(stdout.contains("BLOCKED -> IN_PROGRESS"), "{stdout}");
    let (_, stdout, _) = world.run(&["intents", "list", "--project", &project]);
    assert!(stdout.contains("INT-001\tIN_PROGRESS"), "{stdout}");
    let (status, _, stderr) = world.run(&["intents", "reset", "INT-404", "--project", &project]);
    assert!(!status.success() && stderr.contains("unknown intent INT-404"), "{stderr}");
    for args in [&["intents", "--help"][..], &["hook", "--help"], &["blame", "--help"], &["intents", "reset", "--help"]]
    {
        let (status, stdout, _) = world.run(args);
        assert!(status.success() && stdout.contains("Usage:"), "{args:?}");
    }
}

fn post_hook(port: u16, token: &str, body: &str) -> bool {
    post_hook_to(port, token, "post-tool-use", body)
}

fn post_hook_to(port: u16, token: &str, event: &str, body: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let request = format!(
        "POST /hooks/{event} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut reply = String::new();
    stream.read_to_string(&mut reply).is_ok() && reply.starts_with("HTTP/1.1 200")
}

fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).map(|t| t.lines().count()).unwrap_or(0)
}

#[test]
fn kill_9_during_1000_ledger_appends_leaves_every_line_parseable() {
    let world = governed_world();
    let mut paige = world.serve();
    let info = read_json(&world.data_dir().join("run/server.json"));
    let port = info["port"].as_u64().expect("port") as u16;
    let token = info["agentToken"].as_str().expect("agentToken").to_owned();
    let trace = world.project().join(".orchestration/agent_trace.jsonl");
    // The writers' session first binds INT-001 (the handshake, as Claude Code's hooks carry
    // it; one session holds an intent): every mutation on the ledger has its intent, so
    // `ledger verify` accepts it whole.
    let agent = info["agentToken"].as_str().unwrap_or(&token).to_owned();
    let select = json!({"session_id": "s", "tool_name": "mcp__paige__select_active_intent",
                        "tool_input": {"intent_id": "INT-001"}});
    for (event, fixture, patch) in [
        ("user-prompt-submit", "UserPromptSubmit", json!({"session_id": "s"})),
        ("pre-tool-use", "PreToolUse-mcp-check", select.clone()),
        ("post-tool-use", "PostToolUse-mcp-check", select),
    ] {
        assert!(post_hook_to(port, &agent, event, &payload(&world, fixture, patch)), "{event}");
    }
    // Each answered PostToolUse of a Write appends one ledger line.
    let written = world.project().join("src/weather/written.rs");
    std::fs::create_dir_all(written.parent().expect("parent")).expect("mkdir");
    std::fs::write(&written, "fn w() {}\n").expect("file");
    let writers: Vec<_> = (0..4)
        .map(|_| {
            let token = token.clone();
            let written = written.clone();
            let body = move |i: usize| {
                json!({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Write",
                       "tool_input": {"file_path": written, "content": format!("// {i}\n")}, "tool_response": {}})
                .to_string()
            };
            std::thread::spawn(move || (0..250).take_while(|i| post_hook(port, &token, &body(*i))).count())
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while line_count(&trace) < 300 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    paige.signal("KILL");
    paige.wait_exit(START);
    let sent: usize = writers.into_iter().map(|w| w.join().expect("writer")).sum();
    assert!(sent < 1000, "paige died mid-way ({sent} of 1000 answered)");
    let text = std::fs::read_to_string(&trace).expect("trace");
    assert!(text.is_empty() || text.ends_with('\n'), "no torn last line");
    let lines = paige_core::governance::ledger::verify(&text)
        .unwrap_or_else(|err| panic!("every line parses and the chain verifies: {err:?}\n{:.3000}", text));
    assert!(lines >= 300, "{lines} lines");
}

#[test]
fn intents_reset_unblocks_a_budget_trip_and_restarts_the_turn_count() {
    let world = governed_world();
    let project = world.project().display().to_string();
    let yaml = world.project().join(".orchestration/active_intents.yaml");
    std::fs::write(&yaml, format!("{}    budget: {{turns: 1}}\n", std::fs::read_to_string(&yaml).expect("read")))
        .expect("w");
    let _paige = world.serve();
    let hook =
        |event: &str, fixture: &str, patch: Value| world.run_stdin(&["hook", event], &payload(&world, fixture, patch));
    let select = json!({"tool_name": "mcp__paige__select_active_intent", "tool_input": {"intent_id": "INT-001"}});
    let bash = |cmd: &str| json!({"tool_name": "Bash", "tool_input": {"command": cmd}});
    let handshake = || {
        hook("user-prompt-submit", "UserPromptSubmit", json!({}));
        crate::let_through(hook("pre-tool-use", "PreToolUse-mcp-check", select.clone()));
        hook("post-tool-use", "PostToolUse-mcp-check", select.clone());
    };
    handshake();
    crate::let_through(hook("pre-tool-use", "PreToolUse-Write", bash("ls 1")));
    let (status, stdout, stderr) = hook("pre-tool-use", "PreToolUse-Write", bash("ls 2"));
    let reason = crate::refusal(status, &stdout, &stderr);
    assert!(reason.starts_with("Budget Exceeded"), "{reason}");
    let (status, _, stderr) = world.run(&["intents", "reset", "INT-001", "--project", &project]);
    assert!(status.success(), "{stderr}");
    handshake();
    // A fresh turn budget after the reset.
    crate::let_through(hook("pre-tool-use", "PreToolUse-Write", bash("ls 3")));
}

#[test]
fn a_breaker_stop_ends_the_session_in_claude_codes_format_and_denies_the_call() {
    let mut world = World::ready();
    let body = r#"{"decision":"stop","reason":"Circuit Breaker: loop detected"}"#;
    let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    let reply: &'static [u8] = Box::leak(reply.into_bytes().into_boxed_slice());
    world.set("PAIGE_URL", &fake_paige(reply, Duration::ZERO)).set("PAIGE_TOKEN", "t");
    let (status, stdout, stderr) = world.run_stdin(&["hook", "pre-tool-use"], &write_payload(&world));
    assert_eq!(status.code(), Some(0), "{stderr}");
    let answer: Value = serde_json::from_str(stdout.trim()).expect("json on stdout");
    assert_eq!(answer["continue"], false);
    assert_eq!(answer["stopReason"], "Circuit Breaker: loop detected");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
}

#[test]
fn ledger_verify_passes_an_intact_chain_and_names_the_first_tampered_line() {
    use paige_core::governance::ledger::{self, NewTrace, TraceKind};
    let world = World::ready();
    let project = world.project().display().to_string();
    assert!(world.run(&["intents", "init", "--project", &project]).0.success());
    let trace = world.project().join(".orchestration/agent_trace.jsonl");
    for i in 0..3 {
        let entry = NewTrace {
            id: format!("e{i}"),
            timestamp: "2026-11-22T10:00:00Z".parse().expect("time"),
            kind: TraceKind::Mutation,
            intent_id: Some("INT-001".into()),
            session_id: "s".into(),
            model: None,
            tool: "Write".into(),
            file: Some(format!("src/f{i}.rs")),
            blocks: Vec::new(),
            file_hash: Some(ledger::sha256_hex(b"x")),
            command: None,
            reason: Some("the intent's work".into()),
        };
        ledger::append(&trace, entry).expect("append");
    }
    let (status, stdout, _) = world.run(&["ledger", "verify", "--project", &project]);
    assert!(status.success(), "{stdout}");
    assert!(stdout.contains("3 lines, the hash chain is intact"), "{stdout}");
    let text = std::fs::read_to_string(&trace).expect("trace");
    std::fs::write(&trace, text.replacen("src/f1.rs", "src/evil.rs", 1)).expect("tamper");
    let (status, stdout, _) = world.run(&["ledger", "verify", "--project", &project]);
    assert_eq!(status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("BROKEN at agent_trace.jsonl line 2"), "{stdout}");
}

#[test]
fn a_restore_completes_even_when_the_hook_gives_up_before_paige_answers() {
    let world = World::ready();
    std::fs::write(world.project().join("main.rs"), "fn main() {}\n").expect("file");
    let paige = world.serve();
    let info = read_json(&world.data_dir().join("run/server.json"));
    let port = info["port"].as_u64().expect("port") as u16;
    let token = info["agentToken"].as_str().expect("agentToken").to_owned();
    let transcript = world.root.path().join("transcript.jsonl");
    let call = |event: &str| {
        json!({"session_id": "s", "hook_event_name": event, "tool_name": "Bash", "tool_use_id": "t1",
               "tool_input": {"command": "cargo build"}, "tool_response": {}, "transcript_path": transcript})
    };
    record_call(&call("PreToolUse"));
    let call = |event: &str| call(event).to_string();
    assert!(post_hook_to(port, &token, "pre-tool-use", &call("PreToolUse")), "the window opens");
    std::fs::write(world.project().join("main.rs"), "// the command\n").expect("change");
    // The PostToolUse is sent and the connection dropped at once, as a hook past its deadline.
    let body = call("PostToolUse");
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let request = format!(
        "POST /hooks/post-tool-use HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(world.project().join("main.rs")).expect("read") != "fn main() {}\n" {
        assert!(Instant::now() < deadline, "the change was not undone after the hook left");
        std::thread::sleep(Duration::from_millis(20));
    }
    paige.signal("TERM");
}

//! Core-to-shell wiring without a window: `tauri::test::mock_builder` with the real core.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use paige_core::Config;
use serde_json::{Value, json};
mod support;

use support::{hello, invoke};
use tauri::test::{MockRuntime, mock_builder, mock_context, noop_assets};
use tauri::{Listener, Manager};

struct App {
    app: tauri::App<MockRuntime>,
    webview: tauri::WebviewWindow<MockRuntime>,
    project: tempfile::TempDir,
    _data: tempfile::TempDir,
}

fn app() -> App {
    app_with(None)
}

fn app_with(terminal: Option<paige_app::TerminalSpec>) -> App {
    let project = tempfile::tempdir().expect("project dir");
    std::fs::create_dir(project.path().join("src")).expect("src");
    std::fs::write(project.path().join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n").expect("file");
    let data = tempfile::tempdir().expect("data dir");
    let config = Config::new(project.path().to_owned(), data.path().to_owned(), "test-key");
    let core = Arc::new(paige_core::Core::open(config, Arc::new(paige_core::SystemClock)).expect("core opens"));
    let launch = paige_app::Launch { env: Default::default(), data_dir: data.path().to_owned() };
    let shell = paige_app::Shell::with_backend(launch, paige_app::Backend::embedded(core, terminal));
    let app = paige_app::wire(mock_builder(), shell).build(mock_context(noop_assets())).expect("app builds");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("webview");
    App { app, webview, project, _data: data }
}

/// Invokes `ui_message` the way the UI's transport does; returns the reply frame, if any.
fn send(webview: &tauri::WebviewWindow<MockRuntime>, frame: Value) -> Option<Value> {
    let reply = invoke(webview, "ui_message", json!({ "frame": frame.to_string() })).expect("command succeeds");
    reply.as_str().map(|text| serde_json::from_str(text).expect("reply frame is JSON"))
}

/// An app whose window terminal runs `agent`, connected; the terminal's output arrives on
/// the receiver.
fn app_with_terminal(agent: &str) -> (App, mpsc::Receiver<String>) {
    let spec = paige_app::TerminalSpec {
        server: paige_core::launch::AgentServer { port: 1, token: "t".into(), hook_command: None },
        agent_override: Some(agent.into()),
    };
    let app = app_with(Some(spec));
    let (tx, rx) = mpsc::channel::<String>();
    app.webview.listen(paige_app::TERMINAL_EVENT, move |event| {
        let _ = tx.send(serde_json::from_str(event.payload()).expect("payload is a JSON string"));
    });
    send(&app.webview, hello());
    (app, rx)
}

/// Collects the `paige://ui` frames the webview receives.
fn ui_events(app: &App) -> mpsc::Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    app.app.listen_any(paige_app::UI_EVENT, move |event| {
        let frame: String = serde_json::from_str(event.payload()).expect("payload is a JSON string");
        let _ = tx.send(serde_json::from_str::<Value>(&frame).expect("frame is JSON"));
    });
    rx
}

fn next_of_type(rx: &mpsc::Receiver<Value>, kind: &str) -> Value {
    loop {
        let frame = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("no {kind} event"));
        if frame["type"] == kind {
            return frame;
        }
    }
}

#[test]
fn hello_round_trips_through_the_command_as_connection_init() {
    let app = app();
    let reply = send(&app.webview, hello()).expect("a reply");
    assert_eq!((reply["type"].as_str(), reply["id"].as_str()), (Some("connection:init"), Some("h")));
}

#[test]
fn one_core_connection_per_window() {
    let app = app();
    send(&app.webview, hello());
    send(&app.webview, hello());
    let backend = app.app.state::<paige_app::Shell>().backend().expect("a project is open");
    assert_eq!(backend.core.connection_count(), 1);
}

#[test]
fn core_broadcasts_reach_the_webview_as_paige_ui_events() {
    let app = app();
    let events = ui_events(&app);
    send(&app.webview, hello());
    let tree = next_of_type(&events, "fs:tree");
    assert_eq!(tree["payload"]["root"]["children"][0]["path"], "src");
    send(&app.webview, json!({"type": "file:open", "timestamp": 0, "payload": {"path": "src/lib.rs"}}));
    let content = next_of_type(&events, "fs:content");
    assert_eq!(content["payload"]["content"], "pub fn answer() -> u32 { 42 }\n");
}

#[test]
fn file_save_writes_the_file_and_acks_as_an_event() {
    let app = app();
    let events = ui_events(&app);
    let reply = send(
        &app.webview,
        json!({"type": "file:save", "timestamp": 0, "payload": {"path": "src/lib.rs", "content": "pub fn answer() -> u32 { 43 }\n"}}),
    );
    assert_eq!(reply, None);
    let ack = next_of_type(&events, "fs:save_ack");
    assert_eq!(
        (ack["payload"]["path"].as_str(), ack["payload"]["success"].as_bool()),
        (Some("src/lib.rs"), Some(true))
    );
    let on_disk = std::fs::read_to_string(app.project.path().join("src/lib.rs")).expect("read back");
    assert_eq!(on_disk, "pub fn answer() -> u32 { 43 }\n");
}

#[test]
fn a_bad_frame_is_answered_with_connection_error_not_a_command_failure() {
    let app = app();
    let reply =
        send(&app.webview, json!({"type": "file:open", "timestamp": 0, "payload": {"path": "../../etc/passwd"}}))
            .expect("a reply");
    assert_eq!(reply["type"], "connection:error");
    assert_eq!(reply["payload"]["code"], "PATH_REJECTED");
}

#[test]
fn the_window_terminal_echoes_input_from_a_shell_child() {
    let (app, rx) = app_with_terminal("sh");
    send(
        &app.webview,
        json!({"type": "terminal:input", "timestamp": 0, "payload": {"input": "echo paige-$((40+2))\n"}}),
    );
    let mut seen = String::new();
    while !seen.contains("paige-42") {
        seen +=
            &rx.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("no echo; terminal showed {seen:?}"));
    }
}

/// Running (a zombie waiting for its reaper counts as dead).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// The number after `name=` in the terminal's output, once the shell has printed it.
fn printed_pid(seen: &str, name: &str) -> Option<i32> {
    // The echoed command line holds `name=$`..., never `name=` and a digit.
    seen.match_indices(&format!("{name}=")).find_map(|(at, key)| {
        let digits: String = seen[at + key.len()..].chars().take_while(char::is_ascii_digit).collect();
        // Complete only once a non-digit follows (the line's end).
        (!digits.is_empty() && seen.len() > at + key.len() + digits.len()).then(|| digits.parse().ok()).flatten()
    })
}

/// What the app does on exit (`RunEvent::Exit` shuts the core down): the window's shell dies,
/// and so does a job it put in the background — in a process group of its own, since an
/// interactive shell on a terminal has job control.
/// (The mock runtime never emits `WindowEvent::Destroyed`, so closing a window is covered by
/// ui/tests/desktop-e2e.mjs in the real window.)
#[test]
fn core_shutdown_kills_the_window_shell_and_its_background_job() {
    let (app, rx) = app_with_terminal("sh -i");
    send(
        &app.webview,
        json!({"type": "terminal:input", "timestamp": 0, "payload": {"input": "echo SHELL=$$; sleep 120 & echo JOB=$!\n"}}),
    );
    let mut seen = String::new();
    let (shell, job) = loop {
        if let (Some(shell), Some(job)) = (printed_pid(&seen, "SHELL"), printed_pid(&seen, "JOB")) {
            break (shell, job);
        }
        seen +=
            &rx.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("no PIDs; terminal showed {seen:?}"));
    };
    assert!(alive(shell) && alive(job), "shell {shell} and job {job} run before shutdown");
    let core = app.app.state::<paige_app::Shell>().backend().expect("a project is open").core.clone();
    // On a thread: a shutdown that waits for the job would otherwise hang the test.
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || done_tx.send(tauri::async_runtime::block_on(core.shutdown()).is_ok()));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while (alive(shell) || alive(job)) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(shell), "the shell {shell} outlived the app");
    assert!(!alive(job), "the background job {job} outlived the app");
    assert_eq!(done.recv_timeout(Duration::from_secs(5)), Ok(true), "shutdown finishes");
}

#[test]
fn checked_in_shell_bindings_are_generated_from_the_rust_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/src/bindings/shell.ts");
    let generated = paige_app::bindings::render();
    if std::env::var_os("PAIGE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write the bindings");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "ui/src/bindings/shell.ts is out of date: run `{}` and review the diff",
        paige_app::bindings::REGENERATE
    );
}

#[test]
fn every_command_in_the_bindings_is_registered() {
    let app = app();
    let commands = paige_app::bindings::declarations().into_iter().find(|d| d.name == "Commands").expect("Commands");
    let names: Vec<&str> =
        commands.text.lines().filter_map(|line| line.trim().split_once(": { args:").map(|(name, _)| name)).collect();
    assert_eq!(names.len(), 9, "{names:?}");
    let (opener, _opened) = recording_opener();
    app.app.manage(opener);
    for name in names {
        let args = json!({"frame": hello().to_string(), "path": app.project.path(), "key": "", "tools": [],
            "url": "https://example.com/"});
        if let Err(err) = invoke(&app.webview, name, args) {
            let err = err.to_string();
            assert!(!err.contains("not found") && !err.contains("missing required key"), "{name}: {err}");
        }
    }
}

#[test]
fn command_line_takes_one_project_dir_help_and_version() {
    use paige_app::{Invocation, parse_args};
    let args = |list: &[&str]| parse_args(list.iter().map(std::ffi::OsString::from));
    assert_eq!(args(&[]), Ok(Invocation::Run { project_dir: None }));
    assert_eq!(args(&["proj"]), Ok(Invocation::Run { project_dir: Some("proj".into()) }));
    assert_eq!(args(&["proj", "--help"]), Ok(Invocation::Help));
    assert_eq!(args(&["-V"]), Ok(Invocation::Version));
    assert!(args(&["--frobnicate"]).is_err());
    assert!(args(&["a", "b"]).is_err());
}

/// An opener that records the URLs it is asked to open instead of launching a browser.
fn recording_opener() -> (paige_app::ExternalOpener, mpsc::Receiver<String>) {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let opener = paige_app::ExternalOpener::new(move |url| {
        tx.lock().expect("sender").send(url.to_string()).map_err(|err| err.to_string())
    });
    (opener, rx)
}

#[test]
fn open_external_hands_an_https_link_to_the_opener() {
    let app = app();
    let (opener, opened) = recording_opener();
    app.app.manage(opener);
    let url = "https://doc.rust-lang.org/book/ch09-02-recoverable-errors-with-result.html#propagating-errors";
    assert_eq!(invoke(&app.webview, "open_external", json!({ "url": url })), Ok(Value::Null));
    assert_eq!(opened.recv_timeout(Duration::from_secs(5)).as_deref(), Ok(url));
}

#[test]
fn open_external_refuses_every_link_but_https_without_opening_it() {
    let app = app();
    let (opener, opened) = recording_opener();
    app.app.manage(opener);
    for url in [
        "http://example.com/",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "/docs/intro",
        "example.com",
        "",
        "ftp://example.com/",
    ] {
        let err = invoke(&app.webview, "open_external", json!({ "url": url })).expect_err(url);
        assert_eq!(err["code"], "url_refused", "{url}: {err}");
        assert!(err["message"].as_str().is_some_and(|m| !m.is_empty()), "{url}: {err}");
    }
    assert!(opened.try_recv().is_err(), "a refused link never reaches the opener");
}

#[test]
fn https_url_names_the_refused_scheme_and_caps_the_length() {
    let refused = |url: &str| paige_app::https_url(url).expect_err(url);
    assert!(refused("http://example.com/").message.contains("not http: links"));
    assert!(refused("javascript:alert(1)").message.contains("not javascript: links"));
    assert!(refused("relative/path").message.contains("not an absolute URL"));
    let long = format!("https://example.com/{}", "a".repeat(paige_app::MAX_URL_LEN));
    assert!(refused(&long).message.contains("over the"));
    assert_eq!(
        paige_app::https_url(" https://example.com/a?b=c ").map(|u| u.to_string()),
        Ok("https://example.com/a?b=c".into())
    );
}

#[test]
fn open_external_reports_an_opener_failure_as_opener() {
    let app = app();
    app.app.manage(paige_app::ExternalOpener::new(|_| Err("xdg-open: not found".into())));
    let err = invoke(&app.webview, "open_external", json!({ "url": "https://example.com/" })).expect_err("fails");
    assert_eq!(err["code"], "opener");
    assert!(err["message"].as_str().is_some_and(|m| m.contains("xdg-open: not found")), "{err}");
}

#[test]
fn the_webview_is_granted_no_opener_or_shell_permission() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/capabilities/default.json");
    let capability: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("capability")).expect("JSON");
    let permissions: Vec<&str> =
        capability["permissions"].as_array().expect("permissions").iter().filter_map(Value::as_str).collect();
    assert!(!permissions.is_empty());
    for permission in permissions {
        assert!(permission.starts_with("core:event:"), "the webview may only listen to events, not {permission}");
    }
}

/// The model can read its terminal's environment: the app puts the agent token there (it opens
/// only `/hooks/*` and `/mcp`), never the UI token that opens `/ws` (`file:save`) and `/api`.
#[test]
fn the_terminal_environment_holds_the_agent_token_never_the_ui_token() {
    let project = tempfile::tempdir().expect("project dir");
    let data = tempfile::tempdir().expect("data dir");
    // Under Landlock, as on a machine without user namespaces: the run file then names the UI
    // token (Claude Code cannot read it there), which the terminal must not get either.
    let config = Config {
        agent_jail: paige_core::launch::jail::Confinement::Landlock("no jail in this test".into()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "test-key")
    };
    let env = std::collections::HashMap::from([("PAIGE_AGENT_CMD".to_owned(), "env".to_owned())]);
    let backend = tauri::async_runtime::block_on(paige_app::Backend::start(config, &env)).expect("backend starts");
    let run: Value = serde_json::from_slice(&std::fs::read(data.path().join("run/server.json")).expect("run file"))
        .expect("run file is JSON");
    let (ui, agent) = (run["token"].as_str().expect("token"), run["agentToken"].as_str().expect("agentToken"));
    let local = run["localToken"].as_str().expect("localToken");
    assert!(ui != agent && local != agent);
    let launch = paige_app::Launch { env: Default::default(), data_dir: data.path().to_owned() };
    let shell = paige_app::Shell::with_backend(launch, backend);
    let app = paige_app::wire(mock_builder(), shell).build(mock_context(noop_assets())).expect("app builds");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("webview");
    let (tx, rx) = mpsc::channel::<String>();
    webview.listen(paige_app::TERMINAL_EVENT, move |event| {
        let _ = tx.send(serde_json::from_str(event.payload()).expect("payload is a JSON string"));
    });
    send(&webview, hello());
    let mut seen = String::new();
    let token_line = loop {
        // A whole line: its end arrived too.
        let line = seen.split_once("PAIGE_TOKEN=").and_then(|(_, rest)| rest.split_once('\n'));
        if let Some((token, _)) = line {
            break format!("PAIGE_TOKEN={}", token.trim_end());
        }
        seen.push_str(
            &rx.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("no env; terminal showed {seen:?}")),
        );
    };
    assert_eq!(token_line, format!("PAIGE_TOKEN={agent}"));
    assert!(!seen.contains(ui), "the UI token reached the terminal");
    assert!(!seen.contains(local), "the local tools' token reached the terminal");
    let backend = app.state::<paige_app::Shell>().backend().expect("a project is open");
    tauri::async_runtime::block_on(backend.stop());
}

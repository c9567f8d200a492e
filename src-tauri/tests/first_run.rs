//! The first-run and settings commands without a window: `tauri::test::mock_builder`, real
//! backends (core + localhost server) opened and replaced by the commands.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tauri::Manager;
use tauri::test::{MockRuntime, mock_builder, mock_context, noop_assets};

mod support;

struct App {
    app: tauri::App<MockRuntime>,
    webview: tauri::WebviewWindow<MockRuntime>,
    root: tempfile::TempDir,
}

impl App {
    fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }

    /// A project folder under the test root with one file.
    fn project(&self, name: &str) -> PathBuf {
        let dir = self.root.path().join(name);
        std::fs::create_dir_all(dir.join("src")).expect("project");
        std::fs::write(dir.join("src/main.py"), format!("print('{name}')\n")).expect("file");
        dir.canonicalize().expect("canonical")
    }

    fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        support::invoke(&self.webview, cmd, args)
    }

    fn state(&self) -> Value {
        self.invoke("app_state", json!({})).expect("app_state answers")
    }

    fn open(&self, dir: &Path) -> Result<Value, Value> {
        self.invoke("open_project", json!({ "path": dir }))
    }

    fn hello(&self) -> Value {
        let reply =
            self.invoke("ui_message", json!({ "frame": support::hello().to_string() })).expect("ui_message answers");
        serde_json::from_str(reply.as_str().expect("a reply frame")).expect("frame JSON")
    }

    fn backend(&self) -> std::sync::Arc<paige_app::Backend> {
        self.app.state::<paige_app::Shell>().backend().expect("a project is open")
    }
}

/// A shell launched with `env` and no project: the first-run state.
fn launch(env: &[(&str, &str)]) -> App {
    let root = tempfile::tempdir().expect("root");
    let mut env: std::collections::HashMap<String, String> =
        env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    // The terminal runs a shell that records its PID, so tests can see it killed.
    // (PAIGE_AGENT_CMD is split on whitespace, so the script is a file.)
    let script = root.path().join("terminal.sh");
    let pid_file = root.path().join("terminal.pid");
    std::fs::write(&script, format!("echo $$ >> {}\nexec sleep 600\n", pid_file.display())).expect("script");
    env.entry("PAIGE_AGENT_CMD".into()).or_insert_with(|| format!("sh {}", script.display()));
    let launch = paige_app::Launch { env, data_dir: root.path().join("data") };
    let app = paige_app::wire(mock_builder(), paige_app::Shell::new(launch))
        .build(mock_context(noop_assets()))
        .expect("app builds");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("webview");
    App { app, webview, root }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: i32) -> bool {
    // Zombies count as gone: the terminal reaps its child, but a test process may not.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}

#[test]
fn without_a_project_the_app_reports_none_and_refuses_ui_frames() {
    let app = launch(&[]);
    let state = app.state();
    assert_eq!(state["project"], Value::Null);
    assert_eq!(state["recentProjects"], json!([]));
    assert_eq!(state["apiKey"], json!({"configured": false, "source": "none", "lastFour": null}));
    assert_eq!(state["settingsPath"], app.data().join("settings.json").display().to_string());
    let err = app.invoke("ui_message", json!({"frame": "{}"})).expect_err("no project");
    assert_eq!(err, json!({"code": "no_project", "message": "no project is open"}), "a typed CommandError");
}

#[test]
fn opening_a_project_starts_its_server_and_remembers_it() {
    let app = launch(&[]);
    let project = app.project("alpha");
    let state = app.open(&project).expect("opens");
    assert_eq!(state["project"], json!({"path": project, "name": "alpha"}));
    assert_eq!(state["recentProjects"][0]["path"], json!(project));
    assert_eq!(state["recentProjects"][0]["available"], true);

    assert_eq!(app.hello()["type"], "connection:init", "the UI now talks to alpha's core");
    let run: Value = serde_json::from_slice(&std::fs::read(app.data().join("run/server.json")).expect("run file"))
        .expect("run file JSON");
    assert_eq!(run["projectDir"], json!(project));
    let port = run["port"].as_u64().expect("port");
    let health = std::net::TcpStream::connect(("127.0.0.1", port as u16));
    assert!(health.is_ok(), "the project's server listens on 127.0.0.1:{port}");
    let mode = std::fs::metadata(app.data().join("settings.json")).expect("settings").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_folder_that_does_not_exist_is_refused_and_nothing_changes() {
    let app = launch(&[]);
    let alpha = app.project("alpha");
    app.open(&alpha).expect("opens");
    let missing = app.root.path().join("gone");
    let err = app.open(&missing).expect_err("refused");
    assert_eq!(err, json!({"code": "project_refused", "message": format!("{} does not exist", missing.display())}));
    let file = alpha.join("src/main.py");
    let err = app.open(&file).expect_err("refused");
    assert_eq!(err, json!({"code": "project_refused", "message": format!("{} is not a folder", file.display())}));
    assert_eq!(app.state()["project"]["path"], json!(alpha), "alpha stays open");
    assert_eq!(app.state()["recentProjects"].as_array().map(Vec::len), Some(1));
}

#[test]
fn switching_projects_stops_the_old_core_and_kills_its_terminal() {
    let app = launch(&[]);
    let (alpha, beta) = (app.project("alpha"), app.project("beta"));
    app.open(&alpha).expect("alpha opens");
    app.hello();
    let pid_file = app.root.path().join("terminal.pid");
    wait_until("alpha's terminal to start", || std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')));
    let pid: i32 = std::fs::read_to_string(&pid_file).expect("pid").trim().parse().expect("a pid");
    let old = app.backend();
    assert!(alive(pid));

    let state = app.open(&beta).expect("beta opens");
    assert_eq!(state["project"]["name"], "beta");
    assert!(old.core.shutdown_token().is_cancelled(), "alpha's core was shut down");
    wait_until("alpha's terminal to be killed", || !alive(pid));
    let recent: Vec<&str> =
        state["recentProjects"].as_array().expect("list").iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(recent, ["beta", "alpha"], "most recent first");

    // The window's next frame belongs to beta, with a terminal of its own.
    app.hello();
    assert_eq!(app.backend().core.connection_count(), 1);
    assert_eq!(app.backend().core.config().project_dir, beta);
    // Reopening the open project changes nothing.
    let before = app.backend();
    app.open(&beta).expect("same project");
    assert!(std::sync::Arc::ptr_eq(&before, &app.backend()));
}

#[test]
fn a_saved_key_is_private_and_used_by_the_open_core_at_once() {
    let app = launch(&[]);
    app.open(&app.project("alpha")).expect("opens");
    assert!(!app.backend().core.api().is_configured());

    let state = app.invoke("save_api_key", json!({"key": " sk-ant-test-abcd1234 "})).expect("saved");
    assert_eq!(state["apiKey"], json!({"configured": true, "source": "settings", "lastFour": "1234"}));
    assert!(app.backend().core.api().is_configured(), "no restart needed");
    let path = app.data().join("settings.json");
    assert_eq!(std::fs::metadata(&path).expect("settings").permissions().mode() & 0o777, 0o600);
    let saved: Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    assert_eq!(saved["anthropicApiKey"], "sk-ant-test-abcd1234");
    assert!(!app.state().to_string().contains("sk-ant-test"), "the key never goes back to the UI");

    let state = app.invoke("save_api_key", json!({"key": ""})).expect("removed");
    assert_eq!(state["apiKey"]["source"], "none");
    assert!(!app.backend().core.api().is_configured());
}

#[test]
fn coach_modes_allowed_mcp_tools_are_saved_checked_and_read_by_the_hooks() {
    let app = launch(&[]);
    app.open(&app.project("alpha")).expect("opens");
    assert_eq!(app.state()["allowedMcpTools"], json!([]));
    let tools = json!({"tools": [" mcp__files__read_file ", "", "mcp__db__*", "mcp__db__*"]});
    let state = app.invoke("save_allowed_mcp_tools", tools).expect("saved");
    assert_eq!(state["allowedMcpTools"], json!(["mcp__files__read_file", "mcp__db__*"]));
    let saved: Value =
        serde_json::from_slice(&std::fs::read(app.data().join("settings.json")).expect("read")).expect("json");
    assert_eq!(saved["coach"]["allowedMcpTools"], json!(["mcp__files__read_file", "mcp__db__*"]));
    for bad in ["write_file", "mcp__paige__get_buffer", "mcp__x", "mcp__a b__c"] {
        let err = app.invoke("save_allowed_mcp_tools", json!({"tools": [bad]})).expect_err(bad);
        assert_eq!(err["code"], "settings", "{err}");
    }
    assert_eq!(
        app.state()["allowedMcpTools"],
        json!(["mcp__files__read_file", "mcp__db__*"]),
        "a refusal keeps the list"
    );
}

#[test]
fn the_environment_key_wins_over_a_saved_one() {
    let app = launch(&[("ANTHROPIC_API_KEY", "sk-ant-from-env-9999")]);
    app.open(&app.project("alpha")).expect("opens");
    let state = app.invoke("save_api_key", json!({"key": "sk-ant-saved-1111"})).expect("saved");
    assert_eq!(state["apiKey"], json!({"configured": true, "source": "environment", "lastFour": "9999"}));
}

#[test]
fn recent_projects_show_missing_folders_and_can_be_forgotten() {
    let app = launch(&[]);
    let (alpha, beta) = (app.project("alpha"), app.project("beta"));
    app.open(&alpha).expect("alpha");
    app.open(&beta).expect("beta");
    std::fs::rename(&alpha, app.root.path().join("moved")).expect("move alpha away");
    let state = app.state();
    assert_eq!(state["recentProjects"][1]["available"], false, "{state}");
    let state = app.invoke("forget_project", json!({"path": alpha})).expect("forgotten");
    let names: Vec<&str> =
        state["recentProjects"].as_array().expect("list").iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(names, ["beta"]);
}

#[test]
fn unreadable_settings_are_reported_and_kept_when_a_project_is_remembered() {
    let app = launch(&[]);
    std::fs::create_dir_all(app.data()).expect("data");
    std::fs::write(app.data().join("settings.json"), "{broken").expect("settings");
    let notice = app.state()["notice"].as_str().map(str::to_owned).expect("a notice");
    assert!(notice.contains("settings.json is not valid settings JSON"), "{notice}");
    app.open(&app.project("alpha")).expect("opens anyway");
    assert_eq!(std::fs::read_to_string(app.data().join("settings.json.bad")).expect("kept aside"), "{broken");
    assert_eq!(app.state()["notice"], Value::Null);
}

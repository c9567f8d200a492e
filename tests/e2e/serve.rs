use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::{World, read_json};

const START: Duration = Duration::from_secs(10);

#[test]
fn every_missing_required_variable_is_named_and_exit_code_is_1() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["PROJECT_DIR", "ANTHROPIC_API_KEY"],
            "missing required environment variables: PROJECT_DIR, ANTHROPIC_API_KEY",
        ),
        (&["PROJECT_DIR"], "missing required environment variable: PROJECT_DIR"),
        (&["ANTHROPIC_API_KEY"], "missing required environment variable: ANTHROPIC_API_KEY"),
    ];
    for (unset, expected) in cases {
        let mut world = World::ready();
        for key in unset {
            world.unset(key);
        }
        let (status, _, stderr) = world.run(&["serve"]);
        assert_eq!(status.code(), Some(1), "unset {unset:?}");
        assert!(stderr.contains(expected), "unset {unset:?}: {stderr}");
    }
}

#[test]
fn empty_variables_count_as_missing() {
    let mut world = World::ready();
    world.set("ANTHROPIC_API_KEY", "").set("PROJECT_DIR", "");
    let (status, _, stderr) = world.run(&["serve"]);
    assert_eq!(status.code(), Some(1));
    assert!(stderr.contains("PROJECT_DIR, ANTHROPIC_API_KEY"), "{stderr}");
}

#[test]
fn nonexistent_project_dir_exits_1_naming_the_path() {
    let mut world = World::ready();
    let missing = world.root.path().join("no-such-project").display().to_string();
    world.set("PROJECT_DIR", &missing);
    let (status, _, stderr) = world.run(&["serve"]);
    assert_eq!(status.code(), Some(1));
    assert!(stderr.contains(&format!("PROJECT_DIR does not exist: {missing}")), "{stderr}");
}

#[test]
fn start_up_creates_data_dir_logs_its_settings_and_writes_a_private_run_file() {
    let mut world = World::ready();
    let nested = world.root.path().join("deep/er/data");
    world.set("DATA_DIR", &nested.display().to_string());
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", START);
    assert!(nested.join("paige.db").is_file(), "DATA_DIR created recursively with the database");
    let out = paige.output();
    let project = world.project().canonicalize().expect("canonical");
    assert!(out.contains(&format!("project: {}", project.display())), "{out}");
    assert!(out.contains(&format!("data dir: {}", nested.display())), "{out}");

    let run_file = nested.join("run/server.json");
    let info = read_json(&run_file);
    assert_eq!(std::fs::metadata(&run_file).expect("meta").permissions().mode() & 0o777, 0o600);
    assert_eq!(info["pid"], paige.child.id());
    assert_eq!(info["projectDir"], project.display().to_string());
    // No OS layer in this world: the UI token is in memory only, printed for the learner.
    assert_eq!(info.get("token"), None, "the UI token is not in the run file");
    for kept in ["agentToken", "localToken"] {
        assert_eq!(info[kept].as_str().map(str::len), Some(64), "random {kept}");
    }
    assert_eq!(paige.run_info(&nested)["token"].as_str().map(str::len), Some(64), "random UI token");
    let port = info["port"].as_u64().expect("port");
    assert!(out.contains(&format!("port: {port}")), "{out}");

    let health: serde_json::Value = get_json(&format!("http://127.0.0.1:{port}/health")).expect("health answers");
    assert_eq!(health["status"], "ok");
    assert!(health["uptime"].as_f64().is_some_and(|u| u >= 0.0), "{health}");
}

#[test]
fn flags_override_the_environment_and_dotenv_fills_gaps() {
    let mut world = World::ready();
    world.unset("ANTHROPIC_API_KEY").set("PROJECT_DIR", "/no/such/dir").set("PAIGE_TOKEN", "from-env-token");
    std::fs::write(world.cwd().join(".env"), "ANTHROPIC_API_KEY=sk-from-dotenv\nPAIGE_TOKEN=from-dotenv-token\n")
        .expect(".env");
    let flag_data = world.root.path().join("flag-data");
    let project = world.project().display().to_string();
    let data = flag_data.display().to_string();
    let mut paige = world.spawn(&["serve", "--project", &project, "--data-dir", &data, "--port", "0"]);
    paige.wait_for("ready in", START);
    let printed = paige.wait_for("PAIGE_TOKEN=", START);
    assert!(printed.contains("PAIGE_TOKEN=from-env-token"), "the environment wins over .env: {printed}");
    assert!(flag_data.join("run/server.json").is_file(), "the run file is in --data-dir");
    assert!(!world.data_dir().exists(), "DATA_DIR from env was overridden by --data-dir");
}

#[test]
fn a_key_saved_in_the_desktop_settings_stands_in_for_a_missing_anthropic_api_key() {
    let mut world = World::ready();
    world.unset("ANTHROPIC_API_KEY");
    std::fs::create_dir_all(world.data_dir()).expect("data dir");
    std::fs::write(world.data_dir().join("settings.json"), r#"{"anthropicApiKey": "sk-ant-saved"}"#).expect("settings");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", START);

    // Malformed settings are not a reason to start without saying why.
    let mut world = World::ready();
    world.unset("ANTHROPIC_API_KEY");
    std::fs::create_dir_all(world.data_dir()).expect("data dir");
    std::fs::write(world.data_dir().join("settings.json"), "{oops").expect("settings");
    let (status, stdout, stderr) = world.run(&["serve"]);
    assert_eq!(status.code(), Some(1));
    assert!(stdout.contains("ignoring the saved settings") && stdout.contains("settings.json"), "{stdout}");
    assert!(stderr.contains("missing required environment variable: ANTHROPIC_API_KEY"), "{stderr}");
}

#[test]
fn malformed_dotenv_is_a_clear_error() {
    let world = World::ready();
    std::fs::write(world.cwd().join(".env"), "THIS LINE IS NOT AN ASSIGNMENT\n").expect(".env");
    let (status, _, stderr) = world.run(&["serve"]);
    assert_eq!(status.code(), Some(1));
    assert!(stderr.contains("cannot read .env"), "{stderr}");
}

#[test]
fn sigterm_with_an_open_mcp_session_exits_0_and_removes_the_run_file() {
    let world = World::ready();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", START);
    let run_file = world.data_dir().join("run/server.json");
    let info = read_json(&run_file);
    let url = format!("http://127.0.0.1:{}/mcp", info["port"]);
    let token = info["agentToken"].as_str().expect("agentToken").to_owned();

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let client = runtime.block_on(async {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
        );
        ().serve(transport).await.expect("MCP session opens")
    });

    paige.signal("TERM");
    let status = paige.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{}", paige.output());
    assert!(!run_file.exists(), "server.json removed on clean shutdown");
    let out = paige.output();
    for step in [
        "received SIGTERM",
        "closed 1 MCP session(s)",
        "HTTP server stopped",
        "checkpointing the database",
        "removed",
        "shutdown complete",
    ] {
        assert!(out.contains(step), "missing {step:?} in:\n{out}");
    }
    drop(client);
}

#[test]
fn sigint_also_shuts_down_cleanly() {
    let world = World::ready();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", START);
    paige.signal("INT");
    assert_eq!(paige.wait_exit(Duration::from_secs(10)).code(), Some(0), "{}", paige.output());
    assert!(!world.data_dir().join("run/server.json").exists());
}

#[test]
fn corrupted_database_exits_1_naming_the_file_and_leaves_it_untouched() {
    let world = World::ready();
    std::fs::create_dir_all(world.data_dir()).expect("data dir");
    let db = world.data_dir().join("paige.db");
    let garbage = b"this is not a database, it is a shopping list: eggs, flour\n".repeat(100);
    std::fs::write(&db, &garbage).expect("write");
    let (status, _, stderr) = world.run(&["serve"]);
    assert_eq!(status.code(), Some(1));
    assert!(stderr.contains(&db.display().to_string()) && stderr.contains("corrupted"), "{stderr}");
    assert_eq!(std::fs::read(&db).expect("read"), garbage);
    assert!(!world.data_dir().join("run/server.json").exists(), "no run file for a failed start");
}

#[test]
fn port_in_use_is_reported() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let mut world = World::ready();
    world.set("PORT", &port);
    let (status, _, stderr) = world.run(&["serve"]);
    assert_eq!(status.code(), Some(1));
    assert!(stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")), "{stderr}");
}

#[test]
fn help_explains_serve_and_its_settings() {
    let world = World::empty();
    let (status, stdout, _) = world.run(&["serve", "--help"]);
    assert!(status.success());
    for needle in ["--project", "--port", "--data-dir", "PROJECT_DIR", "ANTHROPIC_API_KEY"] {
        assert!(stdout.contains(needle), "{needle} missing in:\n{stdout}");
    }
    let (status, _, stderr) = world.run(&["frobnicate"]);
    assert_eq!(status.code(), Some(2));
    assert!(stderr.contains("unrecognized subcommand"), "{stderr}");
}

/// A blocking GET returning JSON, on a throwaway runtime.
fn get_json(url: &str) -> Result<serde_json::Value, String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime
        .block_on(async { reqwest::get(url).await.map_err(|e| e.to_string())?.json().await.map_err(|e| e.to_string()) })
}

//! The run file's agent token, and how local tools find it: `paige hook` takes the agent
//! token (hooks and MCP only), `paige session`/`paige memory` the UI token.

use chrono::Utc;
use paige_core::run_info::{self, RunInfo};

fn env(pairs: &[(&str, &str)]) -> std::collections::HashMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn info(agent: Option<&str>) -> RunInfo {
    RunInfo {
        pid: 7,
        port: 4321,
        token: Some("ui-token".into()),
        agent_token: agent.map(Into::into),
        local_token: None,
        jail: None,
        landlock: None,
        no_jail_because: None,
        project_dir: "/p".into(),
        started_at: Utc::now(),
    }
}

#[test]
fn hooks_locate_the_agent_token_and_other_tools_the_ui_token() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().display().to_string();
    run_info::write(dir.path(), &info(Some("agent-token"))).expect("write");
    let raw: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_info::path(dir.path())).expect("read")).expect("json");
    assert_eq!((raw["token"].as_str(), raw["agentToken"].as_str()), (Some("ui-token"), Some("agent-token")));
    let from_file = env(&[("DATA_DIR", &data)]);
    assert_eq!(run_info::locate_agent(&from_file, None).expect("agent").token.expose(), "agent-token");
    assert_eq!(run_info::locate(&from_file, None).expect("ui").token.expose(), "ui-token");
    // In Paige's terminal the environment's token (the agent one) is used as given.
    let in_terminal = env(&[("DATA_DIR", &data), ("PAIGE_URL", "http://127.0.0.1:9"), ("PAIGE_TOKEN", "from-env")]);
    assert_eq!(run_info::locate_agent(&in_terminal, None).expect("agent").token.expose(), "from-env");
}

#[test]
fn a_run_file_from_before_agent_tokens_is_read_and_never_yields_the_ui_token_to_hooks() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().display().to_string();
    std::fs::create_dir_all(dir.path().join("run")).expect("run dir");
    let old = r#"{"pid":7,"port":4321,"token":"ui-token","projectDir":"/p","startedAt":"2026-11-22T10:00:00Z"}"#;
    std::fs::write(run_info::path(dir.path()), old).expect("old run file");
    assert_eq!(run_info::read(dir.path()).expect("read").expect("info").agent_token, None);
    let err = run_info::locate_agent(&env(&[("DATA_DIR", &data)]), None).expect_err("no agent token");
    assert!(err.to_string().contains("no agent token"), "{err}");
    let ui = info(None);
    assert!(serde_json::to_value(&ui).expect("json").get("agentToken").is_none());
}

#[test]
fn the_agent_token_never_shows_in_debug_output() {
    let printed = format!("{:?}", info(Some("agent-secret")));
    assert!(!printed.contains("agent-secret"), "{printed}");
}

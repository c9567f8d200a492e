use std::os::unix::fs::PermissionsExt;

use chrono::Utc;
use paige_core::run_info::{self, RunInfo};

fn info(pid: u32, token: &str) -> RunInfo {
    RunInfo {
        pid,
        port: 4321,
        token: Some(token.into()),
        agent_token: Some("agent".into()),
        local_token: None,
        jail: Some(true),
        landlock: None,
        no_jail_because: None,
        project_dir: "/p".into(),
        started_at: Utc::now(),
    }
}

#[test]
fn run_file_is_owner_only_and_round_trips_in_camel_case() {
    let dir = tempfile::tempdir().expect("dir");
    let ours = info(7, "t1");
    let path = run_info::write(dir.path(), &ours).expect("write");
    assert_eq!(path, dir.path().join("run/server.json"));
    assert_eq!(std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777, 0o600);
    let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    for key in ["pid", "port", "token", "projectDir", "startedAt"] {
        assert!(raw.get(key).is_some(), "{key} missing in {raw}");
    }
    assert_eq!(run_info::read(dir.path()).expect("read"), Some(ours));
}

#[test]
fn removal_leaves_another_instances_file_alone() {
    let dir = tempfile::tempdir().expect("dir");
    run_info::write(dir.path(), &info(8, "theirs")).expect("write");
    assert!(!run_info::remove_if_ours(dir.path(), &info(7, "ours")).expect("remove"));
    assert!(run_info::read(dir.path()).expect("read").is_some());
    assert!(run_info::remove_if_ours(dir.path(), &info(8, "theirs")).expect("remove"));
    assert_eq!(run_info::read(dir.path()).expect("read"), None);
}

#[test]
fn tokens_are_random_and_long() {
    let a = run_info::generate_token().expect("token");
    let b = run_info::generate_token().expect("token");
    assert_eq!(a.expose().len(), 64);
    assert_ne!(a, b);
}

#[test]
fn the_token_never_shows_in_debug_output() {
    let token = run_info::generate_token().expect("token");
    let info = RunInfo { token: Some(token.clone()), ..info(1, "x") };
    for printed in [
        format!("{token:?}"),
        format!("{info:?}"),
        format!("{:?}", paige_core::launch::AgentServer { port: 1, token: token.clone(), hook_command: None }),
    ] {
        assert!(!printed.contains(token.expose()), "{printed}");
        assert!(printed.contains("<redacted>"), "{printed}");
    }
    // On disk, in the run file, it is the plain string local tools read.
    let json = serde_json::to_value(&info).expect("json");
    assert_eq!(json["token"], token.expose());
}

#[test]
fn locate_prefers_paige_url_and_token_then_reads_the_run_file() {
    let dir = tempfile::tempdir().expect("dir");
    let env = |pairs: &[(&str, &str)]| -> std::collections::HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    let data = dir.path().display().to_string();
    let err = run_info::locate(&env(&[("DATA_DIR", &data)]), None).expect_err("nothing running");
    assert!(err.to_string().contains("no running Paige found"), "{err}");
    run_info::write(dir.path(), &info(7, "from-file")).expect("write");
    let found = run_info::locate(&env(&[("DATA_DIR", &data)]), None).expect("found");
    assert_eq!((found.base_url.as_str(), found.token.expose()), ("http://127.0.0.1:4321", "from-file"));
    let env_wins = env(&[("DATA_DIR", &data), ("PAIGE_URL", "http://127.0.0.1:9/"), ("PAIGE_TOKEN", "from-env")]);
    let found = run_info::locate(&env_wins, None).expect("found");
    assert_eq!((found.base_url.as_str(), found.token.expose()), ("http://127.0.0.1:9", "from-env"));
}

#[test]
fn a_start_removes_run_temp_files_left_by_killed_processes_but_not_a_live_ones() {
    let data = tempfile::tempdir().expect("tmp");
    let run = data.path().join("run");
    std::fs::create_dir_all(&run).expect("run dir");
    // No process has a pid above the kernel's limit (2^22), so this one is surely gone.
    let dead = run.join(".paige-tmp-4194305-a1b2c3");
    let unparsable = run.join(".paige-tmp-x");
    let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
    let live = run.join(format!(".paige-tmp-{}-a1b2c3", child.id()));
    for leftover in [&dead, &unparsable, &live] {
        std::fs::write(leftover, r#"{"token":"old"}"#).expect("leftover");
    }
    run_info::write(data.path(), &info(std::process::id(), "new")).expect("write");
    let (dead_left, unparsable_left, live_left) = (dead.exists(), unparsable.exists(), live.exists());
    child.kill().expect("kill");
    let _ = child.wait();
    assert_eq!((dead_left, unparsable_left, live_left), (false, false, true));
    assert_eq!(run_info::read(data.path()).expect("read").expect("run file").token.expect("token").expose(), "new");
}

/// Issue 41: a launch's MCP config and settings (`run/mcp-<pid>.json`, `settings-<pid>.json`)
/// are removed at the next start once the process that wrote them is gone; a running one's
/// stay, and so does anything else in `run/`.
#[test]
fn a_gone_launchs_mcp_config_and_settings_are_swept_at_the_next_start() {
    let dir = tempfile::tempdir().expect("dir");
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).expect("run");
    let gone = 4_000_000_000u32; // above pid_max: never a live process
    let ours = std::process::id();
    for name in
        [format!("mcp-{gone}.json"), format!("settings-{gone}.json"), format!("mcp-{ours}.json"), "notes.json".into()]
    {
        std::fs::write(run.join(name), "{}").expect("write");
    }
    run_info::write(dir.path(), &info(7, "t")).expect("write");
    let mut left: Vec<String> = std::fs::read_dir(&run)
        .expect("list")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    left.sort();
    assert_eq!(left, vec![format!("mcp-{ours}.json"), "notes.json".into(), "server.json".into()]);
}

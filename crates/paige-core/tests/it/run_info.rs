use std::os::unix::fs::PermissionsExt;

use chrono::Utc;
use paige_core::run_info::{self, RunInfo};

fn info(pid: u32, token: &str) -> RunInfo {
    RunInfo { pid, port: 4321, token: token.into(), project_dir: "/p".into(), started_at: Utc::now() }
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
    assert_eq!(a.len(), 64);
    assert_ne!(a, b);
}

//! `DATA_DIR/settings.json`: the desktop app's remembered key and recent projects.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use chrono::{Duration, TimeZone, Utc};
use paige_core::settings::{self, MAX_RECENT_PROJECTS, Settings, SettingsError};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("exists").permissions().mode() & 0o777
}

#[test]
fn no_file_is_the_empty_default() {
    let data = tempfile::tempdir().expect("dir");
    assert_eq!(Settings::load(data.path()).expect("loads"), Settings::default());
}

#[test]
fn a_saved_key_round_trips_in_a_file_only_its_owner_can_read() {
    let data = tempfile::tempdir().expect("dir");
    let dir = data.path().join("fresh/data");
    let mut saved = Settings::default();
    saved.set_api_key("  sk-ant-secret \n");
    saved.save(&dir).expect("saves, creating DATA_DIR");

    assert_eq!(mode(&settings::path(&dir)), 0o600, "the key is a secret");
    assert_eq!(mode(&dir), 0o700);
    let loaded = Settings::load(&dir).expect("loads");
    assert_eq!(loaded.anthropic_api_key.as_deref(), Some("sk-ant-secret"), "trimmed");
    let leftovers: Vec<_> = std::fs::read_dir(&dir).expect("list").flatten().map(|e| e.file_name()).collect();
    assert_eq!(leftovers, ["settings.json"], "no temp file left behind");
}

#[test]
fn an_empty_key_removes_the_stored_one() {
    let mut s = Settings::default();
    s.set_api_key("sk-ant-1");
    s.set_api_key("   ");
    assert_eq!(s.anthropic_api_key, None);
}

#[test]
fn recent_projects_are_most_recent_first_once_each_and_capped() {
    let t0 = Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).single().expect("date");
    let mut s = Settings::default();
    for i in 0..(MAX_RECENT_PROJECTS + 3) {
        s.record_project(Path::new(&format!("/p/{i}")), t0 + Duration::minutes(i as i64));
    }
    assert_eq!(s.recent_projects.len(), MAX_RECENT_PROJECTS);
    assert_eq!(s.recent_projects[0].path, Path::new("/p/12"));
    assert!(!s.recent_projects.iter().any(|r| r.path == Path::new("/p/0")), "the oldest fell off");

    s.record_project(Path::new("/p/5"), t0 + Duration::hours(1));
    assert_eq!(s.recent_projects[0].path, Path::new("/p/5"), "reopening moves it to the top");
    assert_eq!(s.recent_projects.iter().filter(|r| r.path == Path::new("/p/5")).count(), 1);
    assert_eq!(s.recent_projects[0].opened_at, t0 + Duration::hours(1));

    assert!(s.forget_project(Path::new("/p/5")));
    assert!(!s.forget_project(Path::new("/p/5")), "already gone");
    assert!(!s.recent_projects.iter().any(|r| r.path == Path::new("/p/5")));
}

#[test]
fn keys_written_by_another_version_survive_a_save() {
    let data = tempfile::tempdir().expect("dir");
    std::fs::write(settings::path(data.path()), r#"{"theme": "dark", "recentProjects": []}"#).expect("write");
    let mut s = Settings::load(data.path()).expect("loads");
    s.set_api_key("sk-ant-2");
    s.save(data.path()).expect("saves");
    let raw: serde_json::Value =
        serde_json::from_slice(&std::fs::read(settings::path(data.path())).expect("read")).expect("json");
    assert_eq!(raw["theme"], "dark");
    assert_eq!(raw["anthropicApiKey"], "sk-ant-2");
}

#[test]
fn a_malformed_file_is_named_and_kept_aside_when_settings_are_saved_again() {
    let data = tempfile::tempdir().expect("dir");
    std::fs::write(settings::path(data.path()), "{ not json").expect("write");
    let err = Settings::load(data.path()).expect_err("malformed");
    assert!(matches!(err, SettingsError::Malformed { .. }), "{err:?}");
    assert!(err.to_string().contains("settings.json is not valid settings JSON"), "{err}");

    Settings::default().save(data.path()).expect("saves over it");
    assert_eq!(std::fs::read_to_string(data.path().join("settings.json.bad")).expect("kept"), "{ not json");
    assert_eq!(Settings::load(data.path()).expect("now valid"), Settings::default());
}

#[test]
fn a_stored_key_fills_in_only_when_the_environment_has_none() {
    let mut s = Settings::default();
    s.set_api_key("sk-ant-stored");

    let mut env = HashMap::new();
    s.fill_env(&mut env);
    assert_eq!(env["ANTHROPIC_API_KEY"], "sk-ant-stored");

    let mut env = HashMap::from([("ANTHROPIC_API_KEY".to_owned(), "sk-ant-env".to_owned())]);
    s.fill_env(&mut env);
    assert_eq!(env["ANTHROPIC_API_KEY"], "sk-ant-env", "the environment wins");

    let mut env = HashMap::from([("ANTHROPIC_API_KEY".to_owned(), "  ".to_owned())]);
    s.fill_env(&mut env);
    assert_eq!(env["ANTHROPIC_API_KEY"], "sk-ant-stored", "a blank variable counts as unset");
}

#[test]
fn an_unwritable_data_dir_is_a_clear_error() {
    let data = tempfile::tempdir().expect("dir");
    let blocker = data.path().join("file");
    std::fs::write(&blocker, "x").expect("write");
    let err = Settings::default().save(&blocker.join("data")).expect_err("a file is in the way");
    assert!(err.to_string().starts_with("cannot write "), "{err}");
}

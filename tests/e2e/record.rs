//! `paige record` end to end (issue 31): a record exported from DATA_DIR/paige.db verifies
//! with the built binary, pinned to the key `paige record pubkey` prints; a tampered copy or a
//! wrong pinned key exits 1 naming the line.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::sync::Arc;

use paige_core::db::{Db, NewSession, PhaseStatus, SessionStatus};

use crate::World;

/// A world whose database holds two sessions, the first with a completed phase.
fn world_with_history() -> World {
    let world = World::ready();
    std::fs::DirBuilder::new().mode(0o700).create(world.data_dir()).expect("data dir");
    let db = Db::open(&world.data_dir().join("paige.db"), Arc::new(paige_core::SystemClock)).expect("db");
    for (issue, title) in [(Some(7), Some("Read the port".to_owned())), (None, None)] {
        let session = db
            .create_session(NewSession { project_dir: world.project(), issue_number: issue, issue_title: title })
            .expect("session");
        let phase = paige_core::db::NewPhase {
            plan_id: String::new(),
            number: 1,
            title: "Parse it".into(),
            description: "d".into(),
            hint_level: paige_core::db::HintLevel::Region,
            expected_files: vec!["src/main.rs".into()],
            skill_area: Some("parsing".into()),
            hint_reason: None,
            test_filter: None,
        };
        let (_, phases) = db.create_plan_with_phases(&session.id, "1. parse", vec![(phase, vec![])]).expect("plan");
        db.set_phase_status(&phases[0].0.id, PhaseStatus::Complete).expect("complete");
        db.end_session(&session.id, SessionStatus::Completed).expect("end");
    }
    world
}

#[test]
fn an_exported_record_verifies_and_a_tampered_copy_exits_1_naming_the_line() {
    let world = world_with_history();
    let file = world.root.path().join("record.jsonl");
    let file_arg = file.display().to_string();
    let (status, out, err) = world.run(&["record", "export", "--out", &file_arg]);
    assert!(status.success(), "{out}{err}");
    assert!(err.contains("2 sessions") && err.contains(&file_arg), "the summary: {err}");
    let key_file = world.data_dir().join("record-key");
    assert_eq!(std::fs::metadata(&key_file).expect("key made").permissions().mode() & 0o777, 0o600);

    let (status, pubkey, err) = world.run(&["record", "pubkey"]);
    assert!(status.success(), "{err}");
    let pubkey = pubkey.trim().to_owned();
    assert_eq!(pubkey.len(), 64, "{pubkey}");

    let (status, out, err) = world.run(&["record", "verify", &file_arg, "--key", &pubkey]);
    assert!(status.success(), "{out}{err}");
    assert!(out.contains("valid learning record") && out.contains("2 sessions"), "{out}");
    // `--pubkey`: only the key that signed a valid record, for a mentor to pin.
    let (status, out, err) = world.run(&["record", "verify", &file_arg, "--pubkey"]);
    assert!(status.success(), "{out}{err}");
    assert_eq!(out.trim(), pubkey);

    let text = std::fs::read_to_string(&file).expect("record");
    let tampered = world.root.path().join("tampered.jsonl");
    std::fs::write(&tampered, text.replacen("\"hintLevel\":\"region\"", "\"hintLevel\":\"none\"", 1)).expect("write");
    let (status, out, err) = world.run(&["record", "verify", &tampered.display().to_string()]);
    assert_eq!(status.code(), Some(1), "{out}{err}");
    assert!(out.contains("NOT a valid learning record: line 2: changed"), "{out}");

    let wrong = "11".repeat(32);
    let (status, out, err) = world.run(&["record", "verify", &file_arg, "--key", &wrong]);
    assert_eq!(status.code(), Some(1), "{out}{err}");
    assert!(out.contains("line 1:") && out.contains("not the pinned key"), "{out}");
}

#[test]
fn a_record_goes_to_standard_output_without_out() {
    let world = world_with_history();
    let (status, out, err) = world.run(&["record", "export", "--since", "2000-01-01"]);
    assert!(status.success(), "{err}");
    assert!(err.contains("standard output"), "{err}");
    assert!(out.starts_with("{\"type\":\"header\""), "{out}");
    let (status, _, err) = world.run(&["record", "export", "--since", "yesterday"]);
    assert!(!status.success());
    assert!(err.contains("YYYY-MM-DD"), "{err}");
}

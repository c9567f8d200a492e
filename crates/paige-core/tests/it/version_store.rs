//! The version store's eviction (issue 32): bounded batches, off the hook path — the hook
//! only asks, the core's evictor drops the oldest versions in the background — never a path's
//! latest version of its kind, never bytes another version still uses.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use paige_core::db::{Db, VersionKind};
use paige_core::governance::{HookEvent, HookInput, ledger::sha256_hex};
use serde_json::json;

use super::governance::A;

const KIB: usize = 1 << 10;

/// A Bash call `id`, written to the transcript in `data` first, as Claude Code does.
fn bash(data: &Path, id: &str) -> HookInput {
    let transcript = data.join("transcript.jsonl");
    let call = json!({"transcript_path": transcript, "tool_use_id": id, "tool_name": "Bash",
        "tool_input": {"command": "cargo build"}});
    super::governance::record_call(&call);
    HookInput {
        session_id: A.into(),
        transcript_path: Some(transcript),
        tool_name: Some("Bash".into()),
        tool_input: Some(json!({"command": "cargo build"})),
        tool_use_id: Some(id.into()),
        ..Default::default()
    }
}

/// Where the store keeps the bytes of `content`.
fn object(data: &Path, content: &[u8]) -> std::path::PathBuf {
    let sha = sha256_hex(content);
    data.join("versions").join(&sha[..2]).join(sha)
}

#[tokio::test(flavor = "current_thread")]
async fn over_the_cap_the_evictor_drops_old_versions_in_the_background_keeping_latest_ones_and_shared_bytes() {
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    let shared = "s".repeat(200 * KIB);
    std::fs::write(project.path().join("a.txt"), &shared).expect("write");
    std::fs::write(project.path().join("b.txt"), &shared).expect("write");
    let mut config = paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "test");
    config.limits.max_version_store_bytes = 1 << 20;
    // Opened inside the runtime: the evictor runs on it.
    let core = Arc::new(paige_core::Core::open(config, super::clock()).expect("core"));
    let data = core.config().data_dir.clone();
    let root = core.project_root().path().to_owned();
    let versions: Vec<String> = (1..=4u8).map(|round| round.to_string().repeat(600 * KIB)).collect();
    // The hooks run on this thread and never yield: the evictor cannot run until the test
    // awaits, so whatever eviction happens below happens off the hooks' path.
    core.handle_hook(HookEvent::PreToolUse, &bash(&data, "first"));
    core.handle_hook(HookEvent::PostToolUse, &bash(&data, "first"));
    for (round, content) in versions.iter().enumerate() {
        // The learner changes a.txt between calls: each version is 600 KiB.
        std::fs::write(project.path().join("a.txt"), content).expect("write");
        core.handle_hook(HookEvent::PreToolUse, &bash(&data, &format!("r{round}")));
        core.handle_hook(HookEvent::PostToolUse, &bash(&data, &format!("r{round}")));
    }
    let over = core.db().file_versions_bytes().expect("total");
    assert_eq!(over as usize, 200 * KIB + 4 * 600 * KIB, "the hooks evicted nothing themselves");

    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while core.db().file_versions_bytes().expect("total") > 1 << 20 {
        assert!(tokio::time::Instant::now() < deadline, "the store stayed over its cap");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // a.txt's latest version stays; its first one (the shared content) went, but b.txt still
    // uses those bytes, so they stay on disk; the versions in between are gone, bytes too.
    let a = core.db().file_versions(&root, Some("a.txt")).expect("versions");
    assert_eq!(a.iter().map(|v| v.sha256.clone()).collect::<Vec<_>>(), [sha256_hex(versions[3].as_bytes())]);
    let b = core.db().file_versions(&root, Some("b.txt")).expect("versions");
    assert_eq!(b[0].sha256, sha256_hex(shared.as_bytes()));
    assert!(object(&data, shared.as_bytes()).is_file(), "bytes b.txt's version uses were removed");
    assert!(object(&data, versions[3].as_bytes()).is_file());
    for dropped in &versions[..3] {
        assert!(!object(&data, dropped.as_bytes()).exists(), "an unused object stayed");
    }
    assert_eq!(core.db().file_versions_bytes().expect("total") as usize, 200 * KIB + 600 * KIB);
    // The evictor is a task of the core's: shutdown stops it and waits for it.
    tokio::time::timeout(Duration::from_secs(10), core.shutdown()).await.expect("shut down").expect("checkpoint");
}

/// `files` paths with `per_file` versions each, `size` bytes of distinct content apiece, the
/// versions of each round in order: the oldest rows are every file's first version.
fn fill(db: &Db, project: &Path, files: usize, per_file: usize, size: u64) {
    for round in 0..per_file {
        for file in 0..files {
            let sha = sha256_hex(format!("{file}:{round}").as_bytes());
            db.add_file_version(project, &format!("src/f{file}.rs"), &sha, size, 0o644, VersionKind::Seen)
                .expect("add");
        }
    }
}

#[test]
fn thousands_of_versions_over_the_cap_go_in_batches_of_evict_batch_dropping_no_more_than_needed() {
    const EVICT_BATCH: usize = paige_core::detector::Store::EVICT_BATCH;
    let db = Db::open_in_memory(super::clock()).expect("db");
    let project = Path::new("/p");
    let (files, per_file, size) = (5_000, 3, 1_000u64);
    fill(&db, project, files, per_file, size);
    let total = (files * per_file) as u64 * size;
    assert_eq!(db.file_versions_bytes().expect("total"), total);
    // 8,000 versions too many: the 5,000 oldest are every file's first, then 3,000 second ones.
    let over = 8_000u64;
    let cap = total - over * size;
    let (mut batches, mut dropped, mut removed) = (0, 0, 0);
    loop {
        let batch = db.evict_file_versions(cap, EVICT_BATCH, |_| removed += 1).expect("batch");
        batches += 1;
        dropped += batch.dropped;
        assert!(batch.dropped <= EVICT_BATCH);
        if batch.done {
            assert_eq!(batch.bytes, cap);
            break;
        }
    }
    assert_eq!(batches, (over as usize).div_ceil(EVICT_BATCH), "one batch per {EVICT_BATCH} versions");
    assert_eq!((dropped, removed), (8_000, 8_000), "exactly the versions over the cap, each one's bytes");
    assert_eq!(db.file_versions_bytes().expect("total"), cap);
    // Every file keeps its latest version; the oldest went first.
    for file in [0, 2_999, 3_000, 4_999] {
        let kept = db.file_versions(project, Some(&format!("src/f{file}.rs"))).expect("versions");
        assert_eq!(kept[0].sha256, sha256_hex(format!("{file}:2").as_bytes()));
        assert_eq!(kept.len(), if file < 3_000 { 1 } else { 2 }, "f{file}");
    }
}

#[test]
fn eviction_never_drops_a_latest_version_even_when_the_store_stays_over_its_cap() {
    let db = Db::open_in_memory(super::clock()).expect("db");
    let project = Path::new("/p");
    fill(&db, project, 100, 2, 1_000);
    // A seen and a replaced version of one file are each the latest of their kind.
    let replaced = sha256_hex(b"replaced");
    db.add_file_version(project, "src/f0.rs", &replaced, 1_000, 0o644, VersionKind::Replaced).expect("add");
    let mut removed = Vec::new();
    let batch = db.evict_file_versions(0, 10_000, |sha| removed.push(sha.to_owned())).expect("batch");
    assert_eq!((batch.dropped, batch.done), (100, true), "only the first versions could go");
    assert_eq!(batch.bytes, 101 * 1_000);
    assert_eq!(removed.len(), 100);
    let f0 = db.file_versions(project, Some("src/f0.rs")).expect("versions");
    assert_eq!(f0.iter().map(|v| v.kind).collect::<Vec<_>>(), [VersionKind::Replaced, VersionKind::Seen]);
    assert_eq!(f0[1].sha256, sha256_hex(b"0:1"));
    // Nothing more to drop: a further batch is a no-op.
    assert_eq!(db.evict_file_versions(0, 10_000, |_| panic!("nothing to remove")).expect("batch").dropped, 0);
}

#[test]
fn content_another_version_still_uses_keeps_its_bytes_when_an_old_version_of_it_goes() {
    let db = Db::open_in_memory(super::clock()).expect("db");
    let project = Path::new("/p");
    let (same, other) = (sha256_hex(b"same"), sha256_hex(b"other"));
    db.add_file_version(project, "a.rs", &same, 500, 0o644, VersionKind::Seen).expect("add");
    db.add_file_version(project, "b.rs", &same, 500, 0o644, VersionKind::Seen).expect("add");
    db.add_file_version(project, "a.rs", &other, 700, 0o644, VersionKind::Seen).expect("add");
    assert_eq!(db.file_versions_bytes().expect("total"), 1_200, "the shared bytes count once");
    let mut removed = Vec::new();
    let batch = db.evict_file_versions(0, 10, |sha| removed.push(sha.to_owned())).expect("batch");
    assert_eq!(batch.dropped, 1);
    assert!(removed.is_empty(), "b.rs still uses the bytes a.rs's first version held");
    assert_eq!(db.file_versions_bytes().expect("total"), 1_200);
}

#[test]
fn a_database_from_before_the_running_total_gets_its_size_and_evictable_versions_at_migration() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("paige.db");
    let raw = rusqlite::Connection::open(&path).expect("open");
    let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut names: Vec<String> = std::fs::read_dir(&migrations)
        .expect("migrations")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.as_str() < "13")
        .collect();
    names.sort();
    for name in &names {
        let sql = std::fs::read_to_string(migrations.join(name).join("up.sql")).expect("migration");
        raw.execute_batch(&sql).unwrap_or_else(|err| panic!("{name}: {err}"));
    }
    raw.execute_batch(&format!("PRAGMA user_version = {};", names.len())).expect("version");
    for (path, sha, size) in [("a.rs", "x", 10), ("a.rs", "y", 20), ("b.rs", "x", 10), ("a.rs", "z", 30)] {
        raw.execute(
            "INSERT INTO file_versions (project_dir, path, sha256, size, mode, kind, created_at)
             VALUES ('/p', ?1, ?2, ?3, 420, 'seen', '2026-11-22T09:00:00.000Z')",
            rusqlite::params![path, sha, size],
        )
        .expect("old row");
    }
    drop(raw);
    let db = Db::open(&path, super::clock()).expect("migrates");
    assert_eq!(db.file_versions_bytes().expect("total"), 60);
    let mut removed = Vec::new();
    let batch = db.evict_file_versions(0, 10, |sha| removed.push(sha.to_owned())).expect("batch");
    assert_eq!(batch.dropped, 2, "a.rs's two older versions");
    assert_eq!(removed, ["y"], "x is b.rs's latest");
    assert_eq!(batch.bytes, 40);
}

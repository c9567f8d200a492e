//! The version store's eviction (issue 32): 100,000 versions in the table (50,000 files, two
//! versions each, the store at its cap), then one call changes 1,000 files — 1,000 new
//! versions — and eviction brings the store back under its cap.
//!
//! - **old**: the loop eviction used to be, kept here only for comparison: per dropped row,
//!   the store's size (a SUM over the whole table grouped by hash), then the oldest row that
//!   is not its path's latest (a NOT IN over the whole table grouped by path). Timed over a
//!   sample of drops and extrapolated to the 1,000 (the whole run takes minutes).
//! - **new**: `Store::evict`: batches of `Store::EVICT_BATCH` off a partial index, the size
//!   a one-row table the triggers keep.
//!
//! `cargo bench -p paige-core --bench version_store`

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use paige_core::db::{Db, VersionKind};
use paige_core::detector::Store;
use rusqlite::{OptionalExtension, params};

const FILES: usize = 50_000;
const ROUNDS: usize = 2;
const CHANGED: usize = 1_000;
const SIZE: u64 = 1_000;
/// Drops of the old loop actually timed.
const OLD_SAMPLE: usize = 20;

fn sha(text: &str) -> String {
    paige_core::governance::ledger::sha256_hex(text.as_bytes())
}

/// A database of `FILES` × `ROUNDS` versions at its cap, then `CHANGED` new versions; the cap.
fn setup(dir: &Path) -> (Db, u64) {
    let path = dir.join("paige.db");
    let db = Db::open(&path, Arc::new(paige_core::SystemClock)).expect("db");
    {
        let mut raw = rusqlite::Connection::open(&path).expect("open");
        let tx = raw.transaction().expect("tx");
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO file_versions (project_dir, path, sha256, size, mode, kind, created_at)
                     VALUES ('/p', ?1, ?2, ?3, 420, 'seen', '2026-11-22T09:00:00.000Z')",
                )
                .expect("prepare");
            for round in 0..ROUNDS {
                for file in 0..FILES {
                    insert
                        .execute(params![format!("src/f{file}.rs"), sha(&format!("{file}:{round}")), SIZE as i64])
                        .expect("insert");
                }
            }
        }
        tx.commit().expect("commit");
    }
    let cap = db.file_versions_bytes().expect("total");
    for i in 0..CHANGED {
        let file = i * (FILES / CHANGED);
        db.add_file_version(
            Path::new("/p"),
            &format!("src/f{file}.rs"),
            &sha(&format!("{file}:new")),
            SIZE,
            0o644,
            VersionKind::Seen,
        )
        .expect("add");
    }
    (db, cap)
}

/// The old loop, on its own connection: returns how many rows it dropped in `limit` drops.
fn old_evict(path: &Path, max: u64, limit: usize) -> usize {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut dropped = 0;
    while dropped < limit {
        let total: i64 = conn
            .query_row(
                "SELECT COALESCE(SUM(size), 0) FROM (SELECT sha256, MAX(size) AS size FROM file_versions GROUP BY sha256)",
                [],
                |r| r.get(0),
            )
            .expect("total");
        if total as u64 <= max {
            break;
        }
        let oldest: Option<(i64, String)> = conn
            .query_row(
                "SELECT id, sha256 FROM file_versions WHERE id NOT IN
                   (SELECT MAX(id) FROM file_versions GROUP BY project_dir, path, kind)
                 ORDER BY id LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .expect("oldest");
        let Some((id, sha)) = oldest else { break };
        conn.execute("DELETE FROM file_versions WHERE id = ?1", params![id]).expect("delete");
        let _used: i64 = conn
            .query_row("SELECT COUNT(*) FROM file_versions WHERE sha256 = ?1", params![sha], |r| r.get(0))
            .expect("used");
        dropped += 1;
    }
    dropped
}

fn main() {
    let secs = |d: Duration| d.as_secs_f64();
    println!("version store eviction: {} versions, then {CHANGED} new ones over the cap", FILES * ROUNDS);

    let dir = tempfile::tempdir().expect("dir");
    let (db, cap) = setup(dir.path());
    let store = Store::new(dir.path().join("versions"), cap);
    let rows = || db.file_versions(Path::new("/p"), None).expect("versions").len();
    let before = rows();
    let started = Instant::now();
    store.evict(&db).expect("evict");
    let new = started.elapsed();
    assert!(db.file_versions_bytes().expect("total") <= cap);
    let dropped = before - rows();
    let batches = dropped.div_ceil(Store::EVICT_BATCH);
    println!(
        "  new: {:>9.3} s  ({dropped} versions dropped in {batches} batches, {:.1} ms per batch)",
        secs(new),
        secs(new) * 1000.0 / batches.max(1) as f64
    );
    drop(db);

    let dir = tempfile::tempdir().expect("dir");
    let (db, cap) = setup(dir.path());
    drop(db);
    let started = Instant::now();
    let sampled = old_evict(&dir.path().join("paige.db"), cap, OLD_SAMPLE);
    let per_drop = started.elapsed() / sampled.max(1) as u32;
    let old = per_drop * CHANGED as u32;
    println!(
        "  old: {:>9.3} s  ({:.1} ms per dropped version over {sampled} drops, × {CHANGED})",
        secs(old),
        per_drop.as_secs_f64() * 1000.0
    );
    println!("  old / new: {:.0}×", secs(old) / secs(new));
}

//! The learning record (issue 31):
//! - a ~1 GiB record (written here through `record::Writer`: session lines with 64 KiB
//!   titles) verified from disk, with the process's peak RSS (`VmHWM`, reset just before)
//!   before and after: verifying streams, so the peak must stay near one line;
//! - export and verify of a history of 10,000 sessions (3 phases each, a graded question, a
//!   prompt; every tenth a solution shown), built through `Db`'s public API (target ≤ 2 s
//!   each).
//!
//! `cargo bench -p paige-core --bench record`

use std::io::{BufReader, BufWriter};
use std::sync::Arc;
use std::time::{Duration, Instant};

use paige_core::db::{Db, HintLevel, NewPhase, NewQuestion, NewSession, PhaseStatus, SessionStatus};
use paige_core::record::{self, SigningKey, Writer};
use paige_core::{Clock, SystemClock};

const SESSIONS: usize = 10_000;
const RUNS: usize = 5;
const GIB: u64 = 1 << 30;

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let key = SigningKey::from_bytes(&[7; 32]);
    big_record(&dir, &key);
    ten_thousand_sessions(&dir, &key);
}

fn big_record(dir: &tempfile::TempDir, key: &SigningKey) {
    let path = dir.path().join("big.jsonl");
    let title = "t".repeat(64 << 10);
    let started = Instant::now();
    let file = std::fs::File::create(&path).expect("create");
    let mut writer =
        Writer::new(BufWriter::with_capacity(1 << 20, file), key, SystemClock.now(), None).expect("writer");
    let mut bytes = 0u64;
    let mut n = 0u64;
    while bytes < GIB {
        let line = serde_json::json!({
            "type": "session",
            "id": format!("session-{n}"),
            "issueNumber": n,
            "issueTitle": title,
            "status": "completed",
            "startedAt": "2026-11-22T10:00:00.000Z",
            "endedAt": "2026-11-22T11:00:00.000Z",
            "phases": [],
        });
        writer.push(&line).expect("push");
        bytes += title.len() as u64 + 200;
        n += 1;
    }
    let (_, written) = writer.finish().expect("finish");
    let wrote = started.elapsed();
    drop(title);

    reset_peak_rss();
    let before = peak_rss_kib();
    let started = Instant::now();
    let file = std::fs::File::open(&path).expect("open");
    let verified =
        record::verify(BufReader::with_capacity(256 << 10, file), Some(&key.verifying_key())).expect("valid");
    let took = started.elapsed();
    let after = peak_rss_kib();
    assert_eq!(verified.sessions, n);
    let mib = written.bytes as f64 / f64::from(1 << 20);
    println!("learning record of {mib:.0} MiB ({} lines of ~64 KiB), written in {:.2} s", written.lines, secs(wrote));
    println!(
        "  verify: {:.2} s ({:.0} MiB/s)   peak RSS (VmHWM) {} → {} KiB (+{} KiB)",
        secs(took),
        mib / secs(took),
        before,
        after,
        after.saturating_sub(before)
    );
    std::fs::remove_file(&path).expect("remove");
}

fn ten_thousand_sessions(dir: &tempfile::TempDir, key: &SigningKey) {
    let db = Db::open(&dir.path().join("paige.db"), Arc::new(SystemClock)).expect("db");
    let started = Instant::now();
    for i in 0..SESSIONS {
        let session = db
            .create_session(NewSession {
                project_dir: dir.path().to_owned(),
                issue_number: Some(i as i64),
                issue_title: Some(format!("Issue {i}: read the port from the configuration file")),
            })
            .expect("session");
        let phases = (1..=3).map(|n| (phase(n), Vec::new())).collect();
        let (_, stored) = db.create_plan_with_phases(&session.id, "1. a\n2. b\n3. c", phases).expect("plan");
        for (phase, _) in &stored {
            db.set_phase_status(&phase.id, PhaseStatus::Complete).expect("complete");
        }
        let first = &stored[0].0;
        let question = db
            .create_question(NewQuestion {
                session_id: session.id.clone(),
                phase_id: first.id.clone(),
                skill_area: Some("parsing".into()),
                kind: "predict_output".into(),
                question: "What does it return for \" 80 \"?".into(),
                quote: "raw.trim().parse::<u16>()".into(),
                concept: "parsing".into(),
            })
            .expect("question");
        db.answer_question(&question.id, "80").expect("answer");
        db.grade_question(&question.id, "correct", "yes", "").expect("grade");
        db.record_prompt(
            Some(&session.id),
            Some(&first.id),
            "why u16?",
            "conceptual_question",
            "rule",
            paige_core::db::Author::Learner,
        )
        .expect("prompt");
        if i % 10 == 0 {
            db.record_solution_shown(&session.id, Some(&first.id), "src/main.rs", 0.8, 5).expect("solution");
        }
        db.end_session(&session.id, SessionStatus::Completed).expect("end");
    }
    db.checkpoint().expect("checkpoint");
    let built = started.elapsed();

    let mut exported = Vec::new();
    let mut export_times = Vec::new();
    for _ in 0..RUNS {
        exported.clear();
        let started = Instant::now();
        let summary = record::export(&db, key, None, SystemClock.now(), &mut exported).expect("export");
        export_times.push(started.elapsed());
        assert_eq!(summary.sessions, SESSIONS as u64);
    }
    let verify_times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let verified = record::verify(exported.as_slice(), Some(&key.verifying_key())).expect("valid");
            assert_eq!(verified.sessions, SESSIONS as u64);
            started.elapsed()
        })
        .collect();
    let lines = exported.iter().filter(|&&b| b == b'\n').count();
    println!(
        "learning record of {SESSIONS} sessions ({lines} lines, {:.1} MiB; history built in {:.1} s), {RUNS} runs",
        exported.len() as f64 / f64::from(1 << 20),
        secs(built)
    );
    let (export_median, export_max) = stats(export_times);
    let (verify_median, verify_max) = stats(verify_times);
    println!("  export: median {export_median:.3} s   max {export_max:.3} s   (target ≤ 2 s)");
    println!("  verify: median {verify_median:.3} s   max {verify_max:.3} s   (target ≤ 2 s)");
}

fn phase(number: i64) -> NewPhase {
    NewPhase {
        plan_id: String::new(),
        number,
        title: format!("Phase {number}: change the parser"),
        description: "Change the parser.".into(),
        hint_level: HintLevel::File,
        expected_files: vec!["src/main.rs".into()],
        skill_area: Some("parsing".into()),
        hint_reason: None,
        test_filter: None,
    }
}

fn stats(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    (secs(samples[samples.len() / 2]), secs(samples[samples.len() - 1]))
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// The process's peak resident set (`VmHWM`), in KiB; 0 where `/proc` has none.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// Resets `VmHWM` to the current RSS (Linux ≥ 4.0), so the next peak is the verifier's.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

//! `dashboard:state`'s latency (spec Story 12, SC-082: ≤ 100 ms; Paige's target ≤ 10 ms) on a
//! database a year of use could leave: 10,000 sessions over 365 days (each with a plan, a
//! phase, two hints used and an API call), 100,000 actions, 2,000 knowledge gaps and 1,000
//! katas with attempts. Each run builds the whole state — Dreyfus, the period's stats, the
//! active sessions, the katas — as `dashboard:request` does before it answers.
//!   cargo bench -p paige-server --bench dashboard

mod common;
use common::percentile;

use std::sync::Arc;
use std::time::Instant;

use chrono::{Duration, TimeZone, Utc};
use paige_core::db::{
    ActionType, DreyfusStage, HintLevel, KataAttempt, KataConstraint, NewApiCall, NewDreyfusAssessment, NewKataSpec,
    NewKnowledgeGap, NewPhase, NewSession, ProgressEventType, SessionStatus, Severity,
};
use paige_core::protocol::Period;
use paige_core::{Config, Core, ManualClock};
use serde_json::json;

const SESSIONS: usize = 10_000;
const ACTIONS_PER_SESSION: usize = 10;
const GAP_EVERY: usize = 5;
const KATA_EVERY_GAP: usize = 2;
const RUNS: usize = 200;

fn seed(core: &Core, clock: &ManualClock) {
    let db = core.db();
    let severities = [Severity::Low, Severity::Medium, Severity::High];
    let mut gaps = 0;
    for i in 0..SESSIONS {
        let new = NewSession {
            project_dir: core.project_root().path().to_owned(),
            issue_number: (i % 3 != 0).then_some((i % 500) as i64),
            issue_title: Some(format!("Issue {i}")),
        };
        let session = db.create_session(new).expect("session").id;
        let plan = db.create_plan(&session, "plan").expect("plan").id;
        let phase = NewPhase {
            plan_id: plan,
            number: 1,
            title: "phase".into(),
            description: "d".into(),
            hint_level: HintLevel::File,
            expected_files: vec!["src/lib.rs".into()],
            skill_area: Some("Rust".into()),
            hint_reason: None,
            test_filter: None,
        };
        let phase = db.create_phase(phase).expect("phase").id;
        for _ in 0..2 {
            db.record_progress(&phase, ProgressEventType::HintUsed, None).expect("hint");
        }
        for a in 0..ACTIONS_PER_SESSION {
            db.log_action(&session, ActionType::FileOpen, Some(json!({ "path": format!("src/f{a}.rs") })))
                .expect("action");
        }
        let call = NewApiCall {
            session_id: Some(session.clone()),
            call_type: "coach_agent".into(),
            model: "claude-sonnet".into(),
            input_hash: "0123456789abcdef".into(),
            latency_ms: 900,
            input_tokens: 2000,
            output_tokens: 800,
            cost_estimate: 0.018,
        };
        db.log_api_call(call).expect("call");
        if i % GAP_EVERY == 0 {
            let gap = NewKnowledgeGap {
                session_id: session.clone(),
                topic: format!("topic {}", gaps % 300),
                severity: severities[gaps % 3],
                evidence: "seen".into(),
                related_concepts: vec!["a".into(), "b".into()],
            };
            let gap_id = db.create_knowledge_gap(gap).expect("gap").id;
            if gaps % 4 == 0 {
                db.set_gap_addressed(&gap_id, true).expect("addressed");
            }
            if gaps % KATA_EVERY_GAP == 0 {
                let constraints = (1..=3)
                    .map(|l| KataConstraint { title: format!("c{l}"), description: "d".into(), min_level: l * 3 })
                    .collect();
                let kata = NewKataSpec {
                    knowledge_gap_id: gap_id,
                    title: format!("Kata {gaps}"),
                    description: "d".into(),
                    scaffolding_code: "fn main() {}\n".repeat(20),
                    instructor_notes: "n".into(),
                    constraints,
                };
                let kata = db.create_kata(kata).expect("kata").id;
                for level in 0..(gaps % 4) as u8 {
                    let attempt =
                        KataAttempt { code: "fn main() {}".into(), level: Some(level + 2), ..Default::default() };
                    db.append_kata_attempt(&kata, &attempt).expect("attempt");
                }
            }
            gaps += 1;
        }
        clock.advance(Duration::minutes(40));
        // The last few stay active: in progress.
        if i < SESSIONS - 3 {
            db.end_session(&session, SessionStatus::Completed).expect("ended");
        }
        // A year in all: ~52 minutes per session.
        clock.advance(Duration::minutes(12));
    }
    for area in ["Rust", "Testing", "Git", "Async"] {
        let assessment = NewDreyfusAssessment {
            skill_area: area.into(),
            stage: DreyfusStage::Competent,
            confidence: 0.7,
            evidence: "e".into(),
        };
        db.upsert_dreyfus(assessment).expect("dreyfus");
    }
}

fn main() {
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    let config = Config::new(project.path().to_owned(), data.path().to_owned(), "bench");
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2025, 11, 22, 9, 0, 0).single().expect("date")));
    let core = Core::open(config, clock.clone()).expect("core");
    let seeding = Instant::now();
    seed(&core, &clock);
    eprintln!(
        "seeded {SESSIONS} sessions, {} actions, {} katas in {:.1} s",
        SESSIONS * ACTIONS_PER_SESSION,
        SESSIONS / GAP_EVERY / KATA_EVERY_GAP,
        seeding.elapsed().as_secs_f64()
    );
    for (name, period) in [("7d", Period::Week), ("30d", Period::Month), ("all", Period::All)] {
        let mut samples = Vec::new();
        let mut katas = 0;
        for run in 0..=RUNS {
            let started = Instant::now();
            let state = core.dashboard_state(period).expect("state");
            if run > 0 {
                samples.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            katas = state.katas.len();
            std::hint::black_box(state);
        }
        let (p50, p99) = (percentile(&mut samples, 0.5), percentile(&mut samples, 0.99));
        println!("dashboard:state {name:>3}: p50 {p50:.2} ms, p99 {p99:.2} ms ({katas} katas; target <= 10 ms)");
    }
}

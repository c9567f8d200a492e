use std::sync::Arc;

use chrono::Duration;
use paige_core::Clock;
use paige_core::db::*;
use serde_json::json;

use super::clock;

fn temp_db() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Db::open(&dir.path().join("paige.db"), clock()).expect("open db");
    (dir, db)
}

fn session(db: &Db) -> Session {
    db.create_session(NewSession {
        project_dir: "/projects/weather".into(),
        issue_number: Some(42),
        issue_title: Some("Add a weather widget".into()),
    })
    .expect("create session")
}

fn phase(db: &Db, plan_id: &str, number: i64) -> Phase {
    db.create_phase(NewPhase {
        plan_id: plan_id.into(),
        number,
        title: format!("Phase {number}"),
        description: "Wire the fetch call".into(),
        hint_level: HintLevel::File,
        expected_files: vec!["src/weather.ts".into(), "src/api.ts".into()],
        skill_area: None,
        hint_reason: None,
        test_filter: None,
    })
    .expect("create phase")
}

#[test]
fn migrations_are_valid() {
    MIGRATIONS.validate().expect("migrations validate");
}

#[test]
fn fresh_database_has_the_spec_governance_detector_memory_intake_learning_and_review_tables_in_wal_mode() {
    let (_dir, db) = temp_db();
    assert_eq!(
        db.table_names().expect("tables"),
        [
            "action_log",
            "agent_file_views",
            "agent_sessions",
            "api_call_log",
            "comprehension_checks",
            "dreyfus_assessments",
            "file_versions",
            "governed_projects",
            "intake_events",
            "intake_interviews",
            "intent_usage",
            "kata_specs",
            "knowledge_gaps",
            "learner_prompts",
            "ledger_files",
            "ledger_heads",
            "memories",
            "memories_fts",
            "memories_fts_config",
            "memories_fts_data",
            "memories_fts_docsize",
            "memories_fts_idx",
            "memory_vectors",
            "paige_deliveries",
            "phase_baselines",
            "phase_hints",
            "phases",
            "plans",
            "progress_events",
            "review_items",
            "review_log",
            "sessions",
            "solutions_shown",
            "transcript_tokens",
            "version_store"
        ]
    );
    assert_eq!(db.journal_mode().expect("journal mode"), "wal");
}

#[test]
fn reopening_keeps_data() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("paige.db");
    let id = {
        let db = Db::open(&path, clock()).expect("open");
        let id = session(&db).id;
        db.checkpoint().expect("checkpoint");
        id
    };
    let db = Db::open(&path, clock()).expect("reopen");
    let back = db.session(&id).expect("session survives reopen");
    assert_eq!(back.issue_title.as_deref(), Some("Add a weather widget"));
    assert_eq!(db.table_names().expect("tables").len(), 35);
}

#[test]
fn full_session_lifecycle_round_trips() {
    let clock = clock();
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Db::open(&dir.path().join("paige.db"), clock.clone()).expect("open");

    let s = session(&db);
    assert_eq!(s.status, SessionStatus::Active);
    assert_eq!(s.started_at, clock.now());
    assert_eq!(db.session(&s.id).expect("read session"), s);
    assert_eq!(db.active_session().expect("active").as_ref(), Some(&s));

    let plan = db.create_plan(&s.id, "1. fetch\n2. render").expect("plan");
    assert_eq!(db.plan(&plan.id).expect("read plan"), plan);
    assert_eq!(db.plans_for_session(&s.id).expect("plans"), std::slice::from_ref(&plan));

    let p2 = phase(&db, &plan.id, 2);
    let p1 = phase(&db, &plan.id, 1);
    assert_eq!(db.phases_for_plan(&plan.id).expect("phases"), [p1.clone(), p2.clone()], "ordered by number");
    assert_eq!(db.phase_with_plan(&p1.id).expect("phase with plan"), (p1.clone(), plan.clone()));
    assert_eq!(p1.status, PhaseStatus::Pending);
    assert_eq!(p1.expected_files, ["src/weather.ts", "src/api.ts"]);

    clock.advance(Duration::seconds(60));
    let active = db.set_phase_status(&p1.id, PhaseStatus::Active).expect("activate");
    assert_eq!(active.started_at, Some(clock.now()));
    assert_eq!(active.completed_at, None);
    clock.advance(Duration::seconds(60));
    let done = db.set_phase_status(&p1.id, PhaseStatus::Complete).expect("complete");
    assert_eq!(done.started_at, active.started_at, "started_at is stamped once");
    assert_eq!(done.completed_at, Some(clock.now()));

    let file_hint = db
        .create_phase_hint(NewPhaseHint {
            phase_id: p1.id.clone(),
            path: "src/weather.ts".into(),
            span: HintSpan::File,
            style: HintStyle::Suggested,
            hover_text: None,
        })
        .expect("file hint");
    let line_hint = db
        .create_phase_hint(NewPhaseHint {
            phase_id: p1.id.clone(),
            path: "src/api.ts".into(),
            span: HintSpan::Line { start_line: 10, end_line: 14 },
            style: HintStyle::Focus,
            hover_text: Some("the fetch goes here".into()),
        })
        .expect("line hint");
    assert_eq!(db.phase_hints(&p1.id, None).expect("hints"), [file_hint.clone(), line_hint.clone()]);
    assert_eq!(db.phase_hints(&p1.id, Some(HintType::Line)).expect("line hints"), [line_hint]);
    assert_eq!(db.phase_hints(&p1.id, Some(HintType::File)).expect("file hints"), [file_hint]);

    let used =
        db.record_progress(&p1.id, ProgressEventType::HintUsed, Some(json!({"level": "file"}))).expect("progress");
    clock.advance(Duration::seconds(5));
    let passed = db.record_progress(&p1.id, ProgressEventType::ReviewPassed, None).expect("progress");
    assert_eq!(db.progress_for_phase(&p1.id).expect("progress"), [used, passed], "chronological");

    let gap = db
        .create_knowledge_gap(NewKnowledgeGap {
            session_id: s.id.clone(),
            topic: "async error handling".into(),
            severity: Severity::High,
            evidence: "unhandled promise rejection".into(),
            related_concepts: vec!["promises".into(), "try/catch".into()],
        })
        .expect("gap");
    assert_eq!((gap.frequency, gap.addressed), (1, false));
    assert_eq!(db.knowledge_gap(&gap.id).expect("read gap"), gap);
    let again = db.record_gap_encounter(&gap.id).expect("encounter");
    assert_eq!(again.frequency, 2);
    let filter = GapFilter { session_id: Some(s.id.clone()), severity: Some(Severity::High), addressed: Some(false) };
    assert_eq!(db.knowledge_gaps(&filter).expect("gaps"), std::slice::from_ref(&again));
    let none = GapFilter { severity: Some(Severity::Low), ..GapFilter::default() };
    assert!(db.knowledge_gaps(&none).expect("gaps").is_empty());

    let constraint = KataConstraint { title: "No loops".into(), description: "use iterators".into(), min_level: 3 };
    let kata = db
        .create_kata(NewKataSpec {
            knowledge_gap_id: gap.id.clone(),
            title: "Retry with backoff".into(),
            description: "Write a retrying fetch".into(),
            scaffolding_code: "async function retry() {}".into(),
            instructor_notes: "look for awaited sleeps".into(),
            constraints: vec![constraint.clone()],
        })
        .expect("kata");
    assert!(kata.user_attempts.is_empty());
    let first = KataAttempt { code: "v1".into(), ..KataAttempt::default() };
    let second = KataAttempt {
        code: "v2".into(),
        review: Some("good".into()),
        level: Some(4),
        passed: Some(true),
        constraints: Some(vec![constraint]),
    };
    db.append_kata_attempt(&kata.id, &first).expect("attempt 1");
    let after = db.append_kata_attempt(&kata.id, &second).expect("attempt 2");
    assert_eq!(after.user_attempts, [first, second], "earlier attempts are kept");
    assert_eq!(db.katas_for_gap(&gap.id).expect("katas"), [after]);

    clock.advance(Duration::minutes(30));
    let ended = db.end_session(&s.id, SessionStatus::Completed).expect("end");
    assert_eq!((ended.status, ended.ended_at), (SessionStatus::Completed, Some(clock.now())));
    assert_eq!(db.active_session().expect("active"), None);
}

#[test]
fn deleting_a_plan_cascades_to_phases_hints_and_progress() {
    let (_dir, db) = temp_db();
    let s = session(&db);
    let plan = db.create_plan(&s.id, "plan").expect("plan");
    let p = phase(&db, &plan.id, 1);
    db.create_phase_hint(NewPhaseHint {
        phase_id: p.id.clone(),
        path: "a.rs".into(),
        span: HintSpan::File,
        style: HintStyle::Critical,
        hover_text: None,
    })
    .expect("hint");
    db.record_progress(&p.id, ProgressEventType::HintEscalated, None).expect("progress");

    db.delete_plan(&plan.id).expect("delete plan");

    assert!(matches!(db.phase(&p.id), Err(DbError::NotFound { entity: "phase", .. })));
    assert!(db.phase_hints(&p.id, None).expect("hints").is_empty());
    assert!(db.progress_for_phase(&p.id).expect("progress").is_empty());
    assert_eq!(db.session(&s.id).expect("session stays"), s);
}

#[test]
fn insert_under_a_missing_parent_is_rejected_with_a_clear_error() {
    let (_dir, db) = temp_db();
    let err = db.create_plan("no-such-session", "plan").expect_err("FK enforced");
    assert!(
        matches!(&err, DbError::MissingParent { entity: "plan", parent: "session", parent_id } if parent_id == "no-such-session")
    );
    assert_eq!(err.to_string(), r#"plan refers to session "no-such-session", which does not exist"#);

    let err = db.log_action("ghost", ActionType::FileOpen, None).expect_err("FK enforced");
    assert!(matches!(err, DbError::MissingParent { entity: "action", .. }));
    assert!(matches!(
        db.record_progress("ghost", ProgressEventType::HintUsed, None),
        Err(DbError::MissingParent { parent: "phase", .. })
    ));
}

#[test]
fn dreyfus_upsert_overwrites_by_skill_area() {
    let clock = clock();
    let db = Db::open_in_memory(clock.clone()).expect("db");
    let first = db
        .upsert_dreyfus(NewDreyfusAssessment {
            skill_area: "React state management".into(),
            stage: DreyfusStage::Novice,
            confidence: 0.4,
            evidence: "asked what useState does".into(),
        })
        .expect("insert");
    clock.advance(Duration::days(1));
    let second = db
        .upsert_dreyfus(NewDreyfusAssessment {
            skill_area: "React state management".into(),
            stage: DreyfusStage::Competent,
            confidence: 0.8,
            evidence: "lifted state unaided".into(),
        })
        .expect("update");
    assert_eq!(second.id, first.id, "same row, not a duplicate");
    assert_eq!(second.stage, DreyfusStage::Competent);
    assert_eq!(second.assessed_at, clock.now());
    assert_eq!(db.dreyfus_assessments().expect("all"), [second]);
}

#[test]
fn action_log_is_queryable_by_session_and_type() {
    let clock = clock();
    let db = Db::open_in_memory(clock.clone()).expect("db");
    let s = session(&db);
    db.log_action(&s.id, ActionType::FileOpen, Some(json!({"path": "a.rs"}))).expect("log");
    clock.advance(Duration::seconds(1));
    db.log_action(&s.id, ActionType::TabSwitch, Some(json!({"fromPath": "a.rs", "toPath": "b.rs"}))).expect("log");
    clock.advance(Duration::seconds(1));
    let last_open = db.log_action(&s.id, ActionType::FileOpen, Some(json!({"path": "b.rs"}))).expect("log");

    let recent = db.recent_actions(&s.id, 2, None).expect("recent");
    assert_eq!(recent.iter().map(|a| a.action_type).collect::<Vec<_>>(), [ActionType::FileOpen, ActionType::TabSwitch]);
    let opens = db.recent_actions(&s.id, 10, Some(ActionType::FileOpen)).expect("opens");
    assert_eq!(opens.len(), 2);
    assert_eq!(opens[0], last_open);
    assert_eq!(
        db.last_action_at(&s.id, Some(ActionType::TabSwitch)).expect("last"),
        Some(last_open.created_at - Duration::seconds(1))
    );
    assert_eq!(db.last_action_at(&s.id, Some(ActionType::IdleStart)).expect("none"), None);
    assert_eq!(
        ActionType::ALL.len(),
        35,
        "the spec's 27 action types, change_reverted, coaching_pipeline, worked_example, the intake's three, \
         comprehension_check and solution_shown"
    );
}

#[test]
fn api_calls_aggregate_into_a_budget() {
    let db = Db::open_in_memory(clock()).expect("db");
    let s = session(&db);
    let call = |model: &str, latency_ms, cost| NewApiCall {
        session_id: Some(s.id.clone()),
        call_type: "coach_agent".into(),
        model: model.into(),
        input_hash: "0123456789abcdef".into(),
        latency_ms,
        input_tokens: if latency_ms < 0 { 0 } else { 1000 },
        output_tokens: if latency_ms < 0 { 0 } else { 200 },
        cost_estimate: cost,
    };
    let logged = db.log_api_call(call("claude-sonnet-4-5-20250929", 1200, 0.006)).expect("log");
    db.log_api_call(call("claude-haiku-4-5-20251001", 400, 0.0016)).expect("log");
    db.log_api_call(call("claude-haiku-4-5-20251001", -1, 0.0)).expect("failure is logged too");
    db.log_api_call(NewApiCall { session_id: None, ..call("claude-haiku-4-5-20251001", 100, 0.5) })
        .expect("no session");

    assert_eq!(db.api_calls_for_session(&s.id).expect("calls")[0], logged);
    let budget = db.budget_summary(Some(&s.id)).expect("budget");
    assert_eq!((budget.calls, budget.failed_calls), (3, 1));
    assert!((budget.total_cost - 0.0076).abs() < 1e-12);
    assert_eq!(budget.average_latency_ms, Some(800.0), "failures excluded from latency");
    assert_eq!(
        budget.by_model.iter().map(|m| (m.model.as_str(), m.calls)).collect::<Vec<_>>(),
        [("claude-haiku-4-5-20251001", 2), ("claude-sonnet-4-5-20250929", 1)]
    );
    assert_eq!(db.budget_summary(None).expect("global").calls, 4);
}

#[test]
fn corrupted_file_is_reported_by_name_and_left_untouched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("paige.db");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(&path, &garbage).expect("write garbage");

    let err = Db::open(&path, Arc::new(paige_core::SystemClock)).err().expect("corrupt file rejected");
    assert!(matches!(err, DbError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()), "{err}");
    assert_eq!(std::fs::read(&path).expect("read back"), garbage, "file left untouched");
}

#[test]
fn the_database_accepts_every_action_type_and_refuses_any_other() {
    let (dir, db) = temp_db();
    let s = session(&db);
    for action_type in ActionType::ALL {
        db.log_action(&s.id, *action_type, None).unwrap_or_else(|err| panic!("{action_type} refused: {err}"));
    }
    let raw = rusqlite::Connection::open(dir.path().join("paige.db")).expect("open");
    let refused = raw
        .execute(
            "INSERT INTO action_log (id, session_id, action_type, created_at) VALUES ('x', ?1, 'made_up', '2026-01-01')",
            [&s.id],
        )
        .expect_err("an unknown action type");
    assert!(refused.to_string().contains("CHECK constraint failed"), "{refused}");
}

#[test]
fn a_database_from_before_the_action_type_check_keeps_its_timeline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("paige.db");
    // A database of the last release: migrations 01–06 as they are on disk, with a timeline.
    let raw = rusqlite::Connection::open(&path).expect("open");
    let migrations = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    for n in ["01-foundation", "02-governance", "03-versions", "04-ledger-index", "05-memory", "06-phase-skill"] {
        let sql = std::fs::read_to_string(migrations.join(n).join("up.sql")).expect("migration");
        raw.execute_batch(&sql).unwrap_or_else(|err| panic!("{n}: {err}"));
    }
    raw.execute_batch(
        "PRAGMA user_version = 6;
         INSERT INTO sessions (id, project_dir, status, started_at) VALUES ('s1', '/p', 'active', '2026-11-22T09:00:00.000Z');
         INSERT INTO action_log (id, session_id, action_type, data, created_at)
             VALUES ('a1', 's1', 'file_open', '{\"path\":\"a.rs\"}', '2026-11-22T09:00:01.000Z');",
    )
    .expect("old rows");
    drop(raw);
    let db = Db::open(&path, clock()).expect("migrates");
    let kept = db.recent_actions("s1", 10, None).expect("actions");
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].data, Some(json!({"path": "a.rs"})));
}

#[test]
fn an_intake_interview_keeps_its_constants_and_every_guard_input_in_order() {
    let (_dir, db) = temp_db();
    let s = session(&db);
    let config = serde_json::json!({"timeboxMs": 5000});
    assert!(db.create_intake(&s.id, &config, "Add a weather widget").expect("create"));
    assert!(!db.create_intake(&s.id, &serde_json::json!({}), "other").expect("again"), "the first interview stands");
    let interview = db.intake(&s.id).expect("read").expect("interview");
    assert_eq!((interview.config, interview.coding_question.as_str()), (config, "Add a weather widget"));
    for (at, kind) in [(10, "tick"), (5, "typingStarted"), (20, "tick")] {
        db.append_intake_event(&s.id, at, &serde_json::json!({"type": kind})).expect("append");
    }
    let events = db.intake_events(&s.id).expect("events");
    let times: Vec<i64> = events.iter().map(|(at, _)| *at).collect();
    assert_eq!(times, [10, 5, 20], "in the order appended, not by time");
    assert_eq!(db.latest_intake_session().expect("latest"), Some(s.id.clone()));
    let refused = db.append_intake_event("no-such-session", 1, &serde_json::json!({})).expect_err("no interview");
    assert!(refused.to_string().contains("intake interview"), "{refused}");
}

/// Issue 40: prompts Paige itself typed into Claude Code (its kickoff, a phase-done note, an
/// Observer nudge) were kept as the learner's. Migrating relabels them by the tag each opened
/// with; only the learner's own count from then on.
#[test]
fn a_database_from_before_prompt_provenance_no_longer_counts_paiges_own_prompts_as_the_learners() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("paige.db");
    let raw = rusqlite::Connection::open(&path).expect("open");
    let migrations = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut names: Vec<String> = std::fs::read_dir(&migrations)
        .expect("migrations")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.as_str() < "14")
        .collect();
    names.sort();
    for n in &names {
        let sql = std::fs::read_to_string(migrations.join(n).join("up.sql")).expect("migration");
        raw.execute_batch(&sql).unwrap_or_else(|err| panic!("{n}: {err}"));
    }
    raw.execute_batch(&format!("PRAGMA user_version = {};", names.len())).expect("version");
    raw.execute_batch(
        "INSERT INTO sessions (id, project_dir, status, started_at) VALUES ('s1', '/p', 'active', '2026-11-22T09:00:00.000Z');
         INSERT INTO learner_prompts (id, session_id, prompt, class, decided_by, created_at) VALUES
           ('p1', 's1', '[Paige] A coaching session has started. Plan it now.', 'delegation', 'rules', '2026-11-22T09:00:01.000Z'),
           ('p2', 's1', '[Paige] The learner marked phase 1 done in Paige''s coaching panel.', 'delegation', 'rules', '2026-11-22T09:00:02.000Z'),
           ('p3', 's1', '[Paige''s Observer] signal stuck. As Paige, give the learner one short nudge.', 'debugging_help', 'model', '2026-11-22T09:00:03.000Z'),
           ('p4', 's1', 'why does my [Paige] test fail?', 'debugging_help', 'rules', '2026-11-22T09:00:04.000Z');",
    )
    .expect("old rows");
    drop(raw);
    let db = Db::open(&path, clock()).expect("migrates");
    let counts = db.reliance_counts("s1").expect("counts");
    assert_eq!(counts.iter().sum::<u32>(), 1, "only the learner's own prompt counts: {counts:?}");
    assert_eq!(db.prompt_author("why does my [Paige] test fail?").expect("author"), paige_core::db::Author::Learner);
}

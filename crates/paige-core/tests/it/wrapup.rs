//! The session wrap-up (Story 9: Scenarios 9.5–9.7, 9.9–9.11, EC-62, EC-63) against the fake
//! Messages API over real HTTP.
//!
//! Memory: `paige-memory` (the embedded store) is not a dependency of paige-core, so the core
//! here gets a `Memory` over a small in-test `MemoryStore` (keyword matching, no model): the
//! wrap-up only talks to `Memory`, whose own behaviour is tested against the real stores in
//! `paige-memory`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use paige_core::coaching::{MAX_TRANSCRIPT_BYTES, WrapUp, WrapUpError};
use paige_core::db::{
    ActionType, DreyfusStage, GapFilter, HintLevel, NewDreyfusAssessment, NewKnowledgeGap, NewPhase, NewSession,
    PhaseStatus, ProgressEventType, SessionStatus, Severity,
};
use paige_core::memory::{Memory, MemoryError, MemoryQuery, MemoryRecord, MemoryResult, MemoryStats, MemoryStore};
use paige_core::protocol::{ServerMessage, SessionCompleted};
use paige_core::{Core, Event};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};

use super::clock;

const KEY: &str = "sk-ant-test";

/// Memories in a list; a query finds those sharing a word with it.
#[derive(Default)]
pub(crate) struct ListStore {
    records: Mutex<Vec<MemoryRecord>>,
}

impl MemoryStore for ListStore {
    fn name(&self) -> &str {
        "the test store"
    }
    fn location(&self) -> String {
        "memory".into()
    }
    fn ranks_without_vectors(&self) -> bool {
        true
    }
    fn connect(&self) -> Result<(), MemoryError> {
        Ok(())
    }
    fn add(&self, records: &[MemoryRecord]) -> Result<usize, MemoryError> {
        self.records.lock().expect("lock").extend_from_slice(records);
        Ok(records.len())
    }
    fn query(&self, query: &MemoryQuery<'_>) -> Result<Vec<MemoryResult>, MemoryError> {
        let words: Vec<String> = query.text.split_whitespace().map(str::to_lowercase).collect();
        let records = self.records.lock().expect("lock");
        Ok(records
            .iter()
            .filter(|r| query.project.is_none_or(|p| r.metadata.project == p))
            .filter(|r| words.iter().any(|w| r.content.to_lowercase().contains(w.as_str())))
            .take(query.n_results)
            .map(|r| MemoryResult {
                id: r.id.clone(),
                content: r.content.clone(),
                metadata: r.metadata.clone(),
                distance: 0.5,
            })
            .collect())
    }
    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        let total = self.records.lock().expect("lock").len();
        Ok(MemoryStats { total, projects: Vec::new(), without_vectors: total })
    }
}

struct World {
    fake: FakeAnthropic,
    core: Arc<Core>,
    session: String,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

/// A core talking to the fake, with memory, and an active session on issue 15 whose plan
/// has two phases: one completed with a hint, one pending.
async fn world() -> World {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    fake.require_api_key(KEY);
    let (project, data) = (tempfile::tempdir().expect("dir"), tempfile::tempdir().expect("dir"));
    let config = paige_core::Config {
        anthropic_base_url: Some(fake.base_url()),
        ..paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), KEY)
    };
    let memory = Memory::new(Box::new(ListStore::default()), Err("no model in these tests".into()));
    let core = Arc::new(Core::open(config, clock()).expect("core").with_memory(memory));
    let session = core.coaching().start_session(Some(15), Some("Retry failed uploads".into())).expect("session").id;
    // The learner muted the Observer: the model requests here are the wrap-up's alone.
    assert!(core.mute_observer(true));
    let db = core.db();
    let plan = db.create_plan(&session, "1. catch\n2. retry").expect("plan");
    let phase = |number, title: &str| NewPhase {
        plan_id: plan.id.clone(),
        number,
        title: title.into(),
        description: format!("{title}, step by step"),
        hint_level: HintLevel::File,
        expected_files: vec!["src/upload.ts".into()],
        skill_area: None,
        hint_reason: None,
        test_filter: None,
    };
    let first = db.create_phase(phase(1, "Catch the rejection")).expect("phase");
    db.create_phase(phase(2, "Retry with backoff")).expect("phase");
    db.set_phase_status(&first.id, PhaseStatus::Complete).expect("complete");
    db.record_progress(&first.id, ProgressEventType::HintUsed, None).expect("progress");
    core.log_action(ActionType::FileSave, json!({ "path": "src/upload.ts" }));
    World { fake, core, session, _dirs: (project, data) }
}

fn gap_answer() -> Value {
    json!({
        "knowledge_gaps": [
            { "topic": "Promise error handling", "evidence": "three hints on the catch branch",
              "severity": "high", "related_concepts": ["async/await"] },
            { "topic": "Exponential backoff", "evidence": "fixed 1 s delay",
              "severity": "low", "related_concepts": ["timers"] }
        ],
        "kata_specs": [{
            "gap_topic": "promise error handling",
            "title": "Retry with backoff",
            "description": "Write retry(fn, n)",
            "scaffolding_code": "export async function retry(fn, n) {}\n",
            "test_cases": ["resolves on the first success", "rejects after n failures"],
            "instructor_notes": "Look for swallowed rejections",
            "constraints": [
                { "title": "No libraries", "description": "no external libraries", "min_level": 1 },
                { "title": "Cancellable", "description": "takes an AbortSignal", "min_level": 12 }
            ],
            "follow_up_constraint": "add jitter"
        }],
        "session_summary": { "phases_completed": 1, "total_time_minutes": 30, "hints_used": 1, "independent_completions": 0 }
    })
}

fn dreyfus_answer() -> Value {
    json!({ "assessments": [{
        "skill_area": "Promise error handling", "stage": "advanced_beginner", "previous_stage": null,
        "confidence": 0.7, "evidence": "caught the rejection after one hint", "recommendation": "region hints"
    }]})
}

fn memory_answer() -> Value {
    json!({ "memories": [
        { "content": "Learner retried uploads with fixed delays before learning backoff", "tags": ["retry"], "importance": "high" },
        { "content": "Catching promise rejections needed three hints", "tags": ["promises", "errors"], "importance": "medium" }
    ]})
}

impl World {
    fn script_success(&self) {
        self.fake.always(Matcher::call_type("knowledge_gap_extraction"), Reply::json(&gap_answer()));
        self.fake.always(Matcher::call_type("dreyfus_assessment"), Reply::json(&dreyfus_answer()));
        self.fake.always(Matcher::call_type("memory_summarisation"), Reply::json(&memory_answer()));
    }

    fn requests(&self) -> usize {
        self.fake.message_requests().len()
    }

    async fn wrap_up(&self) -> Result<WrapUp, WrapUpError> {
        self.core
            .coaching()
            .end_session_with_wrapup("learner: why does my upload hang?\ncoach: what happens on reject?")
            .await
    }
}

fn completed(events: &mut tokio::sync::broadcast::Receiver<Event>) -> Vec<SessionCompleted> {
    let mut found = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::Ui(ServerMessage::SessionCompleted(done)) = event {
            found.push(done);
        }
    }
    found
}

#[tokio::test]
async fn a_full_wrap_up_stores_gaps_katas_assessments_and_memories_and_completes_the_session() {
    let w = world().await;
    w.script_success();
    let db = w.core.db();
    db.upsert_dreyfus(NewDreyfusAssessment {
        skill_area: "Promise error handling".into(),
        stage: DreyfusStage::Novice,
        confidence: 0.4,
        evidence: "first session".into(),
    })
    .expect("earlier assessment");
    let mut events = w.core.subscribe();

    let wrapup = w.wrap_up().await.expect("wrapped up");

    assert_eq!(
        (wrapup.knowledge_gaps, wrapup.kata_specs, wrapup.dreyfus_updates, wrapup.memories_stored),
        (2, 1, 1, 2)
    );
    assert_eq!(
        serde_json::to_value(&wrapup).expect("json"),
        json!({ "knowledgeGaps": 2, "kataSpecs": 1, "dreyfusUpdates": 1, "memoriesStored": 2, "sessionStatus": "completed" })
    );
    // Scenario 9.9: the gaps and the kata, with its constraints' levels and instructor notes.
    let gaps =
        db.knowledge_gaps(&GapFilter { session_id: Some(w.session.clone()), ..Default::default() }).expect("gaps");
    let mut stored: Vec<(&str, Severity, &str)> =
        gaps.iter().map(|g| (g.topic.as_str(), g.severity, g.evidence.as_str())).collect();
    stored.sort_by_key(|g| g.0);
    assert_eq!(
        stored,
        [
            ("Exponential backoff", Severity::Low, "fixed 1 s delay"),
            ("Promise error handling", Severity::High, "three hints on the catch branch")
        ]
    );
    let promise_gap = gaps.iter().find(|g| g.topic == "Promise error handling").expect("gap");
    let katas = db.katas_for_gap(&promise_gap.id).expect("katas");
    assert_eq!(katas.len(), 1, "filed under the gap its gap_topic names, whatever the case");
    let kata = &katas[0];
    assert_eq!(
        (kata.title.as_str(), kata.scaffolding_code.as_str()),
        ("Retry with backoff", "export async function retry(fn, n) {}\n")
    );
    let levels: Vec<(&str, u8)> = kata.constraints.iter().map(|c| (c.title.as_str(), c.min_level)).collect();
    assert_eq!(levels, [("No libraries", 1), ("Cancellable", 10)], "levels kept within 1–10");
    assert_eq!(
        kata.instructor_notes,
        "Look for swallowed rejections\n\nTest cases:\n- resolves on the first success\n- rejects after n failures\n\nFollow-up constraint: add jitter"
    );
    // Scenario 9.10: updated in place, the previous stage kept in the evidence.
    let assessments = db.dreyfus_assessments().expect("assessments");
    assert_eq!(assessments.len(), 1, "upserted, not duplicated");
    assert_eq!(assessments[0].stage, DreyfusStage::AdvancedBeginner);
    assert_eq!(assessments[0].confidence, 0.7);
    assert_eq!(assessments[0].evidence, "Previous stage: novice. caught the rejection after one hint");
    // Scenario 9.11: the memories are filed under the session and the project, and found.
    let memory = w.core.memory().clone();
    let project = w.core.project_name().name;
    let found = tokio::task::spawn_blocking(move || memory.query_memories("backoff", None, Some(&project)))
        .await
        .expect("query");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].metadata.session_id, w.session);
    assert_eq!(found[0].metadata.importance, "high");
    // The session ends completed, logged, and the UI hears of it.
    assert_eq!(db.session(&w.session).expect("session").status, SessionStatus::Completed);
    assert_eq!(w.core.active_session(), None);
    let ended = db.recent_actions(&w.session, 1, Some(ActionType::SessionEnded)).expect("actions");
    assert_eq!(ended[0].data.as_ref().map(|d| d["status"].clone()), Some(json!("completed")));
    assert_eq!(
        completed(&mut events),
        [SessionCompleted {
            session_id: w.session.clone(),
            knowledge_gaps: 2,
            kata_specs: 1,
            dreyfus_updates: 1,
            memories_stored: 2
        }]
    );
    // What the models were told, and every call logged (FR-127).
    let requests = w.fake.message_requests();
    let gap_message: Value = serde_json::from_str(requests[0].user_message().expect("message")).expect("json");
    assert_eq!(
        gap_message["phases"][0],
        json!({ "title": "Catch the rejection", "status": "complete", "hint_level": "file" })
    );
    assert!(gap_message["action_log"].as_array().expect("log").iter().any(|a| a["action_type"] == "file_save"));
    let dreyfus_message: Value = serde_json::from_str(requests[1].user_message().expect("message")).expect("json");
    assert_eq!(
        dreyfus_message["recent_session"],
        json!({ "phases_completed": 1, "hints_used": 1, "independent_completions": 0 })
    );
    let summary_message: Value = serde_json::from_str(requests[2].user_message().expect("message")).expect("json");
    assert_eq!(summary_message["issue"], "Retry failed uploads");
    assert!(summary_message["transcript"].as_str().expect("transcript").contains("why does my upload hang"));
    let call_types: Vec<String> =
        db.api_calls_for_session(&w.session).expect("log").into_iter().map(|c| c.call_type).collect();
    assert_eq!(call_types, ["knowledge_gap_extraction", "dreyfus_assessment", "memory_summarisation"]);
}

#[tokio::test]
async fn all_three_model_calls_failing_still_completes_the_session_with_zeros() {
    let w = world().await;
    let no_retry = || Reply::server_error().with_header("x-should-retry", "false");
    w.fake.always(Matcher::call_type("knowledge_gap_extraction"), no_retry());
    w.fake.always(Matcher::call_type("dreyfus_assessment"), Reply::text("{\"assessments\": [oops"));
    w.fake.always(Matcher::call_type("memory_summarisation"), no_retry());
    let mut events = w.core.subscribe();

    let wrapup = w.wrap_up().await.expect("still wrapped up");

    assert_eq!(
        (wrapup.knowledge_gaps, wrapup.kata_specs, wrapup.dreyfus_updates, wrapup.memories_stored),
        (0, 0, 0, 0)
    );
    assert_eq!(wrapup.session_status, SessionStatus::Completed);
    assert_eq!(w.core.db().session(&w.session).expect("session").status, SessionStatus::Completed);
    assert_eq!(completed(&mut events).len(), 1);
    let failures: Vec<i64> =
        w.core.db().api_calls_for_session(&w.session).expect("log").iter().map(|c| c.latency_ms.signum()).collect();
    assert_eq!(failures, [-1, -1, -1], "all three failures logged (Scenario 9.7)");
}

#[tokio::test]
async fn a_failed_gap_extraction_still_runs_the_assessment_and_the_summarisation() {
    let w = world().await;
    w.fake.always(Matcher::call_type("knowledge_gap_extraction"), Reply::refusal("no"));
    w.fake.always(Matcher::call_type("dreyfus_assessment"), Reply::json(&dreyfus_answer()));
    w.fake.always(Matcher::call_type("memory_summarisation"), Reply::json(&memory_answer()));
    let wrapup = w.wrap_up().await.expect("wrapped up");
    assert_eq!(
        (wrapup.knowledge_gaps, wrapup.kata_specs, wrapup.dreyfus_updates, wrapup.memories_stored),
        (0, 0, 1, 2)
    );
}

#[tokio::test]
async fn a_second_call_returns_the_first_result_without_calling_the_model_again() {
    let w = world().await;
    w.script_success();
    let mut events = w.core.subscribe();
    let first = w.wrap_up().await.expect("first");
    assert_eq!(w.requests(), 3);

    let second = w.wrap_up().await.expect("second: the session just wrapped up");

    assert_eq!(second, first);
    assert_eq!(w.requests(), 3, "no new model request");
    assert_eq!(completed(&mut events).len(), 1, "session:completed once");
    let gaps = w.core.db().knowledge_gaps(&GapFilter::default()).expect("gaps");
    assert_eq!(gaps.iter().map(|g| g.frequency).sum::<i64>(), 2, "nothing stored twice");
}

#[tokio::test]
async fn concurrent_calls_share_one_wrap_up() {
    let w = world().await;
    w.script_success();
    w.fake.once(
        Matcher::call_type("knowledge_gap_extraction"),
        Reply::json(&gap_answer()).delayed(Duration::from_millis(300)),
    );
    let (a, b, c) = tokio::join!(w.wrap_up(), w.wrap_up(), w.wrap_up());
    let a = a.expect("first");
    assert_eq!(b.expect("second"), a);
    assert_eq!(c.expect("third"), a);
    assert_eq!(w.requests(), 3, "one run: three model calls in all");
}

/// Issue 40: a session the learner ends with no plan and no work — Claude Code never planned,
/// the learner did nothing — is not wrapped up as completed: no model call, no katas or gaps
/// drawn from nothing; it ends `abandoned`, which every UI is told (`session:ended`).
#[tokio::test]
async fn a_session_with_no_plan_and_no_work_ends_abandoned_without_a_wrap_up() {
    let w = world().await;
    w.script_success();
    let _first = w.wrap_up().await.expect("first");
    let before = w.requests();
    let mut events = w.core.subscribe();
    let idle = w.core.coaching().start_session(None, Some("Nothing done".into())).expect("session").id;
    // Paige's own typing into Claude Code is not the learner's work.
    w.core.db().record_delivery(Some(&idle), "kickoff", "plan it").expect("delivery");
    let ended = w.wrap_up().await.expect("ended");
    assert_eq!(ended.session_id, idle);
    assert_eq!(ended.session_status, SessionStatus::Abandoned);
    assert_eq!((ended.knowledge_gaps, ended.kata_specs, ended.memories_stored), (0, 0, 0));
    assert_eq!(w.requests(), before, "no model call for a session with nothing in it");
    assert_eq!(w.core.db().session(&idle).expect("row").status, SessionStatus::Abandoned);
    let mut told = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Some(message) = event.into_ui_message() {
            told.push(serde_json::to_value(&message).expect("json"));
        }
    }
    let ended_frame = told.iter().find(|m| m["type"] == "session:ended").expect("session:ended");
    assert_eq!(ended_frame["payload"]["summary"]["status"], "abandoned", "{ended_frame}");
    assert!(told.iter().all(|m| m["type"] != "session:wrapping_up" && m["type"] != "session:completed"), "{told:?}");
}

/// Issue 41: each wrap-up of similar work names the same kata again; it is kept once (its
/// title, case and spacing aside), and its gaps recur (their frequency counts) rather than
/// pile up.
#[tokio::test]
async fn a_kata_named_again_by_a_later_wrap_up_is_not_kept_twice() {
    let w = world().await;
    w.script_success();
    let first = w.wrap_up().await.expect("first");
    assert_eq!(first.kata_specs, 1);
    w.core.coaching().start_session(None, Some("More retries".into())).expect("next session");
    w.core.log_action(ActionType::FileSave, json!({ "path": "src/upload.ts" }));
    let second = w.wrap_up().await.expect("second");
    assert_eq!(second.kata_specs, 0, "the same kata again");
    let katas = w.core.db().katas().expect("katas");
    assert_eq!(katas.iter().map(|k| k.title.as_str()).collect::<Vec<_>>(), ["Retry with backoff"]);
    let gaps = w.core.db().knowledge_gaps(&GapFilter::default()).expect("gaps");
    assert_eq!(gaps.len(), 2, "the same two gaps, recurring");
}

#[tokio::test]
async fn a_session_started_after_a_wrap_up_gets_its_own() {
    let w = world().await;
    w.script_success();
    let first = w.wrap_up().await.expect("first");
    let next = w.core.coaching().start_session(None, Some("Next issue".into())).expect("next session").id;
    // Each session has its own Observer: muted again, or its timer's triage (unscripted) counts
    // as a seventh request when the run is slow enough for that timer to fire.
    assert!(w.core.mute_observer(true));
    w.core.log_action(ActionType::FileSave, json!({ "path": "src/next.ts" }));

    let second = w.wrap_up().await.expect("second session wrapped up");

    assert_eq!(second.session_id, next);
    assert_ne!(second.session_id, first.session_id);
    assert_eq!(w.requests(), 6);
    assert_eq!(w.wrap_up().await, Ok(second), "still the latest session");
}

#[tokio::test]
async fn without_an_active_session_the_wrap_up_is_refused_and_asks_no_model() {
    let w = world().await;
    w.script_success();
    w.core.coaching().end_session(SessionStatus::Abandoned).expect("ended without a wrap-up");
    assert_eq!(w.wrap_up().await, Err(WrapUpError::NoActiveSession));
    assert_eq!(WrapUpError::NoActiveSession.to_string(), "No active session");
    assert_eq!(w.requests(), 0);
}

#[tokio::test]
async fn a_recurring_gap_topic_bumps_its_frequency_instead_of_adding_a_row() {
    let w = world().await;
    w.script_success();
    let db = w.core.db();
    let earlier = db
        .create_session(NewSession { project_dir: "/p".into(), issue_number: Some(3), issue_title: None })
        .expect("earlier session");
    let known = db
        .create_knowledge_gap(NewKnowledgeGap {
            session_id: earlier.id,
            topic: "Promise  Error handling".into(),
            severity: Severity::Medium,
            evidence: "missed a catch".into(),
            related_concepts: Vec::new(),
        })
        .expect("known gap");
    db.set_gap_addressed(&known.id, true).expect("addressed");

    let wrapup = w.wrap_up().await.expect("wrapped up");

    assert_eq!(wrapup.knowledge_gaps, 2, "the gaps this session showed, recurring ones included");
    let gaps = db.knowledge_gaps(&GapFilter::default()).expect("gaps");
    assert_eq!(gaps.len(), 2, "one new row, no duplicate");
    let bumped = db.knowledge_gap(&known.id).expect("known gap");
    assert_eq!((bumped.frequency, bumped.addressed), (2, false), "it came back, so it is open again");
    assert_eq!(db.katas_for_gap(&known.id).expect("katas").len(), 1, "the kata is filed under the known gap");
    let sent: Value =
        serde_json::from_str(w.fake.message_requests()[0].user_message().expect("message")).expect("json");
    assert_eq!(sent["existing_gaps"], json!([{ "topic": "Promise  Error handling", "frequency": 1 }]));
}

#[tokio::test]
async fn a_long_transcript_reaches_the_model_as_its_last_100_kb() {
    let w = world().await;
    w.script_success();
    let transcript = format!("{}THE END", "é".repeat(150 * 1024));
    w.core.coaching().end_session_with_wrapup(&transcript).await.expect("wrapped up");
    let request = w.fake.message_requests().into_iter().find(|r| r.call_type() == Some("memory_summarisation"));
    let sent: Value =
        serde_json::from_str(request.expect("summarisation").user_message().expect("message")).expect("json");
    let sent = sent["transcript"].as_str().expect("transcript");
    assert!(sent.ends_with("THE END"));
    assert!(sent.starts_with("[… the first "), "marked as cut: {}", &sent[..60]);
    assert!(sent.len() <= MAX_TRANSCRIPT_BYTES + 100, "{} bytes", sent.len());
}

/// Wrap-up overhead: 20 wrap-ups against a fake that answers at once; the time the three
/// logged model calls took (HTTP on localhost) is subtracted from each. Prints the figures
/// (`--nocapture`); fails only if one wrap-up's own work took a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_wrap_ups_against_an_instant_model_spend_milliseconds_outside_it() {
    let mut totals = Vec::new();
    let mut overheads = Vec::new();
    for _ in 0..20 {
        let w = world().await;
        w.script_success();
        let started = Instant::now();
        let wrapup = w.wrap_up().await.expect("wrapped up");
        let total = started.elapsed().as_secs_f64() * 1000.0;
        let model: i64 =
            w.core.db().api_calls_for_session(&wrapup.session_id).expect("log").iter().map(|c| c.latency_ms).sum();
        totals.push(total);
        overheads.push(total - model as f64);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let mut sorted = overheads.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "wrap-up over 20 runs: total mean {:.2} ms; excluding model time mean {:.2} ms, median {:.2} ms, max {:.2} ms",
        mean(&totals),
        mean(&overheads),
        sorted[10],
        sorted[19]
    );
    assert!(sorted[19] < 1000.0, "{sorted:?}");
}

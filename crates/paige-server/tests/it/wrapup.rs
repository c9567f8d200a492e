//! The session wrap-up (`paige_end_session`) through a real MCP client, with the fake
//! Messages API for the model and the real embedded memory store (with the model from
//! `PAIGE_MODEL_DIR`, set by scripts/test.sh).

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use paige_core::db::SessionStatus;
use paige_core::{Config, Core, ManualClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::json;

use crate::tools::{call, error_text, frames_of, ok, session_client, ui};
use crate::{Fixture, Running, TOKEN};

/// A server whose core calls `fake` and remembers in the embedded store.
async fn wrapup_server(fake: &FakeAnthropic) -> Running {
    let project = tempfile::tempdir().expect("project dir");
    let data = tempfile::tempdir().expect("data dir");
    let models = std::env::var("PAIGE_MODEL_DIR").expect("PAIGE_MODEL_DIR is not set: run scripts/test.sh");
    let config = Config {
        token: Some(TOKEN.into()),
        anthropic_base_url: Some(fake.base_url()),
        model_dir: Some(models.into()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "test-key")
    };
    let memory = paige_memory::open(&config, &[]);
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).single().expect("date")));
    let core = Core::open(config, clock.clone()).expect("core opens").with_memory(memory);
    crate::serve_fixture(Fixture::new(Arc::new(core), clock, (project, data))).await
}

fn script(fake: &FakeAnthropic) {
    let gaps = json!({
        "knowledge_gaps": [{ "topic": "Async ordering", "evidence": "redirected before the token arrived",
                             "severity": "medium", "related_concepts": ["await"] }],
        "kata_specs": [{
            "gap_topic": "Async ordering", "title": "Wait for it", "description": "Await two tasks in order",
            "scaffolding_code": "async fn both() {}\n", "test_cases": ["first finishes first"],
            "instructor_notes": "No sleeps", "constraints": [{ "title": "No sleep", "description": "no timers", "min_level": 3 }],
            "follow_up_constraint": null
        }],
        "session_summary": { "phases_completed": 0, "total_time_minutes": 12, "hints_used": 0, "independent_completions": 0 }
    });
    let dreyfus = json!({ "assessments": [{
        "skill_area": "Async Rust", "stage": "novice", "previous_stage": null, "confidence": 0.5,
        "evidence": "needed the ordering explained", "recommendation": "line hints"
    }]});
    let memories = json!({ "memories": [
        { "content": "The OAuth callback raced the redirect until the token was awaited", "tags": ["oauth", "async"], "importance": "high" }
    ]});
    fake.always(Matcher::call_type("knowledge_gap_extraction"), Reply::json(&gaps));
    fake.always(Matcher::call_type("dreyfus_assessment"), Reply::json(&dreyfus));
    fake.always(Matcher::call_type("memory_summarisation"), Reply::json(&memories));
}

#[tokio::test]
async fn end_session_over_mcp_wraps_up_once_remembers_in_the_embedded_store_and_tells_the_ui() {
    let fake = FakeAnthropic::start().await.expect("fake");
    script(&fake);
    let server = wrapup_server(&fake).await;
    let core = server.fixture.core.clone();
    let session = core.start_session(Some(7), Some("OAuth redirect race".into())).expect("session").id;
    let mut socket = ui(&server).await;
    let client = session_client(&server).await;

    let empty = call(&client, "paige_end_session", json!({"sessionTranscript": "  "})).await;
    assert!(error_text(&empty).contains("must not be empty"), "the input is still checked");
    let first = call(&client, "paige_end_session", json!({"sessionTranscript": "learner fixed the race"})).await;
    let summary = ok(&first).clone();
    assert_eq!(
        summary,
        json!({"knowledgeGaps": 1, "kataSpecs": 1, "dreyfusUpdates": 1, "memoriesStored": 1, "sessionStatus": "completed"})
    );
    let completed = frames_of(&mut socket, "session:completed", Duration::from_millis(500)).await;
    assert_eq!(
        completed,
        [json!({"sessionId": session, "knowledgeGaps": 1, "kataSpecs": 1, "dreyfusUpdates": 1, "memoriesStored": 1})]
    );
    assert_eq!(core.db().session(&session).expect("session").status, SessionStatus::Completed);

    let again = call(&client, "paige_end_session", json!({"sessionTranscript": "learner fixed the race"})).await;
    assert_eq!(ok(&again), &summary, "a second call returns the first result");
    assert_eq!(fake.message_requests().len(), 3, "and asks no model");

    let recalled = tokio::task::spawn_blocking(move || {
        core.memory().query_memories("oauth callback race", Some(3), Some(&core.project_name().name))
    })
    .await
    .expect("query");
    assert_eq!(recalled.len(), 1);
    assert_eq!(recalled[0].metadata.session_id, session);
}

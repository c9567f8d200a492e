//! The session wrap-up (`paige_end_session`) through a real MCP client, with the fake
//! Messages API for the model and the real embedded memory store (with the model from
//! `PAIGE_MODEL_DIR`, set by scripts/test.sh).

use std::time::Duration;

use paige_core::db::SessionStatus;
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::json;

use crate::TOKEN;
use crate::tools::{call, error_text, frames_of, ok, session_client, ui};

pub(crate) fn script(fake: &FakeAnthropic) {
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
    let server = crate::coaching_server(&fake).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(Some(7), Some("OAuth redirect race".into())).expect("session").id;
    core.db().create_plan(&session, "1. Find the race").expect("a plan: something to wrap up");
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

/// `POST /hooks/session-end` with Claude Code's payload: (status, body).
async fn session_end(server: &crate::Running, reason: &str, transcript: &std::path::Path) -> (u16, String) {
    let body = json!({
        "session_id": "b6518494-4d42-459c-b381-751b80f93050",
        "transcript_path": transcript,
        "cwd": server.fixture.core.project_root().path(),
        "hook_event_name": "SessionEnd",
        "reason": reason
    });
    let response = reqwest::Client::new()
        .post(format!("{}/hooks/session-end", server.base))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await
        .expect("hook answered");
    (response.status().as_u16(), response.text().await.unwrap_or_default())
}

fn transcript() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/claude-code-hooks/transcript-bash-session.jsonl")
}

/// Issue 40: Claude Code exiting is not the learner ending their session. Its SessionEnd is
/// answered at once and the coaching session stays open, no model called; ended later from
/// the panel, the wrap-up reads the transcript SessionEnd named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_codes_session_end_leaves_the_session_open_and_its_transcript_is_wrapped_up_when_the_learner_ends_it() {
    let fake = FakeAnthropic::start().await.expect("fake");
    script(&fake);
    let server = crate::coaching_server(&fake).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(None, Some("List the sources".into())).expect("session").id;
    core.db().create_plan(&session, "1. Find the race").expect("a plan: something to wrap up");
    let (status, body) = session_end(&server, "other", &transcript()).await;
    assert_eq!(status, 200, "{body}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(core.active_session().map(|s| s.id), Some(session.clone()), "the session stays open");
    assert!(fake.message_requests().is_empty(), "nothing wrapped up");
    core.coaching().end_session_from_ui().expect("the learner ends it");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while core.db().session(&session).expect("session").status != SessionStatus::Completed {
        assert!(std::time::Instant::now() < deadline, "the wrap-up did not complete");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let requests = fake.message_requests();
    assert_eq!(requests.len(), 3, "gaps, Dreyfus, memories");
    let summary = requests.iter().find(|r| r.call_type() == Some("memory_summarisation")).expect("summarisation");
    let message = summary.user_message().expect("user message");
    assert!(message.contains("Learner: list the sources"), "the condensed transcript reached the model: {message}");
    assert!(!message.contains("queue-operation"), "records that are not the conversation are left out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_end_after_clear_leaves_the_coaching_session_going() {
    let fake = FakeAnthropic::start().await.expect("fake");
    script(&fake);
    let server = crate::coaching_server(&fake).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(None, None).expect("session").id;
    let (status, _) = session_end(&server, "clear", &transcript()).await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(core.active_session().map(|s| s.id), Some(session));
    assert!(fake.message_requests().is_empty());
}

#[test]
fn the_condensed_transcript_keeps_the_conversation_and_tool_calls_and_drops_the_rest() {
    let jsonl = std::fs::read_to_string(transcript()).expect("fixture");
    let condensed = paige_core::coaching::condense(&jsonl);
    assert!(condensed.starts_with("Learner: list the sources"), "{condensed}");
    assert!(condensed.lines().any(|l| l.starts_with("Claude used Bash: ")), "{condensed}");
    assert!(condensed.len() < jsonl.len() / 10, "{} of {} bytes", condensed.len(), jsonl.len());
    assert_eq!(paige_core::coaching::condense("not json\n{\"type\": \"summary\"}\n"), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_uis_session_end_wraps_up_from_the_transcript_the_last_hook_named() {
    use futures_util::SinkExt;
    let fake = FakeAnthropic::start().await.expect("fake");
    script(&fake);
    let server = crate::coaching_server(&fake).await;
    let session = server.fixture.core.coaching().start_session(None, None).expect("session").id;
    // Any hook names the transcript; here Claude Code's prompt.
    let prompt = json!({"session_id": "s", "transcript_path": transcript(), "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    let response = reqwest::Client::new()
        .post(format!("{}/hooks/user-prompt-submit", server.base))
        .bearer_auth(TOKEN)
        .json(&prompt)
        .send()
        .await
        .expect("hook");
    assert_eq!(response.status(), 200);
    let mut socket = ui(&server).await;
    let end = json!({"type": "session:end", "payload": {}});
    socket.send(tokio_tungstenite::tungstenite::Message::Text(end.to_string().into())).await.expect("send");
    let completed = frames_of(&mut socket, "session:completed", Duration::from_secs(3)).await;
    assert_eq!(completed.len(), 1, "session:completed follows");
    assert_eq!(completed[0]["sessionId"], session.as_str());
    let requests = fake.message_requests();
    let summary = requests.iter().find(|r| r.call_type() == Some("memory_summarisation")).expect("summarisation");
    assert!(summary.user_message().expect("message").contains("Learner: list the sources"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_uis_session_end_without_a_session_is_a_clear_error() {
    use futures_util::SinkExt;
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = crate::coaching_server(&fake).await;
    let mut socket = ui(&server).await;
    let end = json!({"type": "session:end", "id": "e1", "payload": {}});
    socket.send(tokio_tungstenite::tungstenite::Message::Text(end.to_string().into())).await.expect("send");
    let errors = frames_of(&mut socket, "connection:error", Duration::from_millis(500)).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        (errors[0]["code"].as_str(), errors[0]["message"].as_str()),
        (Some("INVALID_MESSAGE"), Some("No active session"))
    );
    assert!(fake.message_requests().is_empty());
}

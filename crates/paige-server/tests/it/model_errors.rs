//! Each feature's model-error path against the fake Messages API behaving as the real one
//! does (issue 28): an answer slower than the call's deadline, a stalled answer, 529
//! overloaded, a web search the API pauses. The deadline ends the call, the feature's error
//! says what to do in its first line, and Retry (the same request again) answers; a wrap-up
//! step past it counts as nothing found.

use std::time::{Duration, Instant};

use paige_core::Config;
use paige_core::api::ModelDeadlines;
use paige_core::db::Severity;
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};

use crate::Running;
use crate::coaching::{args, coach_reply};
use crate::dashboard::{
    calls_of, dashboard_frames, gap, gh_stand_in, materials, payload, ranking, request, two_issues,
};
use crate::tools::{call, error_text, frames_of, ok, session_client, ui};

const SHORT: Duration = Duration::from_millis(300);
const NEVER: Duration = Duration::from_secs(30);

/// The coaching server with every model call's deadline at `deadline`, and `tweak` after.
async fn server_within(fake: &FakeAnthropic, deadline: Duration, tweak: impl FnOnce(&mut Config)) -> Running {
    crate::coaching_server_with(fake, |config| {
        config.gh_program = Some("/nonexistent/gh".into());
        config.limits.model_deadlines = ModelDeadlines::all(deadline);
        tweak(config);
    })
    .await
}

/// The error's first line (what is wrong, what to do) and its details.
fn readable(error: &Value) -> (String, String) {
    let text = error.as_str().unwrap_or_else(|| panic!("an error text: {error}"));
    let (sentence, details) = text.split_once('\n').unwrap_or_else(|| panic!("a sentence, then details: {text}"));
    (sentence.to_owned(), details.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_slower_than_its_deadline_is_an_explain_error_that_says_to_retry_and_retry_answers() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.once(Matcher::call_type("explain_this"), Reply::json(&crate::explain::explained()).delayed(NEVER));
    fake.always(Matcher::call_type("explain_this"), Reply::json(&crate::explain::explained()));
    let server = server_within(&fake, SHORT, |_| {}).await;
    let mut socket = ui(&server).await;
    let started = Instant::now();
    crate::explain::ask(&mut socket, "src/auth.rs", "fn login() {}").await;
    let failed = frames_of(&mut socket, "explain:error", Duration::from_millis(1500)).await;
    assert!(started.elapsed() < Duration::from_secs(3), "ended at the deadline: {:?}", started.elapsed());
    let (sentence, details) = readable(&failed[0]["error"]);
    assert_eq!(
        sentence,
        "Paige could not explain this: the model took longer than 300 ms to answer — retry in a moment."
    );
    assert!(details.contains("PAIGE_MODEL_EXPLAIN_TIMEOUT_MS"), "{details}");

    crate::explain::ask(&mut socket, "src/auth.rs", "fn login() {}").await;
    let answered = frames_of(&mut socket, "explain:response", Duration::from_millis(800)).await;
    assert_eq!(answered.len(), 1, "Retry answers");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_whose_answer_stalls_is_a_review_error_at_its_deadline_and_an_overloaded_api_is_retried() {
    use crate::practice::{review, reviewed, seed_kata, send};
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.once(Matcher::call_type("practice_review"), Reply::json(&reviewed(4, true)).stall_after(0));
    fake.once(Matcher::call_type("practice_review"), Reply::overloaded());
    fake.always(Matcher::call_type("practice_review"), Reply::json(&reviewed(4, true)));
    let server = server_within(&fake, Duration::from_secs(1), |_| {}).await;
    let core = &server.fixture.core;
    let kata = seed_kata(core, vec![]);
    let mut socket = ui(&server).await;
    send(&mut socket, review(&kata, "x", &[])).await;
    let failed = frames_of(&mut socket, "review:error", Duration::from_millis(1500)).await;
    let (sentence, _) = readable(&failed[0]["error"]);
    assert!(sentence.starts_with("Paige could not review this solution: the model took longer than 1 s"), "{sentence}");
    assert!(core.db().kata(&kata).expect("kata").user_attempts.is_empty());

    send(&mut socket, review(&kata, "x", &[])).await;
    let answered = frames_of(&mut socket, "review:response", Duration::from_millis(1500)).await;
    assert_eq!(answered.len(), 1, "529 then an answer: retried");
    let calls = calls_of(&fake, "practice_review");
    assert_eq!(calls.len(), 3, "the stalled call, the overloaded one, the answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coach_agent_overloaded_past_its_deadline_fails_the_pipeline_for_claude_code_and_tells_the_learner() {
    let fake = FakeAnthropic::start().await.expect("fake");
    // Overloaded, slowly: six attempts with their back-offs would take over 5 s.
    fake.always(Matcher::call_type("coach_agent"), Reply::overloaded().delayed(Duration::from_millis(250)));
    let server = server_within(&fake, Duration::from_millis(1500), |_| {}).await;
    let session = server.fixture.core.coaching().start_session(None, None).expect("session");
    let mut socket = ui(&server).await;
    let client = session_client(&server).await;
    let started = Instant::now();
    let result = call(&client, "paige_run_coaching_pipeline", args()).await;
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    let text = error_text(&result);
    assert!(
        text.contains("the coach agent failed, nothing was stored") && text.contains("did not finish within"),
        "{text}"
    );
    assert!((2..6).contains(&calls_of(&fake, "coach_agent").len()), "retried until the deadline");
    assert!(server.fixture.core.db().plans_for_session(&session.id).expect("plans").is_empty());
    let failed = frames_of(&mut socket, "coaching:plan_failed", Duration::from_millis(300)).await;
    let error = failed.first().unwrap_or_else(|| panic!("the panel is told: {failed:?}"));
    assert_eq!(error["sessionId"], json!(session.id));
    let (sentence, _) = readable(&error["message"]);
    assert_eq!(
        sentence,
        "Paige could not turn Claude Code's plan into phases: the model took longer than 1.5 s to answer — retry in a moment."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_triage_that_never_answers_ends_at_its_deadline_and_the_observer_looks_again_at_the_next_trigger() {
    use crate::observer::{send, settings, triage, triage_calls};
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    fake.once(Matcher::call_type("observer_triage"), Reply::json(&triage(true, 0.9, "wrong_file")).delayed(NEVER));
    fake.always(Matcher::call_type("observer_triage"), Reply::json(&triage(true, 0.9, "wrong_file")));
    let server = server_within(&fake, NEVER, |config| {
        config.limits.observer = settings();
        config.limits.model_deadlines.triage = SHORT;
    })
    .await;
    let core = &server.fixture.core;
    std::fs::write(core.project_root().path().join("src/notes.md"), "notes\n").expect("file");
    core.coaching().start_session(None, Some("Work".into())).expect("session");
    ok(&call(&session_client(&server).await, "paige_run_coaching_pipeline", args()).await);
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    assert!(frames_of(&mut socket, "observer:nudge", Duration::from_millis(600)).await.is_empty());
    send(&mut socket, "file:open", json!({"path": "src/auth.rs"})).await;
    let nudges = frames_of(&mut socket, "observer:nudge", Duration::from_millis(800)).await;
    assert_eq!(nudges.len(), 1, "the hung triage no longer holds the observer");
    assert_eq!(triage_calls(&fake).len(), 2);
    let rows = core.db().api_calls_for_session(&core.active_session().expect("session").id).expect("rows");
    let triage_rows: Vec<i64> =
        rows.iter().filter(|r| r.call_type == "observer_triage").map(|r| r.latency_ms.signum()).collect();
    assert_eq!(triage_rows.len(), 2);
    assert!(triage_rows.contains(&-1), "the abandoned triage is logged as failed: {triage_rows:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_issues_retry_an_overloaded_api_and_an_assessment_past_its_deadline_is_an_issues_error() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.once(Matcher::call_type("issue_assessment"), Reply::overloaded());
    fake.once(Matcher::call_type("issue_assessment"), Reply::json(&ranking()));
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&ranking()).delayed(NEVER));
    let bin = tempfile::tempdir().expect("bin");
    let gh = gh_stand_in(bin.path(), &two_issues());
    let server = server_within(&fake, Duration::from_millis(1500), |config| config.gh_program = Some(gh)).await;
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(3), |f| {
        f.iter().any(|(k, _, _)| k.starts_with("dashboard:issues"))
    })
    .await;
    assert_eq!(payload(&frames, "dashboard:issues")["issues"].as_array().map(Vec::len), Some(2), "529, then ranked");

    let refresh = json!({"type": "dashboard:refresh_issues", "payload": {}}).to_string();
    futures_util::SinkExt::send(&mut socket, tokio_tungstenite::tungstenite::Message::Text(refresh.into()))
        .await
        .expect("send");
    let frames = dashboard_frames(&mut socket, Duration::from_secs(3), |f| {
        f.iter().any(|(k, _, _)| k.starts_with("dashboard:issues"))
    })
    .await;
    let (sentence, details) = readable(&payload(&frames, "dashboard:issues_error")["error"]);
    assert!(
        sentence.starts_with("Paige could not assess this project's issues: the model took longer than 1.5 s"),
        "{sentence}"
    );
    assert!(details.contains("PAIGE_MODEL_DASHBOARD_TIMEOUT_MS"), "{details}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn materials_continue_a_paused_web_search_and_keep_the_links_it_found() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let book = "https://doc.rust-lang.org/book/";
    fake.once(Matcher::call_type("learning_materials"), Reply::pause_turn("rust lifetimes"));
    fake.always(Matcher::call_type("learning_materials"), Reply::json(&materials(&[book])));
    let server = server_within(&fake, Duration::from_secs(5), |_| {}).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(None, Some("work".into())).expect("session").id;
    gap(&server, &session, "lifetimes", Severity::High);
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(3), |f| {
        f.iter().any(|(k, _, _)| k.starts_with("dashboard:materials"))
    })
    .await;
    let resources = &payload(&frames, "dashboard:materials")["recommendations"][0]["resources"];
    assert_eq!(resources[0]["url"], book, "the paused turn's search result counts as found");
    let calls = calls_of(&fake, "learning_materials");
    assert_eq!(calls.len(), 2, "the paused turn, then its continuation");
    assert_eq!(calls[1].messages()[1]["role"], "assistant");
    assert_eq!(calls[1].messages()[1]["content"][0]["type"], "server_tool_use");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn materials_that_keep_searching_past_their_deadline_are_a_materials_error() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(
        Matcher::call_type("learning_materials"),
        Reply::pause_turn("again").delayed(Duration::from_millis(200)),
    );
    let server = server_within(&fake, Duration::from_millis(500), |_| {}).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(None, Some("work".into())).expect("session").id;
    gap(&server, &session, "lifetimes", Severity::High);
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(3), |f| {
        f.iter().any(|(k, _, _)| k.starts_with("dashboard:materials"))
    })
    .await;
    let (sentence, details) = readable(&payload(&frames, "dashboard:materials_error")["error"]);
    assert_eq!(
        sentence,
        "Paige could not find learning materials: the model took longer than 500 ms to answer — retry in a moment."
    );
    assert!(details.contains("PAIGE_MODEL_MATERIALS_TIMEOUT_MS"), "{details}");
    assert!(calls_of(&fake, "learning_materials").len() <= 3, "continuations stop at the deadline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrap_up_step_that_stalls_ends_at_its_deadline_counted_as_zero_and_the_session_completes() {
    let fake = FakeAnthropic::start().await.expect("fake");
    // Tried before the script's own rule for the same call type.
    fake.always(Matcher::call_type("knowledge_gap_extraction"), Reply::json(&json!({})).stall_after(0));
    crate::wrapup::script(&fake);
    let server = server_within(&fake, Duration::from_millis(500), |_| {}).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(None, Some("work".into())).expect("session").id;
    core.log_action(paige_core::db::ActionType::FileSave, json!({"path": "src/lib.rs"}));
    let client = session_client(&server).await;
    let started = Instant::now();
    let ended = call(&client, "paige_end_session", json!({"sessionTranscript": "learner fixed the race"})).await;
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    assert_eq!(
        ok(&ended),
        &json!({"knowledgeGaps": 0, "kataSpecs": 0, "dreyfusUpdates": 1, "memoriesStored": 1, "sessionStatus": "completed"})
    );
    assert_eq!(core.db().session(&session).expect("session").status, paige_core::db::SessionStatus::Completed);
}

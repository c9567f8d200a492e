//! Explain This (spec Story 11, Flow 1) over `/ws`, with the fake Messages API.

use std::time::Duration;

use futures_util::SinkExt;
use paige_core::db::{ActionType, DreyfusStage, NewDreyfusAssessment};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::Running;
use crate::coaching::{args, coach_reply};
use crate::tools::{call, frames_of, ok, session_client, ui};

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) fn explained() -> Value {
    json!({
        "explanation": "login() is declared but does nothing yet.",
        "key_concepts": ["functions", "stubs"],
        "analogy": "An empty box with a label.",
        "related_files": ["src/auth.rs"],
        "phase_connection": "Phase 1 asks where the callback runs."
    })
}

fn request(path: &str, selected: &str) -> String {
    json!({"type": "user:explain", "payload": {
        "path": path, "language": "rust",
        "selection": {"startLine": 1, "startCol": 1, "endLine": 1, "endCol": 14},
        "selectedText": selected, "surroundingContext": "fn login() {}\nfn callback() {}\n"
    }})
    .to_string()
}

pub(crate) async fn ask(socket: &mut Socket, path: &str, selected: &str) {
    socket.send(Message::Text(request(path, selected).into())).await.expect("send");
}

fn explain_calls(fake: &FakeAnthropic) -> Vec<paige_fake_anthropic::RecordedRequest> {
    fake.message_requests().into_iter().filter(|r| r.call_type() == Some("explain_this")).collect()
}

async fn server(fake: &FakeAnthropic) -> Running {
    crate::coaching_server(fake).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_session_the_explanation_comes_at_the_novice_stage_with_no_phase() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("explain_this"), Reply::json(&explained()));
    let server = server(&fake).await;
    let mut socket = ui(&server).await;
    ask(&mut socket, "src/auth.rs", "fn login() {}").await;
    let answer = frames_of(&mut socket, "explain:response", Duration::from_millis(800)).await;
    assert_eq!(
        answer[0],
        json!({"path": "src/auth.rs", "explanation": "login() is declared but does nothing yet.", "keyConcepts": ["functions", "stubs"],
               "analogy": "An empty box with a label.", "relatedFiles": ["src/auth.rs"], "phaseConnection": null}),
        "no phase, so no phase connection (Scenario 11.3)"
    );
    let asked = explain_calls(&fake);
    assert!(asked[0].system().expect("system").contains("novice"));
    let message: Value = serde_json::from_str(asked[0].user_message().expect("message")).expect("json");
    assert_eq!(message["current_phase"], Value::Null);
    assert_eq!(message["selected_code"], "fn login() {}");
    // Logged without a session, not discarded (FR-165).
    let logged = server.fixture.core.db().actions_without_session(10).expect("log");
    let kinds: Vec<ActionType> = logged.iter().rev().map(|a| a.action_type).collect();
    assert_eq!(kinds, [ActionType::ExplainRequested, ActionType::ExplainCompleted]);
    assert!(logged.iter().all(|a| a.session_id.is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_session_the_phase_and_the_learners_stage_shape_the_call_and_both_actions_are_logged() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    fake.always(Matcher::call_type("explain_this"), Reply::json(&explained()));
    let server = server(&fake).await;
    let core = &server.fixture.core;
    core.db()
        .upsert_dreyfus(NewDreyfusAssessment {
            skill_area: "Rust ownership".into(),
            stage: DreyfusStage::Competent,
            confidence: 0.8,
            evidence: "moves and borrows".into(),
        })
        .expect("assessed");
    let session = core.coaching().start_session(Some(7), Some("Login race".into())).expect("session").id;
    let client = session_client(&server).await;
    ok(&call(&client, "paige_run_coaching_pipeline", args()).await);
    // The Observer, watching the session, stays quiet: this test is about the explanation.
    core.mute_observer(true);
    let mut socket = ui(&server).await;
    ask(&mut socket, "src/auth.rs", "").await;
    let answer = frames_of(&mut socket, "explain:response", Duration::from_millis(800)).await;
    assert_eq!(answer[0]["phaseConnection"], "Phase 1 asks where the callback runs.");
    let asked = explain_calls(&fake);
    assert!(asked[0].system().expect("system").contains("competent"), "the stage whose area names the language");
    let message: Value = serde_json::from_str(asked[0].user_message().expect("message")).expect("json");
    assert_eq!(message["current_phase"]["title"], "Find where the callback runs");
    assert_eq!(message["selected_code"], "", "an empty selection goes as is (EC-74)");
    let requested = core.db().recent_actions(&session, 5, Some(ActionType::ExplainRequested)).expect("log");
    assert_eq!(requested[0].data.as_ref().map(|d| d["path"].clone()), Some(json!("src/auth.rs")));
    let completed = core.db().recent_actions(&session, 5, Some(ActionType::ExplainCompleted)).expect("log");
    let data = completed[0].data.clone().expect("data");
    assert_eq!((data["path"].as_str(), data["success"].as_bool()), (Some("src/auth.rs"), Some(true)));
    assert!(data["model"].as_str().is_some_and(|m| m.contains("sonnet")) && data["latencyMs"].is_u64(), "{data}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transient_failure_is_retried_once_and_a_final_one_is_an_explain_error() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let no_retry = || Reply::server_error().with_header("x-should-retry", "false");
    fake.once(Matcher::call_type("explain_this"), no_retry());
    fake.once(Matcher::call_type("explain_this"), Reply::json(&explained()));
    let server = server(&fake).await;
    let mut socket = ui(&server).await;
    ask(&mut socket, "src/auth.rs", "fn login() {}").await;
    let answer = frames_of(&mut socket, "explain:response", Duration::from_millis(2500)).await;
    assert_eq!(answer.len(), 1, "the retry succeeded (Scenario 11.4)");
    assert_eq!(explain_calls(&fake).len(), 2);
    fake.always(Matcher::call_type("explain_this"), no_retry());
    ask(&mut socket, "src/auth.rs", "fn login() {}").await;
    let failed = frames_of(&mut socket, "explain:error", Duration::from_millis(2500)).await;
    assert_eq!(failed[0]["path"], "src/auth.rs");
    assert!(failed[0]["error"].as_str().is_some_and(|e| e.starts_with("Paige could not explain this")), "{failed:?}");
    assert_eq!(explain_calls(&fake).len(), 4, "one retry each");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binary_missing_or_outside_file_is_refused_at_once_without_a_model_call() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = server(&fake).await;
    std::fs::write(server.fixture.core.project_root().path().join("logo.png"), [0x89, b'P', b'N', b'G', 0, 0, 1, 2])
        .expect("binary");
    let mut socket = ui(&server).await;
    for (path, why) in [
        ("logo.png", "Cannot explain binary files"),
        ("src/missing.rs", "Cannot explain src/missing.rs"),
        ("../outside.rs", "Cannot explain ../outside.rs"),
    ] {
        ask(&mut socket, path, "x").await;
        let refused = frames_of(&mut socket, "explain:error", Duration::from_millis(400)).await;
        assert_eq!(refused[0]["path"], path);
        assert!(refused[0]["error"].as_str().is_some_and(|e| e.starts_with(why)), "{refused:?}");
    }
    assert!(fake.message_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_explanations_each_get_their_answer() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("explain_this"), Reply::json(&explained()).delayed(Duration::from_millis(200)));
    let server = server(&fake).await;
    std::fs::write(server.fixture.core.project_root().path().join("src/lib.rs"), "pub fn f() {}\n").expect("file");
    let mut socket = ui(&server).await;
    ask(&mut socket, "src/auth.rs", "fn login() {}").await;
    ask(&mut socket, "src/lib.rs", "pub fn f() {}").await;
    let answers = frames_of(&mut socket, "explain:response", Duration::from_millis(1200)).await;
    let mut paths: Vec<&str> = answers.iter().filter_map(|a| a["path"].as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["src/auth.rs", "src/lib.rs"], "EC-78");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_very_large_surrounding_context_goes_to_the_model_as_is() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("explain_this"), Reply::json(&explained()));
    let server = server(&fake).await;
    let mut socket = ui(&server).await;
    let context: String = (0..2000).map(|i| format!("fn f{i}() {{}}\n")).collect();
    assert!(context.len() > 10_000);
    let frame = json!({"type": "user:explain", "payload": {
        "path": "src/auth.rs", "language": "rust",
        "selection": {"startLine": 1, "startCol": 1, "endLine": 1, "endCol": 14},
        "selectedText": "fn login() {}", "surroundingContext": context
    }});
    socket.send(Message::Text(frame.to_string().into())).await.expect("send");
    let answer = frames_of(&mut socket, "explain:response", Duration::from_millis(1500)).await;
    assert_eq!(answer.len(), 1, "EC-81");
    let message: Value = serde_json::from_str(explain_calls(&fake)[0].user_message().expect("message")).expect("json");
    assert_eq!(message["surrounding_context"].as_str().map(str::len), Some(context.len()), "not cut");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_model_answer_is_an_explain_error_not_a_half_explanation() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("explain_this"), Reply::text("{\"explanation\": \"cut off"));
    let server = server(&fake).await;
    let mut socket = ui(&server).await;
    ask(&mut socket, "src/auth.rs", "fn login() {}").await;
    let failed = frames_of(&mut socket, "explain:error", Duration::from_millis(2500)).await;
    assert_eq!(failed.len(), 1);
    assert!(failed[0]["error"].as_str().is_some_and(|e| e.starts_with("Paige could not explain this")), "{failed:?}");
    let answers = frames_of(&mut socket, "explain:response", Duration::from_millis(200)).await;
    assert!(answers.is_empty());
}

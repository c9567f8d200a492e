//! Practice katas (spec Story 11, Flow 2; issue 17) over `/ws`, with the fake Messages API.

use std::time::Duration;

use futures_util::SinkExt;
use paige_core::Core;
use paige_core::db::{
    ActionType, DreyfusStage, KataAttempt, KataConstraint, NewDreyfusAssessment, NewKataSpec, NewKnowledgeGap,
    NewSession, SessionStatus, Severity,
};
use paige_fake_anthropic::{FakeAnthropic, Matcher, RecordedRequest, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::Running;
use crate::tools::{frames_of, ui};

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const TOPIC: &str = "Async error handling";

pub(crate) fn reviewed(level: i64, passed: bool) -> Value {
    json!({
        "correct": passed,
        "feedback": "The retry waits, but a rejected fetch escapes the loop.",
        "level": level,
        "passed": passed,
        "follow_up": {"type": "constraint_escalation", "constraint": "No mutable counters", "reason": "You are ready."},
        "dreyfus_signal": "advancing"
    })
}

fn constraint(title: &str, min_level: u8) -> KataConstraint {
    KataConstraint { title: title.into(), description: format!("{title}, please"), min_level }
}

/// A kata on a gap from a finished session (no session is live), with `constraints`.
pub(crate) fn seed_kata(core: &Core, constraints: Vec<KataConstraint>) -> String {
    let db = core.db();
    let past = db
        .create_session(NewSession {
            project_dir: "/p".into(),
            issue_number: None,
            issue_title: Some("Earlier".into()),
        })
        .expect("session");
    let gap = db
        .create_knowledge_gap(NewKnowledgeGap {
            session_id: past.id.clone(),
            topic: TOPIC.into(),
            severity: Severity::High,
            evidence: "unhandled rejection".into(),
            related_concepts: vec![],
        })
        .expect("gap");
    db.end_session(&past.id, SessionStatus::Completed).expect("ended");
    db.create_kata(NewKataSpec {
        knowledge_gap_id: gap.id,
        title: "Retry with backoff".into(),
        description: "Write fetchWithRetry(url, tries).".into(),
        scaffolding_code: "export async function fetchWithRetry(url, tries) {\n}\n".into(),
        instructor_notes: "Tests: fails twice then succeeds; gives up after `tries`.".into(),
        constraints,
    })
    .expect("kata")
    .id
}

fn attempt(code: &str, level: u8, constraints: Vec<KataConstraint>) -> KataAttempt {
    KataAttempt {
        code: code.into(),
        review: Some(format!("review of {code}")),
        level: Some(level),
        passed: Some(level >= 3),
        constraints: Some(constraints),
    }
}

pub(crate) async fn send(socket: &mut Socket, frame: Value) {
    socket.send(Message::Text(frame.to_string().into())).await.expect("send");
}

pub(crate) fn review(kata: &str, code: &str, titles: &[&str]) -> Value {
    json!({"type": "user:review", "payload": {"kataId": kata, "userCode": code, "activeConstraintTitles": titles}})
}

fn review_calls(fake: &FakeAnthropic) -> Vec<RecordedRequest> {
    fake.message_requests().into_iter().filter(|r| r.call_type() == Some("practice_review")).collect()
}

fn sent_message(call: &RecordedRequest) -> Value {
    serde_json::from_str(call.user_message().expect("message")).expect("json")
}

async fn server(fake: &FakeAnthropic) -> Running {
    crate::coaching_server(fake).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_loads_the_kata_asks_at_the_topics_stage_appends_the_attempt_and_logs_both_actions() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("practice_review"), Reply::json(&reviewed(4, true)));
    let server = server(&fake).await;
    let core = &server.fixture.core;
    let kata = seed_kata(core, vec![constraint("No loops", 3), constraint("One await", 6)]);
    core.db()
        .upsert_dreyfus(NewDreyfusAssessment {
            skill_area: TOPIC.to_lowercase(),
            stage: DreyfusStage::Competent,
            confidence: 0.7,
            evidence: "handles errors".into(),
        })
        .expect("assessed");
    let session = core.coaching().start_session(None, Some("Practice".into())).expect("session").id;
    core.mute_observer(true);
    let mut socket = ui(&server).await;
    send(&mut socket, review(&kata, "for (;;) { await fetch(url) }", &[])).await;
    let frames = frames_of(&mut socket, "", Duration::from_millis(800)).await;
    let of = |kind: &str| -> Vec<Value> {
        frames.iter().filter(|f| f["type"] == kind).map(|f| f["payload"].clone()).collect()
    };
    let answer = of("review:response");
    assert_eq!(
        answer,
        [json!({
            "kataId": kata, "correct": true, "feedback": "The retry waits, but a rejected fetch escapes the loop.",
            "level": 4, "passed": true,
            "followUp": {"type": "constraint_escalation", "constraint": "No mutable counters", "reason": "You are ready."},
            "dreyfusSignal": "advancing",
            "unlockedConstraints": [{"title": "No loops", "description": "No loops, please", "minLevel": 3}]
        })],
        "Scenario 11.6; from best 0 to 4 unlocks the minLevel 3 constraint only"
    );
    let calls = review_calls(&fake);
    assert_eq!(calls.len(), 1);
    assert!(calls[0].system().expect("system").contains("stage for this topic: competent"), "FR-163");
    let message = sent_message(&calls[0]);
    assert_eq!(message["kata_description"], "Write fetchWithRetry(url, tries).");
    assert_eq!(message["instructor_notes"], "Tests: fails twice then succeeds; gives up after `tries`.", "FR-154");
    assert_eq!((message["active_constraints"].clone(), message["previous_attempts"].clone()), (json!([]), json!([])));
    let stored = core.db().kata(&kata).expect("kata").user_attempts;
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (stored[0].level, stored[0].passed, stored[0].code.as_str()),
        (Some(4), Some(true), "for (;;) { await fetch(url) }")
    );
    let requested = core.db().recent_actions(&session, 5, Some(ActionType::ReviewRequested)).expect("log");
    assert_eq!(requested[0].data.as_ref().map(|d| d["kataId"].clone()), Some(json!(kata)));
    let completed = core.db().recent_actions(&session, 5, Some(ActionType::ReviewCompleted)).expect("log");
    let data = completed[0].data.clone().expect("data");
    assert_eq!(
        (data["kataId"].as_str(), data["level"].as_u64(), data["passed"].as_bool()),
        (Some(kata.as_str()), Some(4), Some(true))
    );
    assert_eq!(data["success"], true);
    assert!(data["model"].as_str().is_some_and(|m| m.contains("sonnet")) && data["latencyMs"].is_u64(), "{data}");
    // Level 4 of a kata whose hardest constraint needs 6: due for spaced review beside its
    // open gap, and every UI hears it at once (issue 31).
    let due = of("reviews:due");
    let kinds: Vec<&str> =
        due[0]["items"].as_array().expect("items").iter().filter_map(|i| i["kind"].as_str()).collect();
    assert_eq!((due[0]["dueCount"].as_u64(), kinds), (Some(2), vec!["gap", "kata"]), "{due:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_best_level_2_a_level_5_review_unlocks_the_minlevel_3_and_5_constraints_only() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("practice_review"), Reply::json(&reviewed(5, true)));
    let server = server(&fake).await;
    let core = &server.fixture.core;
    let gates = vec![constraint("One", 1), constraint("Three", 3), constraint("Five", 5), constraint("Seven", 7)];
    let kata = seed_kata(core, gates);
    core.db().append_kata_attempt(&kata, &attempt("v1", 2, vec![])).expect("best 2");
    let mut socket = ui(&server).await;
    send(&mut socket, review(&kata, "v2", &[])).await;
    let answer = frames_of(&mut socket, "review:response", Duration::from_millis(800)).await;
    let unlocked: Vec<u64> = answer[0]["unlockedConstraints"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|c| c["minLevel"].as_u64())
        .collect();
    assert_eq!(unlocked, [3, 5], "Scenario 11.7");
    // A lower level afterwards unlocks nothing.
    fake.always(Matcher::call_type("practice_review"), Reply::json(&reviewed(4, true)));
    send(&mut socket, review(&kata, "v3", &[])).await;
    let lower = frames_of(&mut socket, "review:response", Duration::from_millis(800)).await;
    assert_eq!(lower[0]["unlockedConstraints"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_third_attempt_is_reviewed_against_the_same_constraint_attempts_and_all_three_are_kept() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("practice_review"), Reply::json(&reviewed(3, true)));
    let server = server(&fake).await;
    let core = &server.fixture.core;
    let no_loops = constraint("No loops", 1);
    let kata = seed_kata(core, vec![no_loops.clone(), constraint("One await", 1)]);
    core.db().append_kata_attempt(&kata, &attempt("free", 1, vec![])).expect("attempt 1");
    core.db().append_kata_attempt(&kata, &attempt("recursive", 2, vec![no_loops.clone()])).expect("attempt 2");
    let mut socket = ui(&server).await;
    // EC-77: an unknown title is ignored; titles match trimmed, in any case.
    send(&mut socket, review(&kata, "attempt three", &[" no LOOPS ", "Made up"])).await;
    let answer = frames_of(&mut socket, "review:response", Duration::from_millis(800)).await;
    assert_eq!(answer.len(), 1);
    let message = sent_message(&review_calls(&fake)[0]);
    assert_eq!(message["active_constraints"], json!([{"title": "No loops", "description": "No loops, please"}]));
    assert_eq!(
        message["previous_attempts"],
        json!([{"code": "recursive", "review": "review of recursive", "level": 2, "passed": false}]),
        "only the attempt under the same constraints (D75, Scenario 11.8)"
    );
    let stored = core.db().kata(&kata).expect("kata").user_attempts;
    let codes: Vec<&str> = stored.iter().map(|a| a.code.as_str()).collect();
    assert_eq!(codes, ["free", "recursive", "attempt three"], "SC-077");
    assert_eq!(stored[2].constraints, Some(vec![no_loops]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kata_is_a_review_error_without_a_model_call_for_both_request_types() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("practice_review"), Reply::json(&reviewed(3, true)));
    let server = server(&fake).await;
    let mut socket = ui(&server).await;
    send(&mut socket, review("no-such-kata", "x", &[])).await;
    send(&mut socket, json!({"type": "practice:submit_solution", "payload": {"kataId": "gone", "code": "x", "activeConstraints": []}}))
        .await;
    let errors = frames_of(&mut socket, "review:error", Duration::from_millis(400)).await;
    assert_eq!(
        errors,
        [
            json!({"kataId": "no-such-kata", "error": "Kata not found"}),
            json!({"kataId": "gone", "error": "Kata not found"})
        ],
        "Scenario 11.9"
    );
    send(&mut socket, json!({"type": "practice:kata_request", "payload": {"kataId": "gone"}})).await;
    let refused = frames_of(&mut socket, "practice:kata_error", Duration::from_millis(400)).await;
    assert_eq!(refused, [json!({"kataId": "gone", "error": "Kata not found"})]);
    assert!(fake.message_requests().is_empty(), "FR-166");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_after_the_retry_is_a_review_error_logged_unsuccessful_and_appends_nothing() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("practice_review"), Reply::server_error().with_header("x-should-retry", "false"));
    let server = server(&fake).await;
    let core = &server.fixture.core;
    let kata = seed_kata(core, vec![]);
    let session = core.coaching().start_session(None, Some("Practice".into())).expect("session").id;
    core.mute_observer(true);
    let mut socket = ui(&server).await;
    send(&mut socket, review(&kata, "x", &[])).await;
    let failed = frames_of(&mut socket, "review:error", Duration::from_millis(2500)).await;
    assert_eq!(failed[0]["kataId"], kata.as_str());
    assert!(
        failed[0]["error"].as_str().is_some_and(|e| e.starts_with("Paige could not review this solution")),
        "{failed:?}"
    );
    assert_eq!(review_calls(&fake).len(), 2, "one retry (D68, Scenario 11.10)");
    assert!(core.db().kata(&kata).expect("kata").user_attempts.is_empty(), "FR-167");
    let completed = core.db().recent_actions(&session, 5, Some(ActionType::ReviewCompleted)).expect("log");
    let data = completed[0].data.clone().expect("data");
    assert_eq!(data["success"], false);
    assert!(data["error"].as_str().is_some_and(|e| e.contains("HTTP 500")), "{data}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_review_or_a_level_outside_1_to_10_is_a_review_error_and_appends_nothing() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = server(&fake).await;
    let core = &server.fixture.core;
    let kata = seed_kata(core, vec![constraint("No loops", 1)]);
    let mut socket = ui(&server).await;
    for (answer, why) in [
        (json!({"correct": true, "feedback": "fine"}), "does not match"),
        (reviewed(11, true), "level 11, outside 1–10"),
        (reviewed(0, false), "level 0, outside 1–10"),
    ] {
        fake.once(Matcher::call_type("practice_review"), Reply::json(&answer));
        send(&mut socket, review(&kata, "x", &[])).await;
        let failed = frames_of(&mut socket, "review:error", Duration::from_millis(600)).await;
        assert!(failed[0]["error"].as_str().is_some_and(|e| e.contains(why)), "{why}: {failed:?}");
    }
    assert_eq!(review_calls(&fake).len(), 3, "a malformed answer is not transient: no retry");
    assert!(core.db().kata(&kata).expect("kata").user_attempts.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_concurrent_submissions_keep_five_attempts_and_report_an_unlock_once() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(
        Matcher::call_type("practice_review"),
        Reply::json(&reviewed(5, true)).delayed(Duration::from_millis(150)),
    );
    let server = server(&fake).await;
    let core = &server.fixture.core;
    let kata = seed_kata(core, vec![constraint("No loops", 3)]);
    let mut socket = ui(&server).await;
    for n in 0..5 {
        send(&mut socket, review(&kata, &format!("solution {n}"), &[])).await;
    }
    let answers = frames_of(&mut socket, "review:response", Duration::from_millis(1000)).await;
    assert_eq!(answers.len(), 5);
    let stored = core.db().kata(&kata).expect("kata").user_attempts;
    let mut codes: Vec<&str> = stored.iter().map(|a| a.code.as_str()).collect();
    codes.sort_unstable();
    assert_eq!(codes, ["solution 0", "solution 1", "solution 2", "solution 3", "solution 4"], "EC-79: none lost");
    let unlocks = answers.iter().filter(|a| a["unlockedConstraints"] != json!([])).count();
    assert_eq!(unlocks, 1, "each review sees the attempts committed before it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_session_empty_code_is_reviewed_at_the_novice_stage_and_both_actions_are_logged_with_none() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("practice_review"), Reply::json(&reviewed(1, false)));
    let server = server(&fake).await;
    let core = &server.fixture.core;
    let kata = seed_kata(core, vec![]);
    assert!(core.active_session().is_none());
    let mut socket = ui(&server).await;
    send(&mut socket, review(&kata, "", &[])).await;
    let answer = frames_of(&mut socket, "review:response", Duration::from_millis(800)).await;
    assert_eq!((answer[0]["level"].as_u64(), answer[0]["passed"].as_bool()), (Some(1), Some(false)), "EC-80");
    let call = &review_calls(&fake)[0];
    assert!(call.system().expect("system").contains("stage for this topic: novice"));
    assert_eq!(sent_message(call)["user_code"], "", "EC-76: empty code goes as is");
    assert_eq!(core.db().kata(&kata).expect("kata").user_attempts.len(), 1);
    // Logged without a session, not discarded (FR-165).
    let logged = core.db().actions_without_session(10).expect("log");
    let kinds: Vec<ActionType> = logged.iter().rev().map(|a| a.action_type).collect();
    assert_eq!(kinds, [ActionType::ReviewRequested, ActionType::ReviewCompleted]);
    assert_eq!(logged[0].data.as_ref().map(|d| d["success"].clone()), Some(json!(true)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_solution_is_the_same_flow_answered_with_a_solution_review() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("practice_review"), Reply::json(&reviewed(3, true)));
    let server = server(&fake).await;
    let core = &server.fixture.core;
    let kata = seed_kata(core, vec![constraint("No loops", 1), constraint("Recursion", 3)]);
    let mut socket = ui(&server).await;
    let submit = json!({"type": "practice:submit_solution",
        "payload": {"kataId": kata, "code": "const f = () => 1", "activeConstraints": ["Recursion"]}});
    send(&mut socket, submit).await;
    let mut frames = Vec::new();
    while let Ok(Some(Ok(Message::Text(text)))) =
        tokio::time::timeout(Duration::from_millis(800), futures_util::StreamExt::next(&mut socket)).await
    {
        frames.push(serde_json::from_str::<Value>(text.as_str()).expect("json"));
    }
    let reviews: Vec<&Value> = frames.iter().filter(|f| f["type"] == "practice:solution_review").collect();
    assert_eq!(
        reviews[0]["payload"],
        json!({"review": "The retry waits, but a rejected fetch escapes the loop.", "level": 3, "passed": true,
               "constraintsUnlocked": [{"title": "No loops", "description": "No loops, please", "minLevel": 1},
                                       {"title": "Recursion", "description": "Recursion, please", "minLevel": 3}]})
    );
    assert!(!frames.iter().any(|f| f["type"] == "review:response"), "each request gets its own reply type");
    let message = sent_message(&review_calls(&fake)[0]);
    assert_eq!(
        (message["user_code"].as_str(), message["active_constraints"][0]["title"].as_str()),
        (Some("const f = () => 1"), Some("Recursion"))
    );
    assert_eq!(core.db().kata(&kata).expect("kata").user_attempts.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_shows_progress_and_a_loaded_kata_offers_only_unlocked_constraints_without_the_notes() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = server(&fake).await;
    let core = &server.fixture.core;
    let fresh = seed_kata(core, vec![constraint("One", 1)]);
    let practised = seed_kata(core, vec![constraint("One", 1), constraint("Three", 3), constraint("Seven", 7)]);
    core.db().append_kata_attempt(&practised, &attempt("a", 2, vec![])).expect("attempt");
    core.db().append_kata_attempt(&practised, &attempt("b", 4, vec![])).expect("attempt");
    let mut socket = ui(&server).await;
    send(&mut socket, json!({"type": "practice:list", "payload": {}})).await;
    let listed = frames_of(&mut socket, "practice:katas", Duration::from_millis(400)).await;
    let katas = listed[0]["katas"].as_array().expect("katas");
    assert_eq!(katas.len(), 2);
    assert_eq!(
        katas[0],
        json!({"id": practised, "title": "Retry with backoff", "description": "Write fetchWithRetry(url, tries).",
               "gapTopic": TOPIC, "bestLevel": 4, "attempts": 2, "constraints": 3, "unlockedConstraints": 2}),
        "newest first"
    );
    assert_eq!((katas[1]["id"].as_str(), katas[1]["bestLevel"].as_u64()), (Some(fresh.as_str()), Some(0)));
    send(&mut socket, json!({"type": "practice:kata_request", "payload": {"kataId": practised}})).await;
    let loaded = frames_of(&mut socket, "practice:kata_load", Duration::from_millis(400)).await;
    assert_eq!(loaded[0]["kata"]["scaffoldingCode"], "export async function fetchWithRetry(url, tries) {\n}\n");
    let titles: Vec<&str> =
        loaded[0]["constraints"].as_array().expect("list").iter().filter_map(|c| c["title"].as_str()).collect();
    assert_eq!(titles, ["One", "Three"], "best level 4");
    assert!(!loaded[0].to_string().contains("Tests: fails twice"), "the instructor notes stay on the server");
    send(&mut socket, json!({"type": "practice:kata_request", "payload": {"kataId": fresh}})).await;
    let first = frames_of(&mut socket, "practice:kata_load", Duration::from_millis(400)).await;
    assert_eq!(first[0]["constraints"], json!([]), "before any attempt the best level is 0");
}

/// Issue 41, item 4: after practice the dashboard's kata progress is current without a
/// reload — a UI showing the dashboard gets `dashboard:state` again with the new attempt and
/// best level once the review is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_practice_review_the_dashboard_shows_the_katas_new_progress_without_asking_again() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("practice_review"), Reply::json(&reviewed(3, true)));
    let server = server(&fake).await;
    let kata = seed_kata(&server.fixture.core, vec![constraint("No loops", 1)]);
    let mut socket = ui(&server).await;
    send(&mut socket, json!({"type": "dashboard:request", "payload": {"statsPeriod": "all"}})).await;
    let progress = |frames: &[Value]| -> Vec<Value> {
        frames
            .iter()
            .filter(|f| f["type"] == "dashboard:state")
            .filter_map(|f| {
                f["payload"]["katas"].as_array().and_then(|k| k.iter().find(|k| k["id"] == kata.as_str())).cloned()
            })
            .collect()
    };
    let loaded = progress(&quiet_frames(&mut socket).await);
    assert_eq!(loaded[0]["attemptsCount"], 0, "{loaded:?}");
    send(
        &mut socket,
        json!({"type": "practice:submit_solution",
        "payload": {"kataId": kata, "code": "const f = () => 1", "activeConstraints": []}}),
    )
    .await;
    let pushed = progress(&quiet_frames(&mut socket).await);
    let last = pushed.last().expect("dashboard:state pushed after the review");
    assert_eq!((last["attemptsCount"].as_u64(), last["bestLevel"].as_u64()), (Some(1), Some(3)), "{last}");
}

/// The frames until none comes for 800 ms.
async fn quiet_frames(socket: &mut Socket) -> Vec<Value> {
    let mut frames = Vec::new();
    while let Ok(Some(Ok(Message::Text(text)))) =
        tokio::time::timeout(Duration::from_millis(800), futures_util::StreamExt::next(socket)).await
    {
        frames.push(serde_json::from_str::<Value>(text.as_str()).expect("json"));
    }
    frames
}

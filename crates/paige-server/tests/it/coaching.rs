//! The coaching pipeline (`paige_run_coaching_pipeline`) through a real MCP client, with the
//! fake Messages API for the model and the real embedded memory store (with the model from
//! `PAIGE_MODEL_DIR`, set by scripts/test.sh).

use std::time::Duration;

use paige_core::db::{ActionType, HintLevel};
use paige_core::memory::{Importance, MemoryInput, Origin};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};

use crate::Running;
use crate::tools::{call, error_text, ok, session_client, ui};

pub(crate) fn coach_reply() -> Value {
    json!({
        "phases": [
            {
                "number": 1,
                "title": "Find where the callback runs",
                "description": "Read the OAuth callback and note when the token arrives.",
                "expected_files": ["src/auth.rs"],
                "hint_level": "line",
                "hints": {
                    "file_hints": [{"path": "src/auth.rs", "style": "important"}],
                    "line_hints": [{"path": "src/auth.rs", "start": 2, "end": 2, "style": "focus", "hover_text": "The callback: what does it wait for?"}]
                },
                "knowledge_gap_opportunities": ["async ordering"]
            },
            {
                "number": 2,
                "title": "Await the token",
                "description": "Make the redirect wait for the token.",
                "expected_files": ["src/auth.rs"],
                "hint_level": "file",
                "hints": {"file_hints": [{"path": "src/auth.rs", "style": "suggested"}], "line_hints": []},
                "knowledge_gap_opportunities": []
            }
        ],
        "memory_connection": "Like the OAuth race you fixed in app-alpha",
        "estimated_difficulty": "intermediate"
    })
}

fn filter_reply() -> Value {
    json!({
        "relevant_memories": [{
            "content": "OAuth callback race condition: the token arrived after the redirect",
            "relevance": "direct",
            "connection": "the same race",
            "use_in_coaching": "remind them how they found it last time"
        }],
        "discarded": []
    })
}

async fn remember(server: &Running, content: &str) {
    let core = server.fixture.core.clone();
    let content = content.to_owned();
    tokio::task::spawn_blocking(move || {
        let input = MemoryInput { content, tags: vec!["auth".into()], importance: Importance::High };
        let project = core.project_name();
        assert_eq!(core.memory().add_memories(&[input], &Origin::Session("old".into()), &project, core.now()).added, 1);
    })
    .await
    .expect("remembered");
}

pub(crate) fn args() -> Value {
    json!({"planText": "1. Find the callback\n2. Await the token", "issueSummary": "Login fails: OAuth race", "issueNumber": 7})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pipeline_stores_the_coached_phases_announces_the_plan_and_shows_the_first_phases_hints() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("memory_retrieval_filter"), Reply::json(&filter_reply()));
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    let server = crate::coaching_server(&fake).await;
    remember(&server, "OAuth callback race condition: the token arrived after the redirect").await;
    let session = server.fixture.core.coaching().start_session(Some(7), Some("Login fails".into())).expect("session");
    let mut socket = ui(&server).await;
    let client = session_client(&server).await;
    let result = call(&client, "paige_run_coaching_pipeline", args()).await;
    let output = ok(&result).clone();
    assert_eq!(output["estimatedDifficulty"], "intermediate");
    assert_eq!(output["memoryConnection"], "Like the OAuth race you fixed in app-alpha");
    assert_eq!(
        output["phases"][0],
        json!({"number": 1, "title": "Find where the callback runs", "description": "Read the OAuth callback and note when the token arrives.", "hintLevel": "line"})
    );
    assert_eq!(output["phases"].as_array().map(Vec::len), Some(2));
    // Stored: the plan, its phases and their hints.
    let db = server.fixture.core.db();
    let plans = db.plans_for_session(&session.id).expect("plans");
    assert_eq!(plans.len(), 1);
    assert_eq!(output["planId"], plans[0].id.as_str());
    let phases = db.phases_for_plan(&plans[0].id).expect("phases");
    assert_eq!((phases[0].hint_level, phases[1].hint_level), (HintLevel::Line, HintLevel::File));
    assert_eq!(db.phase_hints(&phases[0].id, None).expect("hints").len(), 2);
    let logged = db.recent_actions(&session.id, 5, Some(ActionType::CoachingPipeline)).expect("actions");
    assert_eq!(logged.len(), 1);
    // The models saw what they should: the memory went through the filter to the coach.
    let requests = fake.message_requests();
    let coach = requests.iter().find(|r| r.call_type() == Some("coach_agent")).expect("coach called");
    let message: Value = serde_json::from_str(coach.user_message().expect("user message")).expect("json");
    assert_eq!(message["dreyfus_stage"], "novice");
    assert_eq!(message["relevant_memories"][0]["connection"], "the same race");
    // The UI heard it: progress, the plan, then the first phase's hints.
    let frames = all_frames(&mut socket, Duration::from_millis(500)).await;
    let of = |kind: &str| frames.iter().filter(|f| f["type"] == kind).map(|f| f["payload"].clone()).collect::<Vec<_>>();
    assert!(
        of("coaching:message").iter().any(|m| m["message"].as_str().is_some_and(|t| t.contains("plan into phases")))
    );
    let ready = of("coaching:plan_ready");
    assert_eq!(ready.len(), 1, "one plan_ready");
    assert_eq!(ready[0]["phases"][1]["title"], "Await the token");
    assert_eq!(of("explorer:hint_files")[0]["hints"][0], json!({"path": "src/auth.rs", "style": "important"}));
    let lines = of("editor:highlight_lines");
    assert_eq!((lines[0]["path"].as_str(), lines[0]["start"].as_u64()), (Some("src/auth.rs"), Some(2)));
    assert_eq!(lines[0]["hoverText"], "The callback: what does it wait for?");
}

/// Every frame the socket receives until it is quiet for `within`.
pub(crate) async fn all_frames(
    socket: &mut tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    within: Duration,
) -> Vec<Value> {
    use futures_util::StreamExt;
    let mut frames = Vec::new();
    while let Ok(Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text)))) =
        tokio::time::timeout(within, socket.next()).await
    {
        frames.push(serde_json::from_str(text.as_str()).expect("json"));
    }
    frames
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_coach_agent_fails_claude_code_gets_the_error_and_nothing_is_stored() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::error(400, "invalid_request_error", "plan too vague"));
    let server = crate::coaching_server(&fake).await;
    let session = server.fixture.core.coaching().start_session(None, None).expect("session");
    let client = session_client(&server).await;
    let result = call(&client, "paige_run_coaching_pipeline", args()).await;
    let text = error_text(&result);
    assert!(text.contains("the coach agent failed, nothing was stored") && text.contains("plan too vague"), "{text}");
    assert!(server.fixture.core.db().plans_for_session(&session.id).expect("plans").is_empty());
    // No memories: the filter was never asked.
    assert!(fake.message_requests().iter().all(|r| r.call_type() != Some("memory_retrieval_filter")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_memory_filter_means_coaching_without_memories() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("memory_retrieval_filter"), Reply::text("not json at all"));
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    let server = crate::coaching_server(&fake).await;
    remember(&server, "useEffect cleanup for intervals").await;
    server.fixture.core.coaching().start_session(None, None).expect("session");
    let client = session_client(&server).await;
    let result = call(&client, "paige_run_coaching_pipeline", args()).await;
    assert_eq!(ok(&result)["phases"].as_array().map(Vec::len), Some(2));
    let requests = fake.message_requests();
    assert!(requests.iter().any(|r| r.call_type() == Some("memory_retrieval_filter")), "the filter was tried");
    let coach = requests.iter().find(|r| r.call_type() == Some("coach_agent")).expect("coach called");
    let message: Value = serde_json::from_str(coach.user_message().expect("user message")).expect("json");
    assert_eq!(message["relevant_memories"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_phases_from_the_coach_is_an_empty_plan_stored_and_an_empty_list() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let empty = json!({"phases": [], "memory_connection": null, "estimated_difficulty": "beginner"});
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&empty));
    let server = crate::coaching_server(&fake).await;
    let session = server.fixture.core.coaching().start_session(None, None).expect("session");
    let mut socket = ui(&server).await;
    let client = session_client(&server).await;
    let result = call(&client, "paige_run_coaching_pipeline", args()).await;
    let output = ok(&result).clone();
    assert_eq!(output["phases"], json!([]), "EC-57: unusual, not an error");
    let plans = server.fixture.core.db().plans_for_session(&session.id).expect("plans");
    assert_eq!(plans.len(), 1, "the empty plan is stored");
    assert_eq!(output["planId"], plans[0].id.as_str());
    assert!(server.fixture.core.db().phases_for_plan(&plans[0].id).expect("phases").is_empty());
    let frames = all_frames(&mut socket, Duration::from_millis(500)).await;
    let ready: Vec<&Value> = frames.iter().filter(|f| f["type"] == "coaching:plan_ready").collect();
    assert_eq!(ready.len(), 1);
    assert_eq!(ready[0]["payload"]["phases"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_connection_the_coach_invents_without_memories_is_dropped() {
    let fake = FakeAnthropic::start().await.expect("fake");
    // No memory is stored: the coach is given none, yet names a connection.
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    let server = crate::coaching_server(&fake).await;
    server.fixture.core.coaching().start_session(None, None).expect("session");
    let mut socket = ui(&server).await;
    let client = session_client(&server).await;
    let result = call(&client, "paige_run_coaching_pipeline", args()).await;
    let output = ok(&result).clone();
    let coach = fake.message_requests().into_iter().find(|r| r.call_type() == Some("coach_agent")).expect("coach");
    let message: Value = serde_json::from_str(coach.user_message().expect("user message")).expect("json");
    assert_eq!(message["relevant_memories"], json!([]), "the coach was given no memory");
    assert_eq!(output["memoryConnection"], Value::Null, "Claude Code is not told of it");
    let frames = all_frames(&mut socket, Duration::from_millis(500)).await;
    let ready = frames.iter().find(|f| f["type"] == "coaching:plan_ready").expect("plan_ready");
    assert_eq!(ready["payload"]["memoryConnection"], Value::Null, "nor is the UI");
    assert_eq!(ready["payload"]["phases"].as_array().map(Vec::len), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_pipeline_runs_in_one_session_store_two_plans() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    let server = crate::coaching_server(&fake).await;
    let session = server.fixture.core.coaching().start_session(None, None).expect("session");
    let client = session_client(&server).await;
    let (a, b) = tokio::join!(
        call(&client, "paige_run_coaching_pipeline", args()),
        call(&client, "paige_run_coaching_pipeline", args())
    );
    assert_ne!(ok(&a)["planId"], ok(&b)["planId"]);
    assert_eq!(server.fixture.core.db().plans_for_session(&session.id).expect("plans").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_active_session_the_pipeline_asks_for_one_and_calls_no_model() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = crate::coaching_server(&fake).await;
    let client = session_client(&server).await;
    let result = call(&client, "paige_run_coaching_pipeline", args()).await;
    assert_eq!(error_text(&result), "No active session");
    assert!(fake.message_requests().is_empty());
}

/// A session with the coach reply's two-phase plan stored, and an MCP client.
async fn planned() -> (FakeAnthropic, Running, rmcp::service::RunningService<rmcp::RoleClient, ()>) {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    let server = crate::coaching_server(&fake).await;
    server.fixture.core.coaching().start_session(None, None).expect("session");
    let client = session_client(&server).await;
    ok(&call(&client, "paige_run_coaching_pipeline", args()).await);
    (fake, server, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hint_level_the_learner_picks_is_stored_on_the_phase_in_progress_and_redraws_the_hints() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let (_fake, server, client) = planned().await;
    ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "active"})).await);
    let mut socket = ui(&server).await;
    let change = |level: &str, previous: &str| {
        json!({"type": "hints:level_change", "payload": {"level": level, "previousLevel": previous}}).to_string()
    };
    // Down to file: the line highlights go, the file hints stay.
    socket.send(Message::Text(change("file", "line").into())).await.expect("send");
    let frames = all_frames(&mut socket, Duration::from_millis(400)).await;
    let kinds: Vec<&str> = frames.iter().filter_map(|f| f["type"].as_str()).collect();
    assert_eq!(
        kinds,
        ["coaching:phase_update", "editor:clear_highlights", "explorer:clear_hints", "explorer:hint_files"],
        "{frames:?}"
    );
    assert_eq!(frames[0]["payload"]["hintLevel"], "file", "every UI shows the stored level");
    let db = server.fixture.core.db();
    let plan = db.plans_for_session(&server.fixture.core.active_session().expect("session").id).expect("plans");
    let phase = db.phases_for_plan(&plan[0].id).expect("phases").remove(0);
    assert_eq!(phase.hint_level, HintLevel::File);
    assert!(db.progress_for_phase(&phase.id).expect("progress").is_empty(), "a lower level is no escalation");
    // Back up to line: the highlights return, and the escalation is recorded.
    socket.send(Message::Text(change("line", "file").into())).await.expect("send");
    let frames = all_frames(&mut socket, Duration::from_millis(400)).await;
    assert!(frames.iter().any(|f| f["type"] == "editor:highlight_lines"), "{frames:?}");
    let progress = db.progress_for_phase(&phase.id).expect("progress");
    assert_eq!(progress.len(), 1);
    assert_eq!(progress[0].event_type, paige_core::db::ProgressEventType::HintEscalated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phase_that_becomes_active_shows_its_own_hints_in_place_of_the_last_ones() {
    let (_fake, server, client) = planned().await;
    let mut socket = ui(&server).await;
    ok(&call(&client, "paige_update_phase", json!({"phase": 2, "status": "active"})).await);
    let frames = all_frames(&mut socket, Duration::from_millis(400)).await;
    let kinds: Vec<&str> = frames.iter().filter_map(|f| f["type"].as_str()).collect();
    assert_eq!(
        kinds,
        ["editor:clear_highlights", "explorer:clear_hints", "explorer:hint_files", "coaching:phase_update"],
        "phase 2 is at file level: its file hint, no line highlights"
    );
    let hint = frames.iter().find(|f| f["type"] == "explorer:hint_files").expect("hint_files");
    assert_eq!(hint["payload"]["hints"][0]["style"], "suggested");
}

/// Issue 40, item 7: the dashboard knows the live session. A UI showing the dashboard is
/// pushed `dashboard:state` when a session starts (live, planning), when its plan comes
/// (phases) and when a phase is done — without asking again; the live session is not one to
/// resume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_shows_the_live_session_as_it_goes_on_without_asking_again() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    let server = crate::coaching_server(&fake).await;
    let mut socket = ui(&server).await;
    let ask = json!({"type": "dashboard:request", "payload": {"statsPeriod": "all"}}).to_string();
    socket.send(Message::Text(ask.into())).await.expect("ask");
    let pushed = |frames: &[Value]| -> Vec<Value> {
        frames
            .iter()
            .filter(|f| f["type"] == "dashboard:state")
            .map(|f| f["payload"]["inProgressSessions"].clone())
            .collect()
    };
    let first = all_frames(&mut socket, Duration::from_millis(500)).await;
    assert_eq!(pushed(&first), [json!([])], "nothing in progress yet");

    let session = server.fixture.core.coaching().start_session(None, Some("Say bonjour".into())).expect("session").id;
    let frames = all_frames(&mut socket, Duration::from_millis(800)).await;
    let live = pushed(&frames).pop().expect("pushed when the session started");
    assert_eq!(live[0]["id"], session.as_str());
    assert_eq!((live[0]["live"].as_bool(), live[0]["phasesTotal"].as_u64()), (Some(true), Some(0)), "{live}");

    let client = session_client(&server).await;
    ok(&call(&client, "paige_run_coaching_pipeline", args()).await);
    let frames = all_frames(&mut socket, Duration::from_millis(800)).await;
    let planned = pushed(&frames).pop().expect("pushed when the plan came");
    assert_eq!((planned[0]["phasesCompleted"].as_u64(), planned[0]["phasesTotal"].as_u64()), (Some(0), Some(2)));
    assert!(planned[0]["costSoFar"].as_f64().is_some(), "{planned}");

    ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "complete"})).await);
    let frames = all_frames(&mut socket, Duration::from_millis(800)).await;
    let done = pushed(&frames).pop().expect("pushed when a phase was done");
    assert_eq!((done[0]["phasesCompleted"].as_u64(), done[0]["phasesTotal"].as_u64()), (Some(1), Some(2)));
}

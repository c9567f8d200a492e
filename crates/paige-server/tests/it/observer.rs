//! The Observer (spec Story 10) through `/ws` and MCP clients, with the fake Messages API
//! for the triage model and the core's manual clock for every threshold (the idle check's
//! own ticking is shortened to real milliseconds; its threshold is on the clock).

use std::time::Duration;

use futures_util::SinkExt;
use paige_core::db::ActionType;
use paige_core::observer::ObserverSettings;
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::Running;
use crate::coaching::{all_frames, args, coach_reply};
use crate::tools::{call, ok, session_client, ui};

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) async fn send(socket: &mut Socket, kind: &str, payload: Value) {
    socket.send(Message::Text(json!({"type": kind, "payload": payload}).to_string().into())).await.expect("send");
}

fn of(frames: &[Value], kind: &str) -> Vec<Value> {
    frames.iter().filter(|f| f["type"] == kind).map(|f| f["payload"].clone()).collect()
}

pub(crate) fn triage(should_nudge: bool, confidence: f64, signal: &str) -> Value {
    json!({
        "should_nudge": should_nudge, "confidence": confidence, "signal": signal,
        "reasoning": "the learner is in the wrong file",
        "suggested_context": {"current_file": "src/notes.md", "expected_file": "src/auth.rs", "time_in_file": "3m12s", "phase_description": "Find where the callback runs"}
    })
}

pub(crate) fn settings() -> ObserverSettings {
    ObserverSettings {
        idle_check: Duration::from_millis(50),
        quiet_output: Duration::from_millis(200),
        stale_after: Duration::from_secs(2),
        ..ObserverSettings::default()
    }
}

/// A served core whose coach agent plans two phases and whose triage answers `reply`, with a
/// session started and planned; `src/notes.md` exists beside `src/auth.rs`.
async fn watched(reply: Reply) -> (FakeAnthropic, Running) {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    fake.always(Matcher::call_type("observer_triage"), reply);
    let server = crate::coaching_server_with(&fake, |config| {
        config.gh_program = Some("/nonexistent/gh".into());
        config.limits.observer = settings();
    })
    .await;
    std::fs::write(server.fixture.core.project_root().path().join("src/notes.md"), "notes\n").expect("file");
    server.fixture.core.coaching().start_session(Some(7), Some("Login race".into())).expect("session");
    let client = session_client(&server).await;
    ok(&call(&client, "paige_run_coaching_pipeline", args()).await);
    (fake, server)
}

pub(crate) fn triage_calls(fake: &FakeAnthropic) -> Vec<Value> {
    fake.message_requests()
        .iter()
        .filter(|r| r.call_type() == Some("observer_triage"))
        .map(|r| serde_json::from_str(r.user_message().expect("message")).expect("json"))
        .collect()
}

fn logged(server: &Running, kind: ActionType) -> Vec<Value> {
    let core = &server.fixture.core;
    let session = core.active_session().expect("session");
    core.db().recent_actions(&session.id, 50, Some(kind)).expect("log").into_iter().filter_map(|a| a.data).collect()
}

/// Waits (real time) until `done` holds, up to 5 s.
async fn until(mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !done() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observer_starts_with_the_session_and_stops_when_it_ends() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = crate::coaching_server(&fake).await;
    let mut socket = ui(&server).await;
    let core = &server.fixture.core;
    core.coaching().start_session(None, Some("Work".into())).expect("session");
    let status = crate::tools::frames_of(&mut socket, "observer:status", Duration::from_millis(300)).await;
    assert_eq!(status, [json!({"active": true, "muted": false, "lastEvaluation": null})]);
    core.coaching().end_session(paige_core::db::SessionStatus::Completed).expect("ended");
    let status = crate::tools::frames_of(&mut socket, "observer:status", Duration::from_millis(300)).await;
    assert_eq!(status, [json!({"active": false, "muted": false, "lastEvaluation": null})]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_file_the_phase_does_not_expect_nudges_with_what_the_observer_saw() {
    let (fake, server) = watched(Reply::json(&triage(true, 0.85, "wrong_file"))).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    let nudges = crate::tools::frames_of(&mut socket, "observer:nudge", Duration::from_millis(600)).await;
    assert_eq!(nudges.len(), 1);
    assert_eq!(
        nudges[0],
        json!({"signal": "wrong_file", "confidence": 0.85, "context": {"current_file": "src/notes.md", "expected_file": "src/auth.rs", "time_in_file": "3m12s", "phase_description": "Find where the callback runs"}})
    );
    assert_eq!(logged(&server, ActionType::NudgeSent), [json!({"signal": "wrong_file", "confidence": 0.85})]);
    // The snapshot the model saw (FR-137): the phase, the last actions, the times, the stage.
    let context = triage_calls(&fake).remove(0);
    assert_eq!(context["current_phase"]["title"], "Find where the callback runs");
    assert_eq!(context["current_phase"]["expected_files"], json!(["src/auth.rs"]));
    assert_eq!(context["recent_actions"][0], json!({"type": "file_open", "path": "src/notes.md", "ago": "0s ago"}));
    assert_eq!(
        (context["time_since_last_save"].as_str(), context["time_since_last_nudge"].as_str()),
        (Some("never"), Some("never"))
    );
    assert_eq!((context["dreyfus_stage"].as_str(), context["user_idle"].as_bool()), (Some("novice"), Some(false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn within_the_cooldown_a_trigger_is_suppressed_and_after_it_the_model_is_asked_again() {
    let (fake, server) = watched(Reply::json(&triage(true, 0.9, "wrong_file"))).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    until(|| !logged(&server, ActionType::NudgeSent).is_empty()).await;
    server.fixture.clock.advance(chrono::Duration::seconds(90));
    send(&mut socket, "file:open", json!({"path": "src/auth.rs"})).await;
    until(|| !logged(&server, ActionType::NudgeSuppressed).is_empty()).await;
    assert_eq!(logged(&server, ActionType::NudgeSuppressed)[0]["reason"], "cooldown");
    assert_eq!(triage_calls(&fake).len(), 1, "no model call in the cooldown");
    server.fixture.clock.advance(chrono::Duration::seconds(31));
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    until(|| triage_calls(&fake).len() == 2).await;
    assert_eq!(triage_calls(&fake).len(), 2);
    assert!(triage_calls(&fake)[1]["time_since_last_nudge"].as_str().is_some_and(|t| t.starts_with("2m")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_learner_in_flow_is_left_alone() {
    let (fake, server) = watched(Reply::json(&triage(true, 0.9, "wrong_file"))).await;
    let mut socket = ui(&server).await;
    for i in 0..11 {
        send(&mut socket, "editor:tab_switch", json!({"fromPath": null, "toPath": format!("src/{i}.rs")})).await;
    }
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    until(|| !logged(&server, ActionType::NudgeSuppressed).is_empty()).await;
    assert_eq!(logged(&server, ActionType::NudgeSuppressed)[0]["reason"], "flow_state");
    assert!(triage_calls(&fake).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_confidence_nudge_is_logged_not_sent_and_a_contradictory_one_is_neither() {
    let (_fake, server) = watched(Reply::json(&triage(true, 0.5, "scope_drift"))).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    let frames = all_frames(&mut socket, Duration::from_millis(600)).await;
    assert!(of(&frames, "observer:nudge").is_empty());
    assert_eq!(
        logged(&server, ActionType::NudgeSuppressed),
        [json!({"signal": "scope_drift", "confidence": 0.5, "reason": "low_confidence"})]
    );
    let (_fake, server) = watched(Reply::json(&triage(true, 0.95, "no_nudge"))).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    let frames = all_frames(&mut socket, Duration::from_millis(600)).await;
    assert!(of(&frames, "observer:nudge").is_empty());
    assert!(
        logged(&server, ActionType::NudgeSuppressed).is_empty() && logged(&server, ActionType::NudgeSent).is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn muted_the_observer_asks_nothing_and_logs_nothing_and_a_new_ui_sees_it_muted() {
    let (fake, server) = watched(Reply::json(&triage(true, 0.9, "wrong_file"))).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "observer:mute", json!({"muted": true})).await;
    let status = crate::tools::frames_of(&mut socket, "observer:status", Duration::from_millis(300)).await;
    assert_eq!(status[0]["muted"], true);
    assert_eq!(logged(&server, ActionType::ObserverMuted), [json!({"muted": true})]);
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    let frames = all_frames(&mut socket, Duration::from_millis(500)).await;
    assert!(of(&frames, "observer:nudge").is_empty() && triage_calls(&fake).is_empty());
    assert!(logged(&server, ActionType::NudgeSuppressed).is_empty(), "muted is silent");
    // A reload: the UI learns the backend's state, not a guess of its own.
    let mut reloaded = ui(&server).await;
    let hello = json!({"version": "0.1.0", "platform": "test", "windowSize": {"width": 800, "height": 600}});
    send(&mut reloaded, "connection:hello", hello).await;
    let status = crate::tools::frames_of(&mut reloaded, "observer:status", Duration::from_millis(300)).await;
    assert_eq!((status[0]["active"].as_bool(), status[0]["muted"].as_bool()), (Some(true), Some(true)));
    send(&mut socket, "observer:mute", json!({"muted": false})).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    until(|| triage_calls(&fake).len() == 1).await;
    assert_eq!(triage_calls(&fake).len(), 1, "unmuted, it looks again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mute_without_a_session_is_ignored() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = crate::coaching_server(&fake).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "observer:mute", json!({"muted": true})).await;
    let frames = all_frames(&mut socket, Duration::from_millis(300)).await;
    assert!(frames.is_empty(), "no reply, no status: {frames:?}");
    assert!(!server.fixture.core.observer_status().active);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fifth_buffer_update_and_a_phase_transition_make_the_observer_look() {
    let (fake, server) = watched(Reply::json(&triage(false, 0.1, "no_nudge"))).await;
    let mut socket = ui(&server).await;
    for i in 0..4 {
        send(
            &mut socket,
            "buffer:update",
            json!({"path": "src/auth.rs", "content": format!("fn login() {{}} // {i}\n")}),
        )
        .await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(triage_calls(&fake).is_empty(), "four updates are not enough");
    send(&mut socket, "buffer:update", json!({"path": "src/auth.rs", "content": "fn login() {} // 5\n"})).await;
    until(|| triage_calls(&fake).len() == 1).await;
    assert_eq!(triage_calls(&fake).len(), 1);
    // A quiet answer logs nothing but the evaluation's time.
    assert!(server.fixture.core.observer_status().last_evaluation.is_some());
    assert!(logged(&server, ActionType::NudgeSuppressed).is_empty());
    let client = session_client(&server).await;
    ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "active"})).await);
    until(|| triage_calls(&fake).len() == 2).await;
    assert_eq!(triage_calls(&fake).len(), 2, "phase_started is a trigger");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_five_idle_minutes_the_observer_looks_with_user_idle_set() {
    let (fake, server) = watched(Reply::json(&triage(true, 0.8, "idle"))).await;
    let mut socket = ui(&server).await;
    server.fixture.clock.advance(chrono::Duration::minutes(6));
    let nudges = crate::tools::frames_of(&mut socket, "observer:nudge", Duration::from_millis(800)).await;
    assert_eq!(nudges[0]["signal"], "idle");
    assert_eq!(triage_calls(&fake)[0]["user_idle"], true);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(triage_calls(&fake).len(), 1, "one look per idle spell");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_triage_leaves_the_observer_watching() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    fake.once(Matcher::call_type("observer_triage"), Reply::error(400, "invalid_request_error", "bad"));
    fake.always(Matcher::call_type("observer_triage"), Reply::json(&triage(true, 0.9, "wrong_file")));
    let server = crate::coaching_server_with(&fake, |config| config.limits.observer = settings()).await;
    std::fs::write(server.fixture.core.project_root().path().join("src/notes.md"), "notes\n").expect("file");
    server.fixture.core.coaching().start_session(None, Some("Work".into())).expect("session");
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    until(|| triage_calls(&fake).len() == 1).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(server.fixture.core.observer_status().active);
    send(&mut socket, "file:open", json!({"path": "src/auth.rs"})).await;
    let nudges = crate::tools::frames_of(&mut socket, "observer:nudge", Duration::from_millis(800)).await;
    assert_eq!(nudges.len(), 1, "the next trigger nudges");
    // No plan yet: the snapshot says so (Scenario 10.15).
    assert_eq!(triage_calls(&fake)[1]["current_phase"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_triage_answer_arriving_after_the_session_ended_is_discarded() {
    let reply = Reply::json(&triage(true, 0.9, "wrong_file")).delayed(Duration::from_millis(700));
    let (fake, server) = watched(reply).await;
    let mut socket = ui(&server).await;
    let session = server.fixture.core.active_session().expect("session").id;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    until(|| !fake.message_requests().iter().all(|r| r.call_type() != Some("observer_triage"))).await;
    server.fixture.core.coaching().end_session(paige_core::db::SessionStatus::Completed).expect("ended");
    let frames = all_frames(&mut socket, Duration::from_millis(1200)).await;
    assert!(of(&frames, "observer:nudge").is_empty(), "{frames:?}");
    let sent = server.fixture.core.db().recent_actions(&session, 50, Some(ActionType::NudgeSent)).expect("log");
    assert!(sent.is_empty());
}

/// A terminal on connection `conn` running `cat` (which echoes what it is typed), counted as
/// Claude Code when `accepts_nudges`; its output collected into a shared string.
fn cat_terminal(
    server: &Running,
    accepts_nudges: bool,
) -> (paige_core::protocol::ConnectionId, std::sync::Arc<std::sync::Mutex<String>>) {
    let core = &server.fixture.core;
    let conn = core.connect();
    let command = paige_core::terminal::AgentCommand {
        program: "cat".into(),
        args: Vec::new(),
        cwd: core.project_root().path().to_owned(),
        banner: None,
        env: Vec::new(),
        accepts_nudges,
        clear_env: false,
    };
    let mut output = core.open_terminal(conn, &command).expect("terminal");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = seen.clone();
    tokio::spawn(async move {
        while let Some(chunk) = output.recv().await {
            sink.lock().expect("lock").push_str(&chunk);
        }
    });
    (conn, seen)
}

fn typed(core: &std::sync::Arc<paige_core::Core>, conn: paige_core::protocol::ConnectionId, input: &str) {
    core.handle_text(conn, &json!({"type": "terminal:input", "payload": {"input": input}}).to_string());
}

const NUDGE: &str = "[Paige's Observer] signal wrong_file; the learner is in src/notes.md; for 3m12s";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nudge_is_typed_into_claude_codes_terminal_once_the_learner_finishes_their_line() {
    let (_fake, server) = watched(Reply::json(&triage(true, 0.9, "wrong_file"))).await;
    let core = server.fixture.core.clone();
    let (conn, seen) = cat_terminal(&server, true);
    typed(&core, conn, "half a li");
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    let nudges = crate::tools::frames_of(&mut socket, "observer:nudge", Duration::from_millis(800)).await;
    assert_eq!(nudges.len(), 1, "the UI has it at once");
    assert!(!seen.lock().expect("lock").contains(NUDGE), "not while the learner is mid-line");
    typed(&core, conn, "ne\r");
    until(|| seen.lock().expect("lock").contains(NUDGE)).await;
    let out = seen.lock().expect("lock").clone();
    let (line, nudge) = (out.find("half a line").expect("the learner's line"), out.find(NUDGE).expect("the nudge"));
    assert!(line < nudge, "after the learner's line: {out:?}");
    assert!(out.contains("do not write their code."), "{out:?}");
    core.close_terminal(conn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nudge_the_learner_never_leaves_room_for_goes_stale_and_a_shell_never_gets_one() {
    let (_fake, server) = watched(Reply::json(&triage(true, 0.9, "wrong_file"))).await;
    let core = server.fixture.core.clone();
    let (conn, seen) = cat_terminal(&server, true);
    typed(&core, conn, "still typi");
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    until(|| logged(&server, ActionType::NudgeSuppressed).iter().any(|d| d["reason"] == "stale")).await;
    let stale = logged(&server, ActionType::NudgeSuppressed);
    assert_eq!((stale[0]["reason"].as_str(), stale[0]["signal"].as_str()), (Some("stale"), Some("wrong_file")));
    assert!(!seen.lock().expect("lock").contains(NUDGE));
    core.close_terminal(conn);
    // A terminal that is not Claude Code (PAIGE_AGENT_CMD, the fallback shell) never gets one.
    let (_fake, server) = watched(Reply::json(&triage(true, 0.9, "wrong_file"))).await;
    let (conn, seen) = cat_terminal(&server, false);
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    let nudges = crate::tools::frames_of(&mut socket, "observer:nudge", Duration::from_millis(800)).await;
    assert_eq!(nudges.len(), 1, "shown in the UI");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!seen.lock().expect("lock").contains("Paige's Observer"), "never typed into a shell");
    server.fixture.core.close_terminal(conn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_nudge_superseded_by_a_newer_trigger_is_dropped_as_stale() {
    let (_fake, server) = watched(Reply::json(&triage(true, 0.9, "wrong_file"))).await;
    let core = server.fixture.core.clone();
    let (conn, seen) = cat_terminal(&server, true);
    typed(&core, conn, "mid-li");
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    until(|| !logged(&server, ActionType::NudgeSent).is_empty()).await;
    // A newer trigger (in the cooldown: no new evaluation) makes the waiting nudge old news.
    send(&mut socket, "file:open", json!({"path": "src/auth.rs"})).await;
    until(|| logged(&server, ActionType::NudgeSuppressed).iter().any(|d| d["reason"] == "stale")).await;
    let stale: Vec<Value> =
        logged(&server, ActionType::NudgeSuppressed).into_iter().filter(|d| d["reason"] == "stale").collect();
    assert_eq!(stale[0]["why"], "superseded by a newer trigger");
    typed(&core, conn, "ne\r");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!seen.lock().expect("lock").contains(NUDGE), "never typed once superseded");
    core.close_terminal(conn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wrapup_stops_the_observer_and_the_nudge_waiting_for_claude_code_is_never_typed() {
    let (fake, server) = watched(Reply::json(&triage(true, 0.9, "wrong_file"))).await;
    // The wrap-up's first model step takes a while: the window in which a nudge could land.
    let slow = Reply::error(400, "invalid_request_error", "slow").delayed(Duration::from_millis(1500));
    fake.always(Matcher::call_type("knowledge_gap_extraction"), slow);
    let core = server.fixture.core.clone();
    let session = core.active_session().expect("session").id;
    let (conn, seen) = cat_terminal(&server, true);
    typed(&core, conn, "mid-li");
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    until(|| !logged(&server, ActionType::NudgeSent).is_empty()).await;
    assert!(!seen.lock().expect("lock").contains(NUDGE), "waiting for the learner's line");
    let client = session_client(&server).await;
    let end = call(&client, "paige_end_session", json!({"sessionTranscript": "learner fixed the race"}));
    let meanwhile = async {
        let status = crate::tools::frames_of(&mut socket, "observer:status", Duration::from_millis(400)).await;
        assert_eq!(status.last().map(|s| s["active"].clone()), Some(json!(false)), "stopped at the wrap-up's start");
        assert!(core.active_session().is_some(), "the session is still wrapping up");
        // The learner finishes their line, opens a file, goes idle: nothing reaches Claude Code.
        typed(&core, conn, "ne\r");
        send(&mut socket, "file:open", json!({"path": "src/auth.rs"})).await;
        server.fixture.clock.advance(chrono::Duration::minutes(6));
        tokio::time::sleep(Duration::from_millis(600)).await;
    };
    let (ended, ()) = tokio::join!(end, meanwhile);
    ok(&ended);
    assert!(!seen.lock().expect("lock").contains(NUDGE), "{:?}", seen.lock().expect("lock"));
    assert_eq!(triage_calls(&fake).len(), 1, "no triage while the session wraps up");
    let sent = core.db().recent_actions(&session, 50, Some(ActionType::NudgeSent)).expect("log");
    assert_eq!(sent.len(), 1);
    core.close_terminal(conn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_learner_who_stays_idle_is_looked_at_again_at_ten_minutes_and_activity_resets_the_back_off() {
    let (fake, server) = watched(Reply::json(&triage(false, 0.2, "no_nudge"))).await;
    let clock = &server.fixture.clock;
    clock.advance(chrono::Duration::minutes(6));
    until(|| triage_calls(&fake).len() == 1).await;
    clock.advance(chrono::Duration::minutes(3));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(triage_calls(&fake).len(), 1, "not again before ten idle minutes");
    clock.advance(chrono::Duration::minutes(2));
    until(|| triage_calls(&fake).len() == 2).await;
    assert_eq!(triage_calls(&fake).len(), 2, "a learner still idle is looked at again");
    assert_eq!(triage_calls(&fake)[1]["user_idle"], true);
    // Back to work (a trigger of its own), then idle again: the back-off starts over at 5 min.
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/auth.rs"})).await;
    until(|| triage_calls(&fake).len() == 3).await;
    clock.advance(chrono::Duration::minutes(6));
    until(|| triage_calls(&fake).len() == 4).await;
    assert_eq!(triage_calls(&fake).len(), 4, "a new spell is looked at after five minutes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observer_logs_idle_start_when_the_learner_goes_idle_and_idle_end_when_they_come_back() {
    let (_fake, server) = watched(Reply::json(&triage(false, 0.2, "no_nudge"))).await;
    let started_at = server.fixture.core.now();
    server.fixture.clock.advance(chrono::Duration::minutes(6));
    until(|| !logged(&server, ActionType::IdleStart).is_empty()).await;
    assert_eq!(
        logged(&server, ActionType::IdleStart),
        [json!({"lastActionTimestamp": started_at.timestamp_millis(), "idleMs": 360_000, "source": "observer"})]
    );
    assert!(logged(&server, ActionType::IdleEnd).is_empty(), "still idle");
    server.fixture.clock.advance(chrono::Duration::minutes(6));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(logged(&server, ActionType::IdleStart).len(), 1, "one idle_start per spell");
    let mut socket = ui(&server).await;
    send(&mut socket, "file:open", json!({"path": "src/auth.rs"})).await;
    until(|| !logged(&server, ActionType::IdleEnd).is_empty()).await;
    assert_eq!(logged(&server, ActionType::IdleEnd), [json!({"idleMs": 720_000, "source": "observer"})]);
    send(&mut socket, "file:open", json!({"path": "src/notes.md"})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(logged(&server, ActionType::IdleEnd).len(), 1, "activity outside a spell logs nothing");
}

//! Issue 28, what a first-time learner meets, over a real `/ws`: Claude Code's tool calls
//! reach the panel while the plan is awaited (`coaching:agent_activity`); the learner asks for
//! a plan again (`coaching:replan`), marks a phase done (`coaching:phase_done`) and skips the
//! interview (`intake:skip`); and a wrap-up Claude Code starts looks as the panel's does
//! (`session:wrapping_up`, the hints cleared at once).

use std::time::Duration;

use paige_core::db::{ActionType, PhaseStatus};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};

use crate::tools::{call, ok, session_client};
use crate::ws::{Socket, connect, next_of, send};
use crate::{Running, TOKEN};

/// Every frame within `within` of quiet.
async fn frames(socket: &mut Socket, within: Duration) -> Vec<Value> {
    use futures_util::StreamExt;
    let mut out = Vec::new();
    while let Ok(Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text)))) =
        tokio::time::timeout(within, socket.next()).await
    {
        out.push(serde_json::from_str(text.as_str()).expect("json"));
    }
    out
}

async fn pre_tool_use(server: &Running, tool: &str, input: Value) {
    let body = json!({"session_id": "cc", "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
                      "cwd": server.fixture.core.project_root().path()});
    let response = reqwest::Client::new()
        .post(format!("{}/hooks/pre-tool-use", server.base))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await
        .expect("hook");
    assert!(response.status().is_success(), "{}", response.status());
}

/// A session with the coached plan of `coaching::coach_reply` (two phases, the first active).
async fn planned(fake: &FakeAnthropic) -> (Running, String) {
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&crate::coaching::coach_reply()));
    fake.always(
        Matcher::call_type("memory_retrieval_filter"),
        Reply::json(&json!({"relevant_memories": [], "discarded": []})),
    );
    let server = crate::coaching_server(fake).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(Some(7), Some("Login fails".into())).expect("session").id;
    let client = session_client(&server).await;
    ok(&call(&client, "paige_run_coaching_pipeline", crate::coaching::args()).await);
    (server, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_codes_tool_calls_reach_the_panel_while_the_plan_is_awaited_and_stop_once_it_came() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&crate::coaching::coach_reply()));
    fake.always(
        Matcher::call_type("memory_retrieval_filter"),
        Reply::json(&json!({"relevant_memories": [], "discarded": []})),
    );
    let server = crate::coaching_server(&fake).await;
    let session =
        server.fixture.core.coaching().start_session(Some(7), Some("Login fails".into())).expect("session").id;
    let mut ui = connect(&server).await;
    let path = server.fixture.core.project_root().path().join("src/auth.rs");
    pre_tool_use(&server, "Read", json!({"file_path": path})).await;
    let activity = next_of(&mut ui, "coaching:agent_activity").await;
    assert_eq!(
        activity["payload"],
        json!({"sessionId": session, "tool": "Read", "detail": path.display().to_string()})
    );
    let client = session_client(&server).await;
    ok(&call(&client, "paige_get_session_state", json!({"include": ["phase"]})).await);
    let activity = next_of(&mut ui, "coaching:agent_activity").await;
    assert_eq!(activity["payload"]["tool"], "paige_get_session_state");
    ok(&call(&client, "paige_run_coaching_pipeline", crate::coaching::args()).await);
    next_of(&mut ui, "coaching:plan_ready").await;
    pre_tool_use(&server, "Grep", json!({"pattern": "token"})).await;
    let after: Vec<Value> = frames(&mut ui, Duration::from_millis(400)).await;
    assert!(after.iter().all(|f| f["type"] != "coaching:agent_activity"), "after the plan: {after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_learner_marks_a_phase_done_logged_as_paige_update_phase_is_and_the_next_phase_starts() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let (server, session) = planned(&fake).await;
    let core = server.fixture.core.clone();
    let mut ui = connect(&server).await;
    send(&mut ui, json!({"type": "coaching:phase_done", "payload": {"phase": 1}})).await;
    let updates: Vec<Value> = frames(&mut ui, Duration::from_millis(500))
        .await
        .into_iter()
        .filter(|f| f["type"] == "coaching:phase_update")
        .map(|f| json!([f["payload"]["phase"], f["payload"]["status"]]))
        .collect();
    assert_eq!(updates, [json!([1, "complete"]), json!([2, "active"])]);
    let plan = core.db().plans_for_session(&session).expect("plans").pop().expect("plan");
    let statuses: Vec<PhaseStatus> =
        core.db().phases_for_plan(&plan.id).expect("phases").iter().map(|p| p.status).collect();
    assert_eq!(statuses, [PhaseStatus::Complete, PhaseStatus::Active]);
    let completed = core.db().recent_actions(&session, 5, Some(ActionType::PhaseCompleted)).expect("log");
    assert_eq!(completed.len(), 1);
    let data = completed[0].data.clone().expect("data");
    assert_eq!((data["phaseNumber"].clone(), data["by"].clone()), (json!(1), json!("learner")));
    // A phase the plan does not have is refused to the sender, with what was wrong.
    send(&mut ui, json!({"type": "coaching:phase_done", "payload": {"phase": 9}})).await;
    let refused = next_of(&mut ui, "connection:error").await;
    assert_eq!(refused["payload"]["code"], "INVALID_MESSAGE");
    assert_eq!(refused["payload"]["context"]["type"], "coaching:phase_done");
    assert!(refused["payload"]["message"].as_str().is_some_and(|m| m.contains("phase 9")), "{refused}");
}

/// Claude Code, idle at its prompt, hears of a phase the learner marked done only when Paige
/// tells it: the word is typed into its terminal once it is quiet, naming the next phase.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phase_the_learner_marks_done_is_typed_into_claude_code_with_the_phase_that_comes_next() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let (server, session) = planned(&fake).await;
    let core = server.fixture.core.clone();
    let typed = tempfile::NamedTempFile::new().expect("typed");
    // Stands in for Claude Code: raw, its prompt drawn, keeping what it is sent.
    let command = paige_core::terminal::AgentCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), format!("stty raw -echo; printf '> '; cat > '{}'", typed.path().display()).into()],
        cwd: core.project_root().path().to_owned(),
        banner: None,
        env: Vec::new(),
        accepts_nudges: true,
        clear_env: false,
    };
    let conn = core.connect();
    let _output = core.open_terminal(conn, &command).expect("terminal");
    let mut ui = connect(&server).await;
    send(&mut ui, json!({"type": "coaching:phase_done", "payload": {"phase": 1}})).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let got = loop {
        let got = std::fs::read_to_string(typed.path()).unwrap_or_default();
        if got.ends_with("\u{1b}[201~\r") || std::time::Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let plan = core.db().plans_for_session(&session).expect("plans").pop().expect("plan");
    let second = core.db().phases_for_plan(&plan.id).expect("phases").remove(1);
    assert!(got.starts_with("\u{1b}[200~[Paige] The learner marked phase 1 done"), "{got:?}");
    assert!(got.contains(&format!("Phase 2 is next: {}.", second.title)), "{got:?}");
    let said = core.db().recent_actions(&session, 20, Some(ActionType::CoachingMessage)).expect("log");
    assert!(said.iter().any(|a| a.data.as_ref().is_some_and(|d| d["kind"] == "phase_done")), "{said:?}");
    core.close_terminal(conn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_claude_code_to_plan_again_is_logged_and_said_and_refused_once_a_plan_exists() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = crate::coaching_server(&fake).await;
    let core = server.fixture.core.clone();
    let mut ui = connect(&server).await;
    send(&mut ui, json!({"type": "coaching:replan", "payload": {}})).await;
    assert_eq!(next_of(&mut ui, "connection:error").await["payload"]["context"]["type"], "coaching:replan");
    let session = core.coaching().start_session(None, Some("Greet".into())).expect("session").id;
    send(&mut ui, json!({"type": "coaching:replan", "payload": {}})).await;
    // No terminal runs Claude Code here (the browser UI): the notice says how to start it.
    let notice = next_of(&mut ui, "coaching:message").await;
    assert!(notice["payload"]["message"].as_str().is_some_and(|m| m.contains("paige claude")), "{notice}");
    let logged = core.db().recent_actions(&session, 5, Some(ActionType::CoachingMessage)).expect("log");
    assert!(logged.iter().any(|a| a.data.as_ref().is_some_and(|d| d["kind"] == "replan")), "{logged:?}");
    assert!(core.coaching().coaching_kickoff().is_some(), "the kickoff is there to deliver again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_from_claude_code_tells_every_ui_the_wrap_up_started_and_clears_the_hints_first() {
    let fake = FakeAnthropic::start().await.expect("fake");
    crate::wrapup::script(&fake);
    let (server, session) = planned(&fake).await;
    let mut ui = connect(&server).await;
    let client = session_client(&server).await;
    ok(&call(&client, "paige_end_session", json!({"sessionTranscript": "learner fixed the race"})).await);
    let mut seen: Vec<Value> = Vec::new();
    while !seen.iter().any(|f| f["type"] == "session:completed") {
        seen.push(crate::ws::next(&mut ui).await);
    }
    let kinds: Vec<&str> = seen.iter().filter_map(|f| f["type"].as_str()).collect();
    let at = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap_or_else(|| panic!("no {kind} in {kinds:?}"));
    assert_eq!(seen[at("session:wrapping_up")]["payload"], json!({"sessionId": session}));
    // The notice and the cleared hints come first, as for the panel's End button.
    assert!(at("session:wrapping_up") < at("session:ended"), "{kinds:?}");
    assert!(at("explorer:clear_hints") < at("session:ended"), "{kinds:?}");
    assert!(at("editor:clear_highlights") < at("session:ended"), "{kinds:?}");
    assert!(at("session:ended") < at("session:completed"), "{kinds:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipping_the_first_sessions_interview_logs_it_hands_over_and_lets_the_kickoff_go() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = crate::coaching_server(&fake).await;
    let core = server.fixture.core.clone();
    let mut ui = connect(&server).await;
    send(&mut ui, json!({"type": "session:start", "payload": {"title": "Greet the user"}})).await;
    // The interview runs: Paige's first question is out.
    next_of(&mut ui, "intake:reply_done").await;
    assert_eq!(core.coaching().coaching_kickoff(), None, "the kickoff waits for the interview");
    send(&mut ui, json!({"type": "intake:skip", "payload": {}})).await;
    let transition = next_of(&mut ui, "intake:transition").await;
    assert_eq!(transition["payload"]["reason"], "skipped");
    let session = core.active_session().expect("session").id;
    let logged = core.db().recent_actions(&session, 5, Some(ActionType::IntakeTransition)).expect("log");
    assert_eq!(logged[0].data, Some(json!({"reason": "skipped"})));
    assert!(
        core.coaching().coaching_kickoff().is_some_and(|k| k.contains("Greet the user")),
        "Claude Code can be told now"
    );
    // Skipped twice: nothing runs to skip.
    send(&mut ui, json!({"type": "intake:skip", "payload": {}})).await;
    let error = next_of(&mut ui, "intake:error").await;
    assert_eq!(error["payload"]["message"], "No interview is running.");
    // Taken up ten minutes later: a fresh interview with its whole timebox, not the spent one.
    server.fixture.clock.advance(chrono::Duration::minutes(10));
    send(&mut ui, json!({"type": "intake:start", "payload": {}})).await;
    next_of(&mut ui, "intake:reply_done").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    send(&mut ui, json!({"type": "intake:start", "payload": {}})).await;
    let state = next_of(&mut ui, "intake:state").await["payload"].clone();
    assert_eq!(state["phase"], "background", "{state}");
    assert_eq!(state["remainingMs"], state["timeboxMs"], "{state}");
    assert_eq!(state["transcript"].as_array().map(Vec::len), Some(1), "only the new first question: {state}");
}

//! The coaching session's lifecycle as a UI drives it over `/ws` (issue 15): starting from an
//! issue (`gh`) or typed work, setting the active session aside, resuming a session left
//! active, what the panel is offered, idle abandonment, hints that fade with mastery, and
//! "just show me". The model is the fake Messages API; `gh` is a script standing in for the
//! GitHub CLI (the real binary is run the same way).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use futures_util::SinkExt;
use paige_core::db::{ActionType, HintLevel, NewPhase, NewSession, PhaseStatus, ProgressEventType, SessionStatus};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::Running;
use crate::coaching::{all_frames, args, coach_reply};
use crate::tools::{call, ok, session_client, ui};

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn send(socket: &mut Socket, kind: &str, payload: Value) {
    socket.send(Message::Text(json!({"type": kind, "payload": payload}).to_string().into())).await.expect("send");
}

fn of(frames: &[Value], kind: &str) -> Vec<Value> {
    frames.iter().filter(|f| f["type"] == kind).map(|f| f["payload"].clone()).collect()
}

/// A `gh` that answers `issue view` and `issue list` for this repository, and notes the
/// folder it ran in.
fn fake_gh(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("gh");
    std::fs::write(
        &script,
        r#"#!/bin/sh
pwd > "$(dirname "$0")/gh-ran-in"
case "$1 $2" in
  "issue view") printf '%s\n' '{"number": 12, "title": "Greet the user by name", "body": "The greeting ignores the name.\n\nSteps: run it.", "labels": [{"name": "good first issue"}], "url": "https://github.com/o/r/issues/12"}' ;;
  "issue list") printf '%s\n' '[{"number": 12, "title": "Greet the user by name", "labels": [{"name": "good first issue"}]}, {"number": 9, "title": "Add a --quiet flag", "labels": []}]' ;;
  *) echo "unknown command" >&2; exit 1 ;;
esac
"#,
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script
}

async fn server_with_gh(fake: &FakeAnthropic, gh: Option<std::path::PathBuf>) -> Running {
    let gh = gh.unwrap_or_else(|| "/nonexistent/gh".into());
    crate::coaching_server_with(fake, move |config| config.gh_program = Some(gh)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starting_from_typed_work_tells_every_ui_the_session_and_what_it_is_about() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = server_with_gh(&fake, None).await;
    let (mut first, mut second) = (ui(&server).await, ui(&server).await);
    send(&mut first, "session:start", json!({"title": "  Make the CLI quieter ", "description": "Too much output"}))
        .await;
    let core = &server.fixture.core;
    for socket in [&mut first, &mut second] {
        let frames = all_frames(socket, Duration::from_millis(400)).await;
        let started = of(&frames, "session:started");
        assert_eq!(started.len(), 1, "{frames:?}");
        assert_eq!(started[0]["sessionId"], core.active_session().expect("active").id.as_str());
        assert_eq!(
            (started[0]["title"].as_str(), started[0]["description"].as_str()),
            (Some("Make the CLI quieter"), Some("Too much output"))
        );
        assert_eq!(started[0]["issueContext"], Value::Null);
        assert_eq!(of(&frames, "fs:tree").len(), 1);
    }
    // Neither an issue nor a title: refused, with why, and nothing starts.
    core.coaching().end_session(SessionStatus::Completed).expect("end");
    send(&mut first, "session:start", json!({"title": "   "})).await;
    let refused = crate::tools::frames_of(&mut first, "connection:error", Duration::from_millis(400)).await;
    assert_eq!(refused[0]["code"], "INVALID_MESSAGE");
    assert!(refused[0]["message"].as_str().is_some_and(|m| m.contains("issue number or a title")), "{refused:?}");
    assert!(core.active_session().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issue_takes_its_title_body_and_labels_from_gh_run_in_the_project() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let bin = tempfile::tempdir().expect("bin");
    let server = server_with_gh(&fake, Some(fake_gh(bin.path()))).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "session:start", json!({"issueNumber": 12})).await;
    let started = crate::tools::frames_of(&mut socket, "session:started", Duration::from_millis(400)).await;
    let issue = &started[0]["issueContext"];
    assert_eq!(issue["title"], "Greet the user by name");
    assert_eq!(issue["summary"], "The greeting ignores the name.\n\nSteps: run it.");
    assert_eq!(issue["labels"], json!(["good first issue"]));
    assert_eq!(issue["url"], "https://github.com/o/r/issues/12");
    let ran_in = std::fs::read_to_string(bin.path().join("gh-ran-in")).expect("gh ran");
    assert_eq!(Path::new(ran_in.trim()), server.fixture.core.project_root().path());
    let session = server.fixture.core.active_session().expect("active");
    assert_eq!((session.issue_number, session.issue_title.as_deref()), (Some(12), Some("Greet the user by name")));
    // The panel's list: gh's open issues.
    send(&mut socket, "session:list", json!({})).await;
    let options = crate::tools::frames_of(&mut socket, "session:options", Duration::from_millis(400)).await;
    assert_eq!(options[0]["issues"][1], json!({"number": 9, "title": "Add a --quiet flag", "labels": []}));
    assert_eq!(options[0].get("issuesError"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_working_gh_an_issue_starts_from_the_message_and_the_list_says_why() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = server_with_gh(&fake, None).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "session:start", json!({"issueNumber": 31, "title": "Fix the typo"})).await;
    let started = crate::tools::frames_of(&mut socket, "session:started", Duration::from_millis(400)).await;
    assert_eq!(started[0]["issueContext"]["title"], "Fix the typo");
    assert_eq!(started[0]["issueContext"]["number"], 31);
    send(&mut socket, "session:list", json!({})).await;
    let options = crate::tools::frames_of(&mut socket, "session:options", Duration::from_millis(400)).await;
    assert_eq!(options[0]["issues"], json!([]));
    assert_eq!(options[0]["issuesError"], "the GitHub CLI (gh) is not installed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starting_another_session_sets_the_active_one_aside_and_wraps_it_up_in_the_background() {
    let fake = FakeAnthropic::start().await.expect("fake");
    // The wrap-up's three model calls all fail: it still completes, with zeros.
    fake.always(Matcher::custom(|_| true), Reply::server_error());
    let server = server_with_gh(&fake, None).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "session:start", json!({"title": "First task"})).await;
    let first = crate::tools::frames_of(&mut socket, "session:started", Duration::from_millis(400)).await;
    let first_id = first[0]["sessionId"].as_str().expect("id").to_owned();
    // The learner worked in it: it is wrapped up, not just ended.
    server.fixture.core.log_action(paige_core::db::ActionType::FileSave, json!({"path": "src/lib.rs"}));
    send(&mut socket, "session:start", json!({"title": "Second task"})).await;
    let mut frames = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while of(&frames, "session:completed").is_empty() && tokio::time::Instant::now() < deadline {
        frames.extend(all_frames(&mut socket, Duration::from_millis(300)).await);
    }
    let notice = of(&frames, "coaching:message");
    assert!(
        notice.iter().any(|m| m["message"].as_str().is_some_and(|t| t.contains("Wrapping up First task"))),
        "{frames:?}"
    );
    let second = of(&frames, "session:started");
    assert_eq!(second.len(), 1, "{frames:?}");
    let completed = of(&frames, "session:completed");
    assert_eq!(completed[0]["sessionId"], first_id.as_str(), "{frames:?}");
    assert_eq!(completed[0]["knowledgeGaps"], 0);
    let db = server.fixture.core.db();
    assert_eq!(db.session(&first_id).expect("first").status, SessionStatus::Completed);
    let active = server.fixture.core.active_session().expect("the second goes on");
    assert_eq!(active.id, second[0]["sessionId"].as_str().expect("id"));
    assert_eq!(db.session(&active.id).expect("second").status, SessionStatus::Active);
}

/// A session left `active` by a crash: its row, a plan whose first phase is in progress at
/// `region`, and a timeline that opened two files and closed one.
fn left_by_a_crash(server: &Running, title: &str) -> String {
    let db = server.fixture.core.db();
    let session = db
        .create_session(NewSession {
            project_dir: server.fixture.core.project_root().path().to_owned(),
            issue_number: Some(7),
            issue_title: Some(title.into()),
        })
        .expect("session");
    let phase = |number: i64, title: &str| {
        (
            NewPhase {
                plan_id: String::new(),
                number,
                title: title.into(),
                description: format!("{title}, step by step"),
                hint_level: HintLevel::File,
                expected_files: vec!["src/auth.rs".into()],
                skill_area: Some("async".into()),
                hint_reason: None,
                test_filter: None,
            },
            Vec::new(),
        )
    };
    let (_, phases) = db
        .create_plan_with_phases(&session.id, "plan", vec![phase(1, "Find the race"), phase(2, "Fix the race")])
        .expect("plan");
    db.set_phase_status(&phases[0].0.id, PhaseStatus::Active).expect("active");
    db.set_phase_hint_level(&phases[0].0.id, HintLevel::Region).expect("level");
    std::fs::write(server.fixture.core.project_root().path().join("src/notes.md"), "notes\n").expect("file");
    for (kind, path) in [
        (ActionType::FileOpen, "src/notes.md"),
        (ActionType::FileOpen, "src/auth.rs"),
        (ActionType::FileClose, "src/notes.md"),
        (ActionType::FileOpen, "src/gone.rs"),
    ] {
        db.log_action(&session.id, kind, Some(json!({"path": path}))).expect("logged");
    }
    session.id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_left_active_resumes_with_its_plan_phases_hint_level_and_open_files() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = server_with_gh(&fake, None).await;
    let session_id = left_by_a_crash(&server, "Login race");
    let mut socket = ui(&server).await;
    send(&mut socket, "session:list", json!({})).await;
    let options = crate::tools::frames_of(&mut socket, "session:options", Duration::from_millis(400)).await;
    let resumable = &options[0]["resumable"];
    assert_eq!(resumable.as_array().map(Vec::len), Some(1), "{options:?}");
    assert_eq!(resumable[0]["sessionId"], session_id.as_str());
    assert_eq!((resumable[0]["phasesCompleted"].as_u64(), resumable[0]["phasesTotal"].as_u64()), (Some(0), Some(2)));
    send(&mut socket, "session:resume", json!({"sessionId": session_id})).await;
    let frames = all_frames(&mut socket, Duration::from_millis(400)).await;
    let resumed = of(&frames, "session:resumed");
    assert_eq!(resumed.len(), 1, "{frames:?}");
    let state = &resumed[0]["restoredState"];
    assert_eq!(state["sessionId"], session_id.as_str());
    assert_eq!(state["hintLevel"], "region");
    assert_eq!(state["openFiles"], json!(["src/auth.rs"]), "closed and deleted files are not reopened");
    assert_eq!(state["phases"][0]["status"], "active");
    assert_eq!(state["phases"][0]["skillArea"], "async");
    assert_eq!(state["issueContext"]["title"], "Login race");
    // The phase in progress shows its hints again, and the session is live.
    assert_eq!(of(&frames, "fs:tree").len(), 1);
    assert_eq!(server.fixture.core.active_session().map(|s| s.id), Some(session_id.clone()));
    let logged =
        server.fixture.core.db().recent_actions(&session_id, 5, Some(ActionType::SessionResumed)).expect("log");
    assert_eq!(logged[0].data.as_ref().map(|d| d["previousSessionId"].clone()), Some(json!(session_id)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_an_unknown_or_finished_session_is_refused_with_why() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = server_with_gh(&fake, None).await;
    let done = left_by_a_crash(&server, "Done already");
    server.fixture.core.db().end_session(&done, SessionStatus::Completed).expect("completed");
    let mut socket = ui(&server).await;
    for (id, why) in [("no-such-session", "no session no-such-session"), (done.as_str(), "is completed")] {
        send(&mut socket, "session:resume", json!({"sessionId": id})).await;
        let refused = crate::tools::frames_of(&mut socket, "connection:error", Duration::from_millis(400)).await;
        assert_eq!(refused[0]["code"], "INVALID_MESSAGE");
        assert!(refused[0]["message"].as_str().is_some_and(|m| m.contains(why)), "{refused:?}");
    }
    assert!(server.fixture.core.active_session().is_none());
}

/// An idle session is not simply dropped: it is wrapped up first (in the background), so its
/// knowledge gaps, skill evidence and memories are kept, and then marked abandoned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_idle_longer_than_the_limit_are_wrapped_up_abandoned_and_no_longer_offered() {
    let fake = FakeAnthropic::start().await.expect("fake");
    crate::wrapup::script(&fake);
    let server = server_with_gh(&fake, None).await;
    let old = left_by_a_crash(&server, "Long ago");
    server.fixture.clock.advance(chrono::Duration::days(6));
    let recent = left_by_a_crash(&server, "Last week");
    // The old one's last action is now 8 days old, the recent one's 2 (the limit: 7 days).
    server.fixture.clock.advance(chrono::Duration::days(2));
    let mut socket = ui(&server).await;
    send(&mut socket, "session:list", json!({})).await;
    let options = crate::tools::frames_of(&mut socket, "session:options", Duration::from_millis(400)).await;
    let offered: Vec<&str> =
        options[0]["resumable"].as_array().expect("list").iter().filter_map(|s| s["sessionId"].as_str()).collect();
    assert_eq!(offered, [recent.as_str()]);
    let db = server.fixture.core.db();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while db.session(&old).expect("old").status == SessionStatus::Active {
        assert!(std::time::Instant::now() < deadline, "the idle session's wrap-up never ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(db.session(&old).expect("old").status, SessionStatus::Abandoned);
    assert_eq!(db.session(&recent).expect("recent").status, SessionStatus::Active);
    let filter = paige_core::db::GapFilter { session_id: Some(old.clone()), ..Default::default() };
    let gaps = db.knowledge_gaps(&filter).expect("gaps");
    assert_eq!(gaps.len(), 1, "the abandoned session's gaps were kept: {gaps:?}");
    let asked: Vec<String> = fake.requests().iter().filter_map(|r| r.call_type().map(str::to_owned)).collect();
    for call in ["knowledge_gap_extraction", "dreyfus_assessment", "memory_summarisation"] {
        assert!(asked.iter().any(|c| c == call), "{call} was asked: {asked:?}");
    }
    // Listed again: the set-aside session is not wrapped up twice.
    send(&mut socket, "session:list", json!({})).await;
    crate::tools::frames_of(&mut socket, "session:options", Duration::from_millis(400)).await;
    let gap_calls = fake.requests().iter().filter(|r| r.call_type() == Some("knowledge_gap_extraction")).count();
    assert_eq!(gap_calls, 1);
}

/// Three completed phases of "error handling" in an earlier session; `helped` marks the last
/// one as needing help (an escalation).
fn practised(server: &Running, helped: bool) {
    let db = server.fixture.core.db();
    let earlier = left_by_a_crash(server, "Earlier work");
    let phases: Vec<_> = (1..=3)
        .map(|n| {
            (
                NewPhase {
                    plan_id: String::new(),
                    number: n,
                    title: format!("Step {n}"),
                    description: String::new(),
                    hint_level: HintLevel::Line,
                    expected_files: Vec::new(),
                    skill_area: Some("error handling".into()),
                    hint_reason: None,
                    test_filter: None,
                },
                Vec::new(),
            )
        })
        .collect();
    let (_, stored) = db.create_plan_with_phases(&earlier, "earlier plan", phases).expect("plan");
    for (phase, _) in &stored {
        server.fixture.clock.advance(chrono::Duration::minutes(5));
        db.set_phase_status(&phase.id, PhaseStatus::Complete).expect("complete");
    }
    if helped {
        let last = &stored[2].0.id;
        db.record_progress(last, ProgressEventType::HintEscalated, Some(json!({"from": "file", "to": "line"})))
            .expect("escalated");
    }
    db.end_session(&earlier, SessionStatus::Completed).expect("ended");
}

fn coached_in(area: &str) -> Value {
    let mut reply = coach_reply();
    reply["phases"][0]["skill_area"] = json!(area);
    reply["phases"][1]["skill_area"] = json!("naming");
    reply
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_three_phases_without_help_the_next_phase_of_that_skill_starts_one_level_lower_and_says_why() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coached_in("Error Handling")));
    let server = server_with_gh(&fake, None).await;
    practised(&server, false);
    server.fixture.core.coaching().start_session(None, Some("Next".into())).expect("session");
    let mut socket = ui(&server).await;
    let client = session_client(&server).await;
    let output = ok(&call(&client, "paige_run_coaching_pipeline", args()).await).clone();
    assert_eq!(output["phases"][0]["hintLevel"], "region", "the coach said line; 3 clean phases take it one lower");
    assert_eq!(output["phases"][1]["hintLevel"], "file", "no history in naming: the coach's level stands");
    let ready = crate::tools::frames_of(&mut socket, "coaching:plan_ready", Duration::from_millis(400)).await;
    assert_eq!(
        ready[0]["phases"][0]["hintReason"],
        "hints start at region for error handling: you finished the last 3 phases without help"
    );
    assert_eq!(ready[0]["phases"][1].get("hintReason"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_phase_that_needed_help_the_next_phase_of_that_skill_starts_one_level_higher() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let mut reply = coached_in("error handling");
    reply["phases"][0]["hint_level"] = json!("file");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&reply));
    let server = server_with_gh(&fake, None).await;
    practised(&server, true);
    server.fixture.core.coaching().start_session(None, Some("Next".into())).expect("session");
    let client = session_client(&server).await;
    let output = ok(&call(&client, "paige_run_coaching_pipeline", args()).await).clone();
    assert_eq!(output["phases"][0]["hintLevel"], "region");
    let session = server.fixture.core.active_session().expect("session");
    let db = server.fixture.core.db();
    let plan = db.plans_for_session(&session.id).expect("plans").remove(0);
    let phase = db.phases_for_plan(&plan.id).expect("phases").remove(0);
    assert_eq!(
        phase.hint_reason.as_deref(),
        Some("hints start at region for error handling: you asked for more help in the last phase")
    );
}

fn worked_example_reply() -> Value {
    json!({
        "title": "Waiting for a delivery before opening the door",
        "explanation": "Await the thing you depend on before acting on it.",
        "language": "rust",
        "example_code": "async fn open_door(parcel: Parcel) {\n    let parcel = parcel.arrived().await;\n    parcel.open();\n}\n",
        "steps": ["Find what you wait for", "Await it", "Act on it"]
    })
}

/// Every file of the project, path → bytes.
fn snapshot(root: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    walkdir(root)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read");
            (p, bytes)
        })
        .collect()
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if path.is_dir() { out.extend(walkdir(&path)) } else { out.push(path) }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn just_show_me_broadcasts_a_worked_example_records_the_signal_and_changes_no_file() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coached_in("async")));
    fake.always(Matcher::call_type("worked_example"), Reply::json(&worked_example_reply()));
    let server = server_with_gh(&fake, None).await;
    server.fixture.core.coaching().start_session(None, Some("Login race".into())).expect("session");
    let client = session_client(&server).await;
    ok(&call(&client, "paige_run_coaching_pipeline", args()).await);
    let before = snapshot(server.fixture.core.project_root().path());
    let (mut asker, mut watcher) = (ui(&server).await, ui(&server).await);
    send(&mut asker, "coaching:show_me", json!({})).await;
    for socket in [&mut asker, &mut watcher] {
        let shown = crate::tools::frames_of(socket, "coaching:worked_example", Duration::from_millis(800)).await;
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0]["phase"], 1);
        assert_eq!(shown[0]["steps"], json!(["Find what you wait for", "Await it", "Act on it"]));
        assert!(shown[0]["exampleCode"].as_str().is_some_and(|c| c.contains("arrived().await")));
    }
    assert_eq!(snapshot(server.fixture.core.project_root().path()), before, "no file of the project changed");
    // The model was told the phase and the language, never the learner's code.
    let requests = fake.message_requests();
    let asked = requests.iter().find(|r| r.call_type() == Some("worked_example")).expect("asked");
    let message = asked.user_message().expect("message");
    assert!(message.contains("Find where the callback runs") && message.contains("\"language\":\"rust\""), "{message}");
    assert!(!message.contains("fn callback()"), "the learner's file is not sent: {message}");
    // A coaching signal the wrap-up and the fading rule read.
    let core = &server.fixture.core;
    let session = core.active_session().expect("session");
    let logged = core.db().recent_actions(&session.id, 5, Some(ActionType::WorkedExample)).expect("log");
    assert_eq!(logged[0].data.as_ref().map(|d| d["phase"].clone()), Some(json!(1)));
    let phase_id = logged[0].data.as_ref().and_then(|d| d["phaseId"].as_str()).expect("phase id").to_owned();
    let progress = core.db().progress_for_phase(&phase_id).expect("progress");
    assert_eq!(progress[0].event_type, ProgressEventType::HintUsed);
    assert_eq!(progress[0].data, Some(json!({"workedExample": true})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn just_show_me_reports_a_failing_model_so_the_panel_can_offer_a_retry() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    fake.always(
        Matcher::call_type("worked_example"),
        Reply::json(&json!({"title": "t", "explanation": "e", "language": "rust", "example_code": "  ", "steps": []})),
    );
    let server = server_with_gh(&fake, None).await;
    server.fixture.core.coaching().start_session(None, Some("Login race".into())).expect("session");
    let client = session_client(&server).await;
    ok(&call(&client, "paige_run_coaching_pipeline", args()).await);
    let mut socket = ui(&server).await;
    send(&mut socket, "coaching:show_me", json!({})).await;
    let failed =
        crate::tools::frames_of(&mut socket, "coaching:worked_example_error", Duration::from_millis(800)).await;
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["phase"], 1);
    assert!(failed[0]["error"].as_str().is_some_and(|e| e.contains("without an example")), "{failed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn just_show_me_without_a_session_or_a_plan_says_so_at_once_and_calls_no_model() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = server_with_gh(&fake, None).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "coaching:show_me", json!({})).await;
    let refused =
        crate::tools::frames_of(&mut socket, "coaching:worked_example_error", Duration::from_millis(400)).await;
    assert!(refused[0]["error"].as_str().is_some_and(|e| e.contains("Start a session first")), "{refused:?}");
    server.fixture.core.coaching().start_session(None, Some("No plan yet".into())).expect("session");
    send(&mut socket, "coaching:show_me", json!({})).await;
    let refused =
        crate::tools::frames_of(&mut socket, "coaching:worked_example_error", Duration::from_millis(400)).await;
    assert!(refused[0]["error"].as_str().is_some_and(|e| e.contains("ask Claude Code to plan")), "{refused:?}");
    assert!(fake.message_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ui_that_connects_mid_session_gets_the_session_as_it_stands_and_no_other_ui_hears_of_it() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coached_in("async")));
    let server = server_with_gh(&fake, None).await;
    let session = server.fixture.core.coaching().start_session(Some(7), Some("Login race".into())).expect("session");
    let client = session_client(&server).await;
    ok(&call(&client, "paige_run_coaching_pipeline", args()).await);
    let mut first = ui(&server).await;
    let mut late = ui(&server).await;
    let hello = json!({"version": "0.1.0", "platform": "test", "windowSize": {"width": 800, "height": 600}});
    send(&mut late, "connection:hello", hello).await;
    let frames = all_frames(&mut late, Duration::from_millis(400)).await;
    let started = of(&frames, "session:started");
    assert_eq!(started.len(), 1, "{frames:?}");
    assert_eq!(started[0]["sessionId"], session.id.as_str());
    assert_eq!(started[0]["phases"].as_array().map(Vec::len), Some(2), "the plan as it stands");
    assert_eq!(started[0]["hintLevel"], "line");
    assert_eq!(of(&frames, "connection:init")[0]["sessionId"], session.id.as_str());
    let elsewhere = all_frames(&mut first, Duration::from_millis(200)).await;
    assert!(
        of(&elsewhere, "session:started").is_empty() && of(&elsewhere, "session:resumed").is_empty(),
        "{elsewhere:?}"
    );
    let resumed =
        server.fixture.core.db().recent_actions(&session.id, 5, Some(ActionType::SessionResumed)).expect("log");
    assert!(resumed.is_empty(), "a connection resumes nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_a_session_tells_every_ui_how_it_ended_and_how_far_it_got() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    let server = server_with_gh(&fake, None).await;
    let session = server.fixture.core.coaching().start_session(None, Some("Login race".into())).expect("session");
    let client = session_client(&server).await;
    ok(&call(&client, "paige_run_coaching_pipeline", args()).await);
    ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "complete"})).await);
    let mut socket = ui(&server).await;
    server.fixture.clock.advance(chrono::Duration::minutes(25));
    server.fixture.core.coaching().end_session(SessionStatus::Abandoned).expect("ended");
    let ended = crate::tools::frames_of(&mut socket, "session:ended", Duration::from_millis(400)).await;
    assert_eq!(
        ended[0]["summary"],
        json!({"sessionId": session.id, "status": "abandoned", "durationMs": 25 * 60 * 1000, "phasesCompleted": 1})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_being_wrapped_up_is_neither_offered_nor_resumable() {
    let fake = FakeAnthropic::start().await.expect("fake");
    // The wrap-up's model calls take a while: the set-aside session is mid-wrap-up below.
    fake.always(Matcher::custom(|_| true), Reply::server_error().delayed(Duration::from_secs(2)));
    let server = server_with_gh(&fake, None).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "session:start", json!({"title": "First task"})).await;
    let first = crate::tools::frames_of(&mut socket, "session:started", Duration::from_millis(300)).await;
    let first_id = first[0]["sessionId"].as_str().expect("id").to_owned();
    // The learner worked in it: it is wrapped up, not just ended.
    server.fixture.core.log_action(paige_core::db::ActionType::FileSave, json!({"path": "src/lib.rs"}));
    send(&mut socket, "session:start", json!({"title": "Second task"})).await;
    send(&mut socket, "session:list", json!({})).await;
    let frames = all_frames(&mut socket, Duration::from_millis(300)).await;
    assert_eq!(of(&frames, "session:options")[0]["resumable"], json!([]), "{frames:?}");
    send(&mut socket, "session:resume", json!({"sessionId": first_id})).await;
    let refused = crate::tools::frames_of(&mut socket, "connection:error", Duration::from_millis(300)).await;
    assert!(refused[0]["message"].as_str().is_some_and(|m| m.contains("being wrapped up")), "{refused:?}");
    assert_ne!(server.fixture.core.active_session().map(|s| s.id), Some(first_id));
}

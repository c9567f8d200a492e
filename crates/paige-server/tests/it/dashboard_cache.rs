//! The dashboard's model answers are kept (issue 28): ten loads cost at most the two model
//! calls of the first; a completed session, an explicit refresh or a day's age asks again;
//! an error is not kept. And a session's end pushes `dashboard:state` again to each UI that
//! shows the dashboard, and after a completed one its learning materials (issue 41).

use std::time::Duration;

use chrono::Duration as Span;
use futures_util::SinkExt;
use paige_core::db::{DreyfusStage, NewDreyfusAssessment, SessionStatus, Severity};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::Running;
use crate::dashboard::{
    Socket, calls_of, dashboard_frames, gap, gh_stand_in, kinds, materials, payload, ranking, refresh, request,
    search_blocks, server, two_issues,
};
use crate::tools::ui;

const FOUND: &str = "https://doc.rust-lang.org/book/";

/// A server whose model ranks the two issues and finds materials for the one open gap.
async fn dashboard_server(fake: &FakeAnthropic, bin: &std::path::Path) -> Running {
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&ranking()));
    let answer = Reply::json(&materials(&[FOUND])).with_blocks_before(search_blocks(&[FOUND]));
    fake.always(Matcher::call_type("learning_materials"), answer);
    let server = server(fake, Some(gh_stand_in(bin, &two_issues())), None).await;
    let db = server.fixture.core.db();
    let new = paige_core::db::NewSession {
        project_dir: server.fixture.core.project_root().path().to_owned(),
        issue_number: None,
        issue_title: None,
    };
    let earlier = db.create_session(new).expect("session").id;
    gap(&server, &earlier, "lifetimes", Severity::High);
    server
}

/// One dashboard load: its state, issues and materials (answers or errors).
async fn load(socket: &mut Socket, payload_: Value) -> Vec<(String, Value, Duration)> {
    let frame = json!({"type": "dashboard:request", "payload": payload_}).to_string();
    socket.send(Message::Text(frame.into())).await.expect("send");
    let frames = dashboard_frames(socket, Duration::from_secs(5), |f| f.len() == 3).await;
    let mut got = kinds(&frames);
    got.sort_unstable();
    assert_eq!(got.len(), 3, "state, issues and materials: {got:?}");
    frames
}

fn model_calls(fake: &FakeAnthropic) -> (usize, usize) {
    (calls_of(fake, "issue_assessment").len(), calls_of(fake, "learning_materials").len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_loads_make_two_model_calls_until_a_session_completes_a_refresh_or_a_day_passes() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let bin = tempfile::tempdir().expect("bin");
    let server = dashboard_server(&fake, bin.path()).await;
    let (core, clock) = (server.fixture.core.clone(), server.fixture.clock.clone());
    let mut socket = ui(&server).await;
    // Ten loads, as reconnects and period switches make them.
    for period in ["all", "7d", "30d", "all", "7d", "all", "30d", "7d", "all", "all"] {
        let frames = load(&mut socket, json!({"statsPeriod": period})).await;
        assert_eq!(payload(&frames, "dashboard:state")["stats"]["period"], period);
        assert_eq!(payload(&frames, "dashboard:issues")["issues"][0]["number"], 12, "the kept ranking");
        assert_eq!(payload(&frames, "dashboard:materials")["recommendations"][0]["resources"][0]["url"], FOUND);
    }
    assert_eq!(model_calls(&fake), (1, 1), "ten loads: one ranking and one materials call");
    // A second window is another load: still nothing asked.
    let mut other = ui(&server).await;
    load(&mut other, json!({})).await;
    assert_eq!(model_calls(&fake), (1, 1));

    // A completed session: new gaps and stages, so both are asked again, once.
    let completed = core.coaching().start_session(None, Some("work".into())).expect("session").id;
    core.coaching().end_session(SessionStatus::Completed).expect("completed");
    dashboard_frames(&mut socket, Duration::from_millis(300), |_| false).await;
    load(&mut socket, json!({})).await;
    load(&mut socket, json!({"statsPeriod": "7d"})).await;
    assert_eq!(model_calls(&fake), (2, 2), "a completed session asks again");
    // A session that is abandoned changes nothing the model was told.
    core.coaching().start_session(None, Some("more".into())).expect("session");
    core.coaching().end_session(SessionStatus::Abandoned).expect("abandoned");
    dashboard_frames(&mut socket, Duration::from_millis(300), |_| false).await;
    load(&mut socket, json!({})).await;
    assert_eq!(model_calls(&fake), (2, 2), "an abandoned session keeps the answers");

    // An explicit refresh asks again; the loads after it do not.
    load(&mut socket, json!({"refresh": true})).await;
    load(&mut socket, json!({})).await;
    assert_eq!(model_calls(&fake), (3, 3), "refresh asks again");
    // `dashboard:refresh_issues` asks for the ranking alone, and keeps its answer.
    refresh(&mut socket).await;
    dashboard_frames(&mut socket, Duration::from_secs(5), |f| f.len() == 1).await;
    load(&mut socket, json!({})).await;
    assert_eq!(model_calls(&fake), (4, 3));

    // Almost a day: kept. A day: asked again.
    clock.advance(Span::hours(23));
    load(&mut socket, json!({})).await;
    assert_eq!(model_calls(&fake), (4, 3), "23 hours old: kept");
    clock.advance(Span::hours(1));
    load(&mut socket, json!({})).await;
    load(&mut socket, json!({})).await;
    assert_eq!(model_calls(&fake), (5, 4), "a day old: asked again");

    // New gaps are a new question for the materials (the ranking is kept).
    gap(&server, &completed, "traits", Severity::Medium);
    load(&mut socket, json!({})).await;
    assert_eq!(model_calls(&fake), (5, 5), "the materials' input changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_is_not_kept_so_retry_asks_the_model_again() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let failing = || Reply::server_error().with_header("x-should-retry", "false");
    // Each flow's first call and its one retry fail; then the model answers.
    for _ in 0..2 {
        fake.once(Matcher::call_type("issue_assessment"), failing());
        fake.once(Matcher::call_type("learning_materials"), failing());
    }
    let bin = tempfile::tempdir().expect("bin");
    let server = dashboard_server(&fake, bin.path()).await;
    let mut socket = ui(&server).await;
    let frames = load(&mut socket, json!({})).await;
    let mut got = kinds(&frames);
    got.sort_unstable();
    assert_eq!(got, ["dashboard:issues_error", "dashboard:materials_error", "dashboard:state"]);
    assert_eq!(model_calls(&fake), (2, 2), "one retry each");
    // The materials' Retry is a new load; the issues' Retry is `dashboard:refresh_issues`.
    let frames = load(&mut socket, json!({})).await;
    assert_eq!(payload(&frames, "dashboard:materials")["recommendations"][0]["resources"][0]["url"], FOUND);
    assert_eq!(payload(&frames, "dashboard:issues")["issues"][0]["number"], 12);
    assert_eq!(model_calls(&fake), (3, 3), "after an error the next load asks again");
    load(&mut socket, json!({})).await;
    assert_eq!(model_calls(&fake), (3, 3), "and then keeps the answers");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loads_while_the_model_is_asked_join_that_call() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let delay = Duration::from_millis(500);
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&ranking()).delayed(delay));
    let answer = Reply::json(&materials(&[FOUND])).with_blocks_before(search_blocks(&[FOUND])).delayed(delay);
    fake.always(Matcher::call_type("learning_materials"), answer);
    let bin = tempfile::tempdir().expect("bin");
    let server = dashboard_server(&fake, bin.path()).await;
    let (mut first, mut second) = (ui(&server).await, ui(&server).await);
    // A period switch and a second window while the first load's calls are out.
    request(&mut first, Some("7d")).await;
    request(&mut first, Some("all")).await;
    request(&mut second, None).await;
    let frames = dashboard_frames(&mut first, Duration::from_secs(3), |f| f.len() == 4).await;
    let count = |kind: &str| kinds(&frames).iter().filter(|k| **k == kind).count();
    assert_eq!((count("dashboard:state"), count("dashboard:issues"), count("dashboard:materials")), (2, 1, 1));
    let frames = dashboard_frames(&mut second, Duration::from_secs(3), |f| f.len() == 3).await;
    assert_eq!(kinds(&frames).len(), 3, "the second window hears the shared answers: {:?}", kinds(&frames));
    assert_eq!(model_calls(&fake), (1, 1), "one call each for three loads");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_completes_pushes_the_dashboard_state_and_materials_again_to_each_ui_showing_it() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let bin = tempfile::tempdir().expect("bin");
    let server = dashboard_server(&fake, bin.path()).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(None, Some("work".into())).expect("session").id;
    let mut week = ui(&server).await;
    let frames = load(&mut week, json!({"statsPeriod": "7d"})).await;
    let before = payload(&frames, "dashboard:state");
    let in_progress = |state: &Value| {
        let sessions = state["inProgressSessions"].as_array().cloned().unwrap_or_default();
        sessions.iter().any(|s| s["id"] == session.as_str())
    };
    assert!(in_progress(before), "shown in progress");
    assert_eq!((before["stats"]["sessionsCompleted"].as_u64(), before["dreyfus"].clone()), (Some(0), json!([])));
    // Connected after the first load's answers were broadcast: the kept ones come to it alone.
    let mut all = ui(&server).await;
    load(&mut all, json!({})).await;
    let mut elsewhere = ui(&server).await;
    // The wrap-up stores the stages, then completes the session.
    core.db()
        .upsert_dreyfus(NewDreyfusAssessment {
            skill_area: "Rust".into(),
            stage: DreyfusStage::AdvancedBeginner,
            confidence: 0.6,
            evidence: "e".into(),
        })
        .expect("assessed");
    server.fixture.clock.advance(Span::minutes(20));
    core.coaching().end_session(SessionStatus::Completed).expect("completed");
    for (socket, period) in [(&mut week, "7d"), (&mut all, "all")] {
        let frames = dashboard_frames(socket, Duration::from_secs(2), |f| f.len() == 1).await;
        assert_eq!(kinds(&frames), ["dashboard:state"], "pushed without a request");
        let state = payload(&frames, "dashboard:state");
        assert_eq!(state["stats"]["period"], period, "the period that UI chose");
        assert!(!in_progress(state), "the session is done: {state}");
        assert_eq!(state["stats"]["sessionsCompleted"], 1);
        assert_eq!(state["dreyfus"][0]["skillArea"], "Rust", "its skills");
        // And the learning materials for the gaps it found, asked again, without a reload.
        let more = dashboard_frames(socket, Duration::from_secs(5), |f| {
            f.iter().any(|(k, _, _)| k.starts_with("dashboard:materials"))
        })
        .await;
        assert_eq!(payload(&more, "dashboard:materials")["recommendations"][0]["resources"][0]["url"], FOUND);
    }
    assert_eq!(model_calls(&fake).1, 2, "one research after the session, for both UIs");
    let frames = dashboard_frames(&mut elsewhere, Duration::from_millis(300), |_| false).await;
    // A research's answer goes to every UI as it comes (as the first load's did); the state is
    // for the UIs showing the dashboard.
    assert!(
        kinds(&frames).iter().all(|k| *k == "dashboard:materials"),
        "a UI that never asked for the dashboard is not sent one, only the research's answer: {:?}",
        kinds(&frames)
    );
}

//! The dashboard's periods, its failures (gh missing, not logged in, no remote, hanging; the
//! model failing or answering nonsense), the learning materials' links, refresh and
//! concurrent requests (spec Story 12, EC-82…EC-91).

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Duration as Span;
use paige_core::db::{
    ActionType, DreyfusStage, HintLevel, KataAttempt, NewApiCall, NewDreyfusAssessment, NewPhase, NewSession,
    ProgressEventType, SessionStatus, Severity,
};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};

use crate::Running;
use crate::dashboard::{
    calls_of, dashboard_frames, gap, gh_calls, gh_stand_in, kata, kinds, materials, payload, ranking, refresh, request,
    search_blocks, server, two_issues, user_message, write_script,
};
use crate::tools::ui;

/// A completed (or, with `minutes: None`, active) session of `issue`, started now, with
/// `hints` hints used in its one phase and one API call costing `cost`.
fn seed_session(server: &Running, issue: Option<i64>, minutes: Option<i64>, hints: usize, cost: f64) -> String {
    let (core, clock) = (&server.fixture.core, &server.fixture.clock);
    let db = core.db();
    let new = NewSession { project_dir: core.project_root().path().to_owned(), issue_number: issue, issue_title: None };
    let session = db.create_session(new).expect("session").id;
    let plan = db.create_plan(&session, "plan").expect("plan").id;
    let phase = db
        .create_phase(NewPhase {
            plan_id: plan,
            number: 1,
            title: "t".into(),
            description: "d".into(),
            hint_level: HintLevel::File,
            expected_files: vec![],
            skill_area: None,
            hint_reason: None,
            test_filter: None,
        })
        .expect("phase")
        .id;
    for _ in 0..hints {
        db.record_progress(&phase, ProgressEventType::HintUsed, None).expect("hint");
    }
    db.record_progress(&phase, ProgressEventType::HintEscalated, None).expect("not a hint used");
    let call = NewApiCall {
        session_id: Some(session.clone()),
        call_type: "coach_agent".into(),
        model: "m".into(),
        input_hash: "h".into(),
        latency_ms: 5,
        input_tokens: 1,
        output_tokens: 1,
        cost_estimate: cost,
    };
    db.log_api_call(call).expect("call");
    if let Some(minutes) = minutes {
        clock.advance(Span::minutes(minutes));
        db.end_session(&session, SessionStatus::Completed).expect("ended");
    }
    session
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_count_only_the_period_while_dreyfus_sessions_and_katas_are_current_state() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("learning_materials"), Reply::json(&materials(&[])));
    let server = server(&fake, None, None).await;
    let (core, clock) = (server.fixture.core.clone(), server.fixture.clock.clone());
    // 40 days ago: a 30-minute session on issue 1 (one hint, $0.50) and a gap.
    let old = seed_session(&server, Some(1), Some(30), 1, 0.5);
    gap(&server, &old, "closures", Severity::Medium);
    // 20 days ago: 10 minutes, no issue, $0.10.
    clock.advance(Span::days(20));
    seed_session(&server, None, Some(10), 0, 0.1);
    // 3 days ago: 45 minutes on issue 2 (two hints, $0.25) with an addressed gap; then an
    // active session on issue 2 with a gap of its own.
    clock.advance(Span::days(17));
    let recent = seed_session(&server, Some(2), Some(45), 2, 0.25);
    let addressed = gap(&server, &recent, "lifetimes", Severity::High);
    core.db().set_gap_addressed(&addressed, true).expect("addressed");
    let active = seed_session(&server, Some(2), None, 0, 0.0);
    let open = gap(&server, &active, "traits", Severity::Low);
    let with_attempts = kata(&server, &open, "Trait objects");
    for level in [3, 5] {
        let attempt = KataAttempt { code: "x".into(), level: Some(level), ..Default::default() };
        core.db().append_kata_attempt(&with_attempts, &attempt).expect("attempt");
    }
    kata(&server, &open, "Generic bounds");
    core.db()
        .upsert_dreyfus(NewDreyfusAssessment {
            skill_area: "Rust".into(),
            stage: DreyfusStage::Competent,
            confidence: 0.75,
            evidence: "e".into(),
        })
        .expect("assessed");
    clock.advance(Span::days(3));

    let mut socket = ui(&server).await;
    let mut states = Vec::new();
    for period in [Some("7d"), Some("30d"), None] {
        request(&mut socket, period).await;
        let frames =
            dashboard_frames(&mut socket, Duration::from_secs(2), |f| f.iter().any(|(k, _, _)| k == "dashboard:state"))
                .await;
        states.push(payload(&frames, "dashboard:state").clone());
    }
    let stats = |state: &Value| {
        let s = &state["stats"];
        let n = |k: &str| s[k].as_u64().expect(k);
        let minutes = s["totalCoachingMinutes"].as_f64().expect("minutes");
        let cost = s["apiCostTotal"].as_f64().expect("cost");
        (
            s["period"].as_str().map(str::to_owned),
            n("sessionsCompleted"),
            minutes.round() as i64,
            n("issuesWorkedOn"),
            n("knowledgeGapsIdentified"),
            n("knowledgeGapsAddressed"),
            n("hintsUsed"),
            (cost * 100.0).round() as i64,
        )
    };
    assert_eq!(stats(&states[0]), (Some("7d".into()), 1, 45, 1, 2, 1, 2, 25), "the last 7 days (Scenario 12.10)");
    assert_eq!(stats(&states[1]), (Some("30d".into()), 2, 55, 1, 2, 1, 2, 35), "the last 30 days");
    assert_eq!(stats(&states[2]), (Some("all".into()), 3, 85, 2, 3, 1, 3, 85), "no period: all time (FR-170)");
    for state in &states {
        assert_eq!(
            state["dreyfus"],
            json!([{"skillArea": "Rust", "stage": "competent", "confidence": 0.75, "assessedAt": state["dreyfus"][0]["assessedAt"]}])
        );
        assert_eq!(state["inProgressSessions"].as_array().map(Vec::len), Some(1));
        assert_eq!(state["inProgressSessions"][0]["id"], active.as_str());
        assert_eq!(
            state["katas"],
            json!([
                {"id": state["katas"][0]["id"], "title": "Generic bounds", "topic": "traits", "attemptsCount": 0, "bestLevel": null, "constraintCount": 1},
                {"id": with_attempts, "title": "Trait objects", "topic": "traits", "attemptsCount": 2, "bestLevel": 5, "constraintCount": 1}
            ])
        );
    }
}

async fn issues_error_from(gh: std::path::PathBuf, fake: &FakeAnthropic, prepare: impl FnOnce(&Path)) -> String {
    let server = server(fake, Some(gh), None).await;
    prepare(server.fixture.core.project_root().path());
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(10), |f| f.len() == 2).await;
    assert_eq!(kinds(&frames), ["dashboard:state", "dashboard:issues_error"]);
    assert!(calls_of(fake, "issue_assessment").is_empty(), "nothing to assess: no model call (Scenario 12.5)");
    payload(&frames, "dashboard:issues_error")["error"].as_str().expect("error").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_missing_is_an_issues_error_that_says_so() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let error = issues_error_from("/nonexistent/gh".into(), &fake, |_| {}).await;
    assert_eq!(error, "Cannot list this project's GitHub issues: the GitHub CLI (gh) is not installed", "EC-82");
}

/// The real `gh` (Debian's package, installed by scripts/test.sh) with its own empty config:
/// never logged in; `token`, when given, as `GH_TOKEN`.
fn real_gh(dir: &Path, token: Option<&str>) -> std::path::PathBuf {
    let installed = std::process::Command::new("gh").arg("--version").output();
    assert!(installed.is_ok_and(|o| o.status.success()), "the real gh is needed: apt-get install gh (scripts/test.sh)");
    let token = token.map_or_else(String::new, |t| format!("export GH_TOKEN={t}\n"));
    let body = format!(
        "#!/bin/sh\nunset GH_TOKEN GITHUB_TOKEN GH_ENTERPRISE_TOKEN GITHUB_ENTERPRISE_TOKEN GH_HOST\nexport HOME='{0}' GH_CONFIG_DIR='{0}/gh-config'\n{token}exec gh \"$@\"\n",
        dir.display()
    );
    write_script(&dir.join("gh"), &body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_not_logged_in_is_an_issues_error_that_says_how_to_log_in() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let home = tempfile::tempdir().expect("home");
    let error = issues_error_from(real_gh(home.path(), None), &fake, |_| {}).await;
    assert_eq!(
        error,
        "Cannot list this project's GitHub issues: the GitHub CLI (gh) is not logged in: run `gh auth login`"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_without_a_github_remote_is_an_issues_error_that_says_so() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let home = tempfile::tempdir().expect("home");
    let git_init = |project: &Path| {
        let status = std::process::Command::new("git").args(["init", "-q"]).current_dir(project).status();
        assert!(status.is_ok_and(|s| s.success()), "git init");
    };
    let error = issues_error_from(real_gh(home.path(), Some("not-a-real-token")), &fake, git_init).await;
    assert_eq!(
        error,
        "Cannot list this project's GitHub issues: no GitHub remote found: this project is not a GitHub repository",
        "EC-83"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_gh_is_stopped_at_its_deadline_and_the_error_says_so() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let bin = tempfile::tempdir().expect("bin");
    let pid_file = bin.path().join("pid");
    let gh = write_script(
        &bin.path().join("gh"),
        &format!("#!/bin/sh\necho $$ > '{}'\nexec sleep 30\n", pid_file.display()),
    );
    let server = server(&fake, Some(gh), Some(Duration::from_millis(300))).await;
    let mut socket = ui(&server).await;
    let started = Instant::now();
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(5), |f| f.len() == 2).await;
    assert!(started.elapsed() < Duration::from_secs(3), "bounded: {:?}", started.elapsed());
    assert_eq!(
        payload(&frames, "dashboard:issues_error")["error"],
        "Cannot list this project's GitHub issues: gh did not answer within 0.3 s"
    );
    let pid = std::fs::read_to_string(&pid_file).expect("pid");
    assert!(!Path::new(&format!("/proc/{}", pid.trim())).exists(), "the hanging gh was killed and reaped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_open_issues_is_an_empty_list_without_a_model_call() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let bin = tempfile::tempdir().expect("bin");
    let server = server(&fake, Some(gh_stand_in(bin.path(), &json!([]))), None).await;
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_millis(1500), |f| f.len() == 2).await;
    assert_eq!(payload(&frames, "dashboard:issues"), &json!({"issues": []}), "EC-84");
    assert!(calls_of(&fake, "issue_assessment").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_model_calls_after_their_retry_are_errors_and_dashboard_loaded_says_neither_loaded() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::Any, Reply::server_error().with_header("x-should-retry", "false"));
    let bin = tempfile::tempdir().expect("bin");
    let server = server(&fake, Some(gh_stand_in(bin.path(), &two_issues())), None).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(None, Some("work".into())).expect("session").id;
    gap(&server, &session, "lifetimes", Severity::High);
    let mut socket = ui(&server).await;
    request(&mut socket, Some("30d")).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(5), |f| f.len() == 3).await;
    assert!(
        payload(&frames, "dashboard:issues_error")["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("Paige could not assess this project's issues: ")),
        "Scenario 12.6"
    );
    assert!(
        payload(&frames, "dashboard:materials_error")["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("Paige could not find learning materials: ")),
        "Scenario 12.7"
    );
    assert_eq!(
        (calls_of(&fake, "issue_assessment").len(), calls_of(&fake, "learning_materials").len()),
        (2, 2),
        "one retry each (FR-178)"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let loaded = core.db().recent_actions(&session, 5, Some(ActionType::DashboardLoaded)).expect("log");
    assert_eq!(loaded[0].data, Some(json!({"statsPeriod": "30d", "issuesLoaded": false, "materialsLoaded": false})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_model_answer_is_an_error_not_a_list() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("issue_assessment"), Reply::text(r#"{"issues": "the first two"}"#));
    fake.always(Matcher::call_type("learning_materials"), Reply::text("Here are some links: https://example.com"));
    let bin = tempfile::tempdir().expect("bin");
    let server = server(&fake, Some(gh_stand_in(bin.path(), &two_issues())), None).await;
    let session = server
        .fixture
        .core
        .db()
        .create_session(NewSession {
            project_dir: server.fixture.core.project_root().path().to_owned(),
            issue_number: None,
            issue_title: None,
        })
        .expect("session")
        .id;
    gap(&server, &session, "lifetimes", Severity::High);
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(3), |f| f.len() == 3).await;
    let mut got = kinds(&frames);
    got.sort_unstable();
    assert_eq!(got, ["dashboard:issues_error", "dashboard:materials_error", "dashboard:state"]);
    assert!(payload(&frames, "dashboard:issues_error")["error"].as_str().is_some_and(|e| e.contains("does not match")));
    assert_eq!(calls_of(&fake, "issue_assessment").len(), 1, "a malformed answer is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn materials_research_the_top_five_open_gaps_with_web_search_and_keep_only_its_urls() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let found = ["https://doc.rust-lang.org/book/", "https://www.youtube.com/watch?v=lifetimes"];
    // The model cites one page without the slash, one search result, and one page it made up.
    let cited = ["https://doc.rust-lang.org/book", found[1], "https://rust-tutorials.invalid/lifetimes"];
    let answer = Reply::json(&materials(&cited)).with_blocks_before(search_blocks(&found));
    fake.always(Matcher::call_type("learning_materials"), answer);
    let server = server(&fake, None, None).await;
    let core = server.fixture.core.clone();
    std::fs::write(core.project_root().path().join("Cargo.toml"), "[package]\nname = \"p\"\n").expect("manifest");
    let session = core.coaching().start_session(None, Some("work".into())).expect("session").id;
    let low = gap(&server, &session, "low often", Severity::Low);
    for _ in 0..5 {
        core.db().record_gap_encounter(&low).expect("seen");
    }
    let medium = gap(&server, &session, "medium twice", Severity::Medium);
    core.db().record_gap_encounter(&medium).expect("seen");
    gap(&server, &session, "medium once", Severity::Medium);
    gap(&server, &session, "high", Severity::High);
    let done = gap(&server, &session, "high but addressed", Severity::High);
    core.db().set_gap_addressed(&done, true).expect("addressed");
    gap(&server, &session, "low once", Severity::Low);
    gap(&server, &session, "low too", Severity::Low);
    kata(&server, &low, "Lifetime kata");
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(3), |f| {
        f.iter().any(|(k, _, _)| k.starts_with("dashboard:materials"))
    })
    .await;
    let resources = &payload(&frames, "dashboard:materials")["recommendations"][0]["resources"];
    let urls: Vec<&str> = resources.as_array().expect("resources").iter().filter_map(|r| r["url"].as_str()).collect();
    assert_eq!(urls, ["https://doc.rust-lang.org/book", found[1]], "only web-search results (SC-086)");
    assert_eq!(resources[0]["type"], "documentation");
    let call = &calls_of(&fake, "learning_materials")[0];
    assert_eq!(
        call.body["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]),
        "FR-176"
    );
    let message = user_message(call);
    let topics: Vec<&str> =
        message["knowledge_gaps"].as_array().expect("gaps").iter().filter_map(|g| g["topic"].as_str()).collect();
    assert_eq!(
        topics,
        ["high", "medium twice", "medium once", "low often", "low once"],
        "severity, then frequency (FR-175)"
    );
    assert_eq!(
        (message["tech_stack"].as_str(), message["available_katas"].clone()),
        (Some("Rust"), json!(["Lifetime kata"]))
    );
    assert!(call.system().expect("system").contains("novice"), "no assessment yet: novice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_web_search_finds_nothing_the_recommendations_keep_their_advice_but_no_links() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let answer = Reply::json(&materials(&["https://doc.rust-lang.org/book/"])).with_blocks_before(search_blocks(&[]));
    fake.always(Matcher::call_type("learning_materials"), answer);
    let server = server(&fake, None, None).await;
    let session = server.fixture.core.coaching().start_session(None, Some("w".into())).expect("session").id;
    gap(&server, &session, "lifetimes", Severity::High);
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(3), |f| {
        f.iter().any(|(k, _, _)| k.starts_with("dashboard:materials"))
    })
    .await;
    let recommendation = &payload(&frames, "dashboard:materials")["recommendations"][0];
    assert_eq!(recommendation["resources"], json!([]), "EC-87: no search result, no link");
    assert_eq!(recommendation["studyOrder"], "Read the book first");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_gap_addressed_no_materials_are_researched_or_sent() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = server(&fake, None, None).await;
    let session = server.fixture.core.coaching().start_session(None, Some("w".into())).expect("session").id;
    let done = gap(&server, &session, "lifetimes", Severity::High);
    server.fixture.core.db().set_gap_addressed(&done, true).expect("addressed");
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_millis(1500), |_| false).await;
    assert_eq!(kinds(&frames), ["dashboard:state", "dashboard:issues_error"], "EC-86");
    assert!(calls_of(&fake, "learning_materials").is_empty());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let loaded = server.fixture.core.db().recent_actions(&session, 5, Some(ActionType::DashboardLoaded)).expect("log");
    assert_eq!(loaded[0].data, Some(json!({"statsPeriod": "all", "issuesLoaded": false, "materialsLoaded": false})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_reruns_only_the_issue_assessment() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&ranking()));
    fake.always(Matcher::call_type("learning_materials"), Reply::json(&materials(&[])));
    let bin = tempfile::tempdir().expect("bin");
    let server = server(&fake, Some(gh_stand_in(bin.path(), &two_issues())), None).await;
    let session = server.fixture.core.coaching().start_session(None, Some("w".into())).expect("session").id;
    gap(&server, &session, "lifetimes", Severity::High);
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    assert_eq!(dashboard_frames(&mut socket, Duration::from_secs(3), |f| f.len() == 3).await.len(), 3);
    refresh(&mut socket).await;
    let frames = dashboard_frames(&mut socket, Duration::from_millis(1000), |_| false).await;
    assert_eq!(kinds(&frames), ["dashboard:issues"], "no state, no materials (Scenario 12.8, FR-180)");
    assert_eq!((calls_of(&fake, "issue_assessment").len(), calls_of(&fake, "learning_materials").len()), (2, 1));
    assert_eq!(gh_calls(bin.path()).len(), 2, "gh asked again");
    let loaded = server.fixture.core.db().recent_actions(&session, 5, Some(ActionType::DashboardLoaded)).expect("log");
    assert_eq!(loaded.len(), 1, "a refresh is not a dashboard load");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_share_one_run_and_a_refresh_during_a_load_runs_to_its_own_answer() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&ranking()).delayed(Duration::from_millis(300)));
    fake.always(Matcher::call_type("learning_materials"), Reply::json(&materials(&[])));
    let bin = tempfile::tempdir().expect("bin");
    let server = server(&fake, Some(gh_stand_in(bin.path(), &two_issues())), None).await;
    let session = server.fixture.core.coaching().start_session(None, Some("w".into())).expect("session").id;
    gap(&server, &session, "lifetimes", Severity::High);
    let mut socket = ui(&server).await;
    request(&mut socket, Some("7d")).await;
    request(&mut socket, Some("all")).await;
    refresh(&mut socket).await;
    let frames = dashboard_frames(&mut socket, Duration::from_secs(10), |f| f.len() == 5).await;
    let count = |kind: &str| kinds(&frames).iter().filter(|k| **k == kind).count();
    // The second request joins the first's calls (issue 28: EC-90's duplicate calls avoided);
    // the refresh runs on its own and both rankings arrive (EC-91).
    assert_eq!(
        (count("dashboard:state"), count("dashboard:issues"), count("dashboard:materials")),
        (2, 2, 1),
        "EC-90, EC-91"
    );
    let periods: Vec<&Value> =
        frames.iter().filter(|(k, _, _)| k == "dashboard:state").map(|(_, p, _)| &p["stats"]["period"]).collect();
    assert_eq!(periods, [&json!("7d"), &json!("all")], "each request its own period");
    assert_eq!(calls_of(&fake, "issue_assessment").len(), 2);
}

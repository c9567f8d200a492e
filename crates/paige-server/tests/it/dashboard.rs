//! The dashboard (spec Story 12) over `/ws`: `dashboard:state` from SQLite at once, then the
//! issue assessment (a `gh` stand-in, or the real `gh` for its errors) and the learning
//! materials (the fake Messages API, web-search result blocks included) in parallel.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use paige_core::db::{ActionType, NewKataSpec, NewKnowledgeGap, Severity};
use paige_core::memory::{Importance, MemoryInput, Origin};
use paige_fake_anthropic::{FakeAnthropic, Matcher, RecordedRequest, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::Running;
use crate::tools::ui;

pub(crate) type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Two open issues as `gh issue list --json number,title,body,labels,assignees,comments,url` gives them.
pub(crate) fn two_issues() -> Value {
    json!([
        {"number": 12, "title": "Greet the user by name", "body": "The greeting ignores the name.",
         "labels": [{"name": "good first issue"}], "assignees": [{"login": "learner"}],
         "comments": [{"author": {"login": "maintainer"}, "body": "Start in src/greet.rs"}],
         "url": "https://github.com/o/r/issues/12"},
        {"number": 9, "title": "Add a --quiet flag", "body": "Too much output.", "labels": [], "assignees": [], "comments": []}
    ])
}

/// A `gh` stand-in in `dir` that answers `issue list` with `list` and records where it ran
/// and with which arguments (`gh-calls`, one line per run).
pub(crate) fn gh_stand_in(dir: &Path, list: &Value) -> PathBuf {
    std::fs::write(dir.join("issues.json"), list.to_string()).expect("issues");
    let script = dir.join("gh");
    let body = r#"#!/bin/sh
here="$(dirname "$0")"
echo "$(pwd) $*" >> "$here/gh-calls"
case "$1 $2" in
  "issue list") cat "$here/issues.json" ;;
  *) echo "unknown command" >&2; exit 1 ;;
esac
"#;
    write_script(&script, body)
}

pub(crate) fn write_script(path: &Path, body: &str) -> PathBuf {
    std::fs::write(path, body).expect("script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_owned()
}

pub(crate) fn gh_calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("gh-calls")).unwrap_or_default().lines().map(str::to_owned).collect()
}

fn assessed(number: i64, score: f64) -> Value {
    json!({
        "number": number, "title": format!("model's title {number}"), "summary": format!("Issue {number} in Paige's words"),
        "suitability": "good_fit", "suitability_reason": "within reach", "estimated_difficulty": "beginner",
        "relevant_skills": ["strings"], "priority_score": score,
        "priority_factors": {"user_tagged": true, "similar_to_recent_work": false, "addresses_knowledge_gap": true, "team_urgency": "low"},
        "learning_opportunities": ["formatting"]
    })
}

pub(crate) fn ranking() -> Value {
    json!({"issues": [assessed(9, 0.4), assessed(12, 0.9)]})
}

/// Web-search result blocks listing `urls`, as a search turn returns them before the answer.
pub(crate) fn search_blocks(urls: &[&str]) -> Vec<Value> {
    let results: Vec<Value> = urls
        .iter()
        .map(|url| json!({"type": "web_search_result", "url": url, "title": "t", "encrypted_content": "x", "page_age": null}))
        .collect();
    vec![
        json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust lifetimes"}}),
        json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results}),
        json!({"type": "text", "text": "Here is what I found."}),
    ]
}

fn resource(url: &str) -> Value {
    json!({"type": "documentation", "title": format!("About {url}"), "url": url, "description": "d",
           "relevance": "direct", "estimated_time": "10 min"})
}

pub(crate) fn materials(urls: &[&str]) -> Value {
    json!({"recommendations": [{
        "knowledge_gap": "lifetimes", "resources": urls.iter().map(|u| resource(u)).collect::<Vec<_>>(),
        "study_order": "Read the book first", "practice_connection": "Borrow checker kata"
    }]})
}

pub(crate) fn calls_of(fake: &FakeAnthropic, call_type: &str) -> Vec<RecordedRequest> {
    fake.message_requests().into_iter().filter(|r| r.call_type() == Some(call_type)).collect()
}

pub(crate) fn user_message(request: &RecordedRequest) -> Value {
    serde_json::from_str(request.user_message().expect("message")).expect("json")
}

/// A coaching server whose `gh` is `gh` (a missing path when `None`).
pub(crate) async fn server(fake: &FakeAnthropic, gh: Option<PathBuf>, gh_timeout: Option<Duration>) -> Running {
    let gh = gh.unwrap_or_else(|| "/nonexistent/gh".into());
    crate::coaching_server_with(fake, move |config| {
        config.gh_program = Some(gh);
        if let Some(timeout) = gh_timeout {
            config.limits.gh_timeout = timeout;
        }
    })
    .await
}

pub(crate) async fn request(socket: &mut Socket, period: Option<&str>) {
    let payload = period.map_or_else(|| json!({}), |p| json!({"statsPeriod": p}));
    let frame = json!({"type": "dashboard:request", "payload": payload}).to_string();
    socket.send(Message::Text(frame.into())).await.expect("send");
}

pub(crate) async fn refresh(socket: &mut Socket) {
    let frame = json!({"type": "dashboard:refresh_issues", "payload": {}}).to_string();
    socket.send(Message::Text(frame.into())).await.expect("send");
}

/// Every frame (`type`, `payload`, when it arrived) until the socket has been quiet for
/// `quiet` or `done` holds; the dashboard's own frames only.
pub(crate) async fn dashboard_frames(
    socket: &mut Socket,
    quiet: Duration,
    done: impl Fn(&[(String, Value, Duration)]) -> bool,
) -> Vec<(String, Value, Duration)> {
    let started = Instant::now();
    let mut frames = Vec::new();
    while let Ok(Some(Ok(message))) = tokio::time::timeout(quiet, socket.next()).await {
        let Message::Text(text) = message else { continue };
        let frame: Value = serde_json::from_str(text.as_str()).expect("json");
        let kind = frame["type"].as_str().unwrap_or_default().to_owned();
        if kind.starts_with("dashboard:") {
            frames.push((kind, frame["payload"].clone(), started.elapsed()));
            if done(&frames) {
                break;
            }
        }
    }
    frames
}

pub(crate) fn kinds(frames: &[(String, Value, Duration)]) -> Vec<&str> {
    frames.iter().map(|(kind, _, _)| kind.as_str()).collect()
}

pub(crate) fn payload<'a>(frames: &'a [(String, Value, Duration)], kind: &str) -> &'a Value {
    &frames.iter().find(|(k, _, _)| k == kind).unwrap_or_else(|| panic!("no {kind} in {:?}", kinds(frames))).1
}

pub(crate) fn gap(server: &Running, session: &str, topic: &str, severity: Severity) -> String {
    let new = NewKnowledgeGap {
        session_id: session.into(),
        topic: topic.into(),
        severity,
        evidence: "seen".into(),
        related_concepts: vec![format!("{topic} basics")],
    };
    server.fixture.core.db().create_knowledge_gap(new).expect("gap").id
}

pub(crate) fn kata(server: &Running, gap: &str, title: &str) -> String {
    let constraints =
        vec![paige_core::db::KataConstraint { title: "No clone".into(), description: "d".into(), min_level: 3 }];
    let new = NewKataSpec {
        knowledge_gap_id: gap.into(),
        title: title.into(),
        description: "d".into(),
        scaffolding_code: "fn main() {}".into(),
        instructor_notes: "n".into(),
        constraints,
    };
    server.fixture.core.db().create_kata(new).expect("kata").id
}

fn both_flows_done(frames: &[(String, Value, Duration)]) -> bool {
    let issues = frames.iter().any(|(k, _, _)| k.starts_with("dashboard:issues"));
    let materials = frames.iter().any(|(k, _, _)| k.starts_with("dashboard:materials"));
    issues && materials
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_database_answers_zeros_and_empty_lists_runs_the_issues_and_skips_the_materials() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&ranking()));
    let bin = tempfile::tempdir().expect("bin");
    let server = server(&fake, Some(gh_stand_in(bin.path(), &two_issues())), None).await;
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_millis(1500), |_| false).await;
    assert_eq!(kinds(&frames), ["dashboard:state", "dashboard:issues"], "no materials without gaps (EC-85)");
    assert_eq!(
        payload(&frames, "dashboard:state"),
        &json!({"dreyfus": [], "inProgressSessions": [], "katas": [], "reviewsDue": 0,
            "learning": {"reliance": [], "solutionsShown": 0,
                         "comprehension": {"correct": 0, "partial": 0, "incorrect": 0, "skipped": 0}},
            "stats": {
            "period": "all", "sessionsCompleted": 0, "totalCoachingMinutes": 0.0, "issuesWorkedOn": 0,
            "knowledgeGapsIdentified": 0, "knowledgeGapsAddressed": 0, "hintsUsed": 0, "apiCostTotal": 0.0}}),
        "Scenario 12.9, EC-88, SC-091"
    );
    assert!(calls_of(&fake, "learning_materials").is_empty(), "the materials call is skipped");
    assert_eq!(calls_of(&fake, "issue_assessment").len(), 1, "issues exist independently");
    // The launch screen has no session: dashboard_loaded is logged with none (FR-186).
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    let loaded = || {
        let logged = server.fixture.core.db().actions_without_session(10).expect("log");
        logged.into_iter().filter(|a| a.action_type == ActionType::DashboardLoaded).count()
    };
    while loaded() == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(loaded(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_comes_first_then_issues_and_materials_run_in_parallel_and_dashboard_loaded_is_logged() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let delay = Duration::from_millis(1000);
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&ranking()).delayed(delay));
    let found = ["https://doc.rust-lang.org/book/ch10-03-lifetime-syntax.html"];
    let answer = Reply::json(&materials(&found)).with_blocks_before(search_blocks(&found)).delayed(delay);
    fake.always(Matcher::call_type("learning_materials"), answer);
    let bin = tempfile::tempdir().expect("bin");
    let server = server(&fake, Some(gh_stand_in(bin.path(), &two_issues())), None).await;
    let core = server.fixture.core.clone();
    let session = core.coaching().start_session(Some(12), Some("Greet the user by name".into())).expect("session").id;
    gap(&server, &session, "lifetimes", Severity::High);
    let mut socket = ui(&server).await;
    let started = Instant::now();
    request(&mut socket, Some("7d")).await;
    // Both model calls take a second: both must be asked before either answers (Scenario 12.11).
    let (mut frames, mut both_asked) = (Vec::new(), None);
    while frames.len() < 3 && started.elapsed() < Duration::from_secs(6) {
        let asked = calls_of(&fake, "issue_assessment").len() + calls_of(&fake, "learning_materials").len();
        if both_asked.is_none() && asked == 2 {
            both_asked = Some(started.elapsed());
        }
        if let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout(Duration::from_millis(5), socket.next()).await {
            let frame: Value = serde_json::from_str(text.as_str()).expect("json");
            if frame["type"].as_str().is_some_and(|k| k.starts_with("dashboard:")) {
                frames.push((
                    frame["type"].as_str().unwrap_or_default().to_owned(),
                    frame["payload"].clone(),
                    started.elapsed(),
                ));
            }
        }
    }
    assert_eq!(kinds(&frames)[0], "dashboard:state", "state before either flow (SC-087)");
    assert!(frames[0].2 < Duration::from_millis(500), "state at once: {:?}", frames[0].2);
    assert_eq!(payload(&frames, "dashboard:state")["inProgressSessions"][0]["issueNumber"], 12);
    let both_asked = both_asked.expect("both model calls were made");
    assert!(
        both_asked < frames[1].2,
        "the flows ran in parallel: both asked at {both_asked:?}, first answer at {:?}",
        frames[1].2
    );
    let issues = &payload(&frames, "dashboard:issues")["issues"];
    assert_eq!(issues.as_array().map(Vec::len), Some(2));
    assert_eq!((issues[0]["number"].as_i64(), issues[0]["title"].as_str()), (Some(12), Some("Greet the user by name")));
    assert_eq!(issues[0]["url"], "https://github.com/o/r/issues/12", "the link the dashboard opens");
    assert_eq!(issues[1].get("url"), None, "no https page given: no link");
    assert_eq!(
        issues[0]["priorityFactors"],
        json!({"userTagged": true, "similarToRecentWork": false, "addressesKnowledgeGap": true, "teamUrgency": "low"})
    );
    let materials = &payload(&frames, "dashboard:materials")["recommendations"][0];
    assert_eq!(materials["resources"][0]["url"], found[0]);
    assert_eq!(materials["practiceConnection"], "Borrow checker kata");
    // The spec's gh command, in the project (FR-171).
    let ran = gh_calls(bin.path());
    let project = core.project_root().path().display().to_string();
    assert_eq!(
        ran,
        [format!(
            "{project} issue list --state open --json number,title,body,labels,assignees,comments,url --limit 50"
        )]
    );
    // dashboard_loaded once both flows ended (FR-186).
    tokio::time::sleep(Duration::from_millis(200)).await;
    let loaded = core.db().recent_actions(&session, 5, Some(ActionType::DashboardLoaded)).expect("log");
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].data, Some(json!({"statsPeriod": "7d", "issuesLoaded": true, "materialsLoaded": true})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_issue_assessment_is_given_issues_stages_sessions_gaps_and_memories() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&ranking()));
    fake.always(Matcher::call_type("learning_materials"), Reply::json(&materials(&[])));
    let bin = tempfile::tempdir().expect("bin");
    let mut issues = two_issues();
    issues[0]["body"] = json!("é".repeat(5000));
    let server = server(&fake, Some(gh_stand_in(bin.path(), &issues)), None).await;
    let core = server.fixture.core.clone();
    let done = core.coaching().start_session(Some(3), Some("Fix the greeting".into())).expect("session").id;
    gap(&server, &done, "string formatting", Severity::Medium);
    core.db().end_session(&done, paige_core::db::SessionStatus::Completed).expect("ended");
    core.db()
        .upsert_dreyfus(paige_core::db::NewDreyfusAssessment {
            skill_area: "Rust".into(),
            stage: paige_core::db::DreyfusStage::AdvancedBeginner,
            confidence: 0.7,
            evidence: "e".into(),
        })
        .expect("assessed");
    let remembered = core.clone();
    tokio::task::spawn_blocking(move || {
        let input = MemoryInput {
            content: "Greeting the user by name needed format! last time".into(),
            tags: vec!["greet".into()],
            importance: Importance::High,
        };
        let project = remembered.project_name();
        remembered.memory().add_memories(&[input], &Origin::Session("old".into()), &project, remembered.now());
    })
    .await
    .expect("remembered");
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    dashboard_frames(&mut socket, Duration::from_secs(3), both_flows_done).await;
    let message = user_message(&calls_of(&fake, "issue_assessment")[0]);
    let body = message["github_issues"][0]["body"].as_str().expect("body");
    assert_eq!(body.chars().count(), 2001, "2,000 characters and the cut mark (EC-89)");
    assert!(body.ends_with('…'));
    assert_eq!(message["github_issues"][0]["labels"], json!(["good first issue"]));
    assert_eq!(message["github_issues"][0]["assignees"], json!(["learner"]));
    assert_eq!(message["github_issues"][0]["comments"][0]["author"], "maintainer");
    assert_eq!(message["user_dreyfus_stages"][0]["stage"], "advanced_beginner");
    assert_eq!(message["recent_sessions"][0]["issueTitle"], "Fix the greeting");
    assert_eq!(message["knowledge_gaps"], json!([{"topic": "string formatting", "severity": "medium"}]));
    assert!(
        message["related_memories"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["content"].as_str().is_some_and(|c| c.contains("format!")))),
        "{}",
        message["related_memories"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_memory_store_the_issues_are_still_assessed_with_no_memories() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&ranking()));
    let bin = tempfile::tempdir().expect("bin");
    // A core whose memory is not configured: queries answer nothing (Scenario 12.4).
    let (project, data) = (tempfile::tempdir().expect("project"), tempfile::tempdir().expect("data"));
    let config = paige_core::Config {
        token: Some(crate::TOKEN.into()),
        anthropic_base_url: Some(fake.base_url()),
        gh_program: Some(gh_stand_in(bin.path(), &two_issues())),
        ..paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "test-key")
    };
    let clock = std::sync::Arc::new(paige_core::ManualClock::new(chrono::Utc::now()));
    let core = std::sync::Arc::new(paige_core::Core::open(config, clock.clone()).expect("core"));
    assert!(!core.memory().is_available());
    let server = crate::serve_fixture(crate::Fixture::new(core, clock, (project, data))).await;
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_millis(1500), |f| f.len() == 2).await;
    assert_eq!(payload(&frames, "dashboard:issues")["issues"].as_array().map(Vec::len), Some(2), "SC-089");
    assert_eq!(user_message(&calls_of(&fake, "issue_assessment")[0])["related_memories"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_picks_become_at_most_ten_listed_issues_best_first_with_their_real_titles() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let listed: Vec<Value> =
        (1..=14).map(|n| json!({"number": n, "title": format!("Issue {n}"), "body": ""})).collect();
    // Twelve listed picks, one made-up number and one pick twice.
    let mut picks: Vec<Value> = (1..=12).map(|n| assessed(n, f64::from(n as u8) / 20.0)).collect();
    picks.push(assessed(99, 1.0));
    picks.push(assessed(12, 0.01));
    fake.always(Matcher::call_type("issue_assessment"), Reply::json(&json!({"issues": picks})));
    let bin = tempfile::tempdir().expect("bin");
    let server = server(&fake, Some(gh_stand_in(bin.path(), &Value::Array(listed))), None).await;
    let mut socket = ui(&server).await;
    request(&mut socket, None).await;
    let frames = dashboard_frames(&mut socket, Duration::from_millis(1500), |f| f.len() == 2).await;
    let issues = payload(&frames, "dashboard:issues")["issues"].as_array().expect("issues").clone();
    let numbers: Vec<i64> = issues.iter().filter_map(|i| i["number"].as_i64()).collect();
    assert_eq!(numbers, [12, 11, 10, 9, 8, 7, 6, 5, 4, 3], "top 10 by priority, no made-up issue, once each");
    assert_eq!(issues[0]["title"], "Issue 12", "gh's title, not the model's");
}

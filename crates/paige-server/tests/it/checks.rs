//! Live step checking (issue 16) end to end: a plan from the (fake) coach agent whose phase
//! names a test, a small real Node project whose test fails before the expected edit and
//! passes after, and saves through `/ws` `file:save`; the UI hears `coaching:step_check`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use futures_util::{SinkExt, StreamExt};
use paige_core::checks::CheckStatus;
use paige_core::{Config, Core, ManualClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::tools::{call, ok, session_client, ui};
use crate::{Fixture, Running, TOKEN};

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) const WRONG: &str = "exports.sum = (a, b) => a - b;\n";
pub(crate) const RIGHT: &str = "exports.sum = (a, b) => a + b;\n";

/// A Node project: `src/sum.js` (wrong), its test `sum adds` and another, run by
/// `npm test -- <filter>` (`node --test --test-name-pattern <filter>`).
pub(crate) fn node_project(dir: &Path, with_package_json: bool) {
    let write = |path: &str, content: &str| {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, content).expect("write");
    };
    if with_package_json {
        write(
            "package.json",
            r#"{"name": "sum", "version": "1.0.0", "private": true, "scripts": {"test": "node --test --test-name-pattern"}}"#,
        );
    }
    write("src/sum.js", WRONG);
    write("README.md", "# sum\n");
    write(
        "test/sum.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('../src/sum.js');\n\
         test('sum adds', () => { assert.strictEqual(sum(2, 3), 5); });\n\
         test('sum is a function', () => { assert.strictEqual(typeof sum, 'function'); });\n",
    );
}

/// The coach agent's plan: phase 1 is done when `filter` passes after editing `src/sum.js`;
/// phase 2 names no test.
fn coach_reply(filter: Option<&str>) -> Value {
    let phase = |number: i64, title: &str, filter: Option<&str>| {
        json!({
            "number": number, "title": title, "description": "Make sum add.",
            "expected_files": ["src/sum.js"], "hint_level": "file",
            "hints": {"file_hints": [], "line_hints": []}, "knowledge_gap_opportunities": [],
            "skill_area": "testing", "test_filter": filter
        })
    };
    json!({
        "phases": [phase(1, "Make sum add", filter), phase(2, "Tidy up", None)],
        "memory_connection": null,
        "estimated_difficulty": "beginner"
    })
}

/// A served core (no memory, the watcher running) over a Node project, a session with the
/// coached plan, its first phase active, and a UI socket.
pub(crate) async fn planned_node(
    filter: Option<&str>,
    with_package_json: bool,
    timeout: Option<Duration>,
) -> (FakeAnthropic, Running, Socket) {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply(filter)));
    let project = tempfile::tempdir().expect("project dir");
    let data = tempfile::tempdir().expect("data dir");
    node_project(project.path(), with_package_json);
    let mut config = Config {
        token: Some(TOKEN.into()),
        anthropic_base_url: Some(fake.base_url()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "test-key")
    };
    if let Some(timeout) = timeout {
        config.limits.step_check_timeout = timeout;
    }
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).single().expect("date")));
    let core = Arc::new(Core::open(config, clock.clone()).expect("core opens"));
    let server = crate::serve_fixture(Fixture::new(core, clock, (project, data))).await;
    // As `paige serve` runs: the watcher keeps the change detector's journal.
    server.fixture.core.start_watcher().expect("watcher");
    server.fixture.core.coaching().start_session(None, Some("Sum".into())).expect("session");
    let client = session_client(&server).await;
    ok(&call(
        &client,
        "paige_run_coaching_pipeline",
        json!({"planText": "1. Make sum add", "issueSummary": "sum subtracts"}),
    )
    .await);
    ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "active"})).await);
    let socket = ui(&server).await;
    (fake, server, socket)
}

pub(crate) async fn save(socket: &mut Socket, path: &str, content: &str) {
    let frame = json!({"type": "file:save", "payload": {"path": path, "content": content}});
    socket.send(Message::Text(frame.to_string().into())).await.expect("send");
}

/// Every `coaching:step_check` (and the frames' types) until one that is not `running`
/// arrives, or `within` passes.
pub(crate) async fn until_checked(socket: &mut Socket, within: Duration) -> (Vec<Value>, Vec<Value>) {
    let deadline = Instant::now() + within;
    let (mut checks, mut others) = (Vec::new(), Vec::new());
    while let Ok(Some(Ok(Message::Text(text)))) =
        tokio::time::timeout(deadline.saturating_duration_since(Instant::now()), socket.next()).await
    {
        let frame: Value = serde_json::from_str(text.as_str()).expect("json");
        if frame["type"] != "coaching:step_check" {
            others.push(frame);
            continue;
        }
        let done = frame["payload"]["status"] != "running";
        checks.push(frame["payload"].clone());
        if done {
            break;
        }
    }
    (checks, others)
}

fn statuses(checks: &[Value]) -> Vec<&str> {
    checks.iter().filter_map(|c| c["status"].as_str()).collect()
}

fn project(server: &Running) -> PathBuf {
    server.fixture.core.project_root().path().to_owned()
}

/// The phase in progress's latest check, as the Observer reads it.
fn latest(server: &Running) -> paige_core::checks::PhaseCheck {
    let core = &server.fixture.core;
    let session = core.active_session().expect("session");
    let plan = core.db().plans_for_session(&session.id).expect("plans").pop().expect("plan");
    let phase = core.db().phases_for_plan(&plan.id).expect("phases").remove(0);
    core.phase_check(&phase.id).expect("a check ran")
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet), within a second.
pub(crate) fn gone(pid: i32) -> bool {
    for _ in 0..50 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')) => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

/// A `sum` that writes its process's pid to `pid_file` (outside the project), then blocks.
pub(crate) fn hanging(pid_file: &Path) -> String {
    format!(
        "exports.sum = (a, b) => {{ require('fs').writeFileSync({:?}, String(process.pid)); \
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); return a + b; }};\n",
        pid_file.display().to_string()
    )
}

async fn wait_for_file(path: &Path, within: Duration) -> String {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{} never appeared", path.display());
}

const CHECK: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_the_expected_file_runs_the_phases_test_failing_then_passing_after_the_edit_counting_failures() {
    let (_fake, server, mut socket) = planned_node(Some("sum adds"), true, None).await;
    save(&mut socket, "src/sum.js", WRONG).await;
    let (checks, _) = until_checked(&mut socket, CHECK).await;
    assert_eq!(statuses(&checks), ["running", "failed"], "{checks:?}");
    assert_eq!(checks[0]["phase"], 1);
    assert_eq!(checks[0]["command"], "npm test -- 'sum adds'");
    let failed = &checks[1];
    assert!(
        failed["summary"].as_str().is_some_and(|s| s.starts_with("failing: sum adds") && s.contains("-1 !== 5")),
        "{failed}"
    );
    assert_eq!(failed["consecutiveFailures"], 1);
    assert!(failed["durationMs"].as_u64().is_some());
    // Still wrong: two failures in a row, as the Observer reads them.
    save(&mut socket, "src/sum.js", "exports.sum = (a, b) => a * b;\n").await;
    let (checks, _) = until_checked(&mut socket, CHECK).await;
    assert_eq!(statuses(&checks), ["running", "failed"]);
    assert!(checks[1]["summary"].as_str().is_some_and(|s| s.contains("6 !== 5")), "{checks:?}");
    assert_eq!(checks[1]["consecutiveFailures"], 2);
    let check = latest(&server);
    assert_eq!((check.status, check.consecutive_failures), (CheckStatus::Failed, 2));
    // The edit the phase asks for: green, and the count starts again.
    save(&mut socket, "src/sum.js", RIGHT).await;
    let (checks, _) = until_checked(&mut socket, CHECK).await;
    assert_eq!(statuses(&checks), ["running", "passed"]);
    assert_eq!(
        (checks[1]["summary"].as_str(), checks[1]["consecutiveFailures"].as_u64()),
        (Some("1 test passed"), Some(0))
    );
    let check = latest(&server);
    assert_eq!((check.status, check.consecutive_failures, check.finished_at.is_some()), (CheckStatus::Passed, 0, true));
    assert_eq!(std::fs::read_to_string(project(&server).join("src/sum.js")).expect("read"), RIGHT, "the save stands");
    // A file the phase does not expect runs nothing.
    save(&mut socket, "README.md", "# sum, adding\n").await;
    let (checks, _) = until_checked(&mut socket, Duration::from_millis(800)).await;
    assert!(checks.is_empty(), "{checks:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_check_is_stopped_at_the_timeout_and_reported_as_an_error_its_processes_killed() {
    let (_fake, server, mut socket) = planned_node(Some("sum adds"), true, Some(Duration::from_millis(2500))).await;
    let outside = tempfile::tempdir().expect("dir");
    let pid_file = outside.path().join("pid");
    save(&mut socket, "src/sum.js", &hanging(&pid_file)).await;
    let started = Instant::now();
    let (checks, _) = until_checked(&mut socket, CHECK).await;
    assert_eq!(statuses(&checks), ["running", "error"], "{checks:?}");
    assert_eq!(checks[1]["summary"], "the check took longer than 2.5 s, so Paige stopped it");
    assert!(started.elapsed() < Duration::from_secs(10), "stopped at the deadline: {:?}", started.elapsed());
    let pid: i32 = wait_for_file(&pid_file, Duration::from_secs(1)).await.parse().expect("pid");
    assert!(gone(pid), "the hanging test process {pid} was killed");
    let check = latest(&server);
    assert_eq!((check.status, check.consecutive_failures), (CheckStatus::Error, 0), "an error is not a failure");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_save_supersedes_the_running_check_whose_process_is_killed_and_whose_result_is_dropped() {
    let (_fake, _server, mut socket) = planned_node(Some("sum adds"), true, None).await;
    let outside = tempfile::tempdir().expect("dir");
    let pid_file = outside.path().join("pid");
    save(&mut socket, "src/sum.js", &hanging(&pid_file)).await;
    let pid: i32 = wait_for_file(&pid_file, CHECK).await.parse().expect("pid");
    save(&mut socket, "src/sum.js", RIGHT).await;
    let (checks, _) = until_checked(&mut socket, CHECK).await;
    assert_eq!(statuses(&checks), ["running", "running", "passed"], "the first check ends with no result: {checks:?}");
    assert!(gone(pid), "the superseded test process {pid} was killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_test_runner_or_a_test_for_the_phase_the_status_says_why() {
    let (_fake, _server, mut socket) = planned_node(Some("sum adds"), false, None).await;
    save(&mut socket, "src/sum.js", RIGHT).await;
    let (checks, _) = until_checked(&mut socket, CHECK).await;
    assert_eq!(statuses(&checks), ["error"], "nothing runs: {checks:?}");
    assert!(checks[0]["summary"].as_str().is_some_and(|s| s.starts_with("no test runner found in the project")));
    assert!(checks[0].get("command").is_none());
    // Phase 2 names no test.
    let (_fake, server, mut socket) = planned_node(Some("sum adds"), true, None).await;
    let client = session_client(&server).await;
    ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "complete"})).await);
    ok(&call(&client, "paige_update_phase", json!({"phase": 2, "status": "active"})).await);
    save(&mut socket, "src/sum.js", RIGHT).await;
    let (checks, _) = until_checked(&mut socket, CHECK).await;
    assert_eq!(
        checks.iter().map(|c| (c["phase"].as_i64(), c["status"].as_str(), c["summary"].as_str())).collect::<Vec<_>>(),
        [(Some(2), Some("error"), Some("no test for this phase"))]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filter_is_one_argument_to_the_runner_and_no_shell_runs_it() {
    let (_fake, server, mut socket) = planned_node(Some("x; touch pwned"), true, None).await;
    save(&mut socket, "src/sum.js", RIGHT).await;
    let (checks, _) = until_checked(&mut socket, CHECK).await;
    assert_eq!(statuses(&checks), ["running", "error"], "{checks:?}");
    assert_eq!(checks[0]["command"], "npm test -- 'x; touch pwned'");
    assert_eq!(
        checks[1]["summary"], "no test matches \u{201c}x; touch pwned\u{201d} yet",
        "the whole filter was one test-name pattern"
    );
    assert!(!project(&server).join("pwned").exists(), "no shell ran `touch pwned`");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_test_changes_among_the_learners_files_is_undone_and_the_learners_save_is_kept() {
    let (_fake, server, mut socket) = planned_node(Some("sum adds"), true, None).await;
    let root = project(&server);
    // A test that writes learner files (and a build artefact under node_modules, not one).
    std::fs::write(
        root.join("test/writes.test.js"),
        "const fs = require('fs');\nconst test = require('node:test');\n\
         test('sum adds, and scribbles', () => { fs.writeFileSync('README.md', 'overwritten by a test\\n'); \
         fs.writeFileSync('notes.txt', 'made by a test\\n'); fs.mkdirSync('node_modules/.cache', {recursive: true}); \
         fs.writeFileSync('node_modules/.cache/artefact', 'x'); });\n",
    )
    .expect("test file");
    save(&mut socket, "src/sum.js", RIGHT).await;
    let (checks, others) = until_checked(&mut socket, CHECK).await;
    assert_eq!(statuses(&checks), ["running", "passed"], "{checks:?}");
    assert_eq!(std::fs::read_to_string(root.join("README.md")).expect("readme"), "# sum\n", "put back");
    assert!(!root.join("notes.txt").exists(), "removed");
    assert!(root.join("node_modules/.cache/artefact").exists(), "not a learner file: left alone");
    assert_eq!(std::fs::read_to_string(root.join("src/sum.js")).expect("sum"), RIGHT, "the learner's save is theirs");
    let notice = others
        .iter()
        .chain(crate::coaching::all_frames(&mut socket, Duration::from_millis(300)).await.iter())
        .find(|f| {
            f["type"] == "coaching:message"
                && f["payload"]["message"].as_str().is_some_and(|m| m.contains("step check"))
        })
        .cloned()
        .expect("the learner is told");
    let text = notice["payload"]["message"].as_str().expect("text");
    assert!(text.contains("README.md (changed): undone") && text.contains("notes.txt (created): undone"), "{text}");
    assert!(!text.contains("src/sum.js"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_running_when_the_session_ends_is_killed_and_its_result_dropped() {
    let (_fake, server, mut socket) = planned_node(Some("sum adds"), true, None).await;
    let outside = tempfile::tempdir().expect("dir");
    let pid_file = outside.path().join("pid");
    save(&mut socket, "src/sum.js", &hanging(&pid_file)).await;
    let pid: i32 = wait_for_file(&pid_file, CHECK).await.parse().expect("pid");
    server.fixture.core.coaching().end_session(paige_core::db::SessionStatus::Completed).expect("ended");
    assert!(gone(pid), "the session's check process {pid} was killed");
    let (checks, _) = until_checked(&mut socket, Duration::from_millis(800)).await;
    assert!(checks.iter().all(|c| c["status"] == "running"), "no result after the session ended: {checks:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_kills_a_running_check_instead_of_waiting_for_it() {
    let (_fake, server, mut socket) = planned_node(Some("sum adds"), true, None).await;
    let outside = tempfile::tempdir().expect("dir");
    let pid_file = outside.path().join("pid");
    save(&mut socket, "src/sum.js", &hanging(&pid_file)).await;
    let pid: i32 = wait_for_file(&pid_file, CHECK).await.parse().expect("pid");
    // The check may run 60 s; shutdown does not wait for it.
    tokio::time::timeout(Duration::from_secs(10), server.fixture.core.shutdown())
        .await
        .expect("shutdown is prompt")
        .expect("database checkpointed");
    assert!(gone(pid), "the check's process {pid} was killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_green_check_makes_the_observer_look_with_it_in_the_snapshot_and_a_new_ui_gets_the_latest_check() {
    let (fake, server, mut socket) = planned_node(Some("sum adds"), true, None).await;
    let quiet = json!({
        "should_nudge": false, "confidence": 0.2, "signal": "no_nudge", "reasoning": "fine",
        "suggested_context": {"current_file": null, "expected_file": null, "time_in_file": null, "phase_description": null}
    });
    fake.always(Matcher::call_type("observer_triage"), Reply::json(&quiet));
    save(&mut socket, "src/sum.js", RIGHT).await;
    let (checks, _) = until_checked(&mut socket, CHECK).await;
    assert_eq!(statuses(&checks), ["running", "passed"]);
    let snapshots = || -> Vec<Value> {
        fake.message_requests()
            .iter()
            .filter(|r| r.call_type() == Some("observer_triage"))
            .map(|r| serde_json::from_str(r.user_message().expect("message")).expect("json"))
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !snapshots().iter().any(|s| s["step_check"]["status"] == "passed") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let green = snapshots().into_iter().find(|s| s["step_check"]["status"] == "passed").expect("a look after the pass");
    assert_eq!(
        (green["step_check"]["consecutive_failures"].as_u64(), green["step_check"]["summary"].as_str()),
        (Some(0), Some("1 test passed"))
    );
    // A UI that connects now (a reload) sees the phase's latest check at once.
    let mut reloaded = ui(&server).await;
    let hello = json!({"type": "connection:hello", "payload": {"version": "0.1.0", "platform": "test", "windowSize": {"width": 800, "height": 600}}});
    reloaded.send(Message::Text(hello.to_string().into())).await.expect("send");
    let (checks, _) = until_checked(&mut reloaded, Duration::from_millis(800)).await;
    assert_eq!(statuses(&checks), ["passed"], "{checks:?}");
}

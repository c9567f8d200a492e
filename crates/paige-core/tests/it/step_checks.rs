//! The step checks inside `paige-core` (issue 29): built by `Core::open` with the change
//! detector and their timeout, they run a phase's check when the learner saves one of its
//! expected files through the one dispatcher (`file:save`), record it on the virtual clock,
//! and tell the bus — no server in between.

use std::time::{Duration, Instant};

use paige_core::event::Event;
use paige_core::protocol::{ConnectionId, ServerMessage, StepCheck};
use paige_core::vocab::CheckStatus;
use serde_json::json;

const WRONG: &str = "exports.sum = (a, b) => a - b;\n";
const RIGHT: &str = "exports.sum = (a, b) => a + b;\n";

fn node_project() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "package.json",
            r#"{"name": "sum", "version": "1.0.0", "private": true, "scripts": {"test": "node --test --test-name-pattern"}}"#,
        ),
        ("src/sum.js", WRONG),
        (
            "test/sum.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('../src/sum.js');\n\
             test('sum adds', () => { assert.strictEqual(sum(2, 3), 5); });\n",
        ),
    ]
}

/// The next `coaching:step_check` that is not `running`, within 60 s.
async fn next_result(events: &mut tokio::sync::broadcast::Receiver<Event>) -> StepCheck {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, events.recv()).await {
            Ok(Ok(event)) => {
                if let Some(ServerMessage::CoachingStepCheck(check)) = event.into_ui_message()
                    && check.status != CheckStatus::Running
                {
                    return check;
                }
            }
            other => panic!("no step check result: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_expected_file_runs_the_phases_check_and_the_result_is_kept_on_the_virtual_clock() {
    if std::process::Command::new("npm").arg("--version").output().is_err() {
        super::skipped("no npm: the step check test cannot run");
        return;
    }
    let t = super::test_core(&node_project());
    let session = t.core.coaching().start_session(Some(4), Some("Make sum add".into())).expect("session").id;
    let (_, phases) = t
        .core
        .db()
        .create_plan_with_phases(&session, "1. fix", vec![super::new_phase(1, "src/sum.js", "sum adds")])
        .expect("plan");
    let phase_id = phases[0].0.id.clone();
    let mut events = t.core.subscribe();
    let save = |content: &str| {
        let frame = json!({"type": "file:save", "payload": {"path": "src/sum.js", "content": content}});
        t.core.handle_text(ConnectionId(1), &frame.to_string());
    };

    save(WRONG);
    let failed = next_result(&mut events).await;
    assert_eq!((failed.phase, failed.status, failed.consecutive_failures), (1, CheckStatus::Failed, 1), "{failed:?}");
    t.clock.advance(chrono::Duration::minutes(5));
    save(RIGHT);
    let passed = next_result(&mut events).await;
    assert_eq!((passed.status, passed.consecutive_failures), (CheckStatus::Passed, 0), "{passed:?}");
    let kept = t.core.phase_check(&phase_id).expect("kept");
    assert_eq!(kept.status, CheckStatus::Passed);
    assert_eq!(kept.finished_at, Some(paige_core::Clock::now(&*t.clock)), "stamped by the injected clock");
    assert_eq!(std::fs::read_to_string(t.project.path().join("src/sum.js")).expect("file"), RIGHT, "the save stands");
}

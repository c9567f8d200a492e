//! Story 4 buffer logging on tokio's paused clock: the 30 s timer never really waits.

use std::sync::Arc;
use std::time::Duration;

use paige_core::Core;
use paige_core::db::{ActionEntry, ActionType, SessionStatus};
use paige_core::protocol::{BufferUpdate, ClientMessage, ConnectionId, CursorPosition, PathPayload};
use serde_json::json;

use super::{TestCore, test_core};

const CONN: ConnectionId = ConnectionId(1);

fn open(core: &std::sync::Arc<Core>, path: &str) {
    assert_eq!(core.handle_message(CONN, ClientMessage::FileOpen(PathPayload { path: path.into() })), None);
}

fn edit(core: &std::sync::Arc<Core>, path: &str, content: String) {
    let update = BufferUpdate {
        path: path.into(),
        content,
        cursor_position: CursorPosition { line: 1, column: 1 },
        selections: vec![],
    };
    assert_eq!(core.handle_message(CONN, ClientMessage::BufferUpdate(update)), None, "buffer:update sends no reply");
}

fn actions(t: &TestCore, session: &str, kind: ActionType) -> Vec<ActionEntry> {
    let mut rows = t.core.db().recent_actions(session, 1000, Some(kind)).expect("actions");
    rows.reverse();
    rows
}

/// Advances tokio's paused clock and lets woken tasks run.
async fn elapse(t: &TestCore, secs: u64) {
    t.clock.advance(chrono::Duration::seconds(secs as i64));
    tokio::time::advance(Duration::from_secs(secs)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn summary_every_30_seconds_only_for_files_edited_since() {
    let t = test_core(&[("a.rs", "a".repeat(1000).as_str()), ("b.rs", "fn b() {}\n")]);
    let session = t.core.coaching().start_session(Some(7), None).expect("session").id;
    open(&t.core, "a.rs");
    open(&t.core, "b.rs");
    edit(&t.core, "a.rs", "a".repeat(1010));
    edit(&t.core, "a.rs", "a".repeat(1020));

    elapse(&t, 29).await;
    assert!(actions(&t, &session, ActionType::BufferSummary).is_empty(), "not before 30 s");
    elapse(&t, 1).await;
    let summaries = actions(&t, &session, ActionType::BufferSummary);
    assert_eq!(summaries.len(), 1, "only the dirty file");
    assert_eq!(summaries[0].data, Some(json!({"path": "a.rs", "editCount": 2, "charDelta": 20, "charCount": 1020})));

    elapse(&t, 30).await;
    assert_eq!(actions(&t, &session, ActionType::BufferSummary).len(), 1, "no edits since → nothing new");
    edit(&t.core, "a.rs", "a".repeat(1000));
    elapse(&t, 30).await;
    let summaries = actions(&t, &session, ActionType::BufferSummary);
    assert_eq!(summaries.len(), 2);
    assert_eq!(summaries[1].data.as_ref().map(|d| d["charDelta"].clone()), Some(json!(-20)));
}

#[tokio::test(start_paused = true)]
async fn significant_change_thresholds_are_exclusive_at_both_edges() {
    let t = test_core(&[("big.rs", "x".repeat(2000).as_str()), ("small.rs", "y".repeat(100).as_str())]);
    let session = t.core.coaching().start_session(None, None).expect("session").id;
    open(&t.core, "big.rs");
    open(&t.core, "small.rs");

    edit(&t.core, "big.rs", "x".repeat(2500)); // +500 of 2000: 25 %, not over 500
    edit(&t.core, "small.rs", "y".repeat(150)); // +50 of 100: exactly 50 %
    assert!(actions(&t, &session, ActionType::BufferSignificantChange).is_empty(), "edges are not crossed");

    edit(&t.core, "big.rs", "x".repeat(2501)); // +501 chars since last log
    edit(&t.core, "small.rs", "y".repeat(151)); // +51 %
    let logged = actions(&t, &session, ActionType::BufferSignificantChange);
    assert_eq!(
        logged.iter().map(|a| a.data.clone().unwrap_or_default()).collect::<Vec<_>>(),
        [
            json!({"path": "big.rs", "previousCharCount": 2000, "newCharCount": 2501, "delta": 501}),
            json!({"path": "small.rs", "previousCharCount": 100, "newCharCount": 151, "delta": 51}),
        ]
    );
    edit(&t.core, "small.rs", "y".repeat(100)); // −51 of 151: 33.8 %, baseline moved
    assert_eq!(actions(&t, &session, ActionType::BufferSignificantChange).len(), 2);
}

#[tokio::test(start_paused = true)]
async fn ending_the_session_stops_its_timer() {
    let t = test_core(&[("a.rs", "hello\n")]);
    open(&t.core, "a.rs");
    t.core.coaching().start_session(None, None).expect("first session");
    edit(&t.core, "a.rs", "hello!\n".into());
    elapse(&t, 10).await;
    t.core.coaching().end_session(SessionStatus::Completed).expect("end");
    let second = t.core.coaching().start_session(None, None).expect("second session").id;
    edit(&t.core, "a.rs", "hello!!\n".into());

    elapse(&t, 25).await; // t = 35 s: the first session's timer would have fired at 30 s
    assert!(actions(&t, &second, ActionType::BufferSummary).is_empty(), "old timer is gone");
    elapse(&t, 5).await; // t = 40 s: the second session's own timer
    assert_eq!(actions(&t, &second, ActionType::BufferSummary).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn edits_since_the_last_summary_are_summarised_in_the_session_they_were_made_in_when_it_ends() {
    let t = test_core(&[("a.rs", "hello\n")]);
    open(&t.core, "a.rs");
    let first = t.core.coaching().start_session(None, None).expect("first session").id;
    edit(&t.core, "a.rs", "hello!\n".into());
    elapse(&t, 10).await;
    t.core.coaching().end_session(SessionStatus::Completed).expect("end");
    let summaries = actions(&t, &first, ActionType::BufferSummary);
    assert_eq!(summaries.len(), 1, "the last 10 s of edits are not lost at the end");
    assert_eq!(summaries[0].data, Some(json!({"path": "a.rs", "editCount": 1, "charDelta": 1, "charCount": 7})));
    let last: Vec<ActionType> =
        t.core.db().recent_actions(&first, 2, None).expect("log").iter().map(|a| a.action_type).collect();
    assert_eq!(last, [ActionType::SessionEnded, ActionType::BufferSummary], "summarised before the end is logged");
    let second = t.core.coaching().start_session(None, None).expect("second session").id;
    elapse(&t, 30).await;
    assert!(actions(&t, &second, ActionType::BufferSummary).is_empty(), "nothing left over for the next session");
}

#[tokio::test(start_paused = true)]
async fn actions_without_a_session_are_discarded_not_errors() {
    let t = test_core(&[("a.rs", "x")]);
    assert_eq!(t.core.log_action(ActionType::IdleEnd, json!({})), None);
    open(&t.core, "a.rs");
    assert!(t.core.db().sessions().expect("sessions").is_empty());
}

#[tokio::test(start_paused = true)]
async fn shutdown_stops_the_timer_and_returns() {
    let t = test_core(&[]);
    t.core.coaching().start_session(None, None).expect("session");
    let core: Arc<Core> = t.core.clone();
    tokio::time::timeout(Duration::from_secs(1), core.shutdown())
        .await
        .expect("shutdown completes")
        .expect("checkpoint");
    assert!(t.core.shutdown_token().is_cancelled());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_starts_leave_exactly_one_active_session() {
    let t = test_core(&[]);
    let starts: Vec<_> = (0..8)
        .map(|_| {
            let core = t.core.clone();
            tokio::spawn(async move { core.coaching().start_session(None, None).is_ok() })
        })
        .collect();
    let mut won = 0;
    for s in starts {
        won += usize::from(s.await.expect("task"));
    }
    assert_eq!(won, 1);
    let active =
        t.core.db().sessions().expect("rows").into_iter().filter(|s| s.status == SessionStatus::Active).count();
    assert_eq!(active, 1, "losers' rows are not left active");
}

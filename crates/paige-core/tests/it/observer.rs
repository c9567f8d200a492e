//! The Observer inside `paige-core` (issue 29): built by `Core::open` with what it uses, it
//! owns its state — here, the step checks it hears of on the bus — and its snapshot reads the
//! virtual clock.

use std::time::{Duration, Instant};

use paige_core::event::{Domain, Event};
use paige_core::prompts::observer_triage::StepCheckContext;
use paige_core::protocol::StepCheck;
use paige_core::vocab::CheckStatus;

/// What the step checks tell the core's features (not a UI frame: issue 40's domain events).
fn check(phase: i64, status: CheckStatus, failures: u32) -> Event {
    Event::Domain(Domain::StepChecked(StepCheck {
        phase,
        status,
        summary: "test greets failed: expected \"hi Ada\"".into(),
        consecutive_failures: failures,
        duration_ms: Some(40),
        command: None,
    }))
}

/// The snapshot's step check, once `wanted` holds (the Observer hears the bus on its own task).
async fn step_check_when(
    t: &super::TestCore,
    session: &str,
    wanted: impl Fn(&Option<StepCheckContext>) -> bool,
) -> Option<StepCheckContext> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let seen = t.core.triage_context(session, None, false).step_check;
        if wanted(&seen) || Instant::now() > deadline {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observer_keeps_the_step_checks_it_hears_of_and_its_snapshot_carries_the_phase_in_progresss() {
    let t = super::test_core(&[("src/main.rs", "fn main() {}\n")]);
    let session = t.core.coaching().start_session(Some(3), Some("Greet".into())).expect("session").id;
    assert!(t.core.observer_status().active, "a session starts its Observer");
    t.core
        .db()
        .create_plan_with_phases(
            &session,
            "1. greet",
            vec![super::new_phase(1, "src/main.rs", "greets"), super::new_phase(2, "src/main.rs", "greets")],
        )
        .expect("plan");

    // Phase 2's check is not the phase in progress's.
    t.core.emit(check(2, CheckStatus::Passed, 0));
    t.core.emit(check(1, CheckStatus::Failed, 2));
    let seen = step_check_when(&t, &session, Option::is_some).await.expect("phase 1's check in the snapshot");
    assert_eq!((seen.status.as_str(), seen.consecutive_failures), ("failed", 2));
    assert_eq!(seen.summary, "test greets failed: expected \"hi Ada\"");
    assert_eq!(seen.ago.as_deref(), Some("0s ago"));
    // Its age is read from the virtual clock.
    t.clock.advance(chrono::Duration::seconds(90));
    let seen = t.core.triage_context(&session, None, false).step_check.expect("still there");
    assert_eq!(seen.ago.as_deref(), Some("1m30s ago"));
    // A check still running has no age yet.
    t.core.emit(check(1, CheckStatus::Running, 2));
    let seen = step_check_when(&t, &session, |s| s.as_ref().is_some_and(|s| s.status == "running")).await;
    assert_eq!(seen.and_then(|s| s.ago), None);

    // A new plan numbers its phases afresh: the old plan's checks say nothing of them.
    let plan = paige_core::protocol::PlanReady {
        plan_id: "p2".into(),
        phases: Vec::new(),
        memory_connection: None,
        estimated_difficulty: "low".into(),
    };
    t.core.emit(Event::Domain(Domain::PlanReady { session_id: session.clone(), plan }));
    assert_eq!(step_check_when(&t, &session, Option::is_none).await, None);

    // Once the session ends its Observer stops, and with it what it kept.
    t.core.coaching().end_session(paige_core::db::SessionStatus::Completed).expect("end");
    assert!(!t.core.observer_status().active);
    assert_eq!(t.core.triage_context(&session, None, false).step_check, None);
}

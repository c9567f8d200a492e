//! The Observer's own cost per trigger, the model excluded: a session with 20 actions in the
//! log, the fake Messages API answering the triage at once (a low-confidence nudge, so the
//! evaluation ends by logging `nudge_suppressed`, which marks its end on the event bus). Each
//! run opens a file (the trigger) and waits for that entry. The baseline, in the same run: the
//! same triage request made directly through the client. Paige's overhead is the difference
//! of the medians (target ≤ 2 ms).
//!   cargo bench -p paige-server --bench observer

mod common;
use common::percentile;

use std::sync::Arc;
use std::time::Instant;

use paige_core::{Config, Core, SystemClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::json;

const RUNS: usize = 100;

#[tokio::main]
async fn main() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let quiet = json!({
        "should_nudge": true, "confidence": 0.1, "signal": "scope_drift", "reasoning": "unsure",
        "suggested_context": {"current_file": null, "expected_file": null, "time_in_file": null, "phase_description": null}
    });
    fake.always(Matcher::call_type("observer_triage"), Reply::json(&quiet));
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    std::fs::create_dir_all(project.path().join("src")).expect("src");
    std::fs::write(project.path().join("src/lib.rs"), "pub fn f() {}\n").expect("lib");
    let mut config = Config {
        anthropic_base_url: Some(fake.base_url()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "bench")
    };
    // Every trigger evaluated: no flow-state suppression in a tight loop.
    config.limits.observer.flow_actions = usize::MAX;
    let core = Arc::new(Core::open(config, Arc::new(SystemClock)).expect("core"));
    let session = core.coaching().start_session(None, Some("bench".into())).expect("session").id;
    let conn = core.connect();
    let open = json!({"type": "file:open", "payload": {"path": "src/lib.rs"}}).to_string();
    for _ in 0..20 {
        core.handle_text(conn, &json!({"type": "editor:tab_switch", "payload": {"toPath": "src/lib.rs"}}).to_string());
    }
    let mut events = core.subscribe();
    let mut totals = Vec::new();
    for run in 0..=RUNS {
        core.handle_text(conn, &open);
        let started = Instant::now();
        loop {
            match events.recv().await {
                Ok(paige_core::event::Event::ActionLogged(entry))
                    if entry.action_type == paige_core::db::ActionType::NudgeSuppressed =>
                {
                    break;
                }
                Ok(_) => {}
                Err(err) => panic!("event bus: {err}"),
            }
        }
        if run > 0 {
            totals.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        // Let the evaluation release its in-progress flag before the next trigger.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    // The baseline: the same triage request, straight through the client.
    let context = core.triage_context(&session, None, false);
    let mut model = Vec::new();
    for run in 0..=RUNS {
        let started = Instant::now();
        core.triage(&session, &context).await.expect("triage");
        if run > 0 {
            model.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let (total_p50, model_p50) = (percentile(&mut totals, 0.5), percentile(&mut model, 0.5));
    println!("observer, {RUNS} triggers: file open → snapshot → triage (fake model answering at once)");
    println!(
        "  whole evaluation   p50 {:6.2} ms  p99 {:6.2} ms",
        percentile(&mut totals, 0.5),
        percentile(&mut totals, 0.99)
    );
    println!(
        "  direct triage call p50 {:6.2} ms  p99 {:6.2} ms (the baseline)",
        percentile(&mut model, 0.5),
        percentile(&mut model, 0.99)
    );
    println!("  Paige's overhead   p50 {:6.2} ms (evaluation − direct call; target ≤ 2 ms)", total_p50 - model_p50);
}

//! Explain This's own cost, the model excluded: a `user:explain` into the core, the fake
//! Messages API answering at once, until `explain_completed` is on the event bus. The
//! baseline, in the same run: the same prompt sent straight through the client. Paige's
//! overhead is the difference of the medians (the read of the file, the stage and phase
//! lookups, two action-log rows, the broadcast).
//!   cargo bench -p paige-server --bench explain

mod common;
use common::percentile;

use std::sync::Arc;
use std::time::Instant;

use paige_core::api::CallOptions;
use paige_core::db::ActionType;
use paige_core::event::Event;
use paige_core::prompts::explain_this::{self as prompt, ExplainThisResponse};
use paige_core::{Config, Core, SystemClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::json;

const RUNS: usize = 100;

#[tokio::main]
async fn main() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let answer = json!({"explanation": "It adds.", "key_concepts": ["functions"], "analogy": null,
                        "related_files": null, "phase_connection": null});
    fake.always(Matcher::call_type("explain_this"), Reply::json(&answer));
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    std::fs::create_dir_all(project.path().join("src")).expect("src");
    let source: String = (0..200).map(|i| format!("pub fn f{i}(a: i32) -> i32 {{ a + {i} }}\n")).collect();
    std::fs::write(project.path().join("src/lib.rs"), &source).expect("lib");
    let config = Config {
        anthropic_base_url: Some(fake.base_url()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "bench")
    };
    let core = Arc::new(Core::open(config, Arc::new(SystemClock)).expect("core"));
    core.coaching().start_session(None, Some("bench".into())).expect("session");
    let conn = core.connect();
    let context: String = source.lines().take(100).collect::<Vec<_>>().join("\n");
    let frame = json!({"type": "user:explain", "payload": {
        "path": "src/lib.rs", "language": "rust",
        "selection": {"startLine": 50, "startCol": 1, "endLine": 50, "endCol": 40},
        "selectedText": "pub fn f49(a: i32) -> i32 { a + 49 }", "surroundingContext": context
    }})
    .to_string();
    let mut events = core.subscribe();
    let mut totals = Vec::new();
    for run in 0..=RUNS {
        let started = Instant::now();
        core.handle_text(conn, &frame);
        loop {
            match events.recv().await {
                Ok(Event::ActionLogged(entry)) if entry.action_type == ActionType::ExplainCompleted => break,
                Ok(_) => {}
                Err(err) => panic!("event bus: {err}"),
            }
        }
        if run > 0 {
            totals.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    // The baseline: the same request, straight through the client.
    let system = prompt::system_prompt("novice");
    let message =
        prompt::assemble_user_message("pub fn f49(a: i32) -> i32 { a + 49 }", &context, "src/lib.rs", "rust", None);
    let options = CallOptions::new(prompt::CALL_TYPE, prompt::MODEL, &system, &message);
    let mut direct = Vec::new();
    for run in 0..=RUNS {
        let started = Instant::now();
        core.api().call::<ExplainThisResponse>(core.db(), &options).await.expect("explain");
        if run > 0 {
            direct.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let (total_p50, direct_p50) = (percentile(&mut totals, 0.5), percentile(&mut direct, 0.5));
    println!("explain this, {RUNS} requests: user:explain → explain_completed (fake model answering at once)");
    println!("  whole request      p50 {:6.2} ms  p99 {:6.2} ms", total_p50, percentile(&mut totals, 0.99));
    println!(
        "  direct call        p50 {:6.2} ms  p99 {:6.2} ms (the baseline)",
        direct_p50,
        percentile(&mut direct, 0.99)
    );
    println!("  Paige's overhead   p50 {:6.2} ms (request − direct call)", total_p50 - direct_p50);
}

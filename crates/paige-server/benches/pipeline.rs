//! The coaching pipeline's own cost, the model excluded: 10 memories in the embedded store,
//! a coach answer of 5 phases and 30 hints (each phase's skill-area history read for the
//! hint-fading rule), the fake Messages API answering at once. Prints
//! p50/p99 of the whole pipeline and of its two model round trips to the local fake, and
//! their difference — Paige's overhead (target ≤ 20 ms).
//!   PAIGE_MODEL_DIR=… cargo bench -p paige-server --bench pipeline

mod common;
use common::percentile;

use std::sync::Arc;
use std::time::Instant;

use paige_core::memory::{Importance, MemoryInput, Origin};
use paige_core::{Config, Core, SystemClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::json;

const RUNS: usize = 50;

fn coach_reply() -> serde_json::Value {
    let phases: Vec<serde_json::Value> = (1..=5)
        .map(|n| {
            let lines: Vec<serde_json::Value> = (1..=4)
                .map(|l| json!({"path": "src/lib.rs", "start": l, "end": l, "style": "hint", "hover_text": "look"}))
                .collect();
            json!({
                "number": n, "title": format!("Phase {n}"), "description": "Do the next step.",
                "expected_files": ["src/lib.rs"], "hint_level": "line",
                "hints": {"file_hints": [{"path": "src/lib.rs", "style": "suggested"}, {"path": "src/main.rs", "style": "important"}], "line_hints": lines},
                "knowledge_gap_opportunities": [],
                "skill_area": "testing"
            })
        })
        .collect();
    json!({"phases": phases, "memory_connection": null, "estimated_difficulty": "beginner"})
}

#[tokio::main]
async fn main() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_reply()));
    fake.always(
        Matcher::call_type("memory_retrieval_filter"),
        Reply::json(&json!({"relevant_memories": [], "discarded": []})),
    );
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    std::fs::create_dir_all(project.path().join("src")).expect("src");
    std::fs::write(project.path().join("src/lib.rs"), "a\nb\nc\nd\n").expect("lib");
    std::fs::write(project.path().join("src/main.rs"), "fn main() {}\n").expect("main");
    let config = Config {
        anthropic_base_url: Some(fake.base_url()),
        model_dir: std::env::var("PAIGE_MODEL_DIR").ok().map(Into::into),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "bench")
    };
    let memory = paige_memory::open(&config, &[]);
    let core = Arc::new(Core::open(config, Arc::new(SystemClock)).expect("core").with_memory(memory));
    let inputs: Vec<MemoryInput> = (0..10)
        .map(|i| MemoryInput {
            content: format!("lesson {i} about error handling"),
            tags: vec![],
            importance: Importance::Medium,
        })
        .collect();
    let adder = core.clone();
    tokio::task::spawn_blocking(move || {
        adder.memory().add_memories(&inputs, &Origin::Cli, &adder.project_name(), adder.now());
    })
    .await
    .expect("memories");
    let session = core.coaching().start_session(None, None).expect("session").id;
    let input = paige_core::coaching::PipelineInput {
        plan_text: "1. read\n2. write\n3. test".into(),
        issue_summary: "error handling in the parser".into(),
        issue_number: None,
    };
    // Warm up: the model loads, connections open.
    core.coaching().run_coaching_pipeline(input.clone()).await.expect("pipeline");
    let (mut totals, mut model) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let started = Instant::now();
        core.coaching().run_coaching_pipeline(input.clone()).await.expect("pipeline");
        totals.push(started.elapsed().as_secs_f64() * 1000.0);
        // The model's share: the latency the client logged for this run's calls.
        let calls = core.db().api_calls_for_session(&session).expect("api calls");
        model.push(calls.iter().rev().take(2).map(|call| call.latency_ms as f64).sum());
    }
    let mut overhead: Vec<f64> = totals.iter().zip(&model).map(|(t, m)| t - m).collect();
    println!("coaching pipeline, {RUNS} runs: 10 memories, 5 phases, 30 hints (fake model answering at once)");
    println!(
        "  whole pipeline     p50 {:6.2} ms  p99 {:6.2} ms",
        percentile(&mut totals, 0.5),
        percentile(&mut totals, 0.99)
    );
    println!(
        "  model round trips  p50 {:6.2} ms  p99 {:6.2} ms",
        percentile(&mut model, 0.5),
        percentile(&mut model, 0.99)
    );
    println!(
        "  Paige's overhead   p50 {:6.2} ms  p99 {:6.2} ms (target ≤ 20 ms)",
        percentile(&mut overhead, 0.5),
        percentile(&mut overhead, 0.99)
    );
}

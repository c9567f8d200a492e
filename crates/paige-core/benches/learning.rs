//! The learning signals' cost on the paths the learner waits on (issue 30), model calls
//! excluded (the model is unreachable here: its call fails in the background, unmeasured):
//! - completing a phase whose file changed (its comprehension check's diff, then the model
//!   call handed to the background), against the baseline of completing one with nothing
//!   to check (target: ≤ 5 ms p50 added);
//! - classifying a prompt by the rules (UserPromptSubmit);
//! - a Stop with a 3-block reply (the blocks and the watched files fingerprinted).
//!
//! `cargo bench -p paige-core --bench learning`

use std::sync::Arc;
use std::time::{Duration, Instant};

use paige_core::db::{HintLevel, NewPhase, PhaseStatus};
use paige_core::{Config, Core, SystemClock};

const RUNS: usize = 200;

fn phase(number: i64, expected: &[&str]) -> (NewPhase, Vec<paige_core::db::NewPhaseHint>) {
    let phase = NewPhase {
        plan_id: String::new(),
        number,
        title: format!("Phase {number}"),
        description: "Change the parser.".into(),
        hint_level: HintLevel::File,
        expected_files: expected.iter().map(|s| s.to_string()).collect(),
        skill_area: Some("parsing".into()),
        hint_reason: None,
        test_filter: None,
    };
    (phase, Vec::new())
}

fn stats(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (ms(samples[samples.len() / 2]), ms(samples[samples.len() * 9 / 10]))
}

/// Completes phase 1 of a fresh plan `RUNS` times; `change` edits the file first.
fn complete_phases(
    core: &Arc<Core>,
    session: &str,
    project: &std::path::Path,
    expected: &[&str],
    change: bool,
) -> Vec<Duration> {
    let base: String = (0..300).map(|i| format!("    let field_{i} = parse(input, {i})?;\n")).collect();
    (0..RUNS)
        .map(|run| {
            std::fs::write(project.join("src/parser.rs"), &base).expect("file");
            let (_, stored) = core
                .db()
                .create_plan_with_phases(session, "plan", vec![phase(1, expected), phase(2, expected)])
                .expect("plan");
            let phases: Vec<_> = stored.into_iter().map(|(p, _)| p).collect();
            core.learning().keep_baselines(&phases);
            core.coaching().update_phase(1, PhaseStatus::Active).expect("active");
            if change {
                let edited = format!("{base}    if field_{run}.is_empty() {{ return Err(Error::Empty); }}\n");
                std::fs::write(project.join("src/parser.rs"), edited).expect("edit");
            }
            let started = Instant::now();
            core.coaching().update_phase(1, PhaseStatus::Complete).expect("complete");
            started.elapsed()
        })
        .collect()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let _guard = runtime.enter();
    let (project, data) = (tempfile::tempdir().expect("dir"), tempfile::tempdir().expect("dir"));
    std::fs::create_dir_all(project.path().join("src")).expect("src");
    let config = Config {
        anthropic_base_url: Some("http://127.0.0.1:9".into()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "sk-bench")
    };
    let core = Arc::new(Core::open(config, Arc::new(SystemClock)).expect("core"));
    let session = core.coaching().start_session(Some(30), Some("bench".into())).expect("session").id;
    core.mute_observer(true);

    let (base_p50, base_p90) = stats(complete_phases(&core, &session, project.path(), &[], false));
    let (check_p50, check_p90) = stats(complete_phases(&core, &session, project.path(), &["src/parser.rs"], true));
    println!("phase completion, {RUNS} runs each (300-line file, one line added)");
    println!("  baseline, nothing to check:     median {base_p50:.3} ms   p90 {base_p90:.3} ms");
    println!(
        "  with the comprehension check:   median {check_p50:.3} ms   p90 {check_p90:.3} ms   added {:.3} ms p50 (×{:.2}; target ≤ 5 ms added)",
        check_p50 - base_p50,
        check_p50 / base_p50
    );

    let prompts = ["write the parser for me", "why does this return None?", "is my loop right?", "thanks!"];
    let samples: Vec<Duration> = (0..RUNS * 10)
        .map(|i| {
            let started = Instant::now();
            std::hint::black_box(paige_core::learning::reliance::classify(prompts[i % prompts.len()]));
            started.elapsed()
        })
        .collect();
    let (p50, p90) = stats(samples);
    println!("reliance rules, {} prompts: median {:.4} ms   p90 {:.4} ms", RUNS * 10, p50, p90);

    let block: String = (0..25).map(|i| format!("    let value_{i} = compute(input, {i})?;\n")).collect();
    let reply = format!("Look:\n```rust\n{block}```\nand\n```rust\n{block}```\nthen\n```rust\n{block}```\n");
    let samples: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            core.learning().turn_ended(&reply);
            started.elapsed()
        })
        .collect();
    let (p50, p90) = stats(samples);
    println!("Stop with 3 code blocks (25 lines each), 2 watched files: median {p50:.3} ms   p90 {p90:.3} ms");
    runtime.block_on(async { core.shutdown().await.expect("shutdown") });
}

//! The change detector's cost per watched Bash call (PreToolUse + PostToolUse through
//! `Core::handle_hook`, nothing changed) on projects of 1,000 and 10,000 learner files
//! (target ≤ 15 ms p50 at 10k), against the baseline of the same two hooks for a Read, which
//! the detector does not watch. The first call of a session stores every file once; that
//! one-time cost is printed apart.
//! `cargo bench -p paige-core --bench detector`

use std::sync::Arc;
use std::time::{Duration, Instant};

use paige_core::governance::{HookEvent, HookInput};

fn project(files: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("project");
    for i in 0..files {
        let path = dir.path().join(format!("src/m{}/f{i}.rs", i / 100));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, format!("pub fn f{i}() -> u32 {{ {i} }}\n").repeat(20)).expect("write");
    }
    std::fs::write(dir.path().join(".gitignore"), "target/\n").expect("ignore");
    dir
}

fn call(tool: &str, input: serde_json::Value, id: &str) -> HookInput {
    HookInput {
        session_id: "bench".into(),
        tool_name: Some(tool.into()),
        tool_input: Some(input),
        tool_use_id: Some(id.into()),
        ..Default::default()
    }
}

fn median(core: &paige_core::Core, tool: &str, input: &serde_json::Value, runs: usize) -> Duration {
    let mut samples: Vec<Duration> = (0..runs)
        .map(|i| {
            let hook = call(tool, input.clone(), &format!("t{i}"));
            let started = Instant::now();
            std::hint::black_box(core.handle_hook(HookEvent::PreToolUse, &hook));
            std::hint::black_box(core.handle_hook(HookEvent::PostToolUse, &hook));
            started.elapsed()
        })
        .collect();
    samples.sort();
    samples[runs / 2]
}

fn main() {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("change detector per watched call: PreToolUse + PostToolUse, nothing changed");
    for files in [1_000, 10_000] {
        let dir = project(files);
        let data = tempfile::tempdir().expect("data");
        let config = paige_core::Config::new(dir.path().to_owned(), data.path().to_owned(), "bench");
        let core = Arc::new(paige_core::Core::open(config, Arc::new(paige_core::SystemClock)).expect("core"));
        // As in `paige serve` and the app: the watcher's journal spares the opening walk.
        core.start_watcher().expect("watcher");
        let bash = serde_json::json!({"command": "cargo test"});
        let read = serde_json::json!({"file_path": dir.path().join("src/m0/f0.rs")});
        let first = {
            let started = Instant::now();
            let hook = call("Bash", bash.clone(), "first");
            core.handle_hook(HookEvent::PreToolUse, &hook);
            core.handle_hook(HookEvent::PostToolUse, &hook);
            started.elapsed()
        };
        let walk = {
            let mut samples: Vec<Duration> = (0..21)
                .map(|_| {
                    let started = Instant::now();
                    std::hint::black_box(paige_core::detector::scan_for_bench(core.project_root().path()));
                    started.elapsed()
                })
                .collect();
            samples.sort();
            samples[10]
        };
        println!("  {files:>6} files: one manifest walk p50 {:.2} ms", ms(walk));
        let baseline = median(&core, "Read", &read, 41);
        let watched = median(&core, "Bash", &bash, 41);
        println!(
            "  {files:>6} files: Bash p50 {:.2} ms   Read baseline p50 {:.3} ms   detector ≈ {:.2} ms ({:.0}× the baseline)   first call (stores every file once) {:.0} ms   (target ≤ 15 ms at 10k)",
            ms(watched),
            ms(baseline),
            ms(watched.saturating_sub(baseline)),
            ms(watched) / ms(baseline).max(1e-6),
            ms(first)
        );
    }
}

//! Decision time of a governed PreToolUse Write (`Core::handle_hook`) with an empty audit
//! ledger and with a 100,000-line one (target: the same, ±1 ms): decisions read the ledger's
//! SQLite index, not the file. `cargo bench -p paige-core --bench ledger`

use std::sync::Arc;
use std::time::{Duration, Instant};

use paige_core::governance::ledger::{self, NewTrace, TraceKind};
use paige_core::governance::{HookEvent, HookInput, Orchestration, SELECT_TOOL};

const INTENTS: &str = "active_intents:\n  - id: INT-001\n    name: Weather\n    status: IN_PROGRESS\n    owned_scope: [\"src/weather/**\"]\n";

fn hook(core: &paige_core::Core, event: HookEvent, tool: &str, input: serde_json::Value) {
    let input = HookInput {
        session_id: "bench".into(),
        tool_name: Some(tool.into()),
        tool_input: Some(input),
        tool_use_id: Some("t".into()),
        ..Default::default()
    };
    std::hint::black_box(core.handle_hook(event, &input));
}

fn decisions(core: &paige_core::Core, root: &std::path::Path, runs: usize, tag: &str) -> Duration {
    let mut samples: Vec<Duration> = (0..runs)
        .map(|i| {
            let input = serde_json::json!({"file_path": root.join(format!("src/weather/{tag}{i}.rs")), "content": format!("// {i}\n")});
            let started = Instant::now();
            hook(core, HookEvent::PreToolUse, "Write", input);
            started.elapsed()
        })
        .collect();
    samples.sort();
    samples[runs / 2]
}

fn main() {
    // tmpfs where there is one: generating 100,000 fsync'ed lines on a disk takes minutes.
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.expect("dir");
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("src/weather")).expect("mkdir");
    let orch = Orchestration::new(&project);
    orch.init().expect("init");
    std::fs::write(orch.intents_path(), INTENTS).expect("intents");
    let config = paige_core::Config::new(project.clone(), dir.path().join("data"), "bench");
    let core = Arc::new(paige_core::Core::open(config, Arc::new(paige_core::SystemClock)).expect("core"));
    let root = core.project_root().path().to_owned();
    hook(&core, HookEvent::UserPromptSubmit, "", serde_json::Value::Null);
    hook(&core, HookEvent::PreToolUse, SELECT_TOOL, serde_json::json!({"intent_id": "INT-001"}));
    hook(&core, HookEvent::PostToolUse, SELECT_TOOL, serde_json::json!({"intent_id": "INT-001"}));

    let empty = decisions(&core, &root, 201, "a");
    let trace = Orchestration::new(&root).trace_path();
    let started = Instant::now();
    for i in 0..100_000 {
        let entry = NewTrace {
            id: format!("bench-{i}"),
            timestamp: core.now(),
            kind: TraceKind::Mutation,
            intent_id: Some("INT-001".into()),
            session_id: "bench".into(),
            model: None,
            tool: "Write".into(),
            file: Some(format!("src/weather/gen{}.rs", i % 1000)),
            blocks: Vec::new(),
            file_hash: Some(ledger::sha256_hex(format!("{i}").as_bytes())),
            command: None,
            reason: Some("the intent's work".into()),
        };
        ledger::append(&trace, entry).expect("append");
    }
    let generated = started.elapsed();
    let first = {
        let started = Instant::now();
        hook(
            &core,
            HookEvent::PreToolUse,
            "Write",
            serde_json::json!({"file_path": root.join("src/weather/x.rs"), "content": "x"}),
        );
        started.elapsed()
    };
    let full = decisions(&core, &root, 201, "b");
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("governed PreToolUse Write decision, median of 201 (ledger appended in {:.1} s)", generated.as_secs_f64());
    println!("  empty ledger          {:.3} ms", ms(empty));
    println!(
        "  100,000-line ledger   {:.3} ms   (difference {:+.3} ms, ratio {:.2}; target ±1 ms)   first decision after the appends (indexes them once) {:.0} ms",
        ms(full),
        ms(full) - ms(empty),
        ms(full) / ms(empty),
        ms(first)
    );
}

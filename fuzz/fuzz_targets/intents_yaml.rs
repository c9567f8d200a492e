//! Any text as `.orchestration/active_intents.yaml`, loaded as the hook engine loads it, then
//! every loaded intent's scope compiled and checked and its context built
//! (`select_active_intent`, what the MCP tool returns).
//! Invariants (as `tests/it/fuzz.rs`): no panic; a file that does not load fails with a
//! message; a file that loads survives the engine's own save (budgets, blocking) and loads
//! back the same.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use paige_core::governance::{Orchestration, intents};
use paige_fuzz::{Mode, World};

static WORLD: LazyLock<World> = LazyLock::new(|| World::new(Mode::Governed));

fuzz_target!(|data: &[u8]| {
    let w = &*WORLD;
    let _entered = w.runtime.enter();
    let orch = Orchestration::new(&w.project());
    std::fs::write(orch.intents_path(), data).expect("write the intents");
    let file = match orch.load() {
        Ok(file) => file,
        Err(err) => {
            assert!(!err.to_string().is_empty(), "an empty error");
            return;
        }
    };
    for intent in &file.active_intents {
        let _ = intents::scope_set(intent);
        let _ = intents::check_scope_breadth(intent, orch.project_root());
        let _ = w.core.select_active_intent(&intent.id);
    }
    orch.save(&file).expect("a loaded file saves");
    assert_eq!(orch.load().expect("a saved file loads"), file, "the saved file loads back different");
});

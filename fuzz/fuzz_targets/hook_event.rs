//! Claude Code hook payloads through the engine entry point `paige hook` reaches
//! (`POST /hooks/{event}`: decode, `Core::handle_hook`, `Core::after_hook`), in coach mode
//! and in governed mode. One JSON payload per line, all of an input on fresh session ids, so
//! an input can select an intent and then write. The event is the payload's
//! `hook_event_name`, else one picked by the line's length (the server takes it from the URL).
//! Invariants (as `tests/it/fuzz.rs`): no panic (but brush-parser's, which the Bash
//! classifier catches); no learner file and nothing outside the project changes; coach mode
//! never lets a write, another server's MCP tool or a mutating Bash command through; governed
//! mode never lets a call that may mutate through before the session selected an intent, and
//! only appends dated lessons to the Shared Brain (`AGENT.md`, FR-010: a tool failing three
//! times in a row, an intent completed), which is governance's file, not the learner's.

#![no_main]

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use libfuzzer_sys::fuzz_target;
use paige_core::governance::bash::Effect;
use paige_core::governance::{HookDecision, HookEvent, HookInput, Orchestration, SELECT_TOOL, ToolCall};
use paige_fuzz::{INTENTS, Mode, RECORDED_ROOT, World, tolerate_caught_parser_panics};

/// More payloads than this per input add time, not coverage.
const MAX_PAYLOADS: usize = 8;
/// The ledger is emptied past this size, so a long run does not slow down on a huge file.
const MAX_LEDGER_BYTES: u64 = 1 << 20;

static COACH: LazyLock<World> = LazyLock::new(|| World::new(Mode::Coach));
static GOVERNED: LazyLock<World> = LazyLock::new(|| World::new(Mode::Governed));
static INPUTS: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    // A Bash call's command goes through the classifier, which catches its parser's panics.
    tolerate_caught_parser_panics();
    let Ok(text) = std::str::from_utf8(data) else { return };
    for (mode, world) in [(Mode::Coach, &*COACH), (Mode::Governed, &*GOVERNED)] {
        run(mode, world, text);
    }
});

fn run(mode: Mode, w: &World, text: &str) {
    let _entered = w.runtime.enter();
    let orch = Orchestration::new(&w.project());
    if mode == Mode::Governed {
        // Budgets and the breaker change the intents; every input starts from the same ones.
        std::fs::write(orch.intents_path(), INTENTS).expect("intents");
        if std::fs::metadata(orch.trace_path()).is_ok_and(|m| m.len() > MAX_LEDGER_BYTES) {
            std::fs::write(orch.trace_path(), "").expect("empty ledger");
        }
        let _ = std::fs::remove_file(w.project().join(SHARED_BRAIN));
    }
    let input_number = INPUTS.fetch_add(1, Ordering::Relaxed);
    let mut sessions: HashMap<String, (String, bool)> = HashMap::new();
    let (outside, learner) = (w.outside(), learner_files(mode, w));
    let mut lessons = String::new();
    let root = w.project().display().to_string();
    for line in text.split('\n').take(MAX_PAYLOADS) {
        // The server answers a payload that does not decode with 400; nothing reaches the engine.
        let Ok(mut input) = serde_json::from_str::<HookInput>(&line.replace(RECORDED_ROOT, &root)) else {
            continue;
        };
        let event = input
            .hook_event_name
            .as_deref()
            .and_then(HookEvent::parse)
            .unwrap_or_else(|| HookEvent::ALL[line.len() % HookEvent::ALL.len()]);
        let fresh = format!("fuzz-{input_number}-{}", sessions.len());
        let (session, selected) = sessions.entry(input.session_id.clone()).or_insert((fresh, false)).clone();
        input.session_id = session;
        let call = input.call();
        let decision = w.core.handle_hook(event, &input);
        w.core.after_hook(event, &input);
        let pre = event == HookEvent::PreToolUse;
        match mode {
            Mode::Coach => {
                let must_object = pre
                    && match &call {
                        ToolCall::Write { .. } | ToolCall::OtherMcp { .. } | ToolCall::Refused { .. } | ToolCall::Unknown { .. } => true,
                        ToolCall::Bash { parsed, .. } => parsed.effect != Effect::ReadOnly,
                        _ => false,
                    };
                assert!(!must_object || decision != HookDecision::None, "coach mode let {input:?} through");
            }
            Mode::Governed => {
                let unselected_mutation = pre && !selected && call.may_mutate();
                assert!(
                    !unselected_mutation || decision != HookDecision::None,
                    "governed mode let {input:?} through before an intent was selected"
                );
                if pre && input.tool_name.as_deref() == Some(SELECT_TOOL) {
                    sessions.values_mut().for_each(|s| s.1 |= s.0 == input.session_id);
                }
            }
        }
        assert!(w.outside() == outside, "{input:?} changed a file outside the project");
        assert!(learner_files(mode, w) == learner, "{input:?} changed a learner file");
        if mode == Mode::Governed {
            let now = std::fs::read_to_string(w.project().join(SHARED_BRAIN)).unwrap_or_default();
            let added = now.strip_prefix(lessons.as_str()).unwrap_or_else(|| panic!("{input:?} rewrote AGENT.md"));
            let added = added.trim_start_matches(BRAIN_HEADER);
            assert!(
                added.lines().all(|l| l.starts_with("- ") && l.as_bytes().get(12) == Some(&b':')),
                "{input:?} added to AGENT.md what is not a dated lesson: {added:?}"
            );
            lessons = now;
        }
    }
}

const SHARED_BRAIN: &str = "AGENT.md";
const BRAIN_HEADER: &str = "# Shared Brain\n\nLessons agents learned in this project.\n\n";

/// The learner's files; in governed mode without the Shared Brain, checked apart.
fn learner_files(mode: Mode, w: &World) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = w.learner();
    if mode == Mode::Governed {
        files.remove(&w.project().join(SHARED_BRAIN));
    }
    files
}

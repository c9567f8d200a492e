//! Any text as `.orchestration/agent_trace.jsonl` through the ledger's readers: `verify`
//! (`paige ledger verify`), `read_all`, `summary` (an intent's history) and `blame`
//! (`paige blame`). The input is the ledger, then after a NUL byte the file blamed.
//! Invariants: no panic; a ledger that verifies has exactly as many entries as `read_all`
//! reads, and `read_all` reads no more than the ledger has lines; blame names only an entry
//! of the ledger.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use paige_core::governance::ledger;

/// Blaming more lines than this adds time, not coverage.
const MAX_BLAMED_LINES: usize = 64;

static DIR: LazyLock<tempfile::TempDir> = LazyLock::new(|| tempfile::tempdir().expect("dir"));

fuzz_target!(|data: &[u8]| {
    let (ledger_bytes, content) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], String::from_utf8_lossy(&data[at + 1..]).into_owned()),
        None => (data, String::new()),
    };
    let path = DIR.path().join("agent_trace.jsonl");
    std::fs::write(&path, ledger_bytes).expect("write the ledger");
    let entries = match ledger::read_all(&path) {
        Ok(entries) => entries,
        // Not UTF-8: an error naming the file, which `paige ledger verify` prints.
        Err(err) => {
            assert!(std::str::from_utf8(ledger_bytes).is_err(), "read_all failed on text: {err}");
            return;
        }
    };
    let text = std::str::from_utf8(ledger_bytes).expect("read_all read text");
    assert!(entries.len() <= text.lines().count(), "more entries than lines");
    if let Ok(count) = ledger::verify(text) {
        assert_eq!(count, entries.len(), "a verified ledger read differently");
    }
    for intent in entries.iter().filter_map(|e| e.intent_id.as_deref()) {
        let _ = ledger::summary(&entries, intent, 10);
    }
    let lines = content.split_inclusive('\n').count();
    for line in 0..=lines.min(MAX_BLAMED_LINES) + 1 {
        if let Some(hit) = ledger::blame(&entries, &content, line) {
            assert!(entries.contains(&hit.entry), "blame named an entry the ledger does not hold");
        }
    }
});

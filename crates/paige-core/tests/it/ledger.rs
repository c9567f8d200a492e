//! The audit ledger in governed mode (hook spec story 3): every permitted write ledgered with
//! its content hash, blame across moves and reflows, the hash chain, and the SQLite index
//! decisions read.

use paige_core::governance::HookDecision;
use paige_core::governance::ledger::{self, TraceKind};
use serde_json::json;

use super::governance::{A, Gov, INTENTS, denied};

#[test]
fn a_permitted_write_is_ledgered_with_the_hash_of_its_content() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    let content = "fn forecast() -> u8 {\n    42\n}\n";
    assert_eq!(g.write(A, "src/weather/forecast.rs", content), HookDecision::None);
    let trace = g.trace();
    let entry = trace.iter().find(|e| e.kind == TraceKind::Mutation).expect("mutation line");
    assert_eq!(entry.intent_id.as_deref(), Some("INT-001"));
    assert_eq!(entry.session_id, A);
    assert_eq!(entry.file.as_deref(), Some("src/weather/forecast.rs"));
    assert_eq!(entry.blocks[0].content_hash, ledger::sha256_hex(content.as_bytes()));
    assert_eq!((entry.blocks[0].start_line, entry.blocks[0].end_line), (1, 3));
    assert_eq!(entry.file_hash.as_deref(), Some(ledger::sha256_hex(content.as_bytes()).as_str()));
    assert_eq!(entry.timestamp, paige_core::Clock::now(g.clock.as_ref()));
    let text = std::fs::read_to_string(g.orch().trace_path()).expect("trace");
    assert_eq!(ledger::verify(&text), Ok(trace.len()));
    let map = std::fs::read_to_string(g.orch().map_path()).expect("map");
    assert!(map.contains("`src/weather/forecast.rs`: INT-001 (Build the weather widget"), "{map}");
}

#[test]
fn an_edit_records_the_new_block_and_its_line_range() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    g.write(A, "src/weather/a.rs", "one\ntwo\nthree\n");
    let path = g.root().join("src/weather/a.rs");
    std::fs::write(&path, "one\nTWO\nTHREE\n").expect("edit");
    let input = json!({"file_path": g.abs("src/weather/a.rs"), "old_string": "two\nthree", "new_string": "TWO\nTHREE"});
    g.post(A, "Edit", input);
    let entry = g.trace().into_iter().rev().find(|e| e.tool == "Edit").expect("edit line");
    assert_eq!((entry.blocks[0].start_line, entry.blocks[0].end_line), (2, 3));
    assert_eq!(entry.blocks[0].content_hash, ledger::sha256_hex(b"TWO\nTHREE"));
}

#[test]
fn blame_finds_the_intent_after_the_block_moves_within_and_across_files() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    let block = "fn forecast() -> u8 {\n    42\n}\n";
    g.write(A, "src/weather/forecast.rs", block);
    let trace = g.trace();
    // Moved down within a file.
    let moved = format!("// header\n\nuse std::fmt;\n{block}");
    let hit = ledger::blame(&trace, &moved, 5).expect("found after moving");
    assert_eq!((hit.entry.intent_id.as_deref(), hit.exact), (Some("INT-001"), true));
    // Moved to another file and re-indented.
    let reindented = "mod inner {\nfn forecast() -> u8 {\n        42\n}\n}\n";
    let hit = ledger::blame(&trace, reindented, 3).expect("found by normalized hash");
    assert_eq!((hit.entry.intent_id.as_deref(), hit.exact), (Some("INT-001"), false));
    assert_eq!(ledger::blame(&trace, "fn other() {}\n", 1), None);
}

#[test]
fn blame_takes_hand_edited_block_ranges_of_any_size_and_still_finds_a_valid_block() {
    // Found with the cargo-fuzz ledger_reader target: `end_line - start_line + 1` overflowed.
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("agent_trace.jsonl");
    let content = "fn forecast() -> u8 {\n    42\n}\n";
    let block = ledger::locate_block(content, content).expect("block");
    for (i, (start_line, end_line)) in
        [(i64::MIN, i64::MAX), (0, i64::MAX), (i64::MAX, i64::MIN), (1, 3)].into_iter().enumerate()
    {
        let block = ledger::Block { start_line, end_line, ..block.clone() };
        let new = ledger::NewTrace {
            id: format!("t{i}"),
            file: Some("src/f.rs".into()),
            blocks: vec![block],
            ..new_trace("w")
        };
        ledger::append(&path, new).expect("append");
    }
    let trace = ledger::read_all(&path).expect("read");
    for line in 1..=3 {
        let hit = ledger::blame(&trace, content, line).expect("the valid block");
        assert_eq!((hit.entry.id.as_str(), hit.exact), ("t3", true), "line {line}");
    }
}

#[test]
fn ownership_reads_the_ledgers_index_which_follows_appends_and_rebuilds_after_an_outside_edit() {
    let g = Gov::governed(INTENTS, &[("src/weather/w.rs", "w\n")]);
    g.prompt(A);
    g.select(A, "INT-001");
    assert_eq!(g.write(A, "src/weather/a.rs", "a\n"), HookDecision::None, "indexes the empty ledger");
    // Another tool appends a mutation of w.rs by INT-002 (in progress): the index follows it.
    let entry = ledger::NewTrace {
        intent_id: Some("INT-002".into()),
        session_id: "other".into(),
        tool: "Write".into(),
        file: Some("src/weather/w.rs".into()),
        command: None,
        ..new_trace("outside")
    };
    ledger::append(&g.orch().trace_path(), entry).expect("append");
    assert!(denied(&g.write(A, "src/weather/w.rs", "w2\n")).contains("File owned by Intent [INT-002]"));
    // The ledger is rewritten without that line: the index is rebuilt from the file.
    let text = std::fs::read_to_string(g.orch().trace_path()).expect("trace");
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("\"outside\"")).collect();
    std::fs::write(g.orch().trace_path(), kept.join("\n") + "\n").expect("rewrite");
    assert_eq!(g.write(A, "src/weather/w.rs", "w3\n"), HookDecision::None);
    let map = std::fs::read_to_string(g.orch().map_path()).expect("intent map");
    assert!(map.contains("`src/weather/a.rs`: INT-001"), "{map}");
}

#[test]
fn blame_finds_the_intent_after_a_formatter_reflowed_the_block() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    let block =
        "fn total(items: &[Item]) -> u32 {\n    items.iter().map(|i| i.price).filter(|p| *p > 0).sum::<u32>()\n}\n";
    g.write(A, "src/weather/total.rs", block);
    let trace = g.trace();
    // rustfmt split the chain over lines and re-indented it: neither hash of the block holds.
    let reflowed = "use crate::Item;\n\nfn total(items: &[Item]) -> u32 {\n    items\n        .iter()\n        \
                    .map(|i| i.price)\n        .filter(|p| *p > 0)\n        .sum::<u32>()\n}\n";
    for line in 3..=9 {
        let hit = ledger::blame(&trace, reflowed, line).unwrap_or_else(|| panic!("line {line} not found after reflow"));
        assert_eq!((hit.entry.intent_id.as_deref(), hit.exact), (Some("INT-001"), false));
    }
    assert_eq!(ledger::blame(&trace, reflowed, 1), None, "the added import is nobody's");
}

#[test]
fn tampering_with_any_ledger_line_breaks_the_chain() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    g.write(A, "src/weather/a.rs", "a\n");
    g.write(A, "src/weather/b.rs", "b\n");
    let text = std::fs::read_to_string(g.orch().trace_path()).expect("trace");
    assert_eq!(ledger::verify(&text), Ok(2));
    let edited = text.replacen("src/weather/a.rs", "src/weather/z.rs", 1);
    assert_eq!(ledger::verify(&edited).map_err(|b| b.line), Err(1));
    let dropped: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert_eq!(ledger::verify(&dropped).map_err(|b| b.line), Err(1), "the first line must chain to genesis");
}

#[test]
fn concurrent_appends_keep_one_valid_chain() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("agent_trace.jsonl");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    ledger::append(&path, new_trace(&format!("t{t}-{i}"))).expect("append");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    let text = std::fs::read_to_string(&path).expect("read");
    assert_eq!(ledger::verify(&text), Ok(200));
}

fn new_trace(command: &str) -> ledger::NewTrace {
    ledger::NewTrace {
        id: command.to_owned(),
        timestamp: chrono::Utc::now(),
        kind: TraceKind::Mutation,
        intent_id: Some("INT-001".into()),
        session_id: A.into(),
        model: None,
        tool: "Bash".into(),
        file: None,
        blocks: vec![],
        file_hash: None,
        command: Some(command.into()),
        reason: Some("the intent's work".into()),
    }
}

/// Issue 42, item 2: what a Bash call changed inside the intent's scope is on the ledger as
/// whole as a Write's: the call's own description as the reason, the blocks it wrote (blame
/// follows them once they move), a deleted file's hash of what it held, a file past the size
/// cap hashed as it streams; `ledger verify` accepts that ledger and names a mutation
/// without a reason.
#[test]
fn a_bash_calls_changes_inside_the_scope_are_ledgered_with_reason_blocks_and_hashes() {
    let big = vec![b'x'; 11 << 20];
    let g = Gov::governed(INTENTS, &[("src/weather/w.rs", "one\ntwo\nthree\n"), ("src/weather/old.rs", "gone\n")]);
    g.prompt(A);
    g.select(A, "INT-001");
    // It names every file it writes, all inside INT-001's scope, so it may run (issue 42).
    let command = "sed -i 's/two/fn forecast/' src/weather/w.rs && rm src/weather/old.rs && \
                   head -c 11M /dev/zero > src/weather/big.bin";
    let call = json!({"command": command, "description": "Regenerate the weather module"});
    assert_eq!(g.bash_pre_with("b1", call.clone()), HookDecision::None);
    g.put("src/weather/w.rs", "one\nfn forecast() -> u8 {\n    42\n}\nthree\n");
    std::fs::remove_file(g.root().join("src/weather/old.rs")).expect("rm");
    std::fs::write(g.root().join("src/weather/big.bin"), &big).expect("big");
    let patch = json!({"tool_name": "Bash", "tool_input": call, "tool_use_id": "b1",
                       "tool_response": {"stdout": "", "stderr": "", "interrupted": false}});
    assert_eq!(g.hook("PostToolUse-Write-create", A, patch), HookDecision::None, "all inside the scope");
    let trace = g.trace();
    let entry = |file: &str| trace.iter().find(|e| e.file.as_deref() == Some(file)).expect("ledgered").clone();

    let edit = entry("src/weather/w.rs");
    assert_eq!((edit.kind, edit.tool.as_str()), (TraceKind::Mutation, "Bash"));
    assert_eq!(edit.reason.as_deref(), Some("Regenerate the weather module"));
    let written = "fn forecast() -> u8 {\n    42\n}\n";
    assert_eq!(edit.blocks.len(), 1, "{:?}", edit.blocks);
    assert_eq!((edit.blocks[0].start_line, edit.blocks[0].end_line), (2, 4));
    assert_eq!(edit.blocks[0].content_hash, ledger::sha256_hex(written.as_bytes()));
    // The learner moves it down a file of their own: blame still names the intent.
    let moved = format!("// the learner's header\n\n{written}");
    let hit = ledger::blame(&trace, &moved, 4).expect("found after the move");
    assert_eq!((hit.entry.intent_id.as_deref(), hit.exact), (Some("INT-001"), true));

    let deleted = entry("src/weather/old.rs");
    assert_eq!(deleted.file_hash.as_deref(), Some(ledger::sha256_hex(b"gone\n").as_str()), "the hash of what it held");
    let large = entry("src/weather/big.bin");
    assert_eq!(large.file_hash.as_deref(), Some(ledger::sha256_hex(&big).as_str()), "hashed past the size cap");

    let text = std::fs::read_to_string(g.orch().trace_path()).expect("trace");
    assert_eq!(ledger::verify(&text), Ok(trace.len()));
    // A mutation without a reason is a hole `ledger verify` names.
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("agent_trace.jsonl");
    let bare = ledger::NewTrace { reason: None, ..new_trace("make") };
    ledger::append(&path, bare).expect("append");
    let broken = ledger::verify(&std::fs::read_to_string(&path).expect("read")).expect_err("a hole");
    assert_eq!(broken.line, 1);
    assert!(broken.problem.contains("without a reason"), "{}", broken.problem);
}

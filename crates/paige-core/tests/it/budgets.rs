//! Limits in governed mode (hook spec story 4): the circuit breaker, turn and token budgets,
//! and the Shared Brain lessons written when work fails or completes.

use paige_core::governance::ledger::TraceKind;
use paige_core::governance::{HookDecision, HookEvent, IntentStatus};
use serde_json::json;

use super::governance::{A, Gov, INTENTS, context, denied};

#[test]
fn three_identical_calls_pass_and_the_fourth_ends_the_session_with_the_intent_blocked() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    let ls = json!({"command": "ls src"});
    for _ in 0..3 {
        assert_eq!(g.pre(A, "Bash", ls.clone()), HookDecision::None);
    }
    let HookDecision::Stop { reason } = g.pre(A, "Bash", ls.clone()) else { panic!("the 4th call stops the session") };
    assert!(reason.starts_with("Circuit Breaker: loop detected") && reason.contains("paige intents reset INT-001"));
    assert_eq!(g.status("INT-001"), IntentStatus::Blocked);
    assert_eq!(g.trace().iter().filter(|e| e.kind == TraceKind::Breaker).count(), 1);
    // Blocked until a human resets it.
    g.prompt(A);
    assert!(denied(&g.select(A, "INT-001")).contains("BLOCKED"));
}

/// Issue 42: the breaker counts what a call does. A new description on the same command, or
/// selecting the intent again between the calls, does not make a looping agent's calls new.
#[test]
fn a_new_description_or_re_selecting_the_intent_does_not_side_step_the_breaker() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    for (i, command) in ["ls  src", "ls src", "ls\tsrc"].iter().enumerate() {
        let call = json!({"command": command, "description": format!("attempt {i}")});
        assert_eq!(g.pre(A, "Bash", call), HookDecision::None);
        assert_eq!(g.select(A, "INT-001"), HookDecision::None, "selecting again is allowed");
    }
    let last = json!({"command": "ls src", "description": "a fresh look"});
    let HookDecision::Stop { reason } = g.pre(A, "Bash", last) else {
        panic!("the 4th identical call stops the session")
    };
    assert!(reason.starts_with("Circuit Breaker: loop detected"), "{reason}");
    assert_eq!(g.status("INT-001"), IntentStatus::Blocked);
}

#[test]
fn the_repetition_key_is_what_the_call_does() {
    use paige_core::governance::repetition_key;
    let key = |tool: &str, input: serde_json::Value| repetition_key(tool, Some(&input));
    assert_eq!(
        key("Bash", json!({"command": "ls  -la", "description": "a"})),
        key("Bash", json!({"command": "ls -la"}))
    );
    assert_ne!(key("Bash", json!({"command": "ls -la"})), key("Bash", json!({"command": "ls -l"})));
    let edit = |d: &str| json!({"file_path": "a.rs", "old_string": "x", "new_string": "y", "description": d});
    assert_eq!(key("Edit", edit("one")), key("Edit", edit("two")));
    assert_ne!(key("Edit", edit("one")), key("Write", edit("one")));
}

#[test]
fn changing_the_input_resets_the_breaker_count() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    for command in ["ls a", "ls a", "ls b", "ls b", "ls a", "ls a"] {
        assert_eq!(g.pre(A, "Bash", json!({"command": command})), HookDecision::None, "{command}");
    }
    assert_eq!(g.status("INT-001"), IntentStatus::InProgress);
}

#[test]
fn exceeding_the_turn_budget_denies_and_blocks() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-004");
    assert_eq!(g.pre(A, "Bash", json!({"command": "ls 1"})), HookDecision::None);
    assert_eq!(g.pre(A, "Bash", json!({"command": "ls 2"})), HookDecision::None);
    let reason = denied(&g.pre(A, "Bash", json!({"command": "ls 3"}))).to_owned();
    assert!(reason.starts_with("Budget Exceeded: intent INT-004 used its 2 turns"), "{reason}");
    assert_eq!(g.status("INT-004"), IntentStatus::Blocked);
}

#[test]
fn exceeding_the_token_budget_from_the_transcript_denies_and_blocks() {
    let g = Gov::governed(INTENTS, &[]);
    let transcript = g.root().join("transcript.jsonl");
    let usage = |n: i64| json!({"type": "assistant", "message": {"model": "claude-sonnet-4-6", "usage": {"input_tokens": n, "output_tokens": 10}}});
    std::fs::write(&transcript, format!("{}\n", usage(100))).expect("transcript");
    let patch = |cmd: &str| json!({"tool_name": "Bash", "tool_input": {"command": cmd}, "transcript_path": transcript});
    g.prompt(A);
    g.select(A, "INT-005");
    assert_eq!(g.hook("PreToolUse-Write", A, patch("ls 1")), HookDecision::None);
    std::fs::write(&transcript, format!("{}\n{}\n", usage(100), usage(2000))).expect("transcript");
    let reason = denied(&g.hook("PreToolUse-Write", A, patch("ls 2"))).to_owned();
    assert!(reason.contains("used 2120 of 1000 tokens"), "{reason}");
    assert_eq!(g.status("INT-005"), IntentStatus::Blocked);
}

#[test]
fn the_contributor_model_comes_from_the_transcript() {
    let g = Gov::governed(INTENTS, &[]);
    let transcript = g.root().join("t.jsonl");
    std::fs::write(&transcript, "{\"message\":{\"model\":\"claude-opus-4-5\"}}\nnot json\n").expect("transcript");
    g.prompt(A);
    g.select(A, "INT-001");
    std::fs::create_dir_all(g.root().join("src/weather")).expect("mkdir");
    std::fs::write(g.root().join("src/weather/a.rs"), "x\n").expect("write");
    let input = json!({"file_path": g.abs("src/weather/a.rs"), "content": "x\n"});
    g.hook("PostToolUse-Write-create", A, json!({"tool_input": input, "transcript_path": transcript}));
    assert_eq!(g.trace().pop().expect("line").model.as_deref(), Some("claude-opus-4-5"));
}

#[test]
fn pre_compact_summarises_the_intents_trace() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    g.write(A, "src/weather/a.rs", "a\n");
    let (_, input) = g.payload("Stop", A, json!({"hook_event_name": "PreCompact", "trigger": "auto"}));
    let text = context(&g.core.handle_hook(HookEvent::PreCompact, &input)).to_owned();
    assert!(text.contains("INT-001") && text.contains("src/weather/a.rs lines 1-1"), "{text}");
}

#[test]
fn a_tool_failing_three_times_in_a_row_becomes_a_shared_brain_lesson() {
    let g = Gov::governed(INTENTS, &[("AGENT.md", "# Lessons\n")]);
    g.prompt(A);
    g.select(A, "INT-001");
    let failure = json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": "exit 101"});
    for _ in 0..3 {
        let (_, input) = g.payload("PostToolUse-Write-create", A, failure.clone());
        g.core.handle_hook(HookEvent::PostToolUseFailure, &input);
    }
    let brain = std::fs::read_to_string(g.root().join("AGENT.md")).expect("AGENT.md");
    assert!(brain.starts_with("# Lessons\n"), "appended, not replaced");
    assert!(brain.contains("- 2026-11-22: Bash failed 3 times in a row under INT-001"), "{brain}");
}

#[test]
fn a_write_is_ledgered_even_when_its_post_tool_use_is_the_sessions_first_hook() {
    let g = Gov::governed(INTENTS, &[("src/weather/w.rs", "w\n")]);
    let input = json!({"file_path": g.abs("src/weather/w.rs"), "content": "w\n"});
    assert_eq!(g.post("fresh-session", "Write", input), HookDecision::None);
    let trace = g.trace();
    assert_eq!(trace.len(), 1, "{trace:?}");
    assert_eq!(trace[0].file.as_deref(), Some("src/weather/w.rs"));
}

#[test]
fn an_intent_completed_in_a_turn_is_a_shared_brain_lesson_when_state_3_ends_at_stop() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    assert_eq!(g.write(A, "src/weather/w.rs", "fn w() {}\n"), HookDecision::None);
    // The work is done: the intent is marked COMPLETED within the turn.
    let mut file = g.intents();
    file.get_mut("INT-001").expect("intent").status = IntentStatus::Completed;
    g.orch().save(&file).expect("save");
    assert_eq!(g.hook("Stop", A, json!({})), HookDecision::None);
    let brain = std::fs::read_to_string(g.root().join("AGENT.md")).expect("AGENT.md written at State 3 completion");
    assert!(brain.contains("INT-001 completed. 1 recorded action(s)"), "{brain}");
}

#[test]
fn concurrent_identical_calls_of_one_session_still_trip_the_breaker() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    let (_, input) = g.payload("PreToolUse-Write", A, json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}));
    let decisions: Vec<HookDecision> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let input = input.clone();
                let core = g.core.clone();
                scope.spawn(move || core.handle_hook(HookEvent::PreToolUse, &input))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    let count = |f: fn(&HookDecision) -> bool| decisions.iter().filter(|d| f(d)).count();
    assert_eq!(count(|d| *d == HookDecision::None), 3, "three calls pass, whatever the interleaving");
    assert_eq!(count(|d| matches!(d, HookDecision::Stop { .. })), 1, "the fourth trips");
    assert_eq!(count(|d| matches!(d, HookDecision::Deny { .. })), 2, "the rest meet state 2");
    assert_eq!(g.status("INT-001"), IntentStatus::Blocked);
}

/// Issue 42: the lesson Paige writes to AGENT.md, and its own ledger lines, while a window is
/// open for another of the agent's calls are Paige's writes: settling that window undoes
/// neither (AGENT.md is outside the intent's scope, and was undone before).
#[test]
fn paiges_own_lesson_and_ledger_lines_written_while_a_window_is_open_are_never_undone() {
    let g = Gov::governed(INTENTS, &[("AGENT.md", "# Lessons\n")]);
    g.prompt(A);
    g.select(A, "INT-001");
    let long = json!({"tool_name": "Bash", "tool_input": {"command": "sleep 5"}, "tool_use_id": "toolu_long"});
    assert_eq!(g.hook("PreToolUse-Write", A, long.clone()), HookDecision::None);
    assert!(g.core.watching(), "a window is open for the running call");
    let failure = json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": "exit 101"});
    for i in 0..3 {
        let mut failed = failure.clone();
        failed["tool_use_id"] = json!(format!("toolu_fail_{i}"));
        let (_, input) = g.payload("PostToolUse-Write-create", A, failed);
        g.core.handle_hook(HookEvent::PostToolUseFailure, &input);
    }
    let lesson = std::fs::read_to_string(g.root().join("AGENT.md")).expect("AGENT.md");
    assert!(lesson.contains("Bash failed 3 times in a row under INT-001"), "{lesson}");
    let ledger_before = std::fs::read_to_string(g.orch().trace_path()).unwrap_or_default();
    // The long call ends: its window settles.
    let mut ended = long.clone();
    ended["hook_event_name"] = json!("PostToolUse");
    g.hook("PostToolUse-Write-create", A, ended);
    assert!(!g.core.watching());
    assert_eq!(std::fs::read_to_string(g.root().join("AGENT.md")).expect("AGENT.md"), lesson, "the lesson stays");
    let ledger = std::fs::read_to_string(g.orch().trace_path()).unwrap_or_default();
    assert!(ledger.starts_with(&ledger_before), "the ledger keeps what Paige wrote");
    assert!(!ledger.contains("\"outcome\":\"undone\"") && !ledger.contains("AGENT.md"), "{ledger}");
}

/// Issue 42, item 2: until the change detector has read the whole project (its prime runs in
/// the background at start), a governed call that it watches is denied — fail closed — since
/// what the call changes could be neither undone nor put on the ledger; once read, it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_governed_call_before_the_detector_has_read_the_project_is_denied_then_runs() {
    let files: Vec<(String, String)> =
        (0..2000).map(|i| (format!("src/m{}/f{i}.rs", i % 200), format!("// {i}\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let g = Gov::governed(INTENTS, &refs);
    g.prompt(A);
    g.select(A, "INT-001");
    g.core.start_watcher_in_background();
    let early = denied(&g.pre(A, "Bash", json!({"command": "ls src"}))).to_owned();
    assert!(early.contains("still reading the project") && early.contains("ledger"), "{early}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !g.core.detector_primed() {
        assert!(std::time::Instant::now() < deadline, "the prime never finished");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(g.pre(A, "Bash", json!({"command": "ls src"})), HookDecision::None);
}

/// Issue 42: a token budget counts what was spent while its intent was bound. One Claude Code
/// session works 2,000 tokens under INT-001, then switches to INT-005 (1,000): those are not
/// INT-005's; 1,500 more spent under it are, and block it.
#[test]
fn a_token_budget_counts_only_its_own_intents_tokens_in_a_shared_transcript() {
    use paige_core::governance::SELECT_TOOL;
    let g = Gov::governed(INTENTS, &[]);
    let transcript = g.root().join("transcript.jsonl");
    let usage = |n: i64| json!({"type": "assistant", "message": {"model": "claude-sonnet-4-6", "usage": {"input_tokens": n, "output_tokens": 0}}});
    let write = |ns: &[i64]| {
        let lines: Vec<String> = ns.iter().map(|n| usage(*n).to_string()).collect();
        std::fs::write(&transcript, lines.join("\n") + "\n").expect("transcript");
    };
    let on_record = |mut patch: serde_json::Value| {
        patch["transcript_path"] = json!(transcript);
        patch
    };
    let select = |id: &str| {
        let input = json!({"intent_id": id});
        let patch = on_record(json!({"tool_name": SELECT_TOOL, "tool_input": input, "mcp_server": {"name": "paige"}}));
        assert_eq!(g.hook("PreToolUse-mcp-check", A, patch.clone()), HookDecision::None);
        g.core.select_active_intent(id).expect("selectable");
        g.hook("PostToolUse-mcp-check", A, patch);
    };
    let bash = |cmd: &str| {
        g.hook("PreToolUse-Write", A, on_record(json!({"tool_name": "Bash", "tool_input": {"command": cmd}})))
    };
    write(&[100]);
    g.prompt(A);
    select("INT-001");
    write(&[100, 2000]);
    assert_eq!(bash("ls 1"), HookDecision::None);
    // The switch: what INT-001's work cost stays INT-001's.
    select("INT-005");
    assert_eq!(bash("ls 2"), HookDecision::None, "2,100 tokens in the transcript, none of them INT-005's");
    write(&[100, 2000, 1500]);
    let reason = denied(&bash("ls 3")).to_owned();
    assert!(reason.contains("used 1500 of 1000 tokens"), "{reason}");
    assert_eq!(g.status("INT-005"), IntentStatus::Blocked);
    assert_ne!(g.status("INT-001"), IntentStatus::Blocked);
}

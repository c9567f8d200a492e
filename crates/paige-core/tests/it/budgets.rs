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

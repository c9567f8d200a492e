//! The hook engine in coach mode, over Claude Code's recorded payloads
//! (`tests/fixtures/claude-code-hooks/`): every payload decodes, writes and mutating or unknown
//! commands are denied with a coaching reason, reads and Paige's own tools pass, and the
//! session's state and unsaved diffs reach Claude Code as context.

use paige_core::governance::{HookDecision, HookEvent, HookInput};
use serde_json::{Value, json};

use super::governance::{A, FIXTURES, Gov, context, denied};

#[test]
fn every_recorded_payload_decodes_with_its_event() {
    let mut seen = 0;
    for entry in std::fs::read_dir(FIXTURES).expect("fixtures") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        let input: HookInput = serde_json::from_value(value.clone()).expect("decodes");
        assert!(!input.session_id.is_empty(), "{}", path.display());
        let event = HookEvent::parse(value["hook_event_name"].as_str().expect("event name"));
        assert!(event.is_some(), "{} has a known event", path.display());
        seen += 1;
    }
    assert_eq!(seen, 12);
}

#[test]
fn hook_events_parse_from_slug_and_from_claude_code_name() {
    for event in HookEvent::ALL {
        assert_eq!(HookEvent::parse(event.slug()), Some(event));
        assert_eq!(HookEvent::parse(event.name()), Some(event));
    }
    assert_eq!(HookEvent::parse("pre_tool_use"), None);
}

// ---- coach mode ------------------------------------------------------------------------

#[test]
fn coach_mode_denies_the_recorded_write_with_a_coaching_reason() {
    let g = Gov::coach(&[]);
    let reason = denied(&g.hook("PreToolUse-Write", A, json!({}))).to_owned();
    assert!(reason.contains("coach mode") && reason.contains("learner"), "{reason}");
    for tool in ["Edit", "MultiEdit", "NotebookEdit"] {
        denied(&g.pre(A, tool, json!({"file_path": g.abs("a.rs")})));
    }
}

#[test]
fn coach_mode_denies_mutating_bash_and_allows_reads() {
    let g = Gov::coach(&[("a.rs", "fn main() {}\n")]);
    denied(&g.pre(A, "Bash", json!({"command": "rm a.rs"})));
    assert_eq!(g.pre(A, "Bash", json!({"command": "cat a.rs"})), HookDecision::None);
    assert_eq!(g.pre(A, "Read", json!({"file_path": g.abs("a.rs")})), HookDecision::None);
    assert_eq!(g.hook("PreToolUse-mcp-check", A, json!({"tool_name": "mcp__paige__get_buffer"})), HookDecision::None);
    assert_eq!(g.hook("Stop", A, json!({})), HookDecision::None);
}

#[test]
fn coach_mode_denies_tools_it_does_not_know_and_tools_that_schedule_or_write_elsewhere() {
    let g = Gov::coach(&[("a.rs", "fn main() {}\n")]);
    // A tool Claude Code adds next month is refused until Paige learns it.
    let reason = denied(&g.pre(A, "FrobnicateFiles", json!({"path": "a.rs"}))).to_owned();
    assert!(reason.contains("does not know the tool FrobnicateFiles") && reason.contains("coach mode"), "{reason}");
    for (tool, input, says) in [
        ("CronCreate", json!({"cron": "*/5 * * * *", "prompt": "edit a.rs", "durable": true}), "schedules"),
        ("EnterWorktree", json!({"name": "w"}), "worktree"),
        ("ExitWorktree", json!({"action": "remove", "discard_changes": true}), "discard"),
        ("Skill", json!({"skill": "deploy"}), "skill"),
        ("Agent", json!({"prompt": "fix a.rs", "isolation": "worktree"}), "worktree"),
    ] {
        let reason = denied(&g.pre(A, tool, input)).to_owned();
        assert!(reason.contains(tool) && reason.contains(says), "{tool}: {reason}");
    }
    // `Monitor` runs a shell command: classified as Bash.
    let reason =
        denied(&g.pre(A, "Monitor", json!({"command": "while true; do date >> a.rs; sleep 1; done"}))).to_owned();
    assert!(reason.contains("would change files"), "{reason}");
    denied(&g.pre(A, "Monitor", json!({"command": "make watch"})));
    assert_eq!(g.pre(A, "Monitor", json!({"command": "tail -f log.txt"})), HookDecision::None);
}

#[test]
fn coach_mode_denies_unknown_bash_and_tells_the_model_to_suggest_it() {
    let g = Gov::coach(&[("a.rs", "fn main() {}\n")]);
    for command in ["make", "./build.sh", "cargo run", "sort -o a.rs a.rs", "GIT_PAGER='rm a.rs' git -p log"] {
        let reason = denied(&g.pre(A, "Bash", json!({"command": command}))).to_owned();
        assert!(reason.contains("Suggest the command to the learner"), "{command}: {reason}");
    }
    assert!(!g.core.watching(), "nothing denied opened a window");
}

#[test]
fn coach_mode_lets_reads_subagents_and_paiges_own_tools_through() {
    let g = Gov::coach(&[("a.rs", "fn main() {}\n")]);
    for (tool, input) in [
        ("Grep", json!({"pattern": "main"})),
        ("Glob", json!({"pattern": "**/*.rs"})),
        ("WebFetch", json!({"url": "https://example.com", "prompt": "x"})),
        ("ToolSearch", json!({"query": "select:Monitor"})),
        ("TaskCreate", json!({"subject": "explain"})),
        ("AskUserQuestion", json!({"questions": []})),
        // A subagent's own tool calls come through these same hooks (`agent_id` in the payload).
        ("Agent", json!({"prompt": "explain a.rs", "subagent_type": "Explore"})),
        ("Task", json!({"prompt": "explain a.rs"})),
        ("mcp__paige__get_buffer", json!({"path": "a.rs"})),
        ("mcp__paige__highlight_lines", json!({"path": "a.rs"})),
    ] {
        assert_eq!(g.pre(A, tool, input), HookDecision::None, "{tool}");
    }
    let subagent = json!({"tool_name": "Write", "agent_id": "a1b2", "agent_type": "general-purpose",
                          "tool_input": {"file_path": g.abs("a.rs"), "content": "x"}});
    denied(&g.hook("PreToolUse-Write", A, subagent));
}

#[tokio::test]
async fn coach_mode_session_start_adds_the_persona_and_the_session_state() {
    let g = Gov::coach(&[]);
    let text = context(&g.hook("SessionStart", A, json!({}))).to_owned();
    assert!(text.contains(paige_core::prompts::coach_persona::SYSTEM_PROMPT.trim()), "persona included");
    assert!(text.contains("Session state: no coaching session"), "{text}");
    let session = g.core.coaching().start_session(Some(42), Some("Add a weather widget".into())).expect("session");
    let text = context(&g.hook("SessionStart", A, json!({}))).to_owned();
    assert!(text.contains("#42 Add a weather widget") && text.contains("no phase yet"), "{text}");
    let plan = g.core.db().create_plan(&session.id, "1. fetch").expect("plan");
    let phase = g
        .core
        .db()
        .create_phase(paige_core::db::NewPhase {
            plan_id: plan.id,
            number: 1,
            title: "Fetch the forecast".into(),
            description: "call the API".into(),
            hint_level: paige_core::db::HintLevel::Region,
            expected_files: vec![],
            skill_area: None,
            hint_reason: None,
            test_filter: None,
        })
        .expect("phase");
    g.core.db().set_phase_status(&phase.id, paige_core::db::PhaseStatus::Active).expect("active");
    let text = context(&g.prompt(A)).to_owned();
    assert!(text.contains("phase 1 \"Fetch the forecast\" (active), hint level region"), "{text}");
}

#[test]
fn coach_mode_prompt_context_carries_the_unsaved_diffs() {
    use paige_core::protocol::{BufferUpdate, ClientMessage, ConnectionId, CursorPosition};
    let g = Gov::coach(&[("src/a.rs", "fn a() {}\n")]);
    let text = context(&g.prompt(A)).to_owned();
    assert!(text.contains("no unsaved changes"), "{text}");
    let update = BufferUpdate {
        path: "src/a.rs".into(),
        content: "fn a() { todo!() }\n".into(),
        cursor_position: CursorPosition { line: 1, column: 1 },
        selections: vec![],
    };
    g.core.handle_message(ConnectionId(1), ClientMessage::BufferUpdate(update));
    let text = context(&g.prompt(A)).to_owned();
    assert!(text.contains("src/a.rs") && text.contains("+fn a() { todo!() }"), "{text}");
}

// ---- Story 1: the reasoning intercept ---------------------------------------------------

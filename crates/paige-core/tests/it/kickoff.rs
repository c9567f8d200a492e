//! Issue 28: Claude Code's first step. A session with no plan gives Claude Code a kickoff
//! (the work, the interview's task, and the protocol naming Paige's tools); in the app it is
//! pasted into the terminal running Claude Code once that is quiet.

use std::time::{Duration, Instant};

use paige_core::coaching::StartRequest;
use paige_core::terminal::AgentCommand;

/// Stands in for Claude Code: a terminal that takes nudges and keeps what it is sent in
/// `typed`; `start` runs first (a pause, as Claude Code takes a moment), then it puts its
/// terminal in raw mode and draws its prompt.
fn stand_in(project: &std::path::Path, typed: &std::path::Path, start: &str) -> AgentCommand {
    AgentCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), format!("{start}stty raw -echo; printf '> '; cat > '{}'", typed.display()).into()],
        cwd: project.to_owned(),
        banner: None,
        env: Vec::new(),
        accepts_nudges: true,
        clear_env: false,
    }
}

#[test]
fn the_kickoff_names_the_work_the_interviews_task_and_the_tools_to_plan_with() {
    let text =
        paige_core::prompts::coach_kickoff::render("Issue #12: Greet the user", Some("Say hello by name."), None);
    assert!(text.contains("Issue #12: Greet the user") && text.contains("Say hello by name."), "{text}");
    assert!(text.contains("paige_run_coaching_pipeline") && text.contains("paige_update_phase"), "{text}");
    assert!(text.contains("Never write the learner's code"), "{text}");
    let interview = paige_core::prompts::coach_kickoff::render("Greet", None, Some("Tell me how you'd start."));
    assert!(interview.contains("Tell me how you'd start."), "{interview}");
    let huge = "x".repeat(100_000);
    assert!(
        paige_core::prompts::coach_kickoff::render("t", Some(&huge), None).len() < 10_000,
        "an issue body is capped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_without_a_plan_pastes_the_kickoff_into_claude_codes_terminal_once_it_has_drawn_its_prompt_and_is_quiet()
 {
    let t = super::test_core(&[("src/main.rs", "fn main() {}\n")]);
    assert_eq!(t.core.coaching().coaching_kickoff(), None, "no session, no kickoff");
    let typed = t.project.path().join("typed");
    // Stands in for Claude Code: a terminal that takes nudges and keeps what it is sent. Like
    // Claude Code it takes a moment to start, its terminal still cooked (a paste typed then
    // would reach it with its Enter read as a newline), and draws its prompt once raw.
    let command = stand_in(t.project.path(), &typed, "sleep 2; ");
    let conn = t.core.connect();
    let _output = t.core.open_terminal(conn, &command).expect("terminal");
    let request = StartRequest { title: Some("Greet the user".into()), ..StartRequest::default() };
    t.core.coaching().begin_coaching_session(request).expect("session");
    let kickoff = t.core.coaching().coaching_kickoff().expect("a session without a plan has a kickoff");
    assert!(kickoff.contains("Greet the user"));
    // What is typed is one line the learner can read; the kickoff comes with it as context.
    let line = t.core.coaching().kickoff_line().expect("its line");
    assert!(line.starts_with("[Paige]") && line.contains("Greet the user") && !line.contains('\n'), "{line}");
    let deadline = Instant::now() + Duration::from_secs(15);
    let got = loop {
        let got = std::fs::read_to_string(&typed).unwrap_or_default();
        if got.contains("\u{1b}[201~\r") || Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(got, format!("\u{1b}[200~{line}\u{1b}[201~\r"), "pasted whole, then Enter");
    // Claude Code's UserPromptSubmit of that line brings the kickoff itself as context.
    use paige_core::governance::{HookDecision, HookEvent, HookInput};
    let input = HookInput { session_id: "cc".into(), prompt: Some(line.clone()), ..HookInput::default() };
    let HookDecision::Context { context } = t.core.handle_hook(HookEvent::UserPromptSubmit, &input) else {
        panic!("the prompt gets context")
    };
    assert!(context.contains(&kickoff), "the kickoff comes with its line: {context}");
    // A prompt of the learner's does not.
    let mine = HookInput { prompt: Some("what does main do?".into()), ..input };
    let HookDecision::Context { context } = t.core.handle_hook(HookEvent::UserPromptSubmit, &mine) else {
        panic!("the prompt gets context")
    };
    assert!(!context.contains("paige_run_coaching_pipeline"), "{context}");
    t.core.close_terminal(conn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_claude_code_to_plan_again_while_a_kickoff_waits_types_it_once_not_twice() {
    let t = super::test_core(&[("src/main.rs", "fn main() {}\n")]);
    let typed = t.project.path().join("typed");
    let command = stand_in(t.project.path(), &typed, "");
    let conn = t.core.connect();
    let _output = t.core.open_terminal(conn, &command).expect("terminal");
    let request = StartRequest { title: Some("Greet the user".into()), ..StartRequest::default() };
    t.core.coaching().begin_coaching_session(request).expect("session");
    // The learner asks again before the first kickoff was typed: both deliveries wait.
    t.core.coaching().request_replan().expect("replan");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !std::fs::read_to_string(&typed).unwrap_or_default().contains("\u{1b}[201~\r") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Long enough for a second delivery's next look at the terminal.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let got = std::fs::read_to_string(&typed).unwrap_or_default();
    assert_eq!(got.matches("\u{1b}[200~").count(), 1, "pasted once: {got:?}");
    t.core.close_terminal(conn);
}

/// Issue 40: what Paige types into Claude Code — the kickoff pasted into its terminal, the
/// kickoff `paige claude` starts it with — comes back through UserPromptSubmit like a prompt
/// of the learner's. It is kept as Paige's and counted nowhere: not in the gauge, not in the
/// learning record; the learner's own prompt beside it still counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_paige_typed_into_claude_code_are_never_counted_as_the_learners() {
    use paige_core::governance::{HookEvent, HookInput};
    let t = super::test_core(&[("src/main.rs", "fn main() {}\n")]);
    let typed = t.project.path().join("typed");
    let command = stand_in(t.project.path(), &typed, "");
    let conn = t.core.connect();
    let _output = t.core.open_terminal(conn, &command).expect("terminal");
    let request = StartRequest { title: Some("Greet the user".into()), ..StartRequest::default() };
    let session = t.core.coaching().begin_coaching_session(request).expect("session").id;
    let kickoff = t.core.coaching().kickoff_line().expect("a kickoff");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !std::fs::read_to_string(&typed).unwrap_or_default().contains("\u{1b}[201~\r") {
        assert!(Instant::now() < deadline, "the kickoff was never pasted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // `paige claude` started now would be given the kickoff as its first prompt.
    assert_eq!(t.core.coaching().kickoff_for_claude_code().as_deref(), Some(kickoff.as_str()));
    let submit = |prompt: &str| {
        let input = HookInput { session_id: "cc".into(), prompt: Some(prompt.into()), ..HookInput::default() };
        t.core.handle_hook(HookEvent::UserPromptSubmit, &input);
        t.core.after_hook(HookEvent::UserPromptSubmit, &input);
    };
    // As Claude Code reports them: the pasted kickoff with its line ends as the terminal gave
    // them, and the learner's own words.
    submit(&kickoff.replace('\n', "\r\n"));
    submit(&format!("{kickoff}\n"));
    submit("Write the greeting function for me");
    let deadline = Instant::now() + Duration::from_secs(10);
    while t.core.db().reliance_counts(&session).expect("counts").iter().sum::<u32>() < 1 {
        assert!(Instant::now() < deadline, "the learner's prompt was never kept");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let counts = t.core.db().reliance_counts(&session).expect("counts");
    assert_eq!(counts, [1, 0, 0, 0, 0], "one delegation, the learner's; Paige's kickoffs count nowhere");
    let mut reliance = None;
    t.core
        .db()
        .each_record_row::<paige_core::db::DbError>(None, |row| {
            if let paige_core::db::RecordRow::Reliance(counts) = row {
                reliance = Some(counts);
            }
            Ok(())
        })
        .expect("record");
    assert_eq!(reliance.map(|c| c.iter().sum::<u32>()), Some(1), "the learning record counts the learner's alone");
    t.core.close_terminal(conn);
}

/// Issue 40: with no terminal of the app's running Claude Code, what Paige would type is
/// offered to `paige claude` (`claim_delivery`): each delivery is given once, kept as Paige's
/// words; a Claude Code that started with the kickoff as its first prompt is not given it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_of_the_apps_each_delivery_is_claimed_once_by_paige_claude() {
    let t = super::test_core(&[("src/main.rs", "fn main() {}\n")]);
    assert_eq!(t.core.coaching().claim_delivery(), None, "no session, nothing to type");
    let request = StartRequest { title: Some("Greet the user".into()), ..StartRequest::default() };
    t.core.coaching().begin_coaching_session(request).expect("session");
    let kickoff = t.core.coaching().kickoff_line().expect("kickoff");
    let deadline = Instant::now() + Duration::from_secs(10);
    let claimed = loop {
        if let Some(claimed) = t.core.coaching().claim_delivery() {
            break claimed;
        }
        assert!(Instant::now() < deadline, "the kickoff was never offered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(claimed, ("kickoff".to_owned(), kickoff.clone()));
    assert_eq!(t.core.db().prompt_author(&kickoff).expect("author"), paige_core::db::Author::Paige);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(t.core.coaching().claim_delivery(), None, "given once");

    // Asked again (replan): offered again — unless a `paige claude` starting now takes it as
    // its first prompt, which withdraws it.
    t.core.coaching().request_replan().expect("replan");
    // At once, before the replan's kickoff is offered (its delivery waits a moment first).
    assert_eq!(t.core.coaching().kickoff_for_claude_code().as_deref(), Some(kickoff.as_str()));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(t.core.coaching().claim_delivery(), None, "the Claude Code that started with it is not typed it again");
}

/// Issue 40, item 6: what Claude Code is told names only tools the Claude Code Paige runs
/// offers. Pinned: 2.1.330, whose tool list is in the recorded transcript's request shape
/// (it has no Grep, Glob or LS: a literal model told to use them could not explore). Every
/// Claude Code tool name Paige knows of, where one appears as a word in the kickoff, the
/// phase-done note or the persona, must be in that list.
#[test]
fn the_kickoff_the_phase_done_note_and_the_persona_name_only_tools_claude_code_2_1_330_offers() {
    use paige_core::governance::tools::{READ_TOOLS, REFUSED_TOOLS, SHELL_TOOLS, WRITE_TOOLS};
    let fixture =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/claude-code-hooks/transcript-bash-session.jsonl");
    let shape = std::fs::read_to_string(fixture)
        .expect("fixture")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "api-request-shape")
        .expect("the request shape Claude Code recorded");
    assert_eq!(shape["version"], "2.1.330");
    let offered: Vec<&str> =
        shape["shape"]["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(offered.contains(&"Read") && !offered.contains(&"Grep"), "{offered:?}");
    let known =
        READ_TOOLS.iter().chain(&WRITE_TOOLS).chain(&SHELL_TOOLS).copied().chain(REFUSED_TOOLS.iter().map(|(n, _)| *n));
    let next =
        paige_core::prompts::coach_kickoff::NextPhase { number: 2, title: "Test it", description: "Add a test." };
    let texts = [
        paige_core::prompts::coach_kickoff::render("Issue #12: Greet the user", Some("Say hello."), Some("How?")),
        paige_core::prompts::coach_kickoff::render_phase_done(1, Some(next)),
        paige_core::prompts::coach_persona::SYSTEM_PROMPT.to_owned(),
    ];
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| !w.is_empty()).map(str::to_owned).collect()
    };
    for name in known {
        for text in &texts {
            if words(text).iter().any(|w| w == name) {
                assert!(offered.contains(&name), "{name} is named but Claude Code 2.1.330 has no such tool:\n{text}");
            }
        }
    }
}

/// Issue 40, item 2: Claude Code coming and going is a domain event the core's features can
/// follow (its SessionStart and SessionEnd hooks), and its leaving ends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_attaching_and_leaving_are_domain_events_and_leaving_ends_no_session() {
    use paige_core::event::{Domain, Event};
    use paige_core::governance::{HookEvent, HookInput};
    let t = super::test_core(&[("src/main.rs", "fn main() {}\n")]);
    let session = t.core.coaching().start_session(None, Some("Greet".into())).expect("session").id;
    let mut events = t.core.subscribe();
    let input = HookInput { session_id: "cc".into(), ..HookInput::default() };
    t.core.after_hook(HookEvent::SessionStart, &input);
    t.core.after_hook(HookEvent::SessionEnd, &input);
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::Domain(what @ (Domain::ClaudeCodeAttached | Domain::ClaudeCodeDetached)) = event {
            seen.push(what);
        }
    }
    assert_eq!(seen, [Domain::ClaudeCodeAttached, Domain::ClaudeCodeDetached]);
    assert_eq!(t.core.active_session().map(|s| s.id), Some(session), "Claude Code leaving ends nothing");
}

/// Issue 41, item 7: while Claude Code plans, the panel shows each of its tool calls once —
/// Paige's own MCP tools are shown by the MCP handler, not again from the PreToolUse hook —
/// and not Claude Code loading its tools (`ToolSearch select:mcp__paige__…`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_planning_activity_shows_each_call_once_and_not_claude_codes_tool_loading() {
    use paige_core::event::Event;
    use paige_core::governance::{HookEvent, HookInput};
    use paige_core::protocol::ServerMessage;
    let t = super::test_core(&[("src/main.rs", "fn main() {}\n")]);
    t.core.coaching().start_session(None, Some("Greet".into())).expect("session");
    let mut events = t.core.subscribe();
    for (tool, input) in [
        ("ToolSearch", serde_json::json!({"query": "select:mcp__paige__paige_run_coaching_pipeline"})),
        ("mcp__paige__paige_run_coaching_pipeline", serde_json::json!({"planText": "1. x"})),
        ("Read", serde_json::json!({"file_path": "src/main.rs"})),
    ] {
        let input = HookInput { tool_name: Some(tool.into()), tool_input: Some(input), ..HookInput::default() };
        t.core.after_hook(HookEvent::PreToolUse, &input);
    }
    let mut shown = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::Ui(ServerMessage::CoachingAgentActivity(activity)) = event {
            shown.push(format!("{} {}", activity.tool, activity.detail));
        }
    }
    assert_eq!(shown, ["Read src/main.rs"]);
}

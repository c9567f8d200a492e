//! Governed mode in the app's terminal, by construction (issue 42): a Claude Code started
//! before any intent (the whole project read-only) that selects one is started again, in the
//! same terminal, by the launcher's `rebuild` for that intent's view, and told to go on; the
//! old one is gone first. Driven by the hook payloads Claude Code sends (with the view its
//! launcher gave it), through the real governance engine; the children are shells standing in
//! for Claude Code (the real one: `tests/e2e/governed.rs`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use paige_core::governance::{HookDecision, SELECT_TOOL};
use paige_core::launch::Rebuild;
use paige_core::terminal::AgentCommand;
use serde_json::json;

use super::governance::{Gov, INTENTS};

/// A stand-in for Claude Code in the view of `intent` ("" before any), launch `launch`: says
/// which, then echoes what is typed into it (the PTY's echo shows the note).
fn agent(launch: &str, intent: &str, args: &[&str]) -> AgentCommand {
    AgentCommand {
        program: "sh".into(),
        args: ["-c", "echo \"started launch=$PAIGE_LAUNCH view=[$PAIGE_VIEW_INTENT] args=$*\"; exec cat", "sh"]
            .iter()
            .chain(args)
            .map(Into::into)
            .collect(),
        cwd: std::env::temp_dir(),
        banner: None,
        env: vec![
            (paige_core::hook_event::LAUNCH_VAR.into(), launch.into()),
            (paige_core::hook_event::VIEW_INTENT_VAR.into(), intent.into()),
        ],
        accepts_nudges: true,
        clear_env: false,
    }
}

fn governed() -> Gov {
    Gov::governed_with(INTENTS, &[("src/auth/form.rs", "// form\n")], |config| {
        config.limits.observer.quiet_output = Duration::from_millis(300);
        config.limits.delivery_poll = Duration::from_millis(100);
    })
}

/// The select handshake from the Claude Code of launch `launch` in `view`'s view, as its hooks
/// send it; the PostToolUse decision.
fn select_from(g: &Gov, launch: &str, view: &str, id: &str) -> HookDecision {
    let patch = json!({"tool_name": SELECT_TOOL, "tool_input": {"intent_id": id}, "mcp_server": {"name": "paige"},
        "paige_view": {"launch": launch, "intent": view}});
    assert_eq!(g.hook("PreToolUse-mcp-check", "session-a", patch.clone()), HookDecision::None);
    g.core.select_active_intent(id).expect("the MCP tool agrees");
    g.hook("PostToolUse-mcp-check", "session-a", patch)
}

/// Everything the terminal printed, gathered as it comes.
fn gather(mut output: paige_core::terminal::TerminalOutput) -> Arc<Mutex<String>> {
    let seen: Arc<Mutex<String>> = Arc::default();
    let into = seen.clone();
    tokio::spawn(async move {
        while let Some(chunk) = output.recv().await {
            into.lock().expect("seen").push_str(&chunk);
        }
    });
    seen
}

async fn until(seen: &Arc<Mutex<String>>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = seen.lock().expect("seen").clone();
        if text.contains(needle) {
            return text;
        }
        assert!(Instant::now() < deadline, "never saw {needle:?} in {text:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()).is_some_and(|state| state != "Z")
    })
}

/// How many live processes have `var` (`NAME=value`) in their environment.
fn ours(var: &str) -> usize {
    std::fs::read_dir("/proc")
        .expect("proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == var.as_bytes()))
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_that_selects_an_intent_is_started_again_in_its_view_in_the_same_terminal() {
    let g = governed();
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = asked.clone();
    let rebuild: Rebuild = Arc::new(move |intent: &str| {
        let mut asked = record.lock().expect("asked");
        asked.push(intent.to_owned());
        Ok(agent(&format!("L{}", asked.len() + 1), intent, &["--continue"]))
    });
    let conn = g.core.connect();
    let output = g.core.open_governed_terminal(conn, &agent("L1", "", &[]), rebuild).expect("terminal");
    let seen = gather(output);
    until(&seen, "started launch=L1 view=[]").await;
    assert!(g.core.has_terminal(conn));

    let told = match select_from(&g, "L1", "", "INT-002") {
        HookDecision::Context { context } => context,
        other => panic!("the select's PostToolUse says nothing of the switch: {other:?}"),
    };
    assert!(told.contains("started before any intent was selected"), "{told}");
    assert!(told.contains("End your turn now: Paige starts Claude Code again in INT-002's view"), "{told}");

    let text = until(&seen, "now in INT-002's view").await;
    let banner = text.find("Paige: Claude Code selected INT-002: starting it again in INT-002's view").expect("said");
    let started = text.find("started launch=L2 view=[INT-002] args=--continue").expect("the new one started");
    assert!(banner < started, "the line comes before the new one: {text:?}");
    assert!(text[started..].contains("Select INT-002 and go on with the task."), "{text:?}");
    assert_eq!(*asked.lock().expect("asked"), vec!["INT-002".to_owned()]);
    // The old one is gone: exactly one child runs in the terminal.
    assert_eq!(ours("PAIGE_LAUNCH=L1"), 0, "the Claude Code of the first launch still runs");
    assert_eq!(ours("PAIGE_LAUNCH=L2"), 1);

    // Selected again from its new view (as the note asks): nothing more to start.
    assert_eq!(select_from(&g, "L2", "INT-002", "INT-002"), HookDecision::None);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(asked.lock().expect("asked").len(), 1, "started again for the intent its view has");

    // It exits by itself (^D to its `cat`); Enter starts it again, in the same view, and the
    // one started again is still followed: selecting INT-001 there switches it once more.
    let typed = |input: &str| {
        let frame = json!({"type": "terminal:input", "timestamp": 0, "payload": {"input": input}});
        assert_eq!(g.core.handle_text(conn, &frame.to_string()), None, "terminal:input {input:?}");
    };
    typed("\u{4}");
    until(&seen, "Press Enter to start it again").await;
    typed("\r");
    let deadline = Instant::now() + Duration::from_secs(15);
    while seen.lock().expect("seen").matches("started launch=L2").count() < 2 {
        assert!(Instant::now() < deadline, "not started again: {:?}", seen.lock().expect("seen"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(matches!(select_from(&g, "L2", "INT-002", "INT-001"), HookDecision::Context { .. }));
    until(&seen, "started launch=L3 view=[INT-001] args=--continue").await;
    assert_eq!(*asked.lock().expect("asked"), vec!["INT-002".to_owned(), "INT-001".to_owned()]);
    g.core.close_terminal(conn);
    let deadline = Instant::now() + Duration::from_secs(5);
    while ours("PAIGE_LAUNCH=L3") > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(ours("PAIGE_LAUNCH=L3"), 0, "closing the window ends the relaunched one");
}

/// A view that cannot be made (the launcher's `rebuild` fails) leaves the Claude Code it has
/// running, where the intent's files stay read-only, and says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_that_cannot_be_made_leaves_the_running_claude_code_as_it_was() {
    let g = governed();
    let mut events = g.core.subscribe();
    let rebuild: Rebuild =
        Arc::new(|intent: &str| Err(format!("cannot make intent {intent}'s view: a test's refusal")));
    let conn = g.core.connect();
    let seen = gather(g.core.open_governed_terminal(conn, &agent("F1", "", &[]), rebuild).expect("terminal"));
    until(&seen, "started launch=F1").await;
    assert!(matches!(select_from(&g, "F1", "", "INT-002"), HookDecision::Context { .. }));
    let deadline = Instant::now() + Duration::from_secs(10);
    let said = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = tokio::time::timeout(left, events.recv()).await.expect("a notice in time").expect("event");
        let frame = event.into_ui_message().map(|m| serde_json::to_string(&m).expect("json")).unwrap_or_default();
        if frame.contains("cannot start Claude Code in INT-002") {
            break frame;
        }
    };
    assert!(said.contains("a test's refusal") && said.contains("read-only"), "{said}");
    assert!(!seen.lock().expect("seen").contains("starting it again"));
    assert_eq!(ours("PAIGE_LAUNCH=F1"), 1, "the Claude Code it had still runs");
    g.core.close_terminal(conn);
}

/// The turn that selected another intent ended (its Stop hook, with the launch's view): the
/// switch is made then, without waiting for the quiet a nudge needs. Here that quiet is a
/// minute, so only the Stop hook can start it; without one nothing is started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_the_selecting_turn_starts_the_switch_without_waiting_for_quiet() {
    let g = Gov::governed_with(INTENTS, &[], |config| {
        config.limits.observer.quiet_output = Duration::from_secs(60);
        config.limits.delivery_poll = Duration::from_millis(100);
    });
    let rebuild: Rebuild = Arc::new(|intent: &str| Ok(agent("S2", intent, &["--continue"])));
    let conn = g.core.connect();
    let seen = gather(g.core.open_governed_terminal(conn, &agent("S1", "", &[]), rebuild).expect("terminal"));
    until(&seen, "started launch=S1").await;
    assert!(matches!(select_from(&g, "S1", "", "INT-002"), HookDecision::Context { .. }));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!seen.lock().expect("seen").contains("starting it again"), "started before its turn ended");
    let stop = json!({"paige_view": {"launch": "S1", "intent": ""}});
    assert_eq!(g.hook("Stop", "session-a", stop), HookDecision::None);
    let started = Instant::now();
    until(&seen, "started launch=S2 view=[INT-002] args=--continue").await;
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    g.core.close_terminal(conn);
}

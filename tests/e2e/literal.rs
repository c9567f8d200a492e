//! Issue 28 as a learner meets it headless: a UI client (a WebSocket, as the browser UI)
//! starts a session; `paige claude` runs interactively in a terminal (a PTY made by
//! `script`) — before the session or after it — and nobody types anything into it. Claude
//! Code's prompt is Paige's kickoff, and a *literal* model — it plans only when its context tells it to — plans: the UI
//! receives `coaching:plan_ready`. Runs when PAIGE_TEST_CLAUDE names a `claude`.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};

use crate::launch::{learner_project, script_literal_model};
use crate::{PAIGE, World};

/// The learner's own Claude Code as after its first run elsewhere: onboarding done and the
/// API key they gave it approved (its last 20 characters) — but this project never opened in
/// it (issue 41): no folder trusted. Paige answers the folder-trust dialog in its own config
/// dir; nobody types, so a dialog left on screen would stop the plan.
fn claude_used_elsewhere(world: &World, key: &str) {
    let state = json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [&key[key.len() - 20..]], "rejected": []},
    });
    let home = world.root.path().join("home");
    std::fs::write(home.join(".claude.json"), state.to_string()).expect(".claude.json");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_terminal_paige_claude_plans_the_session_a_ui_started_with_nothing_typed() {
    literal_plans(Order::SessionFirst).await;
}

/// Issue 40's order: `paige claude` started first, idle at Claude Code's prompt; then the UI
/// starts the session. Paige pastes the kickoff into the real Claude Code once it is quiet,
/// and the literal model plans from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_started_first_still_plans_the_session_a_ui_starts_later_with_nothing_typed() {
    literal_plans(Order::ClaudeFirst).await;
}

/// Issue 40's restarts: `paige claude` started first, then `paige serve` restarted under it
/// (SIGTERM, started again on its port), then the UI starts the session. The Claude Code
/// that kept running — its MCP config and hooks holding the tokens of the first run — still
/// gets the kickoff and plans through Paige's MCP: the tokens survived the restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_running_across_a_restart_of_paige_serve_still_plans_the_session() {
    literal_plans(Order::ClaudeFirstThenServeRestarted).await;
}

/// Issue 40's other restart: the session first, `paige claude` plans it; then the learner
/// closes that terminal (Claude Code killed mid-session), marks phase 1 done in the panel,
/// and starts `paige claude` again. The session is still live, and the new Claude Code —
/// idle, told nothing by the learner — is given the phase-done note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_restarted_mid_session_is_given_the_phase_done_note_the_learner_marked_meanwhile() {
    literal_plans(Order::ClaudeRestartedMidSession).await;
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Order {
    SessionFirst,
    ClaudeFirst,
    ClaudeFirstThenServeRestarted,
    ClaudeRestartedMidSession,
}

/// The UI starts a session (typed work, the first session's interview skipped) and
/// `paige claude` runs in a terminal, before or after it (`order`); nobody types.
/// Whichever way Claude Code got the kickoff, the plan comes, and the kickoff — the only
/// prompt Claude Code had — is not counted as the learner's.
async fn literal_plans(order: Order) {
    let claude_first = matches!(order, Order::ClaudeFirst | Order::ClaudeFirstThenServeRestarted);
    let Some(claude) = crate::claude::claude() else { return };
    assert!(Command::new("script").arg("--version").output().is_ok(), "`script` (util-linux) runs paige claude");
    let (fake, mut world) = crate::coaching::coaching_world().await;
    let system_path = std::env::var("PATH").unwrap_or_default();
    world.set("PATH", &system_path);
    learner_project(&world);
    let key = "sk-ant-e2e-interactive-0123456789abcdefghij";
    claude_used_elsewhere(&world, key);
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    script_literal_model(&fake);

    // `paige claude` in a terminal, with no argument and nothing typed.
    let claude_dir = std::path::Path::new(&claude).parent().expect("dir").display().to_string();
    let start_claude = |world: &World| {
        Command::new("script")
            .args(["-qfec", &format!("{PAIGE} claude"), "/dev/null"])
            .current_dir(world.project())
            .env_clear()
            .envs(world.env.iter().cloned())
            .env("PATH", format!("{claude_dir}:{system_path}"))
            .env("ANTHROPIC_API_KEY", key)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("script runs paige claude")
    };
    let mut terminal = None;
    if claude_first {
        terminal = Some(start_claude(&world));
        // Idle at its prompt, told nothing: a literal model asks nothing with tools.
        tokio::time::sleep(Duration::from_secs(6)).await;
        assert!(fake.requests().iter().all(|r| !r.body.to_string().contains("paige_run_coaching_pipeline once")));
    }
    if order == Order::ClaudeFirstThenServeRestarted {
        let port = paige.run_info(&world.data_dir())["port"].as_u64().expect("port").to_string();
        paige.signal("TERM");
        assert!(paige.wait_exit(Duration::from_secs(30)).success(), "paige serve stops cleanly");
        world.set("PORT", &port);
        paige = world.spawn(&["serve"]);
        paige.wait_for("ready in", Duration::from_secs(20));
    }

    // The UI starts the session (typed work) and skips the interview of a first session.
    let info = paige.run_info(&world.data_dir());
    let url = format!("ws://127.0.0.1:{}/ws?token={}", info["port"], info["token"].as_str().expect("token"));
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.expect("ws");
    let send = |kind: &str, payload: Value| {
        tokio_tungstenite::tungstenite::Message::text(json!({"type": kind, "payload": payload}).to_string())
    };
    socket.send(send("session:start", json!({"title": "Login races the token"}))).await.expect("start");
    socket.send(send("intake:skip", json!({}))).await.expect("skip");
    // The kickoff waits for the skipped interview's hand-over; on a loaded machine the skip
    // can take seconds.
    let mut kinds: Vec<String> = Vec::new();
    let handed_over = Instant::now();
    while !kinds.iter().any(|k| k == "intake:transition") && handed_over.elapsed() < Duration::from_secs(60) {
        let Ok(Some(Ok(message))) = tokio::time::timeout(Duration::from_secs(5), socket.next()).await else {
            continue;
        };
        let frame = serde_json::from_str::<Value>(message.to_text().unwrap_or_default()).unwrap_or_default();
        kinds.push(frame["type"].as_str().unwrap_or_default().to_owned());
    }
    assert!(kinds.iter().any(|k| k == "intake:transition"), "the skipped interview handed over: {kinds:?}");
    let terminal = terminal.unwrap_or_else(|| start_claude(&world));

    let started = Instant::now();
    let mut ready: Option<Value> = None;
    while ready.is_none() && started.elapsed() < Duration::from_secs(120) {
        let Ok(Some(Ok(message))) = tokio::time::timeout(Duration::from_secs(5), socket.next()).await else {
            continue;
        };
        let Ok(frame) = serde_json::from_str::<Value>(message.to_text().unwrap_or_default()) else { continue };
        let kind = frame["type"].as_str().unwrap_or_default().to_owned();
        if kind == "coaching:plan_ready" {
            ready = Some(frame);
        }
        kinds.push(kind);
    }
    eprintln!("plan on screen {:?} after the hand-over ({order:?})", started.elapsed());
    let close = |mut terminal: std::process::Child| {
        // SAFETY: kill(2) on the process group `script` leads (ours).
        unsafe { libc::kill(-(terminal.id() as i32), libc::SIGKILL) };
        let _ = terminal.wait();
    };
    close(terminal);
    let ready = ready.unwrap_or_else(|| panic!("no coaching:plan_ready; the UI got {kinds:?}"));
    if order == Order::ClaudeRestartedMidSession {
        // The terminal is gone; the learner marks phase 1 done, then starts Claude Code again.
        socket.send(send("coaching:phase_done", json!({"phase": 1}))).await.expect("phase done");
        tokio::time::sleep(Duration::from_secs(2)).await;
        let terminal = start_claude(&world);
        let noted = Instant::now();
        let told = || fake.requests().iter().any(|r| r.body.to_string().contains("marked phase 1 done"));
        while !told() && noted.elapsed() < Duration::from_secs(90) {
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        eprintln!("the restarted Claude Code was told of phase 1 after {:?}", noted.elapsed());
        close(terminal);
        assert!(told(), "the restarted Claude Code was given the phase-done note");
        let marked = |r: &&paige_fake_anthropic::RecordedRequest| r.body.to_string().contains("marked phase 1 done");
        let asked = fake.requests();
        let first = asked.iter().find(marked).expect("told");
        assert_eq!(first.body.to_string().matches("marked phase 1 done").count(), 1, "typed once");
    }
    assert!(ready["payload"]["phases"].as_array().is_some_and(|p| !p.is_empty()), "{ready}");
    assert!(kinds.iter().any(|k| k == "coaching:agent_activity"), "the panel saw Claude Code work: {kinds:?}");
    let asked = fake.requests();
    let kicked = asked.iter().any(|r| r.body.to_string().contains("Call paige_run_coaching_pipeline once"));
    assert!(kicked, "Claude Code's prompt was Paige's kickoff");
    // The kickoff came back through Claude Code's UserPromptSubmit: it is Paige's, not the
    // learner's, who typed nothing.
    let db = paige_core::db::Db::open(&world.data_dir().join("paige.db"), std::sync::Arc::new(paige_core::SystemClock))
        .expect("db");
    let session = db.sessions().expect("sessions").into_iter().next().expect("the session");
    let counts = db.reliance_counts(&session.id).expect("counts");
    assert_eq!(counts, [0; 5], "the learner typed nothing, so no prompt is theirs");
    drop(paige);
}

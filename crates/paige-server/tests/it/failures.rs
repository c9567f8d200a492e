//! Failure injection in process (issue 19): a window's terminal child dying, and a streamed
//! model reply cut off mid-way. The rest of the list is covered where its code is tested, or
//! as whole processes in `tests/e2e/failures.rs`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use paige_core::Core;
use paige_core::protocol::ConnectionId;
use paige_core::terminal::AgentCommand;
use serde_json::{Value, json};

/// The terminal's output so far, gathered on a thread as the desktop shell forwards it.
fn open(core: &Arc<Core>, script: &str) -> (ConnectionId, Arc<Mutex<String>>) {
    let conn = core.connect();
    let command = AgentCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: core.project_root().path().to_owned(),
        banner: None,
        env: Vec::new(),
        accepts_nudges: false,
        clear_env: false,
    };
    let mut output = core.open_terminal(conn, &command).expect("terminal opens");
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = seen.clone();
    std::thread::spawn(move || {
        while let Some(chunk) = output.blocking_recv() {
            sink.lock().expect("lock").push_str(&chunk);
        }
    });
    (conn, seen)
}

/// Waits until the output after `from` matches `found`, which returns what it wants from it.
fn after<T>(seen: &Mutex<String>, from: usize, mut found: impl FnMut(&str) -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = seen.lock().expect("lock")[from..].to_owned();
        if let Some(value) = found(&text) {
            return value;
        }
        assert!(Instant::now() < deadline, "not seen in {text:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The pid the script prints as `up <pid>`, after `from`.
fn up(seen: &Mutex<String>, from: usize) -> i32 {
    after(seen, from, |text| {
        let rest = text.split("up ").nth(1)?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        rest[digits.len()..].starts_with(['\r', '\n']).then(|| digits.parse().ok()).flatten()
    })
}

fn typed(core: &Arc<Core>, conn: ConnectionId, input: &str) -> Option<String> {
    core.handle_text(conn, &json!({"type": "terminal:input", "payload": {"input": input}}).to_string())
}

#[test]
fn a_terminal_child_that_dies_is_reported_in_the_terminal_and_enter_starts_it_again() {
    let fixture = crate::fixture();
    let core = &fixture.core;
    let (conn, seen) = open(core, "echo \"up $$\"; read line; exit 3");
    let first = up(&seen, 0);
    // Killed from outside: the terminal says how it ended, where the learner looks.
    kill9(first);
    let notice = "[sh was ended by signal 9. Press Enter to start it again.]";
    after(&seen, 0, |text| text.contains(notice).then_some(()));
    // Other keys go nowhere; the window keeps its terminal.
    let mark = seen.lock().expect("lock").len();
    assert_eq!(typed(core, conn, "q"), None, "no error for a key");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(seen.lock().expect("lock")[mark..], *"", "nothing started on a key other than Enter");
    assert!(core.has_terminal(conn));
    // Enter starts the same command again, on the same output.
    assert_eq!(typed(core, conn, "\r"), None, "no error on restart");
    let second = up(&seen, mark);
    assert_ne!(second, first, "a new child");
    assert!(!std::path::Path::new(&format!("/proc/{first}")).exists(), "the dead child was reaped");
    // It takes input as before, and ending by itself is reported with its status.
    let mark = seen.lock().expect("lock").len();
    assert_eq!(typed(core, conn, "bye\r"), None);
    after(&seen, mark, |text| text.contains("[sh exited with status 3. Press Enter to start it again.]").then_some(()));
    core.disconnect(conn);
    assert!(!core.has_terminal(conn));
}

fn kill9(pid: i32) {
    let status = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().expect("kill runs");
    assert!(status.success(), "kill -9 {pid}");
}

/// The model API's failures are tested on the client (`paige-core` api.rs, api_stream.rs) and
/// per feature; this is the one a learner watches arrive: a streamed reply cut off mid-way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interviewer_reply_cut_off_mid_stream_shows_no_half_sentence_and_a_prepared_question_says_why() {
    use crate::intake::{control, interview, of, send, through};
    use paige_core::prompts::intake_interviewer::BACKGROUND_QUESTIONS;
    use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("intake_control"), control(50, "a parser for log files", false));
    // The body ends after "Nice. Logs are a good ", without message_stop.
    let cut = Reply::text_deltas(&["Nice. ", "Logs are a good ", "subject. How big ", "were they?"]).cut_after(2);
    fake.always(Matcher::call_type("intake_interviewer"), cut);
    let (_server, mut socket, _) = interview(&fake, Duration::from_secs(240)).await;
    send(&mut socket, "intake:answer", json!({"text": "A parser for log files."})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    let shown: Vec<Value> = of(&frames, "intake:sentence").into_iter().map(|s| s["text"].clone()).collect();
    assert_eq!(shown, [json!("Nice."), json!(BACKGROUND_QUESTIONS[1])], "whole sentences only, then the prepared one");
    let errors = of(&frames, "intake:error");
    let message = errors.first().and_then(|e| e["message"].as_str()).unwrap_or_default();
    assert!(
        message.starts_with("Paige asked a prepared question instead: the interviewer's model call failed")
            && message.contains("the stream ended before message_stop"),
        "{errors:?}"
    );
    assert_eq!(of(&frames, "intake:reply_done"), [json!({"turn": 2, "text": BACKGROUND_QUESTIONS[1]})]);
    // The transcript holds the question the learner answers next, not the cut reply.
    let state = of(&frames, "intake:state").pop().expect("state");
    let transcript = state["transcript"].as_array().expect("transcript");
    assert_eq!(transcript.last(), Some(&json!({"role": "interviewer", "text": BACKGROUND_QUESTIONS[1]})));
}

/// The dashboard's hanging `gh` is `dashboard_flows::a_hanging_gh_is_stopped_at_its_deadline…`;
/// the coaching panel asks `gh` too, and waits no longer than `PAIGE_GH_TIMEOUT_MS` either
/// (it waited its own 8 s before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_gh_is_stopped_at_its_deadline_and_the_session_panel_says_why() {
    let fake = paige_fake_anthropic::FakeAnthropic::start().await.expect("fake");
    let bin = tempfile::tempdir().expect("bin");
    let pid_file = bin.path().join("pid");
    let script = format!("#!/bin/sh\necho $$ > '{}'\nexec sleep 30\n", pid_file.display());
    let gh = crate::dashboard::write_script(&bin.path().join("gh"), &script);
    let server = crate::dashboard::server(&fake, Some(gh), Some(Duration::from_millis(300))).await;
    let mut socket = crate::ws::connect(&server).await;
    let started = Instant::now();
    crate::ws::send(&mut socket, json!({"type": "session:list", "payload": {}})).await;
    let options = crate::ws::next_of(&mut socket, "session:options").await["payload"].clone();
    assert!(started.elapsed() < Duration::from_secs(2), "bounded: {:?}", started.elapsed());
    assert_eq!(options["issues"], json!([]));
    assert_eq!(options["issuesError"], "gh did not answer within 0.3 s");
    let pid = std::fs::read_to_string(&pid_file).expect("pid");
    assert!(!std::path::Path::new(&format!("/proc/{}", pid.trim())).exists(), "the hanging gh was killed and reaped");
}

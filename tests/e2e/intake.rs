//! The intake interview end to end: a real `paige serve` runs an interview over /ws against
//! the fake Messages API to its hand-over; `paige intake replay` then re-runs the stored events
//! and must reach the same decision the live run logged. With the real `claude`, Claude Code's
//! session context says the interview runs, then that it is over and what to code.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use paige_core::db::{ActionType, Db, NewSession};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::claude::{claude, claude_prompt, hook_output};
use crate::{Running, World};

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const TITLE: &str = "Add a weather widget";

fn control(score: u8) -> Reply {
    let pillar = json!({"score": score, "rationale": "\"rewrote the cache\""});
    Reply::json(&json!({
        "adaptability": pillar, "creativity": pillar, "reasoning": pillar,
        "new_project": false, "project_name": null
    }))
}

/// A served Paige on the fake Messages API with a session on [`TITLE`] and a UI that started
/// its interview (with this timebox).
async fn interview(timebox_ms: u64) -> (FakeAnthropic, World, Running, Socket) {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("intake_control"), control(40));
    fake.always(Matcher::call_type("intake_interviewer"), Reply::text_deltas(&["Nice. ", "What was hardest?"]));
    let mut world = World::ready();
    world.set("ANTHROPIC_BASE_URL", &fake.base_url()).set("PAIGE_INTAKE_TIMEBOX_MS", &timebox_ms.to_string());
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let (status, out, err) = world.run(&["session", "start", "--title", TITLE]);
    assert!(status.success(), "{out}{err}");
    let info = paige.run_info(&world.data_dir());
    let url = format!("ws://127.0.0.1:{}/ws?token={}", info["port"], info["token"].as_str().expect("token"));
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.expect("ws");
    send(&mut socket, "intake:start", json!({})).await;
    frames_until(&mut socket, "intake:reply_done", Duration::from_secs(10)).await;
    (fake, world, paige, socket)
}

async fn send(socket: &mut Socket, kind: &str, payload: Value) {
    socket.send(Message::Text(json!({"type": kind, "payload": payload}).to_string().into())).await.expect("send");
}

/// Frames up to and including the first of type `kind`; panics after `timeout`.
async fn frames_until(socket: &mut Socket, kind: &str, timeout: Duration) -> Vec<Value> {
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(Some(Ok(message))) = tokio::time::timeout(left, socket.next()).await else { break };
        let Ok(frame) = message.to_text().map(serde_json::from_str::<Value>) else { continue };
        let Ok(frame) = frame else { continue };
        let done = frame["type"] == kind;
        seen.push(frame);
        if done {
            return seen;
        }
    }
    panic!("no {kind} within {timeout:?}; got {:?}", seen.iter().map(|f| f["type"].clone()).collect::<Vec<_>>())
}

fn open_db(world: &World) -> Db {
    Db::open(&world.data_dir().join("paige.db"), Arc::new(paige_core::SystemClock)).expect("db")
}

/// The action log's rows of `kind` for the only session, oldest first.
fn logged(world: &World, kind: ActionType) -> Vec<Value> {
    let db = open_db(world);
    let session = db.sessions().expect("sessions").into_iter().next().expect("a session");
    let mut rows: Vec<Value> =
        db.recent_actions(&session.id, 100, Some(kind)).expect("log").into_iter().filter_map(|a| a.data).collect();
    rows.reverse();
    rows
}

/// `paige intake replay ARGS`, expected to fail with one line on stderr; returns that line.
fn replay_fails(world: &World, args: &[&str]) -> String {
    let mut all = vec!["intake", "replay"];
    all.extend_from_slice(args);
    let (status, out, err) = world.run(&all);
    assert_eq!(status.code(), Some(1), "{out}{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err.trim_end().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_of_a_live_interview_reaches_the_logged_transition_with_the_same_turns() {
    let (fake, world, mut paige, mut socket) = interview(2500).await;
    send(&mut socket, "intake:answer", json!({"text": "A weather app; I rewrote the cache twice."})).await;
    let frames = frames_until(&mut socket, "intake:transition", Duration::from_secs(10)).await;
    let transition = frames.last().expect("transition");
    assert_eq!(transition["payload"]["reason"], "timebox");
    assert!(transition["payload"]["codingQuestion"].as_str().is_some_and(|q| q.contains(TITLE)), "{transition}");
    assert_eq!(fake.message_requests().iter().filter(|r| r.call_type() == Some("intake_control")).count(), 1);
    // Once the hand-over reached the UI, the log has it (it is written before the broadcast).
    let turns = logged(&world, ActionType::IntakeTurn);
    let live = logged(&world, ActionType::IntakeTransition);
    assert_eq!((turns.len(), live.len()), (1, 1), "one scored turn, one transition");

    // Replayed while Paige still runs (and holds the database).
    let (status, out, err) = world.run(&["intake", "replay", "--json"]);
    assert!(status.success(), "{out}{err}");
    let replay: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(replay["state"]["reason"], live[0]["reason"]);
    assert_eq!(replay["state"]["phase"], "coding");
    let actions = replay["actions"].as_array().expect("actions");
    let logs: Vec<&Value> = actions.iter().map(|a| &a["action"]).filter(|a| a["type"] == "logTurn").collect();
    let replayed_turns: Vec<&&Value> = logs.iter().filter(|l| l["reason"].is_null()).collect();
    assert_eq!(replayed_turns.len(), turns.len(), "the same turns as the live run logged");
    assert_eq!(replayed_turns[0]["lastAnswer"], turns[0]["lastAnswer"]);
    let replayed = logs.iter().find(|l| !l["reason"].is_null()).expect("the transition's record");
    for key in ["reason", "elapsedMs", "turn", "zeroRuns", "projectsUsed", "confidence"] {
        assert_eq!(replayed[key], live[0][key], "{key}");
    }

    let (status, text, err) = world.run(&["intake", "replay"]);
    assert!(status.success(), "{text}{err}");
    let session = replay["sessionId"].as_str().expect("session");
    let (_, by_id, _) = world.run(&["intake", "replay", session]);
    assert_eq!(by_id, text, "the newest interview is the default");
    assert!(text.contains("score turn 1"), "{text}");
    assert!(text.contains("transition: timebox (timebox)"), "{text}");
    assert!(text.contains("phase: coding") && text.contains("reason: timebox"), "{text}");
    // One answer scored 40: W 0.4 against a prior of 1.
    assert!(text.contains("conf reasoning: 0.29 vs tau 0.65"), "{text}");
    assert!(text.contains("projectsUsed: 1") && text.contains("stopCheck: false"), "{text}");
    assert!(replay_fails(&world, &["nope"]).contains("no interview recorded for session nope"));

    // Claude Code, started after the hand-over, is told the interview is over and the task.
    if let Some(claude) = claude() {
        let (world, events) = tokio::task::spawn_blocking(move || {
            let events = claude_prompt(&claude, &world);
            (world, events)
        })
        .await
        .expect("claude");
        let context = hook_output(&events, "SessionStart").unwrap_or_else(|| panic!("no SessionStart: {events:?}"));
        assert!(context.contains("The intake interview is over") && context.contains(TITLE), "{context}");
        drop(world);
    }
    paige.signal("TERM");
    paige.wait_exit(Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_started_during_the_interview_is_told_to_wait_for_it_to_end() {
    let Some(claude) = claude() else { return };
    let (_fake, world, _paige, _socket) = interview(600_000).await;
    let events = tokio::task::spawn_blocking(move || claude_prompt(&claude, &world)).await.expect("claude");
    let context = hook_output(&events, "SessionStart").unwrap_or_else(|| panic!("no SessionStart: {events:?}"));
    assert!(context.contains("intake interview") && context.contains("wait for it to end"), "{context}");
    assert!(!context.contains("is over"), "{context}");
}

#[test]
fn replay_without_a_database_or_an_interview_says_there_is_none() {
    let world = World::ready();
    assert!(replay_fails(&world, &[]).contains("no interviews recorded"));
    std::fs::create_dir_all(world.data_dir()).expect("data dir");
    drop(open_db(&world));
    assert_eq!(replay_fails(&world, &[]), "error: no interviews recorded");
    assert!(replay_fails(&world, &["s-1"]).contains("no interview recorded for session s-1"));
}

#[test]
fn replay_names_the_sequence_number_of_a_stored_event_that_does_not_parse() {
    let world = World::ready();
    std::fs::create_dir_all(world.data_dir()).expect("data dir");
    let db = open_db(&world);
    let new = NewSession { project_dir: world.project(), issue_number: None, issue_title: Some(TITLE.into()) };
    let session = db.create_session(new).expect("session").id;
    let config = json!({"timeboxMs": 1000, "zeroRunLimit": 2, "projectCap": 2,
        "tau": {"adaptability": 0.7, "creativity": 0.7, "reasoning": 0.7},
        "priorMass": 2.0, "typingQuietMs": 20000, "controlWaitMs": 2000});
    db.create_intake(&session, &config, "Code it").expect("intake");
    let question =
        json!({"type": "questionDelivered", "turn": 1, "question": "What did you build?", "kind": "background"});
    db.append_intake_event(&session, 1_000, &question).expect("event 0");
    db.append_intake_event(&session, 1_500, &json!({"type": "tick"})).expect("event 1");
    db.append_intake_event(&session, 2_000, &json!({"type": "tick"})).expect("event 2");
    // A clean recording first: the timebox ends it at the Tick one second in.
    let (status, text, err) = world.run(&["intake", "replay"]);
    assert!(status.success(), "{text}{err}");
    assert!(text.contains("00:01.0 transition: timebox (timebox)"), "{text}");
    assert!(text.contains("elapsed: 00:01.0 of 00:01.0"), "{text}");
    db.append_intake_event(&session, 2_500, &json!({"type": "shout", "turn": 1})).expect("event 3");
    let line = replay_fails(&world, &[]);
    assert!(line.contains(&format!("stored event 3 of session {session} does not parse")), "{line}");
}

#[test]
fn replay_of_a_file_that_is_not_a_database_fails_in_one_line() {
    let world = World::ready();
    std::fs::create_dir_all(world.data_dir()).expect("data dir");
    std::fs::write(world.data_dir().join("paige.db"), "not sqlite at all, just text\n".repeat(200)).expect("junk");
    assert!(replay_fails(&world, &[]).contains("cannot read the database"));
}

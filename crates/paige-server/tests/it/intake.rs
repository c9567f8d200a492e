//! The intake interview (issue 18) through `/ws`: the learner's answers go up, the
//! interviewer's checked sentences, the guard's state and the hand-over come down; the fake
//! Messages API answers the interviewer (streamed) and CONTROL (structured); the core's
//! manual clock drives the timebox.

use std::time::Duration;

use futures_util::SinkExt;
use paige_core::db::ActionType;
use paige_core::prompts::intake_interviewer::{BACKGROUND_QUESTIONS, STRONGER_INSTRUCTION};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::Running;
use crate::coaching::all_frames;
use crate::tools::ui;

pub(crate) type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const QUIET: Duration = Duration::from_millis(700);
const ANOTHER: &str = "Would you like to share another challenging project you worked on?";

pub(crate) async fn send(socket: &mut Socket, kind: &str, payload: Value) {
    socket.send(Message::Text(json!({"type": kind, "payload": payload}).to_string().into())).await.expect("send");
}

pub(crate) fn of(frames: &[Value], kind: &str) -> Vec<Value> {
    frames.iter().filter(|f| f["type"] == kind).map(|f| f["payload"].clone()).collect()
}

pub(crate) fn control(score: u8, answer_quote: &str, new_project: bool) -> Reply {
    let pillar = |s: u8| {
        let rationale = if s == 0 { "no evidence".to_owned() } else { format!("\"{answer_quote}\"") };
        json!({"score": s, "rationale": rationale})
    };
    Reply::json(&json!({
        "adaptability": pillar(score), "creativity": pillar(score), "reasoning": pillar(score),
        "new_project": new_project, "project_name": null
    }))
}

/// A served core with a session on "Add a weather widget" and a UI that started its
/// interview; returns the frames up to the first question.
pub(crate) async fn interview(fake: &FakeAnthropic, timebox: Duration) -> (Running, Socket, Vec<Value>) {
    let server = crate::coaching_server_with(fake, |config| {
        config.gh_program = Some("/nonexistent/gh".into());
        config.limits.intake_timebox = timebox;
    })
    .await;
    server.fixture.core.coaching().start_session(None, Some("Add a weather widget".into())).expect("session");
    let mut socket = ui(&server).await;
    all_frames(&mut socket, Duration::from_millis(200)).await;
    send(&mut socket, "intake:start", json!({})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    (server, socket, frames)
}

/// Every frame until one of type `kind` arrived (at most 10 s), then until quiet for 300 ms:
/// under load a reply may take longer than any fixed quiet window.
pub(crate) async fn through(socket: &mut Socket, kind: &str) -> Vec<Value> {
    use futures_util::StreamExt;
    let mut frames: Vec<Value> = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !frames.iter().any(|f| f["type"] == kind) {
        match tokio::time::timeout_at(deadline, socket.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => frames.push(serde_json::from_str(text.as_str()).expect("json")),
            Ok(Some(Ok(_))) => {}
            _ => break,
        }
    }
    frames.extend(all_frames(socket, Duration::from_millis(300)).await);
    frames
}

fn logged(server: &Running, kind: ActionType) -> Vec<Value> {
    let core = &server.fixture.core;
    let session = core.active_session().expect("session");
    let mut rows: Vec<Value> = core
        .db()
        .recent_actions(&session.id, 100, Some(kind))
        .expect("log")
        .into_iter()
        .filter_map(|a| a.data)
        .collect();
    rows.reverse();
    rows
}

fn calls_of(fake: &FakeAnthropic, call_type: &str) -> Vec<paige_fake_anthropic::RecordedRequest> {
    fake.message_requests().into_iter().filter(|r| r.call_type() == Some(call_type)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interview_opens_with_paiges_own_question_and_the_guard_state_for_the_debug_panel() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let (server, _socket, frames) = interview(&fake, Duration::from_secs(240)).await;
    let sentences = of(&frames, "intake:sentence");
    assert_eq!(sentences, [json!({"turn": 1, "text": BACKGROUND_QUESTIONS[0]})]);
    assert_eq!(of(&frames, "intake:reply_done"), [json!({"turn": 1, "text": BACKGROUND_QUESTIONS[0]})]);
    let state = of(&frames, "intake:state").pop().expect("state");
    assert_eq!(state["phase"], "background");
    assert_eq!((state["timeboxMs"].as_i64(), state["remainingMs"].as_i64()), (Some(240_000), Some(240_000)));
    assert_eq!((state["zeroRuns"].as_u64(), state["projectsUsed"].as_u64()), (Some(0), Some(1)));
    assert_eq!(state["tau"], json!({"adaptability": 0.65, "creativity": 0.65, "reasoning": 0.65}));
    assert_eq!(state["awaitingAnswer"], true);
    assert_eq!(state["transcript"], json!([{"role": "interviewer", "text": BACKGROUND_QUESTIONS[0]}]));
    assert!(fake.message_requests().is_empty(), "no model call before the learner answers");
    assert_eq!(logged(&server, ActionType::IntakeStarted), [json!({"timeboxMs": 240_000})]);
    let session = server.fixture.core.active_session().expect("session").id;
    let stored = server.fixture.core.db().intake_events(&session).expect("events");
    let kinds: Vec<&str> = stored.iter().map(|(_, e)| e["type"].as_str().unwrap_or("?")).collect();
    assert_eq!(kinds, ["replyStarted", "questionDelivered", "replyFinished"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_is_scored_on_its_own_delta_and_the_next_question_streams_sentence_by_sentence() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("intake_control"), control(60, "rewrote the cache twice", false));
    fake.always(
        Matcher::call_type("intake_interviewer"),
        Reply::text_deltas(&["That sounds tough. ", "Why did the first ", "cache fail?"]),
    );
    let (server, mut socket, _) = interview(&fake, Duration::from_secs(240)).await;
    let answer = "A weather app; I rewrote the cache twice because it went stale.";
    send(&mut socket, "intake:answer", json!({"text": answer})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    let sentences: Vec<Value> = of(&frames, "intake:sentence").iter().map(|s| s["text"].clone()).collect();
    assert_eq!(sentences, [json!("That sounds tough."), json!("Why did the first cache fail?")]);
    let done = of(&frames, "intake:reply_done");
    assert_eq!(done, [json!({"turn": 2, "text": "That sounds tough. Why did the first cache fail?"})]);
    // CONTROL saw exactly the last question and answer.
    let scored = calls_of(&fake, "intake_control");
    assert_eq!(scored.len(), 1);
    let message: Value = serde_json::from_str(scored[0].user_message().expect("message")).expect("json");
    assert_eq!(message, json!({"last_question": BACKGROUND_QUESTIONS[0], "last_answer": answer}));
    // The interviewer had the conversation so far, streamed.
    let asked = calls_of(&fake, "intake_interviewer");
    assert!(asked[0].is_stream());
    assert!(asked[0].body.to_string().contains(BACKGROUND_QUESTIONS[0]));
    let state = of(&frames, "intake:state").pop().expect("state");
    assert_eq!(state["weights"]["reasoning"], 0.6);
    assert_eq!(state["lastPillars"]["creativity"]["rationale"], "\"rewrote the cache twice\"");
    assert_eq!(state["transcript"].as_array().map(Vec::len), Some(3));
    let turns = logged(&server, ActionType::IntakeTurn);
    assert_eq!(turns.len(), 1);
    assert_eq!((turns[0]["lastAnswer"].as_str(), turns[0]["zeroRuns"].as_u64()), (Some(answer), Some(0)));
    assert!(turns[0]["confidence"]["adaptability"].as_f64().is_some_and(|c| c > 0.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_invites_coding_is_withheld_and_regenerated_with_a_stronger_instruction() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("intake_control"), control(50, "a parser in Rust", false));
    fake.once(
        Matcher::call_type("intake_interviewer"),
        Reply::text_deltas(&["Nice. ", "Let's write a function that parses dates together!"]),
    );
    fake.always(Matcher::call_type("intake_interviewer"), Reply::text("What made the parser hard?"));
    let (_server, mut socket, _) = interview(&fake, Duration::from_secs(240)).await;
    send(&mut socket, "intake:answer", json!({"text": "I built a parser in Rust for log files."})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    let shown: Vec<String> =
        of(&frames, "intake:sentence").iter().map(|s| s["text"].as_str().unwrap_or_default().to_owned()).collect();
    assert!(shown.iter().all(|s| !s.contains("write a function")), "a flagged sentence is never shown: {shown:?}");
    assert_eq!(
        of(&frames, "intake:reply_done"),
        [json!({"turn": 2, "text": "What made the parser hard?"})],
        "the regenerated reply is the reply"
    );
    let asked = calls_of(&fake, "intake_interviewer");
    assert_eq!(asked.len(), 2);
    assert!(!asked[0].system().unwrap_or_default().contains(STRONGER_INSTRUCTION.trim()));
    assert!(asked[1].system().unwrap_or_default().contains(STRONGER_INSTRUCTION.trim()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_flagged_twice_or_a_failing_interviewer_gives_way_to_a_prepared_question_and_says_so() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("intake_control"), control(50, "the log files of our servers", false));
    fake.once(Matcher::call_type("intake_interviewer"), Reply::text("Want to try a coding exercise?"));
    fake.once(Matcher::call_type("intake_interviewer"), Reply::text("Shall we start coding now?"));
    fake.always(Matcher::call_type("intake_interviewer"), Reply::server_error());
    let (_server, mut socket, _) = interview(&fake, Duration::from_secs(240)).await;
    send(&mut socket, "intake:answer", json!({"text": "A parser for the log files of our servers."})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    let done = of(&frames, "intake:reply_done");
    assert_eq!(done, [json!({"turn": 2, "text": BACKGROUND_QUESTIONS[1]})]);
    let errors = of(&frames, "intake:error");
    assert!(errors[0]["message"].as_str().is_some_and(|m| m.contains("invited coding")), "{errors:?}");
    send(&mut socket, "intake:answer", json!({"text": "The log files of our servers were huge."})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    assert_eq!(of(&frames, "intake:reply_done"), [json!({"turn": 3, "text": BACKGROUND_QUESTIONS[2]})]);
    let errors = of(&frames, "intake:error");
    let message = errors[0]["message"].as_str().expect("message");
    let (sentence, details) = message.split_once('\n').expect("a sentence, then details");
    assert_eq!(
        sentence,
        "Paige asked a prepared question instead: the interviewer's model call failed: the Anthropic API had a problem of its own — retry in a moment."
    );
    assert!(details.contains("HTTP 500"), "{details}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_answers_without_evidence_ask_for_another_project_word_for_word() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("intake_control"), control(0, "", false));
    fake.always(Matcher::call_type("intake_interviewer"), Reply::text("Could you say more about it?"));
    let (server, mut socket, _) = interview(&fake, Duration::from_secs(240)).await;
    send(&mut socket, "intake:answer", json!({"text": "I don't know."})).await;
    through(&mut socket, "intake:reply_done").await;
    send(&mut socket, "intake:answer", json!({"text": "Nothing comes to mind."})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    assert_eq!(of(&frames, "intake:reply_done"), [json!({"turn": 3, "text": ANOTHER})]);
    assert_eq!(calls_of(&fake, "intake_interviewer").len(), 1, "the very next turn is the scripted question");
    let state = of(&frames, "intake:state").pop().expect("state");
    assert_eq!((state["zeroRuns"].as_u64(), state["projectsUsed"].as_u64()), (Some(0), Some(1)));
    let turns = logged(&server, ActionType::IntakeTurn);
    assert_eq!(turns.iter().map(|t| t["zeroRuns"].as_u64()).collect::<Vec<_>>(), [Some(1), Some(2)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_timebox_the_interview_hands_over_to_the_coding_question_and_claude_code_is_told() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let (server, mut socket, _) = interview(&fake, Duration::from_secs(240)).await;
    let core = &server.fixture.core;
    server.fixture.clock.advance(chrono::Duration::seconds(239));
    assert!(of(&all_frames(&mut socket, QUIET).await, "intake:transition").is_empty(), "not before 4:00");
    server.fixture.clock.advance(chrono::Duration::seconds(1));
    let frames = through(&mut socket, "intake:transition").await;
    let transition = of(&frames, "intake:transition").pop().expect("transition at 4:00");
    assert_eq!((transition["reason"].as_str(), transition["reasons"].clone()), (Some("timebox"), json!(["timebox"])));
    let question = transition["codingQuestion"].as_str().expect("question");
    assert!(question.contains("Add a weather widget"), "{question}");
    let state = of(&frames, "intake:state").pop().expect("state");
    assert_eq!((state["phase"].as_str(), state["remainingMs"].as_i64()), (Some("coding"), Some(0)));
    let logged = logged(&server, ActionType::IntakeTransition);
    assert_eq!((logged[0]["reason"].as_str(), logged[0]["elapsedMs"].as_i64()), (Some("timebox"), Some(240_000)));
    // Claude Code's next prompt carries the task.
    let input = paige_core::governance::HookInput { prompt: Some("hi".into()), ..Default::default() };
    let context = format!("{:?}", core.handle_hook(paige_core::governance::HookEvent::UserPromptSubmit, &input));
    assert!(context.contains("The intake interview is over") && context.contains("Add a weather widget"), "{context}");
    // An answer after the hand-over is refused in the panel.
    send(&mut socket, "intake:answer", json!({"text": "one more thing"})).await;
    let errors = of(&all_frames(&mut socket, QUIET).await, "intake:error");
    assert!(errors[0]["message"].as_str().is_some_and(|m| m.contains("over")), "{errors:?}");
}

/// Issue 41: a learner who answers fully is handed over when Paige has its picture (the
/// gate), not at the timebox. CONTROL scores as a real model did: each answer shows one trait
/// strongly (60) and one clearly (40), quoted, and backs the third with a paraphrase (50), which
/// counts as no evidence — before, that one paraphrase threw the whole turn away and the meter
/// never moved. Each answer takes the learner 30 s. Printed: answers and seconds to the gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_learner_who_answers_fully_is_handed_over_by_the_gate_before_the_timebox() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let traits = ["adaptability", "creativity", "reasoning"];
    for k in 0..12usize {
        let quote = format!("answer number {k} shows");
        let mut reply = serde_json::Map::new();
        for (i, name) in traits.iter().enumerate() {
            let (score, rationale) = match (i + 3 - k % 3) % 3 {
                0 => (60, format!("\"{quote}\" it well")),
                1 => (40, format!("\"{quote}\" it")),
                _ => (50, "The learner seems to handle this kind of thing.".to_owned()),
            };
            reply.insert((*name).into(), json!({"score": score, "rationale": rationale}));
        }
        reply.insert("new_project".into(), json!(false));
        reply.insert("project_name".into(), json!("the weather app"));
        fake.once(Matcher::call_type("intake_control"), Reply::json(&Value::Object(reply)));
    }
    fake.always(Matcher::call_type("intake_interviewer"), Reply::text("What did you try next?"));
    let (server, mut socket, _) = interview(&fake, Duration::from_secs(240)).await;
    let mut handed_over = None;
    for k in 0..12usize {
        server.fixture.clock.advance(chrono::Duration::seconds(30));
        let answer = format!("On the weather app, answer number {k} shows what I did and why, in detail.");
        send(&mut socket, "intake:answer", json!({"text": answer})).await;
        let frames = through(&mut socket, "intake:reply_done").await;
        if let Some(transition) = of(&frames, "intake:transition").pop() {
            handed_over = Some((k + 1, transition));
            break;
        }
    }
    let (answers, transition) = handed_over.expect("handed over before 12 answers");
    assert_eq!(transition["reason"], "gate", "{transition}");
    let logged = logged(&server, ActionType::IntakeTransition);
    let elapsed = logged[0]["elapsedMs"].as_i64().expect("elapsed");
    eprintln!("answered fully: handed over by the gate after {answers} answers, {} s", elapsed / 1000);
    assert!(elapsed < 240_000 && answers <= 7, "{answers} answers, {elapsed} ms");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ui_that_connects_mid_interview_gets_the_transcript_and_after_the_hand_over_the_task() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let (server, _socket, _) = interview(&fake, Duration::from_secs(240)).await;
    let hello = json!({"version": "0.1.0", "platform": "test", "windowSize": {"width": 800, "height": 600}});
    let mut reloaded = ui(&server).await;
    send(&mut reloaded, "connection:hello", hello.clone()).await;
    let frames = all_frames(&mut reloaded, QUIET).await;
    let state = of(&frames, "intake:state").pop().expect("state at hello");
    assert_eq!(state["transcript"][0]["text"], BACKGROUND_QUESTIONS[0]);
    assert!(of(&frames, "intake:transition").is_empty());
    server.fixture.clock.advance(chrono::Duration::seconds(240));
    all_frames(&mut reloaded, QUIET).await;
    let mut late = ui(&server).await;
    send(&mut late, "connection:hello", hello).await;
    let frames = all_frames(&mut late, QUIET).await;
    assert_eq!(of(&frames, "intake:transition").len(), 1, "the task again, for this UI");
    let init = of(&frames, "connection:init").pop().expect("init");
    assert_eq!(init["featureFlags"]["intake"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_session_or_an_interview_the_requests_are_refused_clearly() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = crate::coaching_server(&fake).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "intake:start", json!({})).await;
    send(&mut socket, "intake:typing", json!({"typing": true})).await;
    send(&mut socket, "intake:answer", json!({"text": "hello"})).await;
    send(&mut socket, "intake:answer", json!({"text": "   "})).await;
    let errors = of(&all_frames(&mut socket, QUIET).await, "intake:error");
    // Frames may be handled side by side: compare as a set.
    let mut messages: Vec<&str> = errors.iter().filter_map(|e| e["message"].as_str()).collect();
    messages.sort();
    assert_eq!(
        messages,
        [
            "An empty answer was not sent.",
            "No interview is running.",
            "Start a coaching session first: the interview comes before its coding."
        ]
    );
    assert!(fake.message_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_control_call_keeps_the_interview_going_without_a_score() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("intake_control"), Reply::error(400, "invalid_request_error", "bad"));
    fake.always(Matcher::call_type("intake_interviewer"), Reply::text("What happened next?"));
    let (server, mut socket, _) = interview(&fake, Duration::from_secs(240)).await;
    send(&mut socket, "intake:answer", json!({"text": "We shipped it late."})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    assert_eq!(of(&frames, "intake:reply_done"), [json!({"turn": 2, "text": "What happened next?"})]);
    let state = of(&frames, "intake:state").pop().expect("state");
    assert_eq!((state["zeroRuns"].as_u64(), state["weights"]["reasoning"].as_f64()), (Some(0), Some(0.0)));
    assert!(logged(&server, ActionType::IntakeTurn).is_empty(), "no score, no turn record");
    // Said to the learner (issue 41), not only logged.
    let errors = of(&frames, "intake:error");
    let message = errors.first().and_then(|e| e["message"].as_str()).unwrap_or_default();
    assert!(message.starts_with("Paige could not weigh this answer (the CONTROL call failed"), "{errors:?}");
    assert!(message.contains("the meter did not move"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_learners_first_session_opens_with_the_interview_and_later_ones_only_when_asked() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = crate::coaching_server_with(&fake, |config| config.gh_program = Some("/nonexistent/gh".into())).await;
    let mut socket = ui(&server).await;
    send(&mut socket, "session:start", json!({"title": "Add a weather widget"})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    assert_eq!(of(&frames, "intake:reply_done"), [json!({"turn": 1, "text": BACKGROUND_QUESTIONS[0]})]);
    server.fixture.core.coaching().end_session(paige_core::db::SessionStatus::Completed).expect("ended");
    send(&mut socket, "session:start", json!({"title": "Fix the login race"})).await;
    let frames = through(&mut socket, "session:started").await;
    assert!(of(&frames, "intake:state").is_empty(), "a second session starts without the interview");
    send(&mut socket, "intake:start", json!({})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    assert_eq!(of(&frames, "intake:reply_done").len(), 1, "…until the learner asks for it");
}

/// Issue 41: "Skip for now" means later. A skipped interview opens again with the next
/// session, and the one after, until one runs to its hand-over; then sessions start without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skipped_interview_opens_again_with_the_next_session_until_one_is_finished() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let server = crate::coaching_server_with(&fake, |config| {
        config.gh_program = Some("/nonexistent/gh".into());
        config.limits.intake_timebox = Duration::from_secs(240);
    })
    .await;
    let core = &server.fixture.core;
    let mut socket = ui(&server).await;
    let opens = |frames: &[Value]| of(frames, "intake:reply_done").iter().any(|d| d["turn"] == 1);
    send(&mut socket, "session:start", json!({"title": "Add a weather widget"})).await;
    assert!(opens(&through(&mut socket, "intake:reply_done").await), "the first session opens with it");
    send(&mut socket, "intake:skip", json!({})).await;
    through(&mut socket, "intake:transition").await;
    core.coaching().end_session(paige_core::db::SessionStatus::Completed).expect("ended");
    send(&mut socket, "session:start", json!({"title": "Fix the login race"})).await;
    let frames = through(&mut socket, "intake:reply_done").await;
    assert!(opens(&frames), "skipped: the next session opens with it again");
    server.fixture.clock.advance(chrono::Duration::seconds(240));
    let over = of(&through(&mut socket, "intake:transition").await, "intake:transition");
    assert_eq!(over.first().map(|t| t["reason"].clone()), Some(json!("timebox")), "{over:?}");
    core.coaching().end_session(paige_core::db::SessionStatus::Completed).expect("ended");
    send(&mut socket, "session:start", json!({"title": "Tidy the settings page"})).await;
    let frames = through(&mut socket, "session:started").await;
    let frames = [frames, all_frames(&mut socket, QUIET).await].concat();
    assert!(!opens(&frames) && of(&frames, "intake:state").is_empty(), "finished once: no more by itself");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_the_interview_is_rebuilt_from_its_events_and_its_timebox_keeps_running() {
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("intake_control"), control(40, "a chat app", false));
    fake.always(Matcher::call_type("intake_interviewer"), Reply::text("Who used it?"));
    let (server, mut socket, _) = interview(&fake, Duration::from_secs(240)).await;
    send(&mut socket, "intake:answer", json!({"text": "I made a chat app for my club."})).await;
    through(&mut socket, "intake:reply_done").await;
    let session = server.fixture.core.active_session().expect("session").id;
    server.fixture.clock.advance(chrono::Duration::seconds(100));
    // Paige stops; the same data dir opens in a new core, 100 s of the timebox spent.
    let config = server.fixture.core.config().clone();
    server.fixture.core.shutdown().await.expect("shutdown");
    let clock = std::sync::Arc::new(paige_core::clock::ManualClock::new(paige_core::clock::Clock::now(
        server.fixture.clock.as_ref(),
    )));
    let core = std::sync::Arc::new(paige_core::Core::open(config, clock.clone()).expect("reopens"));
    let dirs = (tempfile::tempdir().expect("dir"), tempfile::tempdir().expect("dir"));
    let restarted = crate::serve_fixture(crate::Fixture::new(core.clone(), clock.clone(), dirs)).await;
    core.coaching().resume_session(&session).expect("resumed");
    let mut socket = ui(&restarted).await;
    send(&mut socket, "intake:start", json!({})).await;
    let frames = through(&mut socket, "intake:state").await;
    let state = of(&frames, "intake:state").remove(0);
    assert_eq!(state["remainingMs"].as_i64(), Some(140_000), "the timebox runs from the first question");
    let lines: Vec<&str> =
        state["transcript"].as_array().expect("lines").iter().filter_map(|l| l["text"].as_str()).collect();
    assert_eq!(lines, [BACKGROUND_QUESTIONS[0], "I made a chat app for my club.", "Who used it?"]);
    assert_eq!(state["weights"]["creativity"], 0.4, "the scores are folded back in");
    clock.advance(chrono::Duration::seconds(140));
    let frames = through(&mut socket, "intake:transition").await;
    assert_eq!(of(&frames, "intake:transition")[0]["reason"], "timebox");
    drop(server);
}

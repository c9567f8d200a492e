//! Issue 28 against the fake Messages API: one deadline per call covers every retry and
//! continuation; a paused web-search turn is continued; errors read as a sentence.

use std::time::{Duration, Instant};

use paige_core::api::*;
use paige_fake_anthropic::{Matcher, Reply};
use serde_json::json;

use super::api::{Verdict, World, assert_failure_row, verdict, world_with};

/// A world whose every call type must finish within `deadline`.
async fn world_within(deadline: Duration) -> World {
    world_with(|settings| settings.deadlines = ModelDeadlines::all(deadline)).await
}

fn options<'a>(w: &'a World, call_type: &'a str, tools: &'a [ServerTool]) -> CallOptions<'a> {
    CallOptions {
        session_id: Some(&w.session),
        tools,
        ..CallOptions::new(call_type, ModelTier::Sonnet, "You judge things.", "is this ok?")
    }
}

fn assert_deadline(error: &ApiError, call_type: &str, after: Duration) {
    match error {
        ApiError::Deadline { call_type: got, after: got_after, var } => {
            assert_eq!((got.as_str(), *got_after), (call_type, after));
            assert!(var.starts_with("PAIGE_MODEL_"), "{var}");
        }
        other => panic!("expected the deadline error, got {other:?}"),
    }
}

#[tokio::test]
async fn one_deadline_covers_every_retry_of_a_call_including_the_extra_d68_attempt() {
    let deadline = Duration::from_millis(600);
    let w = world_within(deadline).await;
    // Six attempts of 400 ms each (three, then D68's three more) would take 2.4 s.
    w.fake.always(Matcher::Any, Reply::overloaded().delayed(Duration::from_millis(400)));
    let started = Instant::now();
    let error = w.client.call_with_retry::<Verdict>(&w.db, &options(&w, "explain_this", &[])).await.expect_err("late");
    let took = started.elapsed();
    assert_deadline(&error, "explain_this", deadline);
    assert!(took >= deadline && took < Duration::from_millis(1800), "ended at the deadline: {took:?}");
    let rows = w.rows();
    // The attempt cut short has its row even when its request had not reached the fake yet.
    assert!(!rows.is_empty() && rows.len() >= w.fake.message_requests().len(), "every attempt logged");
    assert!(rows.len() < 6, "the deadline ended the retries: {} attempts", rows.len());
    rows.iter().for_each(assert_failure_row);
    assert!(!error.is_transient(), "a deadline is not tried again");
}

#[tokio::test]
async fn a_first_byte_later_than_the_deadline_ends_the_call_there_and_logs_the_attempt() {
    let w = world_within(Duration::from_millis(200)).await;
    w.fake.always(Matcher::Any, Reply::json(&verdict()).delayed(Duration::from_secs(5)));
    let started = Instant::now();
    let error = w.client.call::<Verdict>(&w.db, &options(&w, "observer_triage", &[])).await.expect_err("late");
    assert_deadline(&error, "observer_triage", Duration::from_millis(200));
    assert!(started.elapsed() < Duration::from_secs(3), "not the 5 s answer: {:?}", started.elapsed());
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn an_answer_that_stalls_halfway_ends_at_the_deadline() {
    let w = world_within(Duration::from_millis(300)).await;
    w.fake.always(Matcher::Any, Reply::json(&verdict()).stall_after(0));
    let error = w.client.call::<Verdict>(&w.db, &options(&w, "coach_agent", &[])).await.expect_err("stalled");
    assert_deadline(&error, "coach_agent", Duration::from_millis(300));
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn a_stream_that_stalls_midway_ends_at_the_deadline_before_its_idle_timeout() {
    let w = world_with(|settings| {
        settings.deadlines = ModelDeadlines::all(Duration::from_secs(1));
        settings.stream_idle_timeout = Duration::from_secs(10);
    })
    .await;
    w.fake.always(Matcher::Any, Reply::text_deltas(&["Hello ", "there"]).stall_after(1));
    let mut seen = String::new();
    let started = Instant::now();
    let error = w
        .client
        .stream_text(&w.db, &options(&w, "intake_interviewer", &[]), &mut |text| seen.push_str(text))
        .await
        .expect_err("stalled");
    assert_deadline(&error, "intake_interviewer", Duration::from_secs(1));
    assert!(started.elapsed() < Duration::from_secs(5), "not the idle timeout: {:?}", started.elapsed());
    assert_eq!(seen, "Hello ");
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn an_overloaded_api_is_retried_within_the_deadline_and_answers() {
    let w = world_within(Duration::from_secs(5)).await;
    w.fake.once(Matcher::Any, Reply::overloaded());
    w.fake.once(Matcher::Any, Reply::overloaded().delayed(Duration::from_millis(50)));
    w.fake.always(Matcher::Any, Reply::json(&verdict()));
    let answer = w.client.call::<Verdict>(&w.db, &options(&w, "practice_review", &[])).await.expect("answered");
    assert!(answer.ok);
    assert_eq!(w.latencies(), [-1, -1, 1]);
}

#[tokio::test]
async fn a_paused_web_search_turn_is_sent_back_as_the_assistants_turn_and_continued() {
    let w = world_within(Duration::from_secs(5)).await;
    w.fake.once(Matcher::Any, Reply::pause_turn("rust lifetimes"));
    w.fake.once(Matcher::Any, Reply::pause_turn("rust borrowing"));
    w.fake.always(Matcher::Any, Reply::json(&verdict()));
    let tools = [ServerTool::web_search()];
    let sourced = w
        .client
        .call_with_retry_sourced::<Verdict>(&w.db, &options(&w, "learning_materials", &tools))
        .await
        .expect("continued to an answer");
    assert_eq!(sourced.answer.note.as_deref(), Some("fine"));
    assert_eq!(sourced.search_urls, ["https://doc.rust-lang.org/book/"; 2], "the paused turns' results count");

    let sent = w.fake.message_requests();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0].messages().len(), 1);
    let first: Vec<_> = sent[1].messages().to_vec();
    assert_eq!(first[0], sent[0].messages()[0], "the user's turn unchanged");
    assert_eq!(first[1]["role"], "assistant");
    let blocks = |m: &serde_json::Value| m["content"].as_array().expect("blocks").len();
    assert_eq!(blocks(&first[1]), 2, "the paused turn's search and results, nothing added");
    let second = sent[2].messages();
    assert_eq!(second.len(), 2, "still one assistant turn after two pauses");
    assert_eq!(blocks(&second[1]), 4);
    assert_eq!(second[1]["content"][2]["input"], json!({"query": "rust borrowing"}));
    for request in &sent {
        assert_eq!(request.body["tools"][0]["max_uses"], WEB_SEARCH_MAX_USES, "searches per request are capped");
    }
    assert_eq!(w.latencies(), [1, 1, 1], "each request logged with its usage");
}

#[tokio::test]
async fn a_turn_that_keeps_pausing_is_continued_three_times_then_reported() {
    let w = world_within(Duration::from_secs(5)).await;
    w.fake.always(Matcher::Any, Reply::pause_turn("endless"));
    let tools = [ServerTool::web_search()];
    let error = w.client.call::<Verdict>(&w.db, &options(&w, "learning_materials", &tools)).await.expect_err("paused");
    assert!(matches!(&error, ApiError::InvalidResponse { reason } if reason.contains("pause_turn")), "{error:?}");
    assert_eq!(w.fake.message_requests().len(), 1 + MAX_PAUSE_CONTINUATIONS);
}

#[tokio::test]
async fn errors_read_as_one_sentence_saying_what_to_do_with_the_raw_chain_below() {
    let w = world_with(|settings| settings.base_url = "http://127.0.0.1:9".into()).await;
    let error = w.client.call::<Verdict>(&w.db, &options(&w, "explain_this", &[])).await.expect_err("unreachable");
    let text = error.readable("Paige could not explain this");
    let (sentence, details) = text.split_once('\n').expect("a sentence, then details");
    assert_eq!(
        sentence,
        "Paige could not explain this: Paige cannot reach the Anthropic API — check your connection, then retry."
    );
    assert!(details.starts_with("cannot reach the Anthropic API: error sending request"), "{details}");

    let late = ApiError::Deadline { call_type: "explain_this".into(), after: Duration::from_secs(90), var: "V" };
    let text = late.readable("Paige could not explain this");
    assert!(text.starts_with("Paige could not explain this: the model took longer than 90 s to answer"), "{text}");
    let overloaded = ApiError::Server { status: 529, message: "overloaded_error: Overloaded".into() };
    assert!(overloaded.readable("x").starts_with("x: the Anthropic API is overloaded right now"));
}

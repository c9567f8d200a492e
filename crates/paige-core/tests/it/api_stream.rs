//! Streamed plain-text replies against the fake Messages API over real HTTP (issue 18).

use std::time::{Duration, Instant};

use paige_core::api::*;
use paige_fake_anthropic::{Matcher, Reply};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::api::{KEY, World};

const SYSTEM: &str = "You interview a new learner.";

/// The client tests' world, with the idle timeout short enough to test.
async fn world_with(adjust: impl FnOnce(&mut ApiSettings)) -> World {
    super::api::world_with(|settings| {
        settings.stream_idle_timeout = Duration::from_secs(5);
        adjust(settings);
    })
    .await
}

async fn world() -> World {
    world_with(|_| {}).await
}

/// What one streamed call came to: its result and every delta with the time it arrived.
struct Streamed {
    result: Result<StreamedText, ApiError>,
    deltas: Vec<(Instant, String)>,
    returned_at: Instant,
}

impl Streamed {
    fn texts(&self) -> Vec<&str> {
        self.deltas.iter().map(|(_, text)| text.as_str()).collect()
    }
}

impl World {
    fn stream_options<'a>(&'a self, user_message: &'a str) -> CallOptions<'a> {
        CallOptions {
            session_id: Some(&self.session),
            ..CallOptions::new("intake_interviewer", ModelTier::Sonnet, SYSTEM, user_message)
        }
    }

    async fn stream(&self, history: &[ChatMessage], user_message: &str) -> Streamed {
        let mut deltas = Vec::new();
        let mut on_text = |text: &str| deltas.push((Instant::now(), text.to_owned()));
        let result = self.client.stream_chat(&self.db, &self.stream_options(user_message), history, &mut on_text).await;
        Streamed { result, deltas, returned_at: Instant::now() }
    }

    async fn stream_one(&self) -> Streamed {
        self.stream(&[], "I want to learn Rust.").await
    }
}

#[tokio::test]
async fn deltas_reach_on_text_in_order_before_the_stream_ends_and_add_up_to_the_text() {
    let w = world().await;
    let pieces = ["Welcome! ", "What brings you ", "to Rust?"];
    w.fake.always(Matcher::Any, Reply::text_deltas(&pieces).with_delta_pause(Duration::from_millis(250)));
    let streamed = w.stream_one().await;
    let reply = streamed.result.as_ref().expect("the stream completes");
    assert_eq!(streamed.texts(), pieces);
    assert_eq!(reply.text, pieces.concat());
    assert_eq!(reply.stop_reason.as_deref(), Some("end_turn"));
    let first_delta_at = streamed.deltas[0].0;
    assert!(
        streamed.returned_at - first_delta_at >= Duration::from_millis(400),
        "the first delta came two pauses before the end, not with it"
    );
}

#[tokio::test]
async fn a_long_reply_in_many_deltas_reassembles_exactly() {
    let w = world().await;
    let answer = "A reply long enough to come in many sixteen-character deltas, with ünïcödé too.";
    w.fake.always(Matcher::Any, Reply::text(answer));
    let streamed = w.stream_one().await;
    assert!(streamed.deltas.len() > 3, "{:?}", streamed.texts());
    assert_eq!(streamed.texts().concat(), answer);
    assert_eq!(streamed.result.expect("completes").text, answer);
}

#[tokio::test]
async fn the_request_streams_with_the_call_type_header_and_no_output_schema() {
    let w = world().await;
    w.fake.always(Matcher::call_type("intake_interviewer"), Reply::text("Hello."));
    w.stream_one().await.result.expect("completes");
    let requests = w.fake.message_requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.call_type(), Some("intake_interviewer"));
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some(ANTHROPIC_VERSION));
    assert!(request.is_stream(), "{}", request.body);
    let body = &request.body;
    assert_eq!(body["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
    assert_eq!(body["system"], SYSTEM);
    assert_eq!(body["messages"], json!([{"role": "user", "content": "I want to learn Rust."}]));
    assert!(body.get("output_config").is_none(), "plain text: {body}");
    assert!(body.get("tools").is_none(), "{body}");
}

#[tokio::test]
async fn history_turns_are_sent_in_order_before_the_new_user_message() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::text("And before that?"));
    let history = [
        ChatMessage::user("Hi."),
        ChatMessage::assistant("Hello! What do you want to learn?"),
        ChatMessage::user("Rust."),
        ChatMessage::assistant("Have you programmed before?"),
    ];
    w.stream(&history, "Some Python.").await.result.expect("completes");
    assert_eq!(
        w.fake.message_requests()[0].body["messages"],
        json!([
            {"role": "user", "content": "Hi."},
            {"role": "assistant", "content": "Hello! What do you want to learn?"},
            {"role": "user", "content": "Rust."},
            {"role": "assistant", "content": "Have you programmed before?"},
            {"role": "user", "content": "Some Python."},
        ])
    );
}

#[tokio::test]
async fn a_completed_stream_logs_one_row_with_its_latency_tokens_and_cost() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::text("Welcome.").with_usage(1200, 350));
    let reply = w.stream(&[], "hello").await.result.expect("completes");
    assert_eq!((reply.input_tokens, reply.output_tokens), (1200, 350));
    let rows = w.rows();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.call_type, "intake_interviewer");
    assert_eq!(row.model, "claude-sonnet-4-5-20250929");
    assert_eq!(row.input_hash, input_hash("hello"));
    assert!(row.latency_ms > 0, "{row:?}");
    assert_eq!((row.input_tokens, row.output_tokens), (1200, 350));
    // (1200 × $3.00 + 350 × $15.00) / 1M
    assert!((row.cost_estimate - 0.00885).abs() < 1e-12, "{}", row.cost_estimate);
}

#[tokio::test]
async fn a_rate_limit_before_the_stream_is_retried_and_both_attempts_are_logged() {
    let w = world().await;
    w.fake.once(Matcher::Any, Reply::rate_limited(0));
    w.fake.once(Matcher::Any, Reply::text("Hi there."));
    let streamed = w.stream_one().await;
    assert_eq!(streamed.result.as_ref().expect("the retry completes").text, "Hi there.");
    assert_eq!(streamed.texts().concat(), "Hi there.", "delivered once");
    assert_eq!(w.fake.message_requests().len(), 2);
    assert_eq!(w.latencies(), [-1, 1]);
    let failed = &w.rows()[0];
    assert_eq!((failed.input_tokens, failed.output_tokens, failed.cost_estimate), (0, 0, 0.0));
}

#[tokio::test]
async fn an_unauthorized_stream_is_an_authentication_error_and_never_retried() {
    let w = world_with(|s| s.api_key = Some("sk-wrong".into())).await;
    w.fake.always(Matcher::Any, Reply::text("never"));
    let streamed = w.stream_one().await;
    let err = streamed.result.expect_err("bad key");
    assert!(matches!(err, ApiError::Authentication { status: 401, .. }), "{err:?}");
    assert!(streamed.deltas.is_empty());
    assert_eq!(w.fake.message_requests().len(), 1);
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn an_overloaded_error_event_before_any_text_is_retried() {
    let w = world().await;
    w.fake.once(Matcher::Any, Reply::text("lost").error_event_after(0, "overloaded_error", "Overloaded"));
    w.fake.once(Matcher::Any, Reply::text("Second try."));
    let streamed = w.stream_one().await;
    assert_eq!(streamed.result.as_ref().expect("the retry completes").text, "Second try.");
    assert_eq!(streamed.texts().concat(), "Second try.");
    assert_eq!(w.latencies(), [-1, 1]);
}

#[tokio::test]
async fn a_server_error_event_after_text_is_a_server_error_and_not_retried() {
    let w = world().await;
    w.fake.always(
        Matcher::Any,
        Reply::text_deltas(&["Hello", " world"]).error_event_after(1, "api_error", "Internal server error"),
    );
    let streamed = w.stream_one().await;
    assert_eq!(streamed.texts(), ["Hello"], "the text before the error was delivered");
    let err = streamed.result.expect_err("error event");
    assert_eq!(err, ApiError::Server { status: 500, message: "api_error: Internal server error".into() });
    assert_eq!(w.fake.message_requests().len(), 1, "text was delivered: no retry");
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn a_stream_that_ends_before_message_stop_is_an_error_saying_so() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::text_deltas(&["One. ", "Two. ", "Three."]).cut_after(2));
    let streamed = w.stream_one().await;
    assert_eq!(streamed.texts(), ["One. ", "Two. "]);
    let err = streamed.result.expect_err("truncated");
    assert!(matches!(err, ApiError::InvalidResponse { .. }), "{err:?}");
    assert!(err.to_string().contains("the stream ended before message_stop, after 10 characters"), "{err}");
    assert_eq!(w.fake.message_requests().len(), 1);
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn a_stream_silent_past_the_idle_timeout_is_a_timeout_and_text_already_delivered_is_not_retried() {
    let w = world_with(|s| s.stream_idle_timeout = Duration::from_millis(200)).await;
    w.fake.always(Matcher::Any, Reply::text_deltas(&["Let me think", " about that."]).stall_after(1));
    let started = Instant::now();
    let streamed = w.stream_one().await;
    assert_eq!(streamed.texts(), ["Let me think"]);
    assert_eq!(streamed.result.expect_err("stalled"), ApiError::Timeout { after: Duration::from_millis(200) });
    assert!(started.elapsed() < Duration::from_secs(2), "gave up at the idle timeout");
    assert_eq!(w.fake.message_requests().len(), 1);
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn a_stall_before_any_text_is_retried() {
    let w = world_with(|s| s.stream_idle_timeout = Duration::from_millis(200)).await;
    w.fake.once(Matcher::Any, Reply::text("lost").stall_after(0));
    w.fake.once(Matcher::Any, Reply::text("Here now."));
    let streamed = w.stream_one().await;
    assert_eq!(streamed.result.expect("the retry completes").text, "Here now.");
    assert_eq!(w.latencies(), [-1, 1]);
}

#[tokio::test]
async fn max_tokens_returns_the_cut_off_text_for_the_caller_to_judge() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::max_tokens("Tell me about"));
    let options = CallOptions { max_tokens: Some(8), ..w.stream_options("hi") };
    let reply = w.client.stream_text(&w.db, &options, &mut |_| {}).await.expect("a cut-off reply is a reply");
    assert_eq!((reply.text.as_str(), reply.stop_reason.as_deref()), ("Tell me about", Some("max_tokens")));
    assert_eq!(w.fake.message_requests()[0].body["max_tokens"], 8);
    assert_eq!(w.latencies(), [1]);
}

#[tokio::test]
async fn a_refusal_is_a_refusal_error_with_the_text() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::refusal("I can't help with that."));
    let err = w.stream_one().await.result.expect_err("refused");
    assert_eq!(err, ApiError::Refusal { text: "I can't help with that.".into() });
    assert_eq!(w.fake.message_requests().len(), 1);
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn without_a_key_streaming_fails_with_not_configured_and_nothing_is_sent() {
    let w = world_with(|s| s.api_key = None).await;
    let streamed = w.stream_one().await;
    assert_eq!(streamed.result.expect_err("no key"), ApiError::NotConfigured);
    assert!(streamed.deltas.is_empty());
    assert!(w.fake.requests().is_empty());
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn dropping_the_call_closes_the_connection() {
    // A server that starts a stream, says the request arrived, then waits for the client to
    // hang up.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let (arrived, request_in) = tokio::sync::oneshot::channel();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let mut request = Vec::new();
        let mut buf = [0; 4096];
        while !String::from_utf8_lossy(&request).contains("\"stream\":true") {
            let n = socket.read(&mut buf).await.expect("read");
            assert!(n > 0, "the request arrives whole");
            request.extend_from_slice(&buf[..n]);
        }
        let event = "event: ping\ndata: {\"type\":\"ping\"}\n\n";
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        let chunk = format!("{head}{:x}\r\n{event}\r\n", event.len());
        socket.write_all(chunk.as_bytes()).await.expect("write");
        let _ = arrived.send(());
        // Returns once the client has closed the connection.
        tokio::time::timeout(Duration::from_secs(5), socket.read(&mut buf)).await
    });
    let w = world_with(|s| s.base_url = url).await;
    let mut call = Box::pin(w.stream_one());
    // The call runs until its request is in and its stream started (however loaded the
    // machine), then a little longer, and is dropped while streaming.
    tokio::select! {
        _ = &mut call => panic!("the call ended while its stream was open"),
        _ = request_in => {}
    }
    assert!(tokio::time::timeout(Duration::from_millis(300), &mut call).await.is_err(), "still streaming when dropped");
    drop(call);
    let closed = server.await.expect("server task");
    assert!(matches!(closed, Ok(Ok(0))), "the connection was closed when the call was dropped: {closed:?}");
    assert_eq!(w.latencies(), [-1], "the dropped attempt is logged as a failure");
}

//! The fake Messages API itself, driven by a plain HTTP client: scripting, recording,
//! streaming, and the failure modes it can produce.

use std::time::{Duration, Instant};

use paige_fake_anthropic::{CALL_TYPE_HEADER, FakeAnthropic, Matcher, Reply, web_search_blocks};
use serde_json::{Value, json};

async fn post(fake: &FakeAnthropic, call_type: &str, body: Value) -> reqwest::Result<reqwest::Response> {
    reqwest::Client::new()
        .post(format!("{}/v1/messages", fake.base_url()))
        .header("x-api-key", "k")
        .header("anthropic-version", "2023-06-01")
        .header(CALL_TYPE_HEADER, call_type)
        .json(&body)
        .send()
        .await
}

fn body(stream: bool) -> Value {
    json!({"model": "claude-haiku-4-5-20251001", "max_tokens": 10, "system": "You are the Observer.",
           "messages": [{"role": "user", "content": "hi"}], "stream": stream})
}

#[tokio::test]
async fn answers_by_call_type_in_script_order_and_records_every_request() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.once(Matcher::call_type("a"), Reply::rate_limited(3));
    fake.always(Matcher::call_type("a"), Reply::json(&json!({"n": 1})).with_usage(7, 3));
    fake.always(Matcher::call_type("b"), Reply::text("for b"));

    let first = post(&fake, "a", body(false)).await.expect("sent");
    assert_eq!(first.status(), 429);
    assert_eq!(first.headers()["retry-after"], "3");
    let error: Value = first.json().await.expect("json");
    assert_eq!(error["error"]["type"], "rate_limit_error");

    let second: Value = post(&fake, "a", body(false)).await.expect("sent").json().await.expect("json");
    assert_eq!(second["content"][0]["text"], r#"{"n":1}"#);
    assert_eq!(second["stop_reason"], "end_turn");
    assert_eq!(second["model"], "claude-haiku-4-5-20251001", "echoes the request's model");
    assert_eq!(second["usage"]["input_tokens"], 7);
    assert_eq!(second["usage"]["output_tokens"], 3);

    let third: Value = post(&fake, "b", body(false)).await.expect("sent").json().await.expect("json");
    assert_eq!(third["content"][0]["text"], "for b");

    let recorded = fake.message_requests();
    assert_eq!(recorded.iter().map(|r| r.call_type().unwrap_or("")).collect::<Vec<_>>(), ["a", "a", "b"]);
    assert_eq!(recorded[0].system(), Some("You are the Observer."));
    assert_eq!(recorded[0].user_message(), Some("hi"));
    assert_eq!(recorded[0].header("x-api-key"), Some("k"));
}

#[tokio::test]
async fn an_unscripted_call_gets_a_400_naming_its_call_type() {
    let fake = FakeAnthropic::start().await.expect("start");
    let response = post(&fake, "coach_agent", body(false)).await.expect("sent");
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.expect("json");
    assert_eq!(error["error"]["message"], "fake-anthropic: no scripted reply for call type \"coach_agent\"");
}

#[tokio::test]
async fn a_wrong_key_gets_401_once_a_key_is_required() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.require_api_key("other");
    fake.always(Matcher::Any, Reply::text("never"));
    let response = post(&fake, "a", body(false)).await.expect("sent");
    assert_eq!(response.status(), 401);
    let error: Value = response.json().await.expect("json");
    assert_eq!(error["error"]["type"], "authentication_error");
}

#[tokio::test]
async fn streams_server_sent_events_in_the_messages_api_shape() {
    let fake = FakeAnthropic::start().await.expect("start");
    let answer = "a fairly long answer that is split into several deltas";
    fake.always(Matcher::Any, Reply::text(answer).with_blocks_before(web_search_blocks("q")).with_usage(11, 22));
    let response = post(&fake, "a", body(true)).await.expect("sent");
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.expect("body");

    let events: Vec<(String, Value)> = text
        .split("\n\n")
        .filter(|chunk| !chunk.trim().is_empty())
        .map(|chunk| {
            let name = chunk.lines().find_map(|l| l.strip_prefix("event: ")).expect("event line");
            let data = chunk.lines().find_map(|l| l.strip_prefix("data: ")).expect("data line");
            (name.to_owned(), serde_json::from_str(data).expect("data is json"))
        })
        .collect();
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
    for (name, data) in &events {
        assert_eq!(data["type"], name.as_str(), "event name and data type agree");
    }
    assert_eq!(events[0].1["message"]["usage"]["input_tokens"], 11);
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(delta["usage"]["output_tokens"], 22);

    // The last text block (index 3, after the search blocks) reassembles from its deltas.
    let streamed: String = events
        .iter()
        .filter(|(n, d)| n == "content_block_delta" && d["index"] == 3)
        .map(|(_, d)| d["delta"]["text"].as_str().expect("text delta"))
        .collect();
    assert_eq!(streamed, answer);
    assert!(events.iter().filter(|(n, d)| n == "content_block_delta" && d["index"] == 3).count() > 1);
    let starts: Vec<&Value> =
        events.iter().filter(|(n, _)| n == "content_block_start").map(|(_, d)| &d["content_block"]["type"]).collect();
    assert_eq!(starts, [&json!("server_tool_use"), &json!("web_search_tool_result"), &json!("text"), &json!("text")]);
}

#[tokio::test]
async fn refusal_and_max_tokens_set_the_stop_reason() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.once(Matcher::Any, Reply::refusal("no"));
    fake.once(Matcher::Any, Reply::max_tokens("{\"a\":"));
    let refusal: Value = post(&fake, "a", body(false)).await.expect("sent").json().await.expect("json");
    assert_eq!(
        (refusal["stop_reason"].as_str(), refusal["content"][0]["text"].as_str()),
        (Some("refusal"), Some("no"))
    );
    let truncated: Value = post(&fake, "a", body(false)).await.expect("sent").json().await.expect("json");
    assert_eq!(truncated["stop_reason"], "max_tokens");
}

#[tokio::test]
async fn server_errors_dropped_connections_and_slow_replies() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.once(Matcher::Any, Reply::server_error());
    fake.once(Matcher::Any, Reply::dropped());
    fake.once(Matcher::Any, Reply::text("late").delayed(Duration::from_millis(300)));

    assert_eq!(post(&fake, "a", body(false)).await.expect("sent").status(), 500);
    let dropped = post(&fake, "a", body(false)).await;
    assert!(dropped.is_err(), "the connection closed without an answer: {dropped:?}");
    let started = Instant::now();
    assert_eq!(post(&fake, "a", body(false)).await.expect("sent").status(), 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(fake.message_requests().len(), 3, "the dropped request was still recorded");
}

#[tokio::test]
async fn lists_models_for_key_checks() {
    let fake = FakeAnthropic::start().await.expect("start");
    let response = reqwest::Client::new()
        .get(format!("{}/v1/models?limit=1", fake.base_url()))
        .header("x-api-key", "k")
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 200);
    let list: Value = response.json().await.expect("json");
    assert_eq!(list["data"][0]["type"], "model");
}

/// The `(event, data)` pairs of an SSE body.
fn sse_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|chunk| !chunk.trim().is_empty())
        .map(|chunk| {
            let name = chunk.lines().find_map(|l| l.strip_prefix("event: ")).expect("event line");
            let data = chunk.lines().find_map(|l| l.strip_prefix("data: ")).expect("data line");
            (name.to_owned(), serde_json::from_str(data).expect("data is json"))
        })
        .collect()
}

fn text_deltas(events: &[(String, Value)]) -> Vec<String> {
    events
        .iter()
        .filter(|(_, d)| d["delta"]["type"] == "text_delta")
        .map(|(_, d)| d["delta"]["text"].as_str().expect("text").to_owned())
        .collect()
}

#[tokio::test]
async fn scripted_text_deltas_are_sent_as_given_each_after_the_pause() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.always(
        Matcher::Any,
        Reply::text_deltas(&["One. ", "Two. ", "Three."]).with_delta_pause(Duration::from_millis(200)),
    );
    let mut response = post(&fake, "a", body(true)).await.expect("sent");
    let started = Instant::now();
    let mut arrivals = Vec::new();
    let mut received = String::new();
    while let Some(chunk) = response.chunk().await.expect("chunk") {
        let chunk = String::from_utf8(chunk.to_vec()).expect("utf8");
        if chunk.contains("text_delta") {
            arrivals.push(started.elapsed());
        }
        received.push_str(&chunk);
    }
    let events = sse_events(&received);
    assert_eq!(text_deltas(&events), ["One. ", "Two. ", "Three."]);
    assert_eq!(events.last().map(|(n, _)| n.as_str()), Some("message_stop"));
    assert_eq!(arrivals.len(), 3, "one chunk per delta");
    // Paced, not sent at once: two pauses of 200 ms lie between the first delta and the last.
    // Their arrival is measured at the client, where a loaded machine can deliver the first
    // one late (and so the span short) by a few milliseconds: 10 % slack.
    assert!(arrivals[2] - arrivals[0] >= Duration::from_millis(360), "paced: {arrivals:?}");

    let plain: Value = post(&fake, "a", body(false)).await.expect("sent").json().await.expect("json");
    assert_eq!(plain["content"][0]["text"], "One. Two. Three.", "a plain request gets the whole text");
}

#[tokio::test]
async fn a_cut_stream_ends_after_its_deltas_without_message_delta_or_message_stop() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.always(Matcher::Any, Reply::text_deltas(&["a", "b", "c"]).cut_after(2));
    let text = post(&fake, "a", body(true)).await.expect("sent").text().await.expect("the body ends cleanly");
    let events = sse_events(&text);
    assert_eq!(text_deltas(&events), ["a", "b"]);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert!(!names.contains(&"message_delta") && !names.contains(&"message_stop"), "{names:?}");
}

#[tokio::test]
async fn an_error_event_ends_the_stream_after_its_deltas() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.always(Matcher::Any, Reply::text_deltas(&["a", "b"]).error_event_after(1, "overloaded_error", "Overloaded"));
    let text = post(&fake, "a", body(true)).await.expect("sent").text().await.expect("body");
    let events = sse_events(&text);
    assert_eq!(text_deltas(&events), ["a"]);
    let (name, data) = events.last().expect("events");
    assert_eq!(name, "error");
    assert_eq!(data["error"], json!({"type": "overloaded_error", "message": "Overloaded"}));
}

#[tokio::test]
async fn a_stalled_stream_sends_nothing_after_its_deltas_and_keeps_the_connection_open() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.always(Matcher::Any, Reply::text_deltas(&["a", "b"]).stall_after(1));
    let mut response = post(&fake, "a", body(true)).await.expect("sent");
    let mut received = String::new();
    // Ends when no chunk came for 300 ms.
    while let Ok(chunk) = tokio::time::timeout(Duration::from_millis(300), response.chunk()).await {
        match chunk.expect("chunk") {
            Some(chunk) => received.push_str(&String::from_utf8_lossy(&chunk)),
            None => panic!("the stream ended instead of stalling: {received}"),
        }
    }
    assert_eq!(text_deltas(&sse_events(&received)), ["a"]);
}

#[tokio::test]
async fn a_stalled_plain_answer_sends_its_head_and_half_its_body_then_nothing() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.always(Matcher::Any, Reply::text("a complete answer that never arrives").stall_after(0));
    let mut response = post(&fake, "a", body(false)).await.expect("the head arrives");
    assert_eq!(response.status(), 200);
    let length: usize = response.headers()["content-length"].to_str().expect("ascii").parse().expect("number");
    let mut received = Vec::new();
    while let Ok(chunk) = tokio::time::timeout(Duration::from_millis(300), response.chunk()).await {
        match chunk {
            Ok(Some(chunk)) => received.extend_from_slice(&chunk),
            other => panic!("the body ended instead of stalling: {other:?}"),
        }
    }
    assert_eq!(received.len(), length / 2, "half the body, then silence");
}

#[tokio::test]
async fn a_paused_web_search_turn_has_the_search_and_no_answer_and_the_continuation_is_recorded() {
    let fake = FakeAnthropic::start().await.expect("start");
    fake.once(Matcher::Any, Reply::pause_turn("rust ownership"));
    fake.once(Matcher::Any, Reply::text("done"));
    let paused: Value = post(&fake, "a", body(false)).await.expect("sent").json().await.expect("json");
    assert_eq!(paused["stop_reason"], "pause_turn");
    let kinds: Vec<&str> =
        paused["content"].as_array().expect("blocks").iter().filter_map(|b| b["type"].as_str()).collect();
    assert_eq!(kinds, ["server_tool_use", "web_search_tool_result"]);
    let mut again = body(false);
    again["messages"]
        .as_array_mut()
        .expect("messages")
        .push(json!({"role": "assistant", "content": paused["content"]}));
    let done: Value = post(&fake, "a", again).await.expect("sent").json().await.expect("json");
    assert_eq!(done["stop_reason"], "end_turn");
    let recorded = fake.message_requests();
    assert_eq!(recorded[1].messages().len(), 2);
    assert_eq!(recorded[1].messages()[1]["content"], paused["content"], "the paused content went back verbatim");
}

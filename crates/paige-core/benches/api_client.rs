//! Client overhead per call (issue 7's closing measurement; target ≤ 1 ms excluding the
//! server's time).
//!
//! Both paths talk to the same local fake Messages API over real HTTP on one runtime:
//! - raw: a bare `reqwest` POST of the already-encoded request body, reading the response bytes;
//! - client: `ApiClient::call` — request encoding, input hash, HTTP, answer parsing into the
//!   typed response, and the `api_call_log` insert into a SQLite file (WAL).
//!
//! The server's time is the same on both paths, so overhead = client − raw (medians).
//! Run: `cargo bench -p paige-core --bench api_client` (release).

use std::sync::Arc;
use std::time::{Duration, Instant};

use paige_core::SystemClock;
use paige_core::api::{ApiClient, ApiSettings, CallOptions, StructuredOutput};
use paige_core::db::{Db, NewApiCall};
use paige_core::prompts::observer_triage::{self, ObserverTriageResponse};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};

const WARMUP: usize = 200;
const ITERATIONS: usize = 2000;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(bench());
}

async fn bench() {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    let example: Value =
        serde_json::from_str(include_str!("../../../prompts/observer-triage/example.json")).expect("example answer");
    fake.always(Matcher::Any, Reply::json(&example).with_usage(1500, 120));

    let dir = tempfile::tempdir().expect("temp dir");
    let db = Db::open(&dir.path().join("paige.db"), Arc::new(SystemClock)).expect("db");
    let settings = ApiSettings { base_url: fake.base_url(), ..ApiSettings::new(Some("sk-bench".into())) };
    let client = ApiClient::new(settings).expect("client");

    let user_message = json!({
        "current_phase": {"number": 2, "title": "Add the retry", "description": "Wrap the fetch call",
                          "expected_files": ["src/api/client.ts"]},
        "recent_actions": (0..20).map(|i| json!({"type": "file_save", "path": "src/api/client.ts", "ago": format!("{i}m ago")}))
            .collect::<Vec<_>>(),
        "time_since_last_save": "1m", "time_since_last_nudge": "never", "dreyfus_stage": "novice", "user_idle": false
    })
    .to_string();
    let options = CallOptions::new(
        observer_triage::CALL_TYPE,
        observer_triage::MODEL,
        observer_triage::SYSTEM_PROMPT,
        &user_message,
    );

    let raw = reqwest::Client::new();
    let url = format!("{}/v1/messages", fake.base_url());
    let raw_body = serde_json::to_vec(&json!({
        "model": "claude-haiku-4-5-20251001", "max_tokens": 4096, "system": observer_triage::SYSTEM_PROMPT,
        "messages": [{"role": "user", "content": user_message}],
        "output_config": {"format": {"type": "json_schema", "schema": ObserverTriageResponse::output_schema()}}
    }))
    .expect("body");

    let raw_call = || async {
        let response = raw
            .post(&url)
            .header("x-api-key", "sk-bench")
            .header("anthropic-version", "2023-06-01")
            .header("content-type", "application/json")
            .body(raw_body.clone())
            .send()
            .await
            .expect("raw post");
        response.bytes().await.expect("raw body");
    };
    let client_call = || async {
        client.call::<ObserverTriageResponse>(&db, &options).await.expect("client call");
    };

    for _ in 0..WARMUP {
        raw_call().await;
        client_call().await;
    }
    let (mut raw_times, mut client_times, mut log_times) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ITERATIONS {
        let started = Instant::now();
        raw_call().await;
        raw_times.push(started.elapsed());
        let started = Instant::now();
        client_call().await;
        client_times.push(started.elapsed());
        let started = Instant::now();
        db.log_api_call(NewApiCall {
            session_id: None,
            call_type: "bench".into(),
            model: "m".into(),
            input_hash: "h".into(),
            latency_ms: 1,
            input_tokens: 1,
            output_tokens: 1,
            cost_estimate: 0.0,
        })
        .expect("log");
        log_times.push(started.elapsed());
    }

    let (raw_p50, raw_p90) = percentiles(&mut raw_times);
    let (client_p50, client_p90) = percentiles(&mut client_times);
    let (log_p50, _) = percentiles(&mut log_times);
    println!("api_client bench: {ITERATIONS} calls each, after {WARMUP} warm-up, fake server on 127.0.0.1");
    println!("  request body {} bytes; answer {} bytes", raw_body.len(), example.to_string().len());
    println!("  raw reqwest POST       median {:>8.1} µs   p90 {:>8.1} µs", us(raw_p50), us(raw_p90));
    println!("  ApiClient::call        median {:>8.1} µs   p90 {:>8.1} µs", us(client_p50), us(client_p90));
    println!("  of which api_call_log  median {:>8.1} µs (insert alone)", us(log_p50));
    let overhead = client_p50.saturating_sub(raw_p50);
    println!(
        "  client overhead per call (median client − median raw): {:.1} µs = {:.3} ms (target ≤ 1 ms): {}",
        us(overhead),
        overhead.as_secs_f64() * 1000.0,
        if overhead <= Duration::from_millis(1) { "met" } else { "NOT met" }
    );
}

fn percentiles(times: &mut [Duration]) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[times.len() * 9 / 10])
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

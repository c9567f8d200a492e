//! The Claude API client against the fake Messages API over real HTTP (Story 7, D68, D83).

use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use paige_core::api::*;
use paige_core::db::{ApiCall, Db, NewSession};
use paige_core::prompts::observer_triage;
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply, web_search_blocks};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::clock;

/// The response type of these tests.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
pub(crate) struct Verdict {
    pub(crate) ok: bool,
    pub(crate) note: Option<String>,
}

impl StructuredOutput for Verdict {
    fn output_schema() -> &'static Value {
        static SCHEMA: LazyLock<Value> = LazyLock::new(structured_schema::<Verdict>);
        &SCHEMA
    }
}

pub(crate) const KEY: &str = "sk-ant-test";

/// A client against a fresh fake, a database and a session: what every client test needs
/// (the streaming tests too).
pub(crate) struct World {
    pub(crate) fake: FakeAnthropic,
    pub(crate) client: ApiClient,
    pub(crate) db: Arc<Db>,
    pub(crate) session: String,
    _dir: tempfile::TempDir,
}

/// Fast retries, so tests of the retry schedule take milliseconds.
fn settings(base_url: &str) -> ApiSettings {
    ApiSettings {
        base_url: base_url.to_owned(),
        retry_base_delay: Duration::from_millis(5),
        retry_max_delay: Duration::from_millis(20),
        transient_retry_delay: Duration::from_millis(5),
        timeout: Duration::from_secs(10),
        ..ApiSettings::new(Some(KEY.into()))
    }
}

pub(crate) async fn world_with(adjust: impl FnOnce(&mut ApiSettings)) -> World {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    fake.require_api_key(KEY);
    let mut settings = settings(&fake.base_url());
    adjust(&mut settings);
    let client = ApiClient::new(settings).expect("client");
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Db::open(&dir.path().join("paige.db"), clock()).expect("db");
    let session = db
        .create_session(NewSession { project_dir: "/p".into(), issue_number: None, issue_title: None })
        .expect("session")
        .id;
    World { fake, client, db: Arc::new(db), session, _dir: dir }
}

async fn world() -> World {
    world_with(|_| {}).await
}

impl World {
    fn options<'a>(&'a self, call_type: &'a str, model: ModelTier, user_message: &'a str) -> CallOptions<'a> {
        CallOptions {
            session_id: Some(&self.session),
            ..CallOptions::new(call_type, model, "You judge things.", user_message)
        }
    }

    async fn call(&self, options: &CallOptions<'_>) -> Result<Verdict, ApiError> {
        self.client.call::<Verdict>(&self.db, options).await
    }

    async fn call_haiku(&self) -> Result<Verdict, ApiError> {
        self.call(&self.options("test_call", ModelTier::Haiku, "is this ok?")).await
    }

    pub(crate) fn rows(&self) -> Vec<ApiCall> {
        self.db.api_calls_for_session(&self.session).expect("rows")
    }

    /// The sign of each logged attempt's latency, oldest first (-1 = failure).
    pub(crate) fn latencies(&self) -> Vec<i64> {
        self.rows().iter().map(|row| row.latency_ms.signum()).collect()
    }
}

pub(crate) fn verdict() -> Value {
    json!({"ok": true, "note": "fine"})
}

pub(crate) fn assert_failure_row(row: &ApiCall) {
    assert_eq!((row.latency_ms, row.input_tokens, row.output_tokens, row.cost_estimate), (-1, 0, 0, 0.0), "{row:?}");
}

#[tokio::test]
async fn haiku_request_carries_model_id_default_max_tokens_schema_headers_and_no_tools() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::json(&verdict()));
    w.call_haiku().await.expect("call succeeds");

    let requests = w.fake.message_requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.call_type(), Some("test_call"));
    let body = &request.body;
    assert_eq!(body["model"], "claude-haiku-4-5-20251001");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["system"], "You judge things.");
    assert_eq!(body["messages"], json!([{"role": "user", "content": "is this ok?"}]));
    assert_eq!(body["output_config"]["format"]["type"], "json_schema");
    assert_eq!(&body["output_config"]["format"]["schema"], Verdict::output_schema());
    assert_eq!(body["output_config"]["format"]["schema"]["additionalProperties"], false);
    assert!(body.get("tools").is_none(), "no tools unless asked: {body}");
    assert!(body.get("stream").is_none());
}

#[tokio::test]
async fn sonnet_request_carries_its_model_id_custom_max_tokens_and_the_given_tools() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::json(&verdict()));
    let tools = [ServerTool::web_search()];
    let options = CallOptions {
        max_tokens: Some(8192),
        tools: &tools,
        ..w.options("learning_materials", ModelTier::Sonnet, "gaps")
    };
    w.call(&options).await.expect("call succeeds");

    let body = &w.fake.message_requests()[0].body;
    assert_eq!(body["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["tools"], json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]));
}

#[tokio::test]
async fn success_returns_the_typed_answer_and_logs_one_complete_row_with_the_hand_computed_cost() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::json(&json!({"ok": false, "note": null})).with_usage(1200, 350));
    let options = w.options("coach_agent", ModelTier::Sonnet, "hello");
    let answer = w.call(&options).await.expect("call succeeds");
    assert_eq!(answer, Verdict { ok: false, note: None });

    let rows = w.rows();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.session_id.as_deref(), Some(w.session.as_str()));
    assert_eq!(row.call_type, "coach_agent");
    assert_eq!(row.model, "claude-sonnet-4-5-20250929");
    // SHA-256("hello") = 2cf24dba5fb0a30e26e83b2ac5b9e29e...
    assert_eq!(row.input_hash, "2cf24dba5fb0a30e");
    assert!(row.latency_ms > 0, "{row:?}");
    assert_eq!((row.input_tokens, row.output_tokens), (1200, 350));
    // (1200 × $3.00 + 350 × $15.00) / 1M
    assert!((row.cost_estimate - 0.00885).abs() < 1e-12, "{}", row.cost_estimate);
    assert_eq!(row.created_at, clock_now());
}

fn clock_now() -> chrono::DateTime<chrono::Utc> {
    use paige_core::Clock;
    clock().now()
}

#[tokio::test]
async fn haiku_cost_uses_the_haiku_rates() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::json(&verdict()).with_usage(1000, 500));
    w.call_haiku().await.expect("call succeeds");
    // (1000 × $0.80 + 500 × $4.00) / 1M
    assert!((w.rows()[0].cost_estimate - 0.0028).abs() < 1e-12);
    assert_eq!(input_hash("hello"), "2cf24dba5fb0a30e");
}

#[tokio::test]
async fn refusal_is_an_error_with_the_refusal_text_logged_as_a_failure_and_not_retried() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::refusal("I can't help with that."));
    let err = w.call_haiku().await.expect_err("refused");
    assert_eq!(err, ApiError::Refusal { text: "I can't help with that.".into() });
    assert_eq!(w.fake.message_requests().len(), 1);
    let rows = w.rows();
    assert_eq!(rows.len(), 1);
    assert_failure_row(&rows[0]);
    assert_eq!(rows[0].model, "claude-haiku-4-5-20251001");
}

#[tokio::test]
async fn max_tokens_is_a_truncation_error_logged_as_a_failure_and_not_retried() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::max_tokens("{\"ok\": tr"));
    let options = CallOptions { max_tokens: Some(16), ..w.options("test_call", ModelTier::Haiku, "x") };
    let err = w.call(&options).await.expect_err("truncated");
    assert_eq!(err, ApiError::MaxTokens { max_tokens: 16 });
    assert_eq!(w.fake.message_requests().len(), 1);
    assert_failure_row(&w.rows()[0]);
}

#[tokio::test]
async fn rate_limit_then_success_waits_for_retry_after_and_logs_both_attempts() {
    let w = world().await;
    w.fake.once(Matcher::Any, Reply::rate_limited(1));
    w.fake.once(Matcher::Any, Reply::json(&verdict()));
    let started = Instant::now();
    let answer = w.call_haiku().await.expect("second attempt succeeds");
    assert!(answer.ok);
    assert!(started.elapsed() >= Duration::from_secs(1), "retry-after: 1 was honoured");
    assert_eq!(w.fake.message_requests().len(), 2);
    assert_eq!(w.latencies(), [-1, 1]);
    assert_failure_row(&w.rows()[0]);
}

#[tokio::test]
async fn unauthorized_is_an_authentication_error_and_never_retried() {
    let w = world_with(|s| s.api_key = Some("sk-wrong".into())).await;
    w.fake.always(Matcher::Any, Reply::json(&verdict()));
    let err = w.call_haiku().await.expect_err("bad key");
    assert!(matches!(err, ApiError::Authentication { status: 401, .. }), "{err:?}");
    assert!(!err.is_transient());
    assert_eq!(w.fake.message_requests().len(), 1);
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test]
async fn server_errors_are_retried_twice_then_reported_with_every_attempt_logged() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::server_error());
    let err = w.call_haiku().await.expect_err("keeps failing");
    assert!(matches!(err, ApiError::Server { status: 500, .. }), "{err:?}");
    assert_eq!(w.fake.message_requests().len(), 3, "first attempt + 2 retries");
    assert_eq!(w.latencies(), [-1, -1, -1]);
}

#[tokio::test]
async fn overloaded_then_success_is_retried() {
    let w = world().await;
    w.fake.once(Matcher::Any, Reply::overloaded());
    w.fake.once(Matcher::Any, Reply::json(&verdict()));
    w.call_haiku().await.expect("retried");
    assert_eq!(w.latencies(), [-1, 1]);
}

#[tokio::test]
async fn x_should_retry_false_stops_the_retries() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::server_error().with_header("x-should-retry", "false"));
    w.call_haiku().await.expect_err("fails");
    assert_eq!(w.fake.message_requests().len(), 1);
}

#[tokio::test]
async fn dropped_connection_is_a_transport_error_that_is_retried() {
    let w = world().await;
    w.fake.once(Matcher::Any, Reply::dropped());
    w.fake.once(Matcher::Any, Reply::json(&verdict()));
    w.call_haiku().await.expect("retry succeeds");
    assert_eq!(w.latencies(), [-1, 1]);

    let w = world().await;
    w.fake.always(Matcher::Any, Reply::dropped());
    let err = w.call_haiku().await.expect_err("always dropped");
    assert!(matches!(err, ApiError::Transport { .. }), "{err:?}");
    assert_eq!(w.latencies(), [-1, -1, -1]);
}

#[tokio::test]
async fn slow_response_times_out_and_is_logged() {
    let w = world_with(|s| {
        s.timeout = Duration::from_millis(200);
        s.max_retries = 1;
    })
    .await;
    w.fake.always(Matcher::Any, Reply::json(&verdict()).delayed(Duration::from_secs(3)));
    let started = Instant::now();
    let err = w.call_haiku().await.expect_err("too slow");
    assert_eq!(err, ApiError::Timeout { after: Duration::from_millis(200) });
    assert!(started.elapsed() < Duration::from_secs(2), "gave up at the timeout");
    assert_eq!(w.latencies(), [-1, -1]);
}

#[tokio::test]
async fn unreachable_api_is_a_transport_error() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let w = world_with(|s| s.base_url = url).await;
    let err = w.call_haiku().await.expect_err("nothing listens");
    assert!(matches!(err, ApiError::Transport { .. }), "{err:?}");
    assert!(err.to_string().starts_with("cannot reach the Anthropic API"), "{err}");
    assert_eq!(w.latencies(), [-1, -1, -1]);
}

#[tokio::test]
async fn without_a_key_calls_fail_with_not_configured_and_nothing_is_sent() {
    let w = world_with(|s| s.api_key = None).await;
    assert!(!w.client.is_configured());
    let err = w.call_haiku().await.expect_err("no key");
    assert_eq!(err, ApiError::NotConfigured);
    assert!(err.to_string().starts_with("Anthropic API key not configured"), "{err}");
    assert!(w.fake.requests().is_empty());
    assert_eq!(w.latencies(), [-1]);
    assert_eq!(w.client.check_key().await, Err(ApiError::NotConfigured));
}

#[tokio::test]
async fn server_tool_blocks_before_the_answer_are_skipped() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::json(&verdict()).with_blocks_before(web_search_blocks("rust async")));
    let answer = w.call_haiku().await.expect("answer after the search blocks");
    assert_eq!(answer, Verdict { ok: true, note: Some("fine".into()) });
}

#[tokio::test]
async fn an_answer_that_does_not_fit_the_type_is_an_invalid_response_and_not_retried() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::json(&json!({"verdict": "yes"})));
    let err = w.call_haiku().await.expect_err("wrong shape");
    assert!(matches!(err, ApiError::InvalidResponse { .. }), "{err:?}");
    assert_eq!(w.latencies(), [-1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_are_independent() {
    let w = Arc::new(world().await);
    for i in 0..8 {
        w.fake.always(
            Matcher::call_type(&format!("call_{i}")),
            Reply::json(&json!({"ok": true, "note": format!("{i}")})),
        );
    }
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..8 {
        let w = w.clone();
        tasks.spawn(async move {
            let call_type = format!("call_{i}");
            let message = format!("message {i}");
            let answer = w.call(&w.options(&call_type, ModelTier::Haiku, &message)).await.expect("call succeeds");
            (i, answer)
        });
    }
    let mut seen = Vec::new();
    while let Some(result) = tasks.join_next().await {
        let (i, answer) = result.expect("task");
        assert_eq!(answer.note, Some(format!("{i}")), "call {i} got another call's answer");
        seen.push(i);
    }
    seen.sort();
    assert_eq!(seen, (0..8).collect::<Vec<_>>());
    let mut logged: Vec<String> = w.rows().into_iter().map(|row| row.call_type).collect();
    logged.sort();
    assert_eq!(logged, (0..8).map(|i| format!("call_{i}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn call_with_retry_makes_one_more_attempt_after_a_transient_failure() {
    let w = world().await;
    for _ in 0..3 {
        w.fake.once(Matcher::Any, Reply::server_error());
    }
    w.fake.once(Matcher::Any, Reply::json(&verdict()));
    let options = w.options("explain_this", ModelTier::Sonnet, "explain");
    let answer = w.client.call_with_retry::<Verdict>(&w.db, &options).await.expect("the extra attempt succeeds");
    assert!(answer.ok);
    assert_eq!(w.latencies(), [-1, -1, -1, 1], "every attempt is logged");
}

#[tokio::test]
async fn call_with_retry_does_not_retry_refusals_or_auth_errors() {
    let w = world().await;
    w.fake.always(Matcher::Any, Reply::refusal("no"));
    let options = w.options("practice_review", ModelTier::Sonnet, "review");
    let err = w.client.call_with_retry::<Verdict>(&w.db, &options).await.expect_err("refused");
    assert!(matches!(err, ApiError::Refusal { .. }));
    assert_eq!(w.fake.message_requests().len(), 1);
}

#[tokio::test]
async fn a_prompt_module_call_is_matched_by_its_system_prompt_and_typed() {
    let w = world().await;
    let example =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../prompts/observer-triage/example.json"))
            .expect("example");
    let example: Value = serde_json::from_str(&example).expect("json");
    w.fake.always(Matcher::system_contains("You are the Observer"), Reply::json(&example));
    let context = observer_triage::TriageContext {
        current_phase: None,
        recent_actions: Vec::new(),
        time_since_last_save: "1m".into(),
        time_since_last_nudge: "never".into(),
        dreyfus_stage: "novice".into(),
        user_idle: false,
        step_check: None,
        reliance: None,
    };
    let message = observer_triage::assemble_user_message(&context);
    let options = CallOptions {
        session_id: Some(&w.session),
        ..CallOptions::new(observer_triage::CALL_TYPE, observer_triage::MODEL, observer_triage::SYSTEM_PROMPT, &message)
    };
    let answer: observer_triage::ObserverTriageResponse = w.client.call(&w.db, &options).await.expect("typed answer");
    assert_eq!(answer.signal, observer_triage::Signal::WrongFile);
    let request = &w.fake.message_requests()[0];
    assert_eq!(request.body["model"], "claude-haiku-4-5-20251001");
    let schema: Value = serde_json::from_str(observer_triage::SCHEMA_JSON).expect("schema");
    assert_eq!(request.body["output_config"]["format"]["schema"], schema, "the checked-in schema is what is sent");
    assert_eq!(w.rows()[0].call_type, "observer_triage");
}

#[tokio::test]
async fn check_key_accepts_a_good_key_and_reports_a_rejected_one() {
    let w = world().await;
    assert_eq!(w.client.check_key().await, Ok(()));
    let bad = ApiClient::new(ApiSettings { api_key: Some("sk-wrong".into()), ..settings(&w.fake.base_url()) })
        .expect("client");
    let err = bad.check_key().await.expect_err("rejected");
    assert!(matches!(err, ApiError::Authentication { status: 401, .. }), "{err:?}");
    assert!(w.rows().is_empty(), "checking the key is not a model call");
}

#[test]
fn the_client_and_the_fake_agree_on_the_call_type_header() {
    assert_eq!(CALL_TYPE_HEADER, paige_fake_anthropic::CALL_TYPE_HEADER);
}

#[test]
fn model_tiers_resolve_to_the_spec_models_and_prices() {
    let map = ModelMap::default();
    assert_eq!(map.resolve(ModelTier::Haiku).id, "claude-haiku-4-5-20251001");
    assert_eq!(map.resolve(ModelTier::Sonnet).id, "claude-sonnet-4-5-20250929");
    assert_eq!(map.resolve(ModelTier::Haiku).price, Price { input_per_mtok: 0.80, output_per_mtok: 4.00 });
    assert_eq!(map.resolve(ModelTier::Sonnet).price, Price { input_per_mtok: 3.00, output_per_mtok: 15.00 });
    let moved = ModelMap::with_overrides(None, Some(HAIKU_MODEL)).expect("known model");
    assert_eq!(moved.resolve(ModelTier::Sonnet).id, HAIKU_MODEL);
    assert!(ModelMap::with_overrides(Some("claude-unknown"), None).is_err());
}

#[tokio::test]
async fn core_holds_one_client_configured_from_anthropic_base_url_and_key() {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    fake.require_api_key(KEY);
    fake.always(Matcher::Any, Reply::json(&verdict()));
    let (project, data) = (tempfile::tempdir().expect("dir"), tempfile::tempdir().expect("dir"));
    let env: std::collections::HashMap<String, String> = [
        ("PROJECT_DIR", project.path().to_str().expect("utf8")),
        ("DATA_DIR", data.path().to_str().expect("utf8")),
        ("ANTHROPIC_API_KEY", KEY),
        ("ANTHROPIC_BASE_URL", &fake.base_url()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let config = paige_core::Config::load(&env, paige_core::ConfigOverrides::default()).expect("config");
    let core = paige_core::Core::open(config, clock()).expect("core opens");
    assert_eq!(core.api().settings().base_url, fake.base_url());

    let options = CallOptions::new("test_call", ModelTier::Haiku, "s", "u");
    let answer = core.api().call::<Verdict>(core.db(), &options).await.expect("call through the core's client");
    assert!(answer.ok);
    assert_eq!(core.db().budget_summary(None).expect("summary").calls, 1, "logged in the core's database");
}

#[tokio::test]
async fn a_key_saved_while_running_is_used_by_the_next_call_and_removing_it_turns_calls_off() {
    let w = world_with(|s| s.api_key = None).await;
    w.fake.always(Matcher::Any, Reply::json(&verdict()));
    assert_eq!(w.call_haiku().await.expect_err("no key yet"), ApiError::NotConfigured);

    w.client.set_api_key(Some(KEY.into()));
    assert!(w.client.is_configured());
    w.call_haiku().await.expect("the saved key is sent");
    let sent = w.fake.requests();
    assert_eq!(sent.last().and_then(|r| r.header("x-api-key")), Some(KEY));

    w.client.set_api_key(Some("   ".into()));
    assert!(!w.client.is_configured(), "a blank key is no key");
    assert_eq!(w.call_haiku().await.expect_err("key removed"), ApiError::NotConfigured);
}

//! paige-server over a real socket and through `oneshot`: guards, health, both MCP eras.

mod checks;
mod coaching;
mod completeness;
mod dashboard;
mod dashboard_cache;
mod dashboard_flows;
mod explain;
mod failures;
mod fuzz_mcp;
mod guard;
mod hooks;
mod hostile;
mod instance;
mod intake;
mod intake_corpus;
mod keepalive;
mod learner;
mod mcp;
mod model_errors;
mod observer;
mod practice;
mod reserve;
mod restarts;
mod save_refusals;
mod scoped_tokens;
mod security;
mod sessions;
mod tools;
mod ui;
mod wrapup;
mod ws;

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use paige_core::{Config, Core, ManualClock};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub const TOKEN: &str = "test-token-0123456789";

/// A core on temp dirs with a manual clock.
pub struct Fixture {
    pub core: Arc<Core>,
    pub clock: Arc<ManualClock>,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

pub fn fixture() -> Fixture {
    fixture_with(paige_core::Limits::default())
}

/// A fixture whose core has `limits` (caps and connection timeouts).
pub fn fixture_with(limits: paige_core::Limits) -> Fixture {
    let project = tempfile::tempdir().expect("project dir");
    let data = tempfile::tempdir().expect("data dir");
    let config = Config {
        token: Some(TOKEN.into()),
        limits,
        // Tests never reach the internet: a model call fails at once on a closed local port.
        anthropic_base_url: Some("http://127.0.0.1:9".into()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "test-key")
    };
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).single().expect("date")));
    let core = Arc::new(Core::open(config, clock.clone()).expect("core opens"));
    Fixture { core, clock, _dirs: (project, data) }
}

/// The app served on 127.0.0.1:<free port> until dropped.
pub struct Running {
    pub base: String,
    pub sessions: paige_server::McpSessions,
    pub stop: CancellationToken,
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
    pub fixture: Fixture,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

pub async fn running() -> Running {
    running_with(paige_core::Limits::default()).await
}

pub async fn running_with(limits: paige_core::Limits) -> Running {
    serve_fixture(fixture_with(limits)).await
}

impl Fixture {
    /// A fixture over a core opened elsewhere, keeping its project and data dirs alive.
    pub fn new(core: Arc<Core>, clock: Arc<ManualClock>, dirs: (tempfile::TempDir, tempfile::TempDir)) -> Fixture {
        Fixture { core, clock, _dirs: dirs }
    }
}

/// A served core that calls `fake` for the model and remembers in the real embedded store
/// (the model from `PAIGE_MODEL_DIR`, set by scripts/test.sh): the coaching tests' server.
/// The project holds `src/auth.rs` (three lines).
pub async fn coaching_server(fake: &paige_fake_anthropic::FakeAnthropic) -> Running {
    coaching_server_with(fake, |_| {}).await
}

/// [`coaching_server`] with its `Config` changed by `tweak` first.
pub async fn coaching_server_with(
    fake: &paige_fake_anthropic::FakeAnthropic,
    tweak: impl FnOnce(&mut Config),
) -> Running {
    let project = tempfile::tempdir().expect("project dir");
    let data = tempfile::tempdir().expect("data dir");
    std::fs::create_dir_all(project.path().join("src")).expect("src");
    std::fs::write(project.path().join("src/auth.rs"), "fn login() {}\nfn callback() {}\nfn token() {}\n")
        .expect("file");
    let models = std::env::var("PAIGE_MODEL_DIR").expect("PAIGE_MODEL_DIR is not set: run scripts/test.sh");
    let mut config = Config {
        token: Some(TOKEN.into()),
        anthropic_base_url: Some(fake.base_url()),
        model_dir: Some(models.into()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "test-key")
    };
    tweak(&mut config);
    let memory = paige_memory::open(&config, &[]);
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).single().expect("date")));
    let core = Core::open(config, clock.clone()).expect("core opens").with_memory(memory);
    serve_fixture(Fixture::new(Arc::new(core), clock, (project, data))).await
}

/// Serves `fixture`'s core on 127.0.0.1:<free port> until dropped.
pub async fn serve_fixture(fixture: Fixture) -> Running {
    let server = paige_server::app(fixture.core.clone(), TOKEN);
    let sessions = server.mcp_sessions.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://127.0.0.1:{}", listener.local_addr().expect("addr").port());
    let stop = CancellationToken::new();
    let task = tokio::spawn(paige_server::serve(listener, server, stop.clone()));
    Running { base, sessions, stop, task, fixture }
}

pub fn initialize_body() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1"}}
    })
}

/// A 2026-07-28 request: self-contained, no session, protocol in header and `_meta`.
pub fn stateless_tools_list_body() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/list",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    })
}

/// POSTs a JSON-RPC message to /mcp with the headers a Streamable HTTP client sends.
pub async fn post_mcp(base: &str, body: &Value, headers: &[(&str, &str)]) -> reqwest::Response {
    let version = body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str().unwrap_or("2025-11-25");
    let mut request = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", version)
        .json(body);
    if let Some(method) = body["method"].as_str() {
        request = request.header("Mcp-Method", method);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("request sent")
}

/// The JSON-RPC message in a response body, whether sent as JSON or as an SSE event.
pub async fn rpc_message(response: reqwest::Response) -> Value {
    let text = response.text().await.expect("body");
    if let Ok(value) = serde_json::from_str(&text) {
        return value;
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|value| value.get("jsonrpc").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {text:?}"))
}

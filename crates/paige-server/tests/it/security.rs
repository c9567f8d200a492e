//! Security (issue 19): who may talk to the server, what Paige leaves readable on disk, what
//! the MCP surface may change. The one place to read for the list: what earlier issues test
//! stays where it is and is named here (`core::` is paige-core's suite; `disk` is this
//! suite's files on disk).
//!
//! - Foreign and rebinding Host, foreign and `null` Origin, missing and wrong token, on every
//!   route: `every_route_refuses_...` (a plain std `TcpStream` client); `src/guard.rs` unit
//!   tables; `guard::foreign_host_is_forbidden_on_every_route`, `guard::mcp_without_the_...`,
//!   `ws::ws_needs_the_token_...`, `hooks::hooks_require_the_token`,
//!   `ui::ui_routes_keep_the_loopback_guard`, `hostile::the_token_is_taken_from_the_url_...`.
//! - `server.json`, settings, the database and Claude Code's token-bearing config 0600, their
//!   directories 0700: `disk::a_started_instance_...`, `disk::the_run_file_is_private_...`,
//!   `disk::claude_codes_mcp_config_and_settings_...`;
//!   `core::run_info::run_file_is_owner_only_...`, `core::settings::a_saved_key_round_trips_...`,
//!   `core::hostile::a_fresh_data_dir_and_the_database_files_are_private`.
//! - Symlink races on writes and reads: `core::hostile::a_directory_swapped_for_a_symlink_...`,
//!   `core::hostile::a_save_onto_a_special_file_or_through_a_swapped_symlink_...`,
//!   `core::path_guard::*`, `hostile::mcp_open_file_never_shows_a_file_outside_...`; planted
//!   links: `disk::the_run_file_is_private_...`, `disk::governance_files_that_are_fifos_...`,
//!   `disk::an_orchestration_dir_linked_out_of_the_project_...`.
//! - No write path over MCP: `no_mcp_tool_is_write_capable_...` (both eras, every tool called
//!   with arguments made from its schema); `tools::no_tool_can_write_a_file`,
//!   `fuzz_mcp::random_tool_arguments_...`.
//! - FIFOs, devices and huge files never hang or exhaust:
//!   `core::hostile::fifos_sockets_and_devices_are_refused_at_once`,
//!   `core::hostile::a_file_over_the_size_cap_...`, `core::files::a_fifo_named_gitignore_...`,
//!   `hostile::fifos_and_huge_files_get_clear_errors_over_ws_and_mcp_...`,
//!   `disk::governance_files_that_are_fifos_...` (the intents, the ledger, the lessons files).

mod disk;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use paige_core::{Config, Core, ManualClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::{Value, json};

use crate::fuzz_mcp::{snapshot, start_session_with_a_plan};
use crate::tools::{session_client, stateless_client};
use crate::{Fixture, Running, TOKEN};

/// A served core with the web UI and the embedded memory store; the model API refuses every
/// call and `gh` is missing, so nothing leaves the machine.
async fn served(fake: &FakeAnthropic) -> (Running, tempfile::TempDir) {
    fake.always(Matcher::custom(|_| true), Reply::unauthorized());
    let (project, data, dist) = (tempdir(), tempdir(), tempdir());
    std::fs::create_dir_all(project.path().join("src")).expect("src");
    std::fs::write(project.path().join("src/main.rs"), "fn main() {}\n").expect("main");
    std::fs::write(dist.path().join("index.html"), "<!doctype html><title>Paige</title>").expect("index");
    std::fs::create_dir(dist.path().join("assets")).expect("assets");
    std::fs::write(dist.path().join("assets/app.js"), "console.log(1)").expect("asset");
    let config = Config {
        token: Some(TOKEN.into()),
        anthropic_base_url: Some(fake.base_url()),
        gh_program: Some("/nonexistent/gh".into()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "test-key")
    };
    let memory = paige_memory::open(&config, &[]);
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).single().expect("date")));
    let core = Arc::new(Core::open(config, clock.clone()).expect("core").with_memory(memory));
    let server = paige_server::app(core.clone(), TOKEN).with_ui(dist.path());
    let sessions = server.mcp_sessions.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://127.0.0.1:{}", listener.local_addr().expect("addr").port());
    let stop = tokio_util::sync::CancellationToken::new();
    let task = tokio::spawn(paige_server::serve(listener, server, stop.clone()));
    let fixture = Fixture::new(core, clock, (project, data));
    (Running { base, sessions, stop, task, fixture }, dist)
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Header lines, sent as given.
type Headers = Vec<(String, String)>;

/// One request as raw HTTP/1.1 text: `headers` are sent as given (so a test controls Host).
fn raw_request(method: &str, target: &str, headers: &[(String, String)], body: &str) -> Vec<u8> {
    let mut text = format!("{method} {target} HTTP/1.1\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    text.into_bytes()
}

/// Sends `request` on a fresh connection; the status and the body. A `101` returns at once
/// (the socket is then a WebSocket); otherwise the body is read by its length or chunks.
fn exchange(addr: &str, request: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    stream.write_all(request).expect("send");
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut chunk).expect("reply head");
        assert!(n > 0, "connection closed before a reply: {:?}", String::from_utf8_lossy(&bytes));
        bytes.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_lowercase();
    let status: u16 = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status line");
    let header = |name: &str| head.lines().find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()));
    let done = |body: &[u8]| match header("content-length:") {
        Some(len) => body.len() >= len.parse::<usize>().expect("length"),
        None if header("transfer-encoding:").is_some() => body.ends_with(b"0\r\n\r\n"),
        None => false,
    };
    while status != 101 && !done(&bytes[head_end..]) {
        match stream.read(&mut chunk).expect("reply body") {
            0 => break,
            n => bytes.extend_from_slice(&chunk[..n]),
        }
    }
    (status, String::from_utf8_lossy(&bytes[head_end..]).into_owned())
}

/// One route of the router and the request that passes on it.
struct Route {
    method: &'static str,
    path: &'static str,
    body: Value,
    /// Needs the bearer token (everything but `/health`, the UI and the 404).
    private: bool,
    /// The status of the correct request.
    passes_with: u16,
    /// Whether the correct request changes the server's state (so refusals can be seen not to).
    changes_state: bool,
}

fn routes() -> Vec<Route> {
    let route = |method, path, body, private, passes_with, changes_state| Route {
        method,
        path,
        body,
        private,
        passes_with,
        changes_state,
    };
    let hook = json!({"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    let initialize = crate::initialize_body();
    vec![
        route("GET", "/health", Value::Null, false, 200, false),
        route("GET", "/", Value::Null, false, 200, false),
        route("GET", "/assets/app.js", Value::Null, false, 200, false),
        route("GET", "/nowhere", Value::Null, false, 404, false),
        route("GET", "/ws", Value::Null, true, 101, false),
        route("GET", "/api/session", Value::Null, true, 200, false),
        route("POST", "/api/session/start", json!({"title": "security"}), true, 201, true),
        route("POST", "/api/session/end", json!({"status": "abandoned"}), true, 200, true),
        route("POST", "/api/memory/add", json!({"memories": [{"content": "kept"}]}), true, 200, true),
        route("POST", "/api/memory/query", json!({"queryText": "kept"}), true, 200, false),
        route("GET", "/api/memory/stats", Value::Null, true, 200, false),
        route("POST", "/hooks/UserPromptSubmit", hook, true, 200, false),
        route("POST", "/mcp", initialize, true, 200, true),
        route("POST", "/mcp", crate::stateless_tools_list_body(), true, 200, false),
    ]
}

/// What a refused request must not change: the session, MCP sessions, memories, actions and
/// the project's files.
async fn state(server: &Running) -> impl PartialEq + std::fmt::Debug {
    let core = &server.fixture.core;
    let mcp = server.sessions.count().await;
    let memories = core.memory().stats().map(|s| s.total);
    let actions = core.db().actions_without_session(10_000).expect("actions").len();
    (core.active_session().map(|s| s.id), mcp, memories, actions, snapshot(core.project_root().path()))
}

impl Route {
    /// The headers every request to this route carries, whoever sends it.
    fn headers(&self) -> Headers {
        let mut headers: Vec<(&str, &str)> = match self.path {
            "/ws" => vec![
                ("Connection", "Upgrade"),
                ("Upgrade", "websocket"),
                ("Sec-WebSocket-Version", "13"),
                ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ],
            _ => vec![("Connection", "close")],
        };
        if !self.body.is_null() {
            headers.push(("Content-Type", "application/json"));
        }
        let version = self.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str();
        if self.path == "/mcp" {
            headers.push(("Accept", "application/json, text/event-stream"));
            headers.push(("MCP-Protocol-Version", version.unwrap_or("2025-11-25")));
            headers.push(("Mcp-Method", self.body["method"].as_str().expect("method")));
        }
        headers.into_iter().map(|(n, v)| (n.to_owned(), v.to_owned())).collect()
    }
}

/// [`exchange`] off the runtime.
async fn send(addr: &str, request: Vec<u8>) -> (u16, String) {
    let addr = addr.to_owned();
    tokio::task::spawn_blocking(move || exchange(&addr, &request)).await.expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_refuses_foreign_hosts_and_origins_and_bad_tokens_with_no_effect_and_a_correct_request_passes() {
    let fake = FakeAnthropic::start().await.expect("fake api");
    let (server, _dist) = served(&fake).await;
    let addr = server.base.trim_start_matches("http://").to_owned();
    let port = addr.rsplit(':').next().expect("port").to_owned();
    let good_host = ("Host".to_owned(), addr.clone());
    let bearer = ("Authorization".to_owned(), format!("Bearer {TOKEN}"));
    let hosts = [
        format!("evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("0.0.0.0:{port}"),
        format!("2130706433:{port}"),
        format!("[::ffff:127.0.0.1]:{port}"),
    ];
    let origins = [
        "http://evil.example".to_owned(),
        "null".to_owned(),
        format!("http://127.0.0.1.nip.io:{port}"),
        format!("http://localhost.evil.example:{port}"),
    ];
    let bad_tokens = [
        None,
        Some("Bearer not-the-token".to_owned()),
        Some(format!("Bearer {TOKEN}x")),
        Some("Bearer ".to_owned()),
        Some(format!("Basic {TOKEN}")),
        Some(TOKEN.to_owned()),
    ];
    for route in routes() {
        let base = route.headers();
        let body = if route.body.is_null() { String::new() } else { route.body.to_string() };
        let with = |extra: Headers| [base.clone(), extra].concat();
        // (what it tries, headers, target, the status it must get)
        let mut cases: Vec<(String, Headers, String, u16)> = Vec::new();
        for host in &hosts {
            cases.push((
                format!("Host {host}"),
                with(vec![("Host".into(), host.clone()), bearer.clone()]),
                route.path.into(),
                403,
            ));
        }
        cases.push(("no Host".into(), with(vec![bearer.clone()]), route.path.into(), 403));
        for origin in &origins {
            let headers = with(vec![good_host.clone(), ("Origin".into(), origin.clone()), bearer.clone()]);
            cases.push((format!("Origin {origin}"), headers, route.path.into(), 403));
        }
        if route.private {
            for token in &bad_tokens {
                let mut headers = with(vec![good_host.clone()]);
                headers.extend(token.iter().map(|t| ("Authorization".to_owned(), t.clone())));
                cases.push((format!("Authorization {token:?}"), headers, route.path.into(), 401));
            }
            if route.path != "/ws" {
                let target = format!("{}?token={TOKEN}", route.path);
                cases.push(("the token in the URL".into(), with(vec![good_host.clone()]), target, 401));
            }
        }
        let before = state(&server).await;
        for (what, headers, target, expected) in cases {
            let (status, reply) = send(&addr, raw_request(route.method, &target, &headers, &body)).await;
            let context = format!("{} {} with {what}", route.method, route.path);
            assert_eq!(status, expected, "{context}: {reply}");
            let code = if expected == 403 { "forbidden" } else { "unauthorized" };
            assert_eq!(serde_json::from_str::<Value>(&reply).expect("JSON error")["code"], code, "{context}");
            assert_eq!(state(&server).await, before, "{context} had an effect");
        }
        let request = raw_request(route.method, route.path, &with(vec![good_host.clone(), bearer.clone()]), &body);
        let (status, reply) = send(&addr, request).await;
        assert_eq!(status, route.passes_with, "{} {} correct: {reply}", route.method, route.path);
        if route.changes_state {
            assert_ne!(state(&server).await, before, "{} {} correct had no effect", route.method, route.path);
        }
    }
}

/// Words in a tool's name that would mean it changes files or runs commands.
const WRITE_WORDS: &[&str] = &[
    "write", "save", "create", "delete", "remove", "rename", "move", "edit", "patch", "apply", "exec", "execute",
    "shell", "bash", "command", "put", "upload", "mkdir", "chmod", "replace", "insert",
];

/// Argument names that would carry new file content or a command.
const WRITE_ARGUMENTS: &[&str] = &[
    "content",
    "contents",
    "newcontent",
    "new_content",
    "newstring",
    "new_string",
    "oldstring",
    "old_string",
    "patch",
    "edits",
    "filetext",
    "file_text",
    "bytes",
    "data",
    "command",
    "cmd",
    "script",
    "replacement",
    "mode",
];

/// Every property name in `schema`, through `$defs` too.
fn property_names(schema: &Value, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                out.extend(properties.keys().cloned());
            }
            map.values().for_each(|v| property_names(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| property_names(v, out)),
        _ => {}
    }
}

/// A valid value for `schema`, named `name` in its object: paths name a file of the project,
/// enums take their first value, optional fields are filled in.
fn valid(schema: &Value, defs: &Value, name: &str) -> Value {
    if let Some(def) = schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
        return valid(&defs[def], defs, name);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(options) = schema[key].as_array() {
            let option = options.iter().find(|o| o["type"] != "null").expect("a non-null option");
            return valid(option, defs, name);
        }
    }
    if let Some(first) = schema["enum"].as_array().and_then(|values| values.first()) {
        return first.clone();
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).find(|k| *k != "null").unwrap_or("").to_owned(),
        kind => kind.as_str().unwrap_or("").to_owned(),
    };
    match (kind.as_str(), name) {
        ("string", "path") => json!("src/main.rs"),
        ("string", "directories") => json!("src"),
        ("string", "intent_id") => json!("INT-001"),
        ("string", "url") => json!("https://github.com/example/repo/issues/42"),
        ("string", _) => json!("Look at how main starts."),
        ("integer" | "number", "end") => json!(2),
        ("integer" | "number", "number" | "issueNumber") => json!(42),
        ("integer" | "number", _) => json!(1),
        ("boolean", _) => json!(true),
        ("array", _) => json!([valid(&schema["items"], defs, name)]),
        ("object", _) => Value::Object(
            schema["properties"]
                .as_object()
                .map(|props| props.iter().map(|(k, v)| (k.clone(), valid(v, defs, k))).collect())
                .unwrap_or_default(),
        ),
        _ => Value::Null,
    }
}

const INTENTS: &str = "active_intents:\n  - id: INT-001\n    name: Work on main\n    status: IN_PROGRESS\n    \
                       owned_scope: [\"src/**\"]\n    constraints: []\n    acceptance_criteria: [\"tests pass\"]\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_mcp_tool_is_write_capable_and_calling_each_with_valid_arguments_in_both_eras_changes_no_file() {
    let fake = FakeAnthropic::start().await.expect("fake api");
    // The coach answers (so the pipeline stores a plan); every other model call is refused.
    let coach = crate::coaching::coach_reply().to_string().replace("src/auth.rs", "src/main.rs");
    let coach: Value = serde_json::from_str(&coach).expect("coach reply");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach));
    let (server, outer) = crate::fuzz_mcp::server(&fake).await;
    let root = server.fixture.core.project_root().path().to_owned();
    std::fs::create_dir(root.join(".orchestration")).expect("governed");
    std::fs::write(root.join(".orchestration/active_intents.yaml"), INTENTS).expect("intents");
    std::fs::write(root.join("AGENT.md"), "# Shared Brain\n\n- keep main small\n").expect("lessons");
    let clients = [session_client(&server).await, stateless_client(&server).await];
    let mut listed = Vec::new();
    for client in &clients {
        let mut tools = client.list_all_tools().await.expect("tools/list");
        tools.sort_by_key(|t| (t.name == "paige_end_session", t.name.to_string()));
        listed.push(tools);
    }
    let names = |tools: &[rmcp::model::Tool]| tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
    assert_eq!(names(&listed[0]), names(&listed[1]), "both eras list the same tools");
    assert_eq!(listed[0].len(), 15);
    for tool in listed.iter().flatten() {
        let words: Vec<&str> = tool.name.split('_').collect();
        let verb = WRITE_WORDS.iter().find(|w| words.contains(w));
        assert_eq!(verb, None, "{} is named like a write", tool.name);
        let mut properties = BTreeSet::new();
        property_names(&Value::Object(tool.input_schema.as_ref().clone()), &mut properties);
        let carried: Vec<_> =
            properties.iter().filter(|p| WRITE_ARGUMENTS.contains(&p.to_lowercase().as_str())).collect();
        assert!(carried.is_empty(), "{} takes {carried:?}", tool.name);
        let annotations = tool.annotations.as_ref().unwrap_or_else(|| panic!("{} has no annotations", tool.name));
        let harmless = annotations.read_only_hint == Some(true) || annotations.destructive_hint == Some(false);
        assert!(harmless, "{} may be destructive: {annotations:?}", tool.name);
    }
    let before = snapshot(&outer);
    let mut answered = BTreeSet::new();
    for (client, tools) in clients.iter().zip(&listed) {
        start_session_with_a_plan(&server.fixture.core);
        for tool in tools {
            let schema = Value::Object(tool.input_schema.as_ref().clone());
            let Value::Object(args) = valid(&schema, &schema["$defs"], "") else {
                panic!("{}: not an object", tool.name)
            };
            let request =
                CallToolRequestParams::new(tool.name.to_string()).with_arguments(JsonObject::from(args.clone()));
            let result = tokio::time::timeout(Duration::from_secs(20), client.call_tool(request))
                .await
                .unwrap_or_else(|_| panic!("{} did not answer within 20 s", tool.name))
                .unwrap_or_else(|e| panic!("{} {}: {e}", tool.name, Value::Object(args.clone())));
            if result.is_error != Some(true) {
                answered.insert(tool.name.to_string());
            } else {
                eprintln!("{} refused {}: {:?}", tool.name, Value::Object(args.clone()), result.content);
            }
            assert!(snapshot(&outer) == before, "{} changed a file", tool.name);
        }
    }
    // Each call did its work, so "no file changed" is about tools that ran, not refusals.
    let all: BTreeSet<String> = names(&listed[0]).into_iter().collect();
    assert_eq!(answered, all, "every tool succeeded in at least one era");
}
